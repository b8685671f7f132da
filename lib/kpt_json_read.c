/* kpt_json_read.c - bounded JSON reader (see kpt_json_read.h). */
#include "kpt_json_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kpt_jr_init(struct kpt_jr *r, const void *buf, size_t len)
{
	memset(r, 0, sizeof *r);
	r->base = buf;
	r->p = buf;
	r->end = r->base + len;
}

static int bad(struct kpt_jr *r, struct kpt_diag *d, const char *what)
{
	r->failed = 1;
	return kpt_diag_set(d, KPT_E_FORMAT, "bad JSON at byte %zu: %s", (size_t)(r->p - r->base), what);
}

static void skip_ws(struct kpt_jr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

int kpt_jr_peek(struct kpt_jr *r)
{
	skip_ws(r);
	return r->p < r->end && !r->failed ? (unsigned char)*r->p : -1;
}

/* Consumes c after white space or fails with "expected 'c'". */
static int expect(struct kpt_jr *r, char c, struct kpt_diag *d)
{
	char what[32];

	skip_ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return 0;
	}
	snprintf(what, sizeof what, r->p < r->end ? "expected '%c'" : "expected '%c', input ends", c);
	return bad(r, d, what);
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at r->p (the opening quote). With a, decodes it into a new
 * NUL-terminated copy (*out, *outlen); without, only checks it. The decoded
 * text is never longer than the source, so the copy is sized by it. */
static int string(struct kpt_jr *r, struct kpt_arena *a, const char **out, size_t *outlen,
		  struct kpt_diag *d)
{
	const char *s, *q;
	char *buf = NULL;
	size_t o = 0;

	if (expect(r, '"', d) < 0)
		return KPT_E_FORMAT;
	s = r->p;
	for (q = s; q < r->end && *q != '"'; q++) {
		if ((unsigned char)*q < 0x20) {
			r->p = q;
			return bad(r, d, "control character in a string");
		}
		if (*q == '\\' && ++q == r->end)
			break;
	}
	if (q >= r->end)
		return bad(r, d, "unterminated string");
	if ((size_t)(q - s) > KPT_JR_MAX_STRING)
		return bad(r, d, "string longer than 16 MiB");
	if (a && !(buf = kpt_arena_alloc(a, (size_t)(q - s) + 1)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory reading JSON");
	while (r->p < q) {
		char c = *r->p;
		unsigned cp, lo;
		char tmp[4];
		size_t n;

		if (c != '\\') {
			if (buf)
				buf[o++] = c;
			r->p++;
			continue;
		}
		switch (r->p[1]) {
		case '"': case '\\': case '/':
			tmp[0] = r->p[1];
			n = 1;
			break;
		case 'b': tmp[0] = '\b'; n = 1; break;
		case 'f': tmp[0] = '\f'; n = 1; break;
		case 'n': tmp[0] = '\n'; n = 1; break;
		case 'r': tmp[0] = '\r'; n = 1; break;
		case 't': tmp[0] = '\t'; n = 1; break;
		case 'u':
			if (q - r->p < 6 || hex4(r->p + 2, &cp) < 0)
				return bad(r, d, "bad \\u escape in a string");
			r->p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && q - r->p >= 8 && r->p[2] == '\\' && r->p[3] == 'u' &&
			    hex4(r->p + 4, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				r->p += 6;
			} else if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff)) {
				cp = 0xfffd;
			}
			/* 6 or 12 source bytes give at most 4 (3 for U+FFFD) */
			n = put_utf8(tmp, cp);
			break;
		default:
			return bad(r, d, "bad escape in a string");
		}
		if (buf) {
			memcpy(buf + o, tmp, n);
			o += n;
		}
		r->p += 2;
	}
	r->p = q + 1;
	if (buf) {
		buf[o] = '\0';
		*out = buf;
		*outlen = o;
	}
	return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A number as RFC 8259 writes it; r->p moves past it. */
static int number(struct kpt_jr *r, struct kpt_diag *d)
{
	const char *p = r->p;

	if (p >= r->end || (*p != '-' && !is_digit(*p)))
		return bad(r, d, "unexpected character");
	if (*p == '-')
		p++;
	if (p >= r->end || !is_digit(*p))
		return bad(r, d, "bad number");
	if (*p == '0')
		p++;
	else
		while (p < r->end && is_digit(*p))
			p++;
	if (p < r->end && *p == '.') {
		if (++p >= r->end || !is_digit(*p))
			return bad(r, d, "bad number: no digit after '.'");
		while (p < r->end && is_digit(*p))
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < r->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= r->end || !is_digit(*p))
			return bad(r, d, "bad number: no digit in the exponent");
		while (p < r->end && is_digit(*p))
			p++;
	}
	r->p = p;
	return 0;
}

static int literal(struct kpt_jr *r, const char *word, struct kpt_diag *d)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return bad(r, d, "unexpected character");
	r->p += n;
	return 0;
}

