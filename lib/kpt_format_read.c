/* kpt_format_read.c - the .kpt reader (see kpt_format.h, docs/format.md).
 *
 * Every size, offset and count read from the file is checked before it is
 * used to allocate or index: open validates the header and TOC; a section is
 * validated when it is loaded (zstd frame size and checksum, varints inside
 * the section, references against the table sizes the TOC promises).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "kpt_format.h"
#include "kpt_format_int.h"
#include "kpt_progress.h"

struct kpt_file {
	char *path;
	int fd;                     /* -1 for files opened in memory */
	const uint8_t *mem;
	uint64_t size;
	uint32_t major, minor;
	struct kpt_disk_toc *toc;   /* known section ids only */
	uint32_t ntoc;
	uint64_t rows[KPT_SEC_MAX + 1];
	struct kpt_limits lim;
	struct kpt_arena arena;
	ZSTD_DCtx *dctx;
	struct kpt_buf cbuf, rbuf;
	const char **strs;
	uint32_t nstrs;
	int strings_loaded;
	void *table[KPT_SEC_MAX + 1];
	int table_loaded[KPT_SEC_MAX + 1];
};

struct kpt_kernel_cursor {
	struct kpt_file *f;
	uint32_t next;              /* next TOC index to look at */
	ZSTD_DCtx *dctx;
	struct kpt_buf cbuf, rbuf;
	struct kpt_kernel *rows;
	struct kpt_kernel *launches;
};

