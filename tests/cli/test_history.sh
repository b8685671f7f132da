#!/bin/bash
# kptprof history on real recordings: add (SQLite; PostgreSQL too when
# $KPT_TEST_PG_URL names a server, as .ci/run does), ls, show, plot, detect
# and its exit status, and the one-line errors that write nothing.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
CAND="$KPT_DATA/default_h100_candidate.kpt"
# a main branch on a pool of runners: four sessions of unchanged code on four
# H100s, then four recordings with memory.copy.128MiB +5% and
# memory.triad.f32.64M +2% planted (real extra work) on four other H100s
B="$KPT_SRC/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default"
P="$KPT_DATA"
HIST=("$B/20261124T005340Z-b9fe4863.kpt" "$B/20261124T005437Z-1407405e.kpt" "$B/20261124T005530Z-4de2c7e9.kpt"
      "$B/20261124T005623Z-bde96824.kpt" "$P/history_plant_h100_05.kpt" "$P/history_plant_h100_06.kpt" "$P/history_plant_h100_07.kpt"
      "$P/history_plant_h100_08.kpt")
DB="$T/h.db"
"$KPTPROF" history ls --db "$DB" 2>&1 | grep -q "built without SQLite" && skip "kptprof is built without SQLite"

run "$KPTPROF" history ls --db "$DB"
expect_error "ls on no store" "no history store at '$DB'"
[ ! -e "$DB" ] || fail "ls made a store"

run "$KPTPROF" history add "$T/missing.kpt" --db "$DB"
expect_error "add a missing file" "missing.kpt"
head -c 5000 "$CAND" >"$T/cut.kpt"
run "$KPTPROF" history add "$T/cut.kpt" --db "$DB"
expect_error "add a truncated file" "cut.kpt"
[ ! -e "$DB" ] || fail "a failed add made a store"
run "$KPTPROF" history add "$CAND" --db "$T/no/such/dir/h.db"
expect_error "add into a folder that cannot be made" "no/such/dir"

i=0
for f in "${HIST[@]}"; do
	i=$((i + 1))
	run "$KPTPROF" history add "$f" --db "$DB" --commit "c$i" --suite default --label "n=$i"
	expect_rc 0 "add $f"
	expect_out "added session $i to '$DB' (sqlite)"
	if [ $i = 4 ]; then
		run "$KPTPROF" history detect --db "$DB"
		expect_rc 0 "detect before the step"
		expect_out "no change points"
	fi
done
run "$KPTPROF" history ls --db "$DB"
expect_rc 0 "ls"
[ "$(grep -c ' c[1-8] ' "$T/out")" = 8 ] || fail "ls does not list 8 sessions: $(cat "$T/out")"
expect_out "n=8"
run "$KPTPROF" history ls --db "$DB" --format json
expect_rc 0 "ls json"
python3 - "$T/out" <<'PY' || fail "ls json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == 3 and j["store"] == "sqlite"
s = j["sessions"]
assert [x["commit"] for x in s] == ["c%d" % i for i in range(1, 9)], s
assert s[0]["gpu_uuid"].startswith("GPU-b9fe4863") and s[0]["runs"] == 10 and s[7]["runs"] == 5
assert len(set(x["gpu_uuid"] for x in s)) == 8
assert s[7]["labels"] == {"n": "8"}
PY

KPTPROF_DB="$DB" run "$KPTPROF" history detect
expect_rc 1 "detect with a step at the head (KPTPROF_DB)"
expect_out "REGRESSION"
expect_out "workload memory.copy.128MiB"
grep -q "c5  *c4 .* 4/4  REGRESSION .*workload memory.copy.128MiB" "$T/out" ||
	fail "the copy step is not at c5 carried by 4 of 4 machines: $(cat "$T/out")"
run "$KPTPROF" history detect --db "$DB" --head 2
expect_rc 0 "detect with the step older than the head"
run "$KPTPROF" history detect --db "$DB" --format json
expect_rc 1 "detect json"
python3 - "$T/out" <<'PY' || fail "detect json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["result"] == "regression" and j["head_regressions"] >= 1
cps = [c for g in j["groups"] for c in g["change_points"]]
assert j["min_machines"] == 3 and j["groups"][0]["machines"] == 8, j
for w, lo, hi in (("memory.copy.128MiB", 3, 7), ("memory.triad.f32.64M", 1.2, 3)):
    found = [c for c in cps if c["key"]["workload"] == w and c["regression"]]
    assert found, (w, cps)
    for c in found:
        assert c["commit"] == "c5" and c["previous_commit"] == "c4", c
        assert lo < c["step_pct"] < hi and c["confidence"] > 0.999, c
        assert c["machines"] == 4 and c["machines_after"] == 4, c
# nothing else moved: every change point is on a planted workload
assert all(c["key"]["workload"] in ("memory.copy.128MiB", "memory.triad.f32.64M") for c in cps), cps
PY
# one machine is not a step: the same four sessions, then the planted
# recording of one H100 three times
DB1="$T/one.db"
i=0
for f in "${HIST[@]:0:4}" "$P/history_plant_h100_05.kpt" "$P/history_plant_h100_05.kpt" "$P/history_plant_h100_05.kpt"; do
	i=$((i + 1))
	run "$KPTPROF" history add "$f" --db "$DB1" --commit "c$i" --suite default
	expect_rc 0 "add $f"
