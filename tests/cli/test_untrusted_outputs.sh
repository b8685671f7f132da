#!/usr/bin/env bash
# test_untrusted_outputs.sh - where outputs go (issue 21, items 6 and 9):
# diff's reports never replace an input (same inode, any path), reports
# and plots never write through a planted link, `view -o DIR` removes only
# the files a view wrote there (its manifest), and report --by range,
# export and view refuse cyclic NVTX parents as diff does.
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"

"$H" session nvidia-h100-80gb-hbm3 default GPU-0123abcd b1 2026-11-25T00:00:00Z "$T/a.kpt" || fail "kpt-hostile"
"$H" session nvidia-h100-80gb-hbm3 default GPU-0123abcd b2 2026-11-25T01:00:00Z "$T/b.kpt" || fail "kpt-hostile"
cp "$T/b.kpt" "$T/b.orig"
ln "$T/b.kpt" "$T/hard.kpt"
ln -s "$T/a.kpt" "$T/soft.kpt"

# diff --json/--markdown/--junit F: F the same file as an input is refused
for opt in --json --markdown --junit; do
	for out in "$T/b.kpt" "$T/hard.kpt" "$T/soft.kpt" "$T/./a.kpt"; do
		run "$KPTPROF" diff "$T/a.kpt" "$T/b.kpt" $opt "$out"
		expect_error "diff $opt $out" "it is an input of this command"
	done
done
cmp -s "$T/b.kpt" "$T/b.orig" || fail "diff overwrote its input"

# a link planted at a report's path is refused (issue 34): neither followed
# nor replaced, its target untouched, nothing printed first
echo keep >"$T/victim"
ln -s "$T/victim" "$T/report.json"
run "$KPTPROF" diff "$T/a.kpt" "$T/b.kpt" --json "$T/report.json"
expect_error "diff --json over a link" "it is a symbolic link"
[ "$(cat "$T/victim")" = keep ] || fail "diff --json wrote through a planted link"
[ -L "$T/report.json" ] || fail "the link was replaced"

# diff --plots DIR with links planted at the script names
mkdir "$T/plots"
for s in diff-change diff-runs; do ln -s "$T/victim" "$T/plots/$s.gp"; done
run env KPT_GNUPLOT=/nonexistent "$KPTPROF" diff "$T/a.kpt" "$T/b.kpt" --plots "$T/plots"
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "diff --plots: exit $RC: $(cat "$T/err")"
[ "$(cat "$T/victim")" = keep ] || fail "diff --plots wrote through a planted link"

# view -o DIR: a folder that holds a view and a file the view did not write
run "$KPTPROF" view "$T/a.kpt" -o "$T/view"
expect_rc 0 "view"
grep -q '^file index.html$' "$T/view/.kptprof-view" || fail "the marker lists no files: $(cat "$T/view/.kptprof-view")"
run "$KPTPROF" view "$T/b.kpt" -o "$T/view"
expect_rc 0 "view over a view"
echo mine >"$T/view/notes.txt"
run "$KPTPROF" view "$T/a.kpt" -o "$T/view"
expect_error "view over a view that holds another file" "'notes.txt', which kptprof view did not write"
[ "$(cat "$T/view/notes.txt")" = mine ] || fail "view removed a file it did not write"
# a folder that merely holds a marker file
mkdir "$T/home"
echo "kptprof view" >"$T/home/.kptprof-view"
echo secret >"$T/home/id_rsa"
run "$KPTPROF" view "$T/a.kpt" -o "$T/home"
expect_error "view over a folder with a bare marker" "'id_rsa', which kptprof view did not write"
[ -f "$T/home/id_rsa" ] || fail "view deleted a file of a folder that merely holds a marker"

