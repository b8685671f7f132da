#!/usr/bin/env python3
"""torch_equiv.py - PyTorch's equivalents of the kernels in the `bench` suite,
timed the same way kpt-workloads times them (CUDA events around each
iteration, warm-up, median; with --settle-us the GPU idles that long before
each iteration, like kpt-workloads --settle-us), so bench/RESULTS.md can put both side by side
from the same run. Writes one JSON object {name: {median_s, bytes, flops}}.

    python3 bench/kernels/torch_equiv.py [--iterations N] [--settle-us US] [--only REGEX] > torch.json
"""
import argparse
import json
import re
import statistics
import sys

import torch

from torch_timing import event_ms


def timed(fn, iters, warmup=5, settle=0.0):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    if settle:  # each iteration alone after an idle gap (kpt-workloads --settle-us)
        return statistics.median(event_ms(fn, 0, iters, settle)) * 1e-3
    ts = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        ts.append((a, b))
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ts) * 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--settle-us", type=float, default=0,
                    help="idle the GPU this long before each timed iteration (default 0: back to back)")
    ap.add_argument("--out", help="JSON file, rewritten after every measurement (default: stdout at the end)")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile'd quantizers (slow to build)")
    ap.add_argument("--only", help="time only the rows whose name matches this regular expression")
    args = ap.parse_args()
    only = re.compile(args.only) if args.only else None
    it = args.iterations
    dev = "cuda"
    out = {}

    def rec(name, fn, nbytes, flops=0.0):
        if only and not only.search(name):
            return
        try:
            t = timed(fn, it, settle=args.settle_us * 1e-6)
            out[name] = {"median_s": t, "bytes": nbytes, "flops": flops,
                         "gbps": nbytes / t * 1e-9, "tflops": flops / t * 1e-12}
        except Exception as e:  # report, keep going: one missing op must not lose the rest
            out[name] = {"error": str(e).splitlines()[0]}
        print(f"{name}: {out[name]}", file=sys.stderr)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f, indent=1)

    n = 1 << 28  # 256M floats = 1 GiB
    src = torch.rand(n, device=dev) + 0.25
    dst = torch.empty_like(src)
    rec("torch.copy_.1GiB", lambda: dst.copy_(src), 2.0 * 4 * n)
    rec("torch.fill_.1GiB", lambda: dst.fill_(0.3), 4.0 * n)
    b, c = src, torch.rand(n, device=dev) - 1.5
    rec("torch.add_alpha(triad).256M", lambda: torch.add(b, c, alpha=0.4375, out=dst), 12.0 * n, 2.0 * n)
    rec("torch.sum.256M", lambda: src.sum(), 4.0 * n, float(n))
    del c
    x = src.view(16384, 16384)
    y = dst.view(16384, 16384)
    rec("torch.transpose_copy.f32.16384x16384", lambda: y.copy_(x.t()), 8.0 * 16384 * 16384)
    xb = torch.rand(16384, 16384, device=dev).to(torch.bfloat16)
    yb = torch.empty_like(xb)
    rec("torch.transpose_copy.bf16.16384x16384", lambda: yb.copy_(xb.t()), 4.0 * 16384 * 16384)
    del src, dst, x, y, xb, yb, b

    # FP8: plain cast (what x.to(float8) costs), and scaled variants written in torch
    xq = (torch.rand(16384, 8192, device=dev) * 6 - 3).to(torch.bfloat16)
    ne = xq.numel()
    rec("torch.to_e4m3.bf16.16384x8192", lambda: xq.to(torch.float8_e4m3fn), 3.0 * ne)

    def per_tensor():
        s = 448.0 / xq.abs().amax().float()
        return (xq.float() * s).clamp(-448, 448).to(torch.float8_e4m3fn), 1 / s

    def per_token():
        s = 448.0 / xq.abs().amax(dim=1, keepdim=True).float()
        return (xq.float() * s).clamp(-448, 448).to(torch.float8_e4m3fn), 1 / s

    def block_1x128():
        v = xq.view(16384, 64, 128)
        s = 448.0 / v.abs().amax(dim=2, keepdim=True).float()
        return (v.float() * s).clamp(-448, 448).to(torch.float8_e4m3fn), 1 / s

    rec("torch.quant.e4m3.bf16.per_tensor.16384x8192", per_tensor, 3.0 * ne + 4)
    rec("torch.quant.e4m3.bf16.per_token.16384x8192", per_token, 3.0 * ne + 4 * 16384)
    rec("torch.quant.e4m3.bf16.block1x128.16384x8192", block_1x128, 3.0 * ne + 4 * 16384 * 64)
    if not args.compile:
        del xq

    m = k = nn = 8192
    a = (torch.rand(m, k, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
    bm = (torch.rand(nn, k, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
    sa = torch.tensor(1.0, device=dev)
    sb = torch.tensor(1.0, device=dev)
    fl = 2.0 * m * nn * k
    for fast in (False, True):
        rec(f"torch._scaled_mm.e4m3.8192x8192x8192{'.fastacc' if fast else ''}",
            lambda: torch._scaled_mm(a, bm.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                     use_fast_accum=fast),
            m * k + nn * k + 2.0 * m * nn, fl)
    hb = torch.rand(1 << 24).pin_memory()
    db = torch.empty(1 << 24, device=dev)
    rec("torch.h2d.pinned.64MiB", lambda: db.copy_(hb, non_blocking=True), 4.0 * (1 << 24))
    rec("torch.d2h.pinned.64MiB", lambda: hb.copy_(db, non_blocking=True), 4.0 * (1 << 24))
    if args.compile:
        try:
            comp = torch.compile(per_token)
            rec("torch.compile.quant.e4m3.bf16.per_token.16384x8192", comp, 3.0 * ne + 4 * 16384)
            comp1 = torch.compile(block_1x128)
            rec("torch.compile.quant.e4m3.bf16.block1x128.16384x8192", comp1, 3.0 * ne + 4 * 16384 * 64)
        except Exception as e:
            print(f"torch.compile unavailable: {e}", file=sys.stderr)
    out["_meta"] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                    "gpu": torch.cuda.get_device_name(0)}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    else:
        json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
