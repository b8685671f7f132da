"""foreign_torch.py - a PyTorch program kptprof did not write, for the
gate's power on programs nobody tuned it on (issue 20): no NVTX ranges, no
kpt:iter, kernels chosen by cuBLAS and PyTorch. --slow PCT makes every op
do PCT% more real work with the same launch configuration: the GEMM's inner
dimension K, the reduction's and the softmax's row length grow by PCT%.

  python3 foreign_torch.py [--slow PCT] [--steps N]
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slow", type=float, default=0.0)
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    f = 1.0 + a.slow / 100.0
    g = torch.Generator(device="cuda").manual_seed(1234)
    dev = "cuda"
    k = int(round(8192 * f / 64)) * 64           # GEMM 4096 x 4096 x K, bf16
    c = int(round(16384 * f / 64)) * 64          # row sum of 8192 rows of c floats
    s = int(round(8192 * f / 64)) * 64           # softmax over rows of s bf16
    A = torch.randn(4096, k, device=dev, dtype=torch.bfloat16, generator=g)
    B = torch.randn(k, 4096, device=dev, dtype=torch.bfloat16, generator=g)
    X = torch.randn(8192, c, device=dev, dtype=torch.float32, generator=g)
    S = torch.randn(4096, s, device=dev, dtype=torch.bfloat16, generator=g)
    for step in range(a.steps + 3):
        C = A @ B
        r = X.sum(dim=1)
        p = torch.softmax(S, dim=1)
    torch.cuda.synchronize()
    # use the results so nothing is optimised away, and check they are sane
    v = float(C[0, 0].float() + r[0] + p[0, 0].float())
    assert v == v, "NaN"
    print(f"foreign_torch: {a.steps + 3} steps, K={k}, c={c}, s={s}, check {v:.3f}")


if __name__ == "__main__":
    main()
