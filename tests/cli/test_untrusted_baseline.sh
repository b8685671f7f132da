#!/usr/bin/env bash
# test_untrusted_baseline.sh - `baseline update` and `gate --from` on
# recordings that come from someone else (issue 21, items 2, 5, 8): the GPU
# slug, suite and UUID never lead a write or delete out of --baselines; a
# damaged recording replaces nothing; only session files are pruned; stale
# temporary files of killed updates go; /dev/full is an error.
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"

BL=$T/work/baselines
mkdir -p "$T/work/victim/default" "$BL"
for i in $(seq 1 17); do echo "precious $i" >"$T/work/victim/default/2026010${i}T000000Z-aaaa.kpt"; done
# the number and content of every file outside $BL, to compare after each update
outside() { (cd "$T/work" && find . -path ./baselines -prune -o -type f -print0 | sort -z | xargs -0 md5sum); }
outside >"$T/before"
assert_outside_unchanged() {
	outside >"$T/after"
	cmp -s "$T/before" "$T/after" || fail "$1 changed files outside --baselines: $(diff "$T/before" "$T/after")"
}

session() { "$H" session "$@" || fail "kpt-hostile session $*"; }

# item 2: slugs and suites with '..' or '/' are refused before any write
session ../victim default GPU-11111111 b1 2026-11-25T00:00:00Z "$T/slug.kpt"
run "$KPTPROF" baseline update "$T/slug.kpt" --baselines "$BL" --keep 16
expect_rc 2 "update of a recording whose slug is '../victim'"
expect_err "not a safe folder name"
assert_outside_unchanged "slug ../victim"
for suite in .. ../victim a/b .hidden "UP" "x..y"; do
	session nvidia-h100-80gb-hbm3 "$suite" GPU-11111111 b1 2026-11-25T00:00:00Z "$T/suite.kpt"
	run "$KPTPROF" baseline update "$T/suite.kpt" --baselines "$BL"
	expect_rc 2 "update of a recording of suite '$suite'"
	expect_err "not a safe folder name"
	run "$KPTPROF" baseline update "$T/ok.kpt" --baselines "$BL" --suite "$suite"
	expect_rc 2 "update --suite '$suite'"
done
session $'nvidia\x1b[31m' default GPU-11111111 b1 2026-11-25T00:00:00Z "$T/esc.kpt"
run "$KPTPROF" baseline update "$T/esc.kpt" --baselines "$BL"
expect_rc 2 "update of a recording whose slug holds ESC"
grep -q $'\x1b' "$T/err" && fail "the refusal printed the ESC byte"
assert_outside_unchanged "suites"
[ -z "$(ls -A "$BL")" ] || fail "refused updates left something in --baselines: $(ls -R "$BL")"

# a UUID with '/' and '..' becomes a plain file name inside the suite folder
session nvidia-h100-80gb-hbm3 default "GPU-../../../../x" b1 2026-11-25T00:00:00Z "$T/uuid.kpt"
run "$KPTPROF" baseline update "$T/uuid.kpt" --baselines "$BL"
expect_rc 0 "update of a recording whose UUID holds '../'"
expect_out "$BL/nvidia-h100-80gb-hbm3/default/20261125T000000Z-x.kpt"
assert_outside_unchanged "uuid ../"

# gate --from reads DIR/<slug>/<suite>: the same refusal
run "$KPTPROF" gate --from "$T/slug.kpt" --baselines "$BL"
expect_rc 2 "gate --from a recording whose slug is '../victim'"
expect_err "not a safe folder name"
run "$KPTPROF" gate --from "$T/uuid.kpt" --baselines "$BL" --suite ..
expect_rc 2 "gate --suite .."

# item 5: a damaged recording (header, TOC, devices and meta fine; kernels
# not) replaces nothing, even a session of the same GPU and boot
S=$BL/nvidia-h100-80gb-hbm3/default
session nvidia-h100-80gb-hbm3 default GPU-0123abcd boot-1 2026-11-25T00:00:00Z "$T/good.kpt"
run "$KPTPROF" baseline update "$T/good.kpt" --baselines "$BL"
expect_rc 0 "update with a good recording"
good=$(cat "$T/out")
"$H" corrupt "$T/bad.kpt" || fail "kpt-hostile corrupt"
run "$KPTPROF" baseline show "$T/bad.kpt"
expect_rc 0 "show reads only the header of the damaged recording"
cp -r "$S" "$T/snapshot"
run "$KPTPROF" baseline update "$T/bad.kpt" --baselines "$BL"
expect_rc 2 "update with a damaged kernel section"
expect_err "the baseline is unchanged"
diff -r "$T/snapshot" "$S" >/dev/null || fail "a damaged recording changed the baseline: $(ls "$S")"
cmp -s "$T/good.kpt" "$good" || fail "the good session was replaced"

