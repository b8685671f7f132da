#!/usr/bin/env bash
# memfp8_rounds.sh - issue 24's memory and FP8 rows beside PyTorch in
# interleaved rounds: each round runs kpt-workloads once over the rows
# (CUDA events per iteration, 3 ms idle before each, median of ITERS after
# 3 warm-up) and bench/kernels/torch_equiv.py once (torch copy_, the
# quantizers in eager PyTorch, torch._scaled_mm = cuBLASLt's FP8 GEMM),
# order alternating by round, both with the same 3 ms idle before each
# iteration (the first run, 2026-11-26 on an H100, still timed torch back
# to back). The copy row's anchors: torch copy_ and the driver's
# cudaMemcpyAsync D2D (memory.memcpy.d2d.1GiB, timed by kpt-workloads). Then bench/kernels/rounds_summary.py: per row the median over
# rounds with a 95% bootstrap interval, GB/s or TFLOP/s.
# Needs SRC, KW (kpt-workloads) and RES. Knobs: ROUNDS (15), ITERS (20).
set -u -o pipefail
: "${SRC:?}" "${KW:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
mkdir -p "$RES"
rows=(memory.copy.1GiB memory.memcpy.d2d.1GiB memory.reduce.f32.256M fp8.gemm.e4m3xe4m3.8192x8192x8192
	fp8.gemm.e4m3xe4m3.8192x8192x8192.fastacc fp8.quant.e4m3.bf16.per_token.16384x8192
	fp8.quant.e4m3.bf16.block1x128.16384x8192 fp8.quant.e4m3.bf16.block128x128.16384x8192)
rc=0
for ((r = 0; r < ROUNDS; r++)); do
	k() { timeout 120 "$KW" "${rows[@]}" --settle-us 3000 --iterations "${ITERS:-20}" --warmup 3 --json \
		>"$RES/kpt-$r.json" 2>"$RES/kpt-$r.err" || rc=1; }
	t() { timeout 150 python3 "$SRC/bench/kernels/torch_equiv.py" --iterations "${ITERS:-20}" --settle-us 3000 \
		--only '^torch\.(copy_\.1GiB|sum\.|_scaled_mm\.|quant\.e4m3\.bf16\.(per_token|block1x128)\.)' \
		--out "$RES/torch-$r.json" >/dev/null 2>"$RES/torch-$r.err" || rc=1; }
	if ((r % 2)); then t; k; else k; t; fi
done
python3 "$SRC/bench/kernels/rounds_summary.py" "$RES" | tee "$RES/summary.md"
exit $rc
