/* kpt_synth_gen.c - the synthetic recording generator (see kpt_synth.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_demangle.h"
#include "kpt_synth.h"

/* Devices kpt-synth knows the specs of; other names get the first row's. */
struct gpu_spec {
	const char *name;
	uint32_t sm_count, cc_major, cc_minor;
	uint64_t mem_bytes, l2_bytes;
	uint32_t sm_mhz, mem_mhz, bus_bits;
	double copy_gbps, bf16_tflops;
	uint32_t power_mw;          /* typical busy power */
};

static const struct gpu_spec gpus[] = {
	{ "NVIDIA H100 80GB HBM3", 132, 9, 0, 85520809984ull, 52428800, 1980, 2619, 5120, 3000, 798, 550000 },
	{ "NVIDIA H200", 132, 9, 0, 150754820096ull, 62914560, 1980, 3201, 6144, 4100, 810, 600000 },
	{ "NVIDIA A100-SXM4-80GB", 108, 8, 0, 85899345920ull, 41943040, 1410, 1593, 5120, 1700, 280, 350000 },
	{ "NVIDIA L4", 58, 8, 9, 24152899584ull, 50331648, 2040, 6251, 192, 250, 110, 70000 },
};

/* Pieces of mangled names. Lengths are computed, never hand-written. */
static const char *const name_ns[] = { "kpt", "cutlass", "flash", "moe", "cub" };
static const char *const name_base[] = {
	"gemm_kernel", "softmax_fwd", "layernorm_fwd", "vectorized_elementwise_kernel",
	"reduce_kernel", "flash_fwd_kernel", "topk_gating", "permute_tokens",
	"quantize_fp8", "rmsnorm_kernel", "rotary_embedding", "silu_and_mul", "copy_kernel",
};
static const char *const name_dtype[] = { "f", "d", "N3kpt4bf16E" };
static const char *const name_params[] = { "vPKfPfi", "vPKvPvmRKi", "vPfPKfii" };
static const char *const range_names[] = { "attention", "mlp", "norm", "moe.dispatch", "moe.combine", "embedding" };

struct site {
	uint32_t name;              /* string id */
	uint32_t name_idx;
	uint32_t grid[3], block[3];
	uint32_t regs, smem_static, smem_dyn;
	uint32_t stream;
	double base_ns;
	double slow;                /* factor for --slow */
	uint32_t group;             /* launch-site range group */
};

struct kpt_synth {
	struct kpt_synth_opts o;
	const struct gpu_spec *gpu;
	char **names;               /* mangled, o.names of them */
	struct site *sites;
	uint32_t *name_ids;
	uint32_t range_name_ids[sizeof range_names / sizeof range_names[0]];
	uint32_t iter_name, workload_name, domain;
	uint64_t rng[4];
	double *run_factor;         /* per site, for the current run */
	uint64_t *proc_start, *proc_end; /* per run: the process's lifetime */
	uint32_t cmd;               /* string id of the command */
	uint32_t run, iter;
	uint64_t emitted;
	uint64_t t;                 /* current time, ns */
	uint64_t run_start;
	uint64_t next_env;
	uint32_t correlation;
	uint32_t next_range;
	uint32_t workload_range;
	struct kpt_kernel *kbuf;
	struct kpt_range *rbuf;
	struct kpt_memop mbuf[2];
	struct kpt_env_sample *ebuf;
	size_t ecap;
	int done;
};

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (public domain algorithm by Blackman and Vigna). */
static uint64_t rnd(struct kpt_synth *s)
{
	uint64_t *r = s->rng, out = rotl(r[1] * 5, 7) * 9, t = r[1] << 17;

	r[2] ^= r[0];
	r[3] ^= r[1];
	r[1] ^= r[2];
	r[0] ^= r[3];
	r[2] ^= t;
	r[3] = rotl(r[3], 45);
	return out;
}

static double uniform(struct kpt_synth *s)
{
	return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(struct kpt_synth *s)
{
	double u = uniform(s), v = uniform(s);

	return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void seed(struct kpt_synth *s, uint64_t x)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		s->rng[i] = z ^ (z >> 31);
	}
}

