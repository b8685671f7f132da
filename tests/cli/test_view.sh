#!/usr/bin/env bash
# kptprof view on kpt-synth recordings: the report folder (index.html,
# timeline.png, plots as .gp scripts with inline data and their PNGs,
# trace.json), diff verdicts first with a baseline, the plot data equal to
# `kptprof diff --json` and `kptprof report --format json`, HTML escaping of
# kernel names, no network resources, atomic replacement of the output
# folder, missing gnuplot, bad input.
. "$(dirname "$0")/cli_lib.sh"
need_synth
need_python
SYNTH=$KPT_BUILD/kpt-synth
# kpt-synth recordings have run-to-run noise and no machine component: the
# between-session prior is made negligible (docs/decision-rule.md, "Sessions").
WITHIN="--between-prior 0.001"
FLOPS="--meta workload.synth.workload.flops=2e12 --meta workload.synth.workload.bytes=4e9"

run "$SYNTH" -o "$T/base.kpt" --runs 10 --seed 11 --noise 0.5 $FLOPS
expect_rc 0 "kpt-synth base"
# The victim: a kernel over 20 us launched at one site only.
run "$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --json "$T/self.json"
expect_rc 0 "self diff"
VICTIM=$(python3 -c '
import json, sys
ks = json.load(open(sys.argv[1]))["keys"]
names = [k["mangled"] for k in ks]
print([k for k in ks if names.count(k["mangled"]) == 1 and k["base_ns"] > 20000][0]["mangled"])' "$T/self.json") ||
	fail "no victim kernel"
run "$SYNTH" -o "$T/slow.kpt" --runs 10 --seed 11 --noise 0.5 --slow "$VICTIM:10" $FLOPS
expect_rc 0 "kpt-synth --slow"

# ---- the report with a baseline ----------------------------------------------
R=$T/rep
run "$KPTPROF" view "$T/slow.kpt" --baseline "$T/base.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN -o "$R"
expect_rc 0 "view with baseline"
expect_out "$R/index.html"
expect_err "vs baseline: regression, 1 SLOW"
for f in index.html timeline.png timeline-iteration.png trace.json .kptprof-view diff-change.gp diff-runs.gp top-kernels.gp roofline.gp; do
	[ -s "$R/$f" ] || fail "report lacks $f"
done
ls "$T" | grep -q '^rep\.' && fail "temporary folder left beside the report: $(ls "$T")"
head -c 8 "$R/timeline.png" | od -An -c | grep -q 'P   N   G' || fail "timeline.png is not a PNG"
GNUPLOT=0
if command -v gnuplot >/dev/null; then
	GNUPLOT=1
	for f in diff-change diff-runs top-kernels roofline; do
		[ -s "$R/$f.png" ] || fail "gnuplot is installed but $f.png is missing"
	done
fi

# The same diff from `kptprof diff --json`, to compare the plot data with.
"$KPTPROF" diff "$T/base.kpt" "$T/slow.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN --json "$T/d.json" >/dev/null
[ $? = 1 ] || fail "diff of the planted slowdown is not a regression"
"$KPTPROF" report "$T/slow.kpt" --format json >"$T/r.json" || fail "report --format json"
python3 - "$R" "$T/d.json" "$T/r.json" "$VICTIM" "$GNUPLOT" <<'PY' || fail "report content"
import json, os, sys
from html.parser import HTMLParser

rep, dj, rj, victim, gnuplot = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
d = json.load(open(dj))
html = open(os.path.join(rep, "index.html"), encoding="utf-8").read()

# Only known tags: a kernel name that was not escaped would open a tag like
# <float, ...>; every '<' in the text must come from an escaped name.
allowed = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span", "b", "br",
           "code", "a", "div", "table", "tr", "th", "td", "details", "summary", "figure", "img",
           "figcaption", "ul", "li"}

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.imgs, self.links, self.open = set(), [], [], [], []

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, ("unbalanced </%s>" % tag, self.open[-3:], self.getpos())
        self.open.pop()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in ("meta", "br", "img"):
            self.open.append(tag)
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src"))
        if "href" in a:
            self.links.append(a["href"])
        for k, v in attrs:
            assert not (v or "").startswith(("http:", "https:", "//")), ("network resource", tag, k, v)

    def handle_data(self, data):
        self.text.append(data)

