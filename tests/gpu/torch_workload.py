"""torch_workload.py - a small PyTorch training loop for the collector tests.

  python3 torch_workload.py [--profile NAMES_FILE] [--steps N]

Runs N steps (forward, backward, optimizer) of a small MLP + attention block
in bf16 with each step inside torch.cuda.nvtx.range_push("kpt_step"). With
--profile the whole GPU part runs under torch.profiler (CUDA activity) and
the name of every kernel it saw is written to NAMES_FILE, one per line, so
the GPU test can compare with what `kptprof record` captured.
"""
import argparse
import sys

try:
    import torch
except ImportError:
    sys.exit(77)


def work(steps):
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)
    ).to(dev)
    attn = torch.nn.MultiheadAttention(256, 4, batch_first=True).to(dev)
    opt = torch.optim.AdamW(list(model.parameters()) + list(attn.parameters()), lr=1e-3)
    x = torch.randn(8, 64, 256, device=dev)
    for _ in range(steps):
        torch.cuda.nvtx.range_push("kpt_step")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(x)
            h, _ = attn(h, h, h)
            loss = h.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile")
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit(77)
    if not a.profile:
        work(a.steps)
        return
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work(a.steps)
    # CUDA-side events are kernels, memcpys and memsets; keep the kernels.
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
             and not e.name.startswith(("Memcpy ", "Memset "))]
    with open(a.profile, "w") as f:
        for n in names:
            f.write(n + "\n")


if __name__ == "__main__":
    main()
