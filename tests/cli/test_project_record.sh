#!/usr/bin/env bash
# record with a project file (kptprof.json, docs/projects.md) and no GPU:
# a stand-in collector (KPTPROF_SKIP_GPU_CHECK) and workloads whose
# program plays the collector's part (copies a kpt-testrec recording to
# KPT_OUTPUT). Run i of every workload is run i of one recording, each
# workload's kernels under its root range; meta suite/project/workloads/
# step_ranges; warm-up runs not kept; env, cwd and the window reach the
# program; a timeout kills a hanging workload with a one-line note; bad
# project files and unknown names are one-line errors, exit 2.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_testrec
need_python
"$KPT_BUILD/kpt-testrec" "$T/p.kpt" || fail "kpt-testrec"
: >"$T/libkptinject.so"
export FAKE_DIR=$T KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1
P=$T/proj
mkdir -p "$P/sub/deeper"
cat >"$P/fake.sh" <<'SH'
#!/bin/bash
# one process of workload $1: says what it got, writes its recording
echo "$1 ${KPT_OUTPUT##*/} $PWD tag=${FAKE_TAG:-} cap=${KPT_CAPTURE_RANGE:-} steps=${KPT_STEPS:-}" >>"$FAKE_DIR/log"
cp "$FAKE_DIR/p.kpt" "${KPT_OUTPUT//%p/$$}"
SH
chmod +x "$P/fake.sh"
cat >"$P/kptprof.json" <<'JSON'
{
  "project": "demo",
  "runs": 2,
  "workloads": [
    { "name": "alpha", "command": ["./fake.sh", "alpha"], "env": { "FAKE_TAG": "a1" },
      "capture": { "nvtx": "work", "steps": "0-1" }, "warmup": 1 },
    { "name": "beta", "command": ["../fake.sh", "beta"], "cwd": "sub" },
    { "name": "hang", "command": ["sleep", "30"], "timeout": "1s" }
  ]
}
JSON

# --workload names of the project, from a folder below it (found walking up)
cd "$P/sub/deeper" || fail "cd"
run "$KPTPROF" record --workload alpha beta -o "$T/ab.kpt"
expect_rc 0 "record --workload alpha beta"
[ "$(grep -c '^alpha w' "$T/log")" = 1 ] || fail "one warm-up run of alpha: $(cat "$T/log")"
[ "$(grep -c '^alpha r' "$T/log")" = 2 ] || fail "two runs of alpha: $(cat "$T/log")"
[ "$(grep -c '^beta r' "$T/log")" = 2 ] || fail "two runs of beta: $(cat "$T/log")"
grep -q '^beta w' "$T/log" && fail "beta has no warm-up: $(cat "$T/log")"
grep -q "^alpha r00000-w000-p.* $P tag=a1 cap=nvtx:work steps=0-1" "$T/log" ||
	fail "alpha's env, cwd and window: $(cat "$T/log")"
grep -q "^beta r00001-w001-p.* $P/sub tag= cap=" "$T/log" || fail "beta's cwd: $(cat "$T/log")"
# the order: run 0 of alpha, of beta, then run 1 of each
[ "$(cut -d' ' -f1,2 "$T/log" | cut -c1-12 | tr '\n' ' ')" = "alpha w00000 alpha r00000 beta r00000- alpha r00001 beta r00001- " ] ||
	fail "run order: $(cut -d' ' -f1,2 "$T/log")"
run "$KPTPROF" report "$T/ab.kpt" --by range --format json
expect_rc 0 "report --by range"
python3 - "$T/out" "$T/p.kpt" <<'PY' || fail "the merged recording: $(head -c 2000 "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
meta = j["meta"]
assert meta["suite"] == "demo", meta
assert meta["project"].endswith("/proj/kptprof.json"), meta
assert meta["workloads"] == "alpha,beta", meta
assert meta["step_ranges"] == "alpha/work", meta
assert meta["runs"] == "2", meta
assert meta["exit_status"] == "0,0", meta
assert "alpha" in meta["window"] and "work" in meta["window"], meta
paths = {r["path"]: r["instances"] for r in j["ranges"]}
# every kernel under a workload's root: none outside a range
assert "" not in paths, paths
for w in ("alpha", "beta"):
    assert w in paths, paths                     # its kernels outside any range of their own
    assert w + "/work/launch" in paths, paths    # the recording's own ranges beneath the root
# the two workloads keep apart keys and the same counts
for p in [p for p in paths if p.startswith("alpha")]:
    assert paths["beta" + p[5:]] == paths[p], (p, paths)
PY
run "$KPTPROF" export "$T/ab.kpt" --format csv -o "$T/ab.csv"
expect_rc 0 "export"

# a timeout kills a hanging workload: a one-line note, its status 137
: >"$T/log"
start=$(date +%s)
run "$KPTPROF" record --project "$P/kptprof.json" --workload alpha hang --runs 1 -o "$T/hang.kpt"
[ $(($(date +%s) - start)) -lt 20 ] || fail "the timeout did not stop 'sleep 30'"
expect_rc 137 "record with a hanging workload"
[ "$(grep -c "killed after its timeout" "$T/err")" = 1 ] || fail "one note per killed run: $(cat "$T/err")"
expect_err "workload 'hang' run 0: killed after its timeout of 1 s"
[ -s "$T/hang.kpt" ] || fail "alpha's run was not kept"

