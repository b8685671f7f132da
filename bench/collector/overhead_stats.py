"""overhead_stats.py RAW.tsv [OUT.md] - the collector overhead table.

RAW.tsv rows (scripts/gpu/overhead.sh writes them): round, mode, workload,
median_ms, mean_ms, kernels_per_step. Per workload and mode, the effect is
the mean over rounds of log(mode median / plain median of the same round)
(paired: rounds interleave the modes), shown as a percentage, with a 95%
bootstrap interval over rounds (5000 resamples, fixed seed). Writes the
Markdown table to OUT.md (when given) and prints a short table. No numpy.
"""
import math
import random
import sys
from collections import defaultdict

ORDER = ["kptprof", "kptprof-old", "kptprof-all", "kptprof-every20", "kptprof-every20-nopreroll",
         "sample-1s", "sample-10s", "ondemand-idle", "win-never", "win-once", "every20-no-nvml", "every20-no-callbacks", "every20-no-kinds", "abl-kernel+memcpy", "abl-kernel+memset", "abl-kernel+sync",
         "abl-no-nvml", "abl-link-runtime", "abl-link-both", "abl-link-off", "torch.profiler", "floor-kernel", "floor"]
ABOUT = {
    "kptprof": "kptprof record -- CMD as typed (default: kernels, NVTX range links, NVML)",
    "kptprof-old": "kptprof record -- CMD with another build (the refactor's before; scripts/gpu/collector_ab.sh)",
    "kptprof-all": "kptprof record --kinds all (kernel, memcpy, memset, sync)",
    "kptprof-every20": "kptprof record --capture-range nvtx:step --every 20 (1 step in 20 traced, and the step before it as the pre-roll)",
    "kptprof-every20-nopreroll": "the same with KPT_PREROLL=0 (1 step in 20 traced, no pre-roll)",
    "sample-1s": "kptprof record --capture-range nvtx:step --sample-every 1 (one step a second, CUPTI attached only around it)",
    "sample-10s": "the same, one step every 10 s",
    "ondemand-idle": "kptprof record --capture-range nvtx:step --on-demand, never triggered (CUPTI detached from the first API call)",
    "win-never": "kptprof record --capture-range nvtx:step --steps 1000000000 (a window that never opens: what stays on between windows)",
    "win-once": "kptprof record --capture-range nvtx:step --steps 0-0 (one window, before the timed steps, then none: what a window leaves on)",
    "every20-no-nvml": "kptprof-every20 with KPT_WINDOW_TEST_OFF=nvml (no NVML sample)",
    "every20-no-callbacks": "kptprof-every20 with KPT_WINDOW_TEST_OFF=callbacks (no work-API callbacks: no range links, no pre-roll)",
    "every20-no-kinds": "kptprof-every20 with KPT_WINDOW_TEST_OFF=kinds (windows switch, activity never enabled)",
    "abl-kernel+memcpy": "kptprof record --kinds kernel,memcpy",
    "abl-kernel+memset": "kptprof record --kinds kernel,memset",
    "abl-kernel+sync": "kptprof record --kinds kernel,sync",
    "abl-no-nvml": "the default without the NVML sampler (KPT_SAMPLE_MS=0)",
    "abl-link-runtime": "the default with NVTX range links from runtime-API launches only (KPT_RANGE_LINK=runtime)",
    "abl-link-both": "the default with NVTX range links from both the runtime's and the driver's launch callbacks (KPT_RANGE_LINK=both, the default before 2026-11-28)",
    "abl-link-off": "the default without NVTX range links (KPT_RANGE_LINK=off)",
    "torch.profiler": "torch.profiler, CUDA activity only, timed inside its context",
    "floor": "raw CUPTI, all four kinds, nothing else (libkptfloor.so)",
    "floor-kernel": "raw CUPTI, CONCURRENT_KERNEL only (the default's kind)",
}


def load(path):
    med = defaultdict(dict)     # (workload, mode) -> round -> median
    kernels = {}
    for line in open(path):
        f = line.split()
        if len(f) < 5 or f[0] == "round":
            continue
        r, mode, wl, m = int(f[0]), f[1], f[2], float(f[3])
        med[(wl, mode)][r] = m
        if len(f) > 5 and int(f[5]) > 0:
            kernels[wl] = int(f[5])
    return med, kernels


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def paired(plain, mode, rng, b=5000):
    rounds = sorted(set(plain) & set(mode))
    d = [math.log(mode[r] / plain[r]) for r in rounds]
    if not d:
        return None
    est = sum(d) / len(d)
    boots = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(b))
    lo, hi = boots[int(0.025 * b)], boots[int(0.975 * b) - 1]
    pct = lambda x: 100 * (math.exp(x) - 1)
    return len(d), pct(est), pct(lo), pct(hi)


def main():
    med, kernels = load(sys.argv[1])
    rng = random.Random(13)
    rows = []
    for wl in sorted({w for w, _ in med}, key=lambda w: (w != "launch", w)):
        plain = med.get((wl, "plain"), {})
        for mode in ORDER:
            if (wl, mode) not in med or not plain:
                continue
            p = paired(plain, med[(wl, mode)], rng)
            if p:
                rows.append((wl, mode, p, median(plain.values()), median(med[(wl, mode)].values())))
    md = ["| workload | mode | rounds | plain step (ms) | mode step (ms) | overhead vs plain | 95% interval |",
          "| --- | --- | --- | --- | --- | --- | --- |"]
    for wl, mode, (n, est, lo, hi), pm, mm in rows:
        md.append(f"| {wl} | {mode} | {n} | {pm:.3f} | {mm:.3f} | {est:+.1f}% | {lo:+.1f}% .. {hi:+.1f}% |")
    # a build against another, paired in the same rounds (collector_ab.sh)
    for wl in sorted({w for w, _ in med}, key=lambda w: (w != "launch", w)):
        if (wl, "kptprof") in med and (wl, "kptprof-old") in med:
            p = paired(med[(wl, "kptprof-old")], med[(wl, "kptprof")], rng)
            if p:
                n, est, lo, hi = p
                md.append(f"| {wl} | kptprof vs kptprof-old | {n} | | | {est:+.1f}% | {lo:+.1f}% .. {hi:+.1f}% |")
                rows.append((wl, "kptprof/kptprof-old", p, float("nan"), float("nan")))
    md.append("")
    shown = [m for m in ORDER if any(r[1] == m for r in rows)]
    md.append("Modes: " + "; ".join(f"`{m}`: {ABOUT[m]}" for m in shown) + ".")
    if kernels:
        md.append("Kernels per step (torch.profiler): " +
                  ", ".join(f"{w} {k}" for w, k in sorted(kernels.items())) + ".")
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").write("\n".join(md) + "\n")
    print(f"{'workload':8} {'mode':26} {'n':>3} {'plain ms':>9} {'overhead':>9}  95% interval")
    for wl, mode, (n, est, lo, hi), pm, mm in rows:
        print(f"{wl:8} {mode:26} {n:3d} {pm:9.3f} {est:+8.1f}%  {lo:+.1f}% .. {hi:+.1f}%")


if __name__ == "__main__":
    main()
