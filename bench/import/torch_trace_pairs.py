"""torch_trace_pairs.py - real torch.profiler traces before and after a change,
for `kptprof import` + `diff` on one machine (issue 40: imported traces
before/after on one machine, +5% on a >= 200 us kernel found; 0 SLOW on an
unchanged pair).

  python3 torch_trace_pairs.py --k K --out TRACE.json.gz [--steps N] [--seed S]

One process, one trace: a small step of a few kernels of different kinds
(a bf16 GEMM 8192 x 8192 x K, the one the "pull request" changes; a smaller
GEMM; layer norm; GELU; softmax; a reduction) on non-zero random data, run
under torch.profiler with schedule(wait=2, warmup=3, active=N), written by
tensorboard_trace_handler's format (.json.gz through export_chrome_trace +
gzip, as the handler does). K=1024 is "before"; K=1080 is "after" (+5.5%
of the GEMM's arithmetic, same cuBLAS kernel when the heuristic keeps it:
the names are printed so a changed kernel shows).
"""
import argparse
import gzip
import os
import shutil
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = "cuda"
    bf = torch.bfloat16
    x = torch.randn(8192, a.k, device=dev, dtype=bf)
    w = torch.randn(a.k, 8192, device=dev, dtype=bf)
    y = torch.randn(2048, 2048, device=dev, dtype=bf)
    z = torch.randn(2048, 2048, device=dev, dtype=bf)
    v = torch.randn(4096, 4096, device=dev, dtype=torch.float32)
    ln = torch.nn.LayerNorm(4096, device=dev)

    def step():
        h = x @ w
        g = torch.nn.functional.gelu(h)
        s = torch.softmax(y @ z, dim=-1)
        n = ln(v)
        r = g.float().sum() + s.float().sum() + n.sum()
        return r

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    sched = schedule(wait=2, warmup=3, active=a.steps, repeat=1)
    tmp = tempfile.mkdtemp()
    raw = os.path.join(tmp, "t.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(a.steps + 5):
            r = step()
            prof.step()
    torch.cuda.synchronize()
    assert torch.isfinite(r).item()
    with open(raw, "rb") as fi, gzip.open(a.out, "wb") as fo:
        shutil.copyfileobj(fi, fo)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit(77)
    main()