# stale temporary files: a dead process's go, a live one's stay; files that
# are not sessions are never pruned
sh -c 'exit 0' & dead=$!; wait $dead
: >"$S/20261125T000000Z-0123abcd.kpt.tmp$dead"
: >"$S/20261125T000000Z-0123abcd.kpt.tmp$$"
echo notes >"$S/README.kpt"
echo mine >"$S/my-own.kpt"
for i in 1 2 3; do
	session nvidia-h100-80gb-hbm3 default GPU-5555555$i boot-$i "2026-11-2${i}T00:00:00Z" "$T/s$i.kpt"
	run "$KPTPROF" baseline update "$T/s$i.kpt" --baselines "$BL" --keep 2
	expect_rc 0 "update --keep 2 ($i)"
done
[ ! -e "$S/20261125T000000Z-0123abcd.kpt.tmp$dead" ] || fail "the stale temporary file of a dead update stayed"
[ -e "$S/20261125T000000Z-0123abcd.kpt.tmp$$" ] || fail "the temporary file of a live process was removed"
[ -e "$S/README.kpt" ] && [ -e "$S/my-own.kpt" ] || fail "pruning removed files that are not sessions: $(ls "$S")"
[ "$(ls "$S" | grep -c '^2026.*Z-[0-9a-z]*\.kpt$')" = 2 ] || fail "--keep 2 kept: $(ls "$S")"
assert_outside_unchanged "pruning"

# a planted link inside --baselines does not lead writes out
mkdir -p "$T/work/elsewhere"
ln -s "$T/work/elsewhere" "$BL/nvidia-h200"
session nvidia-h200 default GPU-77777777 b7 2026-11-25T00:00:00Z "$T/h200.kpt"
run "$KPTPROF" baseline update "$T/h200.kpt" --baselines "$BL"
expect_rc 2 "update through a symbolic link in --baselines"
expect_err "not a plain folder"
[ -z "$(ls -A "$T/work/elsewhere")" ] || fail "update wrote through a link: $(ls -R "$T/work/elsewhere")"
rm "$BL/nvidia-h200"

# concurrent updates and prunes of one folder: no "cannot read", exit 0
for i in $(seq 1 8); do
	session nvidia-h100-80gb-hbm3 default "GPU-6666666$i" "boot-c$i" "2026-11-1${i}T00:00:00Z" "$T/c$i.kpt"
done
for i in $(seq 1 8); do
	"$KPTPROF" baseline update "$T/c$i.kpt" --baselines "$BL" --keep 3 >/dev/null 2>"$T/cerr$i" &
done
for i in $(seq 1 8); do wait %$i 2>/dev/null || true; done
wait
for i in $(seq 1 8); do
	grep -q "cannot read\|cannot remove" "$T/cerr$i" && fail "concurrent update $i: $(cat "$T/cerr$i")"
done
ls "$S" | grep -q '\.tmp[0-9]*$' && [ "$(ls "$S" | grep -c '\.tmp[0-9]*$')" != 1 ] &&
	fail "concurrent updates left temporary files: $(ls "$S")"

# item 8: stdout that cannot be written is an error, not exit 0
for args in "list" "show --gpu nvidia-h100-80gb-hbm3" "path --gpu nvidia-h100-80gb-hbm3"; do
	# shellcheck disable=SC2086
	"$KPTPROF" baseline $args --baselines "$BL" >/dev/full 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] || fail "baseline $args >/dev/full: exit $rc"
	grep -q "cannot write to standard output" "$T/err" || fail "baseline $args >/dev/full: $(cat "$T/err")"
done
printf '#!/bin/sh\necho memory.copy.4MiB\n' >"$T/runner"
chmod +x "$T/runner"
KPT_WORKLOADS=$T/runner "$KPTPROF" workloads >/dev/full 2>"$T/err"
rc=$?
[ "$rc" = 2 ] || fail "workloads >/dev/full: exit $rc"
run env KPT_WORKLOADS="$T/runner" "$KPTPROF" workloads
expect_rc 0 "workloads through a runner"
expect_out "memory.copy.4MiB"
printf '#!/bin/sh\necho partial\nexit 3\n' >"$T/runner"
run env KPT_WORKLOADS="$T/runner" "$KPTPROF" workloads
expect_rc 3 "workloads passes the runner's exit status on"
echo ok