done
run "$KPTPROF" history detect --db "$DB1"
expect_rc 0 "detect with the plants of one machine"
expect_out "no change points"
expect_out "not carried by 3 or more of the 5 machines: not reported"
run "$KPTPROF" history detect --db "$DB1" --min-machines 1
expect_rc 1 "detect --min-machines 1 takes one machine's word"
expect_out "1/1  REGRESSION"

# show: by name part (ambiguous: lists), by number, json
run "$KPTPROF" history show copy_vec --db "$DB"
expect_rc 2 "show an ambiguous name"
expect_err "more than one kernel key"
id=$(sed -n 's/^ *\([0-9]*\): copy_vec.*memory.copy.128MiB.*/\1/p' "$T/err" | head -n1)
[ -n "$id" ] || fail "no copy_vec key of memory.copy.128MiB listed: $(cat "$T/err")"
run "$KPTPROF" history show "$id" --db "$DB"
expect_rc 0 "show KEY"
expect_out "key $id: copy_vec"
expect_out "suite default, GPU nvidia-h100-80gb-hbm3, branch main"
run "$KPTPROF" history show --workload memory.copy.128MiB --db "$DB" --format json
expect_rc 0 "show --workload json"
python3 - "$T/out" <<'PY' || fail "show json"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["points"]
assert [x["commit"] for x in p] == ["c%d" % i for i in range(1, 9)]
assert p[4]["centre_ns"] / p[3]["centre_ns"] > 1.03, p
assert j["change_points"] and j["change_points"][0]["commit"] == "c5"
PY
run "$KPTPROF" history show no_such_kernel --db "$DB"
expect_error "show an unknown key" "no kernel key"

# plot: a PNG, the step marked
run "$KPTPROF" history plot --workload memory.copy.128MiB --db "$DB" -o "$T/plots"
expect_rc 0 "plot"
grep -q "at c5" "$T/plots/history-memory.copy.128MiB.gp" || fail "plot does not mark the step at c5"
grep -q "noise band" "$T/plots/history-memory.copy.128MiB.gp" || fail "plot has no noise band"
if command -v gnuplot >/dev/null; then
	head -c 8 "$T/plots/history-memory.copy.128MiB.png" | od -An -c | grep -q 'P   N   G' || fail "no PNG"
fi

# option errors
run "$KPTPROF" history frob
expect_error "unknown subcommand" "unknown verb 'frob'"
run "$KPTPROF" history add "$CAND" --db "$DB" --label novalue
expect_error "bad label" "KEY=VALUE"
run "$KPTPROF" history ls --db "$DB" --threshold 3
expect_error "option of another subcommand" "takes no --threshold"
run "$KPTPROF" history detect --db "$DB" --alpha 2
expect_error "bad alpha" "--alpha"
run "$KPTPROF" history add "$CAND" --db "postgresql://[oops"
expect_error "bad URL" "bad PostgreSQL URL"
run "$KPTPROF" history --help
expect_rc 0 "help"
# (--help, man and completion against the option table: test_help_options.sh)
grep -q -- "^  --min-machines N " "$T/out" || fail "history --help lacks --min-machines: $(cat "$T/out")"
"$KPTPROF" help history >"$T/help2" && cmp -s "$T/out" "$T/help2" || fail "help history differs from history --help"

[ -n "${KPT_TEST_PG_URL:-}" ] || { echo "KPT_TEST_PG_URL not set: PostgreSQL part skipped"; exit 0; }
command -v psql >/dev/null || fail "KPT_TEST_PG_URL is set but psql is missing"
db="kpt_cli_$$"
psql -q "$KPT_TEST_PG_URL" -c "CREATE DATABASE $db" || fail "cannot create database $db"
PG="${KPT_TEST_PG_URL%/*}/$db"
i=0
for f in "${HIST[@]}"; do
	i=$((i + 1))
	run "$KPTPROF" history add "$f" --db "$PG" --commit "c$i" --suite default
	expect_rc 0 "add $f to PostgreSQL"
	expect_out "(postgresql)"
	expect_no_out "${PG#*//kpt:}" # no password
done
run "$KPTPROF" history detect --db "$PG" --format json
expect_rc 1 "detect on PostgreSQL"
cp "$T/out" "$T/pg.json"
run "$KPTPROF" history detect --db "$DB" --format json
python3 - "$T/out" "$T/pg.json" <<'PY' || fail "SQLite and PostgreSQL detect differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
strip = lambda j: [(c["key"]["name"], c["commit"], round(c["step_pct"], 6)) for g in j["groups"] for c in g["change_points"]]
assert strip(a) == strip(b), (strip(a), strip(b))
PY
hostport=${KPT_TEST_PG_URL#*@}
run "$KPTPROF" history add "$CAND" --db "postgresql://kpt:wrong-pw@$hostport"
expect_error "wrong password" "password authentication failed"
grep -q "wrong-pw" "$T/err" && fail "the password is in the message"
run "$KPTPROF" history add "$CAND" --db "postgresql://kpt:x@127.0.0.1:1/$db"
expect_error "server down" "Connection refused"
n=$(psql -Atq "$PG" -c "SELECT count(*) FROM sessions") || fail "psql count"
[ "$n" = 8 ] || fail "failed adds wrote to the store: $n sessions"
psql -q "$KPT_TEST_PG_URL" -c "DROP DATABASE $db" || fail "drop $db"
