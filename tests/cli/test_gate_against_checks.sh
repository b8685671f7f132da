#!/usr/bin/env bash
# gate --against in a project checks what needs no GPU before it asks for
# one: a broken kptprof.json or a base ref the repository lacks is an
# error (exit 2, one line) on any machine, never the skip (77) that a CI
# workflow may read as a pass. No KPTPROF_SKIP_GPU_CHECK here: on this
# machine (no GPU) a good file and ref then skip with 77; on a GPU machine
# they would run, so that last case is checked only where there is none.
. "$(dirname "$0")/cli_lib.sh"
command -v git >/dev/null || skip "git is not installed"
unset KPTPROF_SKIP_GPU_CHECK
R=$T/repo
mkdir -p "$R" && cd "$R" || fail "cannot make the repository"
git init -q . && git config user.email t@t && git config user.name t || fail "git init"
printf '{"project":"p","workloads":[{"name":"a","command":["true"],"timout":1}]}\n' >kptprof.json
git add kptprof.json && git commit -qm base || fail "git commit"
"$KPTPROF" gate --against HEAD >"$T/out" 2>"$T/err"
[ $? -eq 2 ] || { cat "$T/err"; fail "a broken kptprof.json: want exit 2"; }
grep -q "kptprof.json:1: workloads\[0\].timout: unknown key" "$T/err" || { cat "$T/err"; fail "the file's error"; }
printf '{"project":"p","workloads":[{"name":"a","command":["true"]}]}\n' >kptprof.json
"$KPTPROF" gate --against nosuchref >"$T/out" 2>"$T/err"
[ $? -eq 2 ] || { cat "$T/err"; fail "a missing ref: want exit 2"; }
grep -q "no commit 'nosuchref'" "$T/err" || { cat "$T/err"; fail "the ref's error"; }
if ! "$KPTPROF" devices >/dev/null 2>&1; then
	"$KPTPROF" gate --against HEAD >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 77 ] || { cat "$T/err"; fail "good file and ref without a GPU: exit $rc, want 77"; }
fi
echo "ok"
