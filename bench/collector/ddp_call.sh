#!/usr/bin/env bash
# ddp_call.sh - what one device call on a 2-GPU machine runs (issue 15):
#
#   bench/collector/ddp_call.sh            (writes under $OUT)
#
# The GPUs and their links; tests/gpu/ddp_test.sh; then ROUNDS (default 3)
# interleaved rounds of the data-parallel step (bench/collector/ddp_step.py,
# 2 ranks, NCCL, 200 timed steps) plain and under `kptprof record`, each
# round's median step time from rank 0; the last recording is kept as
# $OUT/ddp.kpt with `report --by rank` beside it. Binaries from BIN (default
# .pool-bin, carried), else built into build-gpu/.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$SRC/out}
BIN=${BIN:-$SRC/.pool-bin}
ROUNDS=${ROUNDS:-3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader; nvidia-smi topo -m; date -u +%FT%TZ; } \
	>"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
if ! "$BIN/kptprof" version >/dev/null 2>&1; then
	echo "carried binaries do not run here: building"
	B=$SRC/build-gpu
	{ cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
		cmake --build "$B" -j32 --target kptprof kptinject; } >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 2; }
	BIN=$B/cli
fi
K=$BIN/kptprof
KPTPROF=$K SCRIPT=$SRC/bench/collector/ddp_step.py KEEP=$OUT timeout 200 bash "$SRC/tests/gpu/ddp_test.sh" \
	>"$OUT/test.log" 2>&1
echo "gpu.ddp_2gpu exit $?: $(tail -n 1 "$OUT/test.log")" | tee -a "$OUT/machine.txt"
run() { python3 -m torch.distributed.run --standalone --nproc-per-node 2 "$SRC/bench/collector/ddp_step.py" --steps 200; }
for r in $(seq 1 "$ROUNDS"); do
	p=$(run 2>>"$OUT/err.log" | sed -n 's/^ddp_step median_ms \([0-9.]*\).*/\1/p')
	k=$(timeout 120 "$K" record -o "$OUT/ddp.kpt" -- python3 -m torch.distributed.run --standalone \
		--nproc-per-node 2 "$SRC/bench/collector/ddp_step.py" --steps 200 2>>"$OUT/err.log" |
		sed -n 's/^ddp_step median_ms \([0-9.]*\).*/\1/p')
	echo "round $r plain_ms $p kptprof_ms $k" | tee -a "$OUT/machine.txt"
done
"$K" report "$OUT/ddp.kpt" --by rank >"$OUT/report-rank.txt" 2>&1
cat "$OUT/report-rank.txt" | tail -12
"$K" export "$OUT/ddp.kpt" --format csv -o "$OUT/ddp.csv" 2>/dev/null && gzip -f "$OUT/ddp.csv"
ls -la "$OUT"
