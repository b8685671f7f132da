#!/usr/bin/env bash
# window_test.sh - capture windows on window_app.cu (10 steps "hstep", the
# step's kernel has grid step+1; win_tail launched last in step 4 outlives
# its step): which kernels each mode records, the window in the meta and in
# `report`; the pre-roll of --steps/--every (the step before a window is
# traced, its kernels dropped, those running into the window counted:
# --overrun's second win_tail runs from step 5 into step 6). Env: KPTPROF,
# APP, CHECK. Exit 77 without a GPU.
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kptwin.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0

# check NAME WANT [record options] -- [app options]: WANT is the sorted
# grids of win_step, then "tail" when win_tail is recorded
check() {
	local name=$1 want=$2 got
	shift 2
	KPTPROF_NO_CALIBRATE=1 "$KPTPROF" record -o "$T/$name.kpt" "$@" >"$T/out" 2>"$T/err" ||
		{ cat "$T/out" "$T/err"; echo "FAIL: $name: record"; fail=1; return; }
	"$KPTPROF" export "$T/$name.kpt" --format csv -o "$T/$name.csv" || { echo "FAIL: $name: export"; fail=1; return; }
	got=$(awk -F, 'NR > 1 && $1 == "kernel" && $NF ~ /^"?win_step/ { print $10 }' "$T/$name.csv" | sort -n | tr '\n' ' ')
	grep -q ',"\{0,1\}win_tail' "$T/$name.csv" && got="${got}tail"
	got=$(echo $got)
	echo "$name: recorded [$got], window '$("$CHECK" meta "$T/$name.kpt" collector.window)'" \
		"opened $("$CHECK" meta "$T/$name.kpt" collector.windows) times"
	[ "$got" = "$want" ] || { echo "FAIL: $name: want [$want]"; fail=1; }
}

check all "1 2 3 4 5 6 7 8 9 10 tail" -- "$APP"
check steps "3 4 5 tail" --capture-range nvtx:hstep --steps 2-4 -- "$APP"
check every "1 4 7 10" --capture-range nvtx:hstep --every 3 -- "$APP"
check domain "" --capture-range nvtx:hstep@NCCL -- "$APP"
check profiler "6 7" --capture-range cudaProfilerApi -- "$APP" --profiler
check delay "6 7 8 9 10" --delay 2 -- "$APP" --sleep
check duration "1 2 3 4 5 tail" --duration 2 -- "$APP" --sleep
check overrun "7 8" --capture-range nvtx:hstep --steps 6-7 -- "$APP" --overrun
KPT_PREROLL=0 check overrun_off "7 8" --capture-range nvtx:hstep --steps 6-7 -- "$APP" --overrun
# the program goes on 3 s after the last window: CUPTI is detached then
# (after the 2 s grace; the window's 50 ms tail still recorded), the
# program's later NVTX calls and launches run on without it
check detach "3 4 5 tail" --capture-range nvtx:hstep --steps 2-4 -- "$APP" --after 3
grep -q "steps after" "$T/out" || { echo "FAIL: detach: the program did not go on after the window"; cat "$T/out"; fail=1; }
KPT_DETACH=0 check detach_off "3 4 5 tail" --capture-range nvtx:hstep --steps 2-4 -- "$APP" --after 3
check every_after "1 4 7 10" --capture-range nvtx:hstep --every 3 -- "$APP" --after 3
# a --duration window ends and the program (which pushes ranges) goes on
# past the grace (4 x 1 s): CUPTI stays attached after a timed window (a
# detach there crashed the program in 7 of 26 runs, kpt_inject_trace.c
# kpt_core_window_start), so the program must end normally, not detached
check duration_after "1 2 3 4 5 6 7 8 9 10 tail" --duration 1 -- "$APP" --after 6
grep -q "steps after" "$T/out" || { echo "FAIL: duration_after: the program did not go on after the window"; cat "$T/out"; fail=1; }

# meta FILE KEY WANT
meta() {
	local got
	got=$("$CHECK" meta "$T/$1.kpt" "$2")
	[ "$got" = "$3" ] || { echo "FAIL: $1: meta $2 is '$got', want '$3'"; fail=1; }
}
# the pre-roll's steps (1; 2, 5, 8; 5) were traced and their kernels dropped
meta steps collector.prerolls 3                 # step 1, the gaps after 2 and 3
meta steps collector.preroll_kernels_dropped 1  # win_step of step 1
meta steps collector.kernels_before_window 0
meta every collector.preroll_kernels_dropped 3
meta every collector.kernels_before_window 0
meta overrun collector.kernels_before_window 1  # the tail of step 5
meta overrun collector.preroll_kernels_dropped 1
ns=$("$CHECK" meta "$T/overrun.kpt" collector.kernels_before_window_ns)
[ "${ns:-0}" -gt 1000000 ] 2>/dev/null || { echo "FAIL: overrun: the tail ran ${ns:-?} ns into the window, want > 1 ms"; fail=1; }
meta overrun_off collector.kernels_before_window ""
meta profiler collector.kernels_before_window ""  # no pre-roll for cudaProfilerApi
meta detach collector.detached 1
meta detach_off collector.detached ""
meta every_after collector.detached ""              # --every: a window may always come
meta steps collector.detached ""                    # ended before the grace
meta duration_after collector.detached ""         # timed windows never detach
ns=$("$CHECK" meta "$T/detach.kpt" collector.detached_after_ns)
[ "${ns:-0}" -gt 2000000000 ] 2>/dev/null || { echo "FAIL: detach: detached ${ns:-?} ns after the start, want > 2 s"; fail=1; }
"$KPTPROF" report "$T/detach.kpt" >"$T/rep" || { echo "FAIL: report detach"; fail=1; }
grep -q "^          CUPTI detached after the last window (1 process): later ranges not recorded$" "$T/rep" ||
	{ echo "FAIL: report detach lacks the detach:"; head "$T/rep"; fail=1; }
"$KPTPROF" report "$T/overrun.kpt" >"$T/rep" || { echo "FAIL: report overrun"; fail=1; }
grep -q "^          ran into a window from before it: 1 kernel for [0-9.]* ms (counted, not recorded)$" "$T/rep" ||
	{ echo "FAIL: report overrun lacks the kernel that ran into the window:"; head "$T/rep"; fail=1; }

[ "$("$CHECK" meta "$T/steps.kpt" collector.windows)" = 3 ] || { echo "FAIL: steps: want 3 windows"; fail=1; }
"$KPTPROF" report "$T/steps.kpt" >"$T/rep" || { echo "FAIL: report"; fail=1; }
grep -qx "window    steps 2-4 of range 'hstep'" "$T/rep" || { echo "FAIL: report lacks the window:"; head "$T/rep"; fail=1; }
[ $fail -eq 0 ] && echo "window_test: ok"
exit $fail
