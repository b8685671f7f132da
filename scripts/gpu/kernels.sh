#!/usr/bin/env bash
# kernels.sh - GPU checks and benchmarks of the memory and FP8 kernels
# (issue 4). Called by scripts/gpu-check.sh with BUILD, SRC and RES set;
# standalone it builds only kpt-workloads into $BUILD (default build-gpu).
# Writes into $RES: check-*.txt, bench.json, torch.json, summary.md,
# default.txt (the default suite's timing), plant.txt, gpu.txt.
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build-gpu}
RES=${RES:-$SRC/out/kernels}
mkdir -p "$RES"
KW=$BUILD/cli/kpt-workloads
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
	--format=csv >"$RES/gpu.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >>"$RES/gpu.txt"
if [ ! -x "$KW" ]; then
	{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
		&& cmake --build "$BUILD" -j16 --target kpt-workloads; } >"$RES/build.log" 2>&1 || {
		tail -30 "$RES/build.log"; exit 2; }
fi

"$KW" --check memory.copy.1B >/dev/null 2>&1
[ $? -eq 77 ] && { echo "kernels.sh: no GPU here, skipped"; exit 77; }

step() { # name, command...
	local name=$1; shift
	local t0=$(date +%s%N)
	"$@" >"$RES/$name.txt" 2>&1
	local rc=$?
	printf '%-16s rc=%-3s %6d ms\n' "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$RES/steps.txt"
	[ $rc -eq 0 ] || status=1
	return $rc
}

step check-check timeout 120 "$KW" --check --suite check
# this part's families only: attention and MoE are checked by their own part
mine() { "$KW" --list "$@" | awk 'NR > 1 && $1 ~ /^(memory|fp8)\./ { print $1 }'; }
# shellcheck disable=SC2046
step check-quick timeout 60 "$KW" --check $(mine --suite quick)
"$KW" --suite bench --iterations 50 --warmup 5 --json >"$RES/bench.json" 2>"$RES/bench.err" || status=1
[ -n "${KPT_SKIP_TORCH:-}" ] || timeout 200 python3 "$SRC/bench/kernels/torch_equiv.py" --iterations 50 --out "$RES/torch.json" --compile 2>"$RES/torch.err" || status=1
python3 "$SRC/bench/kernels/summarize.py" "$RES/bench.json" "$RES/torch.json" >"$RES/summary.md" 2>&1 || status=1
if [ -z "${KPT_SKIP_VARIANTS:-}" ] && command -v nvcc >/dev/null; then
	nvcc -O3 -arch=sm_90 "$SRC/bench/kernels/bw_variants.cu" -o "$RES/bw_variants" >"$RES/bw_variants.build" 2>&1 &&
		timeout 120 "$RES/bw_variants" >"$RES/bw_variants.txt" 2>&1
	rm -f "$RES/bw_variants"
fi
step default timeout 120 "$KW" --suite default --iterations 20 --warmup 3
step quick timeout 60 "$KW" --suite quick --iterations 10 --warmup 2
# planted slowdowns: the same kernels with 0, 5 and 20% more real work
for p in 0 5 20; do
	"$KW" memory.copy.4MiB memory.copy.24MiB memory.copy.512MiB fp8.quant.e4m3.bf16.per_token.8192x8192 \
		memory.triad.f32.64M --plant memory.copy.4MiB=$p --plant memory.copy.24MiB=$p --plant memory.copy.512MiB=$p \
		--plant fp8.quant.e4m3.bf16.per_token.8192x8192=$p --plant memory.triad.f32.64M=$p \
		--iterations 100 --warmup 10 | sed "s/^/plant=$p /"
done >"$RES/plant.txt" 2>&1 || status=1
step default-cold timeout 120 "$KW" --suite default --cold --iterations 10 --warmup 2
# shellcheck disable=SC2046
step check-default timeout ${KPT_CHECK_TIMEOUT:-240} "$KW" --check $(mine --suite default --suite seed)
cat "$RES/steps.txt" "$RES/summary.md"
exit $status