# in the project's folder without names: all workloads, PROJECT.kpt there
sed -i 's/"timeout": "1s"/"timeout": 0.5/' "$P/kptprof.json"
cd "$P" || fail "cd"
run "$KPTPROF" record
expect_rc 137 "record (all workloads)"
[ -s "$P/demo.kpt" ] || fail "record without -o in a project writes demo.kpt: $(ls "$P")"
"$KPTPROF" report "$P/demo.kpt" --format json >"$T/all.json" || fail "report demo.kpt"
grep -q '"workloads": *"alpha,beta,hang"' "$T/all.json" || fail "all three recorded: $(grep workloads "$T/all.json")"
grep -q '"runs": *"2"' "$T/all.json" || fail "the project's runs: $(grep '"runs"' "$T/all.json")"

# gate's hint for a missing baseline of a project's suite names the project file
run "$KPTPROF" gate --from "$P/demo.kpt" --suite demo --baselines "$T/nob"
expect_rc 2 "gate without a baseline"
expect_err "make one with 'kptprof record --project "
expect_err "/proj/kptprof.json --runs 5 -o rec.kpt'"

# names: neither the project's nor built in -> one line listing its workloads
run "$KPTPROF" record --workload nope -o "$T/n.kpt"
expect_error "unknown workload" "no workload 'nope' in project 'demo'"
expect_err "alpha, beta, hang"
run "$KPTPROF" record --workload alpha nope -o "$T/n.kpt"
expect_error "one unknown workload" "'nope'"
[ ! -e "$T/n.kpt" ] || fail "an unknown name still recorded"
run "$KPTPROF" record --project "$P/kptprof.json" --suite quick
expect_error "--project with --suite" "not with '--suite'"
run "$KPTPROF" record --iterations 3
expect_error "runner options with a project" "apply to built-in suites and workloads"
run "$KPTPROF" record --steps 1-2
expect_error "window options with a project" "\"capture\""

# --suite goes through the project path as the bundled suite: the runner's
# command, suite meta, no project keys and no root range (here a stand-in
# runner: --list --tsv names one workload, a run writes the recording)
cat >"$T/kpt-workloads" <<'SH'
#!/bin/bash
if [ "$1" = --list ]; then printf 'w.one\tfam\t100\t200\n'; exit 0; fi
echo "runner $*" >>"$FAKE_DIR/log"
cp "$FAKE_DIR/p.kpt" "${KPT_OUTPUT//%p/$$}"
SH
chmod +x "$T/kpt-workloads"
: >"$T/log"
run env KPTPROF_WORKLOADS="$T/kpt-workloads" "$KPTPROF" record --suite quick --runs 2 -o "$T/q.kpt"
expect_rc 0 "record --suite quick"
[ "$(grep -c '^runner --settle-us 3000 --suite quick$' "$T/log")" = 2 ] || fail "the runner's runs: $(cat "$T/log")"
run "$KPTPROF" report "$T/q.kpt" --by range --format json
python3 - "$T/out" <<'PY' || fail "the suite's recording: $(head -c 1500 "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
meta = j["meta"]
assert meta["suite"] == "quick" and meta["settle_us"] == "3000" and meta["runs"] == "2", meta
assert meta["command"].endswith("kpt-workloads --settle-us 3000 --suite quick"), meta
assert meta["workload.w.one.flops"] == "100", meta
assert not {"project", "workloads", "step_ranges"} & set(meta), meta
assert "" in {r["path"] for r in j["ranges"]}, j["ranges"]   # no root range
PY

# bad project files: exit 2, one line FILE:LINE: KEY: problem, nothing run
cd "$T" || fail "cd"
: >"$T/log"
bad() {
	printf '%s' "$2" >"$T/bad.json"
	run "$KPTPROF" record --project "$T/bad.json" -o "$T/bad.kpt"
	expect_error "bad project: $1" "$T/bad.json:$1"
	[ ! -s "$T/log" ] || fail "a bad project file ran a workload"
	[ ! -e "$T/bad.kpt" ] || fail "a bad project file wrote a recording"
}
bad "4: workloads[0].command: expected an array of strings" \
	'{ "project": "x",
  "workloads": [
    { "name": "a",
      "command": "fake.sh" } ] }'
bad "3: workloads[0].timout: unknown key (did you mean 'timeout'?)" \
	'{ "project": "x", "workloads": [
  { "name": "a", "command": ["true"],
    "timout": 3 } ] }'
bad "2: workloads[0].capture: give one of 'steps' and 'every'" \
	'{ "project": "x", "workloads": [ { "name": "a", "command": ["true"],
 "capture": { "nvtx": "s", "steps": "1-2", "every": 2 } } ] }'
bad "3: workloads[1].name: duplicate workload name 'a'" \
	'{ "project": "x", "workloads": [ { "name": "a", "command": ["true"] },
{ "command": ["true"],
  "name": "a" } ] }'
bad "1: (top level): bad JSON" '{ "project": "x",,
 "workloads": [] }'
run "$KPTPROF" record --project "$T/none.json"
expect_error "missing project file" "cannot read '$T/none.json'"
exit 0
