#!/usr/bin/env bash
# Calibration on the probes (docs/decision-rule.md, "Calibration"): with
# --probe-calibration, when every base session and NEW carry meta
# calibration.* measured alike (the same calibration.where), the rule's
# candidates are the probes (copy, bf16, fp8, sm) instead of the device's
# copy and bf16 ceilings; without it (the default), the device's. Six synthetic
# machines (kpt-synth --probes) whose one GEMM follows the fp8 probe
# (--follow; --stable spares it the machine's own factor) while the other
# probes wander independently: (a) with the probes that key's machine noise
# drops and +5% of it on a seventh machine is SLOW, without calibration
# AMBG; (b) the seventh machine unchanged has no SLOW or FAST; (c) a base
# where one session lacks the probes, or measured them elsewhere, falls
# back to the device ceilings, and the note says so; so does one whose
# calibration.* values are not numbers > 0.
set -u
SYNTH=${KPT_BUILD:?}/kpt-synth
[ -x "$SYNTH" ] || { echo "skip: kpt-synth not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-calprobe.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
V=tilesize32x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v23
common=(--runs 5 --seed 3 --noise 0.1 --within 0.2 --stable "$V" --follow "$V:fp8")
# per machine 1..7: copy GB/s, bf16 and fp8 TFLOP/s, SM MHz; fp8 spreads 3%
copy=(0 3010 2950 3050 2990 3030 2970 3000)
bf16=(0 800 790 805 795 810 785 798)
fp8=(0 1560 1650 1600 1530 1620 1580 1610)
sm=(0 1980 1975 1985 1970 1990 1978 1982)
probes() { echo "${copy[$1]}:${bf16[$1]}:${fp8[$1]}:${sm[$1]}"; }
for m in 1 2 3 4 5 6; do
	"$SYNTH" -o "$T/b$m.kpt" "${common[@]}" --machine "1.3:$m" --meta "boot_id=b$m" --probes "$(probes $m)" ||
		fail "kpt-synth"
done
# machine 6 again, without probes (a recording from before them) and with
# probes measured elsewhere
"$SYNTH" -o "$T/old6.kpt" "${common[@]}" --machine 1.3:6 --meta boot_id=b6 || fail "kpt-synth"
"$SYNTH" -o "$T/boot6.kpt" "${common[@]}" --machine 1.3:6 --meta boot_id=b6 --probes "$(probes 6)" \
	--probe-where "once per boot, in a process of its own" || fail "kpt-synth"
# and with probe values that are not numbers > 0 (ignored: no probes)
"$SYNTH" -o "$T/junk6.kpt" "${common[@]}" --machine 1.3:6 --meta boot_id=b6 --meta "calibration.where=in each run" \
	--meta calibration.copy_gbps=inf --meta calibration.bf16_tflops=-800 --meta calibration.fp8_tflops=1610abc \
	--meta calibration.sm_mhz=nan || fail "kpt-synth"
n7=(--machine 1.3:7 --meta boot_id=b7 --probes "$(probes 7)")
"$SYNTH" -o "$T/slow.kpt" "${common[@]}" "${n7[@]}" --slow "$V:5" || fail "kpt-synth"
"$SYNTH" -o "$T/same.kpt" "${common[@]}" "${n7[@]}" || fail "kpt-synth"
base=("$T"/b{1,2,3,4,5,6}.kpt)

# (a) the probes take fp8 out of the GEMM: +5% is SLOW, and only it
"$KPTPROF" diff "${base[@]}" "$T/slow.kpt" --probe-calibration --json "$T/on.json" >"$T/on.txt"
rc=$?; [ $rc -eq 1 ] || { cat "$T/on.txt"; fail "+5% with probes: exit $rc, want 1"; }
grep "$V" "$T/on.txt" | grep -q " SLOW$" || { cat "$T/on.txt"; fail "the fp8-bound GEMM is not SLOW with probes"; }
[ "$(grep -cE ' (SLOW|FAST)$' "$T/on.txt")" -eq 1 ] || { cat "$T/on.txt"; fail "other keys SLOW or FAST"; }
grep -Eq "calibration \(probes measured in each run\): bf16 taken out of [0-9]+ keys, fp8 of [1-9][0-9]*, copy of [0-9]+, sm of [0-9]+ .*6 machines" "$T/on.txt" ||
	{ cat "$T/on.txt"; fail "no probe calibration note naming fp8"; }
grep -Eq "probes of new against the base's sessions: copy [+-][0-9.]+%, bf16 [+-][0-9.]+%, e4m3 [+-][0-9.]+%, SM [+-][0-9.]+%" "$T/on.txt" ||
	{ cat "$T/on.txt"; fail "no probes line beside the ceilings"; }
"$KPTPROF" diff "${base[@]}" "$T/slow.kpt" --no-calibration --json "$T/off.json" >"$T/off.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/off.txt"; fail "+5% without calibration: exit $rc, want 0"; }
grep "$V" "$T/off.txt" | grep -q " AMBG" || { cat "$T/off.txt"; fail "the GEMM is not AMBG without calibration"; }
grep -q "calibration" "$T/off.txt" && { cat "$T/off.txt"; fail "--no-calibration still notes a calibration"; }

