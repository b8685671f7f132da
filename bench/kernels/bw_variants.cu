// bw_variants.cu - launch-shape variants of the streaming kernels (copy,
// triad, sum), timed on 1 GiB buffers, to choose the shapes that
// kernels/memory/kpt_memory.cu uses, and other ways to copy (TMA bulk
// copies, non-coherent loads without L1 allocation, sm_90). H100 80GB
// HBM3, 2026-11-26, 1 GiB (GB/s read + written; 3.35 TB/s x 92% = 3082):
// copy.np.plain.u1.256t 3010 (89.9%), cudaMemcpyAsync 2994, copy.tma.*
// 2841-2885, copy.na*.cs.* 2799-2833, copy.gs.* 2758-2837, copy.32b.*
// 1967-2652: none of the new variants beat the one-vector-per-thread kernel
// that kernels/memory's copy already is. Standalone:
//     nvcc -O3 -arch=sm_90 bench/kernels/bw_variants.cu -o bw && ./bw
// Prints one line per variant: name, median us, GB/s (bytes read + written).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

template <bool S, typename V> __device__ __forceinline__ V ld(const V *p) { if (S) return __ldcs(p); return *p; }
template <bool S, typename V> __device__ __forceinline__ void st(V *p, V v) { if (S) __stcs(p, v); else *p = v; }

// grid-stride, U loads in flight per thread
template <bool S, int U> __global__ void copy_gs(uint4 *d, const uint4 *s, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + (U - 1) * stride < n; i += U * stride) {
		uint4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++) v[u] = ld<S>(&s[i + u * stride]);
#pragma unroll
		for (int u = 0; u < U; u++) st<S>(&d[i + u * stride], v[u]);
	}
	for (; i < n; i += stride) d[i] = s[i];
}

// one block per U*blockDim contiguous vectors, no loop
template <bool S, int U> __global__ void copy_np(uint4 *d, const uint4 *s, size_t n)
{
	size_t base = (size_t)blockIdx.x * U * blockDim.x + threadIdx.x;
	uint4 v[U];
#pragma unroll
	for (int u = 0; u < U; u++) if (base + u * blockDim.x < n) v[u] = ld<S>(&s[base + u * blockDim.x]);
#pragma unroll
	for (int u = 0; u < U; u++) if (base + u * blockDim.x < n) st<S>(&d[base + u * blockDim.x], v[u]);
}

// Copy variants for the 92% goal (issue 24; kernels/memory's copy stays as
// the committed baselines recorded it): loads through the non-coherent path
// without L1 allocation (PF: with a 256-byte L2 prefetch hint), streaming
// stores, U vectors in flight per thread.
template <bool PF> __device__ __forceinline__ uint4 ld_na(const uint4 *p)
{
	uint4 v;
	if (PF)
		asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	else
		asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	return v;
}
template <bool PF, int U> __global__ void copy_na(uint4 *d, const uint4 *s, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + (U - 1) * stride < n; i += U * stride) {
		uint4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++) v[u] = ld_na<PF>(&s[i + u * stride]);
