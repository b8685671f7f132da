#!/usr/bin/env bash
# test_output_paths.sh - issue 34: what an output path may be. CI runs
# kptprof as root on artifacts, so every output path is hostile: a device
# or FIFO is written in place (never replaced by a regular file), a
# symbolic link is refused (unless it leads to our own stdout), an output
# that is an input of the command (by any spelling, a hard link, a session
# of a baseline folder) is refused before anything is written, a killed
# command leaves no temporary, a '%' in a kernel name is no gnuplot format,
# and a write error on stdout is exit 2. Never touches a real device: the
# device is made with mknod in the test's folder (as root).
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"
A=$KPT_DATA/ab_h100_aa_a.kpt
B=$KPT_DATA/ab_h100_aa_b.kpt
TRACE=$(ls "$KPT_SRC"/tests/data/import/*.json 2>/dev/null | head -n1)

# ---- a character device (as root: a private /dev/null made with mknod) ----
if [ "$(id -u)" = 0 ] && mknod "$T/null" c 1 3 2>/dev/null; then
	run "$KPTPROF" export "$A" --format csv -o "$T/null"
	expect_rc 0 "export -o a device"
	[ -c "$T/null" ] || fail "export replaced a character device with a regular file"
	run "$KPTPROF" diff "$A" "$B" --json "$T/null" -q
	[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "diff --json a device: exit $RC: $(cat "$T/err")"
	[ -c "$T/null" ] || fail "diff --json replaced a character device with a regular file"
	if [ -n "$TRACE" ]; then
		run "$KPTPROF" import "$TRACE" -o "$T/null"
		expect_rc 0 "import -o a device"
		[ -c "$T/null" ] || fail "import replaced a character device with a regular file"
	fi
	ls "$T" | grep -q 'null\.tmp' && fail "a temporary was left beside the device: $(ls "$T")"
else
	echo "note: not root or no mknod: the character device cases are skipped" >&2
fi

# ---- a FIFO: written in place, its reader gets the whole output ----
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/got" &
reader=$!
run timeout 60 "$KPTPROF" diff "$A" "$B" --json "$T/fifo" -q
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "diff --json a FIFO: exit $RC: $(cat "$T/err")"
wait $reader
[ -p "$T/fifo" ] || fail "diff --json replaced a FIFO with a regular file"
grep -q '"result"' "$T/got" || fail "the FIFO's reader did not get the report: $(head -c 200 "$T/got")"
if [ -n "$TRACE" ]; then
	timeout 60 cat "$T/fifo" >"$T/got.kpt" &
	reader=$!
	run timeout 60 "$KPTPROF" import "$TRACE" -o "$T/fifo"
	expect_rc 0 "import -o a FIFO"
	wait $reader
	[ -p "$T/fifo" ] || fail "import replaced a FIFO with a regular file"
	run "$KPTPROF" report "$T/got.kpt"
	expect_rc 0 "the recording read from the FIFO"
fi

# ---- a symbolic link: refused, neither followed nor replaced ----
echo keep >"$T/victim"
ln -s "$T/victim" "$T/link"
for cmd in "export $A --format csv -o" "diff $A $B -q --json" "diff $A $B -q --markdown"; do
	# shellcheck disable=SC2086
	run "$KPTPROF" $cmd "$T/link"
	expect_error "$cmd a link" "refusing to write '$T/link': it is a symbolic link"
	[ -L "$T/link" ] || fail "$cmd replaced the link"
	[ "$(cat "$T/victim")" = keep ] || fail "$cmd wrote through the link"
done
if [ -n "$TRACE" ]; then
	run "$KPTPROF" import "$TRACE" -o "$T/link"
	expect_error "import -o a link" "it is a symbolic link"
	[ -L "$T/link" ] && [ "$(cat "$T/victim")" = keep ] || fail "import -o a link changed it"
fi
# ... but a link to this process's stdout (/dev/stdout, /proc/self/fd/1)
# is stdout: written in place, the link kept
if [ -e /proc/self/fd/1 ]; then
	ln -s /proc/self/fd/1 "$T/stdout-link"
	"$KPTPROF" export "$A" --format csv -o "$T/stdout-link" >"$T/via-link.csv" 2>"$T/err" </dev/null
	RC=$?
	expect_rc 0 "export -o a link to stdout"
	[ -L "$T/stdout-link" ] || fail "export -o a link to stdout replaced the link"
	"$KPTPROF" export "$A" --format csv -o - >"$T/plain.csv" 2>/dev/null </dev/null
	cmp -s "$T/via-link.csv" "$T/plain.csv" || fail "the export through a link to stdout differs from -o -"
fi

# ---- an output that is an input, by any spelling ----
BL=$T/bl/nvidia-h100-80gb-hbm3/default
mkdir -p "$BL"
"$H" session nvidia-h100-80gb-hbm3 default GPU-0123abcd b1 2026-11-25T00:00:00Z "$BL/s1.kpt" || fail "kpt-hostile"
"$H" session nvidia-h100-80gb-hbm3 default GPU-4567abcd b2 2026-11-25T01:00:00Z "$BL/s2.kpt" || fail "kpt-hostile"
"$H" session nvidia-h100-80gb-hbm3 default GPU-89abcdef b3 2026-11-25T02:00:00Z "$T/new.kpt" || fail "kpt-hostile"
cp "$BL/s1.kpt" "$T/s1.orig"
cp "$T/new.kpt" "$T/new.orig"
ln "$BL/s1.kpt" "$T/hard.kpt"
for out in "$BL/s1.kpt" "$T/bl/nvidia-h100-80gb-hbm3/../nvidia-h100-80gb-hbm3/default/s1.kpt" "$T/hard.kpt"; do
	run "$KPTPROF" diff "$BL" "$T/new.kpt" --json "$out"
	expect_error "diff FOLDER NEW --json $out (a session of the folder)" "it is an input of this command"
done
# gate: the recording (--from) and a session of the baselines, before any
# error report is written over them
run "$KPTPROF" gate --from "$T/new.kpt" --baselines "$T/none" --json "$T/new.kpt"
expect_error "gate --from F --json F" "refusing to write '$T/new.kpt': it is an input of this command"
run "$KPTPROF" gate --from "$T/new.kpt" --baselines "$T/bl" --junit "$T/hard.kpt"
expect_error "gate --junit a baseline session" "it is an input of this command"
run "$KPTPROF" export "$T/hard.kpt" --format json -o "$BL/s1.kpt"
expect_error "export -o its input through a hard link" "it is an input of this command"
cmp -s "$BL/s1.kpt" "$T/s1.orig" || fail "a baseline session was overwritten"
cmp -s "$T/new.kpt" "$T/new.orig" || fail "the recording was overwritten"

# an output whose folder is missing: said before the table is printed
run "$KPTPROF" diff "$A" "$B" --json "$T/no/such/r.json"
expect_error "diff --json into a missing folder" "cannot write '$T/no/such/r.json'"

# ---- a killed command leaves no temporary ----
# import opens its output before it reads its traces: a trace that is a
# FIFO nobody writes holds it there, with the temporary made
if [ -n "$TRACE" ]; then
	for sig in TERM HUP; do
		rm -f "$T/in.fifo"
		mkfifo "$T/in.fifo"
		"$KPTPROF" import "$T/in.fifo" -o "$T/killed.kpt" 2>/dev/null &
		pid=$!
		for _ in $(seq 100); do
			ls "$T" | grep -q '^killed\.kpt\.tmp' && break
			sleep 0.05
		done
		if ls "$T" | grep -q '^killed\.kpt\.tmp'; then
			kill -$sig $pid
			wait $pid 2>/dev/null
			ls "$T" | grep -q '^killed\.kpt' && fail "a killed import (SIG$sig) left: $(ls "$T" | grep killed)"
		else
			kill $pid 2>/dev/null
			exec 3<>"$T/in.fifo"; exec 3>&-  # let it go
			wait $pid 2>/dev/null
			echo "note: import made no temporary before reading its traces: the kill case is skipped" >&2
		fi
	done
fi

# ---- '%' in a kernel name: tic labels are gnuplot formats ----
if command -v gnuplot >/dev/null; then
	"$H" names "$T/names.kpt" || fail "kpt-hostile names"
	run "$KPTPROF" diff "$T/names.kpt" "$T/names.kpt" --plots "$T/plots" -q
	expect_rc 0 "diff --plots with '%s%n%x' in a kernel name"
	[ -s "$T/plots/diff-change.png" ] || fail "no diff-change.png: $(cat "$T/err")"
fi

# ---- a write error on stdout is exit 2, never output lost with 0 ----
if [ -c /dev/full ]; then
	for cmd in "version" "help" "--help" "--version" "diff --help" "report $A"; do
		# shellcheck disable=SC2086
		"$KPTPROF" $cmd >/dev/full 2>"$T/err" </dev/null
		RC=$?
		expect_rc 2 "$cmd > /dev/full"
		expect_err "cannot write to standard output"
	done
fi
# ---- record's window options and the test variables: strict ----
# (refused while parsing, before any GPU or collector is looked for)
for bad in "--duration 0" "--duration 0.0000000001" "--duration 0x10" "--delay 0x1p3" "--delay inf" \
	"--duration nan" "--delay 1e3" "--delay -1"; do
	# shellcheck disable=SC2086
	run "$KPTPROF" record $bad -- true
	expect_error "record $bad" "bad ${bad%% *} '${bad#* }'"
done
for opt in --steps --every --duration -o; do
	run "$KPTPROF" record $opt -- true
	expect_error "record $opt -- CMD" "option '$opt' needs a value"
done
for v in KPTPROF_TEST_NOTICE_BYTES=12x KPTPROF_TEST_NOTICE_BYTES=-1 KPTPROF_PROGRESS_TEST_AFTER_MS=0x10 \
	KPTPROF_PROGRESS_TEST_AFTER_MS=" 5"; do
	run env "$v" "$KPTPROF" version
	expect_error "$v" "bad ${v%%=*}"
done
exit 0
