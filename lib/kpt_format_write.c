/* kpt_format_write.c - the streaming .kpt writer (see kpt_format.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "kpt_format.h"
#include "kpt_format_int.h"
#include "kpt_grow.h"
#include "kpt_outfile.h"
#include "kpt_strtab.h"

/* Bulk record kinds, buffered one chunk each. */
enum bulk_kind { BK_KERNELS, BK_MEMOPS, BK_RANGES, BK_EVENTS, BK_ENV, BK_COUNTERS, BK_N };

static const uint32_t bulk_section[BK_N] = {
	[BK_KERNELS] = KPT_SEC_KERNELS, [BK_MEMOPS] = KPT_SEC_MEMOPS,
	[BK_RANGES] = KPT_SEC_RANGES, [BK_EVENTS] = KPT_SEC_EVENTS,
	[BK_ENV] = KPT_SEC_ENV, [BK_COUNTERS] = KPT_SEC_COUNTERS,
};

static const size_t bulk_stride[BK_N] = {
	[BK_KERNELS] = sizeof(struct kpt_kernel), [BK_MEMOPS] = sizeof(struct kpt_memop),
	[BK_RANGES] = sizeof(struct kpt_range), [BK_EVENTS] = sizeof(struct kpt_event),
	[BK_ENV] = sizeof(struct kpt_env_sample), [BK_COUNTERS] = sizeof(struct kpt_counter),
};

struct bulk {
	char *rows;                 /* KPT_CHUNK_ROWS * stride, allocated on first use */
	size_t n;
};

struct kpt_writer {
	char *path;
	struct kpt_out out;         /* kpt_outfile.h: the temporary, or a memory file for a stream */
	int fd;                     /* out.fd */
	int committed;
	struct kpt_diag fail;       /* first fatal error, repeated by later calls */
	uint64_t off;               /* where the next section goes */
	ZSTD_CCtx *cctx;
	struct kpt_strtab strs;
	struct kpt_meta_kv *meta;
	size_t nmeta, capmeta;
	struct kpt_device *devs;
	size_t ndevs, capdevs;
	struct kpt_process *procs;
	size_t nprocs, capprocs;
	struct kpt_drop *drops;
	size_t ndrops, capdrops;
	struct bulk bulk[BK_N];
	uint32_t next_range;        /* largest range id written + 1 */
	uint64_t need[KPT_CHK_MAX]; /* largest reference seen + 1, per check */
	struct kpt_buf raw, comp;
	struct kpt_disk_toc *toc;
	size_t ntoc, captoc;
	uint32_t *launch_slots;     /* kernel launch dictionary hash, 2 * chunk */
	uint32_t *launch_of;        /* launch index per row of the chunk */
	struct kpt_kernel *launches;
};

