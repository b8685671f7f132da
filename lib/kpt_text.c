/* kpt_text.c - text cleaned for each sink (see kpt_text.h). */
#define _GNU_SOURCE /* qsort_r */
#include "kpt_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */
#define NAME_MAX_BYTES 120

size_t kpt_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The code point of the valid sequence of len bytes at s. */
static uint32_t code_point(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Code points a terminal acts on or that change how the rest of a line
 * reads: C1 controls, bidi embeddings/overrides/isolates, line and
 * paragraph separators. */
static int term_hazard(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c;
}

/* ---- one sink at a time: each writes one unit (byte or sequence) -------- */

struct writer {
	FILE *out;
	int ok;
};

static void put(struct writer *w, const char *s, size_t n)
{
	if (w->ok && n && fwrite(s, 1, n, w->out) != n)
		w->ok = 0;
}

static void puts_(struct writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* ASCII byte c: its replacement in sink, or NULL to copy it. Controls (and
 * DEL) are handled by the caller. */
static const char *ascii_rep(enum kpt_text_sink sink, unsigned char c)
{
	static const char *const markup[128] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
		['\t'] = "&#9;", ['\n'] = "&#10;", ['\r'] = "&#13;",
	};
	/* what starts markup inline in GFM (and GitHub's @mentions and $math$);
	 * CommonMark renders "\\X" as X for any ASCII punctuation X */
	static const char *const md[128] = {
		['\\'] = "\\\\", ['`'] = "\\`", ['*'] = "\\*", ['_'] = "\\_", ['['] = "\\[", [']'] = "\\]",
		['<'] = "\\<", ['>'] = "\\>", ['&'] = "\\&", ['|'] = "\\|", ['~'] = "\\~", ['#'] = "\\#",
		['@'] = "\\@", ['$'] = "\\$",
	};

	switch (sink) {
	case KPT_TEXT_MARKUP:
		return markup[c];
	case KPT_TEXT_MD:
		return md[c];
	case KPT_TEXT_MD_CELL_CODE:
		return c == '|' ? "\\|" : NULL;
	case KPT_TEXT_CSV:
		return c == '"' ? "\"\"" : NULL;
	case KPT_TEXT_GNUPLOT:
		return c == '\'' ? "''" : NULL;
	case KPT_TEXT_GNUPLOT_FIELD:
		return c == '"' ? "'" : NULL;
	default:
		return NULL;
	}
}

static void term_escape_byte(struct writer *w, unsigned char c)
{
	static const char *const named[32] = { ['\033'] = "\\e", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t" };
	char b[8];

	if (c < 32 && named[c]) {
		puts_(w, named[c]);
		return;
	}
	snprintf(b, sizeof b, "\\x%02x", c);
	puts_(w, b);
}

/* Writes the n bytes at s for sink, one unit at a time. */
static void write_units(struct writer *w, enum kpt_text_sink sink, const unsigned char *s, size_t n)
{
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len = kpt_utf8_len(s + i, n - i);
		const char *rep = NULL;
		int ctrl = len == 1 && (c < 0x20 || c == 0x7f);

		if (len == 1 && (rep = ascii_rep(sink, c)) != NULL) {
			/* rep chosen */
		} else if (sink == KPT_TEXT_TERM && (len == 0 || ctrl)) {
			put(w, (const char *)s + run, i - run);
			term_escape_byte(w, c);
			run = ++i;
			continue;
		} else if (sink == KPT_TEXT_TERM && len > 1 && term_hazard(code_point(s + i, len))) {
			char b[16];

			put(w, (const char *)s + run, i - run);
			snprintf(b, sizeof b, "\\u{%04x}", (unsigned)code_point(s + i, len));
			puts_(w, b);
			run = i += len;
			continue;
		} else if (len == 0 || (sink != KPT_TEXT_CSV && (ctrl || (len > 1 && term_hazard(code_point(s + i, len)))))) {
			rep = REPLACEMENT;
		} else {
			i += len;
			continue;
		}
		put(w, (const char *)s + run, i - run);
		puts_(w, rep);
		run = i += len ? len : 1;
	}
	put(w, (const char *)s + run, i - run);
}

/* The longest run of c in the n bytes at s. */
static size_t longest_run(const char *s, size_t n, char c)
{
	size_t best = 0, cur = 0;

	for (size_t i = 0; i < n; i++) {
		cur = s[i] == c ? cur + 1 : 0;
		if (cur > best)
			best = cur;
	}
	return best;
}

static void md_code(struct writer *w, enum kpt_text_sink sink, const char *s, size_t n)
{
	size_t fence = longest_run(s, n, '`') + 1;
	/* GFM strips one space from both ends when both are spaces, and a
	 * backtick next to the fence would join it: pad with one space each. */
	int pad = n && (s[0] == '`' || s[n - 1] == '`' || (s[0] == ' ' && s[n - 1] == ' '));

	if (n == 0) {
		puts_(w, "` `");
		return;
	}
	for (size_t i = 0; i < fence; i++)
		put(w, "`", 1);
	if (pad)
		put(w, " ", 1);
	write_units(w, sink, (const unsigned char *)s, n);
	if (pad)
		put(w, " ", 1);
	for (size_t i = 0; i < fence; i++)
		put(w, "`", 1);
}

static int file_name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-' || c == '+';
}

