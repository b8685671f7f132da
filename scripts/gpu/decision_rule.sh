#!/usr/bin/env bash
# decision_rule.sh - evidence for the decision rule on a real GPU (issue 5).
# Called by scripts/gpu-check.sh with BUILD, SRC and RES set; standalone it
# builds what it needs into $BUILD (default build-gpu).
#
# Records once a POOL of independent runs (processes) of three copy kernels
# (memory.copy.24MiB ~17 us, memory.copy.128MiB ~90 us, memory.copy.512MiB
# ~350 us) and two never-planted controls (a reduction and a triad),
# unchanged, and 15 runs each with the three copies planted 2%, 5% and 10%
# slower (kpt-workloads --plant: real extra work inside the kernel).
# Then, offline (bench/analyzer/rule_eval_gpu.sh, which can be rerun later
# on the returned files), kpt-rule-eval draws A/A gates (M + M
# distinct runs of the pool) and power gates (M pool runs vs M planted runs)
# for M = 3 and 5, with the rule, the rule with Welch's t, and a pooled
# Mann-Whitney U test. Keeps the recordings (small) for tests/data.
# Budget: about 3 minutes on an H100; stops recording early at DEADLINE_S.
#
# Also writes copy_base.kpt / copy_plant10_512MiB.kpt (5 runs each) for
# tests/data, and gates the quick suite end to end.
# Optional: KPT_BASELINE_SUITES="default seed" also records those suites
# with --runs 5 into $RES/baselines/<slug>/<suite>.kpt (several minutes);
# with KPT_BASELINES_ONLY=1 it does only that:
#   KPT_BASELINE_SUITES="default seed" KPT_BASELINES_ONLY=1 scripts/gpu-check.sh decision_rule
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build-gpu}
RES=${RES:-$SRC/out/decision_rule}
DEADLINE_S=${DEADLINE_S:-240}
NULL_RUNS=${NULL_RUNS:-40}
PLANT_RUNS=${PLANT_RUNS:-15}
ITERS=${ITERS:-30}
mkdir -p "$RES"
K=$BUILD/cli/kptprof
KW=$BUILD/cli/kpt-workloads
EVAL=$BUILD/kpt-rule-eval
WL="memory.copy.24MiB memory.copy.128MiB memory.copy.512MiB"
# Never planted: flags on them in power gates are false alarms (drift between
# the pool and the planted recordings, for instance).
CONTROL="memory.reduce.f32.1M memory.triad.f32.64M"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
	--format=csv >"$RES/gpu.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >>"$RES/gpu.txt"
if [ ! -x "$K" ] || [ ! -x "$KW" ] || [ ! -x "$EVAL" ]; then
	{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
		&& cmake --build "$BUILD" -j16; } \
		>"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 2; }
fi
list=$("$KW" --list 2>/dev/null)
for w in $WL $CONTROL; do
	grep -q "^$w[[:space:]]" <<<"$list" || { echo "workload $w missing from kpt-workloads --list"; exit 2; }
done

# record NAME RUNS [PLANT_PCT]: one file of RUNS processes.
record() {
	local name=$1 runs=$2 pct=${3:-} plant=() t0=$(date +%s)
	if [ -n "$pct" ]; then
		for w in $WL; do plant+=(--plant "$w=$pct"); done
	fi
	timeout 150 "$K" record --runs "$runs" -o "$RES/$name.kpt" -- \
		"$KW" --iterations "$ITERS" --warmup 5 "${plant[@]}" $WL $CONTROL >"$RES/record-$name.log" 2>&1
	local rc=$?
	echo "record $name runs=$runs plant=${pct:-0} rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
	return $rc
}

# Baselines for the suites in KPT_BASELINE_SUITES: 5 runs each, placed as
# $RES/baselines/<gpu-slug>/<suite>.kpt (copy them to baselines/ and commit).
record_baselines() {
	local s t0
	for s in ${KPT_BASELINE_SUITES:-}; do
		t0=$(date +%s)
		timeout 500 "$K" record --suite "$s" --runs 5 -o "$RES/baseline-$s.kpt" \
			>"$RES/record-baseline-$s.log" 2>&1 &&
			"$K" baseline update "$RES/baseline-$s.kpt" --suite "$s" --baselines "$RES/baselines" \
				>>"$RES/record-baseline-$s.log" 2>&1
		echo "baseline $s rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
		rm -f "$RES/baseline-$s.kpt"
	done
	# Candidates for the README's main command without a GPU (tests/data):
	# the default suite again, 3 runs, unchanged and with the 128 MiB copy
	# planted 5% slower.
	case " ${KPT_BASELINE_SUITES:-} " in *" default "*)
		t0=$(date +%s)
		timeout 120 "$K" record --runs 3 -o "$RES/default_candidate.kpt" --suite default \
			>"$RES/record-candidate.log" 2>&1 &&
			timeout 120 "$K" record --runs 3 -o "$RES/default_plant5_copy128MiB.kpt" -- "$KW" --suite default --settle-us 3000 \
				--plant memory.copy.128MiB=5 >>"$RES/record-candidate.log" 2>&1
		echo "candidates rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
	esac
}
if [ "${KPT_BASELINES_ONLY:-0}" = 1 ]; then
	record_baselines
	exit 0
