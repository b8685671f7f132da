#!/usr/bin/env bash
# scripts/gpu/overhead2.sh - the collector's cost on a 2-rank data-parallel
# step (bench/collector/ddp_step.py: torchrun --nproc-per-node 2, NCCL, one
# GPU per rank), for a 2 x H100 host (issue 22). Rounds of fresh torchrun
# jobs, one per mode, the order rotated each round: plain; kptprof (`record
# -- torchrun ...`, the whole run traced); kptprof-every20 (`record
# --capture-range nvtx:step --every 20`); floor-kernel (raw CUPTI
# CONCURRENT_KERNEL injected into every rank, libkptfloor.so). Each job
# runs STEPS timed steps (default 200) after 20 warm-up ones; rank 0's
# median and mean step time go into raw.tsv (round mode workload median_ms
# mean_ms -1), and overhead_stats.py gives the paired overhead against
# plain over rounds from the medians (overhead.md, summary.txt) and from
# the means (overhead_mean.md, summary_mean.txt: what the whole run pays).
# Unlike overhead.sh the modes do not interleave inside a round (two ranks
# cannot be stopped and continued in step): rounds are sequential jobs, so
# give it rounds. Knobs: ROUNDS (15), STEPS (200), BUDGET_S (300: no round
# starts after it), MODES. Exit 77 with fewer than 2 GPUs or no PyTorch
# with NCCL. Needs SRC, BUILD, RES; writes logs/ and recorded.txt too.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
STEPS=${STEPS:-200}
BUDGET_S=${BUDGET_S:-300}
MODES=${MODES:-"plain kptprof kptprof-every20 floor-kernel"}
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$n" -ge 2 ] || { echo "overhead2: fewer than 2 GPUs ($n): skipped"; exit 77; }
python3 -c 'import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()' 2>/dev/null ||
	{ echo "overhead2: no PyTorch with NCCL and 2 GPUs: skipped"; exit 77; }
mkdir -p "$RES/logs"
cmake --build "$BUILD" -j16 --target kptprof kptinject kptfloor >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
FLOOR=$BUILD/bench/collector/libkptfloor.so
S=$SRC/bench/collector/ddp_step.py
T=$(mktemp -d /tmp/kpt-ovh2.XXXXXX)
trap 'rm -rf "$T"' EXIT
export KPTPROF_NO_CALIBRATE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
	nvidia-smi topo -m
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
	echo "rounds $ROUNDS steps $STEPS budget ${BUDGET_S}s modes $MODES"
} >"$RES/env.txt" 2>&1

# run MODE LOG: one job of MODE; prints rank 0's "ddp_step ..." line
run() {
	local tr=(python3 -m torch.distributed.run --standalone --nproc-per-node 2 "$S" --steps "$STEPS")
	case $1 in
	plain) "${tr[@]}" ;;
	kptprof) "$K" record -o "$T/k.kpt" -- "${tr[@]}" ;;
	kptprof-every20) "$K" record -o "$T/k.kpt" --capture-range nvtx:step --every 20 -- "${tr[@]}" ;;
	floor-kernel) CUDA_INJECTION64_PATH=$FLOOR KPT_FLOOR_KINDS=kernel "${tr[@]}" ;;
	*) echo "overhead2: unknown mode '$1'" >&2; return 2 ;;
	esac 2>"$2" | grep '^ddp_step '
}

modes=($MODES)
echo "round mode workload median_ms mean_ms kernels_per_step" >"$RES/raw.tsv"
t0=$(date +%s)
done_rounds=0
for ((r = 0; r < ROUNDS; r++)); do
	[ $(( $(date +%s) - t0 )) -gt "$BUDGET_S" ] && { echo "overhead2: time budget reached after $done_rounds rounds"; break; }
	for ((i = 0; i < ${#modes[@]}; i++)); do
		m=${modes[$(( (i + r) % ${#modes[@]} ))]}
		rm -f "$T/k.kpt"
		line=$(run "$m" "$RES/logs/r$r-$m.err")
		med=$(echo "$line" | sed -n 's/.*median_ms \([0-9.]*\).*/\1/p')
		mean=$(echo "$line" | sed -n 's/.*mean_ms \([0-9.]*\).*/\1/p')
		if [ -z "$med" ] || [ -z "$mean" ]; then
			echo "overhead2: round $r mode $m gave no step time (logs/r$r-$m.err)"
			continue
		fi
		echo "$r $m ddp $med $mean -1" >>"$RES/raw.tsv"
		if [ -f "$T/k.kpt" ]; then
			"$K" report "$T/k.kpt" --top 0 | sed -n "s/^processes /$r $m /p" >>"$RES/recorded.txt"
			[ "$m" = kptprof-every20 ] && [ "$r" = 0 ] && "$K" report "$T/k.kpt" --by rank >"$RES/every20_by_rank.txt" 2>&1
		fi
	done
	done_rounds=$((r + 1))
	echo "round $r done ($(( $(date +%s) - t0 )) s)"
done
awk 'NR == 1 || NF < 5 { print; next } { print $1, $2, $3, $5, $5, $6 }' "$RES/raw.tsv" >"$RES/raw_mean.tsv"
echo "2 ranks, per-round medians of rank 0's step:"
python3 "$SRC/bench/collector/overhead_stats.py" "$RES/raw.tsv" "$RES/overhead.md" | tee "$RES/summary.txt"
echo "2 ranks, per-round means (what the whole run pays):"
python3 "$SRC/bench/collector/overhead_stats.py" "$RES/raw_mean.tsv" "$RES/overhead_mean.md" | tee "$RES/summary_mean.txt"