static void file_name(struct writer *w, const char *s, size_t n)
{
	size_t m = n < NAME_MAX_BYTES ? n : NAME_MAX_BYTES;

	if (m == 0) {
		put(w, "_", 1);
		return;
	}
	for (size_t i = 0; i < m; i++) {
		unsigned char c = (unsigned char)s[i];

		put(w, (i == 0 && (c == '.' || c == '-')) || !file_name_byte(c) ? "_" : (const char *)&s[i], 1);
	}
}

int kpt_text_write_n(FILE *out, enum kpt_text_sink sink, const char *s, size_t n)
{
	struct writer w = { out, 1 };

	if (!s)
		s = "", n = 0;
	switch (sink) {
	case KPT_TEXT_MD_CODE:
	case KPT_TEXT_MD_CELL_CODE:
		md_code(&w, sink, s, n);
		break;
	case KPT_TEXT_CSV: {
		int quote = memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\r', n) || memchr(s, '\n', n);

		if (quote)
			put(&w, "\"", 1);
		write_units(&w, sink, (const unsigned char *)s, n);
		if (quote)
			put(&w, "\"", 1);
		break;
	}
	case KPT_TEXT_GNUPLOT:
		put(&w, "'", 1);
		write_units(&w, sink, (const unsigned char *)s, n);
		put(&w, "'", 1);
		break;
	case KPT_TEXT_GNUPLOT_FIELD:
		put(&w, "\"", 1);
		write_units(&w, sink, (const unsigned char *)s, n);
		put(&w, "\"", 1);
		break;
	case KPT_TEXT_FILENAME:
		file_name(&w, s, n);
		break;
	case KPT_TEXT_MD: {
		/* at the start of a line or list item, "- ", "+ ", "--", "=" and
		 * "1. " or "1) " start blocks: escape that punctuation */
		size_t k = 0;

		while (k < n && k < 9 && s[k] >= '0' && s[k] <= '9')
			k++;
		/* a marker needs a blank or the end after it ("580.1" is text) */
		int blank = k + 1 >= n || s[k + 1] == ' ' || s[k + 1] == '\t';

		if (n && ((k == 0 && (s[0] == '=' || ((s[0] == '-' || s[0] == '+') && (blank || s[1] == '-')))) ||
			  (k && k < n && (s[k] == '.' || s[k] == ')') && blank))) {
			put(&w, s, k);
			put(&w, "\\", 1);
			put(&w, s + k, 1);
			s += k + 1, n -= k + 1;
		}
		write_units(&w, sink, (const unsigned char *)s, n);
		break;
	}
	default:
		write_units(&w, sink, (const unsigned char *)s, n);
		break;
	}
	return w.ok ? 0 : KPT_E_IO;
}