static int ferr(const struct kpt_file *f, struct kpt_diag *d, enum kpt_err code,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "cannot read 'PATH': <fmt>" */
static int ferr(const struct kpt_file *f, struct kpt_diag *d, enum kpt_err code,
		const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return kpt_diag_set(d, code, "cannot read '%s': %s", f->path, what);
}

static int read_at(struct kpt_file *f, void *buf, size_t n, uint64_t off, struct kpt_diag *d)
{
	char *p = buf;

	if (f->mem) {
		memcpy(buf, f->mem + off, n);
		return 0;
	}
	while (n) {
		ssize_t k = pread(f->fd, p, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return ferr(f, d, KPT_E_IO, "%s", strerror(errno));
		if (k == 0)
			return ferr(f, d, KPT_E_FORMAT, "truncated while reading (file changed?)");
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Smallest and largest raw bytes a section of `rows` rows can take. */
static void raw_bounds(uint32_t id, uint64_t rows, uint64_t *lo, uint64_t *hi)
{
	const struct kpt_coltab *t = kpt_sections[id].tab;
	size_t row_max;

	*hi = KPT_MAX_RAW_SECTION;
	if (id == KPT_SEC_STRINGS) {
		*lo = rows;
		return;
	}
	if (id == KPT_SEC_KERNELS) {
		*lo = 1 + rows * (uint64_t)kpt_kernel_row_tab.ncols;
		*hi = 10 + rows * 10 * (uint64_t)(kpt_kernel_row_tab.ncols + kpt_kernel_launch_tab.ncols);
		return;
	}
	*lo = rows * (uint64_t)t->ncols;
	row_max = kpt_cols_max_row_bytes(t);
	if (row_max)
		*hi = rows * row_max;
}

static int check_toc_entry(struct kpt_file *f, const struct kpt_disk_toc *e, uint32_t i,
			   uint64_t toc_off, struct kpt_diag *d)
{
	const char *name = kpt_sections[e->id].name;
	uint64_t lo, hi;

	if (e->reserved)
		return ferr(f, d, KPT_E_FORMAT, "reserved field of TOC entry %u is not zero", i);
	if (e->offset < sizeof(struct kpt_disk_header) || e->offset > toc_off ||
	    e->size > toc_off - e->offset)
		return ferr(f, d, KPT_E_FORMAT, "%s section (TOC entry %u) lies outside the file's data (offset %llu, %llu bytes)",
			    name, i, (unsigned long long)e->offset, (unsigned long long)e->size);
	if (e->codec != KPT_CODEC_ZSTD && e->codec != KPT_CODEC_NONE)
		return ferr(f, d, KPT_E_FORMAT, "%s section (TOC entry %u) uses unknown codec %u",
			    name, i, e->codec);
	if (e->rows > KPT_CHUNK_ROWS)
		return ferr(f, d, KPT_E_FORMAT, "%s section (TOC entry %u) claims %llu rows (at most %u allowed)",
			    name, i, (unsigned long long)e->rows, KPT_CHUNK_ROWS);
	raw_bounds(e->id, e->rows, &lo, &hi);
	if (e->raw_size < lo || e->raw_size > hi || e->raw_size > KPT_MAX_RAW_SECTION)
		return ferr(f, d, KPT_E_FORMAT, "%s section (TOC entry %u) claims %llu bytes for %llu rows",
			    name, i, (unsigned long long)e->raw_size, (unsigned long long)e->rows);
	if (e->codec == KPT_CODEC_NONE && e->size != e->raw_size)
		return ferr(f, d, KPT_E_FORMAT, "%s section (TOC entry %u) is stored uncompressed but its sizes differ",
			    name, i);
	return 0;
}

/* What the sections loaded whole (all but kernels, which are read a chunk
 * at a time) may decode to: 64 MiB + 256 bytes per byte of file. Files
 * kptprof writes decode to under 40 times their size; a TOC that promises
 * more (many entries of zeros) is refused at open, before anything is
 * allocated from it (docs/format.md "Reader obligations"). */
#define KPT_DECODE_BUDGET(size) (((uint64_t)64 << 20) + (uint64_t)(size) * 256)

static int offset_cmp(const void *pa, const void *pb)
{
	const struct kpt_disk_toc *a = *(const struct kpt_disk_toc *const *)pa;
	const struct kpt_disk_toc *b = *(const struct kpt_disk_toc *const *)pb;

	return (a->offset > b->offset) - (a->offset < b->offset);
}

/* The known sections of f->toc: no two share a byte of the file, and those
 * but kernels together decode to at most KPT_DECODE_BUDGET(f->size) bytes
 * (raw bytes plus the rows in memory). O(n log n) in TOC entries. */
static int check_toc_amplification(struct kpt_file *f, struct kpt_diag *d)
{
	const struct kpt_disk_toc **by = malloc((f->ntoc ? f->ntoc : 1) * sizeof *by);
	uint64_t total = 0, end = 0;
	size_t n = 0;
	int rc = 0;

	if (!by)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < f->ntoc; i++) {
		const struct kpt_disk_toc *e = &f->toc[i];
		const struct kpt_coltab *t = kpt_sections[e->id].tab;

		/* raw_size <= 256 MiB and rows <= 65536 (checked): no overflow */
		if (e->id != KPT_SEC_KERNELS)
			total += e->raw_size + e->rows * (t ? t->stride : 2 * sizeof(void *));
		if (e->size)
			by[n++] = e;
	}
	if (total > KPT_DECODE_BUDGET(f->size))
		rc = ferr(f, d, KPT_E_FORMAT, "its table of contents promises %llu bytes of data, too many for a file of %llu bytes",
			  (unsigned long long)total, (unsigned long long)f->size);
	if (!rc && n)
		qsort(by, n, sizeof *by, offset_cmp);
	for (size_t i = 0; !rc && i < n; i++) {
		if (i && by[i]->offset < end)
			rc = ferr(f, d, KPT_E_FORMAT, "%s and %s sections overlap at offset %llu (TOC entries name the same bytes)",
				  kpt_sections[by[i - 1]->id].name, kpt_sections[by[i]->id].name,
				  (unsigned long long)by[i]->offset);
		if (by[i]->offset + by[i]->size > end)
			end = by[i]->offset + by[i]->size;
	}
	free(by);
	return rc;
}

static int open_common(struct kpt_file *f, struct kpt_diag *d)
{
	struct kpt_disk_header h;
	uint64_t toc_bytes;
	uint8_t *raw_toc;
	int rc;

	if (f->size == 0)
		return ferr(f, d, KPT_E_FORMAT, "empty file");
	if (f->size < KPT_MAGIC_LEN || (rc = read_at(f, &h, KPT_MAGIC_LEN, 0, d)) ||
	    memcmp(h.magic, KPT_MAGIC, KPT_MAGIC_LEN))
		return ferr(f, d, KPT_E_FORMAT, "not a .kpt file (bad magic)");
	if (f->size < sizeof h)
		return ferr(f, d, KPT_E_FORMAT, "truncated (%llu bytes, shorter than the header)",
			    (unsigned long long)f->size);
	if ((rc = read_at(f, &h, sizeof h, 0, d)))
		return rc;
	f->major = h.major;
	f->minor = h.minor;
	if (h.major > KPT_FORMAT_MAJOR) {
		ferr(f, d, KPT_E_VERSION, "written by a newer kptprof (format %u > %u)", h.major,
		     KPT_FORMAT_MAJOR);
		kpt_diag_hint(d, "upgrade kptprof to read it");
		return KPT_E_VERSION;
	}
	if (h.major == 0)
		return ferr(f, d, KPT_E_FORMAT, "unknown format version 0.%u", h.minor);
	if (h.reserved[0] || h.reserved[1] || h.reserved[2])
		return ferr(f, d, KPT_E_FORMAT, "reserved header field is not zero");
	if (h.header_size < sizeof h || h.header_size > f->size)
		return ferr(f, d, KPT_E_FORMAT, "header size %u is invalid", h.header_size);
	if (h.file_size > f->size)
		return ferr(f, d, KPT_E_FORMAT, "truncated (%llu of %llu bytes)",
			    (unsigned long long)f->size, (unsigned long long)h.file_size);
	if (h.file_size < f->size)
		return ferr(f, d, KPT_E_FORMAT, "%llu bytes of unknown data after the end of the file",
			    (unsigned long long)(f->size - h.file_size));
	if (h.toc_entry_size < sizeof(struct kpt_disk_toc) || h.toc_entry_size > 4096)
		return ferr(f, d, KPT_E_FORMAT, "TOC entry size %u is invalid", h.toc_entry_size);
	toc_bytes = (uint64_t)h.toc_count * h.toc_entry_size;
	if (h.toc_offset < h.header_size || h.toc_offset > f->size ||
	    toc_bytes > f->size - h.toc_offset)
		return ferr(f, d, KPT_E_FORMAT, "table of contents lies outside the file (offset %llu, %u entries)",
			    (unsigned long long)h.toc_offset, h.toc_count);
	raw_toc = malloc(toc_bytes ? toc_bytes : 1);
	f->toc = malloc((toc_bytes ? h.toc_count : 1) * sizeof *f->toc);
	if (!raw_toc || !f->toc) {
		free(raw_toc);
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	}
	if ((rc = read_at(f, raw_toc, toc_bytes, h.toc_offset, d))) {
		free(raw_toc);
		return rc;
	}
	for (uint32_t i = 0; i < h.toc_count; i++) {
		struct kpt_disk_toc e;

		memcpy(&e, raw_toc + (size_t)i * h.toc_entry_size, sizeof e);
		/* Unknown ids come from newer writers: skipped, not checked. */
		if (e.id == 0 || e.id > KPT_SEC_MAX)
			continue;
		if ((rc = check_toc_entry(f, &e, i, h.toc_offset, d))) {
			free(raw_toc);
			return rc;
		}
		f->toc[f->ntoc++] = e;
		f->rows[e.id] += e.rows;
	}
	free(raw_toc);
	if ((rc = check_toc_amplification(f, d)))
		return rc;
	f->lim.max[KPT_CHK_STR] = f->rows[KPT_SEC_STRINGS];
	f->lim.max[KPT_CHK_DEV] = f->rows[KPT_SEC_DEVICES];
	f->lim.max[KPT_CHK_DEV_OPT] = f->rows[KPT_SEC_DEVICES];
	f->lim.max[KPT_CHK_PROC] = f->rows[KPT_SEC_PROCESSES];
	return 0;
}

static int file_new(const char *path, struct kpt_file **out, struct kpt_diag *d)
{
	struct kpt_file *f = calloc(1, sizeof *f);

	*out = NULL;
	if (!f)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot read '%s': out of memory", path);
	f->fd = -1;
	kpt_arena_init(&f->arena);
	f->path = strdup(path);
	f->dctx = ZSTD_createDCtx();
	if (!f->path || !f->dctx) {
		kpt_file_close(f);
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot read '%s': out of memory", path);
	}
	*out = f;
	return 0;
}

int kpt_file_open(const char *path, struct kpt_file **out, struct kpt_diag *d)
{
	struct kpt_file *f;
	struct stat st;
	int rc;

	*out = NULL;
	if ((rc = file_new(path, &f, d)))
		return rc;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		int e = errno;

		rc = kpt_diag_set(d, e == ENOENT ? KPT_E_NOTFOUND : KPT_E_IO, "cannot read '%s': %s",
				  path, strerror(e));
		kpt_file_close(f);
		return rc;
	}
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode)) {
		rc = ferr(f, d, KPT_E_IO, "%s", S_ISDIR(st.st_mode) ? "is a directory" :
			  "not a regular file");
		kpt_file_close(f);
		return rc;
	}
	f->size = (uint64_t)st.st_size;
	if ((rc = open_common(f, d))) {
		kpt_file_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

int kpt_file_open_mem(const void *data, size_t len, const char *name, struct kpt_file **out,
		      struct kpt_diag *d)
{
	struct kpt_file *f;
	static const uint8_t empty[1];
	int rc;

	*out = NULL;
	if ((rc = file_new(name ? name : "(memory)", &f, d)))
		return rc;
	f->mem = data ? data : empty;
	f->size = len;
	if ((rc = open_common(f, d))) {
		kpt_file_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

void kpt_file_close(struct kpt_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	ZSTD_freeDCtx(f->dctx);
	kpt_buf_free(&f->cbuf);
	kpt_buf_free(&f->rbuf);
	kpt_arena_release(&f->arena);
	free(f->toc);
	free(f->path);
	free(f);
}

const char *kpt_file_path(const struct kpt_file *f)
{
	return f->path;
}

void kpt_file_version(const struct kpt_file *f, uint32_t *major, uint32_t *minor)
{
	if (major)
		*major = f->major;
	if (minor)
		*minor = f->minor;
}

/* Reads and decompresses section e; *raw points at e->raw_size bytes in rbuf
 * (or in the mapped memory), valid until the next call with the same bufs. */
static int load_raw(struct kpt_file *f, const struct kpt_disk_toc *e, ZSTD_DCtx *dctx,
		    struct kpt_buf *cbuf, struct kpt_buf *rbuf, const uint8_t **raw,
		    struct kpt_diag *d)
{
	const char *name = kpt_sections[e->id].name;
	const uint8_t *src;
	unsigned long long fcs;
	size_t got;
	int rc;

	if (f->mem) {
		src = f->mem + e->offset;
	} else {
		cbuf->len = 0;
		if (kpt_buf_reserve(cbuf, e->size + 1))
			return ferr(f, d, KPT_E_NOMEM, "out of memory");
		if ((rc = read_at(f, cbuf->p, e->size, e->offset, d)))
			return rc;
		src = cbuf->p;
	}
	if (e->codec == KPT_CODEC_NONE) {
		*raw = src;
		return 0;
	}
	fcs = ZSTD_getFrameContentSize(src, e->size);
	if (fcs != e->raw_size)
		return ferr(f, d, KPT_E_FORMAT, "%s section at offset %llu is corrupt (zstd frame does not hold %llu bytes)",
			    name, (unsigned long long)e->offset, (unsigned long long)e->raw_size);
	rbuf->len = 0;
	if (kpt_buf_reserve(rbuf, e->raw_size + 1))
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	got = ZSTD_decompressDCtx(dctx, rbuf->p, e->raw_size, src, e->size);
	if (ZSTD_isError(got))
		return ferr(f, d, KPT_E_FORMAT, "%s section at offset %llu is corrupt (zstd: %s)",
			    name, (unsigned long long)e->offset, ZSTD_getErrorName(got));
	if (got != e->raw_size)
		return ferr(f, d, KPT_E_FORMAT, "%s section at offset %llu is corrupt (%zu of %llu bytes)",
			    name, (unsigned long long)e->offset, got, (unsigned long long)e->raw_size);
	*raw = rbuf->p;
	return 0;
}

static int decode_fail(struct kpt_file *f, const struct kpt_disk_toc *e,
		       const struct kpt_decode_err *de, int rc, struct kpt_diag *d)
{
	const char *name = kpt_sections[e->id].name;

	if (rc == KPT_E_NOMEM)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	if (de->out_of_range)
		return ferr(f, d, KPT_E_FORMAT, "%s section at offset %llu is corrupt (%s of row %zu is out of range: %llu)",
			    name, (unsigned long long)e->offset, de->col, de->row,
			    (unsigned long long)de->value);
	return ferr(f, d, KPT_E_FORMAT, "%s section at offset %llu is corrupt (column %s ends early at row %zu)",
		    name, (unsigned long long)e->offset, de->col, de->row);
}

int kpt_file_load_strings(struct kpt_file *f, struct kpt_diag *d)
{
	uint64_t total = f->rows[KPT_SEC_STRINGS];
	uint32_t n = 0;
	int rc;

	if (f->strings_loaded)
		return 0;
	if (total >= UINT32_MAX)
		return ferr(f, d, KPT_E_FORMAT, "too many strings (%llu)", (unsigned long long)total);
	f->strs = kpt_arena_alloc(&f->arena, (total ? total : 1) * sizeof *f->strs);
	if (!f->strs)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < f->ntoc; i++) {
		const struct kpt_disk_toc *e = &f->toc[i];
		const uint8_t *raw, *p, *end, *text;
		uint64_t bytes = 0, len = 0;
		char *copy;

		if (e->id != KPT_SEC_STRINGS)
			continue;
		if ((rc = load_raw(f, e, f->dctx, &f->cbuf, &f->rbuf, &raw, d)))
			return rc;
		p = raw;
		end = raw + e->raw_size;
		for (uint64_t k = 0; k < e->rows; k++) {
			if (kpt_get_varint(&p, end, &len) || len > (uint64_t)(end - raw))
				return ferr(f, d, KPT_E_FORMAT, "strings section at offset %llu is corrupt (length %llu)",
					    (unsigned long long)e->offset, (unsigned long long)k);
			bytes += len;
		}
		text = p;
		if (bytes > (uint64_t)(end - text))
			return ferr(f, d, KPT_E_FORMAT, "strings section at offset %llu is corrupt (%llu bytes of text promised, %zu present)",
				    (unsigned long long)e->offset, (unsigned long long)bytes,
				    (size_t)(end - text));
		if (memchr(text, '\0', bytes))
			return ferr(f, d, KPT_E_FORMAT, "strings section at offset %llu is corrupt (a string holds a NUL byte)",
				    (unsigned long long)e->offset);
		copy = kpt_arena_alloc(&f->arena, bytes + e->rows);
		if (!copy)
			return ferr(f, d, KPT_E_NOMEM, "out of memory");
		p = raw;
		for (uint64_t k = 0; k < e->rows; k++) {
			kpt_get_varint(&p, end, &len);
			memcpy(copy, text, len);
			copy[len] = '\0';
			f->strs[n++] = copy;
			copy += len + 1;
			text += len;
		}
	}
	f->nstrs = n;
	f->strings_loaded = 1;
	return 0;
}

const char *kpt_file_string(const struct kpt_file *f, uint32_t id)
{
	if (id == KPT_NONE)
		return "";
	if (!f->strings_loaded || id >= f->nstrs)
		return NULL;
	return f->strs[id];
}

uint32_t kpt_file_string_count(const struct kpt_file *f)
{
	return f->strings_loaded ? f->nstrs : (uint32_t)f->rows[KPT_SEC_STRINGS];
}

struct range_at {
	uint32_t id, i;
};

static int cmp_range_at(const void *a, const void *b)
{
	const struct range_at *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : x->i < y->i ? -1 : x->i > y->i;
}

/* Index of the range with id (the first, if ids repeat), or SIZE_MAX. */
static size_t range_find(const struct range_at *at, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	if (id == KPT_NONE)
		return SIZE_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && at[lo].id == id ? at[lo].i : SIZE_MAX;
}

/* The one check that NVTX parents form no cycle, for every reader (report,
 * export, view, diff, history): a range that is its own ancestor is a
 * corrupt file (KPT_E_FORMAT). A parent id no range has is a top-level
 * range. O(n log n) time, 9 bytes a range while it runs. */
static int check_range_parents(struct kpt_file *f, const struct kpt_range *r, size_t n, struct kpt_diag *d)
{
	struct range_at *at = n ? malloc(n * sizeof *at) : NULL;
	unsigned char *state = n ? calloc(n, 1) : NULL; /* 0 new, 1 on this walk, 2 done */
	int rc = 0;

	if (n && (!at || !state)) {
		free(at);
		free(state);
		return ferr(f, d, KPT_E_NOMEM, "out of memory (ranges: %zu rows)", n);
	}
	for (size_t i = 0; i < n; i++)
		at[i] = (struct range_at){ r[i].id, (uint32_t)i };
	if (n)
		qsort(at, n, sizeof *at, cmp_range_at);
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t cur = i;

		while (cur != SIZE_MAX && state[cur] == 0) {
			state[cur] = 1;
			cur = range_find(at, n, r[cur].parent);
		}
		if (cur != SIZE_MAX && state[cur] == 1)
			rc = ferr(f, d, KPT_E_FORMAT, "NVTX range %u is its own ancestor (cyclic parents)", r[cur].id);
		for (cur = i; cur != SIZE_MAX && state[cur] == 1; cur = range_find(at, n, r[cur].parent))
			state[cur] = 2;
	}
	free(at);
	free(state);
	return rc;
}

/* Loads every section of a small or whole-table kind into one array. */
static int load_table(struct kpt_file *f, uint32_t sec, void **rows, size_t *n,
		      struct kpt_diag *d)
{
	const struct kpt_coltab *t = kpt_sections[sec].tab;
	uint64_t total = f->rows[sec];
	size_t done = 0;
	char *out;
	int rc;

	if (f->table_loaded[sec]) {
		*rows = f->table[sec];
		*n = (size_t)total;
		return 0;
	}
	*rows = NULL;
	*n = 0;
	if (total > SIZE_MAX / t->stride)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	out = kpt_arena_alloc(&f->arena, total * t->stride);
	if (!out)
		return ferr(f, d, KPT_E_NOMEM, "out of memory (%s: %llu rows)",
			    kpt_sections[sec].name, (unsigned long long)total);
	for (uint32_t i = 0; i < f->ntoc; i++) {
		const struct kpt_disk_toc *e = &f->toc[i];
		struct kpt_decode_err de;
		const uint8_t *raw = NULL, *p;

		if (e->id != sec)
			continue;
		if ((rc = load_raw(f, e, f->dctx, &f->cbuf, &f->rbuf, &raw, d)))
			return rc;
		p = raw;
		memset(out + done * t->stride, 0, e->rows * t->stride);
		rc = kpt_cols_decode(t, out + done * t->stride, e->rows, &p, raw + e->raw_size,
				     &f->lim, &f->arena, &de);
		if (rc)
			return decode_fail(f, e, &de, rc, d);
		done += e->rows;
	}
	if (sec == KPT_SEC_DEVICES)
		for (size_t i = 0; i < done; i++)
			((struct kpt_device *)out)[i].index = (uint32_t)i;
	if (sec == KPT_SEC_PROCESSES)
		for (size_t i = 0; i < done; i++)
			((struct kpt_process *)out)[i].index = (uint32_t)i;
	if (sec == KPT_SEC_RANGES && (rc = check_range_parents(f, (const struct kpt_range *)out, done, d)))
		return rc;
	f->table[sec] = out;
	f->table_loaded[sec] = 1;
	*rows = out;
	*n = done;
	return 0;
}

#define TABLE_GETTER(fn, type, sec)                                                   \
	int fn(struct kpt_file *f, const type **rows, size_t *n, struct kpt_diag *d)  \
	{                                                                             \
		void *r;                                                              \
		int rc = load_table(f, sec, &r, n, d);                                \
		*rows = r;                                                            \
		return rc;                                                            \
	}

TABLE_GETTER(kpt_file_meta, struct kpt_meta_kv, KPT_SEC_META)
TABLE_GETTER(kpt_file_devices, struct kpt_device, KPT_SEC_DEVICES)
TABLE_GETTER(kpt_file_processes, struct kpt_process, KPT_SEC_PROCESSES)
TABLE_GETTER(kpt_file_drops, struct kpt_drop, KPT_SEC_DROPS)
TABLE_GETTER(kpt_file_memops, struct kpt_memop, KPT_SEC_MEMOPS)
TABLE_GETTER(kpt_file_ranges, struct kpt_range, KPT_SEC_RANGES)
TABLE_GETTER(kpt_file_events, struct kpt_event, KPT_SEC_EVENTS)
TABLE_GETTER(kpt_file_env, struct kpt_env_sample, KPT_SEC_ENV)
TABLE_GETTER(kpt_file_counters, struct kpt_counter, KPT_SEC_COUNTERS)

const char *kpt_file_meta_get(struct kpt_file *f, const char *key)
{
	const struct kpt_meta_kv *kv;
	size_t n;

	if (kpt_file_meta(f, &kv, &n, NULL))
		return NULL;
	/* Later entries win, as in the writer. */
	for (size_t i = n; i-- > 0;)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

long kpt_file_settle_us(struct kpt_file *f)
{
	const char *m = kpt_file_meta_get(f, "settle_us");
	char *end;
	long v;

	if (!m)
		return 0;
	errno = 0;
	v = strtol(m, &end, 10);
	return end == m || *end || errno || v < 0 || v > 1000000 ? -1 : v;
}

double kpt_file_meta_positive(struct kpt_file *f, const char *key)
{
	const char *m = kpt_file_meta_get(f, key);
	char *end;
	double v;

	if (!m || !m[0])
		return 0;
	v = strtod(m, &end);
	return *end || !isfinite(v) || !(v > 0) ? 0 : v;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int kpt_file_counts(struct kpt_file *f, struct kpt_counts *c, struct kpt_diag *d)
{
	const struct kpt_process *p;
	const struct kpt_drop *dr;
	size_t np, nd;
	uint32_t *runs;
	int rc;

	memset(c, 0, sizeof *c);
	if ((rc = kpt_file_processes(f, &p, &np, d)) || (rc = kpt_file_drops(f, &dr, &nd, d)))
		return rc;
	c->kernels = f->rows[KPT_SEC_KERNELS];
	c->memops = f->rows[KPT_SEC_MEMOPS];
	c->ranges = f->rows[KPT_SEC_RANGES];
	c->events = f->rows[KPT_SEC_EVENTS];
	c->env_samples = f->rows[KPT_SEC_ENV];
	c->counters = f->rows[KPT_SEC_COUNTERS];
	c->devices = (uint32_t)f->rows[KPT_SEC_DEVICES];
	c->processes = (uint32_t)np;
	for (size_t i = 0; i < nd; i++)
		c->dropped_records += dr[i].count;
	runs = malloc((np ? np : 1) * sizeof *runs);
	if (!runs)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < np; i++)
		runs[i] = p[i].run;
	qsort(runs, np, sizeof *runs, cmp_u32);
	for (size_t i = 0; i < np; i++)
		c->runs += i == 0 || runs[i] != runs[i - 1];
	free(runs);
	return 0;
}

/* ---- kernel cursor ---------------------------------------------------- */

int kpt_kernel_cursor_create(struct kpt_file *f, struct kpt_kernel_cursor **out,
			     struct kpt_diag *d)
{
	struct kpt_kernel_cursor *c = calloc(1, sizeof *c);

	*out = NULL;
	if (!c)
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	c->f = f;
	c->dctx = ZSTD_createDCtx();
	c->rows = malloc(KPT_CHUNK_ROWS * sizeof *c->rows);
	c->launches = malloc(KPT_CHUNK_ROWS * sizeof *c->launches);
	if (!c->dctx || !c->rows || !c->launches) {
		kpt_kernel_cursor_destroy(c);
		return ferr(f, d, KPT_E_NOMEM, "out of memory");
	}
	/* a phase begun with total 0 counts this pass's kernels (kpt_progress.h) */
	for (size_t i = 0; i < f->ntoc; i++)
		if (f->toc[i].id == KPT_SEC_KERNELS)
			kpt_progress_expect(f->toc[i].rows);
	*out = c;
	return 0;
}

void kpt_kernel_cursor_destroy(struct kpt_kernel_cursor *c)
{
	if (!c)
		return;
	ZSTD_freeDCtx(c->dctx);
	kpt_buf_free(&c->cbuf);
	kpt_buf_free(&c->rbuf);
	free(c->rows);
	free(c->launches);
	free(c);
}

int kpt_kernel_cursor_next(struct kpt_kernel_cursor *c, const struct kpt_kernel **rows,
			   size_t *n, struct kpt_diag *d)
{
	struct kpt_file *f = c->f;
	const struct kpt_disk_toc *e = NULL;
	struct kpt_limits lim = f->lim;
	struct kpt_decode_err de;
	const uint8_t *raw, *p, *end;
	uint64_t nl;
	int rc;

	*rows = NULL;
	*n = 0;
	while (c->next < f->ntoc && !e) {
		if (f->toc[c->next].id == KPT_SEC_KERNELS && f->toc[c->next].rows)
			e = &f->toc[c->next];
		c->next++;
	}
	if (!e)
		return 0;
	if ((rc = load_raw(f, e, c->dctx, &c->cbuf, &c->rbuf, &raw, d)))
		return rc;
	p = raw;
	end = raw + e->raw_size;
	if (kpt_get_varint(&p, end, &nl) || nl > e->rows)
		return ferr(f, d, KPT_E_FORMAT, "kernels section at offset %llu is corrupt (launch count)",
			    (unsigned long long)e->offset);
	rc = kpt_cols_decode(&kpt_kernel_launch_tab, c->launches, nl, &p, end, &lim, NULL, &de);
	if (rc)
		return decode_fail(f, e, &de, rc, d);
	lim.max[KPT_CHK_LAUNCH] = nl;
	rc = kpt_cols_decode(&kpt_kernel_row_tab, c->rows, e->rows, &p, end, &lim, NULL, &de);
	if (rc)
		return decode_fail(f, e, &de, rc, d);
	for (uint64_t i = 0; i < e->rows; i++) {
		struct kpt_kernel *k = &c->rows[i];
		const struct kpt_kernel *l = &c->launches[k->name];

		k->name = l->name;
		memcpy(k->grid, l->grid, sizeof k->grid);
		memcpy(k->block, l->block, sizeof k->block);
		k->registers = l->registers;
		k->shared_static = l->shared_static;
		k->shared_dynamic = l->shared_dynamic;
	}
	*rows = c->rows;
	*n = (size_t)e->rows;
	kpt_progress_add(e->rows);
	return 1;
}
