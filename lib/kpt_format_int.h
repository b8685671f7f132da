/* kpt_format_int.h - the .kpt on-disk layout, shared by the writer and the
 * reader. Private to lib/. docs/format.md is the normative spec; this file
 * must agree with it.
 */
#ifndef KPT_FORMAT_INT_H
#define KPT_FORMAT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"
#include "kpt_model.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kptprof writes on-disk structs as they are in memory: little-endian hosts only"
#endif

#define KPT_MAGIC "KPTPROF\x1a"
#define KPT_MAGIC_LEN 8

/* File header, at offset 0. header_size lets a later minor version append
 * fields; readers ignore bytes past the fields they know. */
struct kpt_disk_header {
	uint8_t magic[8];           /* KPT_MAGIC */
	uint16_t major, minor;
	uint32_t header_size;       /* sizeof(struct kpt_disk_header) = 64 */
	uint64_t toc_offset;        /* where the TOC starts */
	uint32_t toc_count;         /* entries in the TOC */
	uint32_t toc_entry_size;    /* sizeof(struct kpt_disk_toc) = 48 */
	uint64_t file_size;         /* total bytes, to name truncation */
	uint64_t reserved[3];       /* zero */
};
_Static_assert(sizeof(struct kpt_disk_header) == 64, "header is 64 bytes on disk");
_Static_assert(offsetof(struct kpt_disk_header, toc_offset) == 16, "header layout");
_Static_assert(offsetof(struct kpt_disk_header, file_size) == 32, "header layout");

/* One TOC entry per section. rows is the number of records in the section
 * (strings: strings; kernels: kernels), at most KPT_CHUNK_ROWS. */
struct kpt_disk_toc {
	uint32_t id;                /* enum kpt_section */
	uint32_t codec;             /* enum kpt_codec */
	uint64_t offset;            /* from the start of the file */
	uint64_t size;              /* bytes on disk */
	uint64_t raw_size;          /* bytes after decompression */
	uint64_t rows;
	uint64_t reserved;          /* zero */
};
_Static_assert(sizeof(struct kpt_disk_toc) == 48, "TOC entry is 48 bytes on disk");
_Static_assert(offsetof(struct kpt_disk_toc, offset) == 8, "TOC layout");
_Static_assert(offsetof(struct kpt_disk_toc, rows) == 32, "TOC layout");

enum kpt_section {
	KPT_SEC_META = 1,
	KPT_SEC_STRINGS = 2,
	KPT_SEC_DEVICES = 3,
	KPT_SEC_PROCESSES = 4,
	KPT_SEC_DROPS = 5,
	KPT_SEC_KERNELS = 6,
	KPT_SEC_MEMOPS = 7,
	KPT_SEC_RANGES = 8,
	KPT_SEC_EVENTS = 9,
	KPT_SEC_ENV = 10,
	KPT_SEC_COUNTERS = 11,
	KPT_SEC_MAX = 11,
};

enum kpt_codec {
	KPT_CODEC_NONE = 0,
	KPT_CODEC_ZSTD = 1,
};

/* Largest decompressed section a reader accepts: a bound on what one
 * section can make it allocate. Writers keep sections far smaller. */
#define KPT_MAX_RAW_SECTION ((uint64_t)256 << 20)
/* Writers start a new strings section after this many bytes of text. */
#define KPT_STRINGS_CHUNK_BYTES ((size_t)4 << 20)

/* ---- column codec ----------------------------------------------------- */

/* How one struct field is stored: a column of `rows` values, one after the
 * other, before the next column starts. Varints are LEB128 (7 bits per byte,
 * low first). */
enum kpt_enc {
	KPT_ENC_U32 = 1,            /* uint32: varint */
	KPT_ENC_U64,                /* uint64: varint */
	KPT_ENC_ID,                 /* uint32: varint of v + 1 (mod 2^32): KPT_NONE -> 0 */
	KPT_ENC_S32,                /* int32: zigzag varint */
	KPT_ENC_D32,                /* uint32: zigzag varint of (v - previous row's v) mod 2^32 */
	KPT_ENC_D64,                /* uint64: zigzag varint of (v - previous) mod 2^64 */
	KPT_ENC_SPAN,               /* uint64: zigzag varint of (v - field `ref` of the same row) */
	KPT_ENC_F64,                /* double: 8 bytes IEEE 754 little-endian */
	KPT_ENC_STR,                /* const char *: varint length + bytes (no NUL) */
};