int kpt_text_write(FILE *out, enum kpt_text_sink sink, const char *s)
{
	return kpt_text_write_n(out, sink, s, s ? strlen(s) : 0);
}

char *kpt_text_dup(enum kpt_text_sink sink, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m)
		return NULL;
	rc = kpt_text_write(m, sink, s);
	if (fclose(m) != 0 || rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- pool ----------------------------------------------------------------- */

struct kpt_text_piece {
	struct kpt_text_piece *next;
	char *s;
};

/* True when every byte of s is printable ASCII that sink copies as it is:
 * the common case, decided without writing anything. */
static int plain(enum kpt_text_sink sink, const char *s)
{
	if (sink == KPT_TEXT_MD && s[0] && (strchr("-+=", s[0]) || (s[0] >= '0' && s[0] <= '9')))
		return 0;   /* the leading rule decides */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f || ascii_rep(sink, *p))
			return 0;
	return 1;
}

const char *kpt_text_pool_clean(struct kpt_text_pool *p, enum kpt_text_sink sink, const char *s)
{
	struct kpt_text_piece *c;
	char *t;

	if (!s)
		return "";
	if (plain(sink, s))
		return s;
	if (!(t = kpt_text_dup(sink, s)))
		return "?";
	if (strcmp(t, s) == 0) {
		free(t);
		return s;
	}
	if (!(c = malloc(sizeof *c))) {
		free(t);
		return "?";
	}
	c->s = t;
	c->next = p->head;
	p->head = c;
	return t;
}

void kpt_text_pool_release(struct kpt_text_pool *p)
{
	while (p && p->head) {
		struct kpt_text_piece *next = p->head->next;

		free(p->head->s);
		free(p->head);
		p->head = next;
	}
}

size_t kpt_text_columns(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), cols = 0;

	for (size_t i = 0; i < n; cols++) {
		size_t len = kpt_utf8_len(p + i, n - i);

		i += len ? len : 1;
	}
	return cols;
}

/* ---- table columns -------------------------------------------------------- */

/* Byte offset of code point k of s (or its end). */
static size_t cp_offset(const char *s, size_t k)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (k-- && i < n) {
		size_t len = kpt_utf8_len(p + i, n - i);

		i += len ? len : 1;
	}
	return i;
}

/* s cut to cols columns keeping code points [from, from + keep): "..."
 * before unless from is 0, "..." after unless the window reaches the end. */
static char *window(const char *s, size_t from, size_t keep)
{
	size_t a = cp_offset(s, from), b = a + cp_offset(s + a, keep), n = strlen(s);
	char *t = malloc(b - a + 7);

	if (t)
		snprintf(t, b - a + 7, "%s%.*s%s", from ? "..." : "", (int)(b - a), s + a, b < n ? "..." : "");
	return t;
}

/* s in at most cols columns. First difference at code point `diff` (or
 * SIZE_MAX when none matters) is kept visible. */
static char *cut(const char *s, size_t cols, enum kpt_text_cut how, size_t diff)
{
	size_t len = kpt_text_columns(s), head, tail;
	char *t;

	if (!cols || len <= cols)
		return strdup(s);
	if (cols < 8)
		return window(s, 0, cols);
	if (diff != SIZE_MAX) {
		/* start the window at the word holding the difference */
		size_t from = diff, at = cp_offset(s, diff);
		size_t back = cols - 6 > 4 ? cols - 6 - 4 : 0; /* the difference stays inside */

		while (from > 0 && diff - from < (back < 12 ? back : 12) && at > 0 && !strchr(" ,<(./", s[at - 1])) {
			from--;
			at = cp_offset(s, from);
		}
		if (from + cols - 3 >= len)     /* the tail reaches it */
			return window(s, len - (cols - 3), cols - 3);
		return window(s, from, from ? cols - 6 : cols - 3);
	}
	if (how == KPT_CUT_TAIL)
		return window(s, len - (cols - 3), cols - 3);
	tail = (cols - 3) / 3;
	head = cols - 3 - tail;
	if (!(t = malloc(cp_offset(s, head) + strlen(s + cp_offset(s, len - tail)) + 4)))
		return NULL;
	sprintf(t, "%.*s...%s", (int)cp_offset(s, head), s, s + cp_offset(s, len - tail));
	return t;
}

