#!/usr/bin/env bash
# gate without --against on a project (issue 40), no GPU: a stand-in
# collector (KPTPROF_SKIP_GPU_CHECK) and a workload that copies a
# kpt-testrec recording to KPT_OUTPUT. kptprof.json in a parent folder
# applies; gate records each workload once per run (one recording, not
# two), takes the project's name as the suite and its baselines folder,
# and says how to make a baseline when there is none.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_testrec
"$KPT_BUILD/kpt-testrec" "$T/p.kpt" || fail "kpt-testrec"
: >"$T/libkptinject.so"
export FAKE_DIR=$T KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1
export KPTPROF_BASELINES=$T/bundled
SLUG=nvidia-h100-80gb-hbm3
P=$T/proj
mkdir -p "$P/src"
cat >"$P/fake.sh" <<'SH'
#!/bin/bash
echo "$1 ${KPT_OUTPUT##*/}" >>"$FAKE_DIR/log"
cp "$FAKE_DIR/p.kpt" "${KPT_OUTPUT//%p/$$}"
SH
chmod +x "$P/fake.sh"
cat >"$P/kptprof.json" <<'JSON'
{
  "project": "demo",
  "baselines": "perf/bl",
  "runs": 3,
  "workloads": [
    { "name": "alpha", "command": ["./fake.sh", "alpha"] },
    { "name": "beta", "command": ["./fake.sh", "beta"] }
  ]
}
JSON
cd "$P/src" || fail "cd"

# no baseline: gate records, then says how to make one for this project
run "$KPTPROF" gate
expect_rc 2 "gate of a project without a baseline"
expect_err "no baseline for GPU '$SLUG' and suite 'demo'"
expect_err "$P/perf/bl/$SLUG/demo/"
expect_err "make one with 'kptprof record --project $P/kptprof.json --runs 5 -o rec.kpt' and 'kptprof baseline update rec.kpt'"

# a baseline of the project, made as the hint says
run "$KPTPROF" record -o "$T/base.kpt"
expect_rc 0 "record of the project"
run "$KPTPROF" baseline update "$T/base.kpt"
expect_rc 0 "baseline update of the project's recording"
expect_out "$P/perf/bl/$SLUG/demo/"

: >"$T/log"
run "$KPTPROF" gate -o "$T/gate.kpt" --json "$T/g.json"
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "gate of a project: exit $RC: $(cat "$T/err")"
expect_err "kptprof gate: recording project 'demo' (2 workloads), its runs"
expect_err "vs baseline $P/perf/bl/$SLUG/demo (1 session)"
# recorded once: the project's 3 runs of each workload, no second recording
[ "$(grep -c '^alpha r' "$T/log")" = 3 ] || fail "alpha's runs: $(cat "$T/log")"
[ "$(grep -c '^beta r' "$T/log")" = 3 ] || fail "beta's runs: $(cat "$T/log")"
"$KPTPROF" report "$T/gate.kpt" --format json | grep -q '"suite": *"demo"' || fail "the gate's recording is not of suite demo"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"] == "ok" and d["base"]["suite"] == "demo", d["result"]' \
	"$T/g.json" || fail "gate --json of a project: not ok against the project's baseline"
[ ! -e "$T/bundled" ] || fail "gate of a project used the default baselines folder"
# --runs overrides the project's
: >"$T/log"
run "$KPTPROF" gate --runs 2
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "gate --runs 2 of a project: exit $RC: $(cat "$T/err")"
[ "$(grep -c '^alpha r' "$T/log")" = 2 ] || fail "alpha's runs with --runs 2: $(cat "$T/log")"
# --suite naming a bundled suite leaves the project out
run "$KPTPROF" gate --suite quick --from "$T/gate.kpt"
expect_error "gate --suite quick of a project recording" "is a recording of suite 'demo', not 'quick'"
echo ok