void kpt_synth_defaults(struct kpt_synth_opts *o)
{
	memset(o, 0, sizeof *o);
	o->kernels_per_iter = 24;
	o->iterations = 20;
	o->runs = 5;
	o->names = 200;
	o->noise_pct = 1.0;
	o->within_pct = 0.5;
	o->gpu = "NVIDIA H100 80GB HBM3";
	o->suite = "synth";
	o->command = "kpt-synth";
	o->seed = 1;
	o->probe_where = "in each run";
}

/* The GPU's nominal value of probe k (kpt_synth_opts.probes order); fp8
 * is twice bf16 as on Hopper. */
static double probe_nominal(const struct gpu_spec *g, int k)
{
	const double v[4] = { g->copy_gbps, g->bf16_tflops, 2 * g->bf16_tflops, g->sm_mhz };

	return k >= 0 && k < 4 ? v[k] : 0;
}

/* --follow: the factor of a site whose name holds the text, 1 for others. */
static double follow_factor(const struct kpt_synth_opts *o, const struct gpu_spec *g, const char *mangled)
{
	char *dem;
	int hit;
	double p = o->follow_probe >= 0 && o->follow_probe < 4 ? o->probes[o->follow_probe] : 0;

	if (!o->follow || !o->have_probes || !(p > 0))
		return 1;
	dem = kpt_demangle(mangled);
	hit = strstr(mangled, o->follow) || (dem && strstr(dem, o->follow));
	free(dem);
	return hit ? probe_nominal(g, o->follow_probe) / p : 1;
}

/* Name i of the pool: distinct for distinct i (mixed-radix digits). Every
 * eighth is an extern "C" name as cuBLAS kernels have. */
static char *make_name(uint32_t i)
{
	const size_t nb = sizeof name_base / sizeof *name_base;
	const size_t nn = sizeof name_ns / sizeof *name_ns;
	/* A bijection on each block of 3120 (= the product of the first five
	 * radices; 1031 is prime to it) so neighbouring names differ in more
	 * than their first digit. */
	uint32_t x = (i % 3120) * 1031 % 3120 + i / 3120 * 3120;
	const char *base = name_base[x % nb], *ns;
	uint32_t tm, tn, dt, pr;
	char buf[512];

	x /= (uint32_t)nb;
	ns = name_ns[x % nn];
	x /= (uint32_t)nn;
	tm = 32u << (x % 4);
	x /= 4;
	tn = 16u << (x % 4);
	x /= 4;
	dt = x % 3;
	x /= 3;
	pr = (i / 7) % 3;
	if (i % 8 == 7) {
		snprintf(buf, sizeof buf, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize%ux%ux64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v%u",
			 tm, tn, i);
		return strdup(buf);
	}
	/* kpt::ns::base<tm, tn, dtype, kpt::functor::op<float>, x>(params) */
	snprintf(buf, sizeof buf, "_ZN%zu%s%zu%sILi%uELi%uE%sN3kpt7functor%sIfEELi%uEEE%s",
		 strlen(ns), ns, strlen(base), base, tm, tn, name_dtype[dt],
		 i % 2 ? "3add" : "3mul", x, name_params[pr]);
	return strdup(buf);
}

void kpt_synth_destroy(struct kpt_synth *s)
{
	if (!s)
		return;
	if (s->names)
		for (uint32_t i = 0; i < s->o.names; i++)
			free(s->names[i]);
	free(s->names);
	free(s->sites);
	free(s->name_ids);
	free(s->run_factor);
	free(s->proc_start);
	free(s->proc_end);
	free(s->kbuf);
	free(s->rbuf);
	free(s->ebuf);
	free(s);
}

/* The machine's factor for site i (kpt_synth_opts.machine_pct): a normal
 * draw from (machine_seed, i) by splitmix64 and Box-Muller, independent of
 * the recording's own seed. */
static double machine_factor(const struct kpt_synth_opts *o, uint32_t i, const char *mangled)
{
	uint64_t x = o->machine_seed * 0x9E3779B97F4A7C15ull + i + 1, u[2];
	char *dem;
	int stable = 0;

	if (o->stable) {
		dem = kpt_demangle(mangled);
		stable = strstr(mangled, o->stable) || (dem && strstr(dem, o->stable));
		free(dem);
	}
	if (stable)
		return 1;
	for (int k = 0; k < 2; k++) {
		uint64_t z = (x += 0x9E3779B97F4A7C15ull);

		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		u[k] = z ^ (z >> 31);
	}
	return exp(o->machine_pct / 100 * sqrt(-2 * log(((u[0] >> 11) + 0.5) / 9007199254740992.0)) *
		   cos(2 * M_PI * (u[1] >> 11) / 9007199254740992.0));
}

