# kptprof report on a recording of the built-in workloads (the committed H100
# seed baseline): a Workloads section with the GPU time per iteration and the
# achieved GB/s and TFLOP/s against the ceilings the recording carries; none
# for a recording of another program (torch_small.kpt).
. "$KPT_SRC/tests/cli/cli_lib.sh"
B="$KPT_SRC/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/seed.kpt"
[ -r "$B" ] || skip "the H100 seed baseline is missing"
run "$KPTPROF" report "$B" --top 0
expect_rc 0 "report of the seed baseline"
expect_out "Workloads (GPU time per iteration"
expect_out "ceilings: copy 3020 GB/s, bf16 794 TFLOP/s)"
# the attention forward at 16k: compute-bound, hundreds of TFLOP/s and a
# share of the bf16 ceiling; the decode at 1024: memory-bound, > 50% of copy
awk '$NF == "attention.fwd.bf16.d128.s16384" { ok = ($(NF-2) > 300 && $(NF-1) > 30) } END { exit !ok }' "$T/out" ||
	fail "attention forward row: $(grep 'attention.fwd.bf16.d128.s16384$' "$T/out")"
awk '$NF == "attention.decode.bf16.d128.ctx1024.b8h32" { ok = ($(NF-4) > 1500 && $(NF-3) > 50) } END { exit !ok }' "$T/out" ||
	fail "decode row: $(grep 'ctx1024.b8h32$' "$T/out")"
run "$KPTPROF" report "$KPT_DATA/torch_small.kpt"
expect_rc 0 "report of torch_small"
expect_no_out "Workloads ("
exit 0
