#!/bin/bash
# kptprof gate --db and view --db on real recordings: the store's baseline
# (the last N sessions of suite, GPU model and branch) gives the verdicts
# the same sessions give as a baseline folder, the exit statuses of the
# gate, one-line errors that write nothing (exit 2), and the HTML report
# carries a SLOW key's history. PostgreSQL too when $KPT_TEST_PG_URL is set.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
SLUG=nvidia-h100-80gb-hbm3
SESS="$KPT_SRC/tests/data/baselines-20261124/$SLUG/default" # the baseline until 2026-11-26, whose code the recordings below ran
PLANT="$KPT_DATA/heldout_h100_plant.kpt" # memory.copy.128MiB +5%, memory.triad.f32.64M +2%
CAND="$KPT_DATA/default_h100_candidate.kpt"
DB="$T/h.db"
"$KPTPROF" history ls --db "$DB" 2>&1 | grep -q "built without SQLite" && skip "kptprof is built without SQLite"

# fill URL: every session of that H100 baseline into the store
# URL, in file order, as commits c01, c02, ...; sets i to their number
fill() {
	i=0
	for f in "$SESS"/*.kpt; do
		i=$((i + 1))
		run "$KPTPROF" history add "$f" --db "$1" --commit "$(printf c%02d $i)" --suite default
		expect_rc 0 "add $f to $1"
	done
}
fill "$DB"
[ $i -ge 12 ] || fail "expected 12 or more baseline sessions, found $i"
# the equivalent folder: the last 10 sessions (gate --db's default)
mkdir -p "$T/bl/$SLUG/default"
ls "$SESS"/*.kpt | tail -n 10 | while read -r f; do ln -s "$f" "$T/bl/$SLUG/default/"; done

# same verdicts and table as the folder, the baseline named on stderr
for new in "$PLANT" "$CAND"; do
	run "$KPTPROF" gate --from "$new" --suite default --db "$DB"
	rc_db=$RC
	cp "$T/out" "$T/db.out"
	cp "$T/err" "$T/db.err"
	run "$KPTPROF" gate --from "$new" --suite default --baselines "$T/bl"
	[ "$RC" = "$rc_db" ] || fail "gate --db exit $rc_db, folder gate $RC ($new)"
	expect_rc "$rc_db" "folder gate"
	head -n1 "$T/db.out" | grep -qF "base: history:$DB@main (NVIDIA H100 80GB HBM3, 10 sessions," ||
		fail "gate --db base line: $(head -n1 "$T/db.out")"
	diff <(tail -n +2 "$T/db.out") <(tail -n +2 "$T/out") >"$T/d" || fail "gate --db and the folder differ: $(head -c 1500 "$T/d")"
	grep -qF "baseline from history store '$DB' (sqlite): branch 'main', the last 10 sessions of suite 'default' on $SLUG, commits c$(printf %02d $((i - 9)))..c$(printf %02d $i)" "$T/db.err" ||
		fail "gate --db does not say where its baseline came from: $(cat "$T/db.err")"
done
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB"
expect_rc 1 "gate --db on the planted recording"
expect_out "2 SLOW"
expect_out "REGRESSION"
run "$KPTPROF" gate --from "$CAND" --db "$DB"
expect_rc 0 "gate --db on the candidate"
expect_out "no regression"
# every session, JSON verdicts against the whole folder
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --baseline-sessions 1000 --json "$T/db.json" --quiet
expect_rc 1 "gate --db --baseline-sessions 1000"
run "$KPTPROF" gate --from "$PLANT" --suite default --baselines "$KPT_SRC/tests/data/baselines-20261124" --json "$T/f.json" --quiet
expect_rc 1 "folder gate, every session"
python3 - "$T/db.json" "$T/f.json" <<'PY' || fail "gate --db json verdicts differ from the folder's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda r: (r["name"], r["path"], r["ordinal"], str(r["grid"]), str(r["block"]))
num = lambda x: round(x, 6) if isinstance(x, float) else x
val = lambda r: tuple(num(r[f]) for f in ("verdict", "mangled", "change_pct", "noise_pct", "within_pct",
                                          "between_pct", "cycles_change_pct", "base_samples", "base_dropped"))
va = {key(r): val(r) for r in a["keys"]}
vb = {key(r): val(r) for r in b["keys"]}
assert va == vb, [(k, va[k], vb.get(k)) for k in va if va[k] != vb.get(k)][:3]
assert a["counts"] == b["counts"]
assert a["model"]["base_sessions"] == b["model"]["base_sessions"] >= 12
PY

# errors: one line, nothing on stdout, exit 2, no store made
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$T/none.db"
expect_error "gate --db on no store" "no history store at '$T/none.db'"
[ ! -e "$T/none.db" ] || fail "gate --db made a store"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --branch dev
expect_error "gate --db, no sessions of the branch" "no sessions of suite 'default' on GPU '$SLUG', branch 'dev'"
run "$KPTPROF" gate --from "$PLANT" --db "$DB" --suite quick
expect_error "gate --db, another suite" "no sessions of suite 'quick'"
run "$KPTPROF" history add "$SESS/$(ls "$SESS" | head -n1)" --db "$T/one.db" --suite default --branch b1
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$T/one.db" --branch b1
expect_error "gate --db, one session" "holds 1 session of suite 'default' on GPU '$SLUG', branch 'b1' with 2 runs or more in the last 1: the noise model needs at least 2"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --baseline-sessions 1
expect_error "gate --db --baseline-sessions 1" "--baseline-sessions"
run "$KPTPROF" gate --from "$PLANT" --suite default --branch main
expect_error "gate --branch without --db" "give --db too"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --baselines "$T/bl"
expect_error "gate --db and --baselines" "two baselines"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --paired
expect_error "gate --db --paired" "not with --db"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "postgresql://kpt:secret@127.0.0.1:1/kpt"
expect_error "gate --db on an unreachable server" "cannot connect to history store"
grep -q secret "$T/err" && fail "the password was shown: $(cat "$T/err")"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$DB" --branch dev --json "$T/err.json"
expect_rc 2 "gate --db error with --json"
grep -q '"result": "error"' "$T/err.json" || fail "gate --db error: no error JSON"

# view --db: the SLOW keys' history, with its change point, in the report
for c in p1 p2 p3; do
	run "$KPTPROF" history add "$PLANT" --db "$DB" --commit "$c" --suite default
	expect_rc 0 "add $PLANT"
done
run "$KPTPROF" view "$PLANT" --baseline "$SESS" --db "$DB" --suite default -o "$T/v" --no-gnuplot
expect_rc 0 "view --db"
python3 - "$T/v/index.html" <<'PY' || fail "view --db history"
import re, sys
s = open(sys.argv[1]).read()
i = s.index('id="history"')
h = s[i:]
assert "http://" not in h and "https://" not in h.replace("http://www.w3.org", "")
blocks = h.split('<div class="hist">')[1:]
copy = [b for b in blocks if "copy_vec" in b and "memory.copy.128MiB" in b]
assert copy and ">SLOW<" in copy[0], blocks[:1]
b = copy[0]
assert "<svg" in b and "<polyline" in b, b[:500]
for c in ["c01", "c13", "p1", "p3"]:
    assert "<code>%s</code>" % c in b, c
assert "change point +" in b, b[:2000]
PY
# without --baseline: the store's baseline (now the last 10: 7 sessions and 3 plants)
run "$KPTPROF" view "$PLANT" --db "$DB" --suite default -o "$T/v2" --no-gnuplot
expect_rc 0 "view --db without --baseline"
expect_err "vs baseline: no regression"
grep -qF "history:$DB@main" "$T/v2/index.html" || fail "view --db does not name the stored baseline"
run "$KPTPROF" view "$PLANT" --db "$T/none.db" -o "$T/v3"
expect_error "view --db on no store" "no history store"
[ ! -e "$T/v3" ] || fail "a failed view wrote its folder"

[ -n "${KPT_TEST_PG_URL:-}" ] || { echo "KPT_TEST_PG_URL not set: PostgreSQL part skipped"; exit 0; }
command -v psql >/dev/null || fail "KPT_TEST_PG_URL is set but psql is missing"
db="kpt_gate_$$"
psql -q "$KPT_TEST_PG_URL" -c "CREATE DATABASE $db" || fail "cannot create database $db"
PG="${KPT_TEST_PG_URL%/*}/$db"
fill "$PG"
run "$KPTPROF" gate --from "$PLANT" --suite default --db "$PG"
expect_rc 1 "gate --db on PostgreSQL"
cp "$T/out" "$T/pg.out"
run "$KPTPROF" gate --from "$PLANT" --suite default --baselines "$T/bl"
diff <(tail -n +2 "$T/pg.out") <(tail -n +2 "$T/out") >"$T/d" || fail "gate --db on PostgreSQL and the folder differ: $(head -c 1500 "$T/d")"
psql -q "$KPT_TEST_PG_URL" -c "DROP DATABASE $db" || fail "drop $db"
