#!/usr/bin/env bash
# Calibration (docs/decision-rule.md, "Calibration"): across 5+ machines
# whose recordings carry measured ceilings, a key whose machines' means agree
# better with a ceiling taken out (time x ceiling) has it taken out, and a
# note says of how many keys. On the committed H200 baseline (9 hosts or more) the
# fp8 8192^3 GEMM, which follows the bf16 ceiling, gets a much smaller
# machine noise against 8 of them than without; --no-calibration and a base
# of 4 machines take nothing out (no note).
set -u
shopt -s nullglob
H200=("${KPT_SRC:?}"/baselines/nvidia-h200/default/*.kpt)
[ ${#H200[@]} -ge 9 ] || { echo "skip: the H200 baseline is not here"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-calib.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

new=${H200[8]}
"$KPTPROF" diff "${H200[@]:0:8}" "$new" --json "$T/on.json" >"$T/on.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/on.txt"; fail "A/A with calibration: exit $rc, want 0"; }
grep -Eq "calibration: bf16 ceiling taken out of [1-9][0-9]* keys, copy ceiling out of [0-9]+ .*8 machines" "$T/on.txt" ||
	{ cat "$T/on.txt"; fail "no calibration note"; }
"$KPTPROF" diff "${H200[@]:0:8}" "$new" --no-calibration --json "$T/off.json" >"$T/off.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/off.txt"; fail "A/A without calibration: exit $rc, want 0"; }
grep -q "calibration" "$T/off.txt" && { cat "$T/off.txt"; fail "--no-calibration still notes a calibration"; }
"$KPTPROF" diff "${H200[@]:0:4}" "$new" --json "$T/four.json" >"$T/four.txt"
grep -q "calibration" "$T/four.txt" && { cat "$T/four.txt"; fail "4 base machines: calibrated (needs 5)"; }
python3 - "$T/on.json" "$T/off.json" "$T/four.json" <<'PY' || fail "JSON"
import json, sys
on, off, four = (json.load(open(p)) for p in sys.argv[1:4])
assert [n for n in on["notes"] if n["what"] == "calibration"], "no calibration note in the JSON"
assert not [n for n in off["notes"] + four["notes"] if n["what"] == "calibration"]
noise = lambda d: [k["noise_pct"] for k in d["keys"] if k["workload"] == "fp8.gemm.e4m3xe4m3.8192x8192x8192"]
a, b = noise(on), noise(off)
assert len(a) == 1 and len(b) == 1, (a, b)
assert a[0] < 0.6 * b[0], ("fp8 GEMM noise with calibration %.2f%%, without %.2f%%" % (a[0], b[0]))
PY
echo "ok"
