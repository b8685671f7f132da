#!/usr/bin/env bash
# build-standalone.sh OUTDIR - build kpt-workloads with nvcc alone, without
# configuring the whole tree (for a GPU machine when another component's
# CMake is broken at that moment). The CMake build is the normal way.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$1
mkdir -p "$OUT/obj" "$OUT/cli"
CU=$(find "$SRC/kernels" -name '*.cu')
C="$(find "$SRC/kernels" -name '*.c') $SRC/lib/kpt_err.c"
inc="-I$SRC/lib -I$SRC/kernels"
for d in "$SRC"/kernels/*/; do inc="$inc -I$d"; done
for f in $CU; do nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr $inc -c "$f" -o "$OUT/obj/$(basename "$f").o" & done
for f in $C; do gcc -O2 -std=gnu11 $inc -isystem /usr/local/cuda/include -c "$f" -o "$OUT/obj/$(basename "$f").o" & done
wait
g++ -o "$OUT/cli/kpt-workloads" "$OUT"/obj/*.o -L/usr/local/cuda/lib64 -lcublasLt -lcudart -ldl -lm -lpthread
