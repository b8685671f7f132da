/* kpt_attention.h - attention kernels: FlashAttention-2 style forward and
 * split-K decode (libkptkernels, kernels/attention/).
 *
 * Launchers enqueue on stream s and return without synchronising: 0, or a
 * negative enum kpt_err with d filled (KPT_E_INVAL for bad shapes, strides or
 * alignment, KPT_E_UNSUPPORTED for a head dimension other than 64 or 128,
 * KPT_E_CUDA when a launch fails). Tensors are 16-bit (bf16 or fp16), or
 * for the forward e4m3 (KPT_ATTN_E4M3, below), the head dimension contiguous; the other dimensions are addressed by element
 * strides, so both [B, S, H, D] and [B, H, S, D] layouts work. Pointers and
 * the sequence stride must be 16-byte aligned (stride_s a multiple of 8).
 * Each launcher is one NVTX range named after it.
 *
 * FLOPs of the forward pass: 4 * B * H * S * S * D, half of that when causal;
 * of the backward pass 2.5 times that (five S x S x D matmuls to the
 * forward's two). The float64 CPU references are in ref_attention.h.
 */
#ifndef KPT_ATTENTION_H
#define KPT_ATTENTION_H

#include <stddef.h>

#include <cuda_runtime_api.h>

/* kpt_err.h has no C++ guard of its own: include it with C linkage so that
 * CUDA C++ sources calling kpt_diag_set link against libkpt. */
