#!/usr/bin/env python3
"""summarize.py - the Markdown table for bench/RESULTS.md from one run's
kpt-workloads --json output and torch_equiv.py output.

    python3 bench/kernels/summarize.py kpt.json torch.json > summary.md

Percentages are of the HBM3 datasheet 3.35 TB/s and of the measured ceiling
(the faster of kpt's and torch's 1 GiB device copy, bytes read + written)."""
import json
import sys

PEAK = 3.35e12

# our workload -> (goal as a fraction of 3.35 TB/s or TFLOP/s, torch equivalent)
ROWS = [
    ("memory.copy.1GiB", 0.90, "torch.copy_.1GiB"),
    ("memory.copy.512MiB", 0.90, None),
    ("memory.memset.1GiB", 0.90, "torch.fill_.1GiB"),
    ("memory.triad.f32.256M", 0.90, "torch.add_alpha(triad).256M"),
    ("memory.reduce.f32.256M", 0.95, "torch.sum.256M"),
    ("memory.transpose.f32.16384x16384", 0.80, "torch.transpose_copy.f32.16384x16384"),
    ("memory.transpose.bf16.16384x16384", 0.80, "torch.transpose_copy.bf16.16384x16384"),
    ("fp8.quant.e4m3.bf16.per_token.16384x8192", 0.85, "torch.quant.e4m3.bf16.per_token.16384x8192"),
    ("fp8.quant.e4m3.bf16.block1x128.16384x8192", 0.85, "torch.quant.e4m3.bf16.block1x128.16384x8192"),
    ("fp8.quant.e4m3.bf16.block128x128.16384x8192", 0.85, None),
    ("fp8.quant.e4m3.f32.per_token.16384x8192", 0.85, None),
    ("fp8.quant.e4m3.f32.block1x128.16384x8192", 0.85, None),
    ("fp8.quant.e4m3.f32.block128x128.16384x8192", 0.85, None),
    ("fp8.quant.e5m2.bf16.per_token.16384x8192", 0.85, None),
    ("fp8.quant.e4m3.bf16.per_tensor.16384x8192", None, "torch.quant.e4m3.bf16.per_tensor.16384x8192"),
    ("fp8.quant.e4m3.f32.per_tensor.16384x8192", None, None),
    ("fp8.dequant.e4m3.bf16.per_token.16384x8192", None, None),
    ("memory.h2d.pinned.64MiB", None, "torch.h2d.pinned.64MiB"),
    ("memory.d2h.pinned.64MiB", None, "torch.d2h.pinned.64MiB"),
    ("fp8.gemm.e4m3xe4m3.8192x8192x8192", 1250, "torch._scaled_mm.e4m3.8192x8192x8192"),
    ("fp8.gemm.e4m3xe4m3.8192x8192x8192.fastacc", 1250, "torch._scaled_mm.e4m3.8192x8192x8192.fastacc"),
]


def main():
    kpt = {r["name"]: r for r in json.load(open(sys.argv[1])) if "median_s" in r}
    try:
        tor = json.load(open(sys.argv[2]))
    except (IndexError, OSError, ValueError):
        tor = {}
    ceil = max([kpt.get("memory.copy.1GiB", {}).get("gbps", 0) * 1e9,
                tor.get("torch.copy_.1GiB", {}).get("gbps", 0) * 1e9]) or PEAK
    print(f"Measured ceiling (1 GiB device copy, read + write): {ceil / 1e12:.3f} TB/s "
          f"({ceil / PEAK * 100:.1f}% of 3.35 TB/s)\n")
    print("| workload | bytes | median us | GB/s or TFLOP/s | % of 3.35 TB/s | % of ceiling | goal | met | torch equivalent | torch | torch.compile |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |")
    for name, goal, tname in ROWS:
        r = kpt.get(name)
        t = tor.get(tname, {}) if tname else {}
        if not r:
            print(f"| {name} | | | not measured | | | | | {tname or ''} | | |")
            continue
        if r["flops"] > 0 and "gemm" in name:
            val = f"{r['tflops']:.0f} TFLOP/s"
            pct, pc = "", ""
            met = "" if goal is None else ("yes" if r["tflops"] >= goal else f"no ({r['tflops'] / goal * 100 - 100:+.1f}%)")
            goal_s = f">= {goal} TFLOP/s"
            tv = f"{t['tflops']:.0f} TFLOP/s" if "tflops" in t else t.get("error", "")
        else:
            bw = r["gbps"] * 1e9
            val = f"{r['gbps']:.0f} GB/s"
            pct, pc = f"{bw / PEAK * 100:.1f}%", f"{bw / ceil * 100:.1f}%"
            goal_s = "" if goal is None else f">= {goal * 100:.0f}%"
            met = "" if goal is None else ("yes" if bw >= goal * PEAK else f"no ({bw / (goal * PEAK) * 100 - 100:+.1f}%)")
            tv = f"{t['gbps']:.0f} GB/s" if "gbps" in t else t.get("error", "")
        tc = tor.get("torch.compile." + tname[len("torch."):], {}) if tname else {}
        tcv = f"{tc['gbps']:.0f} GB/s" if "gbps" in tc else ""
        print(f"| {name} | {r['bytes']:.4g} | {r['median_s'] * 1e6:.1f} | {val} | {pct} | {pc} | {goal_s} | {met} | {tname or ''} | {tv} | {tcv} |")


if __name__ == "__main__":
    main()