#pragma unroll
		for (int u = 0; u < U; u++) __stcs(&d[i + u * stride], v[u]);
	}
	for (; i < n; i += stride) d[i] = s[i];
}
// Each thread moves 2 adjacent 16-byte vectors (32 contiguous bytes) U times.
template <int U> __global__ void copy_32b(uint4 *d, const uint4 *s, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	const size_t n2 = n / 2;
	for (; i + (U - 1) * stride < n2; i += U * stride) {
		uint4 v[U][2];
#pragma unroll
		for (int u = 0; u < U; u++) { v[u][0] = ld_na<false>(&s[2 * (i + u * stride)]); v[u][1] = ld_na<false>(&s[2 * (i + u * stride) + 1]); }
#pragma unroll
		for (int u = 0; u < U; u++) { __stcs(&d[2 * (i + u * stride)], v[u][0]); __stcs(&d[2 * (i + u * stride) + 1], v[u][1]); }
	}
	for (; i < n2; i += stride) { d[2 * i] = s[2 * i]; d[2 * i + 1] = s[2 * i + 1]; }
}
// Copy by the TMA's bulk copies (sm_90): one thread per block streams chunks
// of CH bytes (chunk c of the block: blockIdx.x + k * gridDim.x) through NS
// shared-memory stages: cp.async.bulk global -> shared completing on an
// mbarrier, then cp.async.bulk shared -> global; a stage is refilled once
// its store has read it (wait_group.read). bytes % CH == 0.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void tma_issue_load(unsigned sm, unsigned bar, const char *g, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
		     :: "r"(sm), "l"(g), "r"(bytes), "r"(bar) : "memory");
}
#endif
template <int CH, int NS> __global__ void copy_tma(char *d, const char *s, size_t bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	extern __shared__ __align__(128) unsigned char tma_sm[];
	__shared__ __align__(8) unsigned long long bar[NS];
	if (threadIdx.x != 0)
		return;
	const unsigned sm0 = (unsigned)__cvta_generic_to_shared(tma_sm), b0 = (unsigned)__cvta_generic_to_shared(bar);
	for (int i = 0; i < NS; i++)
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b0 + 8 * i) : "memory");
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	const size_t nch = bytes / CH, g = gridDim.x;
	for (int k = 0; k < NS; k++) {
		size_t c = blockIdx.x + k * g;
		if (c < nch)
			tma_issue_load(sm0 + k * CH, b0 + 8 * k, s + c * CH, CH);
	}
	size_t k = 0;
	for (size_t c = blockIdx.x; c < nch; c += g, k++) {
		const unsigned st = (unsigned)(k % NS), ph = (unsigned)((k / NS) & 1);
		asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}"
			     :: "r"(b0 + 8 * st), "r"(ph) : "memory");
		asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
			     :: "l"(d + c * CH), "r"(sm0 + st * CH), "r"(CH) : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		if (k >= 1) {
			const size_t m = k - 1 + NS, cm = blockIdx.x + m * g;
			if (cm < nch) {
				asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
				tma_issue_load(sm0 + (unsigned)(m % NS) * CH, b0 + 8 * (unsigned)(m % NS), s + cm * CH, CH);
			}
		}
	}
	asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#else
	(void)d, (void)s, (void)bytes;
#endif
}

template <bool S, int U> __global__ void triad_np(float4 *a, const float4 *b, const float4 *c, float q, size_t n)
{
	size_t base = (size_t)blockIdx.x * U * blockDim.x + threadIdx.x;
	float4 x[U], y[U];
#pragma unroll
	for (int u = 0; u < U; u++) if (base + u * blockDim.x < n) { x[u] = ld<S>(&b[base + u * blockDim.x]); y[u] = ld<S>(&c[base + u * blockDim.x]); }
#pragma unroll
	for (int u = 0; u < U; u++) if (base + u * blockDim.x < n)
		st<S>(&a[base + u * blockDim.x], make_float4(fmaf(q, y[u].x, x[u].x), fmaf(q, y[u].y, x[u].y), fmaf(q, y[u].z, x[u].z), fmaf(q, y[u].w, x[u].w)));
}

template <bool S, int U> __global__ void triad_gs(float4 *a, const float4 *b, const float4 *c, float q, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + (U - 1) * stride < n; i += U * stride) {
		float4 x[U], y[U];
#pragma unroll
		for (int u = 0; u < U; u++) { x[u] = ld<S>(&b[i + u * stride]); y[u] = ld<S>(&c[i + u * stride]); }
#pragma unroll
		for (int u = 0; u < U; u++)
			st<S>(&a[i + u * stride], make_float4(fmaf(q, y[u].x, x[u].x), fmaf(q, y[u].y, x[u].y), fmaf(q, y[u].z, x[u].z), fmaf(q, y[u].w, x[u].w)));
	}
}

template <bool S, int U> __global__ void sum_gs(float *out, const float4 *x, size_t n)
{
	__shared__ float sh[32];
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	float acc[U] = {};
	for (; i + (U - 1) * stride < n; i += U * stride) {
		float4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++) v[u] = ld<S>(&x[i + u * stride]);
#pragma unroll
		for (int u = 0; u < U; u++) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
	}
	for (; i < n; i += stride) {
		float4 v = ld<S>(&x[i]);
		acc[0] += (v.x + v.y) + (v.z + v.w);
	}
	float t = 0;
