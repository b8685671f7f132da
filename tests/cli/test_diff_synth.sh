#!/usr/bin/env bash
# kptprof diff on kpt-synth recordings: self diff, a planted 10% slowdown of
# one kernel (SLOW on exactly that kernel, exit 1), GPU model mismatch (exit
# 2, --force), JUnit XML (parsed), Markdown, JSON, bad input.
# Runs 0-4 of one file vs runs 5-9 of a second file of the same seed gives
# the same kernels with independent run-to-run noise.
set -u
# kpt-synth recordings have run-to-run noise and no machine component: the
# between-session prior is made negligible (docs/decision-rule.md, "Sessions").
WITHIN="--between-prior 0.001"
SYNTH=${KPT_BUILD:?}/kpt-synth
[ -x "$SYNTH" ] || { echo "skip: kpt-synth not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-diff.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$SYNTH" -o "$T/base.kpt" --runs 10 --seed 11 --noise 0.5 || fail "kpt-synth"
# Pick one kernel (its mangled name is unique) to slow down.
"$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --json "$T/self.json" >"$T/self.txt"
rc=$?; [ $rc -eq 0 ] || fail "self diff exit $rc"
VICTIM=$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["result"]=="ok", d["result"]
assert d["counts"]["SLOW"]==0
ks=d["keys"]
names=[k["mangled"] for k in ks]
# a kernel longer than 20 us launched at one site only
c=[k for k in ks if names.count(k["mangled"])==1 and k["base_ns"]>20000]
print(c[0]["mangled"])' "$T/self.json") || fail "self diff JSON"
"$SYNTH" -o "$T/slow.kpt" --runs 10 --seed 11 --noise 0.5 --slow "$VICTIM:10" || fail "kpt-synth --slow"

"$KPTPROF" diff "$T/base.kpt" "$T/slow.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN \
	--json "$T/d.json" --junit "$T/d.xml" --markdown "$T/d.md" >"$T/d.txt"
rc=$?; [ $rc -eq 1 ] || { cat "$T/d.txt"; fail "planted slowdown: exit $rc, want 1"; }
grep -q "SLOW" "$T/d.txt" || fail "no SLOW in the table"
grep -q "REGRESSION" "$T/d.txt" || fail "no REGRESSION summary"
python3 - "$T/d.json" "$VICTIM" <<'EOF' || fail "planted slowdown JSON"
import json, sys
d = json.load(open(sys.argv[1]))
victim = sys.argv[2]
assert d["result"] == "regression"
slow = [k for k in d["keys"] if k["verdict"] == "SLOW"]
assert len(slow) == 1, [(k["name"], k["change_pct"]) for k in slow]
k = slow[0]
assert k["mangled"] == victim, k["mangled"]
assert 8 < k["change_pct"] < 12, k["change_pct"]
assert k["ci_low_pct"] < k["change_pct"] < k["ci_high_pct"]
for f in ("name", "verdict", "change_pct", "ci_low_pct", "ci_high_pct"):
    assert all(f in x for x in d["keys"]), f
assert len(k["base_run_ns"]) == 5 and len(k["new_run_ns"]) == 5
EOF
python3 - "$T/d.xml" "$T/d.json" <<'EOF' || fail "JUnit XML"
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
d = json.load(open(sys.argv[2]))
cases = root.findall(".//testcase")
assert len(cases) == len(d["keys"]), (len(cases), len(d["keys"]))
fails = [c for c in cases if c.find("failure") is not None]
assert len(fails) == 1
assert fails[0].get("classname") == "nvidia-h100-80gb-hbm3/synth", fails[0].get("classname")
assert "SLOW" in fails[0].find("failure").get("message")
assert "<" in "".join(c.get("name") for c in cases)  # template names survive escaping
assert root.get("failures") == "1"
EOF
python3 - "$T/d.md" <<'EOF' || fail "Markdown"
import re, sys
md = open(sys.argv[1]).read()
assert md.startswith("## :x: kptprof: 1 kernel SLOW"), md[:80]
assert md.index("### SLOW") < md.index("<details>")
assert "| SLOW | FAST | AMBG | SAME | NEW | GONE |" in md
# template names are code spans (GFM escapes their HTML when rendered)
assert re.search(r"\| `[^`\n|]*<[^`\n]*` \|", md), md
EOF

# --plots: the gnuplot scripts always, the pictures when gnuplot is here.
"$KPTPROF" diff "$T/base.kpt" "$T/slow.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN -q --plots "$T/plots" 2>/dev/null
rc=$?; [ $rc -eq 1 ] || fail "--plots: exit $rc"
[ -s "$T/plots/diff-change.gp" ] && [ -s "$T/plots/diff-runs.gp" ] || fail "--plots: no scripts"
if command -v gnuplot >/dev/null; then
	[ -s "$T/plots/diff-change.png" ] || fail "--plots: no picture"
fi
# without gnuplot every script is still written (kpt_view_diff_plots), and said
KPT_GNUPLOT="$T/no-gnuplot" "$KPTPROF" diff "$T/base.kpt" "$T/slow.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN -q \
	--plots "$T/plots-nognu" 2>"$T/err"
[ -s "$T/plots-nognu/diff-change.gp" ] && [ -s "$T/plots-nognu/diff-runs.gp" ] || fail "--plots without gnuplot: scripts missing"
grep -q "gnuplot not found" "$T/err" && grep -q "2 plot scripts, 0 pictures" "$T/err" ||
	fail "--plots without gnuplot: $(cat "$T/err")"

# --json - puts only the JSON on stdout.
"$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --json - | python3 -c 'import json,sys; assert json.load(sys.stdin)["result"]=="ok"' \
	|| fail "--json - is not pure JSON"

# A/A from disjoint runs of one file: no regression.
"$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --base-runs 0-4 --new-runs 5-9 -q
rc=$?; [ $rc -eq 0 ] || fail "A/A runs 0-4 vs 5-9: exit $rc"

# A different GPU model: exit 2 with a message; --force compares.
"$SYNTH" -o "$T/a100.kpt" --runs 3 --seed 11 --gpu "NVIDIA A100-SXM4-80GB" || fail "kpt-synth --gpu"
"$KPTPROF" diff "$T/base.kpt" "$T/a100.kpt" --json "$T/e.json" >/dev/null 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "GPU mismatch: exit $rc, want 2"
grep -q "different GPU models" "$T/err" || fail "GPU mismatch message: $(cat "$T/err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="error"' "$T/e.json" || fail "error JSON"
"$KPTPROF" diff "$T/base.kpt" "$T/a100.kpt" --force -q
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "--force: exit $rc"

# Bad input: one line, exit 2.
"$KPTPROF" diff "$T/base.kpt" "$T/missing.kpt" 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "missing file: exit $rc"
grep -q "missing.kpt" "$T/err" || fail "missing file message: $(cat "$T/err")"
echo "not a recording" >"$T/junk.kpt"
"$KPTPROF" diff "$T/junk.kpt" "$T/base.kpt" 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "junk file: exit $rc"
"$KPTPROF" diff "$T/base.kpt" 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "one file: exit $rc"
"$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --threshold abc 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "bad threshold: exit $rc"
"$KPTPROF" diff "$T/base.kpt" "$T/base.kpt" --base-runs 42 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "absent run: exit $rc"
NO_COLOR=1 "$KPTPROF" diff "$T/base.kpt" "$T/slow.kpt" --base-runs 0-4 --new-runs 5-9 $WITHIN | grep -q $'\033' && fail "colour when not a terminal"
echo ok
