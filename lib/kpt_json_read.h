/* kpt_json_read.h - a bounded JSON reader over a buffer in memory, for
 * importing traces other tools wrote (untrusted input).
 *
 * Two levels, so a 2 GB trace never becomes a 2 GB tree:
 *   - streaming: walk the members of an object and the elements of an
 *     array one at a time (kpt_jr_begin_object/next_member,
 *     kpt_jr_begin_array/next_element) without building anything;
 *   - tree: kpt_jr_parse() reads one whole value (say, one trace event)
 *     into nodes allocated from an arena the caller owns and releases when
 *     done with that value.
 *
 * Input must be RFC 8259 JSON: no comments, no trailing commas, no NaN.
 * Strings are decoded (escapes, surrogate pairs) to UTF-8; \u0000 and lone
 * surrogates become U+FFFD so decoded strings never hold a NUL; other bytes
 * are passed through as they are (sinks clean text for their use).
 *
 * Bounds (exceeding one is an error, never a truncation): nesting deeper
 * than KPT_JR_MAX_DEPTH, a string longer than KPT_JR_MAX_STRING bytes, more
 * than KPT_JR_MAX_NODES nodes in one kpt_jr_parse() tree.
 *
 * Errors are KPT_E_FORMAT with a one-line diag "bad JSON at byte N: <what>"
 * (the caller prefixes the file name); the reader stays failed afterwards.
 * Cost: O(input) time; memory O(depth) streaming, O(value) for a tree.
 */
#ifndef KPT_JSON_READ_H
#define KPT_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"
#include "kpt_err.h"

#define KPT_JR_MAX_DEPTH 64
#define KPT_JR_MAX_STRING ((size_t)16 << 20)
#define KPT_JR_MAX_NODES ((size_t)1 << 20)

enum kpt_jv_type {
	KPT_JV_NULL,
	KPT_JV_FALSE,
	KPT_JV_TRUE,
	KPT_JV_NUMBER,
	KPT_JV_STRING,
	KPT_JV_ARRAY,
	KPT_JV_OBJECT,
};

/* One node of a tree. Strings and keys are NUL-terminated copies in the
 * arena; a number keeps its text (validated, not terminated; read it with
 * the kpt_jv_* accessors). Children are a list: child, then next. */
struct kpt_jv {
	enum kpt_jv_type type;
	const char *s;              /* STRING: decoded text; NUMBER: its text */
	size_t len;                 /* bytes of s */
	const char *key;            /* member name inside an object, else NULL */
	struct kpt_jv *child;       /* first element or member */
	struct kpt_jv *next;        /* next sibling */
	size_t n;                   /* number of elements or members */
};

struct kpt_jr {
	const char *base, *p, *end;
	int depth;                  /* open streamed containers */
	int failed;
	size_t nodes;               /* nodes of the tree being parsed */
	unsigned char has_items[KPT_JR_MAX_DEPTH];
};

/* Reads len bytes at buf (not copied: keep them alive while reading). */
void kpt_jr_init(struct kpt_jr *r, const void *buf, size_t len);

/* The first byte of the next value after white space ('{', '[', '"', a
 * digit...), or -1 at the end of input. Does not consume it. */
int kpt_jr_peek(struct kpt_jr *r);

/* Streaming. begin_* consume the opening bracket. next_member returns 1
 * with *key (decoded into a, valid until a is released) when a member
 * follows, its value next in the input (parse or skip it before the next
 * call); 0 after the closing brace; negative on error. next_element returns
 * 1 when an element follows, 0 after the closing bracket. */
int kpt_jr_begin_object(struct kpt_jr *r, struct kpt_diag *d);
int kpt_jr_next_member(struct kpt_jr *r, struct kpt_arena *a, const char **key,
		       struct kpt_diag *d);
int kpt_jr_begin_array(struct kpt_jr *r, struct kpt_diag *d);
int kpt_jr_next_element(struct kpt_jr *r, struct kpt_diag *d);

/* Reads one whole value into a tree allocated from a and stores its root in
 * *out. With a NULL, only checks and skips the value (*out untouched; out
 * may be NULL). */
int kpt_jr_parse(struct kpt_jr *r, struct kpt_arena *a, struct kpt_jv **out,
		 struct kpt_diag *d);
/* After the top-level value: only white space may remain. */
int kpt_jr_finish(struct kpt_jr *r, struct kpt_diag *d);

/* Tree accessors. NULL-safe: a NULL or mistyped node reads as absent. */
const struct kpt_jv *kpt_jv_get(const struct kpt_jv *obj, const char *key);
/* Its string, or NULL when v is not a string. */
const char *kpt_jv_str(const struct kpt_jv *v);
/* 0 and *out set when v is a number that is an integer in range (no
 * fraction, no exponent); -1 otherwise. */
int kpt_jv_u64(const struct kpt_jv *v, uint64_t *out);
int kpt_jv_i64(const struct kpt_jv *v, int64_t *out);
/* v as a u32, or dflt when absent, not an integer or out of range. */
uint32_t kpt_jv_u32_or(const struct kpt_jv *v, uint32_t dflt);
int kpt_jv_double(const struct kpt_jv *v, double *out);
/* v times 1000 as an integer, exactly for plain decimals (digits beyond
 * the third fraction digit round half away from zero): microseconds with
 * a fraction to nanoseconds without the precision loss of a double (an
 * epoch in ns needs 61 bits). Exponent forms go through a double. -1 when
 * v is not a number or the result does not fit in an int64_t. */
int kpt_jv_milli(const struct kpt_jv *v, int64_t *out);

#endif
