#!/usr/bin/env bash
# test_workloads.sh - `kptprof workloads`: lists the runner's registry when
# kpt-workloads is built (beside kptprof or via KPTPROF_WORKLOADS), and says
# clearly that no runner is built otherwise (exit 2). Needs no GPU.
. "$(dirname "$0")/cli_lib.sh"

run env KPTPROF_WORKLOADS=/nonexistent/kpt-workloads "$KPTPROF" workloads
expect_error "workloads with a missing runner" "KPTPROF_WORKLOADS='/nonexistent/kpt-workloads' is not an executable file"
# the old name is still read, with a one-line notice
run env -u KPTPROF_WORKLOADS KPT_WORKLOADS=/nonexistent/kpt-workloads "$KPTPROF" workloads
expect_rc 2 "workloads with KPT_WORKLOADS"
expect_err "kptprof: notice: KPT_WORKLOADS is read as KPTPROF_WORKLOADS"
expect_err "KPT_WORKLOADS='/nonexistent/kpt-workloads' is not an executable file"
[ "$(wc -l <"$T/err")" = 2 ] || fail "old-name notice is not one line: $(cat "$T/err")"

run "$KPTPROF" workloads --bogus
expect_error "workloads --bogus" "unknown option '--bogus'"

run "$KPTPROF" workloads --suite
expect_error "workloads --suite without a name" "needs a value"

runner=$(dirname "$KPTPROF")/kpt-workloads
[ -x "$runner" ] || skip "no kpt-workloads beside kptprof (built only with a CUDA toolkit)"
run env -u KPT_WORKLOADS -u KPTPROF_WORKLOADS "$KPTPROF" workloads
expect_rc 0 "workloads"
expect_out "memory.copy.4MiB"
expect_out "fp8.gemm.e4m3xe4m3.8192x8192x8192"
run env -u KPT_WORKLOADS -u KPTPROF_WORKLOADS "$KPTPROF" workloads --json --suite quick
expect_rc 0 "workloads --json --suite quick"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["workloads"] and all("quick" in w["suites"].split() for w in d["workloads"])' "$T/out" ||
	fail "workloads --json --suite quick is not the quick suite as JSON"
run env -u KPT_WORKLOADS -u KPTPROF_WORKLOADS "$KPTPROF" workloads --suite nosuch
expect_rc 2 "workloads --suite nosuch"
echo ok
