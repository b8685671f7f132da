#!/usr/bin/env python3
"""moe_torch_ref.py - the state of the art in PyTorch beside kpt-workloads'
MoE layers (bench/kernels/moe_rounds.sh): the same layer (router GEMM,
softmax, top-k, permute, FFN up with GELU and down, combine) with
torch._grouped_mm for the two FFN GEMMs (one launch per GEMM for every
expert, CUTLASS on Hopper), and the grouped GEMMs alone, on issue 24's two
goal shapes (e8 top-2 h512 f2048 over 4096 tokens; e128 top-8 h2048 f768
over 32768 tokens), bf16, timed the way kpt-workloads times (CUDA events
around each iteration, an idle gap of --settle-us before each, median of
--iterations after --warmup). Routing from a random router (seeded), the
same kind of routing the workloads make, not the same tokens.

    python3 moe_torch_ref.py [--iterations 20] [--warmup 3] [--settle-us 3000] [--json OUT]

--json writes kpt-workloads' --json row format (name, median_s), so
moe_rounds.py reads it beside the workloads: torch.moe.layer.<shape> (the
layer) and torch.moe.ffn.<shape> (the two grouped GEMMs and the GELU).
Exit 77 without a GPU or torch, 1 when torch._grouped_mm refuses.
"""
import json
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("moe_torch_ref: no torch: skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("moe_torch_ref: no GPU: skipped")
    sys.exit(77)


from torch_timing import event_ms, opt  # noqa: E402 (after torch is found)

ITERS = opt("--iterations", 20)
WARM = opt("--warmup", 3)
SETTLE = opt("--settle-us", 3000) / 1e6
OUT = opt("--json", "")
# (experts, top-k, hidden, ffn, batch, seq): the bench twins' names
SHAPES = [(8, 2, 512, 2048, 8, 512), (128, 8, 2048, 768, 8, 4096)]


def timed(fn):
    ts = sorted(t / 1e3 for t in event_ms(fn, WARM, ITERS, SETTLE))
    return ts[len(ts) // 2]


def main():
    torch.manual_seed(20261126)
    rows = []
    bad = 0
    for e, k, h, f, b, s in SHAPES:
        t = b * s
        dev, bf = "cuda", torch.bfloat16
        x = torch.randn(t, h, device=dev, dtype=bf)
        wr = torch.randn(h, e, device=dev, dtype=bf) / h ** 0.5
        # stored (E, out, in) and passed transposed: the layout torchtitan
        # and torch's own tests give _grouped_mm
        w1 = torch.randn(e, f, h, device=dev, dtype=bf) / h ** 0.5
        w2 = torch.randn(e, h, f, device=dev, dtype=bf) / f ** 0.5
        name = f"e{e}.top{k}.h{h}.f{f}.b{b}.s{s}"

        def route():
            p = torch.softmax(x.float() @ wr.float(), dim=-1)
            w, idx = torch.topk(p, k, dim=-1)
            flat = idx.flatten()
            order = torch.argsort(flat, stable=True)
            offs = torch.cumsum(torch.bincount(flat, minlength=e), 0).to(torch.int32)
            return w.flatten()[order].to(bf), order, offs

        def ffn(xp, offs):
            hid = F.gelu(torch._grouped_mm(xp, w1.transpose(-2, -1), offs=offs))
            return torch._grouped_mm(hid, w2.transpose(-2, -1), offs=offs)

        def layer():
            w, order, offs = route()
            src = order // k
            y = ffn(x.index_select(0, src), offs) * w[:, None]
            return torch.zeros_like(x).index_add_(0, src, y)

        try:
            w, order, offs = route()
            xp = x.index_select(0, order // k)
            ref_rows = ffn(xp, offs)
            # one expert by hand: the grouped GEMM computes what it should
            lo = 0 if e == 1 else int(offs[0].item())
            hi = int(offs[1].item())
            if hi > lo:
                want = F.gelu(xp[lo:hi].float() @ w1[1].float().t()).to(bf).float() @ w2[1].float().t()
                err = (ref_rows[lo:hi].float() - want).abs().max().item() / (want.abs().max().item() + 1e-6)
                if err > 0.05:
                    raise RuntimeError(f"grouped_mm result off by {err:.3f} (relative) on expert 1")
            rows.append(dict(name=f"torch.moe.layer.{name}", median_s=timed(layer)))
            rows.append(dict(name=f"torch.moe.ffn.{name}", median_s=timed(lambda: ffn(xp, offs))))
        except RuntimeError as ex:
            print(f"moe_torch_ref: {name}: {str(ex).splitlines()[0][:160]}")
            bad = 1
        del x, wr, w1, w2
        torch.cuda.empty_cache()
    for r in rows:
        print(f"{r['name']:48s} {r['median_s'] * 1e6:10.1f} us")
    if OUT:
        with open(OUT, "w") as fh:
            json.dump(rows, fh, indent=1)
    return bad


if __name__ == "__main__":
    sys.exit(main())
