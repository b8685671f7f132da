#!/usr/bin/env python3
"""torch_compare.py - the kptprof attention and MoE kernels against PyTorch on
the same inputs, in one process: correctness (relative error against
scaled_dot_product_attention and an eager MoE layer) and side-by-side timing.

    python3 torch_compare.py LIB [--quick] [--json OUT.json]

LIB is libkptattnmoe.so from bench/attention_moe/build.sh. Exit status 0 when
every comparison is within tolerance, 1 otherwise, 77 without a GPU.
Timings: CUDA events around each call, median of repetitions after warm-up;
attention inputs are torch.randn (never zeros).
"""
import ctypes
import json
import math
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch_compare: no torch: skipped")
    sys.exit(77)

if not torch.cuda.is_available():
    print("torch_compare: no GPU: skipped")
    sys.exit(77)

args = sys.argv[1:]
if not args:
    print("usage: torch_compare.py LIB [--quick] [--json OUT]", file=sys.stderr)
    sys.exit(2)
LIB = ctypes.CDLL(args[0])
QUICK = "--quick" in args
JSON_OUT = args[args.index("--json") + 1] if "--json" in args else None

vp, i, ll, f = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_float
LIB.kpt_py_last_error.restype = ctypes.c_char_p
LIB.kpt_py_attn_fwd.argtypes = [vp, vp, vp, vp, i, i, i, i, ll, ll, ll, f, i, i, i, vp]
LIB.kpt_py_attn_decode.argtypes = [vp, vp, vp, vp, i, i, i, i, i, ll, ll, ll, f, i, i, vp, ctypes.c_size_t, vp]
LIB.kpt_py_attn_decode_ws_bytes.argtypes = [i, i, i, i]
LIB.kpt_py_attn_decode_ws_bytes.restype = ctypes.c_size_t
LIB.kpt_py_moe_create.argtypes = [i, i, i, i, i, i]
LIB.kpt_py_moe_create.restype = vp
LIB.kpt_py_moe_forward.argtypes = [vp, vp, vp, vp, vp, vp, vp]
LIB.kpt_py_moe_destroy.argtypes = [vp]

dev = torch.device("cuda")
_cudart = torch.cuda.cudart()


def cudart_copy(host_tensor, dev_ptr, nbytes):
    """Device pointer from the library -> host tensor (cudaMemcpy D2H)."""
    torch.cuda.synchronize()
    tmp = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    # Wrap the raw pointer through a CUDA array interface so torch can copy it.
    class _P:
        __cuda_array_interface__ = dict(shape=(nbytes,), typestr="|u1", data=(dev_ptr, False), version=2)
    src = torch.as_tensor(_P(), device=dev)
    tmp.copy_(src)
    host_tensor.view(torch.uint8).copy_(tmp.cpu())
results = []
failures = 0


def stream():
    return torch.cuda.current_stream().cuda_stream


def check_rc(rc):
    if rc != 0:
        raise RuntimeError(LIB.kpt_py_last_error().decode())


def bench(fn, warm=3, reps=15):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def relerr(a, r):
    a = a.double()
    r = r.double()
    if not torch.isfinite(a).all():
        return float("inf")
    return ((a - r).norm() / r.norm()).item()


def record(kind, name, err, tol, ours_ms, torch_ms, unit_value_ours, unit_value_torch, unit, extra=None):
    global failures
    ok = err < tol
    failures += 0 if ok else 1
    row = dict(kind=kind, name=name, relerr=err, tol=tol, ok=ok, ours_ms=ours_ms, torch_ms=torch_ms,
               ours=unit_value_ours, torch=unit_value_torch, unit=unit)
    if extra:
        row.update(extra)
    results.append(row)
    print(f"{'ok  ' if ok else 'FAIL'} {name:<46} err {err:.1e}  ours {unit_value_ours:9.1f}  "
          f"torch {unit_value_torch:9.1f} {unit}  ({ours_ms:.3f} / {torch_ms:.3f} ms)", flush=True)


