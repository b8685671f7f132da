/* kpt_codec.c - column encoding of .kpt sections (see kpt_format_int.h). */
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"
#include "kpt_format_int.h"
#include "kpt_grow.h"

int kpt_buf_reserve(struct kpt_buf *b, size_t extra)
{
	size_t need = b->len + extra;

	if (need < b->len)
		return KPT_E_NOMEM;
	return kpt_grow(&b->p, &b->cap, need, 1);
}

void kpt_buf_free(struct kpt_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static inline uint64_t zz64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzz64(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint32_t ld32(const void *row, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)row + off, sizeof v);
	return v;
}

static inline uint64_t ld64(const void *row, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)row + off, sizeof v);
	return v;
}

static inline void st32(void *row, size_t off, uint32_t v)
{
	memcpy((char *)row + off, &v, sizeof v);
}

static inline void st64(void *row, size_t off, uint64_t v)
{
	memcpy((char *)row + off, &v, sizeof v);
}

static int encode_col(const struct kpt_col *c, const char *rows, size_t stride, size_t n,
		      struct kpt_buf *out)
{
	uint8_t *p;
	uint64_t prev = 0;

	if (c->enc == KPT_ENC_STR) {
		for (size_t i = 0; i < n; i++) {
			const char *s;
			size_t len;

			memcpy(&s, rows + i * stride + c->off, sizeof s);
			len = s ? strlen(s) : 0;
			if (kpt_buf_reserve(out, len + 10))
				return KPT_E_NOMEM;
			out->len += kpt_put_varint(out->p + out->len, len);
			if (len)
				memcpy(out->p + out->len, s, len);
			out->len += len;
		}
		return 0;
	}
	if (n > SIZE_MAX / 10 || kpt_buf_reserve(out, n * 10))
		return KPT_E_NOMEM;
	p = out->p + out->len;
	switch (c->enc) {
	case KPT_ENC_U32:
		for (size_t i = 0; i < n; i++)
			p += kpt_put_varint(p, ld32(rows + i * stride, c->off));
		break;
	case KPT_ENC_U64:
		for (size_t i = 0; i < n; i++)
			p += kpt_put_varint(p, ld64(rows + i * stride, c->off));
		break;
	case KPT_ENC_ID:
		for (size_t i = 0; i < n; i++)
			p += kpt_put_varint(p, (uint32_t)(ld32(rows + i * stride, c->off) + 1));
		break;
	case KPT_ENC_S32:
		for (size_t i = 0; i < n; i++)
			p += kpt_put_varint(p, zz64((int32_t)ld32(rows + i * stride, c->off)));
		break;
	case KPT_ENC_D32:
		for (size_t i = 0; i < n; i++) {
			uint32_t v = ld32(rows + i * stride, c->off);

			p += kpt_put_varint(p, zz64((int32_t)(v - (uint32_t)prev)));
			prev = v;
		}
		break;
	case KPT_ENC_D64:
		for (size_t i = 0; i < n; i++) {
			uint64_t v = ld64(rows + i * stride, c->off);

			p += kpt_put_varint(p, zz64((int64_t)(v - prev)));
			prev = v;
		}
		break;
	case KPT_ENC_SPAN:
		for (size_t i = 0; i < n; i++) {
			const char *r = rows + i * stride;

			p += kpt_put_varint(p, zz64((int64_t)(ld64(r, c->off) - ld64(r, c->ref))));
		}
		break;
	case KPT_ENC_F64:
		for (size_t i = 0; i < n; i++) {
			memcpy(p, rows + i * stride + c->off, 8);
			p += 8;
		}
		break;
	default:
		return KPT_E_INVAL;
	}
	out->len = (size_t)(p - out->p);
	return 0;
}

int kpt_cols_encode(const struct kpt_coltab *t, const void *rows, size_t n,
		    struct kpt_buf *out)
{
	for (int c = 0; c < t->ncols; c++) {
		int rc = encode_col(&t->cols[c], rows, t->stride, n, out);

		if (rc)
			return rc;
	}
	return 0;
}

static int bad(struct kpt_decode_err *e, const struct kpt_col *c, size_t row, uint64_t v,
	       int range)
{
	e->col = c->name;
	e->row = row;
	e->value = v;
	e->out_of_range = range;
	return KPT_E_FORMAT;
}

