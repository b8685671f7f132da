"""sampled_steps.py - a training-like loop that runs for a given time, for
sparse sampling and on-demand capture (issue 37; scripts/gpu/sampling.sh).

    python3 sampled_steps.py --seconds S [--pidfile F]
    python3 -m torch.distributed.run --nproc-per-node 2 sampled_steps.py --seconds S

Each step is an NVTX range "step" on the main thread holding the same
work: 3 bf16 matmuls (2048 x 2048) forward and their backward, and with
more than one rank an all-reduce of the gradient through NCCL, so every
step launches the same kernels. Steps run until S seconds have passed.
Each rank prints one line "sampled_steps rank R steps N seconds T" (no
torch.profiler here: it would take CUPTI while kptprof is detached).
--pidfile: rank 0 writes its pid there once the loop runs.
"""
import argparse
import os
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--pidfile", default="")
    ap.add_argument("--size", type=int, default=2048)
    a = ap.parse_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    dist = None
    if world > 1:
        import torch.distributed as dist
        # one GPU: the ranks share it and talk through gloo (sampling.sh
        # when only one GPU is lent); else one GPU each, NCCL
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        dist.init_process_group(os.environ.get("KPT_DIST_BACKEND", "nccl"))
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1 + rank)
    n = a.size
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16, generator=g)
    w = [torch.randn(n, n, device=dev, dtype=torch.bfloat16, generator=g, requires_grad=True) for _ in range(3)]

    def step():
        h = x
        for m in w:
            h = torch.relu(h @ m)
        loss = h.float().square().mean()
        loss.backward()
        if dist is not None:
            for m in w:
                dist.all_reduce(m.grad)
        with torch.no_grad():
            for m in w:
                m.sub_(1e-6 * m.grad)
                m.grad = None

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    if a.pidfile and rank == 0:
        with open(a.pidfile + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.replace(a.pidfile + ".tmp", a.pidfile)
    steps = 0
    t0 = time.time()
    stop = torch.zeros(1, device=dev)
    while True:
        torch.cuda.nvtx.range_push("step")
        step()
        torch.cuda.nvtx.range_pop()
        steps += 1
        if steps % 8 == 0:
            # the ranks stop at the same step (each rank's own clock would
            # leave one waiting in an all-reduce the others never join)
            stop.fill_(1.0 if time.time() - t0 >= a.seconds else 0.0)
            if dist is not None:
                dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item() > 0:
                break
    torch.cuda.synchronize()
    print(f"sampled_steps rank {rank} steps {steps} seconds {time.time() - t0:.1f}", flush=True)
    if dist is not None:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
