#!/usr/bin/env bash
# gate --against REF for a project (kptprof.json): REF is checked out in a
# git worktree and built with the project's build command, the workloads
# of both revisions run interleaved (issue 40). No GPU: a stand-in
# collector (KPTPROF_SKIP_GPU_CHECK) whose workloads write per-process
# files made by kpt-synth; the "pull request" commit slows the gemm
# kernels of one workload by 10%. Exit 1 naming the workload, exit 0 when
# nothing changed, exit 2 with one line for a ref that does not exist or
# from before the project file; the worktree is always removed.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
command -v git >/dev/null || skip "git is not installed"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
: >"$T/libkptinject.so"
export KPTPROF_INJECT=$T/libkptinject.so KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_NO_CALIBRATE=1 SYNTH=$KPT_BUILD/kpt-synth \
	BUILDS=$T/builds.txt

R=$T/repo
mkdir -p "$R/bench"
git -C "$R" init -q -b main 2>/dev/null || { git -C "$R" init -q && git -C "$R" checkout -q -b main; }
# a workload: one process writing a fixed recording (same seed: same
# kernels each run); SLOW (from slow.txt, the "code") slows gemm kernels
cat >"$R/bench/work.sh" <<'SH'
#!/bin/sh
slow=$(cat "$(dirname "$0")/slow.txt")
exec "$SYNTH" -o "$(echo "$KPT_OUTPUT" | sed "s/%p/$$/")" --runs 2 --iterations 10 --kernels-per-iter 6 \
	--names 6 --seed "$1" --slow "gemm:$slow"
SH
chmod +x "$R/bench/work.sh"
echo 0 >"$R/bench/slow.txt"
# the build: says where it ran (its output goes to build.log)
cat >"$R/build.sh" <<'SH'
#!/bin/sh
echo "building in $PWD"
pwd >>"$BUILDS"
SH
chmod +x "$R/build.sh"
cat >"$R/kptprof.json" <<'JSON'
{
  "project": "demo",
  "build": ["./build.sh"],
  "workloads": [
    { "name": "train", "command": ["./bench/work.sh", "7"] },
    { "name": "infer", "command": ["./bench/work.sh", "9"] }
  ]
}
JSON
git -C "$R" add -A && git -C "$R" commit -qm main || fail "git commit main"
git -C "$R" checkout -q -b pr

# the checkouts and temporary folders go under $TMPDIR: empty again after
# every gate (a failed one keeps only a folder whose log its message names)
mkdir "$T/tmp" && export TMPDIR=$T/tmp
worktrees() { [ -z "$(ls -A "$T/tmp")" ] || echo "left in TMPDIR: $(ls "$T/tmp")"; git -C "$R" worktree list | wc -l; }

# unchanged: exit 0, both revisions built and run
cd "$R" || fail "cd"
run "$KPTPROF" gate --against main --runs 3 --json "$T/same.json"
expect_rc 0 "gate --against an unchanged revision"
expect_err "checked out in"
grep -q '"result": *"ok"' "$T/same.json" || fail "unchanged: JSON result: $(head -c 300 "$T/same.json")"
[ "$(worktrees)" = 1 ] || fail "worktree left after the gate: $(git -C "$R" worktree list)"

# the pull request slows one workload's gemm kernels: exit 1, SLOW, named
# and adds a workload main lacks (one note; not compared)
echo 10 >"$R/bench/slow.txt"
sed -i 's|^  \]$|    ,{ "name": "extra", "command": ["./bench/work.sh", "11"] }\n  ]|' "$R/kptprof.json"
git -C "$R" commit -qam "slower gemm" || fail "git commit pr"
run "$KPTPROF" gate --against main --runs 3 -o "$T/keep" --markdown "$T/pr.md" --junit "$T/pr.xml" \
	--json "$T/pr.json"
expect_rc 1 "gate --against a slower revision"
expect_err "kptprof gate: workload 'extra' is only in B (this revision): not compared"
! grep -q "extra/" "$T/out" || fail "workload extra was compared"
grep -q "SLOW" "$T/out" || fail "no SLOW row: $(head -c 600 "$T/out")"
[ -s "$T/keep/a.kpt" ] && [ -s "$T/keep/b.kpt" ] || fail "-o lacks a.kpt and b.kpt: $(ls "$T/keep")"
[ -e "$T/keep/ab.log" ] || fail "-o lacks ab.log"
grep -q "building in" "$T/keep/build.log" || fail "build.log lacks the build's output: $(cat "$T/keep/build.log")"
[ "$(wc -l <"$BUILDS")" = 2 ] || fail "not one build per gate: $(cat "$BUILDS")"
! grep -qx "$R" "$BUILDS" || fail "the build ran in this checkout (B is as it is; only A is built)"
grep -q "checked out in" "$T/err" && grep -q "building it" "$T/err" || fail "no checkout or build line: $(cat "$T/err")"
[ "$(worktrees)" = 1 ] || fail "worktree left after the gate: $(git -C "$R" worktree list)"
for f in "$T/pr.md" "$T/pr.xml" "$T/pr.json" "$T/out"; do
	grep -q "gemm" "$f" || fail "$f names no gemm kernel"
