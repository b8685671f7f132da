"""transformer_step.py - wall time of a realistic training step: one
transformer block (d_model 1024, 16 heads, FFN 4096, batch 8 x seq 1024,
bf16 autocast) forward + backward + AdamW, for the collector's slowdown
benchmark.

  python3 transformer_step.py [--steps N] [--warmup W]

Prints "step median_ms=... p10_ms=... p90_ms=... steps=N kernels_per_step~K".
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(1024, 16, 4096, dropout=0.0, batch_first=True,
                                             norm_first=True).cuda()
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    x = torch.randn(8, 1024, 1024, device="cuda")
    times = []
    for i in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = layer(x)
            loss = y.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"step median_ms={statistics.median(times):.4f} p10_ms={times[len(times) // 10]:.4f} "
          f"p90_ms={times[len(times) * 9 // 10]:.4f} steps={a.steps}")


if __name__ == "__main__":
    main()