/* s in cols columns showing the word at code point diff and the tail:
 * "...h512.b32...moe.router"; a plain cut when that does not help. */
static char *cut_and_tail(const char *s, size_t cols, size_t diff)
{
	size_t len = kpt_text_columns(s), tail, win, from = diff, a, b, c;
	char *t;

	if (cols < 12 || len <= cols)
		return cut(s, cols, KPT_CUT_TAIL, diff);
	tail = (cols - 6) / 2;
	win = cols - 6 - tail;
	while (from > 0 && diff - from < win / 2 && !strchr(" ,<(./", s[cp_offset(s, from) - 1]))
		from--;
	if (from + win + 3 >= len - tail)
		return cut(s, cols, KPT_CUT_TAIL, diff);
	if (from == 0)
		win += 3;
	a = cp_offset(s, from);
	b = a + cp_offset(s + a, win);
	c = cp_offset(s, len - tail);
	if (!(t = malloc(b - a + strlen(s + c) + 7)))
		return NULL;
	sprintf(t, "%s%.*s...%s", from ? "..." : "", (int)(b - a), s + a, s + c);
	return t;
}

/* First code point at which a and b differ. */
static size_t first_diff(const char *a, const char *b)
{
	size_t k = 0, i = 0;

	while (a[i] && a[i] == b[i]) {
		size_t len = kpt_utf8_len((const unsigned char *)a + i, strlen(a + i));

		i += len ? len : 1;
		k++;
	}
	/* when i stopped inside a sequence, count its code point as the diff */
	return k;
}

struct col_sort {
	char **out;
	const char *const *s;
};

static int by_shown(const void *x, const void *y, void *ctx)
{
	const struct col_sort *c = ctx;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int r = strcmp(c->out[i], c->out[j]);

	return r ? r : strcmp(c->s[i], c->s[j]);
}

/* Indices of out sorted by (shown, full) text, for finding collisions. */
static size_t *sorted(const char *const *s, char **out, size_t n)
{
	size_t *ix = malloc((n ? n : 1) * sizeof *ix);
	struct col_sort c = { out, s };

	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof *ix, by_shown, &c);
	return ix;
}

/* Recuts (pass 0: to show its first difference from a neighbour, 1: its
 * last, 2: its first and its tail, "...h512.b32...moe.router") or keeps
 * whole (pass 3) every string that shows the same as a
 * different one. Returns the number changed, or -1 when out of memory. */
static long resolve(const char *const *s, char **out, size_t n, size_t cols, enum kpt_text_cut how, int pass)
{
	size_t *ix = sorted(s, out, n), *diff;
	long changed = 0;

	if (!ix)
		return -1;
	if (!(diff = malloc((n ? n : 1) * sizeof *diff))) {
		free(ix);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		diff[i] = SIZE_MAX;
	/* runs of equal shown text; inside a run, neighbours in full order */
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && strcmp(out[ix[a]], out[ix[b]]) == 0; b++)
			;
		for (size_t k = a; k + 1 < b; k++) {
			size_t i = ix[k], j = ix[k + 1], f;

			if (strcmp(s[i], s[j]) == 0)
				continue;
			f = first_diff(s[i], s[j]);
			/* pass 0: the earliest difference; 1: the latest */
			diff[i] = diff[i] == SIZE_MAX || (pass == 1 ? f > diff[i] : f < diff[i]) ? f : diff[i];
			diff[j] = diff[j] == SIZE_MAX || (pass == 1 ? f > diff[j] : f < diff[j]) ? f : diff[j];
		}
	}
	for (size_t i = 0; i < n && changed >= 0; i++) {
		char *t;

		if (diff[i] == SIZE_MAX)
			continue;
		if (!(t = pass == 3 ? strdup(s[i]) : pass == 2 ? cut_and_tail(s[i], cols, diff[i]) :
			  cut(s[i], cols, how, diff[i]))) {
			changed = -1;
			break;
		}
		free(out[i]);
		out[i] = t;
		changed++;
	}
	free(diff);
	free(ix);
	return changed;
}

