#!/usr/bin/env bash
# record's capture-window options (--capture-range, --steps, --every,
# --delay, --duration): bad values are one-line errors with exit 2 before
# anything runs, and good ones reach the program's processes as the
# collector's KPT_CAPTURE_RANGE, KPT_STEPS, KPT_EVERY, KPT_DELAY and
# KPT_DURATION (collectors/kpt_window.h), checked with a program that saves
# its environment (no GPU needed: KPTPROF_SKIP_GPU_CHECK, a stand-in
# collector).
. "$KPT_SRC/tests/cli/cli_lib.sh"
: >"$T/libkptinject.so"
export KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1

bad() {
	local want=$1
	shift
	run "$KPTPROF" record -o "$T/w.kpt" "$@" -- sh -c 'touch "$0"' "$T/ran"
	expect_error "record $*" "$want"
	[ ! -e "$T/ran" ] || fail "record $* ran the program"
	[ ! -e "$T/w.kpt" ] || fail "record $* wrote a file"
}
bad "bad --capture-range 'nvtx'" --capture-range nvtx
bad "bad --capture-range 'cudaprofilerapi'" --capture-range cudaprofilerapi
bad "empty range name" --capture-range nvtx:@NCCL
bad "empty domain" --capture-range nvtx:hstep@
bad "bad --steps '3-1': the first step is after the last" --steps 3-1
bad "bad --steps 'a-b'" --steps a-b
bad "bad --every '0'" --every 0
bad "--steps and --every exclude each other" --steps 1-2 --every 3
bad "not with --capture-range cudaProfilerApi" --capture-range cudaProfilerApi --every 3
bad "bad --delay '-2'" --delay -2
bad "bad --duration 'x'" --duration x
run "$KPTPROF" record --steps
expect_error "record --steps" "option '--steps' needs a value"

run "$KPTPROF" record -o "$T/w.kpt" --capture-range nvtx:hstep@NCCL --steps 100-110 --delay 1.5 \
	--duration=20 -- sh -c 'env >"$0"' "$T/env"
[ -s "$T/env" ] || fail "the program did not run: $(cat "$T/err")"
for kv in KPT_CAPTURE_RANGE=nvtx:hstep@NCCL KPT_STEPS=100-110 KPT_DELAY=1.5 KPT_DURATION=20; do
	grep -qx -- "$kv" "$T/env" || fail "the program's environment lacks $kv: $(grep ^KPT_ "$T/env")"
done
! grep -q '^KPT_EVERY=' "$T/env" || fail "KPT_EVERY set without --every"
run "$KPTPROF" record -o "$T/w.kpt" --every 20 -- sh -c 'env >"$0"' "$T/env"
grep -qx KPT_EVERY=20 "$T/env" || fail "--every 20 did not reach the program"
echo ok
