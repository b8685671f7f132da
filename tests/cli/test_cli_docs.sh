# docs/cli.md's option lists are generated from the commands' option tables
# (`kptprof help --markdown CMD`, the tables --help, the man pages and the
# completion come from): regenerated here, they must be what the file holds,
# every command has one, and each renders as a GFM table.
. "$KPT_SRC/tests/cli/cli_lib.sh"

"$KPT_SRC/scripts/gen-cli-docs.sh" "$KPTPROF" --check "$KPT_SRC/docs/cli.md" >"$T/diff" 2>&1 ||
	fail "docs/cli.md's option lists are not the tables' (run scripts/gen-cli-docs.sh build/cli/kptprof): $(head -c 3000 "$T/diff")"

run "$KPTPROF" help
expect_rc 0 "help"
for c in $(sed -n 's/^  \([a-z]*\) .*/\1/p' "$T/out"); do
	[ "$(grep -c "^<!-- options: $c " "$KPT_SRC/docs/cli.md")" = 1 ] ||
		fail "docs/cli.md has not exactly one generated option list of $c"
done

# the generator's escaping: a pipe stays in its cell, <...> is text
run "$KPTPROF" help --markdown gate
expect_rc 0 "help --markdown gate"
grep -qF '| `--against BUILD\|REF` |' "$T/out" || fail "help --markdown: --against row: $(grep against "$T/out")"
run "$KPTPROF" help --markdown
expect_error "help --markdown without CMD" "--markdown takes a CMD"
if command -v cmark-gfm >/dev/null; then
	cmark-gfm -e table "$KPT_SRC/docs/cli.md" >"$T/cli.html" || fail "cmark-gfm failed on docs/cli.md"
	want=$(grep -c '^<!-- options: ' "$KPT_SRC/docs/cli.md")
	got=$(grep -c '<th>option</th>' "$T/cli.html")
	[ "$got" -ge "$want" ] || fail "docs/cli.md: $want generated option lists, $got render as tables"
	grep -q '&lt;gpu-slug&gt;' "$T/cli.html" || fail "docs/cli.md: <gpu-slug> did not render as text"
fi
exit 0
