#!/usr/bin/env bash
# kernels_plant.sh - every workload family's planted slowdown is real and
# about the size asked (exit 77 without a GPU). For one workload per family
# it runs `kpt-workloads NAME --iterations 30 --json` ROUNDS times without
# and with --plant NAME=10, interleaved (so clock and thermal drift hit both
# sides alike), and asks the median of the per-round ratios of the medians
# to lie in [LO, HI] = [1.05, 1.20]:
#   - the plants add 10% more work of the kernel's own kind (memory-bound
#     kernels: 10% more bytes from DRAM; compute-bound: 10% more tiles), so a
#     correct plant lands near 1.10;
#   - the floor of 1.05 allows for work that does not scale one to one
#     (rounding of extra tiles or rows per block, the unplanted part of a
#     multi-kernel workload such as MoE's router and combine, the decode
#     combine kernel, launch overhead) and still fails a plant that does
#     nothing or hits L2;
#   - the ceiling of 1.20 fails a plant that does twice the work asked or
#     upsets the kernel's occupancy (a register or shared-memory change).
# Each planted workload must also pass --check with the plant (output
# unchanged). fp8 GEMM (cuBLASLt's), transpose, the mma.sync attention
# forward and the MoE layers where AUTO runs the mma.sync grouped GEMM or
# cuBLAS have no plant: kernels/README.md says why. The attention backward's plant (extra
# key blocks on mma.sync; on 9.0 the sm_90a kernel's extra query-block steps)
# and fp8 quantize's (rows of zeros past the data) run on any sm_80+ GPU. The attention forward plant is the wgmma kernel's (d128 and d64), the
# MoE plant the wgmma grouped FFN's (extra tiles; on the E128 layer, whose
# blocks loop over ~48 and ~127 tiles each: small layers round the extra
# tiles to whole rounds, kernels/README.md): run this on an H100/H200
# (compute capability 9.0).
set -u
fail() { echo "FAIL: $*"; exit 1; }
KW=${KW:-kpt-workloads}
ROUNDS=${ROUNDS:-5}
PCT=${PCT:-10} # another size of plant: set LO and HI to match
LO=${LO:-1.05}
HI=${HI:-1.20}
WORKLOADS=${WORKLOADS:-"memory.copy.128MiB memory.memset.256MiB memory.triad.f32.64M
memory.reduce.f32.64M
attention.fwd.bf16.d128.s2048 attention.fwd.bf16.d128.s2048.causal
attention.fwd.bf16.d64.s16384 attention.fwd.bf16.d64.s16384.causal
attention.decode.bf16.d128.ctx4096.b8h32
attention.bwd.bf16.d128.s2048 attention.bwd.bf16.d64.s2048.causal
moe.layer.e128.top8.h2048.f768.b8.s4096
fp8.quant.e4m3.bf16.per_token.8192x8192"}
"$KW" --list >/dev/null || fail "kpt-workloads --list"
# A GPU at all? (exit 77 from the runner)
"$KW" memory.copy.4MiB --iterations 1 --warmup 0 >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "kpt-workloads exit $rc"
med() { "$KW" "$@" --iterations 30 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["median_s"])'; }
bad=0
for w in $WORKLOADS; do
	"$KW" --list --json | grep -q "\"name\": \"$w\"" || fail "no workload '$w'"
	"$KW" --check "$w" --plant "$w=$PCT" >/dev/null || { echo "FAIL: $w: --check with --plant $w=$PCT"; bad=1; continue; }
	ratios=""
	for r in $(seq "$ROUNDS"); do
		b=$(med "$w") && p=$(med "$w" --plant "$w=$PCT") || fail "$w: run failed"
		ratios="$ratios $(awk -v b="$b" -v p="$p" 'BEGIN { printf "%.4f", p / b }')"
	done
	m=$(echo $ratios | tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	if awk -v m="$m" -v lo="$LO" -v hi="$HI" 'BEGIN { exit !(m >= lo && m <= hi) }'; then
		echo "ok   $w: median ratio $m (rounds:$ratios)"
	else
		echo "FAIL $w: median ratio $m not in [$LO, $HI] (rounds:$ratios)"
		bad=1
	fi
done
[ $bad -eq 0 ] || exit 1
echo ok
