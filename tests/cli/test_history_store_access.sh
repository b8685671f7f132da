#!/bin/bash
# A history store where users expect it to work (issue 21, items 7 and 8):
#  - a read-only SQLite store (a read-only file in a read-only folder; as
#    root: a file of another user in a folder that user cannot write, run
#    as nobody through setpriv) serves history ls, show, detect, gate --db
#    and view --db, and is left byte for byte as it was, no -wal or -shm
#    made; history add into it is a one-line error;
#  - 12 writers making the same fresh store at once: every add lands;
#  - history show KEY takes % and _ literally;
#  - history ls/show/detect/add exit 2 when standard output fails.
. "$KPT_SRC/tests/cli/cli_lib.sh"
BASE="$KPT_DATA/copy_base.kpt"
NEW="$KPT_DATA/copy_plant10_512MiB.kpt"
"$KPTPROF" history ls --db "$T/x.db" 2>&1 | grep -q "built without SQLite" && skip "kptprof is built without SQLite"

DB="$T/ro/h.db"
mkdir -p "$T/ro" "$T/ou"
for c in 1 2 3; do
	run "$KPTPROF" history add "$BASE" --db "$DB" --suite default --commit "c$c"
	expect_rc 0 "add c$c"
done
run "$KPTPROF" history add "$NEW" --db "$DB" --suite default --commit c4
expect_rc 0 "add c4"
rm -f "$DB-wal" "$DB-shm"
cp "$DB" "$T/orig.db"

# AS: how the read-only user runs a command
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "running as root without setpriv: cannot test a read-only store"
	AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 755 "$T" "$T/ro"
	chmod 644 "$DB"
	chmod 777 "$T/ou"
	"${AS[@]}" test -r "$DB" -a -x "$KPTPROF" || skip "nobody cannot read the store or run kptprof here"
	"${AS[@]}" test -w "$DB" && fail "nobody can write the store: the test would prove nothing"
else
	AS=()
	chmod 444 "$DB"
	chmod 555 "$T/ro"
	trap 'chmod 755 "$T/ro"; rm -rf "$T"' EXIT
fi
asrun() { "${AS[@]}" "$@" </dev/null >"$T/ou/o" 2>"$T/ou/e"; RC=$?; }
check() { # EXPECTED-RC WHAT CMD...
	local want=$1 what=$2
	shift 2
	asrun "$@"
	[ "$RC" = "$want" ] || fail "read-only store: $what: exit $RC, expected $want: $(head -c 400 "$T/ou/e")"
}
check 0 "history ls" "$KPTPROF" history ls --db "$DB"
grep -q "^4 " "$T/ou/o" || fail "history ls on the read-only store does not list session 4: $(cat "$T/ou/o")"
check 0 "history show" "$KPTPROF" history show 1 --db "$DB" --suite default
grep -q "4 sessions" "$T/ou/o" || fail "history show on the read-only store: $(cat "$T/ou/o")"
check 0 "history detect" "$KPTPROF" history detect --db "$DB"
asrun "$KPTPROF" gate --from "$NEW" --db "$DB" --suite default
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "read-only store: gate --db: exit $RC: $(head -c 400 "$T/ou/e")"
grep -qF "vs baseline from history store '$DB' (sqlite)" "$T/ou/e" || fail "gate --db: $(cat "$T/ou/e")"
check 0 "view --db" "$KPTPROF" view "$BASE" --db "$DB" --suite default -o "$T/ou/view"
[ -s "$T/ou/view/index.html" ] || fail "view --db on the read-only store wrote no report"
asrun "$KPTPROF" history add "$BASE" --db "$DB"
[ "$RC" = 2 ] || fail "history add into a read-only store: exit $RC"
[ "$(wc -l <"$T/ou/e")" = 1 ] || fail "history add into a read-only store: not one line: $(cat "$T/ou/e")"
cmp -s "$DB" "$T/orig.db" || fail "reading the read-only store changed it"
[ ! -e "$DB-wal" ] && [ ! -e "$DB-shm" ] || fail "reading the read-only store made a -wal or -shm file"
[ "$(id -u)" = 0 ] || chmod 755 "$T/ro"

