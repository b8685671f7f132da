#!/usr/bin/env bash
# kptprof ab's command line: bad usage is exit 2 with one line naming the
# problem (no ':::', one pair, an unknown option); without a GPU it records
# nothing and exits 77. (Its verdicts on real recordings: test_diff_real.sh.)
. "$KPT_SRC/tests/cli/cli_lib.sh"
run "$KPTPROF" ab -- a b
expect_rc 2 "ab without :::"
grep -q "expected two commands" "$T/err" || fail "ab without ::: message: $(cat "$T/err")"
run "$KPTPROF" ab --runs 1 -- a ::: b
expect_rc 2 "ab --runs 1"
grep -q -- "--runs" "$T/err" || fail "--runs message: $(cat "$T/err")"
run "$KPTPROF" ab --frobnicate -- a ::: b
expect_rc 2 "ab with an unknown option"
run "$KPTPROF" ab -- a :::
expect_rc 2 "ab with an empty B command"
if [ ! -e /dev/nvidiactl ] && [ ! -e /proc/driver/nvidia/version ]; then
	run "$KPTPROF" ab -o "$T/keep" -- true ::: true
	expect_rc 77 "ab without a GPU"
	grep -q "no NVIDIA GPU" "$T/err" || fail "ab without a GPU message: $(cat "$T/err")"
	[ ! -e "$T/keep" ] || fail "ab without a GPU made its output folder"
fi

# the pairs through the stand-in collector (KPTPROF_SKIP_GPU_CHECK): each
# command writes a kpt-synth recording, B's gemm kernels 10% slower; the
# programs' output goes to DIR/ab.log, kptprof's progress to stderr
if [ -x "$KPT_BUILD/kpt-synth" ]; then
	cat >"$T/w.sh" <<'SH'
#!/bin/sh
echo "program output $$"
exec "$SYNTH" -o "$(echo "$KPT_OUTPUT" | sed "s/%p/$$/")" --runs 2 --iterations 10 --kernels-per-iter 6 \
	--names 6 --seed 7 "$@"
SH
	chmod +x "$T/w.sh"
	: >"$T/libkptinject.so"
	run env KPTPROF_INJECT="$T/libkptinject.so" KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1 \
		SYNTH="$KPT_BUILD/kpt-synth" "$KPTPROF" ab --runs 3 -o "$T/ab" -- "$T/w.sh" ::: "$T/w.sh" --slow gemm:10
	expect_rc 1 "ab of a slower B"
	grep -q "gemm.*SLOW" "$T/out" || fail "ab: no gemm SLOW row: $(cat "$T/out")"
	[ "$(grep -c "^kptprof ab: pair [1-3]/3 ([AB] first)" "$T/err")" = 3 ] || fail "ab: progress lines: $(cat "$T/err")"
	! grep -q "program output" "$T/err" "$T/out" || fail "ab: the programs' output reached kptprof's own"
	[ "$(grep -c "program output" "$T/ab/ab.log")" = 6 ] || fail "ab.log lacks the programs' output"
	ls "$T/ab" | grep -q -- '-[0-9]*\.kpt$' && fail "ab left its parts: $(ls "$T/ab")"
fi
echo ok
