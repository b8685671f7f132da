#!/usr/bin/env bash
# test_baseline_swap.sh - issue 34 item 7: baseline update while another
# process keeps swapping the levels of the baselines folder (the GPU slug's
# folder, the suite's folder) for symbolic links to a folder outside,
# filled with files named as sessions that a followed prune would delete.
# Goal: 0 writes and 0 deletes outside in every trial; each update exits 0
# or fails with one line. KPT_SWAP_TRIALS (default 200) sets the trials.
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"
TRIALS=${KPT_SWAP_TRIALS:-200}
SLUG=nvidia-h100-80gb-hbm3

W=$T/work
BL=$W/baselines
OUT=$W/outside
mkdir -p "$BL/$SLUG/default" "$OUT/default"
# what a followed write or prune would hit: session-named files at both depths
for i in $(seq 1 5); do
	echo "precious $i" >"$OUT/2020010${i}T000000Z-aaaa.kpt"
	echo "precious $i" >"$OUT/default/2020010${i}T000000Z-aaaa.kpt"
done
outside() { (cd "$OUT" && find . -print0 | sort -z | xargs -0 ls -ld --time-style=+%s 2>&1
	find "$OUT" -type f -print0 | sort -z | xargs -0 md5sum); }
outside >"$T/before"
for i in $(seq 1 20); do
	"$H" session "$SLUG" default "GPU-5555$(printf %04d "$i")" "boot-$i" "2026-11-$(printf %02d "$i")T00:00:00Z" \
		"$T/s$i.kpt" || fail "kpt-hostile session $i"
done

# the swapper: the slug level, then the suite level, each for a moment a
# link to $OUT; it puts the real folder back each time (best effort: an
# update may make a fresh folder in the gap)
swapper() {
	while :; do
		for lv in "$BL/$SLUG" "$BL/$SLUG/default"; do
			mv -T "$lv" "$lv.real" 2>/dev/null || continue
			ln -s "$OUT" "$lv" 2>/dev/null
			sleep 0.00$((RANDOM % 3))
			[ -L "$lv" ] && rm -f "$lv"
			[ -e "$lv" ] || mv -T "$lv.real" "$lv" 2>/dev/null
			[ -e "$lv.real" ] && rm -rf "$lv.real"
		done
	done
}
swapper &
SW=$!
trap 'kill $SW 2>/dev/null; wait $SW 2>/dev/null; rm -rf "$T"' EXIT

ok=0 refused=0
for t in $(seq 1 "$TRIALS"); do
	i=$(((t % 20) + 1))
	timeout 20 "$KPTPROF" baseline update "$T/s$i.kpt" --baselines "$BL" --keep 1 >"$T/out" 2>"$T/err"
	rc=$?
	case $rc in
	0) ok=$((ok + 1)) ;;
	2) refused=$((refused + 1))
	   [ "$(grep -vc '^hint: \|^kptprof baseline: ' "$T/err")" = 1 ] || fail "trial $t: not one line: $(cat "$T/err")" ;;
	*) fail "trial $t: exit $rc: $(cat "$T/err")" ;;
	esac
done
kill $SW 2>/dev/null
wait $SW 2>/dev/null
outside >"$T/after"
cmp -s "$T/before" "$T/after" || fail "updates changed the folder outside: $(diff "$T/before" "$T/after" | head -20)"
[ "$ok" -gt 0 ] || fail "no update succeeded in $TRIALS trials (the test would prove nothing)"
echo "ok: $TRIALS trials, $ok updated, $refused refused, 0 writes outside"
