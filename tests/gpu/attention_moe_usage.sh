#!/usr/bin/env bash
# attention_moe_usage.sh KPT_ATTN_MOE - bad command lines of kpt-attn-moe are
# refused before any GPU is touched: one line on stderr, exit status 2.
set -u
bin=$1
fail() { echo "FAIL: $*"; exit 1; }
expect2() {
	local err rc
	err=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] || fail "'$*' exit $rc, want 2"
	[ -n "$err" ] || fail "'$*' printed no message"
	echo "$err"
}
expect2 >/dev/null
expect2 prof 128 >/dev/null
expect2 profmoe 1 2 3 >/dev/null
expect2 check slow >/dev/null
expect2 bench nope | grep -q "unknown benchmark 'nope'" || fail "bench nope: no 'unknown benchmark' message"
echo ok