# ---- attention forward --------------------------------------------------------
def sdpa_backends():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel, [("default", None), ("flash", SDPBackend.FLASH_ATTENTION),
                         ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def attn_fwd(seq, d, causal, dtype, tiles=0):
    heads = 2048 // d
    batch = max(1, 16384 // seq)
    q, k, v = (torch.randn(batch, heads, seq, d, device=dev, dtype=dtype) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    dt = 0 if dtype == torch.bfloat16 else 1
    scale = 1.0 / math.sqrt(d)

    def ours():
        check_rc(LIB.kpt_py_attn_fwd(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), batch, heads, seq,
                                     d, heads * seq * d, seq * d, d, scale, int(causal), dt, tiles, stream()))

    ours()
    torch.cuda.synchronize()
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    err = relerr(o, ref)
    flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)
    t_ours = bench(ours)
    sdpa_kernel, backends = sdpa_backends()
    tt = {}
    for bname, be in backends:
        try:
            if be is None:
                tt[bname] = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            else:
                with sdpa_kernel(be):
                    tt[bname] = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        except RuntimeError as e:
            tt[bname] = float("nan")
    tol = 1e-2 if dtype == torch.bfloat16 else 5e-3
    name = f"attn fwd {str(dtype)[6:]} d{d} s{seq} {'causal' if causal else 'full'} tiles{tiles}"
    record("attn", name, err, tol, t_ours, tt["default"], flops / t_ours / 1e9, flops / tt["default"] / 1e9,
           "TFLOP/s", {f"torch_{b}_tflops": flops / t / 1e9 for b, t in tt.items()})
    print(f"     sdpa backends TFLOP/s: " + ", ".join(f"{b} {flops / t / 1e9:.1f}" for b, t in tt.items()))


# ---- decode ---------------------------------------------------------------------
def decode(ctx, batch=8, heads=32, d=128):
    q = torch.randn(batch, heads, 1, d, device=dev, dtype=torch.bfloat16)
    k = torch.randn(batch, heads, ctx, d, device=dev, dtype=torch.bfloat16)
    v = torch.randn(batch, heads, ctx, d, device=dev, dtype=torch.bfloat16)
    o = torch.full((batch, heads, 1, d), float("nan"), device=dev, dtype=torch.bfloat16)
    wsb = LIB.kpt_py_attn_decode_ws_bytes(batch, heads, ctx, d)
    ws = torch.empty(wsb, device=dev, dtype=torch.uint8)
    scale = 1.0 / math.sqrt(d)

    def ours():
        check_rc(LIB.kpt_py_attn_decode(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), batch, heads, heads,
                                        ctx, d, heads * ctx * d, ctx * d, d, scale, 0, 0, ws.data_ptr(), wsb,
                                        stream()))

    ours()
    torch.cuda.synchronize()
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    err = relerr(o, ref)
    byt = 2.0 * batch * heads * ctx * d * 2
    t_ours = bench(ours, reps=31)
    t_t = bench(lambda: F.scaled_dot_product_attention(q, k, v), reps=31)
    record("decode", f"decode bf16 d{d} B{batch} H{heads} ctx{ctx}", err, 1e-2, t_ours, t_t,
           byt / t_ours / 1e6, byt / t_t / 1e6, "GB/s")


# ---- MoE ------------------------------------------------------------------------
def moe_eager(x, wg, w1, w2, top_k):
    logits = x.float() @ wg.float().t()  # router in fp32, as kpt_moe does
    probs = torch.softmax(logits, dim=-1)
    topv, topi = torch.topk(probs, top_k, dim=-1)
    topv = topv / topv.sum(dim=-1, keepdim=True)
    y = torch.zeros(x.shape[0], x.shape[1], device=x.device, dtype=torch.float32)
    for e in range(wg.shape[0]):
        tok, slot = torch.where(topi == e)
        if tok.numel() == 0:
            continue
        h = F.gelu(x[tok] @ w1[e].t())
        y.index_add_(0, tok, (h @ w2[e].t()).float() * topv[tok, slot, None])
    return y.to(x.dtype), topi


