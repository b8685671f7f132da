/* kpt_text.h - untrusted text made safe for each place it is written to.
 *
 * Kernel names, NVTX ranges, GPU names, meta values (command, host,
 * commit, suite) and file names all come from a recording or a store that
 * someone else wrote. Every writer that puts such text into a terminal,
 * an HTML/SVG/XML document, Markdown, CSV, a gnuplot script or a file name
 * goes through this module, so the rules for each sink live in one place:
 *
 *   KPT_TEXT_TERM       a terminal line: C0 controls (ESC, CR, LF, TAB, ...),
 *                       DEL, C1 controls (U+0080..U+009F), bidirectional
 *                       overrides and isolates (U+202A..U+202E,
 *                       U+2066..U+2069), U+2028/U+2029 and invalid UTF-8
 *                       are shown as escapes: "\e" "\r" "\n" "\t", "\xNN"
 *                       for other bytes, "\u{NNNN}" for code points. A
 *                       cleaned name never moves the cursor, starts a line,
 *                       sets a colour or reorders what follows it.
 *   KPT_TEXT_MARKUP     HTML, SVG and XML text or a quoted attribute value:
 *                       & < > " ' as entities, TAB LF CR as numeric
 *                       references (kept, but never raw), other controls and
 *                       invalid UTF-8 as U+FFFD (not allowed in XML 1.0).
 *                       In this and every sink below but CSV, the code
 *                       points TERM escapes (C1, bidi, U+2028/9) are U+FFFD
 *                       too: such files are also read with cat.
 *   KPT_TEXT_MD         Markdown inline text, also inside a GFM table cell
 *                       or at the start of a list item: \ ` * _ [ ] < > & |
 *                       ~ # @ $ backslash-escaped, and a leading - + = or the
 *                       . or ) after leading digits (CommonMark renders "\X"
 *                       as X for ASCII punctuation, so the rendered text has
 *                       no stray backslash), controls and invalid UTF-8 as
 *                       U+FFFD.
 *   KPT_TEXT_MD_CODE    a Markdown code span outside a table, fences
 *                       included: the fence is one backtick longer than the
 *                       longest backtick run of s, padded with a space where
 *                       GFM would strip one; inside a code span a backslash
 *                       is literal, so nothing is backslash-escaped.
 *   KPT_TEXT_MD_CELL_CODE  the same inside a GFM table cell, where the
 *                       table parser removes the backslash of "\|" first.
 *   KPT_TEXT_CSV        an RFC 4180 field, quoted when it holds , " CR or
 *                       LF ('"' doubled); invalid UTF-8 as U+FFFD. Control
 *                       characters are data here and kept (a CSV reader
 *                       gets the exact name back).
 *   KPT_TEXT_GNUPLOT    a gnuplot single-quoted string, quotes included:
 *                       ' doubled (the only escape gnuplot reads in '...';
 *                       backslashes stay literal), controls and invalid
 *                       UTF-8 as U+FFFD. Meant for scripts that set
 *                       "noenhanced" (no ^ _ @ { } markup).
 *   KPT_TEXT_GNUPLOT_FIELD  a double-quoted field of an inline data block:
 *                       '"' becomes '\'', controls and invalid UTF-8 U+FFFD.
 *   KPT_TEXT_FILENAME   one path component: bytes outside [A-Za-z0-9._+-]
 *                       as '_', a leading '.' or '-' as '_', at most 120
 *                       bytes, "_" for an empty string; never "." or "..".
 *
 * The empty string and NULL are written as the sink writes "" (the code
 * sinks and CSV write their quotes or fences; the others nothing; the
 * file-name sink "_").
 */
#ifndef KPT_TEXT_H
#define KPT_TEXT_H

#include <stddef.h>
#include <stdio.h>

enum kpt_text_sink {
	KPT_TEXT_TERM,
	KPT_TEXT_MARKUP,
	KPT_TEXT_MD,
	KPT_TEXT_MD_CODE,
	KPT_TEXT_MD_CELL_CODE,
	KPT_TEXT_CSV,
	KPT_TEXT_GNUPLOT,
	KPT_TEXT_GNUPLOT_FIELD,
	KPT_TEXT_FILENAME,
	KPT_TEXT_NSINKS
};

/* Writes s cleaned for sink. Returns 0, or KPT_E_IO when a write failed. */
int kpt_text_write(FILE *out, enum kpt_text_sink sink, const char *s);
/* The same for the first n bytes of s (an embedded NUL is a control). */
int kpt_text_write_n(FILE *out, enum kpt_text_sink sink, const char *s, size_t n);