static double slow_factor(const struct kpt_synth_opts *o, const char *mangled)
{
	char *dem = kpt_demangle(mangled);
	double f = 1.0;

	for (int i = 0; i < o->nslow; i++)
		if (strstr(mangled, o->slow[i].substr) || (dem && strstr(dem, o->slow[i].substr)))
			f *= 1.0 + o->slow[i].pct / 100.0;
	free(dem);
	return f;
}

int kpt_synth_create(const struct kpt_synth_opts *o, struct kpt_synth **out,
		     struct kpt_diag *d)
{
	struct kpt_synth *s;
	uint32_t k;

	*out = NULL;
	if (!o->kernels_per_iter || !o->runs || !o->names || (!o->iterations && !o->total_kernels))
		return kpt_diag_set(d, KPT_E_INVAL, "kernels per iteration, runs, names and iterations must be > 0");
	s = calloc(1, sizeof *s);
	if (!s)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	s->o = *o;
	if (o->total_kernels) {
		uint64_t per = (uint64_t)o->kernels_per_iter * o->runs;
		uint64_t it = (o->total_kernels + per - 1) / per;

		s->o.iterations = it > UINT32_MAX ? UINT32_MAX : (uint32_t)it;
	}
	s->gpu = &gpus[0];
	for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
		if (strcmp(gpus[i].name, o->gpu) == 0)
			s->gpu = &gpus[i];
	seed(s, o->seed);
	k = o->kernels_per_iter;
	s->names = calloc(o->names, sizeof *s->names);
	s->name_ids = calloc(o->names, sizeof *s->name_ids);
	s->sites = calloc(k, sizeof *s->sites);
	s->run_factor = calloc(k, sizeof *s->run_factor);
	s->kbuf = calloc(k, sizeof *s->kbuf);
	s->rbuf = calloc(k + 2, sizeof *s->rbuf);
	s->proc_start = calloc(o->runs, sizeof *s->proc_start);
	s->proc_end = calloc(o->runs, sizeof *s->proc_end);
	if (!s->names || !s->name_ids || !s->sites || !s->run_factor || !s->kbuf || !s->rbuf ||
	    !s->proc_start || !s->proc_end)
		goto nomem;
	for (uint32_t i = 0; i < o->names; i++)
		if (!(s->names[i] = make_name(i)))
			goto nomem;
	for (uint32_t i = 0; i < k; i++) {
		struct site *st = &s->sites[i];
		uint32_t cfg = (uint32_t)(rnd(s) % 6);

		/* Each name appears at least once when k >= names; extra sites
		 * reuse names (same kernel, another call site). */
		st->name_idx = i < o->names ? i : (uint32_t)(rnd(s) % o->names);
		st->grid[0] = 1u << (4 + cfg);
		st->grid[1] = cfg % 3 + 1;
		st->grid[2] = 1;
		st->block[0] = cfg % 2 ? 128 : 256;
		st->block[1] = 1;
		st->block[2] = 1;
		st->regs = 32 + 8 * (uint32_t)(rnd(s) % 16);
		st->smem_static = cfg % 2 ? 0 : 16384;
		st->smem_dyn = cfg >= 4 ? 98304 : 0;
		st->stream = i % 7 == 6 ? 13 : 7;
		/* 2 us .. 3 ms, log-uniform */
		st->base_ns = exp(log(2000.0) + uniform(s) * (log(3e6) - log(2000.0)));
		st->slow = slow_factor(o, s->names[st->name_idx]);
		st->group = i / 4;
		if (o->machine_pct > 0)
			st->slow *= machine_factor(o, i, s->names[st->name_idx]);
		st->slow *= follow_factor(o, s->gpu, s->names[st->name_idx]);
	}
	*out = s;
	return 0;
nomem:
	kpt_synth_destroy(s);
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
}

static int intern(struct kpt_writer *w, const char *str, uint32_t *id, struct kpt_diag *d)
{
	return kpt_writer_intern_cstr(w, str, id, d);
}

