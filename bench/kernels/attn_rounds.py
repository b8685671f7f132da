#!/usr/bin/env python3
"""attn_rounds.py DIR - summary of scripts/gpu/attn_sota.sh's rounds.

Reads DIR/kpt-<round>.json (kpt-workloads --json) and DIR/sdpa-<round>.json
(sdpa_ref.py: rows of backend, name, us), prints a Markdown table: per
attention workload the median over rounds of each round's median time with
its 95% bootstrap interval over rounds and TFLOP/s, cuDNN's and flash's
medians on the same shape, and the per-round ratio cuDNN time / kpt time
(above 1: faster than cuDNN), median and 95% interval. FP8 rows
(attention.fwd.e4m3.*) are set beside the bf16 cuDNN row of their shape
(torch has no FP8 SDPA); so are the ping-pong kernels' (name + .pp, .pp3).
"""
import glob
import json
import re
import statistics
import sys

from round_stats import boot


def main():
    d = sys.argv[1]
    kpt, ref, flops = {}, {}, {}
    for p in glob.glob(f"{d}/kpt-*.json"):
        r = int(re.search(r"kpt-(\d+)\.json$", p).group(1))
        try:
            for row in json.load(open(p)):
                if "median_s" in row:
                    kpt.setdefault(row["name"], {})[r] = row["median_s"] * 1e6
                    flops[row["name"]] = row["flops"]
        except (OSError, ValueError):
            pass
    for p in glob.glob(f"{d}/sdpa-*.json"):
        r = int(re.search(r"sdpa-(\d+)\.json$", p).group(1))
        try:
            for row in json.load(open(p))["rows"]:
                if "us" in row:
                    ref.setdefault((row["backend"], row["name"]), {})[r] = row["us"]
        except (OSError, ValueError, KeyError):
            pass
    print("| workload | rounds | kpt us [95%] | TFLOP/s | cuDNN us | flash us | cuDNN / kpt time [95%] |")
    print("| --- | --: | --- | --: | --: | --: | --- |")
    for name in sorted(kpt, key=lambda n: (".bwd." in n, ".e4m3." in n, n)):
        xs = list(kpt[name].values())
        med = statistics.median(xs)
        lo, hi = boot(xs)
        bf = re.sub(r"\.pp3?$", "", name.replace(".e4m3.", ".bf16."))
        cells = []
        for b in ("cudnn", "flash"):
            v = ref.get((b, bf), {})
            cells.append(f"{statistics.median(v.values()):.1f}" if v else "-")
        c = ref.get(("cudnn", bf), {})
        common = sorted(set(c) & set(kpt[name]))
        ratio = "-"
        if common:
            rs = [c[r] / kpt[name][r] for r in common]
            rlo, rhi = boot(rs)
            ratio = f"{statistics.median(rs):.3f} [{rlo:.3f}, {rhi:.3f}]"
        print(f"| {name} | {len(xs)} | {med:.1f} [{lo:.1f}, {hi:.1f}] | {flops[name] / med / 1e6:.0f} | "
              f"{cells[0]} | {cells[1]} | {ratio} |")


if __name__ == "__main__":
    main()
