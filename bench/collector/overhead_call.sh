#!/usr/bin/env bash
# overhead_call.sh - where the collector's cost goes on a launch-bound
# PyTorch step (issue 13): what one device call runs.
#
#   ROUNDS=8 bench/collector/overhead_call.sh        (writes under $OUT)
#
# The step: bench/collector/transformer_step.py, one bf16 transformer block,
# batch 8 x 1024 tokens, width 1024, forward + backward + AdamW (about 3 ms,
# ~70 kernels), 200 timed steps after 20 warm-up steps, timed inside the
# script (CUDA-synchronised). Modes, interleaved in each round (order
# rotated): plain; `kptprof record` (default kinds); `record --kinds
# kernel`; the collector by hand without NVTX injection
# (CUDA_INJECTION64_PATH only); the same without the NVML sampler
# (KPT_SAMPLE_MS=0); record and record --kinds kernel without the sampler
# (recnonvml, kernelnonvml). MODES picks (default: the first five). Prints
# one line per mode and round: "mode round ms".
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$SRC/out}
BIN=${BIN:-$SRC/.pool-bin}
ROUNDS=${ROUNDS:-8}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
K=$BIN/kptprof
INJ=$(cd "$BIN" && pwd)/libkptinject.so
STEP=(python3 "$SRC/bench/collector/transformer_step.py" --steps 200 --warmup 20 --d 1024 --seq 1024 --batch 8)
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/overhead.txt"
ms() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1; }
mode() {
	case $1 in
	plain) "${STEP[@]}" ;;
	record) "$K" record -o /tmp/o.kpt -- "${STEP[@]}" ;;
	kernel) "$K" record --kinds kernel -o /tmp/o.kpt -- "${STEP[@]}" ;;
	nonvtx) CUDA_INJECTION64_PATH=$INJ KPT_OUTPUT=/tmp/h-%p.kpt "${STEP[@]}" ;;
	nonvml) CUDA_INJECTION64_PATH=$INJ KPT_OUTPUT=/tmp/h-%p.kpt KPT_SAMPLE_MS=0 "${STEP[@]}" ;;
	recnonvml) KPT_SAMPLE_MS=0 "$K" record -o /tmp/o.kpt -- "${STEP[@]}" ;;
	kernelnonvml) KPT_SAMPLE_MS=0 "$K" record --kinds kernel -o /tmp/o.kpt -- "${STEP[@]}" ;;
	esac
}
read -r -a modes <<<"${MODES:-plain record kernel nonvtx nonvml}"
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!modes[@]}"; do
		m=${modes[$(( (i + r) % ${#modes[@]} ))]}
		v=$(mode "$m" 2>>"$OUT/overhead.err" | ms)
		echo "$m $r $v" | tee -a "$OUT/overhead.txt"
		rm -f /tmp/h-*.kpt
	done
done
python3 - "$OUT/overhead.txt" <<'PY'
import sys, statistics as st, random
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3 and l.split()[2]]
by = {}
for m, r, v in rows:
    by.setdefault(r, {})[m] = float(v)
rounds = [d for d in by.values() if "plain" in d]
for m in ("record", "kernel", "nonvtx", "nonvml", "recnonvml", "kernelnonvml"):
    rat = [d[m] / d["plain"] - 1 for d in rounds if m in d]
    if not rat:
        continue
    random.seed(1)
    boot = sorted(st.median(random.choices(rat, k=len(rat))) for _ in range(2000))
    print(f"{m:7s} {100*st.median(rat):+6.1f}%  95% CI [{100*boot[50]:+.1f}, {100*boot[1949]:+.1f}]  rounds {len(rat)}  plain median {st.median(d['plain'] for d in rounds):.3f} ms")
PY
