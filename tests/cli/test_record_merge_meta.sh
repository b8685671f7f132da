#!/usr/bin/env bash
# record merges the collector's meta of every per-process file into the
# recording (issue 22: collector.nvtx_* and collector.window(s) were
# dropped by the merge, so gpu.nvtx_app and gpu.windows failed): counts
# summed, flags kept, equal values kept, differing ones per process; and
# `report` states the window and what ran into it from before (the
# pre-roll's counts, collector.kernels_before_window...). No GPU: a stand-in collector
# (KPTPROF_SKIP_GPU_CHECK) whose "program" writes two per-process files
# made by kpt-testrec (two processes each).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_testrec
"$KPT_BUILD/kpt-testrec" "$T/p1.kpt" collector.nvtx_unmatched_pops=1 collector.nvtx_closed_by_parent=2 \
	collector.nvtx_payload=1 "collector.window=steps 2-4 of range 'hstep'" collector.windows=3 \
	collector.nvml=1 collector=libkptinject collector.prerolls=3 collector.kernels_before_window=2 \
	collector.kernels_before_window_ns=1500000 collector.memops_before_window=1 \
	collector.preroll_kernels_dropped=40 || fail "kpt-testrec p1"
"$KPT_BUILD/kpt-testrec" "$T/p2.kpt" collector.nvtx_closed_by_parent=5 \
	"collector.window=steps 2-4 of range 'hstep'" collector.windows=2 collector.nvml=0 \
	collector=libkptinject collector.prerolls=2 collector.kernels_before_window=1 \
	collector.kernels_before_window_ns=500000 collector.memops_before_window=0 \
	collector.preroll_kernels_dropped=20 || fail "kpt-testrec p2"
cat >"$T/target.sh" <<'SH'
#!/bin/bash
# two processes of one run, as the collector writes them (KPT_OUTPUT's %p)
cp "$FAKE_DIR/p1.kpt" "${KPT_OUTPUT//%p/1001}" && cp "$FAKE_DIR/p2.kpt" "${KPT_OUTPUT//%p/1002}"
SH
chmod +x "$T/target.sh"
: >"$T/libkptinject.so"
export FAKE_DIR=$T KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1

run "$KPTPROF" record -o "$T/m.kpt" --capture-range nvtx:hstep --steps 2-4 -- "$T/target.sh"
expect_rc 0 "record"
run "$KPTPROF" report "$T/m.kpt" --format json
expect_rc 0 "report --format json"
meta() { tr -d '\n' <"$T/out" | grep -o "\"$1\": *\"[^\"]*\"" | head -n1 | sed 's/.*: *"//; s/"$//'; }
want() { [ "$(meta "$1")" = "$2" ] || fail "meta $1 is '$(meta "$1")', want '$2'"; }
want collector.nvtx_unmatched_pops 1
want collector.nvtx_closed_by_parent 7
want collector.nvtx_payload 1
want collector.windows 5
want collector.window "steps 2-4 of range 'hstep'"
want collector libkptinject
want collector.nvml "1 (processes 0,1); 0 (processes 2,3)"
want collector.prerolls 5
want collector.kernels_before_window 3
want collector.kernels_before_window_ns 2000000
want collector.memops_before_window 1
want collector.preroll_kernels_dropped 60
run "$KPTPROF" report "$T/m.kpt"
expect_rc 0 "report"
grep -qx "window    steps 2-4 of range 'hstep'" "$T/out" || fail "report lacks the window: $(head "$T/out")"
grep -qx "          opened 5 times (all processes)" "$T/out" || fail "report lacks the windows opened: $(head "$T/out")"
before="          ran into a window from before it: 3 kernels for 2.000 ms, 1 memcpy/memset (counted, not recorded)"
grep -qxF "$before" "$T/out" || fail "report lacks what ran into the window: $(head -n 12 "$T/out")"

# a window without a pre-roll (cudaProfilerApi, a collector before it):
# the report says kernels launched before it are not seen
"$KPT_BUILD/kpt-testrec" "$T/q.kpt" "collector.window=cudaProfilerStart..cudaProfilerStop" \
	collector.windows=1 || fail "kpt-testrec q"
run "$KPTPROF" report "$T/q.kpt"
expect_rc 0 "report q"
grep -qx "          kernels launched before a window opened are not traced, nor counted when they" "$T/out" ||
	fail "report q does not say what it cannot see: $(head -n 12 "$T/out")"
! grep -q "ran into a window" "$T/out" || fail "report q counts what it did not see"

# ab records each run in this process (the recorder library, no second
# kptprof) and sums the collector's counts over its runs too
run "$KPTPROF" ab --runs 2 -o "$T/ab" -- "$T/target.sh" ::: "$T/target.sh"
[ -s "$T/ab/a.kpt" ] && [ -s "$T/ab/b.kpt" ] || fail "ab wrote no a.kpt/b.kpt (exit $RC): $(cat "$T/err")"
run "$KPTPROF" report "$T/ab/b.kpt" --format json
want collector.nvtx_closed_by_parent 14
want collector.kernels_before_window 6
echo ok
