"""torch_import_workload.py - the PyTorch program of scripts/gpu/import_check.sh.

  python3 torch_import_workload.py [--trace FILE] [--steps N]

N training steps (forward in record_function("forward"), backward,
optimizer) of a small MLP + attention block in bf16. With --trace the steps
run under torch.profiler (CPU and CUDA activity, schedule wait=1, warmup=1,
active=N-2, one prof.step() per step) and the Chrome trace is exported to
FILE: the active steps appear as ProfilerStep#N ranges. Without --trace each
step is an NVTX range "kpt:iter" (what kptprof's diff splits iterations by)
with "forward" inside, for `kptprof record`.
"""
import argparse
import sys

try:
    import torch
except ImportError:
    sys.exit(77)


def build():
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)
    ).to(dev)
    attn = torch.nn.MultiheadAttention(256, 4, batch_first=True).to(dev)
    opt = torch.optim.AdamW(list(model.parameters()) + list(attn.parameters()), lr=1e-3)
    x = torch.randn(8, 64, 256, device=dev)
    return model, attn, opt, x


def step(model, attn, opt, x, mark):
    with mark("forward"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(x)
            h, _ = attn(h, h, h)
            loss = h.float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


class nvtx_range:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.cuda.nvtx.range_push(self.name)

    def __exit__(self, *a):
        torch.cuda.nvtx.range_pop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace")
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit(77)
    model, attn, opt, x = build()
    if not a.trace:
        for _ in range(a.steps):
            with nvtx_range("kpt:iter"):
                step(model, attn, opt, x, nvtx_range)
        torch.cuda.synchronize()
        return
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    sched = schedule(wait=1, warmup=1, active=a.steps - 2, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 on_trace_ready=lambda p: p.export_chrome_trace(a.trace)) as prof:
        for _ in range(a.steps):
            step(model, attn, opt, x, record_function)
            torch.cuda.synchronize()
            prof.step()


if __name__ == "__main__":
    main()
