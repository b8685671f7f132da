#!/usr/bin/env bash
# attention_moe.sh - GPU part for the attention and MoE kernels (issue 6),
# run by scripts/gpu-check.sh with BUILD, SRC and RES set:
#   builds bench/attention_moe (build.sh, no CMake needed), then
#   kpt-attn-moe check   (float64 CPU references, poisoned outputs, awkward sizes)
#   kpt-attn-moe bench   (attention, decode and MoE tables, all tile variants)
#   torch_compare.py     (same inputs through PyTorch: SDPA, eager MoE; side by side)
# Logs and tables go to RES; exit status 1 if any step failed.
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
RES=${RES:-$SRC/out/attention_moe}
B=${BUILD:-$SRC/build-gpu}/attnmoe
mkdir -p "$RES"
rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$RES/gpu.txt" 2>&1
bash "$SRC/bench/attention_moe/build.sh" "$B" 90 >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
cat "$B"/*.resources.txt >"$RES/resources.txt" 2>/dev/null
"$B/kpt-attn-moe" check 2>&1 | tee "$RES/check.txt" || rc=1
"$B/kpt-attn-moe" bench 2>&1 | tee "$RES/bench.txt" || rc=1
PYTHONUNBUFFERED=1 python3 "$SRC/bench/attention_moe/torch_compare.py" "$B/libkptattnmoe.so" \
	--json "$RES/torch_compare.json" 2>&1 | tee "$RES/torch.txt" || rc=1
exit $rc
