/* kpt_json.c - streaming JSON writer (see kpt_json.h). */
#include "kpt_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fail(struct kpt_json *j, int err)
{
	if (!j->err) {
		j->err = err;
		j->sys_errno = err == KPT_E_IO ? errno : 0;
	}
}

/* The writer is used from one thread at a time (like every kpt object), so
 * stdio's per-call locking is skipped: it was a third of export time. */
static size_t write_bytes(const void *s, size_t n, FILE *out)
{
	const char *c = s;

	if (n > 16)
		return fwrite_unlocked(s, 1, n, out);
	/* short pieces (punctuation, keys, numbers) are most of the calls:
	 * putc_unlocked stores straight into the stdio buffer */
	for (size_t i = 0; i < n; i++)
		if (putc_unlocked(c[i], out) == EOF)
			return i;
	return n;
}

static void put(struct kpt_json *j, const char *s, size_t n)
{
	if (!j->err && n && write_bytes(s, n, j->out) != n)
		fail(j, KPT_E_IO);
}

/* Decimal digits of v, right-aligned ending at end; returns the first. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static void newline_indent(struct kpt_json *j, int level)
{
	static const char spaces[] = "                                ";

	put(j, "\n", 1);
	for (int n = 2 * level; n > 0; n -= (int)sizeof spaces - 1)
		put(j, spaces, n < (int)sizeof spaces - 1 ? (size_t)n : sizeof spaces - 1);
}

/* Everything a value needs before it: a comma and/or line break inside a
 * container; a check that a key was given inside an object. */
static int before_value(struct kpt_json *j)
{
	if (j->err)
		return -1;
	if (j->depth == 0) {
		if (j->done) {
			fail(j, KPT_E_INVAL);
			return -1;
		}
		return 0;
	}
	if (j->is_object[j->depth - 1]) {
		if (!j->want_value) {
			fail(j, KPT_E_INVAL);
			return -1;
		}
		j->want_value = 0;
		return 0;
	}
	if (j->has_items[j->depth - 1])
		put(j, ",", 1);
	if (j->depth <= j->pretty_depth)
		newline_indent(j, j->depth);
	j->has_items[j->depth - 1] = 1;
	return 0;
}

static void after_value(struct kpt_json *j)
{
	if (j->depth == 0)
		j->done = 1;
}

void kpt_json_init(struct kpt_json *j, FILE *out, int pretty_depth)
{
	memset(j, 0, sizeof *j);
	j->out = out;
	j->pretty_depth = pretty_depth;
}

static void begin(struct kpt_json *j, int is_object)
{
	if (before_value(j) < 0)
		return;
	if (j->depth >= KPT_JSON_MAX_DEPTH) {
		fail(j, KPT_E_INVAL);
		return;
	}
	put(j, is_object ? "{" : "[", 1);
	j->is_object[j->depth] = (unsigned char)is_object;
	j->has_items[j->depth] = 0;
	j->depth++;
}

static void end(struct kpt_json *j, int is_object)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->is_object[j->depth - 1] != is_object || j->want_value) {
		fail(j, KPT_E_INVAL);
		return;
	}
	j->depth--;
	if (j->has_items[j->depth] && j->depth < j->pretty_depth)
		newline_indent(j, j->depth);
	put(j, is_object ? "}" : "]", 1);
	after_value(j);
}

void kpt_json_begin_object(struct kpt_json *j) { begin(j, 1); }
void kpt_json_end_object(struct kpt_json *j) { end(j, 1); }
void kpt_json_begin_array(struct kpt_json *j) { begin(j, 0); }
void kpt_json_end_array(struct kpt_json *j) { end(j, 0); }

