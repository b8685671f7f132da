#!/bin/bash
# Memory that does not grow with the number of kernels (issue 21): a 12
# million-kernel recording of one kernel (35 KB: identical records compress
# ~340:1) read by the commands that summarise kernels (compare loads as diff
# does), each under a 160 MiB address-space limit. Before the caps on exact
# durations (lib/kpt_summary.h, analyzer/diff/kpt_diff_private.h) and
# view's bounded trace window, report, view and diff ran out of memory under
# this limit; now each needs about the same at 12 and at 340 million
# kernels (docs/security.md). Also checks that the approximate medians say
# so.
. "$(dirname "$0")/cli_lib.sh"
H=$KPT_BUILD/kpt-hostile
[ -x "$H" ] || skip "kpt-hostile is not built"
# ASan reserves terabytes of address space: no limit means nothing there
grep -q __asan_init "$KPTPROF" 2>/dev/null && skip "sanitizer build: an address-space limit does not apply"
LIMIT_KB=$((160 * 1024))
F=$T/many.kpt
"$H" kernels 12000000 "$F" || fail "kpt-hostile kernels"
export KPT_GNUPLOT=/nonexistent
# one malloc arena: each thread's own would reserve 64 MiB of address space
# (not memory used) and make the limit depend on how threads were scheduled
export MALLOC_ARENA_MAX=1

# lim WHAT CMD...: CMD under the limit, exit 0
lim() {
	local what=$1
	shift
	(ulimit -v $LIMIT_KB && exec "$@") </dev/null >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0 "$what (under ulimit -v $LIMIT_KB)"
}

lim "report csv" "$KPTPROF" report "$F" --format csv
expect_err "kptprof report: note: key 'many()' has 12000000 durations; medians from a histogram within 0.01%"
[ "$(grep -c 'note: key' "$T/err")" = 1 ] || fail "one note per approximate key: $(cat "$T/err")"
# the median of 1000..1004 ns spread evenly is 1002; the sketch keeps 0.01%
awk -F, 'NR == 2 { m = $5; if (m < 1001.8 || m > 1002.2) exit 1 }' "$T/out" || fail "median: $(sed -n 2p "$T/out")"
lim "report --by range json" "$KPTPROF" report "$F" --by range --format json
grep -q '"median_rel_err": 0.0001' "$T/out" || fail "JSON lacks median_rel_err"
grep -q '"instances": 12000000' "$T/out" || fail "JSON instances"
lim "view" "$KPTPROF" view "$F" -o "$T/v"
[ -s "$T/v/trace.json" ] || fail "view wrote no trace.json"
lim "diff" "$KPTPROF" diff "$F" "$F" --json "$T/d.json"
expect_out "their medians are from a histogram within 0.01%"
grep -q '"what":"approx"' "$T/d.json" || fail "diff JSON lacks the approx note"
for c in c1 c2 c3; do
	lim "history add $c" "$KPTPROF" history add "$F" --db "$T/h.db" --suite many --commit $c
done
lim "gate --db" "$KPTPROF" gate --from "$F" --db "$T/h.db" --suite many
echo "ok"