static int wfail(struct kpt_writer *w, struct kpt_diag *d, enum kpt_err code,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int wfail(struct kpt_writer *w, struct kpt_diag *d, enum kpt_err code,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kpt_diag_vset(&w->fail, code, fmt, ap);
	va_end(ap);
	if (d)
		*d = w->fail;
	return code;
}

static int nomem(struct kpt_writer *w, struct kpt_diag *d)
{
	return wfail(w, d, KPT_E_NOMEM, "cannot write '%s': out of memory", w->path);
}

/* Fails with the sticky error of an earlier call, if any. */
static int failed(const struct kpt_writer *w, struct kpt_diag *d)
{
	if (!w->fail.code && !w->committed)
		return 0;
	if (w->committed && !w->fail.code)
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write '%s': already committed", w->path);
	if (d)
		*d = w->fail;
	return w->fail.code;
}

int kpt_writer_create(const char *path, const struct kpt_writer_opts *opts,
		      struct kpt_writer **out, struct kpt_diag *d)
{
	struct kpt_writer *w;
	static const uint8_t zero[sizeof(struct kpt_disk_header)];
	int level = opts && opts->zstd_level ? opts->zstd_level : 3;

	*out = NULL;
	w = calloc(1, sizeof *w);
	if (!w)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
	w->fd = -1;
	kpt_strtab_init(&w->strs);
	w->out = (struct kpt_out){ .fd = -1, .dirfd = -1, .target = -1, .slot = -1 };
	w->path = strdup(path);
	w->cctx = ZSTD_createCCtx();
	if (!w->path || !w->cctx) {
		kpt_writer_destroy(w);
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	/* a regular file appears only complete (temporary + rename); a
	 * device or FIFO is written in place at commit (kpt_outfile.h) */
	if (kpt_out_open(path, KPT_OUT_SEEKABLE, &w->out, d) < 0) {
		int rc = d ? d->code : KPT_E_IO;

		kpt_writer_destroy(w);
		return rc;
	}
	w->fd = w->out.fd;
	if (pwrite(w->fd, zero, sizeof zero, 0) != (ssize_t)sizeof zero) {
		int e = errno;

		kpt_writer_destroy(w);
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(e));
	}
	w->off = sizeof zero;
	*out = w;
	return 0;
}

static void free_dev_strings(struct kpt_device *dev)
{
	free((char *)dev->name);
	free((char *)dev->slug);
	free((char *)dev->uuid);
	free((char *)dev->driver_string);
}

void kpt_writer_destroy(struct kpt_writer *w)
{
	if (!w)
		return;
	kpt_out_abandon(&w->out); /* committed: already closed */
	for (size_t i = 0; i < w->nmeta; i++) {
		free((char *)w->meta[i].key);
		free((char *)w->meta[i].value);
	}
	for (size_t i = 0; i < w->ndevs; i++)
		free_dev_strings(&w->devs[i]);
	free(w->meta);
	free(w->devs);
	free(w->procs);
	free(w->drops);
	for (int k = 0; k < BK_N; k++)
		free(w->bulk[k].rows);
	kpt_buf_free(&w->raw);
	kpt_buf_free(&w->comp);
	free(w->toc);
	free(w->launch_slots);
	free(w->launch_of);
	free(w->launches);
	ZSTD_freeCCtx(w->cctx);
	kpt_strtab_release(&w->strs);
	free(w->path);
	free(w);
}

static int write_all(struct kpt_writer *w, const void *buf, size_t n, uint64_t off,
		     struct kpt_diag *d)
{
	const char *p = buf;

	while (n) {
		ssize_t k = pwrite(w->fd, p, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return wfail(w, d, KPT_E_IO, "cannot write '%s': %s", w->path,
				     k < 0 ? strerror(errno) : "short write");
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Compresses w->raw and appends it as one section with a TOC entry. */
static int put_section(struct kpt_writer *w, uint32_t sec, uint64_t rows, struct kpt_diag *d)
{
	size_t bound = ZSTD_compressBound(w->raw.len), csize;
	struct kpt_disk_toc *e;
	int rc;

	if (w->raw.len > KPT_MAX_RAW_SECTION)
		return wfail(w, d, KPT_E_INVAL, "cannot write '%s': %s section of %zu bytes exceeds the format's limit",
			     w->path, kpt_sections[sec].name, w->raw.len);
	w->comp.len = 0;
	if (kpt_buf_reserve(&w->comp, bound))
		return nomem(w, d);
	csize = ZSTD_compress2(w->cctx, w->comp.p, bound, w->raw.p, w->raw.len);
	if (ZSTD_isError(csize))
		return wfail(w, d, KPT_E_IO, "cannot write '%s': zstd: %s", w->path,
			     ZSTD_getErrorName(csize));
	if (kpt_grow(&w->toc, &w->captoc, w->ntoc + 1, sizeof *w->toc))
		return nomem(w, d);
	rc = write_all(w, w->comp.p, csize, w->off, d);
	if (rc)
		return rc;
	e = &w->toc[w->ntoc++];
	memset(e, 0, sizeof *e);
	e->id = sec;
	e->codec = KPT_CODEC_ZSTD;
	e->offset = w->off;
	e->size = csize;
	e->raw_size = w->raw.len;
	e->rows = rows;
	w->off += csize;
	return 0;
}

static uint32_t launch_hash(const struct kpt_kernel *k)
{
	uint32_t v[10] = { k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0],
			   k->block[1], k->block[2], k->registers, k->shared_static,
			   k->shared_dynamic };
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 10; i++)
		h = (h ^ v[i]) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 32);
}

static int same_launch(const struct kpt_kernel *a, const struct kpt_kernel *b)
{
	return a->name == b->name && a->grid[0] == b->grid[0] && a->grid[1] == b->grid[1] &&
	       a->grid[2] == b->grid[2] && a->block[0] == b->block[0] &&
	       a->block[1] == b->block[1] && a->block[2] == b->block[2] &&
	       a->registers == b->registers && a->shared_static == b->shared_static &&
	       a->shared_dynamic == b->shared_dynamic;
}

/* Kernel chunk: varint launch count, launch dictionary columns, row columns
 * (the row's `name` field carries its launch index). */
static int flush_kernels(struct kpt_writer *w, struct kpt_diag *d)
{
	struct bulk *b = &w->bulk[BK_KERNELS];
	struct kpt_kernel *rows = (struct kpt_kernel *)b->rows;
	const uint32_t nslots = 2 * KPT_CHUNK_ROWS, mask = nslots - 1;
	uint32_t nl = 0;

	if (!w->launch_slots) {
		w->launch_slots = malloc(nslots * sizeof *w->launch_slots);
		w->launch_of = malloc(KPT_CHUNK_ROWS * sizeof *w->launch_of);
		w->launches = malloc(KPT_CHUNK_ROWS * sizeof *w->launches);
		if (!w->launch_slots || !w->launch_of || !w->launches)
			return nomem(w, d);
	}
	memset(w->launch_slots, 0, nslots * sizeof *w->launch_slots);
	for (size_t i = 0; i < b->n; i++) {
		uint32_t s = launch_hash(&rows[i]) & mask;

		for (;;) {
			uint32_t v = w->launch_slots[s];

			if (!v) {
				w->launches[nl] = rows[i];
				w->launch_slots[s] = ++nl;
				w->launch_of[i] = nl - 1;
				break;
			}
			if (same_launch(&w->launches[v - 1], &rows[i])) {
				w->launch_of[i] = v - 1;
				break;
			}
			s = (s + 1) & mask;
		}
	}
	for (size_t i = 0; i < b->n; i++)
		rows[i].name = w->launch_of[i];
	w->raw.len = 0;
	if (kpt_buf_reserve(&w->raw, 10))
		return nomem(w, d);
	w->raw.len += kpt_put_varint(w->raw.p, nl);
	if (kpt_cols_encode(&kpt_kernel_launch_tab, w->launches, nl, &w->raw) ||
	    kpt_cols_encode(&kpt_kernel_row_tab, rows, b->n, &w->raw))
		return nomem(w, d);
	return put_section(w, KPT_SEC_KERNELS, b->n, d);
}

static int flush_bulk(struct kpt_writer *w, int k, struct kpt_diag *d)
{
	struct bulk *b = &w->bulk[k];
	int rc;

	if (!b->n)
		return 0;
	if (k == BK_KERNELS) {
		rc = flush_kernels(w, d);
	} else {
		w->raw.len = 0;
		if (kpt_cols_encode(kpt_sections[bulk_section[k]].tab, b->rows, b->n, &w->raw))
			return nomem(w, d);
		rc = put_section(w, bulk_section[k], b->n, d);
	}
	b->n = 0;
	return rc;
}

/* Records the largest reference of each checked column of rows, so commit
 * can reject ids that were never handed out. */
static void note_refs(struct kpt_writer *w, const struct kpt_coltab *t, const void *rows,
		      size_t n)
{
	for (int c = 0; c < t->ncols; c++) {
		const struct kpt_col *col = &t->cols[c];
		uint64_t need = w->need[col->chk];

		if (col->chk == KPT_CHK_ANY || col->chk == KPT_CHK_LAUNCH)
			continue;
		for (size_t i = 0; i < n; i++) {
			uint32_t v;

			memcpy(&v, (const char *)rows + i * t->stride + col->off, sizeof v);
			if (v == KPT_NONE && (col->chk == KPT_CHK_STR || col->chk == KPT_CHK_DEV_OPT))
				continue;
			if ((uint64_t)v + 1 > need)
				need = (uint64_t)v + 1;
		}
		w->need[col->chk] = need;
	}
}

static int add_bulk(struct kpt_writer *w, int k, const void *rows, size_t n,
		    struct kpt_diag *d)
{
	struct bulk *b = &w->bulk[k];
	size_t stride = bulk_stride[k];
	int rc = failed(w, d);

	if (rc)
		return rc;
	if (k == BK_KERNELS) {
		note_refs(w, &kpt_kernel_launch_tab, rows, n);
		note_refs(w, &kpt_kernel_row_tab, rows, n);
	} else {
		note_refs(w, kpt_sections[bulk_section[k]].tab, rows, n);
	}
	if (!b->rows) {
		b->rows = malloc(KPT_CHUNK_ROWS * stride);
		if (!b->rows)
			return nomem(w, d);
	}
	while (n) {
		size_t take = KPT_CHUNK_ROWS - b->n;

		if (take > n)
			take = n;
		memcpy(b->rows + b->n * stride, rows, take * stride);
		b->n += take;
		rows = (const char *)rows + take * stride;
		n -= take;
		if (b->n == KPT_CHUNK_ROWS && (rc = flush_bulk(w, k, d)))
			return rc;
	}
	return 0;
}

int kpt_writer_kernels(struct kpt_writer *w, const struct kpt_kernel *rows, size_t n,
		       struct kpt_diag *d)
{
	return add_bulk(w, BK_KERNELS, rows, n, d);
}

int kpt_writer_memops(struct kpt_writer *w, const struct kpt_memop *rows, size_t n,
		      struct kpt_diag *d)
{
	return add_bulk(w, BK_MEMOPS, rows, n, d);
}

int kpt_writer_ranges(struct kpt_writer *w, const struct kpt_range *rows, size_t n,
		      struct kpt_diag *d)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].id != KPT_NONE && rows[i].id >= w->next_range)
			w->next_range = rows[i].id + 1;
	return add_bulk(w, BK_RANGES, rows, n, d);
}

