/* pyshim.c - flat C entry points over the attention and MoE launchers for
 * ctypes (bench/attention_moe/torch_compare.py): scalars and pointers only,
 * the last error message kept for kpt_py_last_error(). Not thread-safe;
 * a benchmark helper, not part of libkptkernels. */
#include <stddef.h>
#include <string.h>

#include "kpt_attention.h"
#include "kpt_moe.h"

static struct kpt_diag last;

const char *kpt_py_last_error(void)
{
	return last.msg;
}

int kpt_py_attn_fwd(const void *q, const void *k, const void *v, void *o, int batch, int heads, int seq,
		    int head_dim, long long sb, long long sh, long long ss, float scale, int causal, int dtype,
		    int tiles, void *stream)
{
	struct kpt_attn_fwd_args a;

	memset(&a, 0, sizeof a);
	a.q = q, a.k = k, a.v = v, a.o = o;
	a.batch = batch, a.heads = heads, a.seq = seq, a.head_dim = head_dim;
	a.stride_b = sb, a.stride_h = sh, a.stride_s = ss;
	a.scale = scale, a.causal = causal;
	a.dtype = (enum kpt_attn_dtype)dtype;
	a.tiles = (enum kpt_attn_tiles)tiles;
	return kpt_attn_fwd(&a, (cudaStream_t)stream, &last);
}

size_t kpt_py_attn_decode_ws_bytes(int batch, int heads, int ctx, int head_dim)
{
	return kpt_attn_decode_ws_bytes(batch, heads, ctx, head_dim);
}

int kpt_py_attn_decode(const void *q, const void *k, const void *v, void *o, int batch, int heads, int kv_heads,
		       int ctx, int head_dim, long long sb, long long sh, long long ss, float scale, int dtype,
		       int chunk, void *ws, size_t ws_bytes, void *stream)
{
	struct kpt_attn_decode_args a;

	memset(&a, 0, sizeof a);
	a.q = q, a.k_cache = k, a.v_cache = v, a.o = o;
	a.batch = batch, a.heads = heads, a.kv_heads = kv_heads, a.ctx = ctx, a.head_dim = head_dim;
	a.kv_stride_b = sb, a.kv_stride_h = sh, a.kv_stride_s = ss;
	a.scale = scale, a.dtype = (enum kpt_attn_dtype)dtype, a.chunk = chunk;
	a.ws = ws, a.ws_bytes = ws_bytes;
	return kpt_attn_decode(&a, (cudaStream_t)stream, &last);
}

void *kpt_py_moe_create(int tokens, int hidden, int ffn, int experts, int top_k, int impl)
{
	struct kpt_moe_cfg c = { tokens, hidden, ffn, experts, top_k };
	struct kpt_moe *m;

	return kpt_moe_create(&m, &c, (enum kpt_moe_ffn_impl)impl, &last) ? NULL : m;
}

int kpt_py_moe_forward(void *m, void *y, const void *x, const void *wg, const void *w1, const void *w2,
		       void *stream)
{
	return kpt_moe_forward(m, y, x, wg, w1, w2, (cudaStream_t)stream, &last);
}

const int *kpt_py_moe_topk_ids(void *m)
{
	return kpt_moe_topk_ids(m);
}

void kpt_py_moe_destroy(void *m)
{
	kpt_moe_destroy(m);
}
