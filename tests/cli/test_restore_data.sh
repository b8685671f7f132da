#!/bin/bash
# scripts/restore-data.sh PATH [COMMIT] (issue 38) on a small repository: a
# folder removed from the tree comes back byte for byte from the commit
# bench/DATA.md names; a listing checksum that does not match, a path not in
# the table without a commit, and a commit without the path are refused
# (exit 1, 2, 2) and write nothing.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v git >/dev/null || skip "git is not installed"
R="$T/repo"
G() { git -C "$R" -c user.name=t -c user.email=t@t "$@"; }
mkdir -p "$R/bench/a/d-1/sub" "$R/scripts" && G init -q || fail "git init"
cp "$KPT_SRC/scripts/restore-data.sh" "$R/scripts/" || fail "copy script"
printf 'one\n' >"$R/bench/a/d-1/x.txt"
head -c 3000 /dev/urandom >"$R/bench/a/d-1/sub/y.bin"
G add -A && G commit -qm data || fail "commit data"
C=$(G rev-parse HEAD)
H=$(G ls-tree -r "$C" bench/a/d-1 | sha256sum | cut -d' ' -f1)
cp -r "$R/bench/a/d-1" "$T/orig"
printf '| path | commit | files | bytes | sha256 |\n| --- | --- | ---: | ---: | --- |\n| `bench/a/d-1` | %s | 2 | 3004 | `%s` |\n' "$C" "$H" >"$R/bench/DATA.md"
G rm -rq bench/a/d-1 && G add bench/DATA.md && G commit -qm remove || fail "commit removal"
[ ! -e "$R/bench/a/d-1" ] || fail "folder still there"

(cd "$R/bench" && ../scripts/restore-data.sh bench/a/d-1/) >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
grep -q "restored 'bench/a/d-1' from $C: 2 files, listing sha256 $H" "$T/out" || fail "message: $(cat "$T/out")"
diff -r "$T/orig" "$R/bench/a/d-1" || fail "restored folder differs"
rm -rf "$R/bench/a/d-1"

(cd "$R" && scripts/restore-data.sh bench/a/d-1 "$C") >"$T/out" 2>&1 || fail "restore with a commit: $(cat "$T/out")"
diff -r "$T/orig" "$R/bench/a/d-1" || fail "restored folder differs (commit given)"
rm -rf "$R/bench/a/d-1"

sed -i "s/$H/$(printf '0%.0s' $(seq 64))/" "$R/bench/DATA.md"
(cd "$R" && scripts/restore-data.sh bench/a/d-1) >"$T/out" 2>&1; rc=$?
[ $rc = 1 ] || fail "a wrong checksum: exit $rc, want 1: $(cat "$T/out")"
grep -q "listing sha256 $H, bench/DATA.md says 0000" "$T/out" || fail "checksum message: $(cat "$T/out")"
[ ! -e "$R/bench/a/d-1" ] || fail "a wrong checksum restored the folder"

(cd "$R" && scripts/restore-data.sh bench/a/nope) >"$T/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "'bench/a/nope' is not in bench/DATA.md; name a commit" "$T/out" || fail "unknown path: exit $rc: $(cat "$T/out")"
(cd "$R" && scripts/restore-data.sh bench/a/d-1 HEAD) >"$T/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "commit HEAD has no 'bench/a/d-1'" "$T/out" || fail "commit without the path: exit $rc: $(cat "$T/out")"
[ ! -e "$R/bench/a/d-1" ] || fail "a refused restore wrote the folder"
exit 0
