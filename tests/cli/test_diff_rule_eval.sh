#!/usr/bin/env bash
# The decision-rule evaluation on kpt-synth data (bench/analyzer/rule_eval_synth.sh)
# keeps its claims: A/A gates with the rule flag at most 1 of 40, the pooled
# U test flags most of them, and a 10% slowdown of a 288 us kernel is caught
# in every gate with M = 5.
set -u
[ -x "${KPT_BUILD:?}/kpt-rule-eval" ] && [ -x "$KPT_BUILD/kpt-synth" ] || { echo "skip: kpt-rule-eval or kpt-synth not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-rule-eval.XXXXXX)
trap 'rm -rf "$T"' EXIT
OUTMD="$T/eval.md" bash "$KPT_SRC/bench/analyzer/rule_eval_synth.sh" "$KPT_BUILD" 0.2 >"$T/log" 2>&1 \
	|| { cat "$T/log"; echo "FAIL: rule_eval_synth.sh"; exit 1; }
python3 - "$T/eval.md" <<'PY' || { cat "$T/eval.md"; echo "FAIL: evaluation claims"; exit 1; }
import re, sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| ") and "Case" not in l]
def cell(case, m, method):
    for r in rows:
        if r[0].strip().startswith(case) and r[2].strip() == str(m) and r[3].strip() == method:
            return int(re.match(r"\s*(\d+) / (\d+)", r[4]).group(1))
    raise KeyError((case, m, method))
for m in (3, 5):
    assert cell("A/A", m, "rule") <= 1
    assert cell("A/A", m, "pooled U") >= 30
assert cell("+10% long", 5, "rule") == 40
assert cell("+10% short", 5, "rule") == 40
PY
echo ok
