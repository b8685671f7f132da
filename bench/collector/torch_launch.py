"""torch_launch.py - the empty-kernel launch loop of launch_bench.cu, called
through ctypes, under torch.profiler (CUDA activity), for the collector
overhead comparison.

  python3 torch_launch.py LIBKPTLAUNCH [--n N] [--reps R] [--plain] [--pin CPU]

Prints "launch mode=torch_profiler n=N reps=R median_us=... p10_us=... p90_us=..."
(--plain: the same loop from Python without the profiler, mode=torch_plain).
"""
import argparse
import ctypes
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=31)
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--pin", type=int, default=-1, help="pin the launching thread to this CPU")
    a = ap.parse_args()
    lib = ctypes.CDLL(a.lib)
    lib.kpt_launch_us.restype = ctypes.c_double
    lib.kpt_launch_us.argtypes = [ctypes.c_int]
    lib.kpt_launch_last_wall_us.restype = ctypes.c_double
    torch.zeros(1, device="cuda")
    if a.pin >= 0:
        os.sched_setaffinity(0, {a.pin})  # this thread only, as kpt-launch-bench --pin
    v, w = [], []

    def run():
        lib.kpt_launch_us(2000)
        for _ in range(a.reps):
            v.append(lib.kpt_launch_us(a.n))
            w.append(lib.kpt_launch_last_wall_us())

    if a.plain:
        run()
    else:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
        nk = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"torch.profiler kernels seen: {nk}", file=sys.stderr)
    v.sort()
    mode = "torch_plain" if a.plain else "torch_profiler"
    print(f"launch mode={mode} n={a.n} reps={a.reps} median_us={statistics.median(v):.4f} "
          f"p10_us={v[len(v) // 10]:.4f} p90_us={v[len(v) * 9 // 10]:.4f} wall_us={statistics.median(w):.4f}")


if __name__ == "__main__":
    main()
