# kptprof itself: help, version, unknown commands, every command's --help,
# and the commands still answering "not implemented yet".
. "$KPT_SRC/tests/cli/cli_lib.sh"

run "$KPTPROF" help
expect_rc 0 "help"
cmds=$(sed -n 's/^  \([a-z]*\) .*/\1/p' "$T/out")
for c in record report diff gate baseline export view compare workloads devices version help; do
	echo "$cmds" | grep -qx "$c" || fail "'kptprof help' does not list '$c'"
done
run "$KPTPROF" --help
expect_rc 0 "--help"
expect_out "usage: kptprof COMMAND [ARGS]"
run "$KPTPROF"
[ "$RC" = 2 ] || fail "kptprof without a command exits $RC, not 2"

run "$KPTPROF" version
expect_rc 0 "version"
grep -Eq '^kptprof [0-9]+\.[0-9]+\.[0-9]+ \(file format [0-9]+\.[0-9]+\)$' "$T/out" || fail "version: $(cat "$T/out")"
run "$KPTPROF" --version
expect_rc 0 "--version"
expect_out "kptprof "

run "$KPTPROF" frobnicate
expect_error "unknown command" "unknown command 'frobnicate'"
run "$KPTPROF" help frobnicate
expect_error "help for unknown command" "unknown command 'frobnicate'"
expect_err "hint: 'kptprof help' lists the commands"
grep -qF -- "help --help" "$T/err" && fail "hint for an unknown command points at 'help --help'"

# Every command's --help, option by option: tests/cli/test_help_options.sh.
for c in $cmds; do
	run "$KPTPROF" "$c" --help
	expect_rc 0 "$c --help"
	expect_out "usage: kptprof $c"
	run "$KPTPROF" help "$c"
	expect_rc 0 "help $c"
	expect_out "usage: kptprof $c"
done

exit 0