int kpt_writer_events(struct kpt_writer *w, const struct kpt_event *rows, size_t n,
		      struct kpt_diag *d)
{
	return add_bulk(w, BK_EVENTS, rows, n, d);
}

int kpt_writer_env(struct kpt_writer *w, const struct kpt_env_sample *rows, size_t n,
		   struct kpt_diag *d)
{
	return add_bulk(w, BK_ENV, rows, n, d);
}

int kpt_writer_counters(struct kpt_writer *w, const struct kpt_counter *rows, size_t n,
			struct kpt_diag *d)
{
	return add_bulk(w, BK_COUNTERS, rows, n, d);
}

int kpt_writer_intern(struct kpt_writer *w, const char *s, size_t len, uint32_t *id,
		      struct kpt_diag *d)
{
	int rc = failed(w, d);

	if (rc)
		return rc;
	rc = kpt_strtab_intern(&w->strs, s, len, id);
	if (rc == KPT_E_NOMEM)
		return nomem(w, d);
	if (rc)
		return kpt_diag_set(d, rc, "cannot store string '%.*s%s' in '%s': it holds a NUL byte, is longer than %zu bytes, or the table is full",
				    (int)(len > 40 ? 40 : len), s, len > 40 ? "..." : "", w->path,
				    KPT_STRTAB_MAX_LEN);
	return 0;
}

