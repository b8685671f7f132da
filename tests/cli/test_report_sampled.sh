#!/usr/bin/env bash
# report of an on-demand recording (tests/data/ondemand_h200x2.kpt: 2 ranks
# on 2 H200s, 165 triggers, scripts/gpu/sampling.sh, session 15): the
# window line, CUPTI attached only around the captures with the time per
# attach and detach, and the counts; the merged meta sums the counts over
# the ranks.
. "$KPT_SRC/tests/cli/cli_lib.sh"
F=$KPT_SRC/tests/data/ondemand_h200x2.kpt
run "$KPTPROF" report "$F" --top 3
expect_rc 0 "report of an on-demand recording"
expect_out "window    one step on demand of range 'step'"
expect_out "opened 330 times (all processes)"
expect_out "CUPTI only around windows: attached 330 x 12.942 ms, detached 332 x 4.074 ms"
expect_out "windows missed 0, requests 166, untraced ranges not kept 393427"
grep -q "CUPTI detached after the last window" "$T/out" && fail "a sampled run read as detached after its last window"
# 330 captured steps of 31 kernels each: 16 in the main thread's "step"
# range, 3 in NCCL's range inside it, 12 of the backward that autograd's
# own thread launches outside any range of its own (as in a whole-run
# recording of the program)
expect_out "kernels 10230"
echo ok
