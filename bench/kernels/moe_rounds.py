"""moe_rounds.py DIR OLD=NEW... - summary of bench/kernels/moe_rounds.sh.

Reads DIR/moe-<round>.json (kpt-workloads --json) and DIR/torch-<round>.json
(moe_torch_ref.py, the same rows), prints a Markdown table:
per workload the median over rounds of the per-round median time, tokens/s
and FFN TFLOP/s with a 95% bootstrap interval over rounds, and for each
OLD=NEW pair the per-round ratio old time / new time (above 1: the new
path is faster), median and 95% bootstrap interval.
"""
import glob
import json
import re
import statistics
import sys

from round_stats import boot


def shape(name):
    m = re.search(r"\.e(\d+)\.top(\d+)\.h(\d+)(?:\.f(\d+))?(?:\.mc)?\.b(\d+)\.s(\d+)", name)
    e, k, h, f, b, s = (int(x) if x else None for x in m.groups())
    return b * s, k, h, f if f else 4 * h


def main():
    d = sys.argv[1]
    runs = {}
    for p in sorted(glob.glob(f"{d}/moe-*.json") + glob.glob(f"{d}/torch-*.json")):
        r = int(re.search(r"(?:moe|torch)-(\d+)\.json$", p).group(1))
        try:
            rows = json.load(open(p))
        except (OSError, ValueError):
            continue
        for row in rows:
            runs.setdefault(row["name"], {})[r] = row["median_s"] * 1e6
    print("| workload | rounds | median us [95%] | tokens/s | FFN TFLOP/s |")
    print("| --- | --: | --- | --: | --: |")
    for name, byr in runs.items():
        xs = list(byr.values())
        med = statistics.median(xs)
        lo, hi = boot(xs)
        t, k, h, f = shape(name)
        print(f"| {name} | {len(xs)} | {med:.1f} [{lo:.1f}, {hi:.1f}] | {t / med:.2f} M | "
              f"{4.0 * t * k * h * f / med / 1e6:.0f} |")
    print()
    print("| reference (old path or torch) | wgmma path | rounds | reference / wgmma time [95%] |")
    print("| --- | --- | --: | --- |")
    for pair in sys.argv[2:]:
        o, n = pair.split("=")
        common = sorted(set(runs.get(o, {})) & set(runs.get(n, {})))
        ratios = [runs[o][r] / runs[n][r] for r in common]
        if not ratios:
            print(f"| {o} | {n} | 0 | - |")
            continue
        lo, hi = boot(ratios)
        print(f"| {o} | {n} | {len(ratios)} | {statistics.median(ratios):.3f} [{lo:.3f}, {hi:.3f}] |")


if __name__ == "__main__":
    main()