int kpt_writer_intern_cstr(struct kpt_writer *w, const char *s, uint32_t *id,
			   struct kpt_diag *d)
{
	return kpt_writer_intern(w, s, strlen(s), id, d);
}

int kpt_writer_meta(struct kpt_writer *w, const char *key, const char *value,
		    struct kpt_diag *d)
{
	char *k, *v;
	int rc = failed(w, d);

	if (rc)
		return rc;
	v = strdup(value ? value : "");
	if (!v)
		return nomem(w, d);
	for (size_t i = 0; i < w->nmeta; i++) {
		if (strcmp(w->meta[i].key, key) == 0) {
			free((char *)w->meta[i].value);
			w->meta[i].value = v;
			return 0;
		}
	}
	k = strdup(key);
	if (!k || kpt_grow(&w->meta, &w->capmeta, w->nmeta + 1, sizeof *w->meta)) {
		free(k);
		free(v);
		return nomem(w, d);
	}
	w->meta[w->nmeta].key = k;
	w->meta[w->nmeta].value = v;
	w->nmeta++;
	return 0;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int kpt_writer_device(struct kpt_writer *w, const struct kpt_device *dev, struct kpt_diag *d)
{
	struct kpt_device *c;
	int rc = failed(w, d);

	if (rc)
		return rc;
	if (dev->index != w->ndevs)
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write '%s': device index %u given, %zu expected",
				    w->path, dev->index, w->ndevs);
	if (kpt_grow(&w->devs, &w->capdevs, w->ndevs + 1, sizeof *w->devs))
		return nomem(w, d);
	c = &w->devs[w->ndevs];
	*c = *dev;
	c->name = dup_or_empty(dev->name);
	c->slug = dup_or_empty(dev->slug);
	c->uuid = dup_or_empty(dev->uuid);
	c->driver_string = dup_or_empty(dev->driver_string);
	if (!c->name || !c->slug || !c->uuid || !c->driver_string) {
		free_dev_strings(c);
		return nomem(w, d);
	}
	w->ndevs++;
	return 0;
}

