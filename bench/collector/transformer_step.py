"""transformer_step.py - wall time of a realistic training step: one
transformer block (d_model 2048, 16 heads, FFN 8192, batch 8 x seq 2048,
bf16 autocast, pre-norm) forward + backward + AdamW, for the collector's
slowdown benchmark.

  python3 transformer_step.py [--steps N] [--warmup W]

Prints "step median_ms=... p10_ms=... p90_ms=... steps=N".
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--d", type=int, default=2048)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=8)
    a = ap.parse_args()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(a.d, 16, 4 * a.d, dropout=0.0, batch_first=True,
                                             norm_first=True).cuda()
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    x = torch.randn(a.batch, a.seq, a.d, device="cuda")
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
