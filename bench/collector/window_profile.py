"""window_profile.py STEPS.tsv [OUT.md] [--every K] - where a capture
window's cost falls, step by step (scripts/gpu/windows.sh).

STEPS.tsv is overhead_interleave.py's every-step file (round mode workload
block ms step; step: the collector's number of the step, -1 unknown). With
`--every K` the collector traces the steps numbered 0, K, 2K, ... and, with
the pre-roll, the step before each. Each launch-bound step of a mode falls
in one class by its number modulo K:

  window   0             traced
  pre-roll K-1           traced and dropped (the pre-roll), or untraced
  after    1             the step after a window (its records converted on
                         CUPTI's thread, the kinds just switched off)
  outside  2 .. K-2      nothing traced: only what stays on between windows
  all      every step    what the whole run pays (the mean)

Per class and mode: the mean over rounds of log(mode's mean step of the
class / plain's mean step of the same class in the same round), as a
percentage, with a 95% bootstrap interval over rounds (5000 resamples,
fixed seed), as overhead_stats.py. The 'outside' row is the issue-22
question: what a window costs when none is open. No numpy.
"""
import math
import random
import sys
from collections import defaultdict


def classes(step, k):
    if step < 0:
        return ["all"]
    p = step % k
    c = "window" if p == 0 else "pre-roll" if p == k - 1 else "after" if p == 1 else "outside"
    return [c, "all"]


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("steps")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--every", type=int, default=20)
    a = ap.parse_args()
    k = a.every
    acc = defaultdict(lambda: [0.0, 0])   # (round, mode, class) -> sum, n
    modes = []
    for line in open(a.steps):
        f = line.split()
        if len(f) < 6 or f[0] == "round" or f[2] != "launch":
            continue
        r, mode, ms, step = int(f[0]), f[1], float(f[4]), int(f[5])
        if mode not in modes:
            modes.append(mode)
        for c in classes(step, k):
            v = acc[(r, mode, c)]
            v[0] += ms
            v[1] += 1
    rounds = sorted({r for r, _, _ in acc})
    rng = random.Random(1)
    order = ["window", "pre-roll", "after", "outside", "all"]
    rows = []
    for mode in modes:
        if mode == "plain":
            continue
        for c in order:
            d = []
            for r in rounds:
                m, p = acc.get((r, mode, c)), acc.get((r, "plain", c))
                if m and p and m[1] and p[1]:
                    d.append(math.log((m[0] / m[1]) / (p[0] / p[1])))
            if not d:
                continue
            est = sum(d) / len(d)
            boots = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(5000))
            lo, hi = boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]
            pct = lambda x: 100 * (math.exp(x) - 1)
            n = sum(acc[(r, mode, c)][1] for r in rounds if (r, mode, c) in acc)
            rows.append((mode, c, len(d), n, pct(est), pct(lo), pct(hi)))
    out = ["| mode | steps | rounds | step samples | vs plain | 95% interval |",
           "| --- | --- | --: | --: | --: | --- |"]
    out += [f"| {m} | {c} | {nr} | {n} | {e:+.2f}% | {lo:+.2f} .. {hi:+.2f}% |" for m, c, nr, n, e, lo, hi in rows]
    text = "\n".join(out) + "\n"
    if a.out:
        open(a.out, "w").write(f"Launch-bound step by position in the --every {k} cycle (window_profile.py)\n\n" + text)
    print(text, end="")


if __name__ == "__main__":
    main()
