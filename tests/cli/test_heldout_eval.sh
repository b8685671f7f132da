#!/usr/bin/env bash
# The held-out table of docs/decision-rule.md ("Held-out hosts per duration
# bucket") is what the rule gives now on the committed baselines: the table
# and docs/decision-rule-heldout.dat are regenerated (kpt-heldout-eval,
# bench/analyzer/heldout_eval.sh) and must equal the committed ones, so a
# change to the rule or to the baselines re-measures. No gnuplot needed.
. "$KPT_SRC/tests/cli/cli_lib.sh"
[ -x "$KPT_BUILD/kpt-heldout-eval" ] || skip "kpt-heldout-eval is not built"
HOW="regenerate with 'bench/analyzer/heldout_eval.sh $KPT_BUILD' (rewrites the block, the .dat and the plot) and commit them"
run bash "$KPT_SRC/bench/analyzer/heldout_eval.sh" "$KPT_BUILD" "$T/new"
expect_rc 0 "heldout_eval.sh: $(cat "$T/err")"
# what is measured: both GPU models, every bucket, the gates of each
for want in "**NVIDIA H100 80GB HBM3**: 7 sessions from 7 hosts" "**NVIDIA H200**: 16 sessions from 16 hosts" \
	"| < 10 us |" "| 10-50 us |" "| 50-200 us |" "| >= 200 us |" "of 7 (key or shift)" "of 16 (key or shift)"; do
	grep -qF -- "$want" "$T/new/heldout.md" || fail "the regenerated table lacks '$want': $(cat "$T/new/heldout.md")"
done
awk '/^<!-- heldout-eval begin/ { on = 1; next } /^<!-- heldout-eval end -->$/ { on = 0 } on' \
	"$KPT_SRC/docs/decision-rule.md" >"$T/doc.md"
[ -s "$T/doc.md" ] || fail "docs/decision-rule.md has no heldout-eval block: $HOW"
diff -u "$T/doc.md" "$T/new/heldout.md" >"$T/diff" ||
	fail "the held-out table of docs/decision-rule.md is not what the rule gives now: $HOW
$(cat "$T/diff")"
cmp -s "$KPT_SRC/docs/decision-rule-heldout.dat" "$T/new/heldout.dat" ||
	fail "docs/decision-rule-heldout.dat is not what the rule gives now: $HOW"
echo "ok: the held-out table is current"
exit 0
