#!/bin/bash
# The tracked tree stays small (issue 38): at most 25 MB of tracked files in
# all, and no tracked file over 1 MB outside tests/data/ and baselines/
# (GPU session data lives in git history: bench/DATA.md,
# scripts/restore-data.sh). Sizes are those of the index's blobs, so a
# deleted or edited work-tree file does not hide one. Skips when the source
# is not a git checkout. First the check is shown to fail on a small repository
# that breaks each rule.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v git >/dev/null || skip "git is not installed"
MAX_TREE=${KPT_TREE_MAX_BYTES:-25000000}
MAX_FILE=${KPT_TREE_MAX_FILE_BYTES:-1000000}

# tree_check DIR MAX_TREE MAX_FILE: prints one line per problem, exit 1 if any
tree_check() {
	git -C "$1" ls-files -s -z | tr '\0' '\n' | awk '$1 != "160000" { sub(/^[0-9]+ /, ""); sub(/ [0-9]+\t/, " "); print }' |
		git -C "$1" cat-file --batch-check='%(objectsize) %(rest)' |
		awk -v mt="$2" -v mf="$3" '
			{ sz = $1; p = $0; sub(/^[0-9]+ /, "", p); tot += sz
			  if (sz > mf && p !~ /^(tests\/data|baselines)\//) { print "tracked file over " mf " bytes outside tests/data and baselines: " p " (" sz ")"; bad = 1 } }
			END { print "tracked: " tot " bytes in " NR " files"
			      if (tot > mt) { print "tracked tree over " mt " bytes: " tot; bad = 1 }
			      exit bad }'
}

# the check itself: a repository with a 1.1 MB file in bench/ and 2.2 MB in all
R="$T/repo"
mkdir -p "$R/bench" "$R/tests/data" && git -C "$R" init -q || fail "git init"
head -c 1100000 /dev/zero >"$R/bench/big.bin"
head -c 1100000 /dev/zero | tr '\0' a >"$R/tests/data/big.kpt"
git -C "$R" add -A || fail "git add"
tree_check "$R" 25000000 1000000 >"$T/out1" && fail "a 1.1 MB file in bench/ passed: $(cat "$T/out1")"
grep -q "outside tests/data and baselines: bench/big.bin" "$T/out1" || fail "bench/big.bin not named: $(cat "$T/out1")"
grep -q "tests/data/big.kpt" "$T/out1" && fail "a file in tests/data/ was flagged: $(cat "$T/out1")"
git -C "$R" rm -q --cached bench/big.bin || fail "git rm"
tree_check "$R" 25000000 1000000 >"$T/out2" || fail "tests/data/ alone failed: $(cat "$T/out2")"
tree_check "$R" 1000000 2000000 >"$T/out3" && fail "2.2 MB passed a 1 MB tree limit: $(cat "$T/out3")"
grep -q "tracked tree over 1000000 bytes: 1100000" "$T/out3" || fail "total not reported: $(cat "$T/out3")"

# the source tree
git -C "$KPT_SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$KPT_SRC is not a git checkout"
[ "$(git -C "$KPT_SRC" rev-parse --show-toplevel)" -ef "$KPT_SRC" ] || skip "$KPT_SRC is not the top of a git checkout"
tree_check "$KPT_SRC" "$MAX_TREE" "$MAX_FILE" >"$T/src" || fail "$(cat "$T/src")"
cat "$T/src"
