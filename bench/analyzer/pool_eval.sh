#!/usr/bin/env bash
# pool_eval.sh - the decision rule across machines, leave one machine out,
# on the committed cross-machine recordings (issue 12):
#
#   bench/analyzer/pool_eval.sh BUILD_DIR [OUT_DIR]
#
# For each GPU model: every machine of 308f1d3:bench/analyzer/pool-20261124
# (pool_call.sh: pool.kpt, plant.kpt) and 308f1d3:bench/analyzer/ab-20261124
# (ab_call.sh: aa/a.kpt as its session, aa/{a,b}.kpt as an ab pair), and
# the 2026-11-22 session of each GPU (308f1d3:bench/analyzer/pool-20261122, 5 runs:
# its gates of runs 5-9 and its pairs do not exist and are skipped) is held
# out in turn; the baseline is the others (kpt-pool-eval). Writes
# OUT_DIR/eval-<gpu>.md (default bench/analyzer) and prints them.
set -u
BUILD=${1:?usage: pool_eval.sh BUILD_DIR [OUT_DIR]}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${2:-$SRC/bench/analyzer}
EVAL=$BUILD/kpt-pool-eval
[ -x "$EVAL" ] || { echo "pool_eval: '$EVAL' not built"; exit 2; }
# the session folders live in git history (bench/DATA.md): restore them once
for d in bench/analyzer/pool-20261124 bench/analyzer/ab-20261124 bench/analyzer/pool-20261122; do
	[ -d "$SRC/$d" ] || "$SRC/scripts/restore-data.sh" "$d" >&2 || exit 2
done
rc=0
for g in h100 h200; do
	"$EVAL" "$SRC"/bench/analyzer/pool-20261124/$g-* "$SRC"/bench/analyzer/ab-20261124/$g-* "$SRC"/bench/analyzer/pool-20261122/$g-* \
		>"$OUT/eval-$g.md" 2>"$OUT/eval-$g.log" || rc=$?
	echo "### $g"; cat "$OUT/eval-$g.md"; echo
done
exit $rc
