#!/usr/bin/env bash
# The Markdown of `diff --markdown` (the gate's PR comment) and `report
# --format md`, rendered by a real GFM renderer (Debian's cmark-gfm, the
# library GitHub's renderer grew from): no stray backslash in the rendered
# text (GFM keeps backslashes inside code spans literal), every table a
# <table> whose rows have the header's cells, one row per key. Skips (77)
# without cmark-gfm (scripts/kpt-deps.sh installs it as an optional test
# dependency).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
command -v cmark-gfm >/dev/null || skip "cmark-gfm is not installed (apt-get install cmark-gfm)"
cd "$KPT_SRC" || fail "cd $KPT_SRC"

run "$KPTPROF" diff tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default "$KPT_DATA/heldout_h100_plant.kpt" \
	--markdown "$T/pr.md" --json "$T/pr.json"
expect_rc 1 "diff of the planted recording"
run "$KPTPROF" report "$KPT_DATA/heldout_h100_plant.kpt" --format md --top 0
expect_rc 0 "report --format md"
cp "$T/out" "$T/report.md"
for f in pr report; do
	cmark-gfm -e table -e strikethrough -e autolink "$T/$f.md" >"$T/$f.html" || fail "cmark-gfm $f.md"
done
python3 - "$T/pr.html" "$T/pr.json" "$T/report.html" <<'PY' || fail "rendered Markdown"
import json, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    """Text outside code, text inside code, and every table as rows of cells."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.code, self.tables, self.cell, self.in_code = [], [], [], None, 0
    def handle_starttag(self, t, a):
        if t == "table": self.tables.append([])
        elif t == "tr": self.tables[-1].append([])
        elif t in ("td", "th"): self.cell = ""
        elif t == "code": self.in_code += 1
    def handle_endtag(self, t):
        if t in ("td", "th"):
            self.tables[-1][-1].append(self.cell); self.cell = None
        elif t == "code": self.in_code -= 1
    def handle_data(self, d):
        (self.code if self.in_code else self.text).append(d)
        if self.cell is not None: self.cell += d

def page(path):
    p = Page(); p.feed(open(path, encoding="utf-8").read()); return p

pr, d, rep = page(sys.argv[1]), json.load(open(sys.argv[2])), page(sys.argv[3])
for name, p in (("PR comment", pr), ("report", rep)):
    assert "\\" not in "".join(p.text), (name, [t for t in p.text if "\\" in t][:5])
    assert "\\" not in "".join(p.code), (name, [t for t in p.code if "\\" in t][:5])
    assert p.tables, name
    for t in p.tables:
        assert all(len(r) == len(t[0]) for r in t), (name, t[0], [len(r) for r in t])
# one row per key: SLOW table, then the others (the caps are far away here)
rows = [r for t in pr.tables if t[0][0] == "Kernel" for r in t[1:]]
assert len(rows) == len(d["keys"]), (len(rows), len(d["keys"]))
slow = [k for k in d["keys"] if k["verdict"] == "SLOW"]
assert pr.tables[1][0][0] == "Kernel" and len(pr.tables[1]) == 1 + len(slow)
assert {r[0] for r in pr.tables[1][1:]} == {k["name"] for k in slow}
# the file paths are code spans that render exactly
assert any(c.endswith("tests/data/heldout_h100_plant.kpt") for c in pr.code), pr.code[:4]
assert len(rep.tables) == 1 and len(rep.tables[0][0]) == 9
PY
echo "ok: PR comment and report Markdown render as GFM tables without stray backslashes"
exit 0
