/* check_collector.c - reads a recording made by `kptprof record` and checks
 * it against what the recorded program is known to have done.
 *
 *   kpt-collector-check app FILE        collector_app.cu's recording, exactly
 *   kpt-collector-check names FILE      demangled kernel names, one a line
 *   kpt-collector-check range FILE NAME ranges named NAME and the kernels
 *                                       whose innermost range is one of them
 *   kpt-collector-check stats FILE      kernels, memops, ranges, drops, env
 *   kpt-collector-check meta FILE KEY   the value of a meta key ("" if absent)
 *   kpt-collector-check ranges FILE     every range: kind, closed|open, domain
 *                                       ("-" default), name; one a line
 *
 * Exit status: 0 all checks passed, 1 a check failed (each failure printed
 * as "FAIL: ..."), 2 the file cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_demangle.h"
#include "kpt_format.h"

static int failures;

#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			printf("FAIL: " __VA_ARGS__);     \
			printf("  [%s]\n", #cond);        \
			failures++;                       \
		}                                         \
	} while (0)

struct rec {
	struct kpt_file *f;
	struct kpt_kernel *k;
	size_t nk;
	const struct kpt_memop *m;
	size_t nm;
	const struct kpt_range *r;
	size_t nr;
	const struct kpt_process *p;
	size_t np;
	const struct kpt_device *dev;
	size_t ndev;
	const struct kpt_env_sample *env;
	size_t nenv;
	const struct kpt_drop *drops;
	size_t ndrops;
	struct kpt_counts c;
};

static int load(const char *path, struct rec *x)
{
	struct kpt_diag d;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	size_t n;
	int rc;

	memset(x, 0, sizeof *x);
	if (kpt_file_open(path, &x->f, &d) < 0 || kpt_file_counts(x->f, &x->c, &d) < 0 ||
	    kpt_file_load_strings(x->f, &d) < 0 || kpt_file_memops(x->f, &x->m, &x->nm, &d) < 0 ||
	    kpt_file_ranges(x->f, &x->r, &x->nr, &d) < 0 || kpt_file_processes(x->f, &x->p, &x->np, &d) < 0 ||
	    kpt_file_devices(x->f, &x->dev, &x->ndev, &d) < 0 || kpt_file_env(x->f, &x->env, &x->nenv, &d) < 0 ||
	    kpt_file_drops(x->f, &x->drops, &x->ndrops, &d) < 0 || kpt_kernel_cursor_create(x->f, &cur, &d) < 0) {
		fprintf(stderr, "kpt-collector-check: %s\n", d.msg);
		return -1;
	}
	while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, &d)) > 0) {
		x->k = realloc(x->k, (x->nk + n) * sizeof *x->k);
		memcpy(x->k + x->nk, rows, n * sizeof *rows);
		x->nk += n;
	}
	kpt_kernel_cursor_destroy(cur);
	if (rc < 0) {
		fprintf(stderr, "kpt-collector-check: %s\n", d.msg);
		return -1;
	}
	return 0;
}

static const char *kname(const struct rec *x, const struct kpt_kernel *k)
{
	return kpt_file_string(x->f, k->name);
}

/* Kernels whose (mangled) name contains sub. */
static size_t kernels_named(const struct rec *x, const char *sub, const struct kpt_kernel **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < x->nk; i++)
		if (strstr(kname(x, &x->k[i]), sub)) {
			if (n < cap)
				out[n] = &x->k[i];
			n++;
		}
	return n;
}

static const struct kpt_range *range_named(const struct rec *x, const char *name)
{
	for (size_t i = 0; i < x->nr; i++)
		if (strcmp(kpt_file_string(x->f, x->r[i].name), name) == 0)
			return &x->r[i];
	return NULL;
}