#pragma unroll
	for (int u = 0; u < U; u++) t += acc[u];
	for (int o = 16; o; o /= 2) t += __shfl_xor_sync(~0u, t, o);
	if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = t;
	__syncthreads();
	if (threadIdx.x == 0) { for (unsigned w = 1; w < blockDim.x / 32; w++) t += sh[w]; atomicAdd(out, t); }
}

// bf16 transpose as 2x2 word transposes through an XOR-swizzled tile
// (kernels/memory/kpt_memory.cu transpose_b16_pairs); ROWS threads.y, NT
// tiles per block along the columns.
template <int ROWS, int NT> __global__ void tr_pairs(unsigned *out, const unsigned *in, size_t rows, size_t cols)
{
	__shared__ unsigned tile[NT][64][32];
	size_t cw = cols / 2, rw = rows / 2, r0 = (size_t)blockIdx.y * 64;
	unsigned tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
	for (int t = 0; t < NT; t++) {
		size_t c0 = ((size_t)blockIdx.x * NT + t) * 64;
#pragma unroll
		for (int k = ty; k < 64; k += ROWS) {
			size_t r = r0 + k, w = c0 / 2 + tx;
			tile[t][k][tx ^ ((k >> 1) & 31)] = r < rows && w < cw ? __ldcs(&in[r * cw + w]) : 0u;
		}
	}
	__syncthreads();
#pragma unroll
	for (int t = 0; t < NT; t++) {
		size_t c0 = ((size_t)blockIdx.x * NT + t) * 64;
#pragma unroll
		for (int j = ty; j < 32; j += ROWS) {
			unsigned a = tile[t][2 * tx][j ^ tx], b = tile[t][2 * tx + 1][j ^ tx];
			size_t oc = c0 + 2 * j, ow = r0 / 2 + tx;
			if (ow < rw && oc < cols) __stcs(&out[oc * rw + ow], (a & 0xFFFFu) | (b << 16));
			if (ow < rw && oc + 1 < cols) __stcs(&out[(oc + 1) * rw + ow], (a >> 16) | (b & 0xFFFF0000u));
		}
	}
}

template <typename F> static double med_us(F f, int reps = 30)
{
	std::vector<float> ms;
	cudaEvent_t a, b;
	cudaEventCreate(&a); cudaEventCreate(&b);
	for (int i = 0; i < 5; i++) f();
	for (int i = 0; i < reps; i++) {
		float t;
		cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
		cudaEventElapsedTime(&t, a, b); ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	return ms[reps / 2] * 1e3;
}

int main()
{
	const size_t bytes = 1ull << 30, n16 = bytes / 16;
	int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	uint4 *a, *b, *c;
	float *out;
	CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&c, bytes)); CK(cudaMalloc(&out, 4));
	CK(cudaMemset(a, 1, bytes)); CK(cudaMemset(b, 2, bytes)); CK(cudaMemset(c, 3, bytes));
