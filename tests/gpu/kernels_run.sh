#!/usr/bin/env bash
# kernels_run.sh - timing runs of kpt-workloads on a GPU (exit 77 without
# one): the quick suite's memory and FP8 workloads each give a timed row;
# --cold runs; --plant memory.copy.512MiB=50 makes the kernel >= 30% slower
# (real extra work), and 0 leaves it within 10%; +20% on the short 24MiB
# copy lands within 12..30%.
set -u
fail() { echo "FAIL: $*"; exit 1; }
names=$("$KW" --list --suite quick | awk 'NR > 1 && $1 ~ /^(memory|fp8)\./ { print $1 }')
# shellcheck disable=SC2086
out=$("$KW" $names --iterations 5 --warmup 1); rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "quick suite exit $rc"
want=$(echo "$names" | wc -l)
got=$(echo "$out" | tail -n +2 | awk '$3 > 0' | wc -l)
[ "$got" -eq "$want" ] || fail "quick: $got timed rows, want $want"
"$KW" --cold --iterations 3 --warmup 1 memory.copy.4MiB >/dev/null || fail "--cold"
med() { "$KW" memory.copy.512MiB --iterations 15 --warmup 3 "$@" | awk 'NR == 2 { print $3 }'; }
base=$(med); p0=$(med --plant memory.copy.512MiB=0); p50=$(med --plant memory.copy.512MiB=50)
echo "copy 512MiB median us: base $base, plant 0: $p0, plant 50: $p50"
awk -v b="$base" -v p="$p50" 'BEGIN { exit !(p >= 1.3 * b) }' || fail "plant 50% did not slow the copy"
awk -v b="$base" -v p="$p0" 'BEGIN { exit !(p <= 1.1 * b && p >= 0.9 * b) }' || fail "plant 0% changed the time"
"$KW" --check memory.copy.512MiB --plant memory.copy.512MiB=50 >/dev/null || fail "planted copy is wrong"
# The plant must scale with the fraction on a short copy too (the decision
# rule's evidence relies on it): +20% planted within 12..30%.
medw() { local w=$1; shift; "$KW" "$w" --iterations 30 --warmup 3 "$@" | awk 'NR == 2 { print $3 }'; }
s0=$(medw memory.copy.24MiB); s20=$(medw memory.copy.24MiB --plant memory.copy.24MiB=20)
echo "copy 24MiB median us: base $s0, plant 20: $s20"
awk -v b="$s0" -v p="$s20" 'BEGIN { exit !(p >= 1.12 * b && p <= 1.30 * b) }' || fail "plant 20% on the 24MiB copy is not about 20%"
echo ok
