#!/usr/bin/env bash
# rule_eval_gpu.sh - the offline half of scripts/gpu/decision_rule.sh: runs
# kpt-rule-eval on the recordings it made (null.kpt, plant2/5/10.kpt), on the
# GPU machine or later on any machine from the returned results folder.
#
#   bench/analyzer/rule_eval_gpu.sh BUILD_DIR RESULTS_DIR [M_LIST]
#
# Writes RESULTS_DIR/eval.md (the rule as shipped), eval-thr1.md (threshold
# 1% for kernels >= 10 us) and eval-keep.md (NVML sample filter off), each
# with the rule, the rule with Welch's t and the pooled U test. The planted
# kernels are SHORT, MID and LONG (workload names; defaults: the copies that
# decision_rule.sh plants; the 2026-11-22 pool in 308f1d3:bench/analyzer/h100-20261122
# used SHORT=memory.copy.4MiB MID=memory.copy.64MiB).
set -u
BUILD=${1:?usage: rule_eval_gpu.sh BUILD_DIR RESULTS_DIR [M_LIST]}
RES=${2:?usage: rule_eval_gpu.sh BUILD_DIR RESULTS_DIR [M_LIST]}
M=${3:-3,5}
EVAL=$BUILD/kpt-rule-eval
for f in null plant2 plant5 plant10; do
	[ -s "$RES/$f.kpt" ] || { echo "rule_eval_gpu: '$RES/$f.kpt' missing"; exit 2; }
done
args=(--null "$RES/null.kpt" --planted "2:$RES/plant2.kpt" --planted "5:$RES/plant5.kpt"
      --planted "10:$RES/plant10.kpt" --target "short=${SHORT:-memory.copy.24MiB}:copy_vec"
      --target "mid=${MID:-memory.copy.128MiB}:copy_vec" --target "long=${LONG:-memory.copy.512MiB}:copy_vec" --m "$M" --gates 40 --within-only)
rc=0
"$EVAL" "${args[@]}" --markdown "$RES/eval.md" >"$RES/eval.txt" 2>&1 || rc=$?
"$EVAL" "${args[@]}" --threshold 1 --markdown "$RES/eval-thr1.md" >"$RES/eval-thr1.txt" 2>&1 || rc=$?
"$EVAL" "${args[@]}" --keep-throttled --markdown "$RES/eval-keep.md" >"$RES/eval-keep.txt" 2>&1 || rc=$?
exit $rc
