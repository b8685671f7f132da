"""ddp_step.py - a small data-parallel training step with NCCL all-reduce,
for recording ranks on several GPUs (issue 15).

    python3 -m torch.distributed.run --nproc-per-node 2 bench/collector/ddp_step.py [--steps N] [--warmup W]

Each rank trains 4 bf16 Linear(4096, 4096) layers on its own batch of
2048 rows (DistributedDataParallel: the gradients are all-reduced through
NCCL during backward), SGD. Each step is an NVTX range "step" on the
training thread. Rank 0 prints the median step time over --steps timed
steps (CUDA-synchronised wall clock per step), as "ddp_step median_ms X
steps N world W mean_ms Y".
NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends).
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2048)
    a = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    torch.manual_seed(1234 + rank)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(a.width, a.width, bias=False), torch.nn.GELU()]
    model = DDP(torch.nn.Sequential(*layers).to(device="cuda", dtype=torch.bfloat16), device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(a.batch, a.width, device="cuda", dtype=torch.bfloat16)
    times = []
    for i in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push("step")
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if not torch.isfinite(loss).item():
        raise SystemExit("ddp_step: loss is not finite")
    dist.barrier()
    if rank == 0:
        print(f"ddp_step median_ms {1e3 * statistics.median(times):.4f} steps {a.steps} world {dist.get_world_size()} "
              f"mean_ms {1e3 * statistics.fmean(times):.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