/* What a decoded value must satisfy. */
enum kpt_chk {
	KPT_CHK_ANY = 0,
	KPT_CHK_STR,                /* string id < string count, or KPT_NONE */
	KPT_CHK_DEV,                /* device index < device count */
	KPT_CHK_DEV_OPT,            /* device index < device count, or KPT_NONE */
	KPT_CHK_PROC,               /* process index < process count */
	KPT_CHK_LAUNCH,             /* launch index < launch dictionary size */
	KPT_CHK_MAX,
};

struct kpt_col {
	const char *name;           /* for messages */
	uint16_t off;               /* offsetof the field */
	uint16_t ref;               /* KPT_ENC_SPAN: offsetof the base field */
	uint8_t enc;                /* enum kpt_enc */
	uint8_t chk;                /* enum kpt_chk */
};

struct kpt_coltab {
	const struct kpt_col *cols;
	int ncols;
	size_t stride;              /* sizeof the row struct */
};

/* Growable byte buffer. */
struct kpt_buf {
	uint8_t *p;
	size_t len, cap;
};

int kpt_buf_reserve(struct kpt_buf *b, size_t extra);
void kpt_buf_free(struct kpt_buf *b);

/* Appends the columns of rows[0..n) to out. Returns 0 or KPT_E_NOMEM. */
int kpt_cols_encode(const struct kpt_coltab *t, const void *rows, size_t n,
		    struct kpt_buf *out);

/* Decode limits: value bounds for each enum kpt_chk. */
struct kpt_limits {
	uint64_t max[KPT_CHK_MAX];  /* a value must be < max[chk] */
};

/* Where decoding stopped, for the message. */
struct kpt_decode_err {
	const char *col;
	size_t row;
	uint64_t value;
	int out_of_range;           /* 0: truncated or malformed; 1: value out of range */
};

/* Decodes n rows from *p (advanced) into rows (stride t->stride; fields not
 * in t are left alone). STR fields are copied into arena, NUL-terminated.
 * Returns 0, KPT_E_FORMAT (e filled) or KPT_E_NOMEM. */
int kpt_cols_decode(const struct kpt_coltab *t, void *rows, size_t n,
		    const uint8_t **p, const uint8_t *end, const struct kpt_limits *lim,
		    struct kpt_arena *arena, struct kpt_decode_err *e);

/* Largest possible encoding of one row of t without STR columns, in bytes
 * (bounds the raw size a reader accepts); 0 when t has STR columns. */
size_t kpt_cols_max_row_bytes(const struct kpt_coltab *t);

/* Varints, shared with the kernel launch dictionary. */
static inline size_t kpt_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* 0 and *v, or -1 when the varint runs past end or over 64 bits. */
static inline int kpt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;

	for (int shift = 0; shift < 64 && p < end; shift += 7) {
		uint8_t b = *p++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift == 63 && b > 1)
				return -1;
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* ---- tables per record kind ------------------------------------------- */

/* Per section id: the column table (NULL for strings/kernels, which have
 * their own layout around tables), its name for messages. */
struct kpt_secinfo {
	const char *name;
	const struct kpt_coltab *tab;
};
extern const struct kpt_secinfo kpt_sections[KPT_SEC_MAX + 1];

/* The kernel section: a launch dictionary (distinct name + grid + block +
 * registers + shared memory) then the per-row columns. */
extern const struct kpt_coltab kpt_kernel_launch_tab;
extern const struct kpt_coltab kpt_kernel_row_tab;

/* ---- writer internals for kpt_file_copy_into ------------------------- */
struct kpt_writer;
uint32_t kpt_writer_ndevices_(const struct kpt_writer *w);
const struct kpt_device *kpt_writer_device_at_(const struct kpt_writer *w, uint32_t i);
uint32_t kpt_writer_nprocesses_(const struct kpt_writer *w);
uint32_t kpt_writer_next_range_(const struct kpt_writer *w);

#endif
