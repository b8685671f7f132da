#!/bin/bash
# Peak memory, time and output of every command that reads a recording, on
# the hostile recordings kpt-hostile writes (issue 21's bound: at most 1 GB
# of memory on a file of about 1 MB, and a notice on stderr before any
# output passes 1 GB; docs/security.md). Prints a Markdown table.
#   scripts/hostile-peaks.sh [BUILD]     (default build/; needs kpt-hostile)
# Each run is under /usr/bin/time -v and a 3 GB address-space limit; a row
# over 1 GB of memory, or over 1 GB of output without the notice, is
# marked FAIL and makes the exit status 1.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
K=$build/cli/kptprof
H=$build/kpt-hostile
[ -x "$K" ] && [ -x "$H" ] || { echo "hostile-peaks.sh: no kptprof or kpt-hostile in '$build'" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kpt-peaks.XXXXXX")
trap 'rm -rf "$T"' EXIT
C=$T/corpus O=$T/o
mkdir -p "$C" "$O"
"$H" names "$C/names.kpt" && "$H" deep 100000 "$C/deep.kpt" && "$H" deep 20000 all "$C/deepall.kpt" &&
	"$H" longname 10000000 400 "$C/longname.kpt" && "$H" kernels 6000000 "$C/kernels.kpt" || exit 2
GB=$((1 << 30))
bad=0
echo "| file (size) | command | exit | s | peak RSS MB | output MB | notice |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
# row FILE WHAT OUT CMD...: runs CMD; OUT (a file or folder, or empty) and
# stdout are its output
row() {
	local f=$1 what=$2 out=$3 rss secs bytes notice mark=""
	shift 3
	rm -rf "$O"/*
	(ulimit -v $((3 * 1024 * 1024)) && exec /usr/bin/time -v -o "$T/time" "$@") </dev/null >"$T/stdout" 2>"$T/stderr"
	local rc=$?
	rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$T/time")
	secs=$(awk -F': ' '/Elapsed \(wall/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s}' "$T/time")
	bytes=$(stat -c %s "$T/stdout")
	[ -n "$out" ] && [ -e "$out" ] && bytes=$((bytes + $(du -sb "$out" | cut -f1)))
	notice=$(grep -c "passes .* and keeps growing" "$T/stderr")
	{ [ "${rss:-0}" -gt 1024 ] || { [ "$bytes" -gt $GB ] && [ "$notice" = 0 ]; } ||
		[ "$rc" -gt 2 ]; } && { mark=" FAIL"; bad=1; }
	printf "| %s (%s KB) | %s | %s | %s | %s | %.1f | %s |%s\n" "$(basename "$f")" $(($(stat -c %s "$f") / 1024)) \
		"$what" "$rc" "$secs" "$rss" "$(echo "$bytes / 1048576" | bc -l)" "$notice" "$mark"
}
for f in "$C"/*.kpt; do
	row "$f" "report --by range --format json" "" "$K" report "$f" --by range --format json
	row "$f" "report --format csv" "" "$K" report "$f" --format csv
	for fmt in chrome csv json; do
		row "$f" "export --format $fmt" "$O/x" "$K" export "$f" --format $fmt -o "$O/x"
	done
	row "$f" "export --format chrome -o -" "" "$K" export "$f" --format chrome -o -
	row "$f" "view" "$O/v" env KPT_GNUPLOT=/nonexistent "$K" view "$f" -o "$O/v"
	row "$f" "view --trace-all --trace-bytes 2e9" "$O/v" env KPT_GNUPLOT=/nonexistent "$K" view "$f" -o "$O/v" \
		--trace-all --trace-bytes 2000000000
	row "$f" "diff F F (all reports, plots)" "$O" env KPT_GNUPLOT=/nonexistent "$K" diff "$f" "$f" \
		--json "$O/d.json" --markdown "$O/d.md" --junit "$O/d.xml" --plots "$O/p"
	row "$f" "compare F F" "" "$K" compare "$f" "$f"
	rm -f "$T"/h.db*
	suite=$("$K" report "$f" 2>/dev/null | awk '$1 == "suite" {print $2; exit}')
	suite=${suite:-default}
	row "$f" "history add" "" "$K" history add "$f" --db "$T/h.db" --suite "$suite" --commit c1
	for c in c2 c3; do # gate wants 3 sessions
		"$K" history add "$f" --db "$T/h.db" --suite "$suite" --commit $c >/dev/null 2>&1
	done
	row "$f" "history show 1" "" "$K" history show 1 --db "$T/h.db" --suite "$suite"
	row "$f" "gate --db (3 sessions of F)" "" "$K" gate --from "$f" --db "$T/h.db" --suite "$suite"
done
exit $bad
