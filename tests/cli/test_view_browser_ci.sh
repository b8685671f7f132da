#!/usr/bin/env bash
# test_view_browser.sh without Chromium: skips (77) on a developer machine,
# fails with CI=true (CI installs Chromium; a missing browser there must not
# pass silently). Chromium is hidden by a PATH of links to every other
# program.
. "$(dirname "$0")/cli_lib.sh"
B=$T/bin
mkdir -p "$B"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	for p in "$d"/*; do
		n=${p##*/}
		case "$n" in chromium* | google-chrome*) continue ;; esac
		[ -x "$p" ] && [ ! -e "$B/$n" ] && ln -s "$p" "$B/$n"
	done
done
[ -e "$B/bash" ] || fail "no bash on PATH"
browser() { env PATH="$B" CI="$1" bash "$KPT_SRC/tests/cli/test_view_browser.sh" >"$T/out" 2>"$T/err"; RC=$?; }
browser ""
expect_rc 77 "no Chromium, not in CI"
expect_err "SKIP: no Chromium"
browser true
expect_rc 1 "no Chromium with CI=true"
expect_err "CI=true"
exit 0
