#!/usr/bin/env bash
# Hostile names through every command and output format: kernel names,
# NVTX ranges, the GPU name and meta values hold terminal escapes (title,
# clear screen, CR/LF and a fake "all SAME" line), C1 controls, NUL-adjacent
# bytes, invalid UTF-8, quotes, backquotes, "</script>", system("..."),
# gnuplot's ' and backslashes (tests/cli/kpt_hostrec.c). Nothing may escape
# its field: no raw ESC/CR/BEL/C1 in what reaches a terminal, one table row
# per key, HTML that parses with the names as text, Markdown tables with
# the right cells (cmark-gfm when installed), gnuplot scripts that run and
# execute nothing, XML/JSON/CSV that parse back to the exact names.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
HOSTREC="$KPT_BUILD/kpt-hostrec"
[ -x "$HOSTREC" ] || skip "kpt-hostrec is not built"
"$HOSTREC" "$T/base.kpt" || fail "kpt-hostrec base"
"$HOSTREC" "$T/new.kpt" 30 || fail "kpt-hostrec new"
rm -f /tmp/kpt-pwned /tmp/kpt-pwned-gp
N=0

# terminal FILE...: fails when a file holds a byte a terminal acts on: C0
# controls other than newline, DEL, a UTF-8 C1 control, a bidi override.
terminal() {
	python3 - "$@" <<'PY' || fail "control bytes reach the terminal: $*"
import sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    bad = [c for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f]
    assert not bad, (f, bad[:8])
    t = b.decode("utf-8")  # valid UTF-8: invalid bytes were escaped
    assert not any(0x80 <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e for c in t), f
PY
	N=$((N + 1))
}

# the fake summary line never starts a line
no_fake_line() {
	grep -q '^0 SLOW, 0 FAST, 9 SAME' "$@" && fail "a name started a line: $*"
	return 0
}

