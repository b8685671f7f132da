#!/bin/bash
# history detect on a pool of runners: real sessions of unchanged code in
# random commit order, and real planted steps recorded on other machines
# (docs/history.md, "Change points on a pool of runners"; numbers in
# bench/RESULTS.md, "History on a pool of runners").
#
#   bench/history/pool_eval.sh [BUILD_DIR] [ORDERS] [SEED]
#
# Needs kpt-history-pool-eval built in BUILD_DIR (default build) with SQLite.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
orders=${2:-200}
seed=${3:-1}
eval=$build/kpt-history-pool-eval
[ -x "$eval" ] || { echo "pool_eval.sh: no '$eval': cmake --build $build --target kpt-history-pool-eval" >&2; exit 2; }
P=$src/bench/analyzer/pool-20261124
AB=$src/bench/analyzer/ab-20261124
# the session folders live in git history (bench/DATA.md): restore them once
for d in bench/analyzer/pool-20261124 bench/analyzer/ab-20261124; do
	[ -d "$src/$d" ] || "$src/scripts/restore-data.sh" "$d" >&2
done
# Sessions: the H100 and H200 baseline sessions committed until 2026-11-26
# (now tests/data/baselines-20261124), the 2026-11-24 pool recordings
# (most are the same files as the baselines: taken once), the held-out
# machine, and the A/A recordings of the same-machine A/B runs (other
# sessions of baseline machines). Plants: plant.kpt of the pool machines.
echo "== H100 (nvidia-h100-80gb-hbm3)"
"$eval" --orders "$orders" --seed "$seed" "$src"/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default/*.kpt \
	"$P"/h100-*/pool.kpt "$src"/tests/data/heldout_h100_pool.kpt "$AB"/h100-*/aa/*.kpt -- "$P"/h100-*/plant.kpt
echo "== H100, the three machines with slow MoE GEMMs last (the issue's worst case)"
"$eval" --orders "$orders" --seed "$seed" --last GPU-d307dc83 --last GPU-1a299506 --last GPU-92605176 \
	"$src"/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default/*.kpt "$P"/h100-*/pool.kpt "$src"/tests/data/heldout_h100_pool.kpt \
	"$AB"/h100-*/aa/*.kpt
echo "== H200 (nvidia-h200)"
"$eval" --orders "$orders" --seed "$seed" "$src"/tests/data/baselines-20261124/nvidia-h200/default/*.kpt \
	"$P"/h200-*/pool.kpt "$src"/tests/data/heldout_h200_pool.kpt "$AB"/h200-*/aa/*.kpt -- "$P"/h200-*/plant.kpt
