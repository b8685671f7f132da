#!/usr/bin/env bash
# scripts/gpu/overhead.sh - the collector's overhead on PyTorch training
# steps, interleaved and paired (run by scripts/gpu-check.sh, or alone with
# BUILD, SRC and RES set; bench/RESULTS.md "Collector" quotes it).
#
# Each round runs every mode once, in an order rotated from round to round,
# as one process of bench/collector/overhead_step.py: a launch-bound step
# (bf16 transformer block fwd+bwd+AdamW, batch 8 x seq 1024 x width 1024,
# 200 timed steps) and a GPU-bound one (8 bf16 8192^3 matmuls, 200 steps),
# each step timed inside the script between torch.cuda.synchronize() calls.
# Modes: plain; kptprof (`record -- CMD` as a user types it: kernels, NVTX
# links, NVML); kptprof-all (--kinds all: kernel, memcpy, memset, sync);
# the per-kind ablation abl-kernel+memcpy, abl-kernel+memset,
# abl-kernel+sync (each kind alone on top of the default); torch.profiler
# (CUDA activity, timed inside its context); floor-kernel (raw CUPTI with
# the default's one kind, libkptfloor.so); floor (raw CUPTI, all four).
# Writes under $RES: raw.tsv (round, mode, workload, median/mean ms),
# overhead.md (the table: paired mean of log ratios vs plain, 95% bootstrap
# interval over rounds), logs/; prints the short table last.
# Knobs: ROUNDS (default 15), STEPS (200), BUDGET_S (420: no round starts
# after this many seconds, so the whole part stays within 8 minutes of
# device time with the build), MODES (space list, default all), CORES
# (taskset list for every process, default 2-9: one L3 on the H100 hosts).
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
STEPS=${STEPS:-200}
GPU_STEPS=${GPU_STEPS:-200}
BUDGET_S=${BUDGET_S:-420}
CORES=${CORES:-2-9}
MODES=${MODES:-"plain kptprof kptprof-all abl-kernel+memcpy abl-kernel+memset abl-kernel+sync torch.profiler floor-kernel floor"}
mkdir -p "$RES/logs"
cmake --build "$BUILD" -j16 --target kptprof kptinject kptfloor kpt-launch-bench >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "overhead: no PyTorch with CUDA: skipped"; exit 77; }
K=$BUILD/cli/kptprof
FLOOR=$BUILD/bench/collector/libkptfloor.so
S=$SRC/bench/collector/overhead_step.py
T=$(mktemp -d /tmp/kpt-ovh.XXXXXX)
trap 'rm -rf "$T"' EXIT
PIN=""
command -v taskset >/dev/null && [ "$(nproc)" -gt 9 ] && PIN="taskset -c $CORES"
export KPTPROF_NO_CALIBRATE=1
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	echo "rounds $ROUNDS steps $STEPS gpu-steps $GPU_STEPS budget ${BUDGET_S}s pin '${PIN}'"
} >"$RES/env.txt" 2>&1

# run_mode MODE LOG: one process of the step script in MODE; its result
# lines on stdout.
run_mode() {
	local a="--steps $STEPS --gpu-steps $GPU_STEPS"
	case "$1" in
	plain) $PIN python3 "$S" $a ;;
	kptprof) $PIN "$K" record -o "$T/k.kpt" -- python3 "$S" $a ;;
	kptprof-all) $PIN "$K" record --kinds all -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-kernel+memcpy) $PIN "$K" record --kinds kernel,memcpy -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-kernel+memset) $PIN "$K" record --kinds kernel,memset -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-kernel+sync) $PIN "$K" record --kinds kernel,sync -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-no-nvml) KPT_SAMPLE_MS=0 $PIN "$K" record -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-link-runtime) KPT_RANGE_LINK=runtime $PIN "$K" record -o "$T/k.kpt" -- python3 "$S" $a ;;
	abl-link-off) KPT_RANGE_LINK=off $PIN "$K" record -o "$T/k.kpt" -- python3 "$S" $a ;;
	torch.profiler) $PIN python3 "$S" $a --mode profiler ;;
	floor) CUDA_INJECTION64_PATH=$FLOOR $PIN python3 "$S" $a ;;
	floor-kernel) KPT_FLOOR_KINDS=kernel CUDA_INJECTION64_PATH=$FLOOR $PIN python3 "$S" $a ;;
	*) echo "overhead: unknown mode '$1'" >&2; return 2 ;;
	esac 2>"$2"
}