int kpt_writer_process(struct kpt_writer *w, const struct kpt_process *p, struct kpt_diag *d)
{
	int rc = failed(w, d);

	if (rc)
		return rc;
	if (p->index != w->nprocs)
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write '%s': process index %u given, %zu expected",
				    w->path, p->index, w->nprocs);
	if (kpt_grow(&w->procs, &w->capprocs, w->nprocs + 1, sizeof *w->procs))
		return nomem(w, d);
	note_refs(w, kpt_sections[KPT_SEC_PROCESSES].tab, p, 1);
	w->procs[w->nprocs++] = *p;
	return 0;
}

int kpt_writer_drop(struct kpt_writer *w, const struct kpt_drop *drop, struct kpt_diag *d)
{
	int rc = failed(w, d);

	if (rc)
		return rc;
	if (kpt_grow(&w->drops, &w->capdrops, w->ndrops + 1, sizeof *w->drops))
		return nomem(w, d);
	note_refs(w, kpt_sections[KPT_SEC_DROPS].tab, drop, 1);
	w->drops[w->ndrops++] = *drop;
	return 0;
}

/* Strings: sections of at most KPT_CHUNK_ROWS strings and about
 * KPT_STRINGS_CHUNK_BYTES of text: a lengths column, then the bytes. */
static int put_strings(struct kpt_writer *w, struct kpt_diag *d)
{
	uint32_t count = kpt_strtab_count(&w->strs);
	uint32_t first = 0;

	while (first < count) {
		uint32_t last = first;
		size_t bytes = 0;
		int rc;

		while (last < count && last - first < KPT_CHUNK_ROWS &&
		       (last == first || bytes + w->strs.len[last] <= KPT_STRINGS_CHUNK_BYTES))
			bytes += w->strs.len[last++];
		w->raw.len = 0;
		if (kpt_buf_reserve(&w->raw, (size_t)(last - first) * 5 + bytes))
			return nomem(w, d);
		for (uint32_t i = first; i < last; i++)
			w->raw.len += kpt_put_varint(w->raw.p + w->raw.len, w->strs.len[i]);
		for (uint32_t i = first; i < last; i++) {
			memcpy(w->raw.p + w->raw.len, w->strs.str[i], w->strs.len[i]);
			w->raw.len += w->strs.len[i];
		}
		rc = put_section(w, KPT_SEC_STRINGS, last - first, d);
		if (rc)
			return rc;
		first = last;
	}
	return 0;
}

/* A small table as sections of at most KPT_CHUNK_ROWS rows. */
static int put_table(struct kpt_writer *w, uint32_t sec, const void *rows, size_t n,
		     struct kpt_diag *d)
{
	const struct kpt_coltab *t = kpt_sections[sec].tab;