def moe(tokens, hidden, ffn, experts, top_k, impl):
    g = torch.Generator(device=dev)
    g.manual_seed(torch.seed() & 0xffffffff)
    def U(*shape, a):
        return ((torch.rand(*shape, device=dev, generator=g) * 2 - 1) * a).to(torch.bfloat16)
    x = U(tokens, hidden, a=1.0)
    wg = U(experts, hidden, a=4 / math.sqrt(hidden))
    w1 = U(experts, ffn, hidden, a=2 / math.sqrt(hidden))
    w2 = U(experts, hidden, ffn, a=2 / math.sqrt(ffn))
    y = torch.full_like(x, float("nan"))
    m = LIB.kpt_py_moe_create(tokens, hidden, ffn, experts, top_k, impl)
    if not m:
        raise RuntimeError(LIB.kpt_py_last_error().decode())

    def ours():
        check_rc(LIB.kpt_py_moe_forward(m, y.data_ptr(), x.data_ptr(), wg.data_ptr(), w1.data_ptr(),
                                        w2.data_ptr(), stream()))

    ours()
    torch.cuda.synchronize()
    ref, topi = moe_eager(x, wg, w1, w2, top_k)
    # Tokens whose expert choice differs (near ties under different rounding)
    # are left out of the error and counted.
    ids = torch.empty(tokens, top_k, dtype=torch.int32, device=dev)
    LIB.kpt_py_moe_topk_ids.restype = vp
    LIB.kpt_py_moe_topk_ids.argtypes = [vp]
    ptr = LIB.kpt_py_moe_topk_ids(m)
    torch.cuda.synchronize()
    ids_host = torch.empty(tokens * top_k, dtype=torch.int32)
    cudart_copy(ids_host, ptr, tokens * top_k * 4)
    same = (ids_host.view(tokens, top_k).to(dev).sort(dim=-1).values == topi.int().sort(dim=-1).values).all(dim=-1)
    err = relerr(y[same], ref[same])
    ndiff = int((~same).sum().item())
    reps = 5 if tokens > 8192 else 20
    t_ours = bench(ours, reps=reps)
    t_t = bench(lambda: moe_eager(x, wg, w1, w2, top_k), reps=reps)
    LIB.kpt_py_moe_destroy(m)
    flops = 4.0 * tokens * top_k * hidden * ffn + 2.0 * tokens * hidden * experts
    name = f"moe T{tokens} H{hidden} F{ffn} E{experts} k{top_k} {'cublas' if impl else 'grouped'}"
    record("moe", name, err, 2e-2, t_ours, t_t, tokens / t_ours / 1e3, tokens / t_t / 1e3, "Mtok/s",
           dict(ours_tflops=flops / t_ours / 1e9, torch_tflops=flops / t_t / 1e9, speedup=t_t / t_ours,
                tokens_with_other_experts=ndiff))
    print(f"     {ndiff} of {tokens} tokens chose other experts than torch (left out of the error)")
    print(f"     TFLOP/s ours {flops / t_ours / 1e9:.1f} torch {flops / t_t / 1e9:.1f}, speedup {t_t / t_ours:.2f}x")


print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
torch.manual_seed(torch.seed() & 0xffffffff)
for seq in ([2048] if QUICK else [2048, 16384]):
    for d in (64, 128):
        for causal in (False, True):
            attn_fwd(seq, d, causal, torch.bfloat16)
        attn_fwd(seq, d, False, torch.float16)
for ctx in ([128, 1024] if QUICK else [128, 256, 512, 1024, 4096, 16384, 32768]):
    decode(ctx)
moe_cfgs = [(4096, 512, 2048, 8, 2), (4096, 1024, 4096, 8, 2)]
if not QUICK:
    moe_cfgs.append((32768, 2048, 768, 128, 8))
for cfg in moe_cfgs:
    for impl in (0, 1):
        moe(*cfg, impl)
if JSON_OUT:
    with open(JSON_OUT, "w") as fh:
        json.dump(dict(torch=torch.__version__, device=torch.cuda.get_device_name(), results=results), fh, indent=1)
print(f"{'PASSED' if failures == 0 else 'FAILED'}: {failures} comparison(s) out of tolerance")
sys.exit(1 if failures else 0)
