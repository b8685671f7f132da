#!/bin/bash
# An output that cannot be written (--json, --markdown, --junit, --plots of
# diff, gate --from and compare) is an error before anything is printed:
# exit 2, one line naming it, an empty stdout (no table), nothing written.
. "$KPT_SRC/tests/cli/cli_lib.sh"
A="$KPT_DATA/copy_base.kpt" B="$KPT_DATA/copy_plant10_512MiB.kpt"
NOPE="$T/no/such/folder"
echo x >"$T/file"
for o in --json --markdown --junit --plots; do
	run "$KPTPROF" diff "$A" "$B" "$o" "$NOPE/out"
	expect_error "diff $o into a missing folder" "$NOPE/out"
	run "$KPTPROF" gate --from "$B" --suite default --baselines "$KPT_SRC/baselines" "$o" "$NOPE/out"
	expect_error "gate --from $o into a missing folder" "$NOPE/out"
done
[ ! -e "$T/no" ] || fail "a refused output made a folder"
run "$KPTPROF" diff "$A" "$B" --plots "$T/file"
expect_error "diff --plots onto a file" "not a folder"
run "$KPTPROF" compare "$A" "$B" --plots "$NOPE/p"
expect_error "compare --plots into a missing folder" "$NOPE/p"
# a folder that is not writable (only without root, which writes anyway)
if [ "$(id -u)" != 0 ]; then
	mkdir "$T/ro" && chmod 555 "$T/ro"
	for o in --json --plots; do
		run "$KPTPROF" diff "$A" "$B" "$o" "$T/ro/out"
		expect_error "diff $o into a read-only folder" "$T/ro/out"
	done
	chmod 755 "$T/ro"
fi
# still fine: a new plots folder, an existing one
run "$KPTPROF" diff "$A" "$B" --plots "$T/p"
expect_rc 1 "diff --plots into a new folder"
[ -d "$T/p" ] || fail "no plots folder"
run "$KPTPROF" diff "$A" "$B" --plots "$T/p"
expect_rc 1 "diff --plots into an existing folder"