p = Page()
p.feed(html)
assert not p.open, ("unclosed tags", p.open)
assert p.tags <= allowed, p.tags - allowed
text = "".join(p.text)
assert "kpt::functor::mul<float>" in text, "no kernel name with template arguments shown as text"
assert "&lt;" in html and "&amp;" in html
for src in p.imgs + [l for l in p.links if not l.startswith("#")]:
    assert os.path.isfile(os.path.join(rep, src)), src
assert "timeline.png" in p.imgs
if gnuplot:
    for s in ("diff-change.png", "diff-runs.png", "top-kernels.png", "roofline.png"):
        assert s in p.imgs, s
i_v, i_s = html.find('id="verdicts"'), html.find('id="summary"')
assert 0 < i_v < i_s, ("verdicts not first", i_v, i_s)
assert "Regression: 1 kernel SLOW" in text

def block(stem, name):
    rows, inside = [], False
    for line in open(os.path.join(rep, stem + ".gp")):
        if line == "$%s << EOD\n" % name:
            inside = True
        elif inside and line == "EOD\n":
            return rows
        elif inside and not line.startswith("#"):
            rows.append(line.rstrip("\n"))
    raise AssertionError("no block $%s in %s" % (name, stem))

# diff_change: one row per tested key; the SLOW row is the victim, with the
# numbers of `kptprof diff --json`.
rows = block("diff-change", "data")
tested = [k for k in d["keys"] if k["verdict"] not in ("NEW", "GONE")]
assert len(rows) == min(len(tested), 40), (len(rows), len(tested))
slow = [r.split() for r in rows if r.split()[5] == "SLOW"]
assert len(slow) == 1, slow
k = [k for k in d["keys"] if k["verdict"] == "SLOW"][0]
assert k["mangled"] == victim
for col, field in ((1, "change_pct"), (2, "ci_low_pct"), (3, "ci_high_pct")):
    assert abs(float(slow[0][col]) - k[field]) <= 1e-4 * max(1, abs(k[field])), (field, slow[0][col], k[field])
changes = [float(r.split()[1]) for r in rows]
assert changes == sorted(changes), "diff_change rows not sorted by change"
# diff_runs: the run medians of the SLOW key, BASE and NEW
b = [float(r.split()[2]) for r in block("diff-runs", "base") if r.split()[0] == "0"]
n = [float(r.split()[2]) for r in block("diff-runs", "new") if r.split()[0] == "0"]
assert len(b) == len(k["base_run_ns"]) == 5 and len(n) == len(k["new_run_ns"]) == 5
for x, y in zip(sorted(b), sorted(k["base_run_ns"])):
    assert abs(x - y) <= 1e-5 * y, (x, y)
for x, y in zip(sorted(n), sorted(k["new_run_ns"])):
    assert abs(x - y) <= 1e-5 * y, (x, y)
# roofline: the FLOPs and bytes the recording declares
pts = block("roofline", "points")
assert len(pts) == 1, pts
f = pts[0].split()
assert float(f[2]) == 2e12 and float(f[3]) == 4e9, f
assert abs(float(f[0]) - 500) < 1e-6, f
# top_kernels = kptprof report's kernels (total, instances, share)
ks = json.load(open(rj))["kernels"]
total = sum(x["total_ns"] for x in ks)
top = [r.split() for r in block("top-kernels", "data")]
assert len(top) == min(len(ks), 15) + (len(ks) > 15)
for i, r in enumerate(top[:15]):
    assert int(r[2]) == ks[i]["total_ns"], (i, r, ks[i]["total_ns"])
    assert int(r[3]) == ks[i]["instances"], (i, r)
    assert abs(float(r[1]) - 100.0 * ks[i]["total_ns"] / total) < 1e-3, (i, r)
# trace.json parses and has every kernel
t = json.load(open(os.path.join(rep, "trace.json")))
ev = t["traceEvents"] if isinstance(t, dict) else t
assert sum(1 for e in ev if e.get("cat") == "kernel") == 4800
PY

# ---- atomic replacement --------------------------------------------------------
# a file the previous view wrote (its manifest lists it) that this one does not
touch "$R/stale-from-before"
echo "file stale-from-before" >>"$R/.kptprof-view"
run "$KPTPROF" view "$T/base.kpt" -o "$R"
expect_rc 0 "view over a previous view"
[ -e "$R/stale-from-before" ] && fail "previous view's files survived the replacement"
grep -q 'id="verdicts"' "$R/index.html" && fail "replaced report still has verdicts"
ls "$T" | grep -q '^rep\.' && fail "leftover folder: $(ls "$T")"

