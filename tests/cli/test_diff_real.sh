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

# The README's main command: the committed H100 `default` baseline (a folder
# of sessions from several machines) against recordings of a machine that is
# not among them (tests/data/heldout_h100_*.kpt, 308f1d3:bench/analyzer/pool-20261124
# h100-10): unchanged, 10, 5 and 3 runs: exit 0, no SLOW or FAST, no NEW or
# GONE, the note on sessions; with memory.copy.128MiB +5% and
# memory.triad.f32.64M +2% planted (real extra work): exit 1, exactly those
# two SLOW (JUnit classname from the baseline's suite; Markdown headline and
# the SLOW table before <details>). The H200 folder against its held-out
# recording: exit 0; H100 against H200: exit 2; `gate --from` of a default
# recording under --suite seed: exit 2.
B=${KPT_SRC:?}/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/default
H200=$KPT_SRC/tests/data/baselines-20261124/nvidia-h200/default
[ -d "$B" ] && [ -d "$H200" ] || fail "committed baseline folders missing"
for runs in all 0-4 5-7; do
	sel=(); [ $runs = all ] || sel=(--new-runs $runs)
	"$KPTPROF" diff "$B" "$KPT_DATA/heldout_h100_pool.kpt" "${sel[@]}" --json "$T/m.json" >"$T/m.txt"
	rc=$?; [ $rc -eq 0 ] || { cat "$T/m.txt"; fail "baseline vs held-out unchanged ($runs): exit $rc"; }
	python3 - "$T/m.json" <<'PY' || fail "baseline vs held-out unchanged ($runs): verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["counts"]
assert c["SLOW"] == 0 and c["FAST"] == 0 and c["NEW"] == 0 and c["GONE"] == 0, c
assert c["SAME"] > c["AMBG"], c
assert any(n["what"] == "sessions" and "sessions" in n["text"] for n in d["notes"]), d["notes"]
assert any(k["aggregated"] >= 3 for k in d["keys"]), "the MoE layer's GEMMs are not aggregated"
assert all(k["between_pct"] is None or k["between_pct"] >= 0 for k in d["keys"])
PY
done
"$KPTPROF" diff "$B" "$KPT_DATA/heldout_h100_plant.kpt" --json "$T/q.json" --junit "$T/q.xml" \
	--markdown "$T/q.md" >"$T/q.txt"
rc=$?; [ $rc -eq 1 ] || { cat "$T/q.txt"; fail "baseline vs held-out planted: exit $rc, want 1"; }
python3 - "$T/q.json" "$T/q.xml" "$T/q.md" <<'PY' || fail "baseline vs held-out planted: reports"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
slow = sorted((k["workload"], k["change_pct"]) for k in d["keys"] if k["verdict"] == "SLOW")
assert [w for w, _ in slow] == ["memory.copy.128MiB", "memory.triad.f32.64M"], slow
assert 3.5 < slow[0][1] < 6.5 and 1.2 < slow[1][1] < 3, slow
assert d["result"] == "regression"
cases = ET.parse(sys.argv[2]).getroot().findall(".//testcase")
assert {c.get("classname") for c in cases} == {"nvidia-h100-80gb-hbm3/default"}
fails = [c for c in cases if c.find("failure") is not None]
assert len(fails) == 2
md = open(sys.argv[3]).read()
assert md.splitlines()[0].startswith("## ") and "2 kernels SLOW" in md.splitlines()[0], md.splitlines()[0]
assert md.find("SLOW") < md.find("<details>"), "SLOW table must come before <details>"
PY
"$KPTPROF" diff "$H200" "$KPT_DATA/heldout_h200_pool.kpt" -q
rc=$?; [ $rc -eq 0 ] || fail "H200 baseline vs held-out unchanged: exit $rc"
"$KPTPROF" diff "$B" "$KPT_DATA/heldout_h200_pool.kpt" 2>"$T/err" >/dev/null
rc=$?; [ $rc -eq 2 ] || fail "H100 baseline vs H200 recording: exit $rc, want 2"
grep -q "different GPU models" "$T/err" || fail "H100 vs H200 message: $(cat "$T/err")"
# One session: the between-machine part is the prior, and the report says so.
one=$(ls "$B"/20261122*.kpt | head -n 1)
"$KPTPROF" diff "$one" "$KPT_DATA/default_h100_candidate.kpt" --json "$T/o.json" >/dev/null
rc=$?; [ $rc -eq 0 ] || fail "one-session baseline vs unchanged candidate: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(n["what"]=="sessions" and "prior" in n["text"] for n in d["notes"]), d["notes"]' \
	"$T/o.json" || fail "one-session baseline: no note on the prior"
