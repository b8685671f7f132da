#!/usr/bin/env bash
# scripts/gpu/settle.sh - the power controller in the paired noise of
# compute-bound kernels: bench/analyzer/clock/settle_ab.sh (interleaved A/A
# `kptprof ab` of the attention, MoE and two memory workloads with the GPU
# idle 0, 1 ms and 10 ms before each timed iteration: kpt-workloads
# --settle-us), then bench/analyzer/kpt_ab_eval.c on each. Writes under
# $RES; needs SRC, BUILD, RES. PAIRS (default 15).
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
K=$BUILD/cli/kptprof KW=$BUILD/cli/kpt-workloads OUT=$RES bash "$SRC/bench/analyzer/clock/settle_ab.sh"
for s in 0 1000 10000; do
	echo "== settle $s us"
	"$BUILD/kpt-ab-eval" --per-key --pairs "${PAIRS:-15}" "$RES/settle$s" 2>/dev/null
done