# a writable store is read as well while it is open for reading only: the
# readers do not migrate or switch it (an older store keeps its schema)
cp "$T/orig.db" "$T/rw.db"
run "$KPTPROF" history ls --db "$T/rw.db"
expect_rc 0 "history ls on a writable store"
cmp -s "$T/rw.db" "$T/orig.db" || fail "history ls changed the store"

# a -wal file left by a killed writer: its changes are read, or, where this
# user cannot recover them, an error; never the stale main file
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
	mkdir -p "$T/wal"
	chmod 755 "$T/wal"
	cp "$T/orig.db" "$T/wal/h.db"
	python3 -c "
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_autocheckpoint=0')
c.execute(\"UPDATE sessions SET commit_sha = 'walonly'\"); c.commit(); os._exit(0)" "$T/wal/h.db"
	[ -s "$T/wal/h.db-wal" ] || fail "python did not leave a -wal file"
	asrun "$KPTPROF" history ls --db "$T/wal/h.db"
	[ "$RC" = 0 ] && grep -q walonly "$T/ou/o" || fail "-wal of a killed writer, -shm there: $RC $(cat "$T/ou/o" "$T/ou/e")"
	rm -f "$T/wal/h.db-shm"
	asrun "$KPTPROF" history ls --db "$T/wal/h.db"
	[ "$RC" = 2 ] && grep -q "its -wal file holds changes" "$T/ou/e" ||
		fail "-wal of a killed writer, no -shm, read-only user: $RC $(cat "$T/ou/o" "$T/ou/e")"
	run "$KPTPROF" history ls --db "$T/wal/h.db"
	expect_rc 0 "history ls by the owner after a killed writer"
	expect_out walonly
fi

# % and _ are literal in KEY
run "$KPTPROF" history show 'copy_ve_' --db "$DB" --suite default
expect_error "history show with _ as a wildcard" "no kernel key in '$DB' matches 'copy_ve_'"
run "$KPTPROF" history show 'copy%vec' --db "$DB" --suite default
expect_error "history show with % as a wildcard" "no kernel key"
run "$KPTPROF" history show 'copy_vec' --db "$DB" --suite default
expect_rc 2 "history show with a literal _"
expect_err "more than one kernel key in '$DB' matches 'copy_vec'"

# 12 first writers of a fresh store, ROUNDS times: every add lands
ROUNDS=${KPT_TEST_FIRST_WRITER_ROUNDS:-3}
for r in $(seq 1 "$ROUNDS"); do
	for w in $(seq 1 12); do
		"$KPTPROF" history add "$BASE" --db "$T/fresh$r/h.db" --commit "w$w" >/dev/null 2>"$T/w$r-$w.err" &
	done
	for w in $(seq 1 12); do
		wait -n || fail "round $r: a first writer failed: $(cat "$T"/w"$r"-*.err)"
	done
	run "$KPTPROF" history ls --db "$T/fresh$r/h.db"
	[ "$(grep -c '^[0-9]' "$T/out")" = 12 ] || fail "round $r: $(grep -c '^[0-9]' "$T/out") of 12 sessions stored"
done

# standard output lost: exit 2, one line
cp "$T/orig.db" "$T/w.db"
for cmd in "ls" "show 1 --suite default" "detect" "add $BASE"; do
	# shellcheck disable=SC2086
	"$KPTPROF" history $cmd --db "$T/w.db" >/dev/full 2>"$T/err"
	RC=$?
	[ "$RC" = 2 ] || fail "history $cmd > /dev/full: exit $RC"
	grep -q "^kptprof: .*standard output: No space left on device" "$T/err" ||
		fail "history $cmd > /dev/full: $(cat "$T/err")"
done
echo "ok: read-only store (${AS[*]:-chmod}), $ROUNDS x 12 first writers, literal KEY, /dev/full"