"$KPTPROF" gate --suite seed --from "$KPT_DATA/heldout_h100_pool.kpt" --baselines "$KPT_SRC/baselines" \
	>/dev/null 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "gate --suite seed of a default recording: exit $rc, want 2"
grep -q "is a recording of suite 'default', not 'seed'" "$T/err" || fail "suite mismatch message: $(cat "$T/err")"
"$KPTPROF" gate --suite default --from "$KPT_DATA/heldout_h100_pool.kpt" --baselines "$KPT_SRC/tests/data/baselines-20261124" -q
rc=$?; [ $rc -eq 0 ] || fail "gate --from the held-out recording: exit $rc"
# The committed H100 baseline (7 fresh machines, 2026-11-26) and the eighth
# machine of that day, held out: unchanged exit 0; copy +5% and triad +2%,
# or the E128 MoE FFN and the d64 forward +5%: exactly those SLOW, exit 1.
"$KPTPROF" gate --suite default --from "$KPT_DATA/heldout_h100_s11.kpt" --baselines "$KPT_SRC/baselines" -q
rc=$?; [ $rc -eq 0 ] || fail "gate --from the 2026-11-26 held-out recording: exit $rc"
for p in plant:copy_vec,triad_vec plant_moe:moe_ffn_sm90_kernel,moe_ffn_sm90_kernel,attn_fwd_sm90_d64_kernel; do
	f=$KPT_DATA/heldout_h100_s11_${p%%:*}.kpt
	"$KPTPROF" gate --suite default --from "$f" --baselines "$KPT_SRC/baselines" >"$T/p.out" 2>/dev/null
	rc=$?; [ $rc -eq 1 ] || fail "gate --from $f: exit $rc, want 1"
	got=$(grep -E ' SLOW$' "$T/p.out" | grep -oE 'copy_vec|triad_vec|moe_ffn_sm90_kernel|attn_fwd_sm90_d64_kernel' | paste -sd, -)
	[ "$got" = "${p#*:}" ] || fail "$f: SLOW kernels '$got', want '${p#*:}'"
done

# kptprof ab's recordings (bench/analyzer/ab_call.sh, an H100): the A/A pair
# under the paired rule and ab's 1% threshold: exit 0; the pair with
# memory.copy.128MiB and memory.triad.f32.64M planted 2% slower: exit 1 with
# exactly those two SLOW; unpaired, the same plant is not separated from
# the run-to-run noise as sharply (wider intervals).
"$KPTPROF" diff --paired --threshold 1 "$KPT_DATA/ab_h100_aa_a.kpt" "$KPT_DATA/ab_h100_aa_b.kpt" -q
rc=$?; [ $rc -eq 0 ] || fail "ab A/A: exit $rc"
"$KPTPROF" diff --paired --threshold 1 "$KPT_DATA/ab_h100_plant_a.kpt" "$KPT_DATA/ab_h100_plant_b.kpt" --json "$T/ab.json" -q
rc=$?; [ $rc -eq 1 ] || fail "ab planted: exit $rc, want 1"
"$KPTPROF" diff --threshold 1 "$KPT_DATA/ab_h100_plant_a.kpt" "$KPT_DATA/ab_h100_plant_b.kpt" --json "$T/un.json" -q
python3 - "$T/ab.json" "$T/un.json" <<'PY' || fail "ab planted: verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
slow = sorted(k["workload"] for k in d["keys"] if k["verdict"] == "SLOW")
assert slow == ["memory.copy.128MiB", "memory.triad.f32.64M"], slow
assert any(n["what"] == "sessions" and "paired" in n["text"] for n in d["notes"]), d["notes"]
u = {k["workload"]: k for k in json.load(open(sys.argv[2]))["keys"]}
for k in d["keys"]:
    if k["verdict"] == "SLOW":
        w = u[k["workload"]]
        assert k["ci_high_pct"] - k["ci_low_pct"] < w["ci_high_pct"] - w["ci_low_pct"], (k, w)
PY

SYNTH=${KPT_BUILD:?}/kpt-synth
if [ -x "$SYNTH" ]; then
	"$SYNTH" -o "$T/a100.kpt" --runs 2 --gpu "NVIDIA A100-SXM4-80GB" || fail "kpt-synth"
	"$KPTPROF" diff "${files[0]}" "$T/a100.kpt" 2>"$T/err"
	rc=$?; [ $rc -eq 2 ] || fail "real H100 vs A100: exit $rc, want 2"
	grep -q "different GPU models" "$T/err" || fail "mismatch message: $(cat "$T/err")"
fi
echo ok