/* The first of forms[0..nf) that fits cols columns, else the last. */
static size_t first_fit(char **forms, size_t nf, size_t cols)
{
	for (size_t k = 0; k < nf; k++)
		if (kpt_text_columns(forms[k]) <= cols)
			return k;
	return nf - 1;
}

/* Row ix[m] shows the same text as the other rows ix[0..g) of different
 * names: the form of its first template argument (kpt_text_cxx_arg_form,
 * nested lists collapsed, else whole) that no other of them shows and
 * that fits cols columns, or whose argument does ("...,UnaryOp<...>,...>":
 * cut, its tail stays), or NULL. */
static char *cxx_arg_fit(const char *const *s, const size_t *ix, size_t g, size_t m, size_t cols)
{
	for (int nested = 0; nested < 2; nested++)
		for (size_t k = 0; k < 32; k++) {
			char *f = kpt_text_cxx_arg_form(s[ix[m]], k, nested);
			const char *arg = f ? strchr(f, '<') : NULL;
			int ok;

			if (arg)
				arg += strncmp(arg, "<...,", 5) == 0 ? 5 : 1;
			ok = arg && (kpt_text_columns(f) <= cols || kpt_text_columns(arg) + 3 <= cols);

			if (!f)
				break;
			for (size_t j = 0; ok && j < g; j++) {
				char *o;

				if (j == m || strcmp(s[ix[j]], s[ix[m]]) == 0)
					continue;
				o = kpt_text_cxx_arg_form(s[ix[j]], k, nested);
				ok = !o || strcmp(o, f) != 0;
				free(o);
			}
			if (ok)
				return f;
			free(f);
		}
	return NULL;
}

/* KPT_CUT_CXX: each name at the longest of its forms (kpt_text_cxx_forms)
 * that fits; rows that would show the same text for different names go
 * back one form at a time until they differ (at worst to the whole
 * names, which differ). src[i] is set to the form row i ends at, out[i]
 * to it cut to cols (MIDDLE). 0 or KPT_E_NOMEM. O(f n log n) for f forms. */
static int cxx_fit(const char *const *s, size_t n, size_t cols, char **src, char **out)
{
	char ***forms = calloc(n ? n : 1, sizeof *forms), **over = calloc(n ? n : 1, sizeof *over);
	size_t *nf = calloc(n ? n : 1, sizeof *nf), *lvl = calloc(n ? n : 1, sizeof *lvl), *ix;
	unsigned char *tried = calloc(n ? n : 1, 1);
	int rc = KPT_E_NOMEM, changed = 1;

	if (!forms || !nf || !lvl || !over || !tried)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (kpt_text_cxx_forms(s[i], &forms[i], &nf[i]) < 0)
			goto out;
		lvl[i] = first_fit(forms[i], nf[i], cols);
	}
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < n; i++)
			out[i] = over[i] ? over[i] : forms[i][lvl[i]]; /* borrowed until the end */
		if (!(ix = sorted(s, out, n)))
			goto out;
		for (size_t a = 0, b; a < n; a = b) {
			int mixed = 0;

			for (b = a + 1; b < n && strcmp(out[ix[a]], out[ix[b]]) == 0; b++)
				mixed |= strcmp(s[ix[a]], s[ix[b]]) != 0;
			for (size_t k = a; mixed && k < b; k++) {
				/* first a template argument that only this row shows */
				if (!tried[ix[k]]) {
					tried[ix[k]] = 1;
					if ((over[ix[k]] = cxx_arg_fit(s, ix + a, b - a, k - a, cols)) != NULL) {
						changed = 1;
						continue;
					}
				}
				if (over[ix[k]]) {
					free(over[ix[k]]);
					over[ix[k]] = NULL;
					changed = 1;
				} else if (lvl[ix[k]] > 0) {
					lvl[ix[k]]--, changed = 1;
				}
			}
		}
		free(ix);
	}
	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	for (size_t i = 0; i < n; i++)
		if (!(src[i] = strdup(over[i] ? over[i] : forms[i][lvl[i]])) ||
		    !(out[i] = cut(src[i], cols, over[i] ? KPT_CUT_TAIL : KPT_CUT_MIDDLE, SIZE_MAX)))
			goto out;
	rc = 0;