#define R(name, nb, ...) do { double us = med_us([&] { __VA_ARGS__; }); CK(cudaGetLastError()); \
	printf("%-40s %10.1f us %8.1f GB/s\n", name, us, (nb) / us * 1e-3); fflush(stdout); } while (0)
	R("copy.memcpy", 2.0 * bytes, cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice));
	for (int per : {4, 8, 16}) {
		char nm[64];
		snprintf(nm, sizeof nm, "copy.gs.stream.u4.256t.%dper", per); R(nm, 2.0 * bytes, (copy_gs<true, 4><<<sms * per, 256>>>(a, b, n16)));
		snprintf(nm, sizeof nm, "copy.gs.plain.u4.256t.%dper", per); R(nm, 2.0 * bytes, (copy_gs<false, 4><<<sms * per, 256>>>(a, b, n16)));
		snprintf(nm, sizeof nm, "copy.gs.plain.u8.256t.%dper", per); R(nm, 2.0 * bytes, (copy_gs<false, 8><<<sms * per, 256>>>(a, b, n16)));
	}
	for (int per : {2, 4, 8}) {
		char nm[64];
		snprintf(nm, sizeof nm, "copy.na.cs.u4.256t.%dper", per); R(nm, 2.0 * bytes, (copy_na<false, 4><<<sms * per, 256>>>(a, b, n16)));
		snprintf(nm, sizeof nm, "copy.na.cs.u8.256t.%dper", per); R(nm, 2.0 * bytes, (copy_na<false, 8><<<sms * per, 256>>>(a, b, n16)));
		snprintf(nm, sizeof nm, "copy.na256.cs.u8.256t.%dper", per); R(nm, 2.0 * bytes, (copy_na<true, 8><<<sms * per, 256>>>(a, b, n16)));
		snprintf(nm, sizeof nm, "copy.32b.cs.u4.256t.%dper", per); R(nm, 2.0 * bytes, (copy_32b<4><<<sms * per, 256>>>(a, b, n16)));
	}
	R("copy.na.cs.u16.128t.8per", 2.0 * bytes, (copy_na<false, 16><<<sms * 8, 128>>>(a, b, n16)));
	R("copy.na.cs.u8.1024t.2per", 2.0 * bytes, (copy_na<false, 8><<<sms * 2, 1024>>>(a, b, n16)));
	{
		char *ca = (char *)a, *cb = (char *)b;
		CK(cudaFuncSetAttribute(copy_tma<16384, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
		CK(cudaFuncSetAttribute(copy_tma<32768, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 131072));
		CK(cudaFuncSetAttribute(copy_tma<32768, 6>, cudaFuncAttributeMaxDynamicSharedMemorySize, 196608));
		CK(cudaFuncSetAttribute(copy_tma<8192, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
		R("copy.tma.16k.4st.3per", 2.0 * bytes, (copy_tma<16384, 4><<<sms * 3, 32, 65536>>>(ca, cb, bytes)));
		R("copy.tma.16k.4st.2per", 2.0 * bytes, (copy_tma<16384, 4><<<sms * 2, 32, 65536>>>(ca, cb, bytes)));
		R("copy.tma.32k.4st.1per", 2.0 * bytes, (copy_tma<32768, 4><<<sms, 32, 131072>>>(ca, cb, bytes)));
		R("copy.tma.32k.6st.1per", 2.0 * bytes, (copy_tma<32768, 6><<<sms, 32, 196608>>>(ca, cb, bytes)));
		R("copy.tma.8k.8st.3per", 2.0 * bytes, (copy_tma<8192, 8><<<sms * 3, 32, 65536>>>(ca, cb, bytes)));
		CK(cudaMemset(a, 0, bytes));
		CK(cudaMemset(b, 7, bytes));
		copy_tma<16384, 4><<<sms * 3, 32, 65536>>>(ca, cb, bytes);
		CK(cudaDeviceSynchronize());
		std::vector<unsigned char> h(bytes / 1024);
		bool okc = true;
		for (size_t off = 0; off < bytes && okc; off += bytes / 8) {
			CK(cudaMemcpy(h.data(), ca + off, h.size(), cudaMemcpyDeviceToHost));
			for (unsigned char x : h) okc = okc && x == 7;
		}
		printf("copy.tma check: %s\n", okc ? "ok" : "WRONG");
		CK(cudaMemset(b, 2, bytes));
	}
	R("copy.np.plain.u1.256t", 2.0 * bytes, (copy_np<false, 1><<<n16 / 256, 256>>>(a, b, n16)));
	R("copy.np.plain.u2.256t", 2.0 * bytes, (copy_np<false, 2><<<n16 / 512, 256>>>(a, b, n16)));
	R("copy.np.plain.u4.256t", 2.0 * bytes, (copy_np<false, 4><<<n16 / 1024, 256>>>(a, b, n16)));
	R("copy.np.stream.u4.256t", 2.0 * bytes, (copy_np<true, 4><<<n16 / 1024, 256>>>(a, b, n16)));
	R("copy.np.plain.u4.128t", 2.0 * bytes, (copy_np<false, 4><<<n16 / 512, 128>>>(a, b, n16)));
	R("copy.np.plain.u8.128t", 2.0 * bytes, (copy_np<false, 8><<<n16 / 1024, 128>>>(a, b, n16)));
	R("copy.np.plain.u2.512t", 2.0 * bytes, (copy_np<false, 2><<<n16 / 1024, 512>>>(a, b, n16)));
	float4 *fa = (float4 *)a, *fb = (float4 *)b, *fc = (float4 *)c;
	R("triad.gs.stream.u4.256t.8per", 3.0 * bytes, (triad_gs<true, 4><<<sms * 8, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.gs.plain.u4.256t.8per", 3.0 * bytes, (triad_gs<false, 4><<<sms * 8, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.gs.plain.u2.256t.16per", 3.0 * bytes, (triad_gs<false, 2><<<sms * 16, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.np.plain.u1.256t", 3.0 * bytes, (triad_np<false, 1><<<n16 / 256, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.np.plain.u2.256t", 3.0 * bytes, (triad_np<false, 2><<<n16 / 512, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.np.plain.u4.256t", 3.0 * bytes, (triad_np<false, 4><<<n16 / 1024, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.np.stream.u4.256t", 3.0 * bytes, (triad_np<true, 4><<<n16 / 1024, 256>>>(fa, fb, fc, 0.5f, n16)));
	R("triad.np.plain.u4.128t", 3.0 * bytes, (triad_np<false, 4><<<n16 / 512, 128>>>(fa, fb, fc, 0.5f, n16)));
	R("sum.gs.stream.u4.512t.4per", 1.0 * bytes, (sum_gs<true, 4><<<sms * 4, 512>>>(out, fa, n16)));
	R("sum.gs.plain.u4.512t.4per", 1.0 * bytes, (sum_gs<false, 4><<<sms * 4, 512>>>(out, fa, n16)));
	R("sum.gs.stream.u8.512t.4per", 1.0 * bytes, (sum_gs<true, 8><<<sms * 4, 512>>>(out, fa, n16)));
	R("sum.gs.plain.u8.512t.4per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 4, 512>>>(out, fa, n16)));
	R("sum.gs.plain.u8.256t.8per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 8, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u16.256t.8per", 1.0 * bytes, (sum_gs<false, 16><<<sms * 8, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u4.1024t.2per", 1.0 * bytes, (sum_gs<false, 4><<<sms * 2, 1024>>>(out, fa, n16)));
	R("sum.gs.plain.u8.256t.16per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 16, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u4.256t.32per", 1.0 * bytes, (sum_gs<false, 4><<<sms * 32, 256>>>(out, fa, n16)));
	{
		const size_t R = 16384, C = 16384;
		unsigned *in = (unsigned *)a, *o = (unsigned *)b;
		R("transpose.bf16.pairs.8rows.1tile", 4.0 * R * C, (tr_pairs<8, 1><<<dim3(C / 64, R / 64), dim3(32, 8)>>>(o, in, R, C)));
		R("transpose.bf16.pairs.16rows.1tile", 4.0 * R * C, (tr_pairs<16, 1><<<dim3(C / 64, R / 64), dim3(32, 16)>>>(o, in, R, C)));
		R("transpose.bf16.pairs.4rows.1tile", 4.0 * R * C, (tr_pairs<4, 1><<<dim3(C / 64, R / 64), dim3(32, 4)>>>(o, in, R, C)));
		R("transpose.bf16.pairs.8rows.2tiles", 4.0 * R * C, (tr_pairs<8, 2><<<dim3(C / 128, R / 64), dim3(32, 8)>>>(o, in, R, C)));
		R("transpose.bf16.pairs.16rows.2tiles", 4.0 * R * C, (tr_pairs<16, 2><<<dim3(C / 128, R / 64), dim3(32, 16)>>>(o, in, R, C)));
	}
	R("sum.gs.plain.u8.256t.24per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 24, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u8.256t.32per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 32, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u4.256t.64per", 1.0 * bytes, (sum_gs<false, 4><<<sms * 64, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u16.256t.16per", 1.0 * bytes, (sum_gs<false, 16><<<sms * 16, 256>>>(out, fa, n16)));
	R("sum.gs.plain.u8.128t.32per", 1.0 * bytes, (sum_gs<false, 8><<<sms * 32, 128>>>(out, fa, n16)));
	return 0;
}
