"""nvtx_nccl_steps.py - a two-rank NCCL job for tests/gpu/nvtx_nccl_test.sh:
one GPU per rank, each step one user NVTX range "hstep" (default domain)
around three element-wise kernels and four collectives (all_reduce x2,
all_gather_into_tensor, broadcast), which NCCL wraps in its own NVTX
domain. No autograd, so every kernel is launched by the main thread:
per rank STEPS x 3 kernels must read "hstep" and STEPS x 4 NCCL kernels
"hstep/nccl...", in every step."""
import os
import sys

import torch
import torch.distributed as dist

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", local)
    x = torch.full((1 << 16,), float(rank + 1), device=dev)
    y = torch.ones(1 << 12, device=dev)
    z = torch.zeros(1 << 12, device=dev)
    out = torch.empty(world * x.numel(), device=dev)
    torch.cuda.synchronize()
    for _ in range(STEPS):
        torch.cuda.nvtx.range_push("hstep")
        x.mul_(0.5)
        x.add_(1.0)
        y.mul_(0.25)
        dist.all_reduce(x)
        dist.all_reduce(y)
        dist.all_gather_into_tensor(out, x)
        dist.broadcast(z, src=0)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"rank {rank} steps {STEPS} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