void kpt_json_key(struct kpt_json *j, const char *key)
{
	if (j->err)
		return;
	if (j->depth == 0 || !j->is_object[j->depth - 1] || j->want_value) {
		fail(j, KPT_E_INVAL);
		return;
	}
	if (j->has_items[j->depth - 1])
		put(j, ",", 1);
	if (j->depth <= j->pretty_depth)
		newline_indent(j, j->depth);
	j->has_items[j->depth - 1] = 1;
	if (!j->err && kpt_json_write_string(j->out, key, key ? strlen(key) : 0) < 0)
		fail(j, KPT_E_IO);
	put(j, j->depth <= j->pretty_depth ? ": " : ":", j->depth <= j->pretty_depth ? 2 : 1);
	j->want_value = 1;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;   /* allowed range of the second byte */

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;            /* overlong */
		else if (c == 0xed)
			hi = 0x9f;            /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;            /* overlong */
		else if (c == 0xf4)
			hi = 0x8f;            /* above U+10FFFF */
	} else
		return 0;
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Escapes for the bytes below 0x20 that have a short form; others \u00XX. */
static const char *const short_escapes[0x20] = {
	['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
};

int kpt_json_write_string(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;   /* s[run..i) is written verbatim when flushed */
	int ok = putc_unlocked('"', out) != EOF;

	while (ok && i < len) {
		unsigned char c = s[i];
		char esc[8];
		const char *e = NULL;
		size_t step = 1;

		if (c == '"')
			e = "\\\"";
		else if (c == '\\')
			e = "\\\\";
		else if (c < 0x20) {
			e = short_escapes[c];
			if (!e) {
				snprintf(esc, sizeof esc, "\\u%04x", c);
				e = esc;
			}
		} else if (c >= 0x80) {
			step = utf8_len(s + i, len - i);
			if (!step) {
				e = "\\ufffd";
				step = 1;
			}
		}
		if (e) {
			size_t elen = strlen(e);

			ok = write_bytes(s + run, i - run, out) == i - run &&
			     write_bytes(e, elen, out) == elen;
			run = i + step;
		}
		i += step;
	}
	ok = ok && write_bytes(s + run, i - run, out) == i - run && putc_unlocked('"', out) != EOF;
	return ok ? 0 : KPT_E_IO;
}

void kpt_json_strn(struct kpt_json *j, const char *s, size_t len)
{
	if (!s) {
		kpt_json_null(j);
		return;
	}
	if (before_value(j) < 0)
		return;
	if (kpt_json_write_string(j->out, s, len) < 0)
		fail(j, KPT_E_IO);
	after_value(j);
}

void kpt_json_str(struct kpt_json *j, const char *s)
{
	kpt_json_strn(j, s, s ? strlen(s) : 0);
}

static void literal(struct kpt_json *j, const char *text)
{
	if (before_value(j) < 0)
		return;
	put(j, text, strlen(text));
	after_value(j);
}

void kpt_json_u64(struct kpt_json *j, uint64_t v)
{
	char buf[24];

	buf[23] = '\0';
	literal(j, u64_digits(v, buf + 23));
}

void kpt_json_i64(struct kpt_json *j, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	literal(j, buf);
}

void kpt_json_double(struct kpt_json *j, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		literal(j, "null");
		return;
	}
	/* 15 significant digits when they read back exactly, else 17 (always
	 * round-trips). %g never writes a bare "." or "inf" for finite v. */
	snprintf(buf, sizeof buf, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	literal(j, buf);
}

void kpt_json_ns_as_us(struct kpt_json *j, int64_t ns)
{
	char buf[32], *p = buf + sizeof buf - 1;
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	*p = '\0';
	for (int i = 0; i < 3; i++, a /= 10)
		*--p = (char)('0' + a % 10);
	*--p = '.';
	p = u64_digits(a, p);
	if (ns < 0)
		*--p = '-';
	literal(j, p);
}

void kpt_json_bool(struct kpt_json *j, int v) { literal(j, v ? "true" : "false"); }
void kpt_json_null(struct kpt_json *j) { literal(j, "null"); }

void kpt_json_kv_str(struct kpt_json *j, const char *key, const char *s)
{
	kpt_json_key(j, key);
	kpt_json_str(j, s);
}

void kpt_json_kv_u64(struct kpt_json *j, const char *key, uint64_t v)
{
	kpt_json_key(j, key);
	kpt_json_u64(j, v);
}

void kpt_json_kv_i64(struct kpt_json *j, const char *key, int64_t v)
{
	kpt_json_key(j, key);
	kpt_json_i64(j, v);
}

void kpt_json_kv_double(struct kpt_json *j, const char *key, double v)
{
	kpt_json_key(j, key);
	kpt_json_double(j, v);
}

void kpt_json_kv_bool(struct kpt_json *j, const char *key, int v)
{
	kpt_json_key(j, key);
	kpt_json_bool(j, v);
}

int kpt_json_finish(struct kpt_json *j, struct kpt_diag *d)
{
	if (!j->err && (j->depth || !j->done))
		fail(j, KPT_E_INVAL);
	put(j, "\n", 1);
	if (!j->err && fflush(j->out) != 0)
		fail(j, KPT_E_IO);
	if (j->err == KPT_E_IO)
		return kpt_diag_set(d, KPT_E_IO, "cannot write JSON: %s",
				    strerror(j->sys_errno ? j->sys_errno : EIO));
	if (j->err)
		return kpt_diag_set(d, KPT_E_INVAL,
				    "JSON writer misused: unbalanced containers or a value without a key");
	return 0;
}
