#!/usr/bin/env python3
"""rounds_summary.py DIR - summary of bench/kernels/memfp8_rounds.sh.

Reads DIR/kpt-<round>.json (kpt-workloads --json: name, median_s, bytes,
flops) and DIR/torch-<round>.json (torch_equiv.py: {name: {median_s, bytes,
flops}}), prints a Markdown table: per row the median over rounds of each
round's median time, the 95% bootstrap interval of that median over rounds,
GB/s (bytes read + written) or TFLOP/s, % of the HBM datasheet peak for
memory rows (the H100 SXM's 3.35 TB/s; the H200's 4.8 TB/s when the run's
DIR/../gpu.txt, which kernels_sota.sh writes, names an H200), and the torch equivalent's row the same way, with the
per-round ratio torch time / kpt time (above 1: kpt faster). A second
table sets ours beside another kpt-workloads row of the same rounds
(ANCHORS: the copy beside the driver's cudaMemcpy D2D): that anchor's time
over ours, and the faster of it and the torch row, per round, over ours.
"""
import glob
import json
import re
import statistics
import sys

from round_stats import boot

H100_PEAK = 3.35e12
PEAKS = {"H200": 4.8e12}  # datasheet HBM peak by GPU name; else the H100 SXM's
PEAK = H100_PEAK  # the run's, set by main
PAIRS = {
    "memory.copy.1GiB": "torch.copy_.1GiB",
    "memory.reduce.f32.256M": "torch.sum.256M",
    "fp8.gemm.e4m3xe4m3.8192x8192x8192": "torch._scaled_mm.e4m3.8192x8192x8192",
    "fp8.gemm.e4m3xe4m3.8192x8192x8192.fastacc": "torch._scaled_mm.e4m3.8192x8192x8192.fastacc",
    "fp8.quant.e4m3.bf16.per_token.16384x8192": "torch.quant.e4m3.bf16.per_token.16384x8192",
    "fp8.quant.e4m3.bf16.block1x128.16384x8192": "torch.quant.e4m3.bf16.block1x128.16384x8192",
    "fp8.quant.e4m3.bf16.block128x128.16384x8192": None,
    "memory.memcpy.d2d.1GiB": None,
}
# Rows of ours against another kpt-workloads row of the same rounds (the
# driver's cudaMemcpyAsync D2D beside the copy kernel): the per-round ratio
# anchor time / ours, and the best anchor (this one or PAIRS' torch row).
ANCHORS = {"memory.copy.1GiB": "memory.memcpy.d2d.1GiB"}


def rate(row, t):
    # GEMMs in TFLOP/s (ours "fp8.gemm...", torch's "torch._scaled_mm...")
    if row.get("flops", 0) > 0 and re.search(r"gemm|_mm\.", row.get("name", "gemm")):
        return f"{row['flops'] / t / 1e12:.0f} TFLOP/s", ""
    gbps = row["bytes"] / t
    return f"{gbps / 1e9:.0f} GB/s", f"{gbps / PEAK * 100:.1f}%"


def peak_of(d):
    try:
        text = open(f"{d}/../gpu.txt").read()
    except OSError:
        return H100_PEAK
    return next((v for k, v in PEAKS.items() if k in text), H100_PEAK)


def main():
    global PEAK
    d = sys.argv[1]
    PEAK = peak_of(d)
    kpt, tor, info = {}, {}, {}
    for p in glob.glob(f"{d}/kpt-*.json"):
        r = int(re.search(r"kpt-(\d+)\.json$", p).group(1))
        try:
            for row in json.load(open(p)):
                if "median_s" in row:
                    kpt.setdefault(row["name"], {})[r] = row["median_s"]
                    info[row["name"]] = row
        except (OSError, ValueError):
            pass
    for p in glob.glob(f"{d}/torch-*.json"):
        r = int(re.search(r"torch-(\d+)\.json$", p).group(1))
        try:
            for name, row in json.load(open(p)).items():
                if isinstance(row, dict) and "median_s" in row:
                    tor.setdefault(name, {})[r] = row["median_s"]
                    info[name] = dict(row, name=name)
        except (OSError, ValueError):
            pass
    print(f"| workload | rounds | median us [95%] | rate | % of {PEAK / 1e12:.2f} TB/s | torch equivalent | torch median us [95%] | torch rate | torch / kpt time [95%] |")
    print("| --- | --: | --- | --: | --: | --- | --- | --: | --- |")
    for name, tname in PAIRS.items():
        if name not in kpt:
            print(f"| {name} | 0 | not measured | | | {tname or ''} | | | |")
            continue
        xs = list(kpt[name].values())
        med = statistics.median(xs)
        lo, hi = boot(xs)
        rt, pct = rate(info[name], med)
        cells = ["", "", ""]
        if tname and tname in tor:
            ts = list(tor[tname].values())
            tm = statistics.median(ts)
            tlo, thi = boot(ts)
            common = sorted(set(kpt[name]) & set(tor[tname]))
            ratios = [tor[tname][r] / kpt[name][r] for r in common]
            rlo, rhi = boot(ratios) if ratios else (0, 0)
            cells = [f"{tm * 1e6:.1f} [{tlo * 1e6:.1f}, {thi * 1e6:.1f}]", rate(info[tname], tm)[0],
                     f"{statistics.median(ratios):.3f} [{rlo:.3f}, {rhi:.3f}]" if ratios else ""]
        print(f"| {name} | {len(xs)} | {med * 1e6:.1f} [{lo * 1e6:.1f}, {hi * 1e6:.1f}] | {rt} | {pct} | "
              f"{tname or ''} | {cells[0]} | {cells[1]} | {cells[2]} |")
    anchored(kpt, tor)


def ratio_cell(num, den):
    """Median over common rounds of num[r] / den[r] with its 95% interval."""
    common = sorted(set(num) & set(den))
    ratios = [num[r] / den[r] for r in common]
    if not ratios:
        return ""
    lo, hi = boot(ratios)
    return f"{statistics.median(ratios):.3f} [{lo:.3f}, {hi:.3f}]"


def anchored(kpt, tor):
    """Ours against the driver's copy and torch in the same rounds: the
    fastest anchor per round (the smaller time of the two) over ours."""
    rows = [(n, a) for n, a in ANCHORS.items() if n in kpt and a in kpt]
    if not rows:
        return
    print()
    print("| ours | anchor | anchor / ours time [95%] | best of the anchors / ours [95%] |")
    print("| --- | --- | --- | --- |")
    for name, aname in rows:
        cell = ratio_cell(kpt[aname], kpt[name])
        best = dict(kpt[aname])
        tname = PAIRS.get(name)
        if tname in tor:
            best = {r: min(t, tor[tname][r]) for r, t in best.items() if r in tor[tname]}
        bcell = ratio_cell(best, kpt[name])
        print(f"| {name} | {aname} | {cell} | {bcell} |")


if __name__ == "__main__":
    main()