int kpt_synth_begin(struct kpt_synth *s, struct kpt_writer *w, struct kpt_diag *d)
{
	const struct kpt_synth_opts *o = &s->o;
	char slug[256], uuid[64], num[32];
	struct kpt_device dev = { 0 };
	int rc;

	for (uint32_t i = 0; i < o->names; i++)
		if ((rc = intern(w, s->names[i], &s->name_ids[i], d)))
			return rc;
	for (uint32_t i = 0; i < o->kernels_per_iter; i++)
		s->sites[i].name = s->name_ids[s->sites[i].name_idx];
	for (size_t i = 0; i < sizeof range_names / sizeof *range_names; i++)
		if ((rc = intern(w, range_names[i], &s->range_name_ids[i], d)))
			return rc;
	if ((rc = intern(w, "kpt:iter", &s->iter_name, d)) ||
	    (rc = intern(w, "synth.workload", &s->workload_name, d)) ||
	    (rc = intern(w, "kpt", &s->domain, d)) || (rc = intern(w, o->command, &s->cmd, d)))
		return rc;
	kpt_slug(o->gpu, slug, sizeof slug);
	snprintf(uuid, sizeof uuid, "GPU-%08x-%04x-%04x-%04x-%012llx",
		 (unsigned)(o->seed * 2654435761u), (unsigned)(o->seed & 0xffff), 0x4a1bu, 0x9c3du,
		 (unsigned long long)(o->seed * 0x9e3779b97f4aull & 0xffffffffffffull));
	dev.index = 0;
	dev.name = o->gpu;
	dev.slug = slug;
	dev.uuid = uuid;
	dev.sm_count = s->gpu->sm_count;
	dev.cc_major = s->gpu->cc_major;
	dev.cc_minor = s->gpu->cc_minor;
	dev.mem_bytes = s->gpu->mem_bytes;
	dev.l2_bytes = s->gpu->l2_bytes;
	dev.sm_clock_max_mhz = s->gpu->sm_mhz;
	dev.mem_clock_max_mhz = s->gpu->mem_mhz;
	dev.mem_bus_width_bits = s->gpu->bus_bits;
	dev.driver_version = 13000;
	dev.runtime_version = 13000;
	dev.driver_string = "580.95.05";
	dev.copy_gbps = s->gpu->copy_gbps;
	dev.bf16_tflops = s->gpu->bf16_tflops;
	if ((rc = kpt_writer_device(w, &dev, d)))
		return rc;
	if ((rc = kpt_writer_meta(w, "tool_version", "kpt-synth 0.1.0", d)) ||
	    (rc = kpt_writer_meta(w, "command", o->command, d)) ||
	    (rc = kpt_writer_meta(w, "host", "synth-host", d)) ||
	    (rc = kpt_writer_meta(w, "time", "2026-11-21T00:00:00Z", d)) ||
	    (rc = kpt_writer_meta(w, "suite", o->suite, d)) ||
	    (rc = kpt_writer_meta(w, "workload", "synth.workload", d)) ||
	    (rc = kpt_writer_meta(w, "synthetic", "1", d)))
		return rc;
	snprintf(num, sizeof num, "%u", s->o.iterations);
	if ((rc = kpt_writer_meta(w, "iterations", num, d)))
		return rc;
	snprintf(num, sizeof num, "%u", o->runs);
	if ((rc = kpt_writer_meta(w, "runs", num, d)) ||
	    (rc = kpt_writer_meta(w, "warmup", "0", d)))
		return rc;
	for (int i = 0; i < o->nmeta; i++)
		if ((rc = kpt_writer_meta(w, o->meta[i].key, o->meta[i].value, d)))
			return rc;
	if (o->have_probes) {
		static const char *const keys[4] = { "calibration.copy_gbps", "calibration.bf16_tflops",
						     "calibration.fp8_tflops", "calibration.sm_mhz" };

		snprintf(num, sizeof num, "%u", o->runs);
		if ((rc = kpt_writer_meta(w, "calibration.where", o->probe_where, d)) ||
		    (rc = kpt_writer_meta(w, "calibration.runs", num, d)))
			return rc;
		for (int k = 0; k < 4; k++) {
			char v[64];

			if (!(o->probes[k] > 0))
				continue;
			snprintf(v, sizeof v, "%.1f", o->probes[k]);
			if ((rc = kpt_writer_meta(w, keys[k], v, d)))
				return rc;
		}
	}
	s->t = 1000000000ull * (1000 + o->seed % 1000);
	s->next_range = 1;
	return 0;
}

