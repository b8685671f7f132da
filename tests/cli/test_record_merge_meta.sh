#!/usr/bin/env bash
# record merges the collector's meta of every per-process file into the
# recording (issue 22: collector.nvtx_* and collector.window(s) were
# dropped by the merge, so gpu.nvtx_app and gpu.windows failed): counts
# summed, flags kept, equal values kept, differing ones per process; and
# `report` states the window. No GPU: a stand-in collector
# (KPTPROF_SKIP_GPU_CHECK) whose "program" writes two per-process files
# made by kpt-testrec (two processes each).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_testrec
"$KPT_BUILD/kpt-testrec" "$T/p1.kpt" collector.nvtx_unmatched_pops=1 collector.nvtx_closed_by_parent=2 \
	collector.nvtx_payload=1 "collector.window=steps 2-4 of range 'hstep'" collector.windows=3 \
	collector.nvml=1 collector=libkptinject || fail "kpt-testrec p1"
"$KPT_BUILD/kpt-testrec" "$T/p2.kpt" collector.nvtx_closed_by_parent=5 \
	"collector.window=steps 2-4 of range 'hstep'" collector.windows=2 collector.nvml=0 \
	collector=libkptinject || fail "kpt-testrec p2"
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
run "$KPTPROF" report "$T/m.kpt"
expect_rc 0 "report"
grep -qx "window    steps 2-4 of range 'hstep'" "$T/out" || fail "report lacks the window: $(head "$T/out")"
grep -qx "          opened 5 times (all processes)" "$T/out" || fail "report lacks the windows opened: $(head "$T/out")"

# ab records each run in this process (the recorder library, no second
# kptprof) and sums the collector's counts over its runs too
run "$KPTPROF" ab --runs 2 -o "$T/ab" -- "$T/target.sh" ::: "$T/target.sh"
[ -s "$T/ab/a.kpt" ] && [ -s "$T/ab/b.kpt" ] || fail "ab wrote no a.kpt/b.kpt (exit $RC): $(cat "$T/err")"
run "$KPTPROF" report "$T/ab/b.kpt" --format json
want collector.nvtx_closed_by_parent 14
echo ok
