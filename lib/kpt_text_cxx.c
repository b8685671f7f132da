/* kpt_text_cxx.c - shorter forms of a demangled C++ name for a table
 * column (kpt_text_cxx_forms in kpt_text.h).
 *
 * The name is read once into a depth per byte: ( < [ { open, ) > ] }
 * close; "(anonymous namespace)" and an operator's symbol ("operator()",
 * "operator<<", "operator new") are words, never brackets. From that: the
 * parameter list (the last '(' at depth 0), the return type (what comes
 * before the last space at depth 0 ahead of it), the scopes ("::" at depth
 * 0) and the base name's template arguments. Names that are not C++ (no
 * brackets, no spaces) have one form: themselves. */
#include "kpt_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

static const char anon[] = "(anonymous namespace)";

static int is_ident(char c)
{
	return c == '_' || (unsigned)((c | 32) - 'a') < 26u || (unsigned)(c - '0') < 10u;
}

/* Length of the word starting at s that holds no brackets for the depth
 * count: "(anonymous namespace)", or "operator" with its symbol. 0: none. */
static size_t opaque_len(const char *s, size_t at)
{
	static const char sym[] = "<>=!+-*/%&|^~[],";
	size_t n = 0;

	if (strncmp(s + at, anon, sizeof anon - 1) == 0)
		return sizeof anon - 1;
	if (strncmp(s + at, "operator", 8) != 0 || (at > 0 && is_ident(s[at - 1])))
		return 0;
	n = 8;
	if (strncmp(s + at + n, "()", 2) == 0)
		return n + 2;
	if (s[at + n] == ' ' && s[at + n + 1] && !strchr("(<", s[at + n + 1])) {
		for (n++; s[at + n] && !strchr("(<:", s[at + n]); n++)
			;
		return n;
	}
	for (size_t k = 0; k < 3 && s[at + n] && strchr(sym, s[at + n]); k++)
		n++;
	return n;
}

/* Depth of every byte of s: an opener has the depth of its owner, its
 * contents one more, its closer the owner's again. Bytes of opaque words
 * have OPAQUE set. Unbalanced closers never go below 0. */
#define OPAQUE (1 << 24)
#define DEPTH(d) ((d) & (OPAQUE - 1))

static int *depths(const char *s, size_t n)
{
	int *d = malloc((n + 1) * sizeof *d), depth = 0;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t w = opaque_len(s, i);

		if (w) {
			for (size_t k = 0; k < w; k++)
				d[i + k] = depth | OPAQUE;
			i += w;
			continue;
		}
		if (strchr("(<[{", s[i]))
			d[i++] = depth++;
		else if (strchr(")>]}", s[i]) && depth > 0)
			d[i++] = --depth;
		else
			d[i++] = depth;
	}
	return d;
}

/* A growing string; on allocation failure it stays NULL. */
struct sbuf {
	char *s;
	size_t len, cap;
	int failed;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *t = realloc(b->s, cap);

