#!/usr/bin/env bash
# clock_probe.sh - does the SM clock move while the default suite runs?
# Run on a GPU machine with a built kptprof (K) and kpt-workloads (KW):
# nvidia-smi samples clocks, power and event reasons every 5 ms while
# kptprof records the default suite 3 times (one process each) and the
# attention workload alone with a long run; the kernels' times and the
# samples are then compared on the CPU (clock_join.py). Leaves the card's
# settings alone: it only reads them.
#   K=... KW=... OUT=dir bash clock_probe.sh
set -u
OUT=${OUT:?}
mkdir -p "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
	--format=csv,noheader -lms 5 >"$OUT/smi.csv" 2>&1 &
smi=$!
sleep 1
date +%s.%N >"$OUT/t0.txt"
"$K" record -o "$OUT/suite3.kpt" --runs 3 --suite default >"$OUT/suite3.log" 2>&1
echo "suite3 rc=$?"
"$K" record -o "$OUT/attn.kpt" --runs 3 -- "$KW" --iterations 200 attention.fwd.bf16.d128.s2048 \
	attention.fwd.bf16.d64.s2048 >"$OUT/attn.log" 2>&1
echo "attn rc=$?"
sleep 1
kill "$smi"
wait "$smi" 2>/dev/null
wc -l "$OUT/smi.csv"