static struct kpt_jv *node(struct kpt_jr *r, struct kpt_arena *a, enum kpt_jv_type t,
			   struct kpt_diag *d)
{
	struct kpt_jv *v;

	if (++r->nodes > KPT_JR_MAX_NODES) {
		bad(r, d, "one value holds more than 2^20 items");
		return NULL;
	}
	if (!(v = kpt_arena_calloc(a, 1, sizeof *v))) {
		kpt_diag_set(d, KPT_E_NOMEM, "out of memory reading JSON");
		return NULL;
	}
	v->type = t;
	return v;
}

static int value(struct kpt_jr *r, struct kpt_arena *a, struct kpt_jv **out, int depth,
		 struct kpt_diag *d);

/* The items of an array or object after its opening bracket. */
static int items(struct kpt_jr *r, struct kpt_arena *a, struct kpt_jv *v, int is_object,
		 int depth, struct kpt_diag *d)
{
	struct kpt_jv **tail = v ? &v->child : NULL;
	char close = is_object ? '}' : ']';
	int rc;

	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t klen;
		struct kpt_jv *item = NULL;

		if (is_object) {
			skip_ws(r);
			if (r->p >= r->end || *r->p != '"')
				return bad(r, d, "expected a member name");
			if ((rc = string(r, a, &key, &klen, d)) < 0 || (rc = expect(r, ':', d)) < 0)
				return rc;
		}
		if ((rc = value(r, a, v ? &item : NULL, depth + 1, d)) < 0)
			return rc;
		if (v) {
			item->key = key;
			*tail = item;
			tail = &item->next;
			v->n++;
		}
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		return expect(r, close, d);
	}
}

static int value(struct kpt_jr *r, struct kpt_arena *a, struct kpt_jv **out, int depth,
		 struct kpt_diag *d)
{
	struct kpt_jv *v = NULL;
	const char *start;
	int rc = 0;
	int c;

	if (r->failed)
		return bad(r, d, "reader already failed");
	if ((c = kpt_jr_peek(r)) < 0)
		return bad(r, d, "input ends where a value is due");
	if ((c == '{' || c == '[') && depth >= KPT_JR_MAX_DEPTH)
		return bad(r, d, "nested deeper than 64");
	start = r->p;
	switch (c) {
	case '{':
	case '[':
		if (a && !(v = node(r, a, c == '{' ? KPT_JV_OBJECT : KPT_JV_ARRAY, d)))
			return d ? d->code : KPT_E_NOMEM;
		r->p++;
		rc = items(r, a, v, c == '{', depth, d);
		break;
	case '"':
		if (a && !(v = node(r, a, KPT_JV_STRING, d)))
			return d ? d->code : KPT_E_NOMEM;
		rc = string(r, a, v ? &v->s : NULL, v ? &v->len : NULL, d);
		break;
	case 't': case 'f': case 'n':
		rc = literal(r, c == 't' ? "true" : c == 'f' ? "false" : "null", d);
		if (rc == 0 && a && !(v = node(r, a, c == 't' ? KPT_JV_TRUE : c == 'f' ? KPT_JV_FALSE : KPT_JV_NULL, d)))
			return d ? d->code : KPT_E_NOMEM;
		break;
	default:
		rc = number(r, d);
		if (rc == 0 && a) {
			if (!(v = node(r, a, KPT_JV_NUMBER, d)))
				return d ? d->code : KPT_E_NOMEM;
			v->s = start;
			v->len = (size_t)(r->p - start);
		}
		break;
	}
	if (rc < 0)
		return rc;
	if (out)
		*out = v;
	return 0;
}

int kpt_jr_parse(struct kpt_jr *r, struct kpt_arena *a, struct kpt_jv **out, struct kpt_diag *d)
{
	r->nodes = 0;
	return value(r, a, out, r->depth, d);
}

static int begin(struct kpt_jr *r, char open, struct kpt_diag *d)
{
	if (r->failed)
		return bad(r, d, "reader already failed");
	if (r->depth >= KPT_JR_MAX_DEPTH)
		return bad(r, d, "nested deeper than 64");
	if (expect(r, open, d) < 0)
		return KPT_E_FORMAT;
	r->has_items[r->depth++] = 0;
	return 0;
}

int kpt_jr_begin_object(struct kpt_jr *r, struct kpt_diag *d) { return begin(r, '{', d); }
int kpt_jr_begin_array(struct kpt_jr *r, struct kpt_diag *d) { return begin(r, '[', d); }

/* Before an item of the innermost streamed container: its end (0), or the
 * comma an item after the first needs (1). */
static int next_item(struct kpt_jr *r, char close, struct kpt_diag *d)
{
	if (r->failed || r->depth == 0)
		return bad(r, d, "reader misused or already failed");
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 0;
	}
	if (r->has_items[r->depth - 1] && expect(r, ',', d) < 0)
		return KPT_E_FORMAT;
	r->has_items[r->depth - 1] = 1;
	return 1;
}

