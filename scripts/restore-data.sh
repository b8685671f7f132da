#!/bin/bash
# scripts/restore-data.sh PATH [COMMIT]
# Restore a GPU session folder that left the source tree (bench/DATA.md) from
# git history into the work tree. COMMIT defaults to the one bench/DATA.md
# names for PATH; with that commit the sha256 of `git ls-tree -r COMMIT PATH`
# must match the table's. The restored files are not staged.
set -euo pipefail
usage() { echo "usage: scripts/restore-data.sh PATH [COMMIT]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
top=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "restore-data: not in a git checkout" >&2; exit 2; }
cd "$top"
p=${1%/}
p=${p#./}
row=$(grep -F "| \`$p\` |" bench/DATA.md 2>/dev/null | head -1 || true)
want=
if [ -n "$row" ]; then
	want=$(echo "$row" | awk -F'|' '{gsub(/[ `]/, "", $6); print $6}')
	def=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $3); print $3}')
else
	def=
fi
c=${2:-$def}
[ -n "$c" ] || { echo "restore-data: '$p' is not in bench/DATA.md; name a commit" >&2; exit 2; }
git cat-file -e "$c^{commit}" 2>/dev/null || { echo "restore-data: no commit '$c' in this repository" >&2; exit 2; }
[ -n "$(git ls-tree "$c" -- "$p")" ] || { echo "restore-data: commit $c has no '$p'" >&2; exit 2; }
got=$(git ls-tree -r "$c" -- "$p" | sha256sum | cut -d' ' -f1)
if [ -n "$want" ] && [ "$(git rev-parse "$c")" = "$(git rev-parse "$def")" ] && [ "$got" != "$want" ]; then
	echo "restore-data: '$p' at $c has listing sha256 $got, bench/DATA.md says $want" >&2
	exit 1
fi
git archive --format=tar "$c" -- "$p" | tar -xf -
n=$(git ls-tree -r "$c" -- "$p" | wc -l)
echo "restored '$p' from $c: $n files, listing sha256 $got"
