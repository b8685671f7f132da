#!/usr/bin/env bash
# gate's extra rounds through the recorder (the GPU path), no GPU: a
# stand-in collector (KPTPROF_SKIP_GPU_CHECK) and a project whose workloads
# write one kpt-synth run each, the same kernels with fresh durations
# (alpha noisy, beta quiet). Only the workload that owns AMBG keys is
# recorded again; --resolve-time caps the rounds.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
need_python
: >"$T/libkptinject.so"
export FAKE_DIR=$T KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1
export SYNTH=$KPT_BUILD/kpt-synth
P=$T/proj
mkdir -p "$P"
cat >"$P/fake.sh" <<'SH'
#!/bin/bash
echo "$1" >>"$FAKE_DIR/log"
# a fresh draw per run, the same in every test run
echo x >>"$FAKE_DIR/draws"
[ "$1" = alpha ] && n=1.5 || n=0.1
"$SYNTH" --runs 1 --iterations 10 --names 8 --suite demo --seed 2 --meta boot_id=b1 --noise $n \
	--machine "$n:$(wc -l <"$FAKE_DIR/draws")" -o "${KPT_OUTPUT//%p/$$}"
SH
chmod +x "$P/fake.sh"
cat >"$P/kptprof.json" <<'JSON'
{ "project": "demo", "baselines": "bl", "runs": 3,
  "workloads": [ { "name": "alpha", "command": ["./fake.sh", "alpha"] },
                 { "name": "beta", "command": ["./fake.sh", "beta"] } ] }
JSON
cd "$P" || fail "cd"
run "$KPTPROF" record --runs 6 -o "$T/base.kpt"
expect_rc 0 "record of the project's baseline"
run "$KPTPROF" baseline update "$T/base.kpt"
expect_rc 0 "baseline update"

: >"$T/log"
run "$KPTPROF" gate --runs 3 --resolve-time 600 --json "$T/g.json"
expect_rc 0 "gate with extra rounds"
expect_err "more runs of alpha (round 1 of 2)"
! grep -q "more runs of beta\|other workload" "$T/err" || fail "beta re-recorded: $(cat "$T/err")"
python3 - "$T/g.json" "$T/log" <<'PY' || fail "extra rounds through the recorder: $(cat "$T/err")"
import json, sys
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read().split()
rs = d["resolve"]
assert rs["keys_ambg_run_noise_initial"] > 0 and 1 <= rs["rounds"] <= 2, rs
assert rs["extra_wall_s"] > 0 and rs["first_wall_s"] > 0, rs
# the first recording: 3 runs of each; then alpha alone, extra_runs more
assert log.count("beta") == 3, log
assert log.count("alpha") == 3 + rs["extra_runs"], (log, rs)
assert all(r["workload"] == "alpha" for r in d["keys"] if r.get("settled_round")), "a settled key outside alpha"
PY

# no time for even 2 more runs: nothing recorded again
: >"$T/log"
run "$KPTPROF" gate --runs 3 --resolve-time 0 --json "$T/g0.json"
expect_rc 0 "gate with --resolve-time 0"
expect_err "resolve budget"
[ "$(grep -c alpha "$T/log")" = 3 ] || fail "--resolve-time 0 recorded again: $(cat "$T/log")"
echo ok