int kpt_jr_next_member(struct kpt_jr *r, struct kpt_arena *a, const char **key, struct kpt_diag *d)
{
	size_t len;
	int rc = next_item(r, '}', d);

	if (rc <= 0)
		return rc;
	skip_ws(r);
	if (r->p >= r->end || *r->p != '"')
		return bad(r, d, "expected a member name");
	if ((rc = string(r, a, key, &len, d)) < 0 || (rc = expect(r, ':', d)) < 0)
		return rc;
	return 1;
}

int kpt_jr_next_element(struct kpt_jr *r, struct kpt_diag *d)
{
	return next_item(r, ']', d);
}

int kpt_jr_finish(struct kpt_jr *r, struct kpt_diag *d)
{
	if (r->failed)
		return bad(r, d, "reader already failed");
	skip_ws(r);
	if (r->depth)
		return bad(r, d, "input ends inside a container");
	if (r->p != r->end)
		return bad(r, d, "more after the top-level value");
	return 0;
}

/* ---- accessors ---------------------------------------------------------- */

const struct kpt_jv *kpt_jv_get(const struct kpt_jv *obj, const char *key)
{
	if (!obj || obj->type != KPT_JV_OBJECT)
		return NULL;
	for (const struct kpt_jv *m = obj->child; m; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

const char *kpt_jv_str(const struct kpt_jv *v)
{
	return v && v->type == KPT_JV_STRING ? v->s : NULL;
}

/* Integer digits of a number's text: the magnitude (no overflow) and sign. */
static int integer(const struct kpt_jv *v, uint64_t *mag, int *neg)
{
	size_t i = 0;
	uint64_t m = 0;

	if (!v || v->type != KPT_JV_NUMBER)
		return -1;
	*neg = v->s[0] == '-';
	i = (size_t)*neg;
	for (; i < v->len; i++) {
		unsigned dgt;

		if (!is_digit(v->s[i]))
			return -1;      /* a fraction or an exponent */
		dgt = (unsigned)(v->s[i] - '0');
		if (m > (UINT64_MAX - dgt) / 10)
			return -1;
		m = m * 10 + dgt;
	}
	*mag = m;
	return 0;
}

int kpt_jv_u64(const struct kpt_jv *v, uint64_t *out)
{
	uint64_t m;
	int neg;

	if (integer(v, &m, &neg) < 0 || (neg && m))
		return -1;
	*out = m;
	return 0;
}

int kpt_jv_i64(const struct kpt_jv *v, int64_t *out)
{
	uint64_t m;
	int neg;

	if (integer(v, &m, &neg) < 0 || m > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

uint32_t kpt_jv_u32_or(const struct kpt_jv *v, uint32_t dflt)
{
	uint64_t u;

	return kpt_jv_u64(v, &u) == 0 && u <= UINT32_MAX ? (uint32_t)u : dflt;
}

int kpt_jv_double(const struct kpt_jv *v, double *out)
{
	char buf[64];
	char *e;

	if (!v || v->type != KPT_JV_NUMBER || v->len >= sizeof buf)
		return -1;
	memcpy(buf, v->s, v->len);
	buf[v->len] = '\0';
	errno = 0;
	*out = strtod(buf, &e);
	return *e == '\0' && isfinite(*out) ? 0 : -1;
}

int kpt_jv_milli(const struct kpt_jv *v, int64_t *out)
{
	uint64_t m = 0;
	size_t i;
	int neg, frac = 0, round = 0;

	if (!v || v->type != KPT_JV_NUMBER)
		return -1;
	neg = v->s[0] == '-';
	for (i = (size_t)neg; i < v->len && is_digit(v->s[i]); i++) {
		if (m > (UINT64_MAX - 9) / 10)
			return -1;
		m = m * 10 + (unsigned)(v->s[i] - '0');
	}
	if (i < v->len && v->s[i] == '.')
		for (i++; i < v->len && is_digit(v->s[i]); i++) {
			if (frac < 3) {
				if (m > (UINT64_MAX - 9) / 10)
					return -1;
				m = m * 10 + (unsigned)(v->s[i] - '0');
				frac++;
			} else if (frac == 3) {
				round = v->s[i] >= '5';
				frac++;
			}
		}
	if (i < v->len) {           /* an exponent: rare, through a double */
		double x;

		if (kpt_jv_double(v, &x) < 0 || fabs(x * 1000.0) >= 9.2e18)
			return -1;
		*out = llround(x * 1000.0);
		return 0;
	}
	for (; frac < 3; frac++) {
		if (m > UINT64_MAX / 10)
			return -1;
		m *= 10;
	}
	m += (uint64_t)round;
	if (m > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)m : (int64_t)m;
	return 0;
}