		if (!t) {
			b->failed = 1;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* How put_compact shortens. */
struct shorten {
	int keep;      /* contents deeper than this are "..." */
	size_t args;   /* arguments shown of a list at depth 0, then ",..." */
	int unqual;    /* inside lists, "ns::" prefixes dropped */
};

/* s[from, to) with "(anonymous namespace)::" dropped, no space after a
 * comma or between closing ">", shortened as h says. */
static void put_compact(struct sbuf *b, const char *s, const int *d, size_t from, size_t to,
			const struct shorten *h)
{
	size_t nargs = 0;
	int cut = 0;

	for (size_t i = from; i < to; i++) {
		int dep = DEPTH(d[i]), op = d[i] & OPAQUE;

		if (strncmp(s + i, anon, sizeof anon - 1) == 0 && strncmp(s + i + sizeof anon - 1, "::", 2) == 0) {
			i += sizeof anon + 1 - 1;
			continue;
		}
		if (s[i] == ' ' && i > from && (s[i - 1] == ',' || (s[i - 1] == '>' && s[i + 1] == '>')))
			continue;
		if (dep == 0)
			cut = 0, nargs = dep == 0 && s[i] == '<' ? 0 : nargs;
		if (dep > h->keep || cut)
			continue;
		if (h->unqual && dep >= 1 && !op && is_ident(s[i]) && (i == from || !is_ident(s[i - 1]))) {
			size_t k = i;

			while (k < to && is_ident(s[k]))
				k++;
			if (k + 1 < to && s[k] == ':' && s[k + 1] == ':') {
				i = k + 1;
				continue;
			}
		}
		if (dep == 1 && s[i] == ',' && !op && ++nargs >= h->args) {
			sb_put(b, ",...", 4);
			cut = 1;
			continue;
		}
		sb_put(b, s + i, 1);
		if (!op && dep == h->keep && strchr("<([{", s[i]))
			sb_put(b, "...", 3);
	}
}

/* Adds a copy of b's text to forms unless it equals the last one. */
static int add_form(char ***forms, size_t *n, struct sbuf *b)
{
	char **t;

	if (b->failed)
		return KPT_E_NOMEM;
	if (!b->s || (*n && strcmp((*forms)[*n - 1], b->s) == 0)) {
		free(b->s);
		memset(b, 0, sizeof *b);
		return 0;
	}
	if (!(t = realloc(*forms, (*n + 1) * sizeof *t)))
		return KPT_E_NOMEM;
	*forms = t;
	t[(*n)++] = b->s;
	memset(b, 0, sizeof *b);
	return 0;
}

/* Where the parts of a C++ name are: [start, params) the name without its
 * return type and parameters, [last, params) its last scope, targ the '<'
 * of the first template list at depth 0 in it (SIZE_MAX: none), nargs its
 * arguments. d is depths(); the caller frees it. */
struct cxx_name {
	int *d;
	size_t n, params, start, last, targ, nargs;
};

static int cxx_parse(const char *s, struct cxx_name *p)
{
	size_t n = strlen(s);
	int *d = depths(s, n);

	*p = (struct cxx_name){ .d = d, .n = n, .params = n, .targ = SIZE_MAX };
	if (!d)
		return KPT_E_NOMEM;
	/* the parameter list: the last '(' at depth 0 right after a name */
	for (size_t i = 1; i < n; i++)
		if (s[i] == '(' && d[i] == 0 && (is_ident(s[i - 1]) || s[i - 1] == '>' ||
						 (d[i - 1] & OPAQUE) || s[i - 1] == '}'))
			p->params = i;
	/* a function's return type ends at the last space at depth 0 */
	for (size_t i = 0; p->params < n && i < p->params; i++)
		if (s[i] == ' ' && d[i] == 0)
			p->start = i + 1;
	/* the last scope: after the last "::" at depth 0 */
	p->last = p->start;
	for (size_t i = p->start; i + 1 < p->params; i++)
		if (s[i] == ':' && s[i + 1] == ':' && d[i] == 0)
			p->last = i + 2;
	/* a lambda, an operator or a __name alone says little: keep its owner */
	if (p->last > p->start && (s[p->last] == '{' || s[p->last] == '[' || strncmp(s + p->last, "operator", 8) == 0 ||
				   strncmp(s + p->last, "__", 2) == 0)) {
		size_t k = p->last - 2;

		while (k > p->start && !(k >= 2 && s[k - 1] == ':' && s[k - 2] == ':' && d[k - 1] == 0))
			k--;
		p->last = k;
		if (strncmp(s + p->last, anon, sizeof anon - 1) == 0)
			p->last = p->start;
	}
	for (size_t i = p->last; i < p->params; i++) {
		if (s[i] == '<' && d[i] == 0 && p->targ == SIZE_MAX)
			p->targ = i, p->nargs = 1;
		else if (s[i] == ',' && d[i] == 1 && p->targ != SIZE_MAX)
			p->nargs++;
	}
	return 0;
}

char *kpt_text_cxx_arg_form(const char *s, size_t k, int nested)
{
	struct cxx_name p;
	struct sbuf b = { 0 };
	struct shorten h = { .keep = 1 << 20, .args = SIZE_MAX, .unqual = 1 };
	size_t from, to, arg = 0;

	if (cxx_parse(s, &p) < 0)
		return NULL;
	if (p.targ == SIZE_MAX || k >= p.nargs) {
		free(p.d);
		return NULL;
	}
	/* arg k: [from, to) between the commas (or brackets) at depth 1 */
	for (from = p.targ + 1; arg < k; from++)
		if (s[from] == ',' && p.d[from] == 1)
			arg++;
	while (s[from] == ' ')
		from++;
	for (to = from; to < p.params && !(p.d[to] == 1 && s[to] == ',') && p.d[to] != 0; to++)
		;
	put_compact(&b, s, p.d, p.last, p.targ + 1, &h);
	if (k > 0)
		sb_put(&b, "...,", 4);
	h.keep = nested ? 1 << 20 : 1;
	put_compact(&b, s, p.d, from, to, &h);
	sb_put(&b, k + 1 < p.nargs ? ",...>" : ">", k + 1 < p.nargs ? 5 : 1);
	free(p.d);
	if (b.failed) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

int kpt_text_cxx_forms(const char *s, char ***forms, size_t *nforms)
{
	struct cxx_name p;
	struct sbuf b = { 0 };
	struct shorten h = { .keep = 1 << 20, .args = SIZE_MAX };
	size_t n, params, start, last, nargs;
	int *d, rc = 0, targs;

	*forms = NULL;
	*nforms = 0;
	if (cxx_parse(s, &p) < 0)
		return KPT_E_NOMEM;
	d = p.d, n = p.n, params = p.params, start = p.start, last = p.last, nargs = p.nargs;
	targs = p.targ != SIZE_MAX;
	sb_put(&b, s, n);
	if ((rc = add_form(forms, nforms, &b)) < 0)
		goto out;
	/* 1: no return type, no parameters, compact */
	put_compact(&b, s, d, start, params, &h);
	if ((rc = add_form(forms, nforms, &b)) < 0)
		goto out;
	/* 2: the last scope only; then no namespaces in its arguments */
	put_compact(&b, s, d, last, params, &h);
	if ((rc = add_form(forms, nforms, &b)) < 0 || !targs)
		goto out;
	h.unqual = 1;
	put_compact(&b, s, d, last, params, &h);
	if ((rc = add_form(forms, nforms, &b)) < 0)
		goto out;
	/* 3: nested lists collapsed; then fewer arguments; then none */
	h.keep = 1;
	put_compact(&b, s, d, last, params, &h);
	if ((rc = add_form(forms, nforms, &b)) < 0)
		goto out;
	for (size_t k = nargs; k-- > 1;) {
		h.args = k;
		put_compact(&b, s, d, last, params, &h);
		if ((rc = add_form(forms, nforms, &b)) < 0)
			goto out;
	}
	h.keep = 0;
	h.args = SIZE_MAX;
	put_compact(&b, s, d, last, params, &h);
	rc = add_form(forms, nforms, &b);
out:
	free(b.s);
	free(d);
	if (rc < 0) {
		kpt_text_cxx_forms_free(*forms, *nforms);
		*forms = NULL;
		*nforms = 0;
	}
	return rc;
}

void kpt_text_cxx_forms_free(char **forms, size_t n)
{
	for (size_t i = 0; forms && i < n; i++)
		free(forms[i]);
	free(forms);
}
