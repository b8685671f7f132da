#!/usr/bin/env bash
# test_baseline_project.sh - baseline update/list/show/path and gate --from
# on a project's recordings (issue 40): with kptprof.json in the working
# folder (or --project FILE) they use the project's baselines folder and
# its name as the suite; a bundled suite's recording still goes to the
# default folder; no baseline: the hint says how to make one for a
# project. Also issue 34 item 5: two imported recordings with no date and
# no boot (one session name) are both kept, none replaced.
. "$(dirname "$0")/cli_lib.sh"
need_synth
SYNTH=$KPT_BUILD/kpt-synth
SLUG=nvidia-h100-80gb-hbm3

P=$T/proj
mkdir -p "$P/sub"
cat >"$P/kptprof.json" <<'EOF'
{
  "project": "mylib",
  "baselines": "perf/baselines",
  "workloads": [ { "name": "step", "command": ["true"] } ]
}
EOF
# a project recording: suite = the project's name (as record --project writes it)
"$SYNTH" -o "$T/rec.kpt" --runs 10 --seed 5 --noise 0.5 --suite mylib --meta project="$P/kptprof.json" ||
	fail "kpt-synth"
"$SYNTH" -o "$T/slow.kpt" --runs 10 --seed 5 --noise 0.5 --suite mylib --slow "kpt:::15" || fail "kpt-synth --slow"
"$SYNTH" -o "$T/quick.kpt" --runs 5 --seed 6 --suite quick || fail "kpt-synth quick"
export KPTPROF_BASELINES=$T/bundled

# no baseline yet: gate --from in a subfolder finds the project and says how to make one for it
cd "$P/sub" || fail "cd"
run "$KPTPROF" gate --from "$T/rec.kpt"
expect_error "gate --from without a project baseline" "no baseline for GPU '$SLUG' and suite 'mylib'"
expect_err "$P/perf/baselines/$SLUG/mylib/"
expect_err "kptprof record --project $P/kptprof.json"
expect_err "kptprof baseline update rec.kpt"
grep -q "record --suite" "$T/err" && fail "the project hint names a bundled suite: $(cat "$T/err")"

# update from the project's folder tree: into its baselines folder
run "$KPTPROF" baseline update "$T/rec.kpt"
expect_rc 0 "baseline update of a project recording"
case $(cat "$T/out") in "$P/perf/baselines/$SLUG/mylib/"*.kpt) ;; *) fail "update wrote '$(cat "$T/out")'" ;; esac
[ ! -e "$T/bundled" ] || fail "the project recording went to the default folder"
# a bundled suite's recording goes to the default folder (KPTPROF_BASELINES)
run "$KPTPROF" baseline update "$T/quick.kpt"
expect_rc 0 "baseline update of a bundled recording in a project"
case $(cat "$T/out") in "$T/bundled/$SLUG/quick/"*.kpt) ;; *) fail "bundled update wrote '$(cat "$T/out")'" ;; esac

# list, show and path read the project's folder; show/path default to its suite
run "$KPTPROF" baseline list
expect_rc 0 "baseline list in a project"
expect_out "$P/perf/baselines/$SLUG/mylib/"
grep -q "/bundled/" "$T/out" && fail "list showed the default folder: $(cat "$T/out")"
run "$KPTPROF" baseline show --from "$T/rec.kpt"
expect_rc 0 "baseline show in a project"
expect_out "baseline: $P/perf/baselines/$SLUG/mylib (1 session)"
run "$KPTPROF" baseline path --gpu "$SLUG"
expect_rc 0 "baseline path in a project"
[ "$(cat "$T/out")" = "$P/perf/baselines/$SLUG/mylib" ] || fail "path printed '$(cat "$T/out")'"
# --baselines overrides the project's folder
run "$KPTPROF" baseline path --gpu "$SLUG" --baselines "$T/else"
[ "$(cat "$T/out")" = "$T/else/$SLUG/mylib" ] || fail "path --baselines printed '$(cat "$T/out")'"

