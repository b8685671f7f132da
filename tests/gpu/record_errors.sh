#!/usr/bin/env bash
# record_errors.sh - `kptprof record` and `kptprof devices` refuse bad input
# with one clear line and exit 2 (77 without a driver: skipped), leaving
# nothing behind. Runs anywhere; the
# no-driver cases only where there is no driver. Env: KPTPROF.
set -u
fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The launcher only checks that the injection library exists; a stand-in
# lets these tests run on builds without CUDA (no libkptinject.so).
: >"$work/libkptinject.so"
export KPTPROF_INJECT=$work/libkptinject.so

# expect STATUS PATTERN CMD... : exit status and a stderr line matching PATTERN
expect() {
	local want=$1 pat=$2
	shift 2
	"$@" >out.txt 2>err.txt
	local rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$pat" err.txt; then
		echo "FAIL: '$*' exited $rc (want $want), stderr:"; cat err.txt
		fail=1
	fi
}

# nothing may be left in the output folder but what a test put there
expect_clean() {
	local left
	left=$(ls -A | grep -v -E '^(out|err)\.txt$' | grep -v -E '^(sub|libkptinject\.so)$')
	if [ -n "$left" ]; then
		echo "FAIL: left behind after '$1': $left"
		fail=1
		rm -rf $left
	fi
}

expect 2 "bad output pattern 'r%q.kpt'" "$KPTPROF" record -o 'r%q.kpt' -- true
expect 2 "bad output pattern 'r%'" "$KPTPROF" record -o 'r%' -- true
expect 2 "command not found: 'no-such-command-kpt'" "$KPTPROF" record -o r.kpt -- no-such-command-kpt
expect_clean "command not found"
expect 2 "cannot write '$work/nodir/r.kpt'" "$KPTPROF" record -o "$work/nodir/r.kpt" -- true
mkdir sub
expect 2 "it is a directory" "$KPTPROF" record -o sub -- true
chmod 555 sub
if [ "$(id -u)" != 0 ]; then
	expect 2 "cannot write 'sub/r.kpt'" "$KPTPROF" record -o sub/r.kpt -- true
fi
chmod 755 sub
expect 2 "unknown option '--bogus'" "$KPTPROF" record --bogus -- true
expect 2 "give exactly one of" "$KPTPROF" record -o r.kpt
expect 2 "give exactly one of" "$KPTPROF" record --suite quick -- true
expect 2 "apply to '--suite' and '--workload' only" "$KPTPROF" record --iterations 3 -- true
expect 2 "bad value 'x' for --runs" "$KPTPROF" record --runs x -- true
expect 2 "bad value '0' for --runs" "$KPTPROF" record --runs 0 -- true
expect 2 "unknown counter set or metric 'bogus'" "$KPTPROF" record --counters=bogus -- true
KPTPROF_INJECT=/nonexistent/libkptinject.so expect 2 "cannot find the collector" "$KPTPROF" record -o r.kpt -- true
KPTPROF_WORKLOADS=/nonexistent/kpt-workloads expect 2 "cannot find the workload runner" \
	"$KPTPROF" record -o r.kpt --workload memory.copy.256MiB
expect_clean "missing pieces"
expect 2 "unknown option '--x'" "$KPTPROF" devices --x

if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 ' && ! nvidia-smi -L >/dev/null 2>&1; then
	expect 77 "no NVIDIA driver on this machine" "$KPTPROF" record -o r.kpt -- true
	expect_clean "no driver"
	[ ! -e r.kpt ] || { echo "FAIL: r.kpt written without a driver"; fail=1; }
	expect 77 "no NVIDIA driver on this machine" "$KPTPROF" devices
fi
[ $fail -eq 0 ] && echo "record_errors: ok"
exit $fail
