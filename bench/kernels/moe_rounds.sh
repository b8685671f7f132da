#!/usr/bin/env bash
# moe_rounds.sh - the MoE layer's FFN paths side by side in interleaved
# rounds (issue 24's goal shapes): each round runs kpt-workloads once over
# the default suite's pinned entries (mma.sync grouped GEMM for the seed
# layer, per-expert cuBLAS for E128) and the bench entries that ask for the
# wgmma grouped FFN (the same layers, tokens split differently), order
# alternating by round; CUDA events per iteration, 3 ms idle before each,
# median of ITERS after 3 warm-up. Then bench/kernels/moe_rounds.py: per
# workload the median over rounds with a 95% bootstrap interval, and the
# per-round speed ratio wgmma / old path. Needs KW (kpt-workloads) and RES.
set -u -o pipefail
: "${KW:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
mkdir -p "$RES"
old=(moe.layer.e8.top2.h512.b32.s128 moe.layer.e128.top8.h2048.f768.b32.s1024)
new=(moe.layer.e8.top2.h512.f2048.b8.s512 moe.layer.e128.top8.h2048.f768.b8.s4096)
rc=0
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then w=("${new[@]}" "${old[@]}"); else w=("${old[@]}" "${new[@]}"); fi
	timeout 120 "$KW" "${w[@]}" --settle-us 3000 --iterations "${ITERS:-20}" --warmup 3 --json \
		>"$RES/moe-$r.json" 2>"$RES/moe-$r.err" || rc=1
done
python3 "$(dirname "$0")/moe_rounds.py" "$RES" "${old[0]}=${new[0]}" "${old[1]}=${new[1]}" | tee "$RES/summary.md"
exit $rc