fi

# Time one run first to fit the budget: the pool and three planted files.
t0=$(date +%s)
record probe 2 || { tail -20 "$RES/record-probe.log"; exit 2; }
per=$(( ($(date +%s) - t0 + 1) / 2 ))
[ $per -lt 1 ] && per=1
budget=$(( DEADLINE_S - $(elapsed) - 30 ))
need=$(( per * (NULL_RUNS + 3 * PLANT_RUNS) ))
if [ $need -gt $budget ]; then
	NULL_RUNS=$(( budget * 40 / 85 / per )); PLANT_RUNS=$(( budget * 15 / 85 / per ))
	[ $NULL_RUNS -lt 12 ] && NULL_RUNS=12; [ $PLANT_RUNS -lt 6 ] && PLANT_RUNS=6
	echo "about ${per}s per run: pool $NULL_RUNS runs, planted $PLANT_RUNS runs each" | tee -a "$RES/steps.txt"
fi
rm -f "$RES/probe.kpt"
record null "$NULL_RUNS" || exit 2
for p in 2 5 10; do
	record "plant$p" "$PLANT_RUNS" "$p" || exit 2
done

"$K" report "$RES/null.kpt" >"$RES/null-report.txt" 2>&1
"$K" diff "$RES/null.kpt" "$RES/plant5.kpt" --base-runs 0-2 --new-runs 0-2 \
	--markdown "$RES/example-diff.md" --json "$RES/example-diff.json" >"$RES/example-diff.txt" 2>&1
M=3,5
[ "$PLANT_RUNS" -lt 5 ] && M=3
bash "$SRC/bench/analyzer/rule_eval_gpu.sh" "$BUILD" "$RES" "$M"
rc=$?
echo "eval rc=$rc $(elapsed)s" | tee -a "$RES/steps.txt"
cat "$RES/eval.md"

# End to end on the GPU: a baseline of the quick suite, then `kptprof gate`
# records the suite again (child `kptprof record`) and gates it: an A/A gate
# of real, unchanged code, expected to exit 0.
if [ "$(elapsed)" -lt $(( DEADLINE_S + 30 )) ]; then
	t0=$(date +%s)
	timeout 90 "$K" record --suite quick --runs 3 -o "$RES/quick-base.kpt" >"$RES/record-quick.log" 2>&1 &&
		"$K" baseline update "$RES/quick-base.kpt" --baselines "$RES/bl" >>"$RES/record-quick.log" 2>&1 &&
		timeout 90 "$K" gate --suite quick --runs 3 --baselines "$RES/bl" -o "$RES/quick-gate.kpt" \
			--junit "$RES/gate.xml" --markdown "$RES/gate.md" --json "$RES/gate.json" >"$RES/gate.txt" 2>&1
	echo "gate quick (A/A) rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
fi

# Small real recordings for the CPU tests (tests/data, tests/cli/test_diff_real.sh):
# 5 runs unchanged, and 5 runs with only memory.copy.512MiB planted 10% slower.
if [ "$(elapsed)" -lt $(( DEADLINE_S + 40 )) ]; then
	t0=$(date +%s)
	timeout 60 "$K" record --runs 5 -o "$RES/copy_base.kpt" -- "$KW" --iterations 20 --warmup 3 $WL \
		>"$RES/record-copy_base.log" 2>&1 &&
		timeout 60 "$K" record --runs 5 -o "$RES/copy_plant10_512MiB.kpt" -- "$KW" --iterations 20 \
			--warmup 3 --plant memory.copy.512MiB=10 $WL >"$RES/record-copy_plant.log" 2>&1
	echo "test recordings rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
	"$K" diff "$RES/copy_base.kpt" "$RES/copy_plant10_512MiB.kpt" >"$RES/copy-diff.txt" 2>&1
	echo "copy_base vs copy_plant10_512MiB: exit $? (want 1)" | tee -a "$RES/steps.txt"
fi

record_baselines
exit $rc