done

# the workload is the root range of its keys: the SLOW rows are train's
# (seed 7) and infer's gemm (seed 9) kernels, each named by its workload
grep "SLOW" "$T/out" | grep -q "train/" || fail "no SLOW row names workload train: $(grep SLOW "$T/out")"
grep -q "train/" "$T/pr.md" || fail "Markdown names no workload"
grep -q "train/" "$T/pr.xml" || fail "JUnit names no workload"
tr -d '\n' <"$T/pr.json" | grep -q '"path": *"train/[^"]*", *"workload": *"train"[^}]*"verdict": *"SLOW"' ||
	fail "JSON names no SLOW key of workload train by path and workload"

# afterwards this revision against the project's committed baseline of
# this GPU (its "baselines" folder): none yet, one info line; then one
expect_err "project 'demo' has no baseline for nvidia-h100-80gb-hbm3: shared shifts not checked"
mkdir -p "$R/baselines/nvidia-h100-80gb-hbm3/demo"
cp "$T/keep/a.kpt" "$R/baselines/nvidia-h100-80gb-hbm3/demo/2026-11-28-main.kpt"
run "$KPTPROF" gate --against main --runs 3
expect_rc 1 "gate --against with a committed baseline"
expect_err "this revision against the committed baseline $R/baselines/nvidia-h100-80gb-hbm3/demo: 2 SLOW"
rm -rf "$R/baselines"

# a project outside any git repository: one line, exit 2
mkdir "$T/nogit" && cp "$R/kptprof.json" "$T/nogit/" && mkdir "$T/nogit/bench" || fail "nogit"
run env GIT_CEILING_DIRECTORIES="$T" "$KPTPROF" gate --against main --runs 2 --project "$T/nogit/kptprof.json"
expect_error "gate --against outside a git repository" "is not in a git repository: cannot check out 'main'"
[ "$(worktrees)" = 1 ] || fail "left behind outside a git repository"

# a ref that does not exist: one line, exit 2, nothing left behind
run "$KPTPROF" gate --against no-such-branch --runs 2
expect_error "gate --against a missing ref" "no-such-branch"
[ "$(worktrees)" = 1 ] || fail "worktree left after a missing ref"

# a revision from before the project file: one line, exit 2
git -C "$R" checkout -q --orphan old && git -C "$R" rm -rqf . && echo x >"$R/x" && git -C "$R" add x &&
	git -C "$R" commit -qm old && git -C "$R" checkout -q pr || fail "git: an old commit"
run "$KPTPROF" gate --against old --runs 2
expect_error "gate --against a revision without the project file" "has no 'kptprof.json'"
[ "$(worktrees)" = 1 ] || fail "worktree left after a revision without the project file"

# a failing build: exit 2 naming the command, its status and the log
git -C "$R" checkout -q -b broken main && printf '#!/bin/sh\necho oops; exit 3\n' >"$R/build.sh" &&
	git -C "$R" commit -qam broken && git -C "$R" checkout -q pr || fail "git: a broken build"
run "$KPTPROF" gate --against broken --runs 2
expect_rc 2 "gate --against a revision whose build fails"
expect_err "the build command './build.sh' failed (exit status 3); its output is in"
log=$(sed -n "s/.*its output is in '\([^']*\)'.*/\1/p" "$T/err")
grep -q oops "$log" || fail "the build log '$log' lacks the build's output"
rm -rf "$(dirname "$log")"
[ "$(worktrees)" = 1 ] || fail "worktree left after a failed build"

# a gate stopped (SIGTERM) during the build: the build is stopped, exit 2,
# the worktree removed all the same
git -C "$R" checkout -q -b slow main && printf '#!/bin/sh\necho started\nexec sleep 30\n' >"$R/build.sh" &&
	git -C "$R" commit -qam slow && git -C "$R" checkout -q pr || fail "git: a slow build"
"$KPTPROF" gate --against slow --runs 2 -o "$T/stopped" </dev/null >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 100); do grep -qs started "$T/stopped/build.log" && break; sleep 0.1; done
grep -qs started "$T/stopped/build.log" || fail "the slow build did not start: $(cat "$T/err")"
kill -TERM "$pid"
wait "$pid"
RC=$?
expect_rc 2 "gate --against stopped during the build"
expect_err "the build command './build.sh' failed (exit status 143)"
[ "$(worktrees)" = 1 ] || fail "worktree left after a stopped build"

# --project names the file (here the same one, from another folder)
cd "$T" || fail "cd"
run "$KPTPROF" gate --against main --runs 3 --project "$R/kptprof.json"
expect_rc 1 "gate --against --project"
# --suite without --project: the bundled suite, not the kptprof.json here
cd "$R" || fail "cd"
run env KPTPROF_WORKLOADS="$T/no-runner" "$KPTPROF" gate --against main --runs 2 --suite default
expect_error "gate --against --suite in a project" "no workload runner 'kpt-workloads'"
[ "$(worktrees)" = 1 ] || fail "left behind by --suite without a runner"
echo ok
