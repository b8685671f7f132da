#!/bin/sh
# skip-reasons.sh DIR: run by ctest after the tests (CTEST_CUSTOM_POST_TEST,
# tests/ctest/skip_reasons.cmake); prints why each skipped test skipped, from
# the notes skip-note.sh left in DIR, so a plain `ctest -LE gpu` says it and
# not only "(Skipped)".
[ -d "$1" ] || exit 0
first=1
for f in "$1"/*; do
	[ -f "$f" ] || continue
	[ -z "$first" ] || echo "Why tests were skipped:"
	first=
	printf '  %s: %s\n' "${f##*/}" "$(cat "$f")"
done
exit 0