int kpt_synth_end(struct kpt_synth *s, struct kpt_writer *w, struct kpt_diag *d)
{
	for (uint32_t r = 0; r < s->o.runs; r++) {
		struct kpt_process p = {
			.index = r, .run = r, .pid = 40000 + 17 * r, .ppid = 39999,
			.rank = KPT_NONE, .exit_status = 0, .command = s->cmd,
			.start_ns = s->proc_start[r], .end_ns = s->proc_end[r],
		};
		int rc = kpt_writer_process(w, &p, d);

		if (rc)
			return rc;
	}
	return 0;
}

static void start_run(struct kpt_synth *s)
{
	double sigma = s->o.noise_pct / 100.0;

	for (uint32_t i = 0; i < s->o.kernels_per_iter; i++)
		s->run_factor[i] = exp(sigma * normal(s));
	s->proc_start[s->run] = s->t;
	s->t += 50000000;            /* process start-up */
	s->run_start = s->t;
	s->next_env = s->t;
	s->correlation = 1;
	s->workload_range = s->next_range++;
}

static int add_env(struct kpt_synth *s, uint64_t until)
{
	size_t n = 0;

	while (s->next_env < until) {
		struct kpt_env_sample *e;

		if (n == s->ecap) {
			size_t cap = s->ecap ? s->ecap * 2 : 64;
			void *p = realloc(s->ebuf, cap * sizeof *s->ebuf);

			if (!p)
				return -1;
			s->ebuf = p;
			s->ecap = cap;
		}
		e = &s->ebuf[n++];
		e->t_ns = s->next_env;
		e->device = 0;
		e->process = s->run;
		e->sm_mhz = s->gpu->sm_mhz - (uint32_t)(rnd(s) % 3) * 15;
		e->mem_mhz = s->gpu->mem_mhz;
		e->temp_c = 48 + (uint32_t)((s->next_env - s->run_start) / 1000000000ull) % 12 +
			    (uint32_t)(rnd(s) % 2);
		e->power_mw = s->gpu->power_mw + (uint32_t)(rnd(s) % 40000);
		e->throttle = 0;
		s->next_env += 10000000;
	}
	return (int)n;
}

