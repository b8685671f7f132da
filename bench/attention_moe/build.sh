#!/usr/bin/env bash
# build.sh - builds the attention/MoE kernels without CMake (and without the
# rest of the tree) into OUTDIR (default build-attnmoe/):
#   kpt-attn-moe          check and bench executable (attn_moe_check.cu)
#   libkptattnmoe.so      the launchers plus the flat C entry points of
#                         pyshim.c, for bench/attention_moe/torch_compare.py
# Usage: bench/attention_moe/build.sh [OUTDIR] [ARCH, default 90]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUTDIR=${1:-$SRC/build-attnmoe}
ARCH=${2:-90}
mkdir -p "$OUTDIR"
NVCC=${NVCC:-nvcc}
FLAGS=(-O3 -std=c++17 -arch=sm_$ARCH -Xcompiler -fPIC -I"$SRC/lib" -I"$SRC/kernels/attention" -I"$SRC/kernels/moe")
# For 90 also the Hopper forward kernel, compiled for sm_90a alone (wgmma and
# setmaxnreg exist only there; the -gencode form, as the CMake build does).
SM90=()
srcs=(kernels/attention/attention_fwd.cu kernels/attention/attention_decode.cu kernels/moe/moe.cu)
if [ "$ARCH" = 90 ]; then
	SM90=(-DKPT_ATTN_SM90=1)
	srcs+=(kernels/attention/attention_fwd_sm90.cu)
fi
objs=()
pids=()
for f in "${srcs[@]}"; do
	o="$OUTDIR/$(basename "$f" .cu).o"
	if [ "$f" = kernels/attention/attention_fwd_sm90.cu ]; then
		fl=("${FLAGS[@]/-arch=sm_$ARCH/-gencode=arch=compute_90a,code=sm_90a}")
	else
		fl=("${FLAGS[@]}" "${SM90[@]}")
	fi
	"$NVCC" "${fl[@]}" --resource-usage -c "$SRC/$f" -o "$o" 2>"$o.resources.txt" &
	pids+=($!)
	objs+=("$o")
	# two compiles at a time
	if [ $(jobs -r | wc -l) -ge 2 ]; then wait -n; fi
done
# wait on each pid: a failed compile stops the script (set -e)
for p in "${pids[@]}"; do wait "$p"; done
for f in kernels/attention/ref_attention.c kernels/attention/kpt_attn_path.c kernels/moe/ref_moe.c lib/kpt_err.c \
	bench/attention_moe/pyshim.c; do
	o="$OUTDIR/$(basename "$f" .c).o"
	gcc -std=gnu11 -O2 -fPIC -Wall -Wextra -I"$SRC/lib" -I"$SRC/kernels/attention" -I"$SRC/kernels/moe" \
		-I"${CUDA_HOME:-/usr/local/cuda}/include" -c "$SRC/$f" -o "$o"
	objs+=("$o")
done
"$NVCC" "${FLAGS[@]}" -c "$SRC/bench/attention_moe/attn_moe_check.cu" -o "$OUTDIR/attn_moe_check.o"
"$NVCC" -arch=sm_$ARCH -o "$OUTDIR/kpt-attn-moe" "$OUTDIR/attn_moe_check.o" "${objs[@]}" -lcublas -ldl
"$NVCC" -arch=sm_$ARCH -shared -o "$OUTDIR/libkptattnmoe.so" "${objs[@]}" -lcublas -ldl
echo "built $OUTDIR/kpt-attn-moe and $OUTDIR/libkptattnmoe.so"
