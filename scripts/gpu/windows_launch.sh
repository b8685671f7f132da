#!/usr/bin/env bash
# scripts/gpu/windows_launch.sh - what a capture window leaves on the
# launching thread, measured where it is least noisy: host microseconds per
# empty-kernel launch (kpt-launch-bench --steps: STEPS steps, each an NVTX
# range "step" around N launches, then a sync), one process per mode, the
# modes in a rotated order each round, every process pinned to one core
# (PINCPU). A PyTorch step reads +-4-5 points between rounds on some H100s
# (bench/RESULTS.md, "Capture windows, a fourth H100"); a launch's host cost
# is what a tracer adds to a launch-bound step, without the step's noise.
# Modes (the names of overhead_interleave.py): plain; floor-kernel (raw
# CUPTI kernel activity, libkptfloor.so); kptprof (the whole run traced);
# kptprof-every20 (`--capture-range nvtx:step --every 20`, pre-roll);
# kptprof-every20-nopreroll; win-never (a window that never opens);
# win-once (step 0 only, then never: what a window leaves on after it
# closes; the collector detaches CUPTI 2 s after it) and win-once-nodetach
# (KPT_DETACH=0: the kinds disabled, CUPTI attached); every20-no-kinds, every20-no-callbacks (KPT_WINDOW_TEST_OFF);
# t-HOW and t1-HOW: no kptprof, the bench switches CUPTI itself the way HOW
# says (kpt_launch_cupti_toggle, bench/collector/launch_bench.cu: kinds,
# kinds-ctx, kinds-finalize, cbs, cbs-domain, cbs-unsub, cbs-finalize) at
# every 20th step (t-) or at step 0 only (t1-): what returns a launch to its
# cost without CUPTI once a window has closed.
# Writes under $RES: steps.tsv (round mode launch 0 us_per_launch step),
# window_profile.md (window_profile.py: by place in the cycle of 20, paired
# against plain per round), late.md (late_steps.py: the steps from LATE on,
# after a detach), kernels.txt (kernels per recording), logs/. Needs SRC,
# BUILD, RES. Knobs: ROUNDS (15), STEPS (1000), N (200), PINCPU (3), LATE
# (STEPS * 2 / 3), MODES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-15}
STEPS=${STEPS:-1000}
N=${N:-200}
PINCPU=${PINCPU:-3}
MODES=${MODES:-"plain floor-kernel kptprof kptprof-every20 kptprof-every20-nopreroll win-never win-once every20-no-kinds every20-no-callbacks"}
mkdir -p "$RES/logs"
cmake --build "$BUILD" -j16 --target kptprof kptinject kptfloor kpt-launch-bench >"$RES/build.log" 2>&1 ||
	{ tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
LB=$BUILD/bench/collector/kpt-launch-bench
FLOOR=$BUILD/bench/collector/libkptfloor.so
T=$(mktemp -d /tmp/kpt-wl.XXXXXX)
trap 'rm -rf "$T"' EXIT
export KPTPROF_NO_CALIBRATE=1
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
	echo "rounds $ROUNDS steps $STEPS n $N pin $PINCPU"
} >"$RES/env.txt" 2>&1

run_mode() { # mode round -> appends to steps.tsv; 1 on failure
	local m=$1 r=$2 kpt=$T/$1.kpt st=$T/$1.steps env=() rec=()
	local win=(--capture-range nvtx:step --every 20)
	case $m in
	plain) ;;
	floor-kernel) env=(CUDA_INJECTION64_PATH="$FLOOR" KPT_FLOOR_KINDS=kernel) ;;
	kptprof) rec=("$K" record -o "$kpt" --) ;;
	kptprof-every20) rec=("$K" record "${win[@]}" -o "$kpt" --) ;;
	kptprof-every20-nopreroll) env=(KPT_PREROLL=0); rec=("$K" record "${win[@]}" -o "$kpt" --) ;;
	win-never) rec=("$K" record --capture-range nvtx:step --steps 1000000000 -o "$kpt" --) ;;
	win-once) rec=("$K" record --capture-range nvtx:step --steps 0-0 -o "$kpt" --) ;;
	win-once-nodetach) env=(KPT_DETACH=0); rec=("$K" record --capture-range nvtx:step --steps 0-0 -o "$kpt" --) ;;
	every20-no-kinds) env=(KPT_WINDOW_TEST_OFF=kinds); rec=("$K" record "${win[@]}" -o "$kpt" --) ;;
	every20-no-callbacks) env=(KPT_WINDOW_TEST_OFF=callbacks); rec=("$K" record "${win[@]}" -o "$kpt" --) ;;
	t-* | t1-*) # a window by hand, no kptprof: kpt-launch-bench --toggle
		local how=${m#*-} ev=20
		[ "${m%%-*}" = t1 ] && ev=0
		"$LB" --pin "$PINCPU" --n "$N" --steps "$STEPS" --out "$st" --toggle "$how" --window-every "$ev" \
			>>"$RES/logs/$m.log" 2>&1 || { echo "windows_launch: $m failed in round $r" >&2; return 1; }
		awk -v r="$r" -v m="$m" '{ print r, m, "launch", 0, $2, $1 }' "$st" >>"$RES/steps.tsv"
		return 0 ;;
	*) echo "windows_launch: unknown mode $m" >&2; return 1 ;;
	esac
	rm -f "$kpt" "$st"
	env "${env[@]}" "${rec[@]}" "$LB" --pin "$PINCPU" --n "$N" --steps "$STEPS" --out "$st" \
		>>"$RES/logs/$m.log" 2>&1 || { echo "windows_launch: $m failed in round $r" >&2; return 1; }
	awk -v r="$r" -v m="$m" '{ print r, m, "launch", 0, $2, $1 }' "$st" >>"$RES/steps.tsv"
	if [ -f "$kpt" ]; then
		"$K" report "$kpt" --format json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(sys.argv[1], sys.argv[2], sum(k.get("instances", 0) for k in j.get("kernels", [])))' "$r" "$m" \
			>>"$RES/kernels.txt" 2>/dev/null || true
	fi
}

echo "round mode workload block ms step" >"$RES/steps.tsv"
read -r -a modes <<<"$MODES"
rc=0
for ((r = 0; r < ROUNDS; r++)); do
	nm=${#modes[@]}
	for ((i = 0; i < nm; i++)); do
		run_mode "${modes[$(((i + r) % nm))]}" "$r" || rc=1
	done
done
python3 "$SRC/bench/collector/window_profile.py" "$RES/steps.tsv" "$RES/window_profile.md" --every 20 |
	tee "$RES/window_profile.txt"
echo "steps from ${LATE:-$((STEPS * 2 / 3))} on:"
python3 "$SRC/bench/collector/late_steps.py" "$RES/steps.tsv" "$RES/late.md" --from "${LATE:-$((STEPS * 2 / 3))}"
exit $rc
