# The repository never points at files outside itself: no source, script or
# document cites the planning files the project started from (the
# architecture is docs/architecture.md, the style CONTRIBUTING.md).
. "$KPT_SRC/tests/cli/cli_lib.sh"
[ -f "$KPT_SRC/docs/architecture.md" ] || fail "docs/architecture.md is missing"
[ -f "$KPT_SRC/CONTRIBUTING.md" ] || fail "CONTRIBUTING.md is missing"
# the names are split so that this file does not match itself
pat="DESIGN""\.md|STYLE""\.md|ANCHORS""\.md|shared/""DESIGN"
grep -rIlE --exclude-dir=.git --exclude-dir='build*' --exclude-dir=Testing "$pat" "$KPT_SRC" >"$T/hits" 2>/dev/null
[ ! -s "$T/hits" ] || fail "files cite files outside the repository: $(tr '\n' ' ' <"$T/hits")"
# every doc the architecture page links exists
for f in $(grep -oE '\]\([a-z-]+\.md\)' "$KPT_SRC/docs/architecture.md" | tr -d '])(' | sort -u); do
	[ -f "$KPT_SRC/docs/$f" ] || fail "docs/architecture.md links docs/$f, which does not exist"
done
exit 0