static void check_group(const struct rec *x, const char *name, size_t count, uint32_t gx, uint32_t gy,
			uint32_t bx, uint32_t by, uint32_t dyn, const struct kpt_range *range,
			uint32_t *stream_out)
{
	const struct kpt_kernel *k[16];
	size_t n = kernels_named(x, name, k, 16);

	CHECK(n == count, "%s: %zu kernels, want %zu\n", name, n, count);
	for (size_t i = 0; i < n && i < 16; i++) {
		CHECK(k[i]->grid[0] == gx && k[i]->grid[1] == gy && k[i]->grid[2] == 1,
		      "%s: grid %u,%u,%u\n", name, k[i]->grid[0], k[i]->grid[1], k[i]->grid[2]);
		CHECK(k[i]->block[0] == bx && k[i]->block[1] == by && k[i]->block[2] == 1,
		      "%s: block %u,%u,%u\n", name, k[i]->block[0], k[i]->block[1], k[i]->block[2]);
		CHECK(k[i]->shared_dynamic == dyn, "%s: dynamic shared %u, want %u\n", name, k[i]->shared_dynamic, dyn);
		CHECK(k[i]->end_ns > k[i]->start_ns, "%s: end %" PRIu64 " <= start %" PRIu64 "\n", name,
		      k[i]->end_ns, k[i]->start_ns);
		CHECK(k[i]->registers > 0, "%s: 0 registers\n", name);
		CHECK(k[i]->stream == k[0]->stream, "%s: streams differ (%u vs %u)\n", name, k[i]->stream,
		      k[0]->stream);
		CHECK(k[i]->range == (range ? range->id : KPT_NONE), "%s: range %u, want %u\n", name,
		      k[i]->range, range ? range->id : KPT_NONE);
		CHECK(k[i]->device == 0, "%s: device %u\n", name, k[i]->device);
	}
	*stream_out = n ? k[0]->stream : KPT_NONE;
}

