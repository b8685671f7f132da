"""window_kernels.py CSV [CSV_WHOLE] - kernels per captured step of a
sampled or on-demand recording (`kptprof export --format csv`), against a
whole-run recording of the same program (scripts/gpu/sampling.sh).

A captured step is one instance of an NVTX range named "step" (a process
and a range id) holding kernels. Prints, per file, the number of steps and
how many kernels each held ("kernels per step: {count: steps}"). With two
files: "same" when every captured step holds the whole run's most common
count (a step of this program launches the same kernels each time), else
"differ" with the steps that do not, and exits 1.
"""
import collections
import csv
import sys


def per_step(path):
    n = collections.Counter()
    for row in csv.DictReader(open(path)):
        if row["kind"] != "kernel":
            continue
        if row["range"].split("/")[-1] != "step":
            continue
        n[(row["process"], row["range_id"])] += 1
    return n


def main():
    sampled = per_step(sys.argv[1])
    hist = collections.Counter(sampled.values())
    print(f"{sys.argv[1]}: {len(sampled)} steps captured, kernels per step: {dict(sorted(hist.items()))}")
    if len(sys.argv) < 3:
        return 0
    whole = per_step(sys.argv[2])
    wh = collections.Counter(whole.values())
    print(f"{sys.argv[2]}: {len(whole)} steps, kernels per step: {dict(sorted(wh.items()))}")
    if not wh or not sampled:
        print("differ: no steps")
        return 1
    k = wh.most_common(1)[0][0]
    bad = {s: c for s, c in sampled.items() if c != k}
    if bad:
        print(f"differ: {len(bad)} of {len(sampled)} captured steps do not hold {k} kernels: "
              f"{dict(list(bad.items())[:10])}")
        return 1
    print(f"same: all {len(sampled)} captured steps hold {k} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
