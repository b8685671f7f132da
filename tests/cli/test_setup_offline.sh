#!/usr/bin/env bash
# The README's main command on a machine where nothing can be installed:
# apt-get fails as it does without network ("Unable to locate package"),
# and the optional packages are absent. The set-up must leave them out with
# one line each saying what that costs, build, and run the main job (the
# no-GPU path) to its usual exit status; a missing required package is one
# line naming it and exit 2; without root and password-less sudo nothing is
# tried with apt-get at all.
. "$(dirname "$0")/cli_lib.sh"

# The set-up's error: exit 2, nothing on stdout, and besides its progress
# lines ("kpt-deps: ...") exactly one line, naming the problem.
expect_setup_error() {
	expect_rc 2 "$1"
	[ ! -s "$T/out" ] || fail "error wrote to stdout: $(head -c 300 "$T/out")"
	[ "$(grep -vc '^kpt-deps: ' "$T/err")" = 1 ] || fail "error is not one line: $(cat "$T/err")"
	grep -v '^kpt-deps: ' "$T/err" | grep -q "^kptprof: .*$2" || fail "error lacks '$2': $(cat "$T/err")"
}

mkdir -p "$T/bin"
cat >"$T/bin/apt-get" <<'STUB'
#!/bin/sh
echo "apt-get $*" >>"$KPT_STUB_LOG"
[ "$1" = update ] && { echo "E: Failed to fetch (no network)" >&2; exit 100; }
echo "E: Unable to locate package $*" >&2
exit 100
STUB
cat >"$T/bin/sudo" <<'STUB'
#!/bin/sh
echo "sudo: a password is required" >&2
exit 1
STUB
chmod +x "$T/bin/apt-get" "$T/bin/sudo"
export KPT_STUB_LOG="$T/apt.log" PATH="$T/bin:$PATH"
optional="libsqlite3-dev libpq-dev gnuplot-nox"

# 1. Offline, optional packages absent: exit as the gate does (0 here).
run env KPT_NO_GPU=1 BUILD="$T/build" KPT_DEPS_PRETEND_MISSING="$optional" \
	"$KPT_SRC/scripts/setup-and-run.sh" -DKPT_CUDA=OFF
expect_rc 0 "setup-and-run.sh offline"
expect_out "no regression"
grep -q "apt-get update" "$T/apt.log" || fail "apt-get update was not tried"
for p in libsqlite3-dev libpq-dev; do
	[ "$(grep -c "left out optional '$p'" "$T/err")" = 1 ] || fail "no one line for '$p': $(cat "$T/err")"
done
expect_err "no SQLite store"
# gnuplot is only a test dependency: the main job does not mention it.
! grep -q gnuplot "$T/err" || fail "setup-and-run named a test-only package: $(cat "$T/err")"

# 2. A required package missing and not installable: one line, exit 2, no build.
: >"$T/apt.log"
run env KPT_NO_GPU=1 BUILD="$T/build2" KPT_DEPS_PRETEND_MISSING="libzstd-dev $optional" \
	"$KPT_SRC/scripts/setup-and-run.sh" -DKPT_CUDA=OFF
expect_setup_error "setup-and-run.sh without zstd" "libzstd-dev"
[ ! -e "$T/build2/build.log" ] || fail "built although a required package is missing"

# 3. Not root, sudo wants a password: nothing is run through apt-get, the
# optional packages are left out with the reason, the set-up goes on.
cat >"$T/bin/id" <<'STUB'
#!/bin/sh
[ "$1" = -u ] && { echo 1000; exit 0; }
exec /usr/bin/id "$@"
STUB
chmod +x "$T/bin/id"
: >"$T/apt.log"
run bash -c '. "$KPT_SRC/scripts/kpt-deps.sh" && KPT_DEPS_PRETEND_MISSING="gnuplot-nox chromium" kpt_install_deps test'
expect_rc 0 "kpt_install_deps test as a user"
[ ! -s "$T/apt.log" ] || fail "apt-get was run without root or sudo: $(cat "$T/apt.log")"
expect_err "left out optional 'gnuplot-nox' (not root and no password-less sudo): no plots"
expect_err "left out optional 'chromium'"
run bash -c '. "$KPT_SRC/scripts/kpt-deps.sh" && KPT_DEPS_PRETEND_MISSING="libcmocka-dev" kpt_install_deps test'
expect_setup_error "kpt_install_deps test without cmocka as a user" "libcmocka-dev (not root and no password-less sudo)"

# 4. Where CMake finds the CUDA toolkit but there is no GPU, the runner is
# built too (kptprof workloads needs it); without the toolkit only kptprof.
run env KPT_NO_GPU=1 KPT_SETUP_DRY=1 BUILD="$T/build4" KPT_DEPS_PRETEND_MISSING="$optional" \
	"$KPT_SRC/scripts/setup-and-run.sh" -DKPT_CUDA=OFF
expect_rc 0 "setup-and-run.sh dry, KPT_CUDA=OFF"
expect_err "setup-and-run: would build: kptprof"
! grep -q kpt-workloads "$T/err" || fail "the runner is built without CUDA: $(cat "$T/err")"
if command -v nvcc >/dev/null; then
	run env KPT_NO_GPU=1 KPT_SETUP_DRY=1 BUILD="$T/build5" KPT_DEPS_PRETEND_MISSING="$optional" \
		"$KPT_SRC/scripts/setup-and-run.sh" -DCMAKE_CUDA_ARCHITECTURES=90
	expect_rc 0 "setup-and-run.sh dry with nvcc"
	expect_err "setup-and-run: would build: kptprof kptinject kpt-workloads"
else
	echo "note: no nvcc here: the CUDA-toolkit-without-GPU case was not checked" >&2
fi
echo "ok"
