#!/usr/bin/env bash
# settle_ab.sh - does letting the GPU idle before each timed iteration
# (kpt-workloads --settle-us) take the power controller's state out of the
# run-to-run noise of compute-bound kernels? Three interleaved A/A `kptprof
# ab` runs of the same workloads on one machine: no settle, 1 ms, 10 ms;
# bench/analyzer/kpt_ab_eval.c --per-key judges each (paired noise, +2%).
#   K=kptprof KW=kpt-workloads OUT=dir PAIRS=15 bash settle_ab.sh
set -u
OUT=${OUT:?}
PAIRS=${PAIRS:-15}
W="fp8.gemm.e4m3xe4m3.8192x8192x8192 attention.fwd.bf16.d128.s2048 attention.fwd.bf16.d128.s16384
 attention.fwd.bf16.d128.s2048.causal attention.fwd.bf16.d64.s2048 attention.fwd.fp16.d128.s2048
 moe.layer.e8.top2.h512.b32.s128 memory.memset.256MiB memory.copy.512MiB"
for s in 0 1000 10000; do
	t=$(date +%s)
	# shellcheck disable=SC2086
	timeout 200 "$K" ab --runs "$PAIRS" -o "$OUT/settle$s" -- "$KW" --settle-us $s $W ::: "$KW" --settle-us $s $W \
		>"$OUT/settle$s.log" 2>&1
	echo "settle $s us: rc=$? $(( $(date +%s) - t )) s"
	rm -f "$OUT/settle$s"/[ab]-*.kpt
done
