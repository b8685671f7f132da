#!/bin/bash
# The main-branch loop of docs/history.md ("The main-branch loop"): every
# run on main adds its recording to the store (`history add --branch
# main`), and a pull request's `gate --db --baseline-sessions N` takes the
# newest N main sessions of its GPU model. Six main runs are simulated with
# six committed H200 sessions added one by one, a pull request's recording
# being a seventh host's session (never added): the baseline grows 1, 2, 3,
# 4, then stays the newest 4; the table is the one the folder of exactly
# those 4 sessions gives (not the oldest 4); with fewer than 2 sessions, or
# none of this GPU model, the gate exits 2 with one line and a hint that
# says how the store grows; a pull request's own sessions (another branch)
# never enter main's baseline; one runner's sessions gate that runner's
# recording as the same machine.
. "$KPT_SRC/tests/cli/cli_lib.sh"
DB="$T/main.db"
"$KPTPROF" history ls --db "$DB" 2>&1 | grep -q "built without SQLite" && skip "kptprof is built without SQLite"
H200="$KPT_SRC/baselines/nvidia-h200/default"
S=("$H200"/*.kpt) # in name order: oldest first
[ "${#S[@]}" -ge 7 ] || fail "expected 7 or more H200 sessions in $H200, found ${#S[@]}"
# the second newest host: never a main run here (the newest, GPU-9732616b,
# is the odd host of docs/decision-rule.md: its memset is SLOW against any
# few of the others, a real verdict this test is not about)
PR=${S[${#S[@]}-2]}
N=4
SLUG=nvidia-h200

# a main run on another GPU model first: the store exists, the H200 has none
H100=("$KPT_SRC"/baselines/nvidia-h100-80gb-hbm3/default/*.kpt)
run "$KPTPROF" history add "${H100[0]}" --db "$DB" --branch main --commit h100-1
expect_rc 0 "the H100 main run"
run "$KPTPROF" gate --from "$PR" --db "$DB" --baseline-sessions $N
expect_error "gate --db, no session of this GPU model" "no sessions of suite 'default' on GPU '$SLUG', branch 'main'"
grep -qF "hint: each run of branch 'main' on this GPU model adds its recording ('kptprof history add rec.kpt --db $DB --branch main')" "$T/err" ||
	fail "no hint on how the store grows: $(cat "$T/err")"

for k in 1 2 3 4 5 6; do
	run "$KPTPROF" history add "${S[$((k - 1))]}" --db "$DB" --branch main --commit "c$k"
	expect_rc 0 "main run $k"
	# a pull request's own recording on its branch: never main's baseline
	run "$KPTPROF" history add "$PR" --db "$DB" --branch pr-7 --commit "p$k"
	expect_rc 0 "pull request run $k"
	run "$KPTPROF" history ls --db "$DB" --gpu $SLUG --branch main
	[ "$(grep -c " main " "$T/out")" = "$k" ] || fail "after $k main runs: $(cat "$T/out")"
	run "$KPTPROF" gate --from "$PR" --db "$DB" --baseline-sessions $N
	if [ $k = 1 ]; then
		expect_error "gate --db after one main run" "holds 1 session of suite 'default' on GPU '$SLUG', branch 'main'"
		expect_err "hint: the next run of branch 'main' on this GPU model adds one"
		continue
	fi
	expect_rc 0 "gate --db after $k main runs (an unchanged host)"
	used=$((k < N ? k : N))
	first=$((k - used + 1))
	expect_err "baseline from history store '$DB' (sqlite): branch 'main', the last $used sessions of suite 'default' on $SLUG, commits c$first..c$k"
	expect_out "base: history:$DB@main (NVIDIA H200, $used sessions, $((5 * used)) runs)"
	expect_out "no regression"
done

# the newest 4 are exactly the folder of sessions 3-6, and not of 1-4
cp "$T/out" "$T/db.out"
for set in "newest 2 3 4 5" "oldest 0 1 2 3"; do
	read -r name a b c d <<<"$set"
	mkdir -p "$T/$name/$SLUG/default"
	for j in $a $b $c $d; do ln -s "${S[$j]}" "$T/$name/$SLUG/default/"; done
	run "$KPTPROF" gate --from "$PR" --baselines "$T/$name"
	expect_rc 0 "the folder of the $name 4"
	cp "$T/out" "$T/$name.out"
done
diff <(tail -n +2 "$T/db.out") <(tail -n +2 "$T/newest.out") >"$T/d" ||
	fail "gate --db differs from the folder of the newest 4 main sessions: $(head -c 1500 "$T/d")"
cmp -s <(tail -n +2 "$T/db.out") <(tail -n +2 "$T/oldest.out") &&
	fail "the newest 4 and the oldest 4 give one table: this test cannot tell which were used"

# a pull request's branch can be gated against itself only by asking
run "$KPTPROF" gate --from "$PR" --db "$DB" --baseline-sessions $N --branch pr-7
expect_rc 0 "gate --db --branch pr-7"
expect_err "branch 'pr-7', the last 4 sessions of suite 'default' on $SLUG, commits p3..p6"

# one runner: main's sessions all of one GPU and boot, the pull request
# recorded there too: compared with them alone, no between-machine part
ONE="$KPT_DATA/heldout_h100_s11.kpt"
for c in r1 r2 r3; do
	run "$KPTPROF" history add "$ONE" --db "$T/one.db" --branch main --commit "$c"
	expect_rc 0 "one-runner main run $c"
done
run "$KPTPROF" gate --from "$ONE" --db "$T/one.db" --baseline-sessions $N
expect_rc 0 "gate --db on one runner"
expect_out "same GPU (UUID) and boot as 3 of the base's 3 sessions: compared with them alone, no between-machine part"
echo "ok: the main-branch loop"
exit 0
