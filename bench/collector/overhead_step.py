"""overhead_step.py - training steps timed inside the process, for the
collector overhead benchmark (scripts/gpu/overhead.sh).

  python3 overhead_step.py [--mode plain|profiler] [--steps N] [--warmup W]
                           [--gpu-steps N] [--no-nvtx] [--serve]

Two workloads, one after the other in one process (Python start-up is most
of a process's time):
  launch  launch-bound: one bf16 transformer block (width 1024, 16 heads,
          FFN 4096, batch 8 x seq 1024, pre-norm, autocast) forward +
          backward + AdamW step: about 60-100 kernels and a few
          memcpy/memset per step, 2-5 ms on an H100.
  gpu     GPU-bound: 8 chained bf16 matmuls of 8192 x 8192 per step (about
          9 TFLOP, ~15 ms): launches do not matter; what a tracer adds here
          is not launch cost.
Each step is wrapped in an NVTX range "step" (as training scripts do; it
turns on the collector's launch -> range links) unless --no-nvtx, and timed
with torch.cuda.synchronize() before and after. --mode profiler runs the
timed steps inside torch.profiler.profile(activities=[CUDA]) (CUDA activity
only). Prints one line per workload:
  result workload=launch median_ms=... mean_ms=... p10_ms=... p90_ms=... steps=N kernels_per_step=K
"""
import argparse
import statistics
import time

import torch


def launch_step(layer, opt, x):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = layer(x)
        loss = y.float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def gpu_step(a, b):
    y = a
    for _ in range(8):
        y = y @ b
    return y


STEP = [0]  # NVTX "step" ranges opened so far in this process: the collector's step numbers


def timed(fn, steps, warmup, nvtx):
    times = []
    for i in range(warmup + steps):
        if nvtx:
            STEP[0] += 1
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        if nvtx:
            torch.cuda.nvtx.range_push("step")
        fn()
        if nvtx:
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def report(name, times, kernels):
    s = sorted(times)
    print(f"result workload={name} median_ms={statistics.median(s):.4f} mean_ms={statistics.fmean(s):.4f} "
          f"p10_ms={s[len(s) // 10]:.4f} p90_ms={s[len(s) * 9 // 10]:.4f} steps={len(s)} "
          f"kernels_per_step={kernels}", flush=True)


def count_kernels(fn):
    """Kernels of one step, from torch.profiler, outside the timed part
    (only in profiler mode, where a profiler is allowed anyway)."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def serve(work, profiler, nvtx):
    """--serve: for scripts/gpu/overhead.sh's interleaved rounds. Warms up,
    prints "ready PID", then answers lines on stdin: "WORKLOAD N" runs 2
    untimed steps and N timed ones and prints "times WORKLOAD t1 ... tN"
    (ms), after a line "first WORKLOAD S": S is the step number (the
    collector's count of "step" ranges, from 0) of t1, so that a capture
    window's steps can be told apart (window_profile.py); "quit" ends.
    Between blocks the coordinator stops this process
    (SIGSTOP), so nothing of it runs while another mode is timed."""
    import os
    import sys
    work = [w for w in work if w[2] > 0]
    fns = {name: fn for name, fn, _, _ in work}
    for name, fn, steps, warmup in work:
        timed(fn, 0, warmup, nvtx)
    torch.cuda.synchronize()
    prof = None
    if profiler:
        from torch.profiler import profile, ProfilerActivity
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    print(f"ready {os.getpid()}", flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f or f[0] == "quit":
            break
        print(f"first {f[0]} {STEP[0] + 2}", flush=True)
        times = timed(fns[f[0]], int(f[1]), 2, nvtx)
        print("times " + f[0] + " " + " ".join(f"{t:.4f}" for t in times), flush=True)
    if prof is not None:
        prof.__exit__(None, None, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["plain", "profiler"], default="plain")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--gpu-steps", type=int, default=200)
    ap.add_argument("--no-nvtx", action="store_true")
    ap.add_argument("--serve", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    nvtx = not a.no_nvtx
    layer = torch.nn.TransformerEncoderLayer(1024, 16, 4096, dropout=0.0, batch_first=True,
                                             norm_first=True).cuda()
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    x = torch.randn(8, 1024, 1024, device="cuda")
    ga = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) * 0.01
    gb = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) * 0.01
    work = [("launch", lambda: launch_step(layer, opt, x), a.steps, a.warmup),
            ("gpu", lambda: gpu_step(ga, gb), a.gpu_steps, 3)]
    if a.serve:
        serve(work, a.mode == "profiler", nvtx)
        return
    for name, fn, steps, warmup in work:
        if steps <= 0:
            continue
        if a.mode == "profiler":
            kernels = count_kernels(fn)
            from torch.profiler import profile, ProfilerActivity
            with profile(activities=[ProfilerActivity.CUDA]):
                times = timed(fn, steps, warmup, nvtx)
        else:
            kernels = -1
            times = timed(fn, steps, warmup, nvtx)
        report(name, times, kernels)


if __name__ == "__main__":
    main()
