#!/usr/bin/env bash
# counters_test.sh - kptprof record --counters on a GPU (exit 77 without
# one). The 512 MiB copy reads and writes 1 GiB that no cache can hold:
# dram__bytes_read + dram__bytes_write must be within 5% of the declared
# bytes; the default set is one pass on Hopper (sm_90); the memory set
# works; a metric the chip lacks is a one-line error, exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kptcounters.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$KW" --check memory.copy.1B >/dev/null 2>&1
[ $? -eq 77 ] && { echo "no GPU: skipped"; exit 77; }

XDG_CACHE_HOME="$T/cache" "$KPTPROF" record -o "$T/copy.kpt" --runs 1 --iterations 5 --warmup 1 --counters \
	--workload memory.copy.512MiB 2>"$T/err"; rc=$?
cat "$T/err"
if [ $rc -ne 0 ] && grep -q "insufficient privileges" "$T/err"; then
	echo "SKIP: profiling is restricted to admin users on this machine"; exit 77
fi
[ $rc -eq 0 ] || fail "record --counters exit $rc"
grep -q "^kptprof: counters: .* 1 pass per kernel" "$T/err" || {
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
	[ "$cc" != "9.0" ] || fail "default set is not one pass on Hopper"; }
"$CHECK" "$T/copy.kpt" memory.copy.512MiB 5 || fail "dram bytes or ceilings of the 512 MiB copy"
grep -q "^kptprof: ceilings of .*(measured)" "$T/err" || fail "no ceilings measured"

XDG_CACHE_HOME="$T/cache" "$KPTPROF" record -o "$T/mem.kpt" --runs 1 --iterations 3 --warmup 1 --counters=memory \
	--workload memory.copy.512MiB 2>"$T/err" || { cat "$T/err"; fail "--counters=memory"; }
grep -q "^kptprof: ceilings of .*(cached)" "$T/err" || fail "ceilings not reused from the cache"
"$CHECK" "$T/mem.kpt" memory.copy.512MiB 5 || fail "dram bytes with the memory set"

"$KPTPROF" record -o "$T/bad.kpt" --runs 1 --iterations 1 --warmup 0 --counters=sm__no_such_counter.sum \
	--workload memory.copy.4MiB 2>"$T/err"; rc=$?
cat "$T/err"
[ $rc -eq 2 ] || fail "unknown metric: exit $rc, want 2"
grep -q "sm__no_such_counter.sum" "$T/err" || fail "unknown metric not named"
# the target's own stderr (kpt-workloads' banner) comes first; kptprof says one line
[ "$(grep -c '^kptprof' "$T/err")" = 1 ] || fail "unknown metric: not one kptprof line"
grep -q "^kptprof: cannot read counters: counter 'sm__no_such_counter.sum' is unknown" "$T/err" ||
	fail "unknown metric message"
echo ok
