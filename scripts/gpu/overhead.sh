#!/usr/bin/env bash
# scripts/gpu/overhead.sh - the collector's overhead on PyTorch training
# steps, interleaved and paired (run by scripts/gpu-check.sh, or alone with
# BUILD, SRC and RES set; bench/RESULTS.md "Collector" quotes it).
#
# Rounds (bench/collector/overhead_interleave.py): each round starts one
# process of bench/collector/overhead_step.py per mode at once, then runs
# the modes in turn in short blocks (the others stopped with SIGSTOP), so
# all modes are timed in the same minute: a launch-bound step (bf16
# transformer block fwd+bwd+AdamW, batch 8 x seq 1024 x width 1024) and a
# GPU-bound one (8 bf16 8192^3 matmuls), STEPS and GPU_STEPS timed steps per
# mode and round, each timed inside the script between
# torch.cuda.synchronize() calls. Modes (overhead_stats.py says each):
# plain; kptprof (`record -- CMD` as typed); kptprof-all; the per-kind
# ablation abl-kernel+memcpy|memset|sync; abl-no-nvml, abl-link-runtime,
# abl-link-off (the default without the NVML sampler, with runtime-only or
# no NVTX range links); torch.profiler (CUDA activity, timed inside its
# context); floor-kernel and floor (raw CUPTI, libkptfloor.so).
# Writes under $RES: raw.tsv, steps.tsv, overhead.md (paired mean of log
# ratios vs plain over rounds, 95% bootstrap interval), logs/, dropped.txt,
# recorded.txt; prints the short table last.
# Knobs: ROUNDS (default 15), STEPS (200), GPU_STEPS (200), BLOCKS (10),
# LAUNCH_ROUNDS (0), BUDGET_S (420: no round starts
# after this many seconds, so the whole part stays within 8 minutes of
# device time with the build), MODES (space list, default all), CORES
# (taskset list for every process, default 2-9: one L3 on the H100 hosts),
# OLD_BUILD (another build folder: adds the mode kptprof-old, that build's
# kptprof, to both parts, and the paired row "kptprof vs kptprof-old";
# scripts/gpu/collector_ab.sh).
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
STEPS=${STEPS:-200}
GPU_STEPS=${GPU_STEPS:-200}
BUDGET_S=${BUDGET_S:-420}
BLOCKS=${BLOCKS:-10}
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
command -v taskset >/dev/null && [ "$(nproc)" -gt 9 ] && PIN=1
export KPTPROF_NO_CALIBRATE=1
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	echo "rounds $ROUNDS steps $STEPS gpu-steps $GPU_STEPS budget ${BUDGET_S}s pin '${PIN}'"
} >"$RES/env.txt" 2>&1

# Host microseconds per empty-kernel launch (kpt-launch-bench, launches
# inside an NVTX range as a step's): where the collector's time goes, in
# LAUNCH_ROUNDS interleaved rounds (0: skipped). Not a user's workload: a
# diagnosis. launch.tsv: round mode median_us.
LAUNCH_ROUNDS=${LAUNCH_ROUNDS:-0}
LB=$BUILD/bench/collector/kpt-launch-bench
lmodes=(${LAUNCH_MODES:-plain floor-kernel kptprof kptprof-nonvtx no-nvml link-runtime link-off})
KOLD=${OLD_BUILD:+$OLD_BUILD/cli/kptprof}
[ -n "$KOLD" ] && lmodes+=(kptprof-old)
[ "$LAUNCH_ROUNDS" -gt 0 ] && echo "round mode median_us" >"$RES/launch.tsv"
for ((r = 0; r < LAUNCH_ROUNDS; r++)); do
	for ((i = 0; i < ${#lmodes[@]}; i++)); do
		m=${lmodes[$(( (i + r) % ${#lmodes[@]} ))]}
		la="--n 20000 --reps 11 --pin 4"
		case $m in
		plain) out=$($LB $la --nvtx 2>/dev/null) ;;
		floor-kernel) out=$(KPT_FLOOR_KINDS=kernel CUDA_INJECTION64_PATH=$FLOOR $LB $la --nvtx 2>/dev/null) ;;
		kptprof) out=$("$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		kptprof-old) out=$("$KOLD" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		kptprof-nonvtx) out=$("$K" record -o "$T/l.kpt" -- $LB $la 2>/dev/null) ;;
		no-nvml) out=$(KPT_SAMPLE_MS=0 "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		link-runtime) out=$(KPT_RANGE_LINK=runtime "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		link-both) out=$(KPT_RANGE_LINK=both "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		link-off) out=$(KPT_RANGE_LINK=off "$K" record -o "$T/l.kpt" -- $LB $la --nvtx 2>/dev/null) ;;
		esac
		rm -f "$T/l.kpt"
		echo "$r $m $(echo "$out" | sed -n 's/.*median_us=\([0-9.]*\).*/\1/p')" >>"$RES/launch.tsv"
	done
done
if [ "$LAUNCH_ROUNDS" -gt 0 ]; then
	awk 'NR>1{v[$2]=v[$2]" "$3} END{for(m in v) print "launch", m, v[m]}' "$RES/launch.tsv" | tee "$RES/launch_summary.txt"
	# the same through overhead_stats.py (us per launch in place of ms per
	# step; the abl- names are its): paired against plain, and new vs old
	awk 'NR==1{print "round mode workload median_ms mean_ms kernels_per_step"; next}
		$3!="" {m=$2; if (m=="no-nvml"||m=="link-runtime"||m=="link-off"||m=="link-both") m="abl-" m; if (m=="kptprof-nonvtx") next;
			print $1, m, "launch-us", $3, $3, 0}' "$RES/launch.tsv" >"$RES/launch_raw.tsv"
	python3 "$SRC/bench/collector/overhead_stats.py" "$RES/launch_raw.tsv" "$RES/launch.md" | tee -a "$RES/launch_summary.txt"
fi

python3 "$SRC/bench/collector/overhead_interleave.py" --out "$RES" --kptprof "$K" --floor "$FLOOR" \
	--script "$S" --modes $MODES --rounds "$ROUNDS" --blocks "$BLOCKS" --steps "$STEPS" \
	--gpu-steps "$GPU_STEPS" --budget-s "$BUDGET_S" ${PIN:+--pin "$CORES"} ${KOLD:+--kptprof-old "$KOLD"} | tee -a "$RES/env.txt"
echo "dropped-record warnings: $(cat "$RES/dropped.txt" 2>/dev/null | wc -l)" >>"$RES/env.txt"
python3 "$SRC/bench/collector/overhead_stats.py" "$RES/raw.tsv" "$RES/overhead.md" | tee "$RES/summary.txt"