static int check_u32(const struct kpt_col *c, const struct kpt_limits *lim, uint32_t v)
{
	switch (c->chk) {
	case KPT_CHK_ANY:
		return 1;
	case KPT_CHK_STR:
	case KPT_CHK_DEV_OPT:
		return v == KPT_NONE || v < lim->max[c->chk];
	default:
		return v < lim->max[c->chk];
	}
}

/* Reads one varint into v or fails the column at row i. */
#define GET(v)                                                  \
	do {                                                    \
		if (p < end && *p < 0x80) {                     \
			(v) = *p++;                             \
		} else if (kpt_get_varint(&p, end, &(v))) {     \
			return bad(e, c, i, 0, 0);              \
		}                                               \
	} while (0)

/* One loop per encoding, so the per-value work has no dispatch. */
static int decode_col(const struct kpt_col *c, char *rows, size_t stride, size_t n,
		      const uint8_t **pp, const uint8_t *end, const struct kpt_limits *lim,
		      struct kpt_arena *arena, struct kpt_decode_err *e)
{
	const uint8_t *p = *pp;
	uint64_t v, prev = 0;
	char *r = rows + c->off;
	size_t i;

	switch (c->enc) {
	case KPT_ENC_U32:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			if (v > UINT32_MAX || !check_u32(c, lim, (uint32_t)v))
				return bad(e, c, i, v, 1);
			st32(r, 0, (uint32_t)v);
		}
		break;
	case KPT_ENC_U64:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			st64(r, 0, v);
		}
		break;
	case KPT_ENC_ID:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			if (v > UINT32_MAX || !check_u32(c, lim, (uint32_t)v - 1))
				return bad(e, c, i, (uint32_t)v - 1, 1);
			st32(r, 0, (uint32_t)v - 1);
		}
		break;
	case KPT_ENC_S32:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			if (v > UINT32_MAX)
				return bad(e, c, i, v, 1);
			st32(r, 0, (uint32_t)unzz64(v));
		}
		break;
	case KPT_ENC_D32:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			if (v > UINT32_MAX)
				return bad(e, c, i, v, 1);
			prev = (uint32_t)(prev + (uint64_t)unzz64(v));
			if (!check_u32(c, lim, (uint32_t)prev))
				return bad(e, c, i, prev, 1);
			st32(r, 0, (uint32_t)prev);
		}
		break;
	case KPT_ENC_D64:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			prev += (uint64_t)unzz64(v);
			st64(r, 0, prev);
		}
		break;
	case KPT_ENC_SPAN:
		for (i = 0; i < n; i++, r += stride) {
			GET(v);
			st64(r, 0, ld64(r - c->off, c->ref) + (uint64_t)unzz64(v));
		}
		break;
	case KPT_ENC_F64:
		for (i = 0; i < n; i++, r += stride) {
			if (end - p < 8)
				return bad(e, c, i, 0, 0);
			memcpy(r, p, 8);
			p += 8;
		}
		break;
	case KPT_ENC_STR:
		for (i = 0; i < n; i++, r += stride) {
			char *s;

			GET(v);
			if (v > (uint64_t)(end - p))
				return bad(e, c, i, v, 0);
			if (memchr(p, '\0', v))
				return bad(e, c, i, v, 1);
			s = kpt_arena_strndup(arena, (const char *)p, v);
			if (!s)
				return KPT_E_NOMEM;
			memcpy(r, &s, sizeof s);
			p += v;
		}
		break;
	default:
		return bad(e, c, 0, c->enc, 1);
	}
	*pp = p;
	return 0;
}

int kpt_cols_decode(const struct kpt_coltab *t, void *rows, size_t n,
		    const uint8_t **p, const uint8_t *end, const struct kpt_limits *lim,
		    struct kpt_arena *arena, struct kpt_decode_err *e)
{
	for (int c = 0; c < t->ncols; c++) {
		int rc = decode_col(&t->cols[c], rows, t->stride, n, p, end, lim, arena, e);

		if (rc)
			return rc;
	}
	return 0;
}

size_t kpt_cols_max_row_bytes(const struct kpt_coltab *t)
{
	size_t n = 0;

	for (int c = 0; c < t->ncols; c++) {
		if (t->cols[c].enc == KPT_ENC_STR)
			return 0;
		n += 10;
	}
	return n;
}