/* s cleaned for sink in a new string the caller frees; NULL when out of
 * memory. O(strlen(s)). */
char *kpt_text_dup(enum kpt_text_sink sink, const char *s);

/* Cleaned copies for printf-style writers. kpt_text_pool_clean returns s
 * itself when the sink would write it unchanged (a plain name costs one
 * scan and no allocation), otherwise a copy owned by the pool, valid until
 * kpt_text_pool_release; "?" when out of memory (still safe to print).
 * For the sinks that do not add quotes or fences (TERM, MARKUP, MD). */
struct kpt_text_piece;
struct kpt_text_pool {
	struct kpt_text_piece *head;
};
const char *kpt_text_pool_clean(struct kpt_text_pool *p, enum kpt_text_sink sink, const char *s);
/* Frees every copy; the pool can be used again. */
void kpt_text_pool_release(struct kpt_text_pool *p);

/* Length of the valid UTF-8 sequence at s, at most n bytes (1..4), or 0
 * when it is not valid (overlong forms, surrogates, above U+10FFFF,
 * truncated, a stray continuation byte). */
size_t kpt_utf8_len(const unsigned char *s, size_t n);

/* Columns of s on a terminal, counted as code points (every byte of an
 * invalid sequence counts one): what the padding of a table needs. */
size_t kpt_text_columns(const char *s);

/* How a name too long for its column is cut. */
enum kpt_text_cut {
	KPT_CUT_TAIL,   /* "..." and the tail: a path's last parts, a size */
	KPT_CUT_MIDDLE, /* head "..." tail: a C++ name keeps its start and parameters */
	KPT_CUT_CXX,    /* a C++ name: the longest of its shorter forms that fits
			 * (kpt_text_cxx_forms), then MIDDLE of the shortest */
};

/* The forms of a demangled C++ name, each shorter or equal, longest first:
 * [0] s itself; then without return type and parameters, "(anonymous
 * namespace)::" and the space after commas
 * ("(anonymous namespace)::ns::gemm<float, 128, true>(CUtensorMap_st, int)"
 * -> "ns::gemm<float,128,true>"); the last scope only ("gemm<...>"; an
 * operator or lambda keeps its owner: "Op::operator()"); then namespaces
 * inside the template arguments dropped; nested template lists as "<...>";
 * fewer template arguments ("gemm<float,128,...>"); none ("gemm<...>").
 * Equal neighbours are left out; a name that is not C++ has one form.
 * "..." is ASCII: 3 columns, greppable, on every terminal. Sets *forms
 * (free with kpt_text_cxx_forms_free) and *n; 0 or KPT_E_NOMEM. O(k len)
 * for k forms. */
int kpt_text_cxx_forms(const char *s, char ***forms, size_t *n);
/* The form that shows template argument k of s's last scope and hides the
 * others: "multi_tensor_apply_kernel<...,UnaryOpFunctor<...>,...>" (nested
 * lists of the argument as "<...>" unless `nested`). What tells apart names
 * whose shorter forms are alike. A new string; NULL when s has no
 * argument k or out of memory. */
char *kpt_text_cxx_arg_form(const char *s, size_t k, int nested);
void kpt_text_cxx_forms_free(char **forms, size_t n);

/* s (one line, already cleaned) written from column `start` of the
 * current line, broken at spaces so that no line passes `width` columns
 * (a word longer than a line is broken where it must), continuation lines
 * indented by `indent` spaces; ends with a newline. width 0: one line.
 * Returns 0 or KPT_E_IO. */
int kpt_text_wrap(FILE *out, const char *s, size_t start, size_t width, size_t indent);

/* The n strings s[i] (one-line text, e.g. cleaned with KPT_TEXT_TERM)
 * fitted to a table column of cols columns; cols 0 cuts nothing. Strings
 * that differ never come out the same: where a cut would make two alike,
 * it moves to show where they differ ("...bf16.per_token.8192..."), and a
 * string that still collides stays whole (wider than the column). Sets
 * out[i] to a new string each (free them with kpt_text_column_free).
 * Returns 0 or KPT_E_NOMEM (out all NULL). O(n log n) comparisons. */
int kpt_text_column(const char *const *s, size_t n, size_t cols, enum kpt_text_cut how, char **out);
void kpt_text_column_free(char **out, size_t n);

#endif
