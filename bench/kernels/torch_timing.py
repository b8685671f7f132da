"""torch_timing.py - what the PyTorch references beside kpt-workloads share
(sdpa_ref.py, moe_torch_ref.py): their option reader and the timing loop of
kpt-workloads --settle-us. Import it after torch has been found."""
import sys
import time

import torch


def opt(name, default):
    """The value after NAME on the command line, as DEFAULT's type."""
    a = sys.argv[1:]
    return type(default)(a[a.index(name) + 1]) if name in a else default


def event_ms(fn, warmup, iters, settle_s):
    """Milliseconds of each of ITERS calls of FN after WARMUP more, each
    alone on the GPU: synchronized, SETTLE_S seconds idle, timed by CUDA
    events around it."""
    ts = []
    for it in range(warmup + iters):
        torch.cuda.synchronize()
        if settle_s:
            time.sleep(settle_s)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        if it >= warmup:
            ts.append(a.elapsed_time(b))
    return ts
