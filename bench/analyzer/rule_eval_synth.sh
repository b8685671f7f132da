#!/usr/bin/env bash
# The decision-rule evaluation on kpt-synth data (no GPU): a pool of 40
# unchanged runs, and 15 runs each with a short (< 20 us) and a long
# (> 200 us) kernel planted 2%, 5% and 10% slower; then kpt-rule-eval.
#
#   bench/analyzer/rule_eval_synth.sh BUILD_DIR [NOISE_PCT]
#
# kpt-synth derives the kernels from the seed, so the planted files keep the
# pool's seed; then run r of every file has the same noise draws, and the
# evaluation (--disjoint-planted) pairs base and new runs with different run
# numbers so that they are independent, as real processes are.
set -eu
BUILD=${1:?usage: rule_eval_synth.sh BUILD_DIR [NOISE_PCT]}
NOISE=${2:-1.0}
T=$(mktemp -d /tmp/kpt-rule-eval.XXXXXX)
trap 'rm -rf "$T"' EXIT
S="$BUILD/kpt-synth"
"$S" -o "$T/null.kpt" --runs 40 --seed 3 --noise "$NOISE" --iterations 20
"$BUILD/cli/kptprof" diff "$T/null.kpt" "$T/null.kpt" --json "$T/self.json" -q
read -r SHORT LONG < <(python3 - "$T/self.json" <<'EOF'
import json, sys
ks = json.load(open(sys.argv[1]))["keys"]
names = [k["mangled"] for k in ks]
uniq = [k for k in ks if names.count(k["mangled"]) == 1]
short = min((k for k in uniq if 3000 < k["base_ns"] < 20000), key=lambda k: k["base_ns"])
long_ = min((k for k in uniq if k["base_ns"] > 200000), key=lambda k: k["base_ns"])
print(short["mangled"], long_["mangled"])
EOF
)
for p in 2 5 10; do
	"$S" -o "$T/p$p.kpt" --runs 40 --seed 3 --noise "$NOISE" --iterations 20 --slow "$SHORT:$p" --slow "$LONG:$p"
done
"$BUILD/kpt-rule-eval" --null "$T/null.kpt" --planted "2:$T/p2.kpt" --planted "5:$T/p5.kpt" \
	--planted "10:$T/p10.kpt" --target "short=$SHORT" --target "long=$LONG" --m 3,5 --gates 40 \
	--disjoint-planted --within-only ${THRESHOLD:+--threshold "$THRESHOLD"} --markdown "${OUTMD:-/dev/stdout}"
