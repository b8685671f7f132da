#!/usr/bin/env bash
# kernels_sota.sh - GPU part (scripts/gpu-check.sh): issue 24's table, every
# row beside the state of the art measured in the same run, in interleaved
# rounds: attention forward/backward vs torch SDPA cuDNN and flash
# (scripts/gpu/attn_sota.sh, after the backward's --check), the MoE layers
# vs torch._grouped_mm (bench/kernels/moe_rounds.sh), copy / reduce / FP8
# quantize / FP8 GEMM vs PyTorch and cuBLASLt (bench/kernels/memfp8_rounds.sh).
# ROUNDS (default 15) each; PARTS (default "attn moe memfp8") picks; the
# part "ab" (not in the default) runs `kpt-attn-moe bench BENCH` (BENCH
# default "moe attn": a variant beside the kernel it replaces, in one
# process); "bw" builds and runs bench/kernels/bw_variants.cu (the copy's
# launch shapes and other ways to copy, 1 GiB). Writes RES/{attn,moe,memfp8,ab,bw}/ and their summaries. Needs SRC,
# BUILD, RES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
export ROUNDS=${ROUNDS:-15}
KW=$BUILD/cli/kpt-workloads
[ -x "$KW" ] || cmake --build "$BUILD" -j16 --target kpt-workloads >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv >"$RES/gpu.txt" 2>&1
date -u +%FT%TZ >>"$RES/gpu.txt"
rc=0
for p in ${PARTS:-attn moe memfp8}; do
	mkdir -p "$RES/$p"
	t0=$(date +%s)
	case $p in
	attn) SRC=$SRC BUILD=$BUILD RES=$RES/$p bash "$SRC/scripts/gpu/attn_sota.sh" >"$RES/$p/log.txt" 2>&1 || rc=1 ;;
	moe) KW=$KW RES=$RES/$p bash "$SRC/bench/kernels/moe_rounds.sh" >"$RES/$p/log.txt" 2>&1 || rc=1 ;;
	memfp8) SRC=$SRC KW=$KW RES=$RES/$p bash "$SRC/bench/kernels/memfp8_rounds.sh" >"$RES/$p/log.txt" 2>&1 || rc=1 ;;
	bw) { nvcc -O3 -arch=sm_90 "$SRC/bench/kernels/bw_variants.cu" -o "$RES/$p/bw" && timeout 200 "$RES/$p/bw"; } \
		>"$RES/$p/log.txt" 2>&1 || rc=1 ;;
	ab) timeout 300 "$BUILD/bench/attention_moe/kpt-attn-moe" bench ${BENCH:-moe attn} >"$RES/$p/log.txt" 2>&1 || rc=1 ;;
	*) echo "kernels_sota: unknown part $p"; rc=1; continue ;;
	esac
	echo "$p: $(($(date +%s) - t0)) s"
	tail -20 "$RES/$p/log.txt"
done
exit $rc
