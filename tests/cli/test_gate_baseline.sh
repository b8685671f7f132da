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

# An older single-file baseline is moved into the suite's folder of sessions
# by the first update.
mkdir -p "$BL/$SLUG"
"$SYNTH" -o "$BL/$SLUG/quick.kpt" --runs 5 --seed 7 --noise 0.5 --suite quick \
	--meta time=2026-11-20T00:00:00Z --meta boot_id=old || fail "kpt-synth old"
out=$("$KPTPROF" baseline update "$T/rec.kpt" --baselines "$BL" 2>"$T/err") || fail "baseline update"
case $out in "$BL/$SLUG/quick/"*.kpt) ;; *) fail "baseline update printed '$out'" ;; esac
cmp -s "$T/rec.kpt" "$out" || fail "baseline copy differs"
[ ! -e "$BL/$SLUG/quick.kpt" ] || fail "the single-file baseline was not moved"
[ "$(ls "$BL/$SLUG/quick" | wc -l)" -eq 2 ] || fail "folder holds $(ls "$BL/$SLUG/quick")"
grep -q "holds 2 sessions" "$T/err" || fail "update did not say how many sessions: $(cat "$T/err")"
"$KPTPROF" baseline list --baselines "$BL" | grep -q "$SLUG .*quick" || fail "baseline list"
out=$("$KPTPROF" baseline path --baselines "$BL" --gpu "NVIDIA H100 80GB HBM3" --suite quick)
[ "$out" = "$BL/$SLUG/quick" ] || fail "baseline path printed '$out'"
out=$("$KPTPROF" baseline path --baselines "$BL" --from "$T/rec.kpt" --suite quick)
[ "$out" = "$BL/$SLUG/quick" ] || fail "baseline path --from printed '$out'"
"$KPTPROF" baseline show --baselines "$BL" --from "$T/rec.kpt" --suite quick | grep -q "(2 sessions)" || fail "baseline show"
# Sessions: another boot of the machine is a new session; the same boot
# again replaces its older recording; --keep drops the oldest.
for i in 1 2 3; do
	"$SYNTH" -o "$T/s$i.kpt" --runs 5 --seed $((20 + i)) --noise 0.5 --suite quick \
		--meta time=2026-11-2${i}T00:00:00Z --meta boot_id=boot$i || fail "kpt-synth s$i"
	"$KPTPROF" baseline update "$T/s$i.kpt" --baselines "$BL" >/dev/null 2>&1 || fail "update s$i"
done
[ "$(ls "$BL/$SLUG/quick" | wc -l)" -eq 5 ] || fail "5 sessions expected: $(ls "$BL/$SLUG/quick")"
"$SYNTH" -o "$T/s3b.kpt" --runs 5 --seed 23 --noise 0.5 --suite quick \
	--meta time=2026-11-23T05:00:00Z --meta boot_id=boot3 || fail "kpt-synth s3b"
"$KPTPROF" baseline update "$T/s3b.kpt" --baselines "$BL" >/dev/null 2>"$T/err" || fail "update s3b"
grep -q "same session" "$T/err" || fail "same boot not replaced: $(cat "$T/err")"
[ "$(ls "$BL/$SLUG/quick" | wc -l)" -eq 5 ] || fail "same session added: $(ls "$BL/$SLUG/quick")"
"$KPTPROF" baseline update "$T/s1.kpt" --baselines "$BL" --keep 3 >/dev/null 2>"$T/err" || fail "update --keep"
[ "$(ls "$BL/$SLUG/quick" | wc -l)" -eq 3 ] || fail "--keep 3 left $(ls "$BL/$SLUG/quick")"
ls "$BL/$SLUG/quick" | grep -q 20261120 && fail "--keep kept the oldest session"
"$KPTPROF" baseline update "$T/s1.kpt" --baselines "$BL" --keep 0 2>/dev/null
[ $? -eq 2 ] || fail "--keep 0 accepted"
# a folder without sessions, or with a truncated one, is an error naming it
mkdir -p "$T/empty"
"$KPTPROF" diff "$T/empty" "$T/rec.kpt" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "holds no .kpt sessions" "$T/err" || fail "empty baseline folder: $(cat "$T/err")"
mkdir -p "$T/trunc" && head -c 3000 "$T/s1.kpt" >"$T/trunc/a.kpt" && cp "$T/s2.kpt" "$T/trunc/b.kpt"
"$KPTPROF" diff "$T/trunc" "$T/rec.kpt" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && grep -q "trunc/a.kpt" "$T/err" || fail "truncated session: $(cat "$T/err")"
# the folder is a baseline of several sessions for diff
"$KPTPROF" diff "$BL/$SLUG/quick" "$T/rec.kpt" -q --json "$T/s.json"
rc=$?; [ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "diff of a folder: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["base"]["runs"] == 15, d["base"]' "$T/s.json" \
	|| fail "diff of a folder: not 3 sessions of 5 runs"
"$KPTPROF" baseline update "$T/one.kpt" --baselines "$BL" --suite one 2>"$T/err"
rc=$?; [ $rc -eq 2 ] || fail "1-run baseline accepted (exit $rc)"
grep -q "runs" "$T/err" || fail "1-run message: $(cat "$T/err")"
"$KPTPROF" baseline frobnicate 2>/dev/null
rc=$?; [ $rc -eq 2 ] || fail "unknown action: exit $rc"

# gate --from: no regression against itself (disjoint runs), regression with a slowdown.
rm -rf "$BL/$SLUG/quick"; mkdir -p "$BL/$SLUG/quick"
cp "$T/rec.kpt" "$BL/$SLUG/quick/a.kpt"
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
