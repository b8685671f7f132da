"""late_steps.py STEPS.tsv --from N [OUT.md] - the cost of each mode on the
steps numbered N and later, paired against plain per round
(scripts/gpu/windows_launch.sh: what a closed window leaves on the launch
path once the collector has had time to detach CUPTI).

STEPS.tsv: round mode workload block value step (window_profile.py's
format; value: host us per launch). Per mode: the mean over rounds of
log(mode's mean value on steps >= N / plain's in the same round), as a
percentage, with a 95% bootstrap interval over rounds (5000 resamples,
fixed seed: overhead_stats.paired). No numpy.
"""
import argparse
import random
from collections import defaultdict

from overhead_stats import paired


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--from", dest="first", type=int, required=True)
    a = ap.parse_args()
    acc = defaultdict(lambda: [0.0, 0])
    modes = []
    for line in open(a.steps):
        f = line.split()
        if len(f) < 6 or f[0] == "round" or int(f[5]) < a.first:
            continue
        if f[1] not in modes:
            modes.append(f[1])
        v = acc[(int(f[0]), f[1])]
        v[0] += float(f[4])
        v[1] += 1
    # per mode: round -> mean value of its late steps
    means = defaultdict(dict)
    for (r, m), (total, n) in acc.items():
        means[m][r] = total / n
    rng = random.Random(1)
    out = [f"| mode | steps from {a.first}: host us per launch | rounds | vs plain | 95% interval |",
           "| --- | --: | --: | --: | --- |"]
    for m in modes:
        res = paired(means["plain"], means[m], rng)
        if not res:
            continue
        n, est, lo, hi = res
        vals = sorted(means[m].values())
        out.append(f"| {m} | {vals[len(vals) // 2]:.3f} | {n} | {est:+.2f}% | {lo:+.2f} .. {hi:+.2f}% |")
    text = "\n".join(out) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
