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
echo ok