static int check_app(const struct rec *x)
{
	const struct kpt_range *outer = range_named(x, "outer"), *inner = range_named(x, "inner");
	const struct kpt_range *dom = range_named(x, "dom_range"), *mark = range_named(x, "mark1");
	const struct kpt_range *child = range_named(x, "child_range"), *forked = range_named(x, "forked_nvtx");
	const struct kpt_kernel *g[8];
	uint32_t s_add, s_scale, s_empty, s_ga, s_gb, s_child;
	size_t n;
	int htod = 0, dtoh = 0, mset = 0;
	uint32_t parent_pid = 0;

	CHECK(outer && inner && dom && mark && child, "a range is missing (outer %p inner %p dom %p mark %p child %p)\n",
	      (void *)outer, (void *)inner, (void *)dom, (void *)mark, (void *)child);
	if (!outer || !inner || !dom || !mark || !child)
		return 1;
	CHECK(inner->parent == outer->id, "inner's parent %u, want outer %u\n", inner->parent, outer->id);
	CHECK(outer->parent == KPT_NONE, "outer's parent %u\n", outer->parent);
	CHECK(inner->start_ns > outer->start_ns && inner->end_ns < outer->end_ns, "inner not inside outer\n");
	CHECK(inner->kind == KPT_RANGE_PUSHPOP && outer->kind == KPT_RANGE_PUSHPOP, "push/pop kinds\n");
	CHECK(mark->kind == KPT_RANGE_MARK && mark->start_ns == mark->end_ns, "mark kind/time\n");
	CHECK(strcmp(kpt_file_string(x->f, dom->domain), "kptdom") == 0, "dom_range domain '%s'\n",
	      kpt_file_string(x->f, dom->domain));
	CHECK(outer->domain == KPT_NONE, "outer has domain %u\n", outer->domain);
	CHECK(outer->thread == inner->thread && outer->thread != 0, "range threads\n");

	check_group(x, "kpt_t_add", 3, 64, 1, 128, 1, 0, inner, &s_add);
	check_group(x, "kpt_t_scale", 2, 2, 3, 32, 4, 1024, outer, &s_scale);
	check_group(x, "kpt_t_empty", 5, 1, 1, 1, 1, 0, NULL, &s_empty);
	check_group(x, "kpt_t_graph_a", 3, 4, 1, 64, 1, 0, dom, &s_ga);
	check_group(x, "kpt_t_graph_b", 3, 8, 1, 32, 1, 0, dom, &s_gb);
	check_group(x, "kpt_t_child", 1, 1, 1, 32, 1, 0, child, &s_child);
	CHECK(s_add != s_scale && s_add != s_empty && s_scale != s_empty && s_ga != s_add && s_ga != s_scale,
	      "streams not distinct: add %u scale %u empty %u graph %u\n", s_add, s_scale, s_empty, s_ga);
	CHECK(s_ga == s_gb, "graph kernels on streams %u and %u\n", s_ga, s_gb);
	CHECK(x->nk == 17, "%zu kernels in all, want 17\n", x->nk);

	n = kernels_named(x, "kpt_t_graph", g, 8);
	for (size_t i = 0; i < n && i < 8; i++) {
		CHECK(g[i]->graph != KPT_NONE && g[i]->graph_node != 0, "graph kernel without graph/node ids\n");
		CHECK(g[i]->graph == g[0]->graph, "graph ids differ\n");
	}
	for (size_t i = 0; i + 1 < n && i < 7; i++)
		for (size_t j = i + 1; j < n && j < 8; j++) {
			int same_name = strcmp(kname(x, g[i]), kname(x, g[j])) == 0;

			CHECK(same_name == (g[i]->graph_node == g[j]->graph_node),
			      "graph node ids do not follow the nodes (%" PRIu64 ", %" PRIu64 ")\n",
			      g[i]->graph_node, g[j]->graph_node);
		}
	{
		const struct kpt_kernel *e[8];

		kernels_named(x, "kpt_t_empty", e, 8);
		CHECK(e[0]->graph == KPT_NONE && e[0]->graph_node == 0, "non-graph kernel has graph ids\n");
	}

	for (size_t i = 0; i < x->nm; i++) {
		const struct kpt_memop *m = &x->m[i];

		if (m->kind == KPT_MEMCPY_HTOD && m->bytes == (1u << 20)) {
			htod++;
			CHECK(m->src_mem == KPT_MEM_PINNED && m->dst_mem == KPT_MEM_DEVICE, "HtoD memory kinds %u->%u\n",
			      m->src_mem, m->dst_mem);
			CHECK(m->stream == s_add, "HtoD on stream %u, want %u\n", m->stream, s_add);
			CHECK(m->range == outer->id, "HtoD range %u, want outer %u\n", m->range, outer->id);
		} else if (m->kind == KPT_MEMCPY_DTOH && m->bytes == 4096) {
			dtoh++;
			CHECK(m->dst_mem == KPT_MEM_PAGEABLE, "DtoH destination kind %u\n", m->dst_mem);
			CHECK(m->range == KPT_NONE, "DtoH range %u\n", m->range);
		} else if (m->kind == KPT_MEMSET) {
			mset++;
			CHECK(m->bytes == 65536 && m->value == 0x5a, "memset %" PRIu64 " bytes value %u\n", m->bytes,
			      m->value);
			CHECK(m->stream == s_add, "memset on stream %u\n", m->stream);
		}
	}
	CHECK(htod == 1 && dtoh == 1 && mset == 1, "memops: HtoD %d DtoH %d memset %d (of %zu), want 1 each\n",
	      htod, dtoh, mset, x->nm);

	CHECK(x->np == 3, "%zu processes, want 3 (app, exec'd child, forked child)\n", x->np);
	for (size_t i = 0; i < x->np; i++)
		if (x->p[i].index == outer->process)
			parent_pid = x->p[i].pid;
	for (size_t i = 0; i < x->np; i++) {
		CHECK(x->p[i].run == 0, "process %zu run %u\n", i, x->p[i].run);
		CHECK(x->p[i].end_ns >= x->p[i].start_ns, "process %zu times\n", i);
		if (x->p[i].pid != parent_pid)
			CHECK(x->p[i].ppid == parent_pid, "process %u: ppid %u, want %u\n", x->p[i].pid, x->p[i].ppid,
			      parent_pid);
	}
	CHECK(child->process != outer->process, "child_range recorded in the parent's process\n");
	CHECK(forked && forked->process != outer->process && forked->process != child->process,
	      "forked child's range 'forked_nvtx' missing or in the wrong process\n");

	CHECK(x->ndev == 1, "%zu devices, want 1\n", x->ndev);
	if (x->ndev) {
		const struct kpt_device *dv = &x->dev[0];

		CHECK(dv->name && dv->name[0] && dv->sm_count > 0 && dv->cc_major >= 7 && dv->mem_bytes > 0 &&
		      dv->l2_bytes > 0 && dv->sm_clock_max_mhz > 0 && dv->driver_version >= 12000,
		      "device properties incomplete\n");
		CHECK(dv->uuid && strncmp(dv->uuid, "GPU-", 4) == 0, "device uuid '%s'\n", dv->uuid ? dv->uuid : "");
		CHECK(dv->slug && dv->slug[0], "device slug empty\n");
		printf("device: %s (%s) %u SMs cc %u.%u, %" PRIu64 " MB, L2 %" PRIu64 " KB, %u MHz, driver %u %s\n",
		       dv->name, dv->slug, dv->sm_count, dv->cc_major, dv->cc_minor, dv->mem_bytes >> 20,
		       dv->l2_bytes >> 10, dv->sm_clock_max_mhz, dv->driver_version,
		       dv->driver_string ? dv->driver_string : "");
	}
	CHECK(x->nenv >= 10, "%zu env samples, want >= 10 (10 ms over 300+ ms)\n", x->nenv);
	for (size_t i = 0; i < x->nenv && i < 1; i++)
		CHECK(x->env[i].sm_mhz > 0 && x->env[i].mem_mhz > 0 && x->env[i].power_mw > 0 && x->env[i].temp_c > 0,
		      "env sample has zero fields (sm %u mem %u power %u temp %u)\n", x->env[i].sm_mhz,
		      x->env[i].mem_mhz, x->env[i].power_mw, x->env[i].temp_c);
	CHECK(x->c.dropped_records == 0, "%" PRIu64 " records dropped\n", x->c.dropped_records);
	printf("app: %zu kernels, %zu memops, %zu ranges, %zu processes, %zu env samples: %s\n", x->nk, x->nm,
	       x->nr, x->np, x->nenv, failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

static int print_names(const struct rec *x)
{
	for (size_t i = 0; i < x->nk; i++) {
		const char *raw = kname(x, &x->k[i]);
		char *dm = kpt_demangle(raw);

		printf("%s\n", dm ? dm : raw);
		free(dm);
	}
	return 0;
}

static int print_range(const struct rec *x, const char *name)
{
	size_t nr = 0, nk = 0;

	for (size_t i = 0; i < x->nr; i++)
		if (strcmp(kpt_file_string(x->f, x->r[i].name), name) == 0)
			nr++;
	for (size_t i = 0; i < x->nk; i++)
		if (x->k[i].range != KPT_NONE)
			for (size_t j = 0; j < x->nr; j++)
				if (x->r[j].id == x->k[i].range &&
				    strcmp(kpt_file_string(x->f, x->r[j].name), name) == 0) {
					nk++;
					break;
				}
	printf("ranges %zu kernels %zu\n", nr, nk);
	return 0;
}

static int print_ranges(const struct rec *x)
{
	static const char *const kinds[] = {
		[KPT_RANGE_PUSHPOP] = "pushpop", [KPT_RANGE_STARTEND] = "startend", [KPT_RANGE_MARK] = "mark",
	};

	for (size_t i = 0; i < x->nr; i++) {
		const struct kpt_range *r = &x->r[i];

		printf("%s %s %s %s\n", r->kind < 4 && kinds[r->kind] ? kinds[r->kind] : "?",
		       r->end_ns ? "closed" : "open",
		       r->domain == KPT_NONE ? "-" : kpt_file_string(x->f, r->domain),
		       kpt_file_string(x->f, r->name));
	}
	return 0;
}

static int print_stats(const struct rec *x)
{
	uint64_t first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < x->nk; i++) {
		if (x->k[i].start_ns < first)
			first = x->k[i].start_ns;
		if (x->k[i].end_ns > last)
			last = x->k[i].end_ns;
	}
	printf("kernels %zu memops %zu ranges %zu processes %zu runs %u events %" PRIu64 " env %zu dropped %" PRIu64
	       " span_s %.3f\n", x->nk, x->nm, x->nr, x->np, x->c.runs, x->c.events, x->nenv, x->c.dropped_records,
	       x->nk ? (double)(last - first) / 1e9 : 0.0);
	return 0;
}

static void unload(struct rec *x)
{
	free(x->k);
	kpt_file_close(x->f);
}

int main(int argc, char **argv)
{
	struct rec x;
	int rc = 2;

	if (argc < 3 || ((strcmp(argv[1], "range") == 0 || strcmp(argv[1], "meta") == 0) && argc < 4)) {
		fprintf(stderr, "usage: kpt-collector-check app|names|ranges|stats FILE | range|meta FILE NAME\n");
		return 2;
	}
	if (load(argv[2], &x) < 0) {
		unload(&x);
		return 2;
	}
	if (strcmp(argv[1], "app") == 0)
		rc = check_app(&x);
	else if (strcmp(argv[1], "names") == 0)
		rc = print_names(&x);
	else if (strcmp(argv[1], "range") == 0)
		rc = print_range(&x, argv[3]);
	else if (strcmp(argv[1], "stats") == 0)
		rc = print_stats(&x);
	else if (strcmp(argv[1], "ranges") == 0)
		rc = print_ranges(&x);
	else if (strcmp(argv[1], "meta") == 0) {
		const char *v = kpt_file_meta_get(x.f, argv[3]);

		printf("%s\n", v ? v : "");
		rc = 0;
	}
	else
		fprintf(stderr, "kpt-collector-check: unknown mode '%s'\n", argv[1]);
	unload(&x);
	return rc;
}
