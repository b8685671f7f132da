#!/usr/bin/env python3
"""sdpa_ref.py - the state of the art beside kpt-workloads' attention rows:
torch scaled_dot_product_attention forward and backward with the cuDNN and
the flash backends, on the shapes of the attention.fwd/bwd workloads
(bf16, B = 16384 / S, H = 2048 / D, causal or not), timed the way
kpt-workloads times (CUDA events around each iteration, an idle gap of
--settle-us before each, median of --iterations after --warmup).

    python3 sdpa_ref.py [--iterations 20] [--warmup 3] [--settle-us 3000] [--seq 2048,16384] [--json OUT]

Prints one line per (backend, pass, shape): name, median us, the order-
statistic 95% interval of the median, TFLOP/s (forward 4 B H S^2 D, halved
when causal; backward 2.5 x that, as the workloads count). Exit 77 without
a GPU or torch, 0 otherwise (a backend that refuses a shape is reported as
such, not an error).
"""
import json
import math
import sys

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:
    print("sdpa_ref: no torch: skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("sdpa_ref: no GPU: skipped")
    sys.exit(77)


from torch_timing import event_ms, opt  # noqa: E402 (after torch is found)

ITERS = opt("--iterations", 20)
WARM = opt("--warmup", 3)
SETTLE = opt("--settle-us", 3000) / 1e6
OUT = opt("--json", "")
SEQS = [int(x) for x in opt("--seq", "2048,16384").split(",")]
SHAPES = [(d, s, c) for d in (128, 64) for s in SEQS for c in (False, True)]


def median_ci(xs):
    xs = sorted(xs)
    n = len(xs)
    med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    # order statistics around the median: binomial(n, 1/2), 95%
    k = max(0, int(math.floor(n / 2 - 1.96 * math.sqrt(n) / 2)))
    return med, xs[k], xs[min(n - 1, n - 1 - k)]


def timed(fn):
    return median_ci([t * 1e3 for t in event_ms(fn, WARM, ITERS, SETTLE)])


rows = []
torch.manual_seed(20261126)
for backend, bname in ((SDPBackend.CUDNN_ATTENTION, "cudnn"), (SDPBackend.FLASH_ATTENTION, "flash")):
    for d, s, causal in SHAPES:
        B, H = 16384 // s, 2048 // d
        q, k, v = (torch.randn(B, H, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        do = torch.randn(B, H, s, d, device="cuda", dtype=torch.bfloat16)
        fwd_flops = 4.0 * B * H * s * s * d / (2 if causal else 1)
        shape = f"bf16.d{d}.s{s}{'.causal' if causal else ''}"
        try:
            with sdpa_kernel([backend]):
                med, lo, hi = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                rows.append(dict(backend=bname, name=f"attention.fwd.{shape}", us=med, lo=lo, hi=hi,
                                 tflops=fwd_flops / med / 1e6))
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                def bwd():
                    torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
                med, lo, hi = timed(bwd)
                rows.append(dict(backend=bname, name=f"attention.bwd.{shape}", us=med, lo=lo, hi=hi,
                                 tflops=2.5 * fwd_flops / med / 1e6))
                del o
        except RuntimeError as e:
            rows.append(dict(backend=bname, name=f"attention.*.{shape}", error=str(e).splitlines()[0][:120]))
        del q, k, v, do
        torch.cuda.empty_cache()
for r in rows:
    if "error" in r:
        print(f"{r['backend']:6s} {r['name']:40s} refused: {r['error']}")
    else:
        print(f"{r['backend']:6s} {r['name']:40s} {r['us']:10.1f} us [{r['lo']:.1f}, {r['hi']:.1f}] {r['tflops']:7.1f} TFLOP/s")
if OUT:
    with open(OUT, "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, settle_us=SETTLE * 1e6,
                       iterations=ITERS, rows=rows), f, indent=1)
