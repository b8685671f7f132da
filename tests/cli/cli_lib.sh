# cli_lib.sh - helpers for tests/cli/test_*.sh (source it; not a test itself).
# Environment from CTest: KPTPROF (the binary), KPT_SRC, KPT_DATA, KPT_BUILD.
set -u
: "${KPTPROF:?KPTPROF must name the kptprof binary}"
: "${KPT_BUILD:?KPT_BUILD must name the build folder}"
: "${KPT_SRC:?KPT_SRC must name the source folder}"

T=$(mktemp -d "${TMPDIR:-/tmp}/kptcli.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# run CMD...: runs CMD with stdin from /dev/null; sets RC, stdout in $T/out,
# stderr in $T/err.
run() { "$@" </dev/null >"$T/out" 2>"$T/err"; RC=$?; }
expect_rc() {
	[ "$RC" = "$1" ] || fail "expected exit $1, got $RC from: ${2:-}; stderr: $(head -c 600 "$T/err")"
}
expect_out() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1': $(head -c 600 "$T/out")"; }
expect_no_out() { ! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'"; }
expect_err() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(head -c 600 "$T/err")"; }
# An error is one line "kptprof...: problem" (plus at most one "hint:" line)
# on stderr, nothing on stdout, exit 2.
expect_error() {
	expect_rc 2 "$1"
	[ ! -s "$T/out" ] || fail "error wrote to stdout: $(head -c 300 "$T/out")"
	head -n1 "$T/err" | grep -q '^kptprof' || fail "error does not start with 'kptprof': $(head -n1 "$T/err")"
	[ "$(grep -vc '^hint: ' "$T/err")" = 1 ] || fail "error is not one line: $(cat "$T/err")"
	grep -qF -- "$2" "$T/err" || fail "error lacks '$2': $(cat "$T/err")"
}

need_synth() { [ -x "$KPT_BUILD/kpt-synth" ] || skip "kpt-synth is not built"; }
need_testrec() { [ -x "$KPT_BUILD/kpt-testrec" ] || skip "kpt-testrec is not built"; }
need_python() { command -v python3 >/dev/null || skip "python3 is not installed"; }

# help_lines FILE: the lines of a --help (FILE) with each option's wrapped
# continuation lines (indented under its meaning) joined to it.
help_lines() {
	awk '/^    +[^ ]/ && n { sub(/^ +/, ""); line = line " " $0; next }
	     { if (n) print line; line = $0; n = 1 } END { if (n) print line }' "$1"
}
