#!/usr/bin/env bash
# test_output_notice.sh - issue 21: "a one-line notice on stderr before any
# output over 1 GB", for every command that writes a report, a trace or an
# export, to standard output or to a file. $KPTPROF_TEST_NOTICE_BYTES lowers
# the size from 1 GiB (kpt_cli_watch_outputs, cli/cli_common.c); each
# output past it says so once, and is the same as without the notice.
. "$(dirname "$0")/cli_lib.sh"
N=200
A=$KPT_DATA/ab_h100_aa_a.kpt
B=$KPT_DATA/ab_h100_aa_b.kpt
NEW=$KPT_DATA/copy_plant10_512MiB.kpt

# notices WHAT...: one "passes 200 B" line for each WHAT, no other notice
notices() {
	local want=$#
	for w in "$@"; do
		[ "$(grep -cF "note: '$w' passes 200 B and keeps growing" "$T/err")" = 1 ] ||
			fail "no single notice for '$w' from: $CASE; stderr: $(cat "$T/err")"
	done
	[ "$(grep -c "passes 200 B" "$T/err")" = "$want" ] || fail "$CASE: other notices: $(cat "$T/err")"
}

# check CASE WHAT... -- CMD...: CMD with the low size gives the notices of
# WHAT...; its stdout is the same as without (nothing lost or doubled)
check() {
	CASE=$1
	shift
	local what=()
	while [ "$1" != -- ]; do what+=("$1"); shift; done
	shift
	run "$@"
	local rc=$RC
	cp "$T/out" "$T/out.plain"
	[ ! -s "$T/err" ] || ! grep -q "passes" "$T/err" || fail "$CASE: a notice without the low size: $(cat "$T/err")"
	run env KPTPROF_TEST_NOTICE_BYTES=$N "$@"
	[ "$RC" = "$rc" ] || fail "$CASE: exit $RC with the notice, $rc without"
	cmp -s "$T/out" "$T/out.plain" || fail "$CASE: stdout differs with the notice"
	notices "${what[@]}"
}

check "report" "standard output" -- "$KPTPROF" report "$A"
for fmt in json md csv; do
	check "report --format $fmt" "standard output" -- "$KPTPROF" report "$A" --format $fmt
done
check "report --by range" "standard output" -- "$KPTPROF" report "$A" --by range
check "diff" "standard output" -- "$KPTPROF" diff "$A" "$B"
check "diff --json -" "standard output" -- "$KPTPROF" diff "$A" "$B" --json -
check "diff reports" "$T/d.json" "$T/d.md" "$T/d.xml" -- \
	"$KPTPROF" diff "$A" "$B" -q --json "$T/d.json" --markdown "$T/d.md" --junit "$T/d.xml"
check "compare" "standard output" -- "$KPTPROF" compare "$A" "$B"
check "export -o -" "standard output" -- "$KPTPROF" export "$A" --format chrome -o -
check "export -o FILE" "$T/e.csv" -- "$KPTPROF" export "$A" --format csv -o "$T/e.csv"
[ "$(wc -l <"$T/e.csv")" -gt 100 ] || fail "export -o FILE: $(wc -l <"$T/e.csv") lines"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
CASE="export to a FIFO"
run env KPTPROF_TEST_NOTICE_BYTES=$N "$KPTPROF" export "$A" --format json -o "$T/fifo"
wait
expect_rc 0 "$CASE"
notices "$T/fifo"
"$KPTPROF" export "$A" --format json -o - | cmp -s - "$T/fifo.out" || fail "$CASE: not the whole export"

# view: every file of the folder it writes (named in its staging folder)
run env KPTPROF_TEST_NOTICE_BYTES=$N "$KPTPROF" view "$A" -o "$T/v" --no-gnuplot
expect_rc 0 "view"
for f in trace.json index.html timeline.png; do
	[ "$(grep -c "note: '.*/$f' passes 200 B" "$T/err")" = 1 ] || fail "view: no single notice for $f: $(cat "$T/err")"
done

# the history store's commands and gate --db
if "$KPTPROF" history ls --db "$T/h.db" 2>&1 | grep -q "built without SQLite"; then
	echo "ok (without SQLite: history and gate --db not checked)"
	exit 0
fi
for c in c1 c2 c3; do
	"$KPTPROF" history add "$KPT_DATA/copy_base.kpt" --db "$T/h.db" --suite default --commit $c >/dev/null ||
		fail "history add"
done
check "history ls" "standard output" -- "$KPTPROF" history ls --db "$T/h.db"
check "history show" "standard output" -- "$KPTPROF" history show 1 --db "$T/h.db" --suite default
check "gate --db" "standard output" "$T/g.json" -- \
	"$KPTPROF" gate --from "$NEW" --db "$T/h.db" --suite default --json "$T/g.json"
echo ok
