/* kpt_json.h - a streaming JSON writer to a FILE*.
 *
 * Writes as it goes: memory is O(nesting depth), whatever the size of the
 * document, so a 10-million-event export streams through it.
 *
 * Usage:
 *	struct kpt_json j;
 *	kpt_json_init(&j, stdout, 1);
 *	kpt_json_begin_object(&j);
 *	kpt_json_kv_str(&j, "name", name);
 *	kpt_json_key(&j, "sizes");
 *	kpt_json_begin_array(&j);
 *	kpt_json_u64(&j, 42);
 *	kpt_json_end_array(&j);
 *	kpt_json_end_object(&j);
 *	if (kpt_json_finish(&j, &diag) < 0) ...
 *
 * Errors are sticky: the value functions return nothing, the first I/O error
 * or misuse (a value where a key is due, unbalanced ends, nesting deeper than
 * KPT_JSON_MAX_DEPTH) is remembered, later calls do nothing, and
 * kpt_json_finish() reports it. So call sites stay one line per value.
 *
 * Strings are escaped for any input bytes: '"', '\\' and control characters
 * are escaped, invalid UTF-8 (stray continuation bytes, overlong forms,
 * surrogates, code points above U+10FFFF, truncated sequences) becomes
 * \ufffd, one per offending byte. Non-finite doubles are written as null.
 * The output is always valid JSON (RFC 8259) once finish succeeds.
 */
#ifndef KPT_JSON_H
#define KPT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kpt_err.h"

#define KPT_JSON_MAX_DEPTH 64

struct kpt_json {
	FILE *out;
	int pretty_depth;           /* see kpt_json_init */
	int depth;                  /* open containers */
	int err;                    /* first error (enum kpt_err), 0 none */
	int want_value;             /* a key was written; its value is due */
	int done;                   /* the top-level value is complete */
	int sys_errno;              /* errno of the first failed write */
	unsigned char is_object[KPT_JSON_MAX_DEPTH];
	unsigned char has_items[KPT_JSON_MAX_DEPTH];
};

/* Starts a document on out (not owned; not closed by finish). pretty_depth:
 * elements of containers nested less than this deep go on their own line,
 * indented by two spaces per level; deeper ones are written compactly.
 * 0: everything on one line; INT32_MAX: fully indented; 2: one line per
 * element of a top-level object's arrays (one Chrome trace event per line). */
void kpt_json_init(struct kpt_json *j, FILE *out, int pretty_depth);

void kpt_json_begin_object(struct kpt_json *j);
void kpt_json_end_object(struct kpt_json *j);
void kpt_json_begin_array(struct kpt_json *j);
void kpt_json_end_array(struct kpt_json *j);
/* An object member's name; the next call must write its value. */
void kpt_json_key(struct kpt_json *j, const char *key);

/* s NULL writes null. len bytes, embedded NULs are escaped as \u0000. */
void kpt_json_str(struct kpt_json *j, const char *s);
void kpt_json_strn(struct kpt_json *j, const char *s, size_t len);
void kpt_json_u64(struct kpt_json *j, uint64_t v);
void kpt_json_i64(struct kpt_json *j, int64_t v);
/* Shortest form that reads back to the same double; NaN and +-inf: null. */
void kpt_json_double(struct kpt_json *j, double v);
/* ns as microseconds with exactly three decimals ("1234.567"), computed in
 * integers so no precision is lost (Chrome trace "ts"/"dur"). */
void kpt_json_ns_as_us(struct kpt_json *j, int64_t ns);
void kpt_json_bool(struct kpt_json *j, int v);
void kpt_json_null(struct kpt_json *j);

/* key + value in one call. */
void kpt_json_kv_str(struct kpt_json *j, const char *key, const char *s);
void kpt_json_kv_u64(struct kpt_json *j, const char *key, uint64_t v);
void kpt_json_kv_i64(struct kpt_json *j, const char *key, int64_t v);
void kpt_json_kv_double(struct kpt_json *j, const char *key, double v);
void kpt_json_kv_bool(struct kpt_json *j, const char *key, int v);

/* Writes str escaped, with its quotes, to out. Returns 0 or KPT_E_IO. The
 * escaping core, for writers of other formats that embed JSON strings. */
int kpt_json_write_string(FILE *out, const char *s, size_t len);

/* Checks the document is complete (every container closed, one top-level
 * value), writes a final newline and flushes. Returns 0, or KPT_E_IO (write
 * failed: errno text in d) / KPT_E_INVAL (misuse) with d filled. */
int kpt_json_finish(struct kpt_json *j, struct kpt_diag *d);

#endif