int kpt_synth_step(struct kpt_synth *s, struct kpt_synth_batch *b)
{
	const struct kpt_synth_opts *o = &s->o;
	double within = o->within_pct / 100.0;
	uint32_t iter_range, site_range = KPT_NONE, group = UINT32_MAX, nr = 0;
	uint64_t iter_start, site_start = 0;
	size_t nk = 0;
	int ne;

	memset(b, 0, sizeof *b);
	if (s->done)
		return 0;
	if (s->iter == 0)
		start_run(s);
	iter_start = s->t;
	iter_range = s->next_range++;
	/* A host-to-device copy of the batch and a memset of the output. */
	s->mbuf[0] = (struct kpt_memop){
		.start_ns = s->t, .end_ns = s->t + 80000 + rnd(s) % 2000, .bytes = 4u << 20,
		.kind = KPT_MEMCPY_HTOD, .src_mem = KPT_MEM_PINNED, .dst_mem = KPT_MEM_DEVICE,
		.device = 0, .stream = 7, .process = s->run, .correlation = s->correlation++,
		.range = iter_range, .graph = KPT_NONE,
	};
	s->t = s->mbuf[0].end_ns + 3000;
	s->mbuf[1] = (struct kpt_memop){
		.start_ns = s->t, .end_ns = s->t + 1500 + rnd(s) % 200, .bytes = 1u << 20,
		.kind = KPT_MEMSET, .dst_mem = KPT_MEM_DEVICE, .device = 0, .stream = 7,
		.process = s->run, .correlation = s->correlation++, .range = iter_range,
		.graph = KPT_NONE,
	};
	s->t = s->mbuf[1].end_ns + 2000;
	for (uint32_t i = 0; i < o->kernels_per_iter; i++) {
		const struct site *st = &s->sites[i];
		struct kpt_kernel *k = &s->kbuf[nk];
		double dur = st->base_ns * st->slow * s->run_factor[i] * exp(within * normal(s));

		if (o->total_kernels && s->emitted >= o->total_kernels)
			break;
		if (st->group != group) {
			if (site_range != KPT_NONE)
				s->rbuf[nr++] = (struct kpt_range){
					.id = site_range, .parent = iter_range,
					.name = s->range_name_ids[group % (sizeof range_names / sizeof *range_names)],
					.domain = KPT_NONE, .kind = KPT_RANGE_PUSHPOP,
					.process = s->run, .thread = 40000 + 17 * s->run,
					.start_ns = site_start, .end_ns = s->t,
				};
			group = st->group;
			site_range = s->next_range++;
			site_start = s->t;
		}
		s->t += 1200 + rnd(s) % 3000;  /* launch gap */
		k->start_ns = s->t;
		k->end_ns = s->t + (uint64_t)(dur < 1000 ? 1000 : dur);
		k->name = st->name;
		k->device = 0;
		k->stream = st->stream;
		k->process = s->run;
		memcpy(k->grid, st->grid, sizeof k->grid);
		memcpy(k->block, st->block, sizeof k->block);
		k->registers = st->regs;
		k->shared_static = st->smem_static;
		k->shared_dynamic = st->smem_dyn;
		k->correlation = s->correlation++;
		k->range = site_range;
		k->graph = KPT_NONE;
		k->graph_node = 0;
		s->t = k->end_ns;
		s->emitted++;
		nk++;
	}
	if (site_range != KPT_NONE)
		s->rbuf[nr++] = (struct kpt_range){
			.id = site_range, .parent = iter_range,
			.name = s->range_name_ids[group % (sizeof range_names / sizeof *range_names)],
			.domain = KPT_NONE, .kind = KPT_RANGE_PUSHPOP, .process = s->run,
			.thread = 40000 + 17 * s->run, .start_ns = site_start, .end_ns = s->t,
		};
	s->t += 5000;
	s->rbuf[nr++] = (struct kpt_range){
		.id = iter_range, .parent = s->workload_range, .name = s->iter_name,
		.domain = s->domain, .kind = KPT_RANGE_PUSHPOP, .process = s->run,
		.thread = 40000 + 17 * s->run, .start_ns = iter_start, .end_ns = s->t,
	};
	ne = add_env(s, s->t);
	if (++s->iter == o->iterations || (o->total_kernels && s->emitted >= o->total_kernels)) {
		s->rbuf[nr++] = (struct kpt_range){
			.id = s->workload_range, .parent = KPT_NONE, .name = s->workload_name,
			.domain = s->domain, .kind = KPT_RANGE_PUSHPOP, .process = s->run,
			.thread = 40000 + 17 * s->run, .start_ns = s->run_start, .end_ns = s->t,
		};
		s->iter = 0;
		s->proc_end[s->run] = s->t + 1000000;
		s->t += 1000000;
		if (++s->run == o->runs || (o->total_kernels && s->emitted >= o->total_kernels))
			s->done = 1;
	}
	b->kernels = s->kbuf;
	b->nkernels = nk;
	b->ranges = s->rbuf;
	b->nranges = nr;
	b->memops = s->mbuf;
	b->nmemops = 2;
	b->env = s->ebuf;
	b->nenv = ne > 0 ? (size_t)ne : 0;
	return 1;
}

int kpt_synth_write(const struct kpt_synth_opts *o, const char *path, struct kpt_diag *d)
{
	struct kpt_synth *s = NULL;
	struct kpt_writer *w = NULL;
	struct kpt_synth_batch b;
	int rc;

	if ((rc = kpt_synth_create(o, &s, d)) || (rc = kpt_writer_create(path, NULL, &w, d)) ||
	    (rc = kpt_synth_begin(s, w, d)))
		goto out;
	while (kpt_synth_step(s, &b) > 0) {
		if ((rc = kpt_writer_kernels(w, b.kernels, b.nkernels, d)) ||
		    (rc = kpt_writer_ranges(w, b.ranges, b.nranges, d)) ||
		    (rc = kpt_writer_memops(w, b.memops, b.nmemops, d)) ||
		    (rc = kpt_writer_env(w, b.env, b.nenv, d)))
			goto out;
	}
	if (!(rc = kpt_synth_end(s, w, d)))
		rc = kpt_writer_commit(w, d);
out:
	kpt_writer_destroy(w);
	kpt_synth_destroy(s);
	return rc;
}