# cyclic NVTX parents: the same refusal in every reader of ranges
"$H" cyclic "$T/cyc.kpt" || fail "kpt-hostile cyclic"
for cmd in "report --by range" "export --format chrome -o $T/cyc.json" "export --format json -o $T/cyc2.json" \
	"view -o $T/cycview" "diff $T/cyc.kpt"; do
	# shellcheck disable=SC2086
	run "$KPTPROF" ${cmd%% *} "$T/cyc.kpt" ${cmd#* }
	expect_rc 2 "$cmd on cyclic ranges"
	expect_err "its own ancestor"
done
[ ! -e "$T/cyc.json" ] && [ ! -e "$T/cycview" ] || fail "a refused recording left output behind"
# item 4: a 10 MB kernel name launched 400 times: each event carries 4 KiB
# of it, the Chrome trace the whole name once; CSV and JSON rows are cut
"$H" longname 10000000 400 "$T/long.kpt" || fail "kpt-hostile longname"
for fmt in chrome csv json; do
	run "$KPTPROF" export "$T/long.kpt" --format $fmt -o "$T/long.$fmt"
	expect_rc 0 "export --format $fmt of a 10 MB name"
	size=$(stat -c %s "$T/long.$fmt")
	[ "$size" -lt 12000000 ] || fail "export --format $fmt of a 10 MB name x 400 wrote $size bytes"
done
python3 - "$T/long.chrome" <<'PY' || fail "the Chrome trace does not keep the whole name once"
import json, sys
t = json.load(open(sys.argv[1]))
k = [e for e in t["traceEvents"] if e.get("cat") == "kernel"]
assert len(k) == 400, len(k)
assert all(len(e["name"].encode()) < 4200 and "kptprofLongNames" in e["name"] for e in k)
full = list(t["kptprofLongNames"].values())
assert len(full) == 1 and len(full[0]) == 10000000, [len(x) for x in full]
PY
grep -q "cut at 4096 bytes" "$T/long.csv" || fail "the CSV row does not say the name was cut"
rm -f "$T"/long.*

# an output past the notice size says so on stderr, once, and is complete
"$H" kernels 20000 "$T/many.kpt" || fail "kpt-hostile kernels"
run env KPTPROF_TEST_NOTICE_BYTES=100000 "$KPTPROF" export "$T/many.kpt" --format csv -o "$T/many.csv"
expect_rc 0 "export past the notice size"
[ "$(grep -c "passes 97.7 KiB and keeps growing" "$T/err")" = 1 ] || fail "no single notice: $(cat "$T/err")"
[ "$(wc -l <"$T/many.csv")" = 20001 ] || fail "the export is not complete: $(wc -l <"$T/many.csv") lines"
run env KPTPROF_TEST_NOTICE_BYTES=100000 "$KPTPROF" export "$T/many.kpt" --format chrome -o -
expect_err "'standard output' passes"
run "$KPTPROF" export "$T/many.kpt" --format csv -o "$T/many.csv"
[ ! -s "$T/err" ] || fail "a small export printed: $(cat "$T/err")"

# view's trace: a window of --trace-max kernels around the middle, all with
# --trace-all, and nothing past --trace-bytes
kernels_in() { python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "kernel"))' "$1"; }
run "$KPTPROF" view "$T/many.kpt" -o "$T/vw" --trace-max 1000 --no-gnuplot
expect_rc 0 "view --trace-max 1000"
[ "$(kernels_in "$T/vw/trace.json")" = 1000 ] || fail "the window holds $(kernels_in "$T/vw/trace.json") kernels"
grep -q "the 1000 kernels around the middle of the recording, of 20000" "$T/vw/index.html" || fail "no note of the window"
run "$KPTPROF" view "$T/many.kpt" -o "$T/vw" --trace-max 1000 --trace-all --no-gnuplot
[ "$(kernels_in "$T/vw/trace.json")" = 20000 ] || fail "--trace-all holds $(kernels_in "$T/vw/trace.json") kernels"
run "$KPTPROF" view "$T/many.kpt" -o "$T/vw" --trace-bytes 100000 --no-gnuplot
expect_rc 0 "view --trace-bytes 100000"
[ ! -e "$T/vw/trace.json" ] || fail "a trace past --trace-bytes was written ($(stat -c %s "$T/vw/trace.json") bytes)"
grep -q "trace.json: not written: it would pass 100000 bytes" "$T/vw/index.html" || fail "no note of the budget"
ls "$T/vw" | grep -q tmp && fail "the budget left a temporary file: $(ls "$T/vw")"
echo ok
