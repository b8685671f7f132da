#!/usr/bin/env bash
# gate --against BUILD for the bundled suite goes through the same code as
# a project (issue 40): the suite is a project of one workload whose
# command is each build's own kpt-workloads. No GPU: stand-in runners
# (this build's via KPTPROF_WORKLOADS, the base's in a build folder) that
# write recordings made by kpt-synth under the stand-in collector. The
# base's runner lacks --settle-us: both sides run without the gap (a note).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
: >"$T/libkptinject.so"
export KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1 SYNTH=$KPT_BUILD/kpt-synth
# runner DIR SLOW_PCT HELP: a kpt-workloads stand-in; records its argv
runner() {
	mkdir -p "$1"
	cat >"$1/kpt-workloads" <<SH
#!/bin/sh
if [ "\$1" = --help ]; then echo "usage: kpt-workloads [--suite S] $3"; exit 0; fi
[ -n "\$KPT_OUTPUT" ] || exit 0
echo "\$0 \$*" >>"$T/calls"
exec "\$SYNTH" -o "\$(echo "\$KPT_OUTPUT" | sed "s/%p/\$\$/")" --runs 2 --iterations 10 --kernels-per-iter 6 \\
	--names 6 --seed 7 --suite default --slow "gemm:$2"
SH
	chmod +x "$1/kpt-workloads"
}
runner "$T/base" 0 ""
runner "$T/new" 10 "--settle-us U"
export KPTPROF_WORKLOADS=$T/new/kpt-workloads
cd "$T" || fail "cd"   # no kptprof.json here or above (the bundled suite)
[ ! -e "$T/../kptprof.json" ] || skip "a kptprof.json above $T"
run "$KPTPROF" gate --against "$T/base" --runs 3 --baselines "$T/none"
expect_rc 1 "gate --against a build folder of the bundled suite"
grep -q "SLOW" "$T/out" || fail "no SLOW row: $(head -c 600 "$T/out")"
expect_err "has no --settle-us: both builds run without an idle gap"
[ "$(grep -c "^$T/base/kpt-workloads --suite default\$" "$T/calls")" = 3 ] || fail "base runner calls: $(cat "$T/calls")"
[ "$(grep -c "^$T/new/kpt-workloads --suite default\$" "$T/calls")" = 3 ] || fail "new runner calls: $(cat "$T/calls")"
expect_err "no committed baseline '$T/none/nvidia-h100-80gb-hbm3/default'"

# both runners know --settle-us: both get it
rm -f "$T/calls"
runner "$T/base" 0 "--settle-us U"
run "$KPTPROF" gate --against "$T/base" --runs 2 --settle-us 500 --baselines "$T/none"
[ "$(grep -c -- "--settle-us 500 --suite default\$" "$T/calls")" = 4 ] || fail "settle not passed: $(cat "$T/calls")"

# a folder without a runner: one line, exit 2
mkdir "$T/empty"
run "$KPTPROF" gate --against "$T/empty" --runs 2
expect_error "gate --against a folder without kpt-workloads" "a folder without a built kpt-workloads"
echo ok
