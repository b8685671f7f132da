"""torchrun_ranks.py - a tiny two-rank job for tests/gpu/torchrun_test.sh:
both ranks on the one GPU (cuda:0 whatever LOCAL_RANK says), gloo backend;
each step an NVTX range "step", a matmul on the GPU, and an all_reduce of a
CPU copy (gloo is CPU-only), which keeps the ranks in lock step."""
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    a = torch.randn(512, 512, device="cuda:0")
    for _ in range(10):
        torch.cuda.nvtx.range_push("step")
        b = a @ a
        t = b.sum().reshape(1).cpu()
        dist.all_reduce(t)
        a = a * 0.5 + t.item() * 1e-9
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"rank {rank} local_rank {os.environ.get('LOCAL_RANK')} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
