#!/usr/bin/env python3
"""kineto_trace.py - a synthetic torch.profiler (Kineto) trace of a training
loop, for the import + diff tests and bench/import/kineto_ab.sh.

The program: 20 kernels per step (12 in "forward", launched by the main
thread inside its ProfilerStep#N range; 8 in the backward, launched by
autograd's thread outside any range), 5 us to 1.1 ms, one of them a 203 us
GEMM. The layout follows Kineto's output_json.cpp (deviceProperties,
baseTimeNanoseconds, "ph": "X" events with ts/dur in us with 3 decimals,
cuda_runtime launches with their correlation).

Noise (log scale, per kernel instance; what a real trace of one machine
shows, and what the decision rule must not mistake for a change):
  - step to step: SD 1.0% under 20 us, 0.7% to 200 us, 0.5% from 200 us;
  - a common factor per step (clocks, SD 0.3%) on every kernel of the step;
  - a per-process offset per kernel (SD 0.3%): two processes of the same
    program on one machine are not the same draw (memory placement, caches);
  - 1% of instances 10-30% slower (a preemption, a neighbour's copy).

Usage: kineto_trace.py -o OUT.json[.gz] --seed S [--steps N] [--slow PCT]
       [--host NAME] [--pid P]
--slow PCT makes the 203 us GEMM PCT percent slower (the planted change).
--host writes a top-level "hostname" (Kineto does not; a wrapper may), and
every trace writes what Kineto's version logger does (cuda_runtime_version,
cuda_driver_version, cupti_version).
"""
import argparse
import gzip
import json
import math
import random

SLOW_KERNEL = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"

# (name, base duration us, grid, block, in forward)
KERNELS = [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 5.1, 132, 128, True),
    ("void at::native::elementwise_kernel<128, 2, at::native::AddFunctor<float>>", 6.4, 264, 128, True),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>", 8.2, 132, 512, True),
    ("void at::native::unrolled_elementwise_kernel<at::native::GeluCUDAKernelImpl>", 12.5, 528, 256, True),
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>", 15.3, 96, 128, True),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", 21.0, 1024, 256, True),
    ("void at::native::vectorized_layer_norm_kernel<float, float>", 26.8, 2048, 256, True),
    ("ampere_sgemm_128x64_nn", 35.2, 256, 128, True),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", 52.7, 264, 128, True),
    ("ampere_sgemm_64x64_nt", 71.4, 192, 128, True),
    (SLOW_KERNEL, 203.0, 396, 256, True),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 318.5, 264, 384, True),
    ("void at::native::elementwise_kernel<128, 2, at::native::MulFunctor<float>>", 9.6, 264, 128, False),
    ("void at::native::reduce_kernel<256, 2, at::native::ReduceOp<float, at::native::func_wrapper>>", 17.9, 132, 256, False),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float>", 24.4, 1024, 256, False),
    ("void flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8>>", 95.0, 264, 256, False),
    ("ampere_sgemm_128x128_tn", 148.0, 330, 256, False),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64", 402.0, 264, 384, False),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64", 611.0, 264, 384, False),
    ("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>", 1104.0, 1320, 512, False),
]


def step_sd(us):
    return 0.010 if us < 20 else 0.007 if us < 200 else 0.005


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--slow", type=float, default=0.0)
    ap.add_argument("--host")
    ap.add_argument("--pid", type=int, default=4242)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    offset = [rnd.gauss(0, 0.003) for _ in KERNELS]
    pid, main_tid, bwd_tid = a.pid, a.pid, a.pid + 7
    ev = []
    t = 1000.0          # us after baseTimeNanoseconds
    corr = 1
    for step in range(a.steps):
        common = rnd.gauss(0, 0.003)
        step_start = t
        gpu_t = t + 20.0
        fwd_start = t + 5.0
        fwd_end = None
        cpu_t = t + 10.0
        for i, (name, us, grid, block, fwd) in enumerate(KERNELS):
            if not fwd and fwd_end is None:
                fwd_end = cpu_t + 2.0
                cpu_t += 5.0
            f = math.exp(offset[i] + common + rnd.gauss(0, step_sd(us)))
            if rnd.random() < 0.01:
                f *= 1.0 + rnd.uniform(0.10, 0.30)
            if name == SLOW_KERNEL:
                f *= 1.0 + a.slow / 100.0
            dur = us * f
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                       "tid": main_tid if fwd else bwd_tid, "ts": round(cpu_t, 3), "dur": 4.0,
                       "args": {"correlation": corr, "External id": corr}})
            gpu_t = max(gpu_t, cpu_t + 6.0)
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                       "ts": round(gpu_t, 3), "dur": round(dur, 3),
                       "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                                "registers per thread": 64, "shared memory": 16384,
                                "grid": [grid, 1, 1], "block": [block, 1, 1], "External id": corr}})
            corr += 1
            cpu_t += 8.0
            gpu_t += dur + 1.5
        t = max(gpu_t, cpu_t) + 50.0
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (step + 2), "pid": pid,
                   "tid": main_tid, "ts": round(step_start, 3), "dur": round(t - 10.0 - step_start, 3),
                   "args": {"External id": 0}})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "forward", "pid": pid, "tid": main_tid,
                   "ts": round(fwd_start, 3), "dur": round(fwd_end - fwd_start, 3), "args": {}})
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
            "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
            "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536,
            "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}],
        "cupti_version": 26, "cuda_runtime_version": 12080, "cuda_driver_version": 13000,
        "record_shapes": 0,
        "trace_id": "%032X" % rnd.getrandbits(128),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1764000000000000000 + a.seed * 1000000000,
        "traceEvents": ev,
    }
    if a.host:
        doc["hostname"] = a.host
    text = json.dumps(doc)
    if a.o.endswith(".gz"):
        with gzip.open(a.o, "wt") as f:
            f.write(text)
    else:
        with open(a.o, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