	for (size_t first = 0; first < n; first += KPT_CHUNK_ROWS) {
		size_t k = n - first < KPT_CHUNK_ROWS ? n - first : KPT_CHUNK_ROWS;
		int rc;

		w->raw.len = 0;
		if (kpt_cols_encode(t, (const char *)rows + first * t->stride, k, &w->raw))
			return nomem(w, d);
		rc = put_section(w, sec, k, d);
		if (rc)
			return rc;
	}
	return 0;
}

static const char *const chk_what[KPT_CHK_MAX] = {
	[KPT_CHK_STR] = "string", [KPT_CHK_DEV] = "device", [KPT_CHK_DEV_OPT] = "device",
	[KPT_CHK_PROC] = "process",
};

static int check_refs(struct kpt_writer *w, struct kpt_diag *d)
{
	uint64_t have[KPT_CHK_MAX] = {
		[KPT_CHK_STR] = kpt_strtab_count(&w->strs),
		[KPT_CHK_DEV] = w->ndevs, [KPT_CHK_DEV_OPT] = w->ndevs,
		[KPT_CHK_PROC] = w->nprocs,
	};

	for (int c = KPT_CHK_STR; c < KPT_CHK_MAX; c++)
		if (chk_what[c] && w->need[c] > have[c])
			return wfail(w, d, KPT_E_INVAL,
				     "cannot write '%s': a record refers to %s %llu but only %llu were written",
				     w->path, chk_what[c], (unsigned long long)w->need[c] - 1,
				     (unsigned long long)have[c]);
	return 0;
}

int kpt_writer_commit(struct kpt_writer *w, struct kpt_diag *d)
{
	struct kpt_disk_header h;
	size_t toc_bytes;
	int rc = failed(w, d);

	if (rc)
		return rc;
	if ((rc = check_refs(w, d)))
		return rc;
	for (int k = 0; k < BK_N; k++)
		if ((rc = flush_bulk(w, k, d)))
			return rc;
	if ((rc = put_strings(w, d)) ||
	    (rc = put_table(w, KPT_SEC_META, w->meta, w->nmeta, d)) ||
	    (rc = put_table(w, KPT_SEC_DEVICES, w->devs, w->ndevs, d)) ||
	    (rc = put_table(w, KPT_SEC_PROCESSES, w->procs, w->nprocs, d)) ||
	    (rc = put_table(w, KPT_SEC_DROPS, w->drops, w->ndrops, d)))
		return rc;
	/* The TOC starts 8-aligned, so a reader may map it in place. */
	if (w->off % 8) {
		static const uint8_t pad[8];
		size_t k = 8 - w->off % 8;

		if ((rc = write_all(w, pad, k, w->off, d)))
			return rc;
		w->off += k;
	}
	toc_bytes = w->ntoc * sizeof *w->toc;
	if (toc_bytes && (rc = write_all(w, w->toc, toc_bytes, w->off, d)))
		return rc;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, KPT_MAGIC, KPT_MAGIC_LEN);
	h.major = KPT_FORMAT_MAJOR;
	h.minor = KPT_FORMAT_MINOR;
	h.header_size = sizeof h;
	h.toc_offset = w->off;
	h.toc_count = (uint32_t)w->ntoc;
	h.toc_entry_size = sizeof(struct kpt_disk_toc);
	h.file_size = w->off + toc_bytes;
	if ((rc = write_all(w, &h, sizeof h, 0, d)))
		return rc;
	w->fd = -1;
	if ((rc = kpt_out_close(&w->out, 1, &w->fail)) < 0) {
		if (d)
			*d = w->fail;
		return rc;
	}
	w->committed = 1;
	return 0;
}

/* ---- internal, for kpt_file_copy_into --------------------------------- */

uint32_t kpt_writer_ndevices_(const struct kpt_writer *w)
{
	return (uint32_t)w->ndevs;
}

const struct kpt_device *kpt_writer_device_at_(const struct kpt_writer *w, uint32_t i)
{
	return i < w->ndevs ? &w->devs[i] : NULL;
}

uint32_t kpt_writer_nprocesses_(const struct kpt_writer *w)
{
	return (uint32_t)w->nprocs;
}

uint32_t kpt_writer_next_range_(const struct kpt_writer *w)
{
	return w->next_range;
}
