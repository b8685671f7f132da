#!/usr/bin/env bash
# The clustered MoE FFN's barrier protocol (kernels/moe/moe_ffn_sm90_mc.cu)
# through its randomised CPU model (bench/kernels/moe_mc_protocol.py): 400
# random cases (experts with 0 and odd tile counts, plants, ST / LAG 4 / 2
# and 6 / 3, completions in random order) pass; and the model still
# catches the two bugs it was written for: a consumer that releases only
# its own CTA's stage (the partner's multicast overwrites a stage in use)
# and LAG = ST - 1 (a gather arrival waits on its own release: deadlock).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
M="$KPT_SRC/bench/kernels/moe_mc_protocol.py"
run timeout 300 python3 "$M" 400
expect_rc 0 "the protocol model, 400 cases"
expect_out "runs 400 bad 0"
MOE_MC_MUTATE=local run timeout 300 python3 "$M" 400
expect_rc 1 "a local-only release"
expect_out "overwrote a stage in use"
MOE_MC_MUTATE=lag run timeout 300 python3 "$M" 400
expect_rc 1 "LAG = ST - 1"
expect_out "DEADLOCK"
echo "ok: the protocol model passes, and catches both planted bugs"
