#!/usr/bin/env bash
# resolve_call.sh - gate's sequential resolution on a GPU (issue 35): what
# one call of the device tool runs.
#
#   bench/analyzer/resolve_call.sh [GATES]      (writes under $OUT)
#
# A baseline of the `default` suite recorded on this machine (5 runs, one
# session), then GATES (default 3) A/A gates of the same code against it,
# each with --json: the share of run-noise AMBG keys that the extra rounds
# settled (goal >= 90% within 2 rounds) and the gate's time growth,
# extra_wall_s / first_wall_s (goal <= 50%), summed over the gates.
# Binaries: BIN (default .pool-bin, carried), else built into build-gpu/.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$SRC/out}
BIN=${BIN:-$SRC/.pool-bin}
N=${1:-3}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
if ! "$BIN/kptprof" version >/dev/null 2>&1 || ! "$BIN/kpt-workloads" --list >/dev/null 2>&1; then
	echo "carried binaries do not run here: building"
	BIN=$SRC/build-gpu
	{ cmake -S "$SRC" -B "$BIN" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
		cmake --build "$BIN" -j16 --target kptprof kptinject kpt-workloads; } >"$OUT/build.log" 2>&1 ||
		{ tail -30 "$OUT/build.log"; exit 2; }
	BIN=$BIN/cli
fi
K=$BIN/kptprof
"$K" record --suite default --runs 5 -o "$OUT/base.kpt" >/dev/null 2>"$OUT/record.log" ||
	{ tail -5 "$OUT/record.log"; exit 2; }
"$K" baseline update "$OUT/base.kpt" --baselines "$OUT/bl" >/dev/null || exit 2
for i in $(seq 1 "$N"); do
	"$K" gate --suite default --baselines "$OUT/bl" --runs 5 --json "$OUT/gate-$i.json" \
		>"$OUT/gate-$i.txt" 2>"$OUT/gate-$i.err"
	echo "gate $i exit $?: $(grep -E '^kptprof gate: (resolving|[0-9]+ (of|AMBG))' "$OUT/gate-$i.err" | tr '\n' ' ')"
done
python3 - "$OUT" "$N" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
ini = sett = 0
first = extra = 0.0
for i in range(1, n + 1):
    try:
        d = json.load(open(f"{out}/gate-{i}.json"))
    except (OSError, ValueError) as e:
        print(f"gate {i}: no json ({e})"); continue
    r = d.get("resolve", {})
    ini += r.get("keys_ambg_run_noise_initial", 0); sett += r.get("settled", 0)
    first += r.get("first_wall_s", 0); extra += r.get("extra_wall_s", 0)
    print(f"gate {i}: {d['result']}, counts {d['counts']}, resolve {r}")
print(f"run-noise AMBG keys settled: {sett}/{ini} = {100 * sett / ini if ini else 100:.0f}% (goal >= 90%)")
print(f"gate time growth: {extra:.1f} s / {first:.1f} s = {100 * extra / first if first else 0:.0f}% (goal <= 50%)")
PY