#ifdef __cplusplus
extern "C" {
#endif
#include "kpt_err.h"

/* KPT_ATTN_E4M3 (forward only, kpt_attn_fwd): Q and K e4m3 [.., S, D] like
 * the 16-bit tensors (1-byte elements: stride_s, stride_h and stride_b
 * multiples of 16), V as the packed V^T that kpt_attn_e4m3_pack_v makes,
 * O bf16 (same element strides as Q, so 2 bytes an element), per-tensor
 * descales (kpt_attn_fwd_args.q_descale ...). Hopper only (the sm_90a
 * kernel, head dim 64 or 128): KPT_E_UNSUPPORTED on every other GPU, head dim and
 * with lse or mma.sync tiles asked for. */
enum kpt_attn_dtype { KPT_ATTN_BF16 = 0, KPT_ATTN_FP16 = 1, KPT_ATTN_E4M3 = 2 };

/* Tile shapes of the forward kernel: query rows per block x keys per tile,
 * warps, and rows per warp (16: Q fragments kept in registers; 32: two row
 * tiles share every K/V fragment, Q re-read from shared memory); DB: K and V
 * double-buffered (one barrier per key tile). These are the mma.sync kernel
 * (sm_80+). WGMMA is the Hopper kernel (attention_fwd_sm90.cu: wgmma, TMA,
 * a producer warpgroup and consumer warpgroups of 64 rows; 128x128 names
 * its head dim 128 tiles, two consumer warpgroups; at head dim 64 the same
 * value runs 192 query rows (three consumer warpgroups) x 128 keys): head
 * dim 64 or 128, bf16 or fp16, causal or not, on a compute capability 9.0
 * GPU when the build includes architecture 90 (compiled for sm_90a);
 * KPT_E_UNSUPPORTED elsewhere. e4m3 runs only its e4m3 variant
 * (attention_fwd_sm90_fp8.cu), which AUTO resolves to. AUTO picks WGMMA where it runs, else the
 * fastest measured mma.sync one for the head dimension (bench/RESULTS.md);
 * the other mma.sync tiles are built for bf16 only, for benchmarking; fp16
 * builds the AUTO ones (KPT_E_UNSUPPORTED for the rest). Naming mma.sync
 * tiles pins that kernel on Hopper too (the workload table does so for
 * entries whose committed baselines were recorded with it). */
enum kpt_attn_tiles {
	KPT_ATTN_TILES_AUTO = 0,
	KPT_ATTN_TILES_128x64 = 1,         /* 8 warps x 16 rows */
	KPT_ATTN_TILES_64x64 = 2,          /* 4 warps x 16 rows, 2 blocks per SM */
	KPT_ATTN_TILES_64x128 = 3,         /* 4 warps x 16 rows */
	KPT_ATTN_TILES_128x64_R32 = 4,     /* 4 warps x 32 rows (AUTO for d128) */
	KPT_ATTN_TILES_128x128_R32 = 5,    /* 4 warps x 32 rows */
	KPT_ATTN_TILES_256x64_R32 = 6,     /* 8 warps x 32 rows */
	KPT_ATTN_TILES_128x64_R32_DB = 7,  /* 4 warps x 32 rows, 2 blocks per SM */
	KPT_ATTN_TILES_128x128_R32_DB = 8, /* 4 warps x 32 rows (AUTO for d64 but on Hopper) */
	KPT_ATTN_TILES_128x128_WGMMA = 9,  /* sm_90a, AUTO on Hopper: d128 3 warpgroups, d64 4 (192x128) */
	KPT_ATTN_TILES_COUNT
};

/* O = softmax(scale * Q K^T (+ causal mask)) V over seq query and key rows.
 * Causal: query row i sees keys 0..i (equal query and key lengths).
 * lse: NULL, or batch * heads * seq floats, contiguous in that order
 * ([b][h][i]), that receive log(sum_j exp(scale * q_i . k_j)) over the keys
 * row i sees (natural log), which kpt_attn_bwd needs. Only the bf16 AUTO
 * mma.sync tiles write it: with lse set AUTO never picks WGMMA, and fp16 or
 * any other tiles are KPT_E_UNSUPPORTED. Callers that memset the struct get
 * NULL. */
struct kpt_attn_fwd_args {
	const void *q, *k, *v;
	void *o;
	float *lse;
	int batch, heads, seq, head_dim;
	long long stride_b, stride_h, stride_s; /* elements, shared by q, k, v and o */
	float scale;                            /* usually 1/sqrt(head_dim) */
	int causal;
	enum kpt_attn_dtype dtype;
	enum kpt_attn_tiles tiles;
	/* Planted slowdown (kpt-workloads --plant), 0 = none: every block also
	 * processes plant_pct% more key tiles (real ones, reloaded) with every
	 * key masked, so the kernel (same name, grid and block) does that much
	 * more work and o is bit-identical. WGMMA only (d64 and d128):
	 * KPT_E_UNSUPPORTED when plant_pct > 0 and the mma.sync kernel would
	 * run. */
	int plant_pct;
	/* KPT_ATTN_E4M3 only (ignored otherwise): the factors that turn the
	 * stored e4m3 values back into the tensors' values (q = q_descale *
	 * e4m3 bits as a number, the kpt_fp8_quantize scale_inv), so
	 * O = softmax(scale * q_descale * k_descale * Q K^T) V * v_descale. */
	float q_descale, k_descale, v_descale;
	/* KPT_ATTN_E4M3 only: which e4m3 kernel, an enum kpt_attn_e4m3_kernel
	 * value (kpt_attn_path.h); 0 (callers that memset the struct) = the
	 * default for the head dim; KPT_E_INVAL out of range. */
	int e4m3_kernel;
};
int kpt_attn_fwd(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d);

/* The V operand of the e4m3 forward: V^T, [batch][heads][head_dim][vt_seq]
 * bytes contiguous, vt_seq = kpt_attn_e4m3_vt_seq(seq) (seq rounded up to
 * 32), keys permuted within each chunk of 32 (kpt_attn_e4m3_vt_pos,
 * kpt_attn_path.h: the order in which the kernel's P registers meet the
 * keys), zeros past seq. FP8 wgmma reads its B operand only K-major (keys
 * contiguous), so V is transposed once, outside the timed forward.
 * kpt_attn_e4m3_pack_v enqueues that on s from an e4m3 V addressed like Q
 * (element strides, head dim contiguous); vt must hold
 * kpt_attn_e4m3_vt_bytes() bytes, 16-byte aligned. 0, KPT_E_INVAL for bad
 * shapes, KPT_E_CUDA when the launch fails. Costs one byte read and written
 * per element (uncoalesced reads; a setup step). */
size_t kpt_attn_e4m3_vt_bytes(int batch, int heads, int seq, int head_dim);
int kpt_attn_e4m3_pack_v(void *vt, const void *v, int batch, int heads, int seq, int head_dim, long long stride_b,
			 long long stride_h, long long stride_s, cudaStream_t s, struct kpt_diag *d);
/* The variant kpt_attn_fwd runs for a on the current device: a->tiles, or
 * what AUTO resolves to (for reports; a is not validated). */
enum kpt_attn_tiles kpt_attn_fwd_tiles(const struct kpt_attn_fwd_args *a);

/* Decode: one query token per (batch, head) against a KV cache of ctx rows.
 * q and o are [batch][heads][head_dim] contiguous; the caches are addressed
 * by kv strides (elements); kv_heads divides heads (grouped-query attention:
 * query head h reads cache head h / (heads / kv_heads)). The cache is split
 * into chunks of chunk rows (0 = choose) scored by one block each; a second
 * kernel combines the chunks (skipped when the cache fits one chunk). ws is device memory of at least
 * kpt_attn_decode_ws_bytes() bytes; nothing in it must survive between calls. */
struct kpt_attn_decode_args {
	const void *q;
	const void *k_cache, *v_cache;
	void *o;
	int batch, heads, kv_heads, ctx, head_dim;
	long long kv_stride_b, kv_stride_h, kv_stride_s;
	float scale;
	enum kpt_attn_dtype dtype;
	int chunk;   /* rows per split, a multiple of 64 up to 4096; 0 = choose */
	void *ws;
	size_t ws_bytes;
	/* Planted slowdown (kpt-workloads --plant), 0 = none: a chunk kernel of
	 * its own name (attn_decode_chunk_plant; same grid and block, so the
	 * unplanted kernel's code stays as it was) also streams plant_pct% more K and V rows
	 * from plant, at least kpt_attn_decode_plant_bytes() bytes of 16-byte
	 * aligned device memory that nothing else touches during the call (its
	 * contents are read, never used: o is bit-identical). */
	int plant_pct;
	const void *plant;
	size_t plant_bytes;
};
size_t kpt_attn_decode_ws_bytes(int batch, int heads, int ctx, int head_dim);
/* Bytes of the plant memory for plant_pct (0 when plant_pct <= 0). */
size_t kpt_attn_decode_plant_bytes(int batch, int heads, int ctx, int head_dim, int plant_pct);
int kpt_attn_decode(const struct kpt_attn_decode_args *a, cudaStream_t s, struct kpt_diag *d);

/* Backward of kpt_attn_fwd (attention_bwd.cu; on compute capability 9.0
 * attention_bwd_sm90.cu, wgmma and TMA): dq, dk, dv from the forward's
 * inputs, its output o, its lse (kpt_attn_fwd_args.lse, same layout) and the
 * output's gradient dout, for the same scale and causal flag. bf16 only
 * (KPT_E_UNSUPPORTED for fp16), head dim 64 or 128, any seq >= 1; the
 * eight tensors share the strides and alignment rules of the forward. ws is
 * device memory of at least kpt_attn_bwd_ws_bytes() bytes (fp32 dQ partial
 * sums and the rowsum(dO * O) vector); nothing in it must survive between
 * calls, and two calls must not share it concurrently. Three kernels on s
 * (and on 9.0 a memset): rowsum and clearing, dK/dV (dQ accumulated in fp32
 * with atomics, on 9.0 with bulk reductions, so dq's rounding may differ
 * from run to run in the last bit), dQ conversion. plant_pct > 0 (--plant)
 * makes the dK/dV kernel do plant_pct% more work whose results are
 * discarded (mma.sync: more key blocks; sm_90a: more query-block steps per
 * block): outputs unchanged. */
struct kpt_attn_bwd_args {
	const void *q, *k, *v, *o, *dout;
	const float *lse;
	void *dq, *dk, *dv;
	int batch, heads, seq, head_dim;
	long long stride_b, stride_h, stride_s; /* elements, shared by all eight tensors */
	float scale;
	int causal;
	enum kpt_attn_dtype dtype;
	void *ws;
	size_t ws_bytes;
	int plant_pct; /* 0..10000 */
};
size_t kpt_attn_bwd_ws_bytes(int batch, int heads, int seq, int head_dim);
int kpt_attn_bwd(const struct kpt_attn_bwd_args *a, cudaStream_t s, struct kpt_diag *d);

#ifdef __cplusplus
}
#endif

#endif