mkdir "$T/mine" && echo precious >"$T/mine/notes.txt"
run "$KPTPROF" view "$T/base.kpt" -o "$T/mine"
expect_error "view into a user folder" "not a kptprof view"
[ "$(cat "$T/mine/notes.txt")" = precious ] || fail "user folder was touched"

run "$KPTPROF" view "$T/base.kpt" -o "$R" --baseline "$T/missing.kpt"
expect_error "missing baseline" "missing.kpt"
grep -q 'id="summary"' "$R/index.html" || fail "failed run damaged the previous report"
ls "$T" | grep -q '^rep\.' && fail "failed run left a folder: $(ls "$T")"

# ---- no gnuplot: scripts kept, the report says so -------------------------------
run env KPT_GNUPLOT=/nonexistent/gnuplot "$KPTPROF" view "$T/base.kpt" -o "$T/nognu"
expect_rc 0 "view without gnuplot"
expect_err "gnuplot not found"
[ -s "$T/nognu/top-kernels.gp" ] || fail "script not kept without gnuplot"
[ -e "$T/nognu/top-kernels.png" ] && fail "a plot PNG without gnuplot"
grep -q "gnuplot is not installed" "$T/nognu/index.html" || fail "report does not say gnuplot is missing"

# ---- options: --no-gnuplot, --width, --top --------------------------------------------
run "$KPTPROF" view "$T/base.kpt" -o "$T/opts" --no-gnuplot --width 800 --top 3
expect_rc 0 "view with options"
[ -s "$T/opts/top-kernels.gp" ] || fail "--no-gnuplot: script missing"
[ -e "$T/opts/top-kernels.png" ] && fail "--no-gnuplot drew a plot"
grep -q "not drawn (gnuplot was not run: --no-gnuplot)" "$T/opts/index.html" || fail "--no-gnuplot not said in the page"
python3 - "$T/opts" <<'PY' || fail "--width/--top"
import os, struct, sys
d = sys.argv[1]
for png in ("timeline.png", "timeline-iteration.png"):
    with open(os.path.join(d, png), "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", png
    w, h = struct.unpack(">II", head[16:24])
    assert w == 800, (png, w)
html = open(os.path.join(d, "index.html")).read()
kern = html[html.index('<th class="n">Instances</th><th class="n">Avg</th>'):]
kern = kern[:kern.index("</table>")]
assert kern.count("<tr>") == 3, kern.count("<tr>")     # header row has no <tr> here: 3 kernels
assert "more kernels not listed" in html
PY
# progress (docs/cli.md, "Progress"): with the 2 s of quiet made 0 ms, a
# plain line on stderr off a terminal; the report and stdout unchanged
cp "$T/out" "$T/opts.out"
grep -v '^kptprof view: wrote ' "$T/err" >"$T/opts.err"
run env KPTPROF_NO_PROGRESS= KPTPROF_PROGRESS_TEST_AFTER_MS=0 "$KPTPROF" view "$T/base.kpt" -o "$T/opts2" --no-gnuplot --width 800 --top 3
expect_rc 0 "view with progress"
grep -qE '^kptprof view: [a-z ]+ [0-9]+% \([0-9.]+k? of [0-9.]+k? kernels\), 0 s$' "$T/err" ||
	fail "view printed no progress line: $(cat "$T/err")"
grep -Ev '^kptprof view: ([a-z ]+ [0-9]+% \(.*\), 0 s|wrote .*)$' "$T/err" | cmp -s - "$T/opts.err" ||
	fail "progress changed view's other stderr: $(cat "$T/err")"
sed "s|$T/opts2|$T/opts|" "$T/out" | cmp -s - "$T/opts.out" || fail "progress changed view's stdout"
diff -r "$T/opts" "$T/opts2" >/dev/null || fail "progress changed the report: $(diff -rq "$T/opts" "$T/opts2")"
run "$KPTPROF" view "$T/base.kpt" -o "$T/x" --width 100
expect_error "bad --width" "--width"

# ---- bad input --------------------------------------------------------------------
run "$KPTPROF" view "$T/base.kpt"
expect_error "no -o" "missing -o DIR"
run "$KPTPROF" view -o "$T/x"
expect_error "no FILE" "missing FILE"
run "$KPTPROF" view "$T/nope.kpt" -o "$T/x"
expect_error "missing file" "nope.kpt"
[ -e "$T/x" ] && fail "a failed view left '$T/x'"
printf 'not a kpt file at all, just text\n' >"$T/bad.kpt"
run "$KPTPROF" view "$T/bad.kpt" -o "$T/x"
expect_error "corrupt file" "bad.kpt"
run "$KPTPROF" view "$T/base.kpt" -o "$T/x" --junit "$T/j.xml"
expect_error "diff-only option" "unknown option '--junit'"
run "$SYNTH" -o "$T/l4.kpt" --runs 3 --seed 11 --gpu "NVIDIA L4"
run "$KPTPROF" view "$T/l4.kpt" --baseline "$T/base.kpt" -o "$T/x"
expect_rc 2 "different GPU models"
[ -e "$T/x" ] && fail "a failed view left '$T/x'"
ls "$T" | grep -q '^x\.' && fail "a failed view left a folder: $(ls "$T")"
# ---- every real recording of tests/data renders ------------------------------------
for f in "$KPT_DATA"/*.kpt; do
	[ -e "$f" ] || continue
	out=$T/data-$(basename "$f" .kpt)
	run "$KPTPROF" view "$f" -o "$out"
	expect_rc 0 "view $f"
	[ -s "$out/index.html" ] || fail "no report for $f"
	# the collector records no runtime version: shown as unknown, never "0.0"
	grep -q '</td><td>0\.0</td>' "$out/index.html" && fail "$f: CUDA runtime version shown as 0.0"
done
# ---- the folder's mode follows the umask (mkdtemp makes 0700) -----------------------
for m in 022 077; do
	rm -rf "$T/mode"
	(umask $m && "$KPTPROF" view "$KPT_DATA/collector_app.kpt" -o "$T/mode" >/dev/null 2>&1) ||
		fail "view with umask $m"
	got=$(stat -c %a "$T/mode")
	want=$(printf '%o' $((0777 & ~0$m)))
	[ "$got" = "$want" ] || fail "umask $m: '$T/mode' has mode $got, want $want"
done
# ---- an input inside DIR is refused, nothing changed -----------------------------
V=$T/vr
run "$KPTPROF" view "$KPT_DATA/collector_app.kpt" -o "$V"
expect_rc 0 "first view into vr"
cp "$KPT_DATA/collector_app.kpt" "$V/in.kpt"
before=$(ls -A "$V" | sort | tr '\n' ' ')
run "$KPTPROF" view "$V/in.kpt" -o "$V"
expect_rc 2 "FILE inside DIR"
expect_err "lies inside the output folder"
cmp -s "$KPT_DATA/collector_app.kpt" "$V/in.kpt" || fail "view deleted or changed its own input inside DIR"
[ "$(ls -A "$V" | sort | tr '\n' ' ')" = "$before" ] || fail "DIR changed by a refused view"
ls "$T" | grep -q '^vr\.' && fail "a refused view left a folder: $(ls "$T")"
run "$KPTPROF" view "$KPT_DATA/collector_app.kpt" --baseline "$V/./in.kpt" -o "$T/./vr/"
expect_rc 2 "--baseline inside DIR"
expect_err "lies inside the output folder"
[ -f "$V/in.kpt" ] || fail "view deleted its baseline inside DIR"
run "$KPTPROF" view --help
expect_rc 0 "--help"
expect_out "kptprof view FILE"
# every option view accepts has a help line (tests/cli/test_help_options.sh);
# the diff options of the rule are among them, the report ones are refused
for o in --threshold --aggregate --between-prior --ranges --base-runs --method --no-gnuplot; do
	grep -qE -- "^  $o[ ,]" "$T/out" || fail "view --help does not list '$o'"
done
grep -qE -- "^  --junit" "$T/out" && fail "view --help lists --junit, which view refuses"
for o in --width --top --trace-max --threshold --short-threshold --long-threshold --alpha; do
	help_lines "$T/out" | grep -E -- "^  $o " | grep -q "default" || fail "view --help gives no default for $o"
done
exit 0