# Host microseconds per empty-kernel launch (kpt-launch-bench, launches
# inside an NVTX range as a step's): where the collector's time goes, in
# LAUNCH_ROUNDS interleaved rounds (0: skipped). Not a user's workload: a
# diagnosis. launch.tsv: round mode median_us.
LAUNCH_ROUNDS=${LAUNCH_ROUNDS:-0}
LB=$BUILD/bench/collector/kpt-launch-bench
lmodes=(plain floor-kernel kptprof kptprof-nonvtx no-nvml link-runtime link-off)
[ "$LAUNCH_ROUNDS" -gt 0 ] && echo "round mode median_us" >"$RES/launch.tsv"
for ((r = 0; r < LAUNCH_ROUNDS; r++)); do
	for ((i = 0; i < ${#lmodes[@]}; i++)); do
		m=${lmodes[$(( (i + r) % ${#lmodes[@]} ))]}
		la="--n 20000 --reps 11 --pin 4"
		case $m in
		plain) out=$($LB $la --nvtx 2>/dev/null) ;;
		floor-kernel) out=$(KPT_FLOOR_KINDS=kernel CUDA_INJECTION64_PATH=$FLOOR $LB $la --nvtx 2>/dev/null) ;;
		kptprof) out=$("$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		kptprof-nonvtx) out=$("$K" record -o "$T/l.kpt" -- $LB $la 2>/dev/null) ;;
		no-nvml) out=$(KPT_SAMPLE_MS=0 "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		link-runtime) out=$(KPT_RANGE_LINK=runtime "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		link-off) out=$(KPT_RANGE_LINK=off "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		esac
		rm -f "$T/l.kpt"
		echo "$r $m $(echo "$out" | sed -n 's/.*median_us=\([0-9.]*\).*/\1/p')" >>"$RES/launch.tsv"
	done
done
[ "$LAUNCH_ROUNDS" -gt 0 ] && awk 'NR>1{v[$2]=v[$2]" "$3} END{for(m in v) print "launch", m, v[m]}' "$RES/launch.tsv" | tee "$RES/launch_summary.txt"

echo "round mode workload median_ms mean_ms kernels_per_step" >"$RES/raw.tsv"
read -r -a modes <<<"$MODES"
t0=$(date +%s)
done_rounds=0
for ((r = 0; r < ROUNDS; r++)); do
	if (( $(date +%s) - t0 > BUDGET_S )); then
		echo "overhead: time budget reached after $done_rounds rounds" | tee -a "$RES/env.txt"
		break
	fi
	n=${#modes[@]}
	for ((i = 0; i < n; i++)); do
		m=${modes[$(( (i + r) % n ))]}
		t_m=$(date +%s.%N)
		out=$(run_mode "$m" "$RES/logs/r$r-$m.err") || echo "overhead: round $r mode $m failed (logs/r$r-$m.err)" | tee -a "$RES/env.txt"
		echo "$r $m $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t_m}") s" >>"$RES/process_seconds.txt"
		# every kptprof recording complete: CUPTI's drops are warned about
		if grep -q "dropped" "$RES/logs/r$r-$m.err"; then echo "$r $m $(grep dropped "$RES/logs/r$r-$m.err")" >>"$RES/dropped.txt"; fi
		[ -f "$T/k.kpt" ] && { "$K" report "$T/k.kpt" --top 0 2>/dev/null | sed -n 's/^processes \(.*\)/\1/p' | sed "s/^/$r $m /" >>"$RES/recorded.txt"; rm -f "$T/k.kpt"; }
		echo "$out" | sed -n 's/^result workload=\([a-z]*\) median_ms=\([0-9.]*\) mean_ms=\([0-9.]*\) .*kernels_per_step=\(-\{0,1\}[0-9]*\).*/\1 \2 \3 \4/p' |
			while read -r wl med mean kern; do echo "$r $m $wl $med $mean $kern"; done >>"$RES/raw.tsv"
	done
	done_rounds=$((r + 1))
	echo "round $r done ($(( $(date +%s) - t0 )) s)"
done
echo "rounds $done_rounds in $(( $(date +%s) - t0 )) s" >>"$RES/env.txt"
echo "dropped-record warnings: $(cat "$RES/dropped.txt" 2>/dev/null | wc -l)" >>"$RES/env.txt"
python3 "$SRC/bench/collector/overhead_stats.py" "$RES/raw.tsv" "$RES/overhead.md" | tee "$RES/summary.txt"
