#!/usr/bin/env bash
# kpt-heldout-eval --against BASE_DIR (docs/decision-rule.md, "Eight more
# fresh H200s"): each session of SESSIONS_DIR gated against BASE_DIR's
# sessions less its own host's. Against its own folder that is leave one
# host out: the same table rows as without --against (its own session is
# not in its baseline). Too few baseline sessions, a missing or too small
# BASE_DIR: one line on stderr, nothing on stdout, exit 2.
. "$KPT_SRC/tests/cli/cli_lib.sh"
H="$KPT_BUILD/kpt-heldout-eval"
[ -x "$H" ] || skip "kpt-heldout-eval is not built"
B="$KPT_SRC/baselines/nvidia-h200/default"
S=("$B"/*.kpt)
[ ${#S[@]} -ge 3 ] || skip "the H200 baseline is not here"

# one_line_error WHAT: exit 2, stdout empty, stderr one line with WHAT
one_line_error() {
	expect_rc 2 "$1"
	[ ! -s "$T/out" ] || fail "$1: wrote to stdout: $(head -c 300 "$T/out")"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "$1: not one line: $(cat "$T/err")"
	grep -q "^kpt-heldout-eval: .*$2" "$T/err" || fail "$1: lacks '$2': $(cat "$T/err")"
}

run timeout 120 "$H" "$B"
expect_rc 0 "the folder alone"
grep '^| ' "$T/out" >"$T/plain"
run timeout 120 "$H" --against "$B" "$B"
expect_rc 0 "--against its own folder"
expect_out "**NVIDIA H200**: ${#S[@]} sessions from ${#S[@]} hosts, each gated against the ${#S[@]} sessions of the fixed baseline (less its own host's)."
grep '^| ' "$T/out" >"$T/against"
[ -s "$T/against" ] || fail "--against printed no table"
cmp -s "$T/plain" "$T/against" ||
	fail "--against its own folder differs from leave one host out: $(diff "$T/plain" "$T/against")"

# out of sample: three sessions against a base of three others
mkdir "$T/cand" "$T/base" "$T/two" "$T/one" "$T/mine"
ln -s "${S[0]}" "${S[1]}" "${S[2]}" "$T/cand/"
ln -s "${S[3]}" "${S[4]}" "${S[5]}" "$T/base/"
run timeout 120 "$H" --against "$T/base" "$T/cand"
expect_rc 0 "3 against 3 others"
expect_out "**NVIDIA H200**: 3 sessions from 3 hosts, each gated against the 3 sessions of the fixed baseline"
expect_out " of 3 (key or shift) |"
[ "$(grep -c '^held out .*3 sessions in the baseline)$' "$T/err")" = 3 ] || fail "held-out lines: $(cat "$T/err")"

# a candidate whose host is one of a 2-session base's: 1 session left
ln -s "${S[0]}" "${S[1]}" "$T/two/"
ln -s "${S[0]}" "$T/mine/"
run timeout 120 "$H" --against "$T/two" "$T/mine"
one_line_error "a base of 1 other host" "1 baseline session of other hosts: 2 or more needed"
ln -s "${S[0]}" "$T/one/"
run timeout 120 "$H" --against "$T/one" "$T/cand"
one_line_error "a base of 1 session" "holds 1 session: 2 or more needed"
run timeout 120 "$H" --against "$T/none" "$T/cand"
one_line_error "a missing base" "cannot open folder '$T/none'"
run timeout 120 "$H" --against
expect_rc 2 "--against without a folder"
grep -q '^usage: kpt-heldout-eval .*--against BASE_DIR' "$T/err" || fail "usage: $(cat "$T/err")"
echo "ok: --against"
exit 0