# ---- report: text, Markdown, CSV, JSON
run "$KPTPROF" report "$T/new.kpt"
expect_rc 0 "report"
terminal "$T/out" "$T/err"
no_fake_line "$T/out"
expect_out 'evil\e]0;pwned\x07\e[2J\r\n0 SLOW, 0 FAST, 9 SAME: all SAME\r'
expect_out '\x01\x02nul\x7f\u{009b}31m\xff\xfe tail'
run "$KPTPROF" report "$T/new.kpt" --format md
expect_rc 0 "report md"
terminal "$T/out"
cp "$T/out" "$T/report.md"
run "$KPTPROF" report "$T/new.kpt" --format csv
expect_rc 0 "report csv"
cp "$T/out" "$T/report.csv"
run "$KPTPROF" report "$T/new.kpt" --format json
expect_rc 0 "report json"
cp "$T/out" "$T/report.json"
python3 - "$T/report.csv" "$T/report.json" <<'PY' || fail "CSV/JSON lost the exact names"
import csv, json, sys
names = {r["name"] for r in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8", errors="replace"))}
assert "evil\x1b]0;pwned\x07\x1b[2J\r\n0 SLOW, 0 FAST, 9 SAME: all SAME\r" in names, names
j = json.load(open(sys.argv[2], encoding="utf-8", errors="replace"))
assert any(k["name"].startswith("k<'q'>(\"x\", `id`) </script>") for k in j["kernels"])
PY

# ---- diff: text, Markdown, JUnit, JSON, plots
run "$KPTPROF" diff "$T/base.kpt" "$T/new.kpt" --all --markdown "$T/d.md" --junit "$T/d.xml" \
	--json "$T/d.json" --plots "$T/plots"
expect_rc 1 "diff (kernel 1 is 30% slower)"
terminal "$T/out" "$T/err"
no_fake_line "$T/out"
python3 - "$T/out" <<'PY' || fail "diff table: not one row per key"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
h = next(i for i, l in enumerate(lines) if l.startswith("Kernel"))
rows = lines[h + 1:lines.index("", h)]
assert len(rows) == 4, rows
assert sum(r.rstrip().endswith("SLOW") for r in rows) == 1, rows
assert any(r.startswith("k<'q'>(\"x\", `id`) </script>") for r in rows), rows
PY
python3 - "$T/d.xml" "$T/d.json" <<'PY' || fail "JUnit/JSON lost the names"
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == 4, len(cases)
assert any("</script><script>alert(1)</script>" in c.get("name") for c in cases)
assert any("system('touch /tmp/kpt-pwned-gp')" in c.get("name") for c in cases)
assert len(root.findall(".//failure")) == 1
d = json.load(open(sys.argv[2], encoding="utf-8", errors="replace"))
assert len(d["keys"]) == 4
PY
N=$((N + 3))

# Markdown: tables keep their cells (rendered by a real GFM renderer when
# there is one), the code spans hold the names, no raw control bytes.
terminal "$T/d.md" "$T/report.md"
if command -v cmark-gfm >/dev/null; then
	for f in d report; do
		cmark-gfm -e table "$T/$f.md" >"$T/$f.html" || fail "cmark-gfm $f.md"
	done
	python3 - "$T/d.html" "$T/report.html" <<'PY' || fail "Markdown tables lost their cells"
import sys
from html.parser import HTMLParser
class T(HTMLParser):
    def __init__(s):
        super().__init__(); s.tables = []; s.cell = None; s.code = []
    def handle_starttag(s, t, a):
        if t == "table": s.tables.append([])
        elif t == "tr": s.tables[-1].append([])
        elif t in ("td", "th"): s.cell = ""
    def handle_endtag(s, t):
        if t in ("td", "th"): s.tables[-1][-1].append(s.cell); s.cell = None
    def handle_data(s, d):
        if s.cell is not None: s.cell += d
    handle_entityref = handle_charref = None
def parse(f):
    p = T(); p.convert_charrefs = True; p.feed(open(f, encoding="utf-8").read()); return p.tables
d = parse(sys.argv[1])
for t in d:
    assert all(len(r) == len(t[0]) for r in t), [len(r) for r in t]
keys = [r for t in d if t[0][0] == "Kernel" for r in t[1:]]
assert len(keys) == 4, len(keys)
names = {r[0] for r in keys}
assert "k<'q'>(\"x\", `id`) </script><script>alert(1)</script> system(\"touch /tmp/kpt-pwned\")" in names, names
assert "gp' . system('touch /tmp/kpt-pwned-gp') . '\\ back\\slash | pipe | `tick``s` _u_ *s* [l](u) \\" in names, names
r = parse(sys.argv[2])
assert len(r) == 1 and len(r[0]) == 5 and all(len(x) == 9 for x in r[0]), r
PY
	N=$((N + 2))
fi

# gnuplot: the scripts run (when gnuplot is here) and execute nothing
if command -v gnuplot >/dev/null; then
	for gp in "$T"/plots/*.gp; do
		(cd "$T/plots" && gnuplot "$(basename "$gp")") 2>"$T/gp.err" || fail "gnuplot $gp: $(cat "$T/gp.err")"
	done
	[ -s "$T/plots/diff-change.png" ] || fail "no diff-change.png"
	N=$((N + 1))
fi
[ -e /tmp/kpt-pwned ] || [ -e /tmp/kpt-pwned-gp ] && fail "a name ran a command"

# ---- gate --from, against a baselines folder and a history store
SUITE=$(printf 's\302\23331m\047`|')   # the recordings' suite, as kpt-hostrec writes it
mkdir -p "$T/bl/nvidia-h100-80gb-hbm3"
cp "$T/base.kpt" "$T/bl/nvidia-h100-80gb-hbm3/$SUITE.kpt"
run "$KPTPROF" gate --from "$T/new.kpt" --baselines "$T/bl" --suite "$SUITE" --markdown "$T/g.md"
# a suite becomes a folder name: an unsafe one is refused, in one clean line
expect_rc 2 "gate --from with a hostile suite"
[ ! -e "$T/g.md" ] || [ "$(grep -c . "$T/g.md")" -le 3 ] || fail "gate wrote a report for a refused suite"
terminal "$T/out" "$T/err"
no_fake_line "$T/out"
for i in 1 2; do
	run "$KPTPROF" history add "$T/base.kpt" --db "$T/h.db" --commit "c$i\033" --branch main --suite hs
	expect_rc 0 "history add"
	terminal "$T/out" "$T/err"
done
run "$KPTPROF" gate --from "$T/new.kpt" --db "$T/h.db" --suite hs
[ "$RC" -le 2 ] || fail "gate --db: exit $RC"
terminal "$T/out" "$T/err"

# ---- history ls, show (an ambiguous key: a one-line error per match), plot, detect
run "$KPTPROF" history ls --db "$T/h.db"
expect_rc 0 "history ls"
terminal "$T/out" "$T/err"
run "$KPTPROF" history show e --db "$T/h.db" --suite hs
expect_rc 2 "history show (ambiguous)"
terminal "$T/out" "$T/err"
[ "$(wc -l <"$T/err")" -le 7 ] || fail "ambiguous key error: $(wc -l <"$T/err") lines"
run "$KPTPROF" history show evil --db "$T/h.db" --suite hs
expect_rc 0 "history show"
terminal "$T/out" "$T/err"
no_fake_line "$T/out"
run "$KPTPROF" history plot evil --db "$T/h.db" --suite hs -o "$T/hp"
expect_rc 0 "history plot"
terminal "$T/out" "$T/err"
run "$KPTPROF" history detect --db "$T/h.db"
[ "$RC" -le 1 ] || fail "history detect: exit $RC"
terminal "$T/out" "$T/err"

# ---- baseline list/show, compare, export
run "$KPTPROF" baseline list --baselines "$T/bl"
expect_rc 0 "baseline list"
terminal "$T/out" "$T/err"
run "$KPTPROF" baseline show "$T/new.kpt"
expect_rc 0 "baseline show"
terminal "$T/out" "$T/err"
expect_out 'command   app\e[31m --red\nrm -rf'
for fmt in text md; do
	run "$KPTPROF" compare "$T/base.kpt" "$T/new.kpt" --format $fmt
	expect_rc 0 "compare $fmt"
	terminal "$T/out" "$T/err"
done
for fmt in chrome json csv; do
	run "$KPTPROF" export "$T/new.kpt" --format $fmt -o "$T/x.$fmt"
	expect_rc 0 "export $fmt"
done
python3 -c 'import json,sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))' "$T/x.chrome" "$T/x.json" \
	|| fail "export JSON does not parse"

# ---- view: the names are text of the page, never markup
run "$KPTPROF" view "$T/new.kpt" --baseline "$T/base.kpt" -o "$T/v" --no-gnuplot
expect_rc 0 "view"
terminal "$T/out" "$T/err"
python3 - "$T/v/index.html" <<'PY' || fail "view HTML: a name became markup"
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.tags = []; s.text = []
    def handle_starttag(s, t, a): s.tags.append(t)
    def handle_data(s, d): s.text.append(d)
p = P(); p.convert_charrefs = True
p.feed(open(sys.argv[1], encoding="utf-8").read())
assert "script" not in p.tags, "a <script> element"
text = "".join(p.text)
assert "</script><script>alert(1)</script>" in text
assert "system('touch /tmp/kpt-pwned-gp')" in text
PY
N=$((N + 1))
[ -e /tmp/kpt-pwned ] || [ -e /tmp/kpt-pwned-gp ] && fail "a name ran a command"
echo "ok: $N hostile-name checks"
exit 0