# (b) A/A on the seventh machine
"$KPTPROF" diff "${base[@]}" "$T/same.kpt" --probe-calibration >"$T/same.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/same.txt"; fail "A/A with probes: exit $rc, want 0"; }
grep -Eq ' (SLOW|FAST)$' "$T/same.txt" && { cat "$T/same.txt"; fail "A/A with probes: SLOW or FAST"; }
grep -q "calibration (probes" "$T/same.txt" || { cat "$T/same.txt"; fail "A/A: no probe calibration"; }

# (c) one base session without probes, measured elsewhere, or with junk
# for probes: the device's
# ceilings, as before the probes
for odd in old6 boot6 junk6; do
	"$KPTPROF" diff "$T"/b{1,2,3,4,5}.kpt "$T/$odd.kpt" "$T/slow.kpt" --probe-calibration --json "$T/$odd.json" >"$T/$odd.txt"
	grep -q "calibration: bf16 ceiling taken out of [0-9]* keys, copy ceiling out of" "$T/$odd.txt" ||
		{ cat "$T/$odd.txt"; fail "$odd: no device-ceiling calibration note"; }
	grep -q "calibration (probes" "$T/$odd.txt" && { cat "$T/$odd.txt"; fail "$odd: the probes were used"; }
	grep -q "not the probes: not every session carries them" "$T/$odd.txt" ||
		{ cat "$T/$odd.txt"; fail "$odd: the note does not say why not the probes"; }
	grep "$V" "$T/$odd.txt" | grep -q " SLOW$" && { cat "$T/$odd.txt"; fail "$odd: the GEMM is SLOW without probes"; }
done

# (d) the default is the device ceilings, probes or not (--probe-calibration
# is opt-in: on six fresh H200s the probes explained less)
"$KPTPROF" diff "${base[@]}" "$T/slow.kpt" >"$T/dflt.txt"
grep -q "calibration: bf16 ceiling taken out of [0-9]* keys, copy ceiling out of" "$T/dflt.txt" ||
	{ cat "$T/dflt.txt"; fail "default: no device-ceiling calibration note"; }
grep -q "calibration (probes" "$T/dflt.txt" && { cat "$T/dflt.txt"; fail "default: the probes were used"; }
grep -q "probes of new" "$T/dflt.txt" && { cat "$T/dflt.txt"; fail "default: a probes line"; }
grep -q "not the probes" "$T/dflt.txt" && { cat "$T/dflt.txt"; fail "default: the note speaks of probes not asked for"; }

# (e) --probe-calibration with --no-calibration: a usage error before
# anything is read or recorded, in every command that takes both
for c in "diff ${base[*]} $T/slow.kpt" "gate --from $T/slow.kpt" "view $T/slow.kpt -o $T/v" "ab -- true ::: true"; do
	# shellcheck disable=SC2086
	KPTPROF_SKIP_GPU_CHECK=1 "$KPTPROF" ${c%% *} --probe-calibration --no-calibration ${c#* } >"$T/x.out" 2>"$T/x.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^kptprof ${c%% *}: --probe-calibration and --no-calibration contradict each other$" "$T/x.err" ||
		fail "${c%% *} with both: exit $rc, $(cat "$T/x.err")"
done
[ -e "$T/v" ] && fail "view wrote its folder despite the usage error"

python3 - "$T/on.json" "$T/off.json" "$V" <<'PY' || fail "JSON"
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
note = [n for n in on["notes"] if n["what"] == "calibration"]
assert note and "fp8 of " in note[0]["text"], note
noise = lambda d: [k["noise_pct"] for k in d["keys"] if sys.argv[3] in k["name"]]
a, b = noise(on), noise(off)
assert len(a) == 1 and len(b) == 1, (a, b)
assert a[0] < 0.5 * b[0], ("GEMM noise with probes %.2f%%, without %.2f%%" % (a[0], b[0]))
PY
echo "ok"
