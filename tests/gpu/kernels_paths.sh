#!/usr/bin/env bash
# kernels_paths.sh - on a compute capability 9.0 GPU (exit 77 elsewhere or
# without one), the workloads run the Hopper kernels their dispatchers are
# meant to pick, seen where a user sees them: `kptprof record` of
# kpt-workloads, each kernel under its workload's NVTX range. A silent
# fallback (the mma.sync backward or forward, the per-expert cuBLAS or
# mma.sync grouped MoE FFN) passes every --check, and only this notices.
# Env: KPTPROF, KW.
set -u
fail() { echo "FAIL: $*"; exit 1; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1)
[ -n "$cc" ] || { echo "no GPU"; exit 77; }
[ "$cc" = "9.0" ] || { echo "compute capability $cc: the sm_90a paths do not run here"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# workload, then the kernel its sm_90a path launches
pairs="attention.bwd.bf16.d128.s2048 attn_bwd_sm90_kernel
attention.bwd.bf16.d64.s2048.causal attn_bwd_sm90_kernel
attention.train.bf16.d128.s2048 attn_bwd_sm90_kernel
attention.fwd.bf16.d64.s2048 attn_fwd_sm90_d64_kernel
attention.fwd.bf16.d128.s2048 attn_fwd_sm90_kernel
moe.layer.e8.top2.h512.b32.s128 moe_ffn_sm90_kernel
moe.layer.e8.top2.h1024.b32.s128 moe_ffn_sm90_kernel
moe.layer.e128.top8.h2048.f768.b32.s1024 moe_ffn_sm90_kernel
moe.layer.e8.top2.h512.f2048.mc.b8.s512 moe_ffn_sm90_mc_kernel"
names=$(echo "$pairs" | awk '{ print $1 }')
# shellcheck disable=SC2086
"$KPTPROF" record -o "$work/p.kpt" -- "$KW" --iterations 2 --warmup 0 $names >"$work/rec.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { tail -5 "$work/rec.log"; fail "record exit $rc"; }
"$KPTPROF" export "$work/p.kpt" --format csv -o "$work/p.csv" || fail "export exit $?"
echo "$pairs" | python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = 0
for line in sys.stdin:
    wl, kern = line.split()
    mine = [r["name"] for r in rows if r["kind"] == "kernel" and wl in r["range"].split("/")]
    if not any(kern in n for n in mine):
        print(f"FAIL: {wl}: no {kern} among its {len(mine)} kernels: {sorted(set(n[:60] for n in mine))[:6]}")
        bad = 1
    else:
        print(f"{wl}: {kern} ({len(mine)} kernels in its range)")
sys.exit(bad)
' "$work/p.csv" || exit 1
echo ok
