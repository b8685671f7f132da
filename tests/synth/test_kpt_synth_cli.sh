#!/bin/bash
# kpt-synth as a program: exit 0 and a readable file on success; exit 2 and
# an error line naming the problem on bad options or an unwritable output.
# Usage: test_kpt_synth_cli.sh KPT_SYNTH_BINARY
set -u
synth=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$synth" -o "$tmp/a.kpt" --runs 2 --iterations 3 --slow gemm:5 --meta commit=abc \
	|| fail "good options exit $?"
[ -s "$tmp/a.kpt" ] || fail "no output file"
[ "$(head -c 7 "$tmp/a.kpt")" = "KPTPROF" ] || fail "output lacks the magic"
ls "$tmp" | grep -q tmp- && fail "temporary file left behind"

expect_error() {  # WANT ARGS...
	local want=$1; shift
	"$synth" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "exit $rc (want 2) for: $*"
	head -1 "$tmp/err" | grep -q "^kpt-synth: .*$want" || fail "for '$*' stderr was: $(cat "$tmp/err")"
}
expect_error "invalid count '0'" -o "$tmp/b.kpt" --runs 0
expect_error "invalid count 'x'" -o "$tmp/b.kpt" --iterations x
expect_error "invalid --slow 'gemm'" -o "$tmp/b.kpt" --slow gemm
expect_error "invalid --probes '1:2:3'" -o "$tmp/b.kpt" --probes 1:2:3
expect_error "invalid --probes '1:2:-3:4'" -o "$tmp/b.kpt" --probes 1:2:-3:4
expect_error "invalid --follow 'gemm:tf32'" -o "$tmp/b.kpt" --follow gemm:tf32
expect_error "no output file" --runs 2
expect_error "unrecognized option or missing value: .--bogus." -o "$tmp/b.kpt" --bogus
expect_error "cannot write '$tmp/no/such/dir/c.kpt'" -o "$tmp/no/such/dir/c.kpt"
[ -e "$tmp/b.kpt" ] && fail "a failed run left a file"
echo "ok"
