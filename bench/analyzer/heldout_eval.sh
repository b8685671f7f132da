#!/usr/bin/env bash
# heldout_eval.sh - the decision rule on held-out hosts, per duration bucket
# and GPU model, on the committed baseline sessions (docs/decision-rule.md,
# "Held-out hosts per duration bucket"):
#
#   bench/analyzer/heldout_eval.sh BUILD_DIR            # update the docs
#   bench/analyzer/heldout_eval.sh BUILD_DIR OUT_DIR    # write OUT_DIR/heldout.{md,dat} only
#
# Every baselines/<slug>/default/ folder of 3 sessions or more is one GPU
# model; kpt-heldout-eval holds each session out in turn (its host's
# sessions leave the base with it). Without OUT_DIR it replaces the block
# between the heldout-eval markers of docs/decision-rule.md, writes
# docs/decision-rule-heldout.dat and, where gnuplot is installed,
# docs/decision-rule-heldout.png (bench/analyzer/heldout_eval.gp).
# cli.test_heldout_eval regenerates the block and fails when the docs'
# differs: a change to the rule must run this and commit what it writes.
set -u
BUILD=${1:?usage: heldout_eval.sh BUILD_DIR [OUT_DIR]}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
EVAL=$BUILD/kpt-heldout-eval
DOC=$SRC/docs/decision-rule.md
BEGIN='<!-- heldout-eval begin: bench/analyzer/heldout_eval.sh BUILD writes this block -->'
END='<!-- heldout-eval end -->'
[ -x "$EVAL" ] || { echo "heldout_eval: '$EVAL' not built (cmake --build $BUILD --target kpt-heldout-eval)" >&2; exit 2; }
dirs=()
for d in "$SRC"/baselines/*/default; do
	n=$(find "$d" -maxdepth 1 -name '*.kpt' | wc -l)
	[ "$n" -ge 3 ] && dirs+=("$d")
done
[ "${#dirs[@]}" -gt 0 ] || { echo "heldout_eval: no baselines/<slug>/default/ of 3 sessions or more" >&2; exit 2; }
OUT=${2:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kpt-heldout.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# relative folder names: the table names the data, not this checkout
(cd "$SRC" && "$EVAL" --data "$TMP/heldout.dat" "${dirs[@]#"$SRC"/}") >"$TMP/heldout.md" 2>"$TMP/heldout.log" ||
	{ cat "$TMP/heldout.log" >&2; echo "heldout_eval: kpt-heldout-eval failed" >&2; exit 2; }
if [ -n "$OUT" ]; then
	mkdir -p "$OUT" && cp "$TMP"/heldout.md "$TMP"/heldout.dat "$TMP"/heldout.log "$OUT"/ || exit 2
	exit 0
fi
if ! grep -qxF "$BEGIN" "$DOC" || ! grep -qxF "$END" "$DOC"; then
	echo "heldout_eval: '$DOC' lacks the heldout-eval markers" >&2
	exit 2
fi
awk -v b="$BEGIN" -v e="$END" -v f="$TMP/heldout.md" '
	$0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
	$0 == e { skip = 0 }
	!skip' "$DOC" >"$TMP/doc.md" && cat "$TMP/doc.md" >"$DOC" || exit 2
cp "$TMP/heldout.dat" "$SRC/docs/decision-rule-heldout.dat" || exit 2
if command -v gnuplot >/dev/null; then
	gnuplot -e "dat='$SRC/docs/decision-rule-heldout.dat'; out='$SRC/docs/decision-rule-heldout.png'" \
		"$SRC/bench/analyzer/heldout_eval.gp" || exit 2
else
	echo "heldout_eval: gnuplot is not installed: docs/decision-rule-heldout.png not redrawn" >&2
fi
cat "$TMP/heldout.md"