out:
	for (size_t i = 0; over && i < n; i++)
		free(over[i]);
	free(over);
	free(tried);
	for (size_t i = 0; forms && i < n; i++)
		kpt_text_cxx_forms_free(forms[i], nf[i]);
	free(forms);
	free(nf);
	free(lvl);
	return rc;
}

int kpt_text_column(const char *const *s, size_t n, size_t cols, enum kpt_text_cut how, char **out)
{
	char **src = NULL;
	long r = 0;

	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	if (how == KPT_CUT_CXX && cols) {
		if (!(src = calloc(n ? n : 1, sizeof *src)) || cxx_fit(s, n, cols, src, out) < 0)
			goto oom;
		s = (const char *const *)src;
		how = KPT_CUT_MIDDLE;
	}
	for (size_t i = 0; !src && i < n; i++)
		if (!(out[i] = cut(s[i], cols, how, SIZE_MAX)))
			goto oom;
	for (int pass = 0; cols && pass < 4 && (r = resolve(s, out, n, cols, how, pass)) > 0; pass++)
		;
	if (r < 0)
		goto oom;
	kpt_text_column_free(src, n);
	free(src);
	return 0;
oom:
	kpt_text_column_free(src, n);
	free(src);
	kpt_text_column_free(out, n);
	return KPT_E_NOMEM;
}

int kpt_text_wrap(FILE *out, const char *s, size_t start, size_t width, size_t indent)
{
	size_t col = start, n = strlen(s), i = strspn(s, " ");
	int fresh = 1; /* no word on this line yet */

	fprintf(out, "%.*s", (int)i, s); /* leading spaces are the caller's layout */
	col += i;
	if (!width) {
		fputs(s + i, out);
		i = n;
	}
	while (i < n) {
		size_t sp = strspn(s + i, " "), w = strcspn(s + i + sp, " "), wc;
		char *word = strndup(s + i + sp, w);
		const char *wp = word;
		int gap = sp > 0 && !fresh;

		if (!word)
			return KPT_E_IO;
		wc = kpt_text_columns(word);
		if (!fresh && col + (size_t)gap + wc > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
			gap = 0;
		}
		if (gap)
			fprintf(out, "%.*s", (int)sp, s + i), col += sp;
		/* a word longer than a whole line: broken where it must */
		while (col + wc > width && width > col + 1) {
			size_t take = cp_offset(wp, width - col);

			fprintf(out, "%.*s\n%*s", (int)take, wp, (int)indent, "");
			wp += take;
			col = indent;
			wc = kpt_text_columns(wp);
		}
		fputs(wp, out);
		col += wc;
		fresh = 0;
		free(word);
		i += sp + w;
	}
	fputc('\n', out);
	return ferror(out) ? KPT_E_IO : 0;
}

void kpt_text_column_free(char **out, size_t n)
{
	for (size_t i = 0; out && i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
}
