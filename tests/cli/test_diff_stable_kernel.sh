#!/usr/bin/env bash
# Evidence before priors (docs/decision-rule.md): across machines, a kernel
# whose sessions agree (its machines run it alike) while the program's other
# kernels move 1.3% from machine to machine keeps its own, small machine
# noise: +5% of it on a fifth machine is SLOW; the same machine unchanged has
# no SLOW. kpt-synth --machine PCT:SEED gives each machine its own factor
# per kernel; --stable exempts the one kernel.
set -u
SYNTH=${KPT_BUILD:?}/kpt-synth
[ -x "$SYNTH" ] || { echo "skip: kpt-synth not built"; exit 77; }
T=$(mktemp -d /tmp/kpt-test-stable.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
V=tilesize32x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v23
common=(--runs 5 --seed 7 --noise 0.1 --within 0.2 --stable "$V")
for m in 1 2 3 4; do
	"$SYNTH" -o "$T/base-$m.kpt" "${common[@]}" --machine "1.3:$m" --meta "boot_id=b$m" || fail "kpt-synth"
done
"$SYNTH" -o "$T/slow.kpt" "${common[@]}" --machine 1.3:5 --meta boot_id=b5 --slow "$V:5" || fail "kpt-synth"
"$SYNTH" -o "$T/same.kpt" "${common[@]}" --machine 1.3:5 --meta boot_id=b5 || fail "kpt-synth"
"$KPTPROF" diff "$T"/base-{1,2,3,4}.kpt "$T/slow.kpt" >"$T/slow.txt"
rc=$?; [ $rc -eq 1 ] || { cat "$T/slow.txt"; fail "stable kernel +5%: exit $rc, want 1"; }
grep "$V" "$T/slow.txt" | grep -q " SLOW$" || { cat "$T/slow.txt"; fail "the stable kernel is not SLOW"; }
[ "$(grep -c ' SLOW$' "$T/slow.txt")" -eq 1 ] || { cat "$T/slow.txt"; fail "other keys SLOW"; }
"$KPTPROF" diff "$T"/base-{1,2,3,4}.kpt "$T/same.kpt" >"$T/same.txt"
rc=$?; [ $rc -eq 0 ] || { cat "$T/same.txt"; fail "unchanged: exit $rc, want 0"; }
echo "ok"
