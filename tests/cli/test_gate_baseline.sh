#!/usr/bin/env bash
# kptprof baseline list|show|update|path and kptprof gate --from FILE on
# kpt-synth recordings; gate without a GPU skips (77).
set -u
SYNTH=${KPT_BUILD:?}/kpt-synth
[ -x "$SYNTH" ] || { echo "skip: kpt-synth not built"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-gate.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
BL="$T/baselines"
SLUG=nvidia-h100-80gb-hbm3

"$SYNTH" -o "$T/rec.kpt" --runs 10 --seed 5 --noise 0.5 --suite quick || fail "kpt-synth"
"$SYNTH" -o "$T/slow.kpt" --runs 10 --seed 5 --noise 0.5 --suite quick --slow "kpt:::15" || fail "kpt-synth --slow"
"$SYNTH" -o "$T/one.kpt" --runs 1 --seed 5 --suite quick || fail "kpt-synth --runs 1"

out=$("$KPTPROF" baseline update "$T/rec.kpt" --baselines "$BL") || fail "baseline update"
[ "$out" = "$BL/$SLUG/quick.kpt" ] || fail "baseline update printed '$out'"
cmp -s "$T/rec.kpt" "$BL/$SLUG/quick.kpt" || fail "baseline copy differs"
"$KPTPROF" baseline list --baselines "$BL" | grep -q "$SLUG .*quick" || fail "baseline list"
out=$("$KPTPROF" baseline path --baselines "$BL" --gpu "NVIDIA H100 80GB HBM3" --suite quick)
[ "$out" = "$BL/$SLUG/quick.kpt" ] || fail "baseline path printed '$out'"
out=$("$KPTPROF" baseline path --baselines "$BL" --from "$T/rec.kpt" --suite quick)
[ "$out" = "$BL/$SLUG/quick.kpt" ] || fail "baseline path --from printed '$out'"
"$KPTPROF" baseline show --baselines "$BL" --from "$T/rec.kpt" --suite quick | grep -q "^runs: *10" || fail "baseline show"
"$KPTPROF" baseline update "$T/one.kpt" --baselines "$BL" --suite one 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "1-run baseline accepted (exit $rc)"
grep -q "runs" "$T/err" || fail "1-run message: $(cat "$T/err")"
"$KPTPROF" baseline frobnicate 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "unknown action: exit $rc"

# gate --from: no regression against itself (disjoint runs), regression with a slowdown.
"$KPTPROF" gate --suite quick --baselines "$BL" --from "$T/rec.kpt" -q --base-runs 0-4 --new-runs 5-9
rc=$?; [ $rc -eq 0 ] || fail "gate A/A: exit $rc"
"$KPTPROF" gate --suite quick --baselines "$BL" --from "$T/slow.kpt" --junit "$T/g.xml" -q \
	--base-runs 0-4 --new-runs 5-9
rc=$?; [ $rc -eq 1 ] || fail "gate with slowdown: exit $rc, want 1"
grep -q "classname=\"$SLUG/quick\"" "$T/g.xml" || fail "gate JUnit classname"
# No baseline for this suite: exit 2 and say how to make one.
mkdir -p "$T/none"; "$KPTPROF" gate --suite quick --baselines "$T/none" --from "$T/rec.kpt" 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "gate without baseline: exit $rc"
grep -q "kptprof baseline update" "$T/err" || fail "gate without baseline hint: $(cat "$T/err")"
"$KPTPROF" gate --suite quick --baselines "$T/none" --from "$T/rec.kpt" --json "$T/e.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["result"]=="error" and "no baseline" in d["error"]' \
	"$T/e.json" || fail "gate without baseline: no error JSON"
# A recording of another suite is refused, naming both.
"$KPTPROF" gate --suite default --baselines "$BL" --from "$T/rec.kpt" 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "gate of a quick recording as default: exit $rc"
grep -q "is a recording of suite 'quick', not 'default'" "$T/err" || fail "suite mismatch: $(cat "$T/err")"
# No GPU here: gate that must record skips.
if [ ! -e /dev/nvidiactl ] && [ ! -e /proc/driver/nvidia/version ]; then
	"$KPTPROF" gate --suite quick --baselines "$BL" 2>"$T/err"
	rc=$?; [ $rc -eq 77 ] || fail "gate without GPU: exit $rc, want 77"
	grep -q "no NVIDIA GPU" "$T/err" || fail "gate without GPU message"
fi
echo ok
