#!/usr/bin/env bash
# kptprof diff on the real recordings committed under tests/data (made on an
# H100): each against itself gives no SLOW and exit 0, JSON and JUnit parse;
# against a recording of another GPU model, exit 2. Skips when there are none.
set -u
shopt -s nullglob
files=("${KPT_DATA:?}"/*.kpt)
[ ${#files[@]} -gt 0 ] || { echo "skip: no recordings in $KPT_DATA"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-diff-real.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for f in "${files[@]}"; do
	"$KPTPROF" diff "$f" "$f" --json "$T/d.json" --junit "$T/d.xml" --markdown "$T/d.md" >"$T/d.txt"
	rc=$?; [ $rc -eq 0 ] || fail "$(basename "$f") vs itself: exit $rc"
	python3 - "$T/d.json" "$T/d.xml" <<'PY' || fail "$(basename "$f"): reports"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
assert d["result"] == "ok"
assert d["counts"]["SLOW"] == 0 and d["counts"]["FAST"] == 0
assert len(d["keys"]) > 0
assert all(k["change_pct"] == 0 for k in d["keys"] if k["change_pct"] is not None)
cases = ET.parse(sys.argv[2]).getroot().findall(".//testcase")
assert len(cases) == len(d["keys"])
assert not any(c.find("failure") is not None for c in cases)
PY
	grep -q "no regression" "$T/d.md" || fail "$(basename "$f"): Markdown headline"
done

# The planted pair from scripts/gpu/decision_rule.sh, when committed: only
# memory.copy.512MiB is 10% slower (real extra work inside the kernel).
if [ -s "$KPT_DATA/copy_base.kpt" ] && [ -s "$KPT_DATA/copy_plant10_512MiB.kpt" ]; then
	"$KPTPROF" diff "$KPT_DATA/copy_base.kpt" "$KPT_DATA/copy_plant10_512MiB.kpt" --json "$T/p.json" \
		--junit "$T/p.xml" >"$T/p.txt"
	rc=$?; [ $rc -eq 1 ] || { cat "$T/p.txt"; fail "planted 10%: exit $rc, want 1"; }
	python3 - "$T/p.json" "$T/p.xml" <<'PY' || fail "planted 10%: not exactly memory.copy.512MiB"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
slow = [k for k in d["keys"] if k["verdict"] == "SLOW"]
assert slow and all(k["workload"] == "memory.copy.512MiB" for k in slow), [(k["name"], k["workload"]) for k in slow]
assert all(7 < k["change_pct"] < 14 for k in slow), [k["change_pct"] for k in slow]
fails = [c for c in ET.parse(sys.argv[2]).getroot().findall(".//testcase") if c.find("failure") is not None]
assert len(fails) == len(slow)
PY
fi

# The README's main command: the committed H100 `default` baseline against an
# unchanged candidate (exit 0, no SLOW or FAST, no NEW or GONE) and against
# one with memory.copy.128MiB planted 5% slower (exit 1, exactly that key
# SLOW; JUnit classname from the baseline's suite; Markdown: headline, the
# SLOW table before <details>); the same baseline against the H200's (a real
# recording of another model): exit 2; `gate --from` of a default recording
# under --suite seed: exit 2.
B=${KPT_SRC:?}/baselines/nvidia-h100-80gb-hbm3/default.kpt
if [ -s "$B" ] && [ -s "$KPT_DATA/default_h100_candidate.kpt" ]; then
	"$KPTPROF" diff "$B" "$KPT_DATA/default_h100_candidate.kpt" --json "$T/m.json" >"$T/m.txt"
	rc=$?; [ $rc -eq 0 ] || fail "baseline vs unchanged candidate: exit $rc"
	python3 - "$T/m.json" <<'PY' || fail "baseline vs unchanged candidate: verdicts"
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
assert c["SLOW"] == 0 and c["FAST"] == 0 and c["NEW"] == 0 and c["GONE"] == 0, c
assert c["SAME"] > c["AMBG"], c
PY
	"$KPTPROF" diff "$B" "$KPT_DATA/default_h100_plant5_copy128MiB.kpt" --json "$T/q.json" --junit "$T/q.xml" \
		--markdown "$T/q.md" >"$T/q.txt"
	rc=$?; [ $rc -eq 1 ] || fail "baseline vs planted 5%: exit $rc, want 1"
	python3 - "$T/q.json" "$T/q.xml" "$T/q.md" <<'PY' || fail "baseline vs planted 5%: reports"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
slow = [k for k in d["keys"] if k["verdict"] == "SLOW"]
assert [k["workload"] for k in slow] == ["memory.copy.128MiB"], [(k["name"], k["workload"]) for k in slow]
assert 3 < slow[0]["change_pct"] < 7 and slow[0]["ci_low_pct"] > 2, slow[0]
assert d["result"] == "regression"
cases = ET.parse(sys.argv[2]).getroot().findall(".//testcase")
assert {c.get("classname") for c in cases} == {"nvidia-h100-80gb-hbm3/default"}
fails = [c for c in cases if c.find("failure") is not None]
assert len(fails) == 1 and "memory.copy.128MiB" in fails[0].get("name", "") + fails[0].find("failure").get("message", "") + (fails[0].find("failure").text or "")
md = open(sys.argv[3]).read()
assert md.splitlines()[0].startswith("## ") and "1 kernel SLOW" in md.splitlines()[0], md.splitlines()[0]
assert md.find("SLOW") < md.find("<details>"), "SLOW table must come before <details>"
PY
	H200=$KPT_SRC/baselines/nvidia-h200/default.kpt
	if [ -s "$H200" ]; then
		"$KPTPROF" diff "$B" "$H200" 2>"$T/err" >/dev/null
		rc=$?; [ $rc -eq 2 ] || fail "H100 vs H200 baseline: exit $rc, want 2"
		grep -q "different GPU models" "$T/err" || fail "H100 vs H200 message: $(cat "$T/err")"
	fi
	"$KPTPROF" gate --suite seed --from "$KPT_DATA/default_h100_candidate.kpt" --baselines "$KPT_SRC/baselines" \
		>/dev/null 2>"$T/err"
	rc=$?; [ $rc -eq 2 ] || fail "gate --suite seed of a default recording: exit $rc, want 2"
	grep -q "is a recording of suite 'default', not 'seed'" "$T/err" || fail "suite mismatch message: $(cat "$T/err")"
fi

SYNTH=${KPT_BUILD:?}/kpt-synth
if [ -x "$SYNTH" ]; then
	"$SYNTH" -o "$T/a100.kpt" --runs 2 --gpu "NVIDIA A100-SXM4-80GB" || fail "kpt-synth"
	"$KPTPROF" diff "${files[0]}" "$T/a100.kpt" 2>"$T/err"
	rc=$?; [ $rc -eq 2 ] || fail "real H100 vs A100: exit $rc, want 2"
	grep -q "different GPU models" "$T/err" || fail "mismatch message: $(cat "$T/err")"
fi
echo ok
