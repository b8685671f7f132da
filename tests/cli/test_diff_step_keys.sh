#!/usr/bin/env bash
# Step-time keys: a recording whose meta names NVTX step ranges
# ("step_ranges", written by kpt_record_project for a project workload that
# times steps) gets one key per named range path, compared beside the
# kernels: its wall times are the samples, its config "-". A recording
# without the meta key gets none; a listed path no range has adds nothing.
set -u
SYNTH=${KPT_BUILD:?}/kpt-synth
[ -x "$SYNTH" ] || { echo "skip: kpt-synth not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-step.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$SYNTH" -o "$T/a.kpt" --runs 6 --seed 5 --noise 0.5 --meta step_ranges=synth.workload/mlp,nosuch/step \
	|| fail "kpt-synth"
"$SYNTH" -o "$T/plain.kpt" --runs 6 --seed 5 --noise 0.5 || fail "kpt-synth"
"$KPTPROF" diff "$T/a.kpt" "$T/a.kpt" --all --json "$T/a.json" >"$T/a.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/a.txt"; fail "self diff exit $rc"; }
python3 - "$T/a.json" <<'EOF' || fail "step key in JSON"
import json, sys
d = json.load(open(sys.argv[1]))
steps = [k for k in d["keys"] if k["name"] == "step time (NVTX range)"]
assert len(steps) == 1, [k["name"] for k in steps]
k = steps[0]
assert k["path"] == "synth.workload/mlp", k["path"]
# the mlp range holds several kernels: its wall time is larger than any one
kern = [x for x in d["keys"] if x["path"] == "synth.workload/mlp" and x is not k]
assert kern and k["base_ns"] > max(x["base_ns"] for x in kern), (k["base_ns"], [x["base_ns"] for x in kern])
assert k["verdict"] == "SAME", k["verdict"]
EOF
grep -q '^step time (NVTX range) .* - ' "$T/a.txt" || { cat "$T/a.txt"; fail "step row with config '-' in the table"; }
"$KPTPROF" diff "$T/plain.kpt" "$T/plain.kpt" --all >"$T/p.txt" || fail "plain self diff"
grep -q "step time" "$T/p.txt" && fail "a step key without step_ranges meta"
echo "ok"
