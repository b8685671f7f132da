#!/usr/bin/env bash
# attn_sota.sh - GPU part (scripts/gpu-check.sh): kpt-workloads' attention
# forward and backward rows beside torch SDPA (cuDNN and flash backends) on
# the same shapes, the same timing (CUDA events, 3 ms idle before each
# iteration, median of 20 after 3 warm-up), ROUNDS interleaved rounds
# (default 3: kpt-workloads, then sdpa_ref.py, alternating first; SEQS,
# default 2048,16384: the sequence lengths; FP8 rows, attention.fwd.e4m3.*,
# come along where the suites have them, the ping-pong kernels' as *.pp and
# *.pp3 beside the default's, all in the same process; PP=0: without them); the
# backward's --check on the check suite first. Writes RES/check.txt,
# RES/kpt-<round>.json, RES/sdpa-<round>.json, the logs and RES/summary.md
# (bench/kernels/attn_rounds.py: medians over rounds with intervals). Needs SRC,
# BUILD, RES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-3}
KW=$BUILD/cli/kpt-workloads
[ -x "$KW" ] || cmake --build "$BUILD" -j16 --target kpt-workloads >"$RES/build.log" 2>&1 || exit 1
rc=0
checks=$("$KW" --list --suite check | awk 'NR > 1 && $1 ~ /^attention\.(bwd|train)\./ { print $1 }')
# shellcheck disable=SC2086
timeout 200 "$KW" --check $checks >"$RES/check.txt" 2>&1 || rc=1
tail -3 "$RES/check.txt"
SEQS=${SEQS:-2048,16384}
pp='(\\.pp3?)?'
[ "${PP:-1}" = 0 ] && pp=''
names=$("$KW" --list --suite bench --suite seed | awk -v seqs="${SEQS//,/|}" -v pp="$pp" 'NR > 1 && $1 ~ ("^attention\\.(fwd|bwd)\\.(bf16|e4m3)\\.d(64|128)\\.s(" seqs ")(\\.causal)?" pp "$") { print $1 }' | sort -u)
for ((r = 0; r < ROUNDS; r++)); do
	k() { # shellcheck disable=SC2086
		timeout 240 "$KW" $names --settle-us 3000 --iterations 20 --warmup 3 --json >"$RES/kpt-$r.json" 2>"$RES/kpt-$r.err" || rc=1; }
	t() { timeout 240 python3 "$SRC/bench/kernels/sdpa_ref.py" --settle-us 3000 --iterations 20 --warmup 3 \
		--seq "$SEQS" --json "$RES/sdpa-$r.json" >"$RES/sdpa-$r.txt" 2>&1 || rc=1; }
	if ((r % 2)); then t; k; else k; t; fi
	echo "round $r done"
done
cat "$RES/sdpa-0.txt"
python3 "$SRC/bench/kernels/attn_rounds.py" "$RES" | tee "$RES/summary.md"
exit $rc