# gate --from picks the project's baselines folder and suite
run "$KPTPROF" gate --from "$T/rec.kpt" -q --base-runs 0-4 --new-runs 5-9
expect_rc 0 "gate --from A/A in a project"
expect_err "vs baseline $P/perf/baselines/$SLUG/mylib (1 session)"
run "$KPTPROF" gate --from "$T/slow.kpt" -q --base-runs 0-4 --new-runs 5-9
expect_rc 1 "gate --from with a slowdown in a project"
# a bundled recording is not the project's suite; --suite gates it as before
run "$KPTPROF" gate --from "$T/quick.kpt"
expect_error "gate --from a bundled recording in a project" "is a recording of suite 'quick', not 'mylib'"
run "$KPTPROF" gate --from "$T/quick.kpt" --suite quick -q
expect_rc 0 "gate --from --suite quick in a project"
expect_err "vs baseline $T/bundled/$SLUG/quick (1 session)"

# history add takes the suite from the recording: the project's name
run "$KPTPROF" history add "$T/rec.kpt" --db "$T/h.db"
if [ "$RC" = 0 ]; then
	expect_out "suite mylib"
else
	expect_err "built without" # a build without SQLite
fi

# --project FILE from elsewhere, and a project file that does not load
cd "$T" || fail "cd"
run "$KPTPROF" baseline path --gpu "$SLUG" --project "$P/kptprof.json"
[ "$(cat "$T/out")" = "$P/perf/baselines/$SLUG/mylib" ] || fail "path --project printed '$(cat "$T/out")'"
echo '{ "project": "x", "workloads": [ { "name": "w", "command": ["true"], "tyop": 1 } ] }' >"$T/bad.json"
run "$KPTPROF" baseline list --project "$T/bad.json"
expect_error "a project file with an unknown key" "bad.json"

# issue 34 item 5: imported recordings without a date or a boot share one
# name (undated-<uuid8>.kpt); the second must be added beside the first
"$SYNTH" -o "$T/i1.kpt" --runs 5 --seed 9 --suite imp --meta time= || fail "kpt-synth i1"
"$SYNTH" -o "$T/i2.kpt" --runs 5 --seed 9 --suite imp --meta time= --slow "kpt:::10" || fail "kpt-synth i2"
run "$KPTPROF" baseline update "$T/i1.kpt" --baselines "$T/imp"
expect_rc 0 "update of an undated recording"
first=$(cat "$T/out")
case $first in */undated-*.kpt) ;; *) fail "an undated recording was named '$first'" ;; esac
run "$KPTPROF" baseline update "$T/i2.kpt" --baselines "$T/imp"
expect_rc 0 "update of a second undated recording"
second=$(cat "$T/out")
[ "$first" != "$second" ] || fail "the second undated recording took the first one's name '$first'"
cmp -s "$T/i1.kpt" "$first" || fail "the first session was replaced"
cmp -s "$T/i2.kpt" "$second" || fail "the second session differs"
expect_err "holds 2 sessions"
# the same file again: not added twice, nothing replaced
run "$KPTPROF" baseline update "$T/i2.kpt" --baselines "$T/imp"
expect_rc 0 "update of a file already held"
expect_err "already in the baseline"
[ "$(ls "$T/imp/$SLUG/imp" | wc -l)" = 2 ] || fail "a duplicate was added: $(ls "$T/imp/$SLUG/imp")"
# a new project lists no baselines yet: exit 0 and how to make one
mkdir -p "$T/fresh" && printf '{"project":"fresh","workloads":[{"name":"a","command":["true"]}]}\n' >"$T/fresh/kptprof.json"
run "$KPTPROF" baseline list --project "$T/fresh/kptprof.json"
expect_rc 0 "baseline list in a project with no baselines folder yet"
expect_err "no baselines under"
# an imported trace (no suite) in a project is filed as the project's
if "$KPTPROF" import "$KPT_SRC/tests/data/torch_h200_gemm_before.json.gz" -o "$T/tr.kpt" 2>/dev/null; then
	(cd "$T/fresh" && "$KPTPROF" baseline update "$T/tr.kpt") >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] || { cat "$T/err"; fail "baseline update of an imported trace in a project"; }
	grep -q "filed as project 'fresh'" "$T/err" || { cat "$T/err"; fail "the suite it took is not said"; }
	ls "$T/fresh/baselines/nvidia-h200/fresh/"*.kpt >/dev/null 2>&1 || fail "not in the project's folder"
fi
echo ok
