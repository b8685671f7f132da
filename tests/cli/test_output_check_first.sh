#!/bin/bash
# A report path that cannot be written fails before anything is computed or
# printed: diff --json/--markdown/--junit, gate --from, ab and export -o into /proc (a
# folder that takes no new file, although access(2) says yes to root) are
# one line on stderr, nothing on stdout, exit 2; the check leaves no
# temporary behind where the write then succeeds.
. "$KPT_SRC/tests/cli/cli_lib.sh"
B="$KPT_DATA/copy_base.kpt" N="$KPT_DATA/copy_plant10_512MiB.kpt"
[ -r "$B" ] && [ -r "$N" ] || skip "tests/data recordings are missing"
[ -d /proc/self ] || skip "no /proc here"
for opt in --json --markdown --junit; do
	run "$KPTPROF" diff "$B" "$N" "$opt" /proc/kpt-report.out
	expect_error "diff $opt into /proc" "cannot write '/proc/kpt-report.out'"
done
run "$KPTPROF" gate --from "$N" --baselines "$KPT_SRC/baselines" --suite default --json /proc/kpt-report.out
expect_error "gate --from --json into /proc" "cannot write '/proc/kpt-report.out'"
# ab: before the GPU is looked for (here, without one, instead of exit 77)
run "$KPTPROF" ab --runs 2 --json /proc/kpt-report.out -- true ::: true
expect_error "ab --json into /proc" "cannot write '/proc/kpt-report.out'"
run "$KPTPROF" export "$B" --format csv -o /proc/kpt-report.csv
expect_error "export -o into /proc" "cannot write '/proc/kpt-report.csv'"

mkdir "$T/ok"
run "$KPTPROF" diff "$B" "$N" --json "$T/ok/r.json" --markdown "$T/ok/r.md"
expect_rc 1 "diff with writable reports"
[ -s "$T/ok/r.json" ] && [ -s "$T/ok/r.md" ] || fail "the reports were not written"
[ "$(ls -A "$T/ok" | sort | tr '\n' ' ')" = "r.json r.md " ] || fail "left behind: $(ls -A "$T/ok")"
echo "ok: unwritable outputs fail first"
