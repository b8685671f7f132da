#!/bin/bash
# skip-note.sh DIR NAME CMD [ARGS...]: runs the test CMD as ctest would and
# passes its output and exit status through; when it exits 77 (skipped), its
# last output line (the reason: tests/cli/cli_lib.sh skip() and the others
# print one) is kept in DIR/NAME, which skip-reasons.sh prints under ctest's
# summary.
dir=$1 name=$2
shift 2
out=$(mktemp "${TMPDIR:-/tmp}/kpt-skip-note.XXXXXX") || exit 2
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" = 77 ]; then
	mkdir -p "$dir" && { grep -v '^[[:space:]]*$' "$out" | tail -n 1; } > "$dir/$name"
	[ -s "$dir/$name" ] || echo "(the test printed no reason)" > "$dir/$name"
fi
rm -f "$out"
exit "$rc"
