#!/usr/bin/env bash
# test_untrusted_corpus.sh - a corpus of hostile recordings (kpt-hostile:
# names with '..', '/', ESC, CR/LF, quotes, backquotes, '</script>'; a
# 10 MB kernel name launched 400 times; 100,000 nested ranges; a range
# path in every one of 3,000 levels; cyclic parents; 2,000 zero-row range
# sections) through every command and output format that reads a
# recording (issue 21). Each run must exit 0, 1 or 2 (no crash, no kill),
# under a 2 GB address-space limit and 120 s; write nothing outside the
# output folder it was given (the working folder stays empty); and keep
# each output under 64 MB.
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"
need_python

C=$T/corpus
mkdir -p "$C" "$T/cwd"
"$H" names "$C/names.kpt" || fail "kpt-hostile names"
"$H" deep 100000 "$C/deep.kpt" || fail "kpt-hostile deep"
"$H" deep 3000 all "$C/deepall.kpt" || fail "kpt-hostile deep all"
"$H" longname 10000000 400 "$C/longname.kpt" || fail "kpt-hostile longname"
"$H" cyclic "$C/cyclic.kpt" || fail "kpt-hostile cyclic"
# 2,000 extra TOC entries for empty range sections (raw codec, 0 bytes, 0 rows)
python3 - "$C/names.kpt" "$C/zerosections.kpt" <<'PY' || fail "zero-row sections"
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
toc_off, toc_n = struct.unpack_from("<QI", d, 16)
toc = [bytes(d[toc_off + 48 * i:toc_off + 48 * (i + 1)]) for i in range(toc_n)]
rng = next(e for e in toc if struct.unpack_from("<I", e, 0)[0] == 8)
empty = bytearray(rng)
struct.pack_into("<IIQQQQQ", empty, 0, 8, 0, struct.unpack_from("<Q", rng, 8)[0], 0, 0, 0, 0)
body = d[:toc_off] + b"\0" * ((8 - toc_off % 8) % 8)
out = body + b"".join(toc) + bytes(empty) * 2000
struct.pack_into("<QI", out, 16, len(body), toc_n + 2000)
struct.pack_into("<Q", out, 32, len(out))
open(sys.argv[2], "wb").write(out)
PY

LIMIT_KB=$((2 * 1024 * 1024))
# AddressSanitizer reserves terabytes of shadow address space, which a
# virtual-memory limit forbids: under it the memory bound is not set (the
# plain build's run of this test keeps it).
grep -q __asan_init "$KPTPROF" 2>/dev/null && LIMIT_KB=unlimited
MAX_BYTES=$((64 * 1024 * 1024))
# check NAME OUTDIR CMD...: runs CMD (in $T/cwd, limited), asserts the exit
# status and the size of stdout and of OUTDIR.
check() {
	local what=$1 out=$2
	shift 2
	(cd "$T/cwd" && ulimit -v $LIMIT_KB && exec timeout 120 "$@") </dev/null >"$T/stdout" 2>"$T/stderr"
	RC=$?
	case $RC in 0 | 1 | 2) ;; *) fail "$what: exit $RC: $(head -c 300 "$T/stderr")" ;; esac
	[ "$(stat -c %s "$T/stdout")" -le $MAX_BYTES ] || fail "$what: $(stat -c %s "$T/stdout") bytes on stdout"
	if [ -n "$out" ] && [ -e "$out" ]; then
		local n
		n=$(du -sb "$out" | cut -f1)
		[ "$n" -le $MAX_BYTES ] || fail "$what: $n bytes in '$out'"
		rm -rf "$out"
	fi
	[ -z "$(ls -A "$T/cwd")" ] || fail "$what wrote into the working folder: $(ls -A "$T/cwd")"
	[ -z "$(ls -A "$C" | grep -v '\.kpt$')" ] || fail "$what wrote beside its input: $(ls -A "$C")"
	runs=$((runs + 1))
}

runs=0
O=$T/o
mkdir -p "$O"
for f in "$C"/*.kpt; do
	n=$(basename "$f" .kpt)
	for fmt in text md json; do
		for by in kernel range; do
			[ "$fmt" = md ] && [ "$by" = kernel ] && continue
			check "$n: report --format $fmt --by $by" "" "$KPTPROF" report "$f" --format "$fmt" --by "$by"
		done
	done
	for fmt in chrome csv json; do
		check "$n: export $fmt" "$O/x.$fmt" "$KPTPROF" export "$f" --format "$fmt" -o "$O/x.$fmt"
	done
	check "$n: view" "$O/view" env KPT_GNUPLOT=/nonexistent "$KPTPROF" view "$f" -o "$O/view"
	check "$n: view --baseline" "$O/view" env KPT_GNUPLOT=/nonexistent "$KPTPROF" view "$f" --baseline "$f" -o "$O/view"
	check "$n: diff" "$O/plots" env KPT_GNUPLOT=/nonexistent "$KPTPROF" diff "$f" "$f" --json "$O/d.json" \
		--markdown "$O/d.md" --junit "$O/d.xml" --plots "$O/plots"
	for r in d.json d.md d.xml; do
		[ ! -e "$O/$r" ] || [ "$(stat -c %s "$O/$r")" -le $MAX_BYTES ] || fail "$n: diff's $r is too big"
		rm -f "$O/$r"
	done
	check "$n: compare" "" "$KPTPROF" compare "$f" "$f"
	check "$n: history add" "" "$KPTPROF" history add "$f" --db "$O/h.db"
	check "$n: history ls" "" "$KPTPROF" history ls --db "$O/h.db"
	rm -f "$O/h.db"*
	check "$n: baseline update" "$O/bl" "$KPTPROF" baseline update "$f" --baselines "$O/bl" --suite corpus
	check "$n: gate --from" "" "$KPTPROF" gate --from "$f" --baselines "$O/bl" --suite corpus
	check "$n: baseline show" "" "$KPTPROF" baseline show "$f"
done
[ -z "$(ls -A "$O")" ] || fail "leftovers in the output folder: $(ls -A "$O")"
echo "ok: $runs runs"
