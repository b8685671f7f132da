#!/usr/bin/env bash
# moe_rounds.sh - the MoE layer's FFN paths side by side in interleaved
# rounds (issue 24's and 39's goal shapes): each round runs kpt-workloads
# once over the `default` suite's entries (b32: since 2026-11-26 the
# unclustered wgmma FFN, PIN_DEFAULT, the same kernel as the b8 entries, so
# their ratio is an A/A of the split of tokens), the bench entries that
# ask for the wgmma grouped FFN (b8) and its clustered variant
# (moe_ffn_sm90_mc.cu, the ".mc" entries; MC=0: without them), order
# alternating by round; CUDA events per iteration, 3 ms idle before each,
# median of ITERS after 3 warm-up. Each round also runs
# bench/kernels/moe_torch_ref.py (torch._grouped_mm: the whole layer, and
# its two grouped GEMMs alone; TORCH=0: without) on the bench shapes. Then
# bench/kernels/moe_rounds.py: per workload the median over rounds with a
# 95% bootstrap interval, the per-round speed ratios default / wgmma,
# wgmma / clustered, and torch / wgmma. Needs KW (kpt-workloads) and RES.
set -u -o pipefail
: "${KW:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
mkdir -p "$RES"
old=(moe.layer.e8.top2.h512.b32.s128 moe.layer.e128.top8.h2048.f768.b32.s1024)
new=(moe.layer.e8.top2.h512.f2048.b8.s512 moe.layer.e128.top8.h2048.f768.b8.s4096)
mc=()
[ "${MC:-1}" = 0 ] || mc=(moe.layer.e8.top2.h512.f2048.mc.b8.s512 moe.layer.e128.top8.h2048.f768.mc.b8.s4096)
rc=0
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then w=("${mc[@]}" "${new[@]}" "${old[@]}"); else w=("${old[@]}" "${new[@]}" "${mc[@]}"); fi
	k() { timeout 120 "$KW" "${w[@]}" --settle-us 3000 --iterations "${ITERS:-20}" --warmup 3 --json \
		>"$RES/moe-$r.json" 2>"$RES/moe-$r.err" || rc=1; }
	# torch._grouped_mm on the same layers (TORCH=0: without)
	t() { [ "${TORCH:-1}" = 0 ] || timeout 120 python3 "$(dirname "$0")/moe_torch_ref.py" --settle-us 3000 \
		--iterations "${ITERS:-20}" --warmup 3 --json "$RES/torch-$r.json" >"$RES/torch-$r.txt" 2>&1 || rc=1; }
	if ((r % 2)); then t; k; else k; t; fi
done
tl=torch.moe.layer tf=torch.moe.ffn
pairs=()
((${#mc[@]})) && pairs=("${new[0]}=${mc[0]}" "${new[1]}=${mc[1]}")
python3 "$(dirname "$0")/moe_rounds.py" "$RES" "${old[0]}=${new[0]}" "${old[1]}=${new[1]}" "${pairs[@]}" \
	"$tl.${new[0]#moe.layer.}=${new[0]}" "$tl.${new[1]#moe.layer.}=${new[1]}" \
	"$tf.${new[0]#moe.layer.}=${new[0]}" "$tf.${new[1]#moe.layer.}=${new[1]}" | tee "$RES/summary.md"
exit $rc
