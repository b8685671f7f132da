#!/usr/bin/env bash
# kineto_ab.sh - before/after torch.profiler traces of one machine through
# `kptprof import` + `kptprof diff` (issue 40 (b)): N seeds (default 20) of
# tests/synth/kineto_trace.py (20 kernels, 30 steps, step-to-step jitter
# 0.5-1%, a per-process offset per kernel, 1% outliers), each a "before"
# trace, an "after" with the 203 us GEMM 5% slower and an unchanged
# "after". Prints one line per seed and the rates:
#   found   the planted +5% key SLOW
#   other   SLOW keys besides it (false alarms in the changed pair)
#   aa      SLOW keys of the unchanged pair (false alarms)
# Usage: kineto_ab.sh KPTPROF [SEEDS] [DIFF OPTIONS...]; the traces carry a
# host name (so they compare as one machine) unless KPT_AB_NOHOST=1, then
# pass --same-machine among the diff options.
set -u
K=${1:?usage: kineto_ab.sh KPTPROF [SEEDS] [DIFF OPTIONS...]}
N=${2:-20}
shift $(( $# < 2 ? $# : 2 ))
G=$(dirname "$0")/../../tests/synth/kineto_trace.py
W=$(mktemp -d "${TMPDIR:-/tmp}/kpt-kineto-ab.XXXXXX")
trap 'rm -rf "$W"' EXIT
HOST="--host gpu-node-7"
[ "${KPT_AB_NOHOST:-0}" = 1 ] && HOST=""
found=0 other=0 aa=0 aa_pairs=0
for i in $(seq 1 "$N"); do
	python3 "$G" -o "$W/before.json.gz" --seed $((1000 + i)) --pid $((4000 + i)) $HOST &&
	python3 "$G" -o "$W/slow.json.gz" --seed $((2000 + i)) --pid $((5000 + i)) --slow 5 $HOST &&
	python3 "$G" -o "$W/same.json.gz" --seed $((3000 + i)) --pid $((6000 + i)) $HOST || exit 2
	for t in before slow same; do
		"$K" import "$W/$t.json.gz" -o "$W/$t.kpt" 2>/dev/null || { echo "import of $t failed"; exit 2; }
	done
	"$K" diff "$W/before.kpt" "$W/slow.kpt" "$@" --json "$W/s.json" >/dev/null
	"$K" diff "$W/before.kpt" "$W/same.kpt" "$@" --json "$W/a.json" >/dev/null
	line=$(python3 - "$W/s.json" "$W/a.json" <<'PY'
import json, sys
s, a = (json.load(open(p)) for p in sys.argv[1:])
victim = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
slow = [k for k in s["keys"] if k["verdict"] == "SLOW"]
f = int(any(k["name"] == victim for k in slow))
v = [k for k in s["keys"] if k["name"] == victim][0]
print(f, len(slow) - f, sum(k["verdict"] == "SLOW" for k in a["keys"]),
      "%+.2f%% %s" % (v["change_pct"], v["verdict"]), a["model"]["machine"])
PY
) || exit 2
	read -r f o x rest <<<"$line"
	echo "seed $i: planted ${rest}; other SLOW $o; unchanged pair SLOW $x"
	found=$((found + f)) other=$((other + o)) aa=$((aa + x)) aa_pairs=$((aa_pairs + (x > 0)))
done
echo "found $found/$N; other SLOW keys $other (19 keys x $N pairs); unchanged pairs with a SLOW $aa_pairs/$N ($aa keys)"
