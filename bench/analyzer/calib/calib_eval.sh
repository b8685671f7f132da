#!/bin/bash
# calib_eval.sh - the rule with and without calibration on one baseline
# folder, leave one host out (kpt-pool-eval over one folder per session,
# pool.kpt linked to the session: A/A gates M=5, interval calibration,
# power by synthetic plants +5% / +2% on one key of NEW at a time).
#     calib_eval.sh KPT_POOL_EVAL DIR
# Prints the pieces of both reports that differ in meaning (M=3, same-machine
# and real-plant rows need layouts a baseline folder does not have).
set -eu
ev=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/*.kpt; do
	b=$(basename "$f" .kpt)
	mkdir -p "$tmp/$b"
	ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$tmp/$b/pool.kpt"
done
for mode in --no-calibration ""; do
	echo "== ${mode:-calibration on (default)}"
	# shellcheck disable=SC2086
	"$ev" $mode "$tmp"/* 2>/dev/null | grep -E '^\| A/A \| 5 |^AMBG keys|^Other machines|^\| (< 10|10-50|50-200|>= 200) us|^\| \+[25]% \| [>5]' |
		grep -v 'nan% of 0 | nan% of 0 | nan% of 0 |$' | sed 's/| nan% of 0 | nan% of 0 |$/|/; s/| nan% of 0 | |$/|/'
	echo "-- FAST/SLOW keys in A/A gates"
	# shellcheck disable=SC2086
	"$ev" $mode "$tmp"/* 2>&1 | grep -E '^    (SLOW|FAST)' || echo "    none"
done
