/* kpt_project.c - the project file (kpt_project.h).
 *
 * The file is read in two passes: the bounded reader walks it into a small
 * tree of located nodes (each value knows its line, so a problem found
 * later still names the line it is on), then tables of keys check each
 * object and fill the project. Every problem is one diag
 * "FILE:LINE: KEY: problem"; the first one ends the load.
 */
#define _GNU_SOURCE
#include "kpt_project.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_json_read.h"

#define PROJECT_MAX_BYTES ((size_t)1 << 20)
#define RUNS_MAX 1000
#define WARMUP_MAX 100
#define PROJECT_MAX_MEMBERS 4096

int kpt_project_name_ok(const char *s)
{
	size_t len = strlen(s);

	if (len < 1 || len > KPT_COMPONENT_MAX || s[0] == '.' || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* ---- the located tree ------------------------------------------------------------------ */

/* One value of the file and the line it starts on. Scalars keep the
 * reader's node; objects and arrays their children, in file order. */
struct pnode {
	enum kpt_jv_type type;
	const char *key;            /* member name inside an object, else NULL */
	unsigned line;
	const struct kpt_jv *leaf;  /* scalars */
	struct pnode *child, *next;
	size_t n;
};

struct loader {
	const char *file;           /* as the caller named it, for messages */
	const char *base;           /* the file's bytes */
	size_t off;                 /* line_at's position and the line there */
	unsigned line;
	struct kpt_jr r;
	struct kpt_arena *a;
	struct kpt_diag *d;
	char path[512];             /* the key being read, "workloads[1].command" */
};

/* The line of p (at or after the last position asked: the walk goes forward). */
static unsigned line_at(struct loader *L, const char *p)
{
	size_t to = (size_t)(p - L->base);

	for (; L->off < to; L->off++)
		if (L->base[L->off] == '\n')
			L->line++;
	return L->line;
}

static int fail(struct loader *L, enum kpt_err code, unsigned line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct loader *L, enum kpt_err code, unsigned line, const char *key, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return kpt_diag_set(L->d, code, "%s:%u: %s: %s", L->file, line, key[0] ? key : "(top level)", msg);
}

/* The reader's "bad JSON at byte N: what" as this file's line and key. */
static int syntax(struct loader *L)
{
	char what[sizeof L->d->msg];
	const char *p = strstr(L->d->msg, ": ");

	snprintf(what, sizeof what, "%s", p ? p + 2 : L->d->msg);
	return fail(L, KPT_E_FORMAT, line_at(L, L->r.p), L->path, "bad JSON: %s", what);
}

/* Appends to the string in buf (cap bytes, cut when full) and returns its
 * old length, to cut back to. */
static size_t append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static size_t append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	return len;
}

static int read_node(struct loader *L, const char *key, struct pnode **out);

/* The members or elements of the container at the reader, into n. */
static int read_children(struct loader *L, struct pnode *n)
{
	struct pnode **tail = &n->child;
	int obj = n->type == KPT_JV_OBJECT, rc;

	if ((obj ? kpt_jr_begin_object(&L->r, L->d) : kpt_jr_begin_array(&L->r, L->d)) < 0)
		return syntax(L);
	for (;;) {
		const char *key = NULL;
		size_t cut;

		rc = obj ? kpt_jr_next_member(&L->r, L->a, &key, L->d) : kpt_jr_next_element(&L->r, L->d);
		if (rc < 0)
			return syntax(L);
		if (rc == 0)
			return 0;
		cut = obj ? append(L->path, sizeof L->path, "%s%.64s", L->path[0] ? "." : "", key)
			  : append(L->path, sizeof L->path, "[%zu]", n->n);
		/* the duplicate check is O(members^2): no real file comes near */
		if (n->n == PROJECT_MAX_MEMBERS)
			return fail(L, KPT_E_INVAL, line_at(L, L->r.p), L->path, "more than %d %s", PROJECT_MAX_MEMBERS,
				    obj ? "keys in one object" : "elements in one array");
		for (struct pnode *s = n->child; obj && s; s = s->next)
			if (strcmp(s->key, key) == 0)
				return fail(L, KPT_E_INVAL, line_at(L, L->r.p), L->path, "duplicate key");
		if ((rc = read_node(L, key, tail)) < 0)
			return rc;
		L->path[cut] = '\0';
		tail = &(*tail)->next;
		n->n++;
	}
}

static int read_node(struct loader *L, const char *key, struct pnode **out)
{
	struct pnode *n = kpt_arena_calloc(L->a, 1, sizeof *n);
	struct kpt_jv *leaf = NULL;
	int c = kpt_jr_peek(&L->r);

	if (!n)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory reading '%s'", L->file);
	n->key = key;
	n->line = line_at(L, L->r.p);
	*out = n;
	if (c == '{' || c == '[') {
		n->type = c == '{' ? KPT_JV_OBJECT : KPT_JV_ARRAY;
		return read_children(L, n);
	}
	if (kpt_jr_parse(&L->r, L->a, &leaf, L->d) < 0)
		return syntax(L);
	n->type = leaf->type;
	n->leaf = leaf;
	return 0;
}

/* ---- checking values ------------------------------------------------------------------- */

static const char *type_name(enum kpt_jv_type t)
{
	static const char *const names[] = {
		[KPT_JV_NULL] = "null", [KPT_JV_FALSE] = "false", [KPT_JV_TRUE] = "true",
		[KPT_JV_NUMBER] = "a number", [KPT_JV_STRING] = "a string", [KPT_JV_ARRAY] = "an array",
		[KPT_JV_OBJECT] = "an object",
	};

	return names[t];
}

/* One key being read: where it is, for messages. */
struct at {
	struct loader *L;
	const struct pnode *n;
	char key[160];
};

static int bad(const struct at *at, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct at *at, const char *fmt, ...)
{
	char msg[500];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return fail(at->L, KPT_E_INVAL, at->n->line, at->key, "%s", msg);
}

static int want_string(const struct at *at, const char **out)
{
	if (at->n->type != KPT_JV_STRING)
		return bad(at, "expected a string, got %s", type_name(at->n->type));
	if (!at->n->leaf->s[0])
		return bad(at, "empty string");
	*out = at->n->leaf->s;
	return 0;
}

static int want_long(const struct at *at, long lo, long hi, long *out)
{
	int64_t v;

	if (at->n->type != KPT_JV_NUMBER || kpt_jv_i64(at->n->leaf, &v) < 0)
		return bad(at, "expected a whole number from %ld to %ld", lo, hi);
	if (v < lo || v > hi)
		return bad(at, "%lld is out of range (%ld to %ld)", (long long)v, lo, hi);
	*out = (long)v;
	return 0;
}

/* A non-empty array of non-empty strings, NULL-terminated, into the arena. */
static int want_argv(const struct at *at, char ***out)
{
	char **v;
	size_t i = 0;

	if (at->n->type != KPT_JV_ARRAY || at->n->n == 0)
		return bad(at, "expected an array of strings (the command and its arguments)");
	if (!(v = kpt_arena_calloc(at->L->a, at->n->n + 1, sizeof *v)))
		return kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
	for (const struct pnode *e = at->n->child; e; e = e->next, i++) {
		if (e->type != KPT_JV_STRING)
			return bad(at, "expected an array of strings: element %zu is %s", i, type_name(e->type));
		v[i] = (char *)e->leaf->s;
	}
	if (!v[0][0])
		return bad(at, "the program name (element 0) is empty");
	*out = v;
	return 0;
}

/* A path relative to the project's folder (or absolute), as an absolute path. */
static int want_path(const struct at *at, const char *root, const char **out)
{
	const char *s = NULL;
	int rc = want_string(at, &s);

	if (rc < 0)
		return rc;
	*out = s[0] == '/' ? s : kpt_arena_printf(at->L->a, "%s/%s", root, s);
	return *out ? 0 : kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
}

/* Whether a and b are at most one edit apart (a typo: one letter wrong,
 * missing or extra), or one starts with the other's first 3+ letters. */
static int close_words(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;

	if (la > lb)
		return close_words(b, a);
	if (la >= 3 && strncmp(a, b, la) == 0)
		return 1;
	if (lb - la > 1)
		return 0;
	while (i < la && a[i] == b[i])
		i++;
	/* same length: skip the one that differs in both; else the extra one in b */
	return la == lb ? strcmp(a + i + (i < la), b + i + (i < lb)) == 0 : strcmp(a + i, b + i + 1) == 0;
}

/* ---- the tables of keys ------------------------------------------------------------------ */

struct ctx {
	struct kpt_project *p;
	struct kpt_project_workload *w;   /* the workload being read */
	int nvtx, api;                    /* capture keys seen */
};

struct key {
	const char *name;
	int (*read)(const struct at *at, struct ctx *c);
	int required;
};

/* Reads the members of the object at at->n with the keys of tab (prefix:
 * the object's key path). Unknown keys are errors. */
static int read_object(const struct at *at, const struct key *tab, size_t ntab, struct ctx *c)
{
	if (at->n->type != KPT_JV_OBJECT)
		return bad(at, "expected an object, got %s", type_name(at->n->type));
	for (const struct pnode *m = at->n->child; m; m = m->next) {
		struct at sub = *at;
		const struct key *k = NULL;
		int rc;

		sub.n = m;
		append(sub.key, sizeof sub.key, "%s%.64s", at->key[0] ? "." : "", m->key);
		for (size_t i = 0; i < ntab && !k; i++)
			if (strcmp(tab[i].name, m->key) == 0)
				k = &tab[i];
		if (!k) {
			const char *near = NULL;

			for (size_t i = 0; i < ntab && !near; i++)
				if (close_words(m->key, tab[i].name))
					near = tab[i].name;
			return near ? bad(&sub, "unknown key (did you mean '%s'?)", near) : bad(&sub, "unknown key");
		}
		if ((rc = k->read(&sub, c)) < 0)
			return rc;
	}
	for (size_t i = 0; i < ntab; i++) {
		int seen = 0;

		for (const struct pnode *m = at->n->child; m && !seen; m = m->next)
			seen = strcmp(m->key, tab[i].name) == 0;
		if (tab[i].required && !seen)
			return bad(at, "missing key '%s'", tab[i].name);
	}
	return 0;
}

/* capture: { "nvtx": "NAME[@DOMAIN]", "steps": "A-B" | "every": K } or
 * { "cudaProfilerApi": true }. Structure only: record checks the values
 * again with kpt_window_parse (the collector's own parser). */
static int cap_nvtx(const struct at *at, struct ctx *c)
{
	const char *s = NULL, *atsign;
	int rc = want_string(at, &s);

	if (rc < 0)
		return rc;
	atsign = strchr(s, '@');
	if (atsign == s || (atsign && !atsign[1]))
		return bad(at, "expected \"NAME\" or \"NAME@DOMAIN\", both non-empty");
	c->nvtx = 1;
	c->w->capture_range = kpt_arena_printf(&c->p->arena, "nvtx:%s", s);
	c->w->step_range = atsign ? kpt_arena_strndup(&c->p->arena, s, (size_t)(atsign - s)) : s;
	return c->w->capture_range && c->w->step_range ? 0 : kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
}

static int cap_api(const struct at *at, struct ctx *c)
{
	if (at->n->type != KPT_JV_TRUE)
		return bad(at, "expected true (or leave the key out)");
	c->api = 1;
	c->w->capture_range = "cudaProfilerApi";
	return 0;
}

static int cap_steps(const struct at *at, struct ctx *c)
{
	const char *s = NULL;
	char *end;
	unsigned long long a, b;
	int rc = want_string(at, &s);

	if (rc < 0)
		return rc;
	errno = 0;
	a = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '-' || end[1] < '0' || end[1] > '9')
		return bad(at, "expected \"A-B\": the first and last step, from 0");
	b = strtoull(end + 1, &end, 10);
	if (*end || errno || a > b)
		return bad(at, "expected \"A-B\" with A <= B");
	c->w->steps = s;
	return 0;
}

static int cap_every(const struct at *at, struct ctx *c)
{
	long k = 0;
	int rc = want_long(at, 1, LONG_MAX, &k);

	if (rc < 0)
		return rc;
	c->w->every = kpt_arena_printf(&c->p->arena, "%ld", k);
	return c->w->every ? 0 : kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
}

static const struct key capture_keys[] = {
	{ "nvtx", cap_nvtx, 0 },
	{ "cudaProfilerApi", cap_api, 0 },
	{ "steps", cap_steps, 0 },
	{ "every", cap_every, 0 },
};

static int wl_capture(const struct at *at, struct ctx *c)
{
	int rc = read_object(at, capture_keys, sizeof capture_keys / sizeof capture_keys[0], c);

	if (rc < 0)
		return rc;
	if (c->api && c->nvtx)
		return bad(at, "give one of 'nvtx' and 'cudaProfilerApi'");
	if (c->w->steps && c->w->every)
		return bad(at, "give one of 'steps' and 'every'");
	if (c->api && (c->w->steps || c->w->every))
		return bad(at, "'steps' and 'every' count NVTX ranges: not with 'cudaProfilerApi'");
	/* steps/every without nvtx count kpt:iter, kpt-workloads' iteration range */
	if (!c->nvtx && (c->w->steps || c->w->every))
		c->w->step_range = "kpt:iter";
	if (at->n->n == 0)
		return bad(at, "empty: leave the key out to record the whole program");
	return 0;
}

static int wl_name(const struct at *at, struct ctx *c)
{
	const char *s = NULL;
	int rc = want_string(at, &s);

	if (rc < 0)
		return rc;
	if (!kpt_project_name_ok(s))
		return bad(at, "'%.64s' is not a safe folder name: 1 to %d characters of a-z, 0-9, '.', '_' and '-', "
			   "not starting with '.' and without '..'", s, KPT_COMPONENT_MAX);
	for (size_t i = 0; i < c->p->nwl; i++)
		if (strcmp(c->p->wl[i].name, s) == 0)
			return bad(at, "duplicate workload name '%s' (also workloads[%zu])", s, i);
	c->w->name = c->w->root_range = s;
	return 0;
}

static int wl_command(const struct at *at, struct ctx *c)
{
	return want_argv(at, &c->w->argv);
}

static int wl_env(const struct at *at, struct ctx *c)
{
	size_t i = 0;

	if (at->n->type != KPT_JV_OBJECT)
		return bad(at, "expected an object of \"NAME\": \"VALUE\" strings");
	if (!(c->w->env = kpt_arena_calloc(&c->p->arena, at->n->n + 1, sizeof *c->w->env)))
		return kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
	for (const struct pnode *m = at->n->child; m; m = m->next) {
		struct at sub = *at;
		int ok = (m->key[0] < '0' || m->key[0] > '9') && m->key[0];

		sub.n = m;
		append(sub.key, sizeof sub.key, ".%.64s", m->key);
		for (const char *k = m->key; *k && ok; k++)
			ok = (*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_';
		if (!ok)
			return bad(&sub, "not a variable name: letters, digits and '_', not starting with a digit");
		if (m->type != KPT_JV_STRING)
			return bad(&sub, "expected a string, got %s", type_name(m->type));
		if (!(c->w->env[i++] = kpt_arena_printf(&c->p->arena, "%s=%s", m->key, m->leaf->s)))
			return kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
	}
	return 0;
}

static int wl_cwd(const struct at *at, struct ctx *c)
{
	struct stat st;
	int rc = want_path(at, c->p->root, &c->w->cwd);

	if (rc < 0)
		return rc;
	if (stat(c->w->cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		return bad(at, "no such folder '%s'", c->w->cwd);
	return 0;
}

/* "10m", "90s", "1.5h", "600" or 600: seconds. Returns -1 when s is none of them. */
static int parse_seconds(const char *s, double *out)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 },
	};
	char *end;
	double v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(end, units[i].unit) == 0) {
			*out = v * units[i].mult;
			return 0;
		}
	return -1;
}

static int wl_timeout(const struct at *at, struct ctx *c)
{
	double v = -1;

	if (at->n->type == KPT_JV_NUMBER)
		(void)kpt_jv_double(at->n->leaf, &v);
	else if (at->n->type != KPT_JV_STRING || parse_seconds(at->n->leaf->s, &v) < 0)
		return bad(at, "expected seconds: a number >= 0 or a string such as \"90s\", \"10m\", \"1h\"");
	if (!(v >= 0) || !isfinite(v))
		return bad(at, "expected seconds >= 0 (0: no timeout)");
	c->w->timeout_s = v;
	return 0;
}

static int wl_runs(const struct at *at, struct ctx *c)
{
	return want_long(at, 1, RUNS_MAX, &c->w->runs);
}

static int wl_warmup(const struct at *at, struct ctx *c)
{
	return want_long(at, 0, WARMUP_MAX, &c->w->warmup);
}

static const struct key workload_keys[] = {
	{ "name", wl_name, 1 },
	{ "command", wl_command, 1 },
	{ "env", wl_env, 0 },
	{ "cwd", wl_cwd, 0 },
	{ "timeout", wl_timeout, 0 },
	{ "capture", wl_capture, 0 },
	{ "runs", wl_runs, 0 },
	{ "warmup", wl_warmup, 0 },
};

static int top_project(const struct at *at, struct ctx *c)
{
	int rc = want_string(at, &c->p->name);

	if (rc == 0 && !kpt_project_name_ok(c->p->name))
		return bad(at, "'%.64s' is not a safe folder name: 1 to %d characters of a-z, 0-9, '.', '_' and '-', "
			   "not starting with '.' and without '..'", c->p->name, KPT_COMPONENT_MAX);
	return rc;
}

static int top_build(const struct at *at, struct ctx *c)
{
	return want_argv(at, &c->p->build);
}

static int top_baselines(const struct at *at, struct ctx *c)
{
	return want_path(at, c->p->root, &c->p->baselines);
}

static int top_db(const struct at *at, struct ctx *c)
{
	return want_string(at, &c->p->db);
}

static int top_runs(const struct at *at, struct ctx *c)
{
	return want_long(at, 1, RUNS_MAX, &c->p->runs);
}

static int top_workloads(const struct at *at, struct ctx *c)
{
	size_t i = 0;

	if (at->n->type != KPT_JV_ARRAY || at->n->n == 0)
		return bad(at, "expected a non-empty array of workload objects");
	if (at->n->n > KPT_PROJECT_MAX_WORKLOADS)
		return bad(at, "%zu workloads: at most %d", at->n->n, KPT_PROJECT_MAX_WORKLOADS);
	if (!(c->p->wl = kpt_arena_calloc(&c->p->arena, at->n->n, sizeof *c->p->wl)))
		return kpt_diag_set(at->L->d, KPT_E_NOMEM, "out of memory");
	for (const struct pnode *e = at->n->child; e; e = e->next, i++) {
		struct at sub = { at->L, e, "" };
		struct ctx wc = { .p = c->p, .w = &c->p->wl[i] };
		int rc;

		snprintf(sub.key, sizeof sub.key, "workloads[%zu]", i);
		wc.w->cwd = c->p->root;
		if ((rc = read_object(&sub, workload_keys, sizeof workload_keys / sizeof workload_keys[0], &wc)) < 0)
			return rc;
		c->p->nwl = i + 1;
	}
	return 0;
}

static const struct key top_keys[] = {
	{ "project", top_project, 1 },
	{ "build", top_build, 0 },
	{ "baselines", top_baselines, 0 },
	{ "db", top_db, 0 },
	{ "runs", top_runs, 0 },
	{ "workloads", top_workloads, 1 },
};

/* ---- loading ------------------------------------------------------------------------------ */

static int read_file(const char *path, struct kpt_arena *a, char **buf, size_t *len, struct kpt_diag *d)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	size_t n;

	if (!f)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': not a regular file", path);
	}
	if ((size_t)st.st_size > PROJECT_MAX_BYTES) {
		fclose(f);
		return kpt_diag_set(d, KPT_E_INVAL, "cannot read '%s': %lld bytes, a project file is at most 1 MiB",
				    path, (long long)st.st_size);
	}
	if (!(*buf = kpt_arena_alloc(a, (size_t)st.st_size + 1))) {
		fclose(f);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory reading '%s'", path);
	}
	n = fread(*buf, 1, (size_t)st.st_size + 1, f);
	if (ferror(f) || n > (size_t)st.st_size) {
		fclose(f);
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path,
				    n > (size_t)st.st_size ? "it grew while being read" : strerror(errno));
	}
	fclose(f);
	*len = n;
	return 0;
}

/* Path and root, absolute. */
static int set_paths(struct kpt_project *p, const char *path, struct kpt_diag *d)
{
	char real[PATH_MAX], *slash;

	if (!realpath(path, real))
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	p->path = kpt_arena_strndup(&p->arena, real, strlen(real));
	slash = strrchr(real, '/');
	p->root = slash == real ? "/" : kpt_arena_strndup(&p->arena, real, (size_t)(slash - real));
	p->baselines = kpt_arena_printf(&p->arena, "%s/baselines", p->root);
	if (!p->path || !p->root || !p->baselines)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	return 0;
}

int kpt_project_load(const char *path, struct kpt_project **out, struct kpt_diag *d)
{
	struct kpt_project *p = calloc(1, sizeof *p);
	struct loader L = { .file = path, .line = 1, .d = d };
	struct kpt_diag local;
	struct pnode *top = NULL;
	struct ctx c = { .p = p };
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (!d)
		L.d = d = &local;
	kpt_diag_clear(d);
	if (!p)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	kpt_arena_init(&p->arena);
	p->runs = 5;
	L.a = &p->arena;
	if ((rc = read_file(path, &p->arena, &buf, &len, d)) < 0 || (rc = set_paths(p, path, d)) < 0)
		goto fail;
	L.base = buf;
	kpt_jr_init(&L.r, buf, len);
	if (kpt_jr_peek(&L.r) < 0) {
		rc = fail(&L, KPT_E_FORMAT, 1, "", "empty file: expected a JSON object");
		goto fail;
	}
	if ((rc = read_node(&L, NULL, &top)) < 0)
		goto fail;
	if (kpt_jr_finish(&L.r, d) < 0) {
		rc = syntax(&L);
		goto fail;
	}
	{
		struct at at = { &L, top, "" };

		if ((rc = read_object(&at, top_keys, sizeof top_keys / sizeof top_keys[0], &c)) < 0)
			goto fail;
	}
	*out = p;
	return 0;
fail:
	kpt_project_destroy(p);
	return rc;
}

int kpt_project_find(const char *dir, char *out, size_t cap)
{
	char cur[PATH_MAX], cand[PATH_MAX + sizeof KPT_PROJECT_FILE + 1];

	if (!realpath(dir, cur))
		return KPT_E_NOTFOUND;
	for (;;) {
		struct stat st;
		char *slash;

		snprintf(cand, sizeof cand, "%s/%s", strcmp(cur, "/") == 0 ? "" : cur, KPT_PROJECT_FILE);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (strlen(cand) >= cap)
				return KPT_E_INVAL;
			memcpy(out, cand, strlen(cand) + 1);
			return 0;
		}
		if (strcmp(cur, "/") == 0)
			return KPT_E_NOTFOUND;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

int kpt_project_builtin(const char *runner, const char *suite, const char *baselines, struct kpt_project **out,
			struct kpt_diag *d)
{
	struct kpt_project *p = calloc(1, sizeof *p);
	struct kpt_project_workload *w;

	*out = NULL;
	if (!p)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	kpt_arena_init(&p->arena);
	p->builtin = 1;
	p->runs = 1;
	p->nwl = 1;
	p->name = kpt_arena_strndup(&p->arena, suite, strlen(suite));
	p->baselines = baselines ? kpt_arena_strndup(&p->arena, baselines, strlen(baselines)) : NULL;
	p->wl = w = kpt_arena_calloc(&p->arena, 1, sizeof *p->wl);
	if (w)
		w->argv = kpt_arena_calloc(&p->arena, 4, sizeof *w->argv);
	if (!p->name || (baselines && !p->baselines) || !w || !w->argv ||
	    !(w->argv[0] = kpt_arena_strndup(&p->arena, runner ? runner : "kpt-workloads",
					      strlen(runner ? runner : "kpt-workloads")))) {
		kpt_project_destroy(p);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	w->name = p->name;
	w->argv[1] = "--suite";
	w->argv[2] = (char *)p->name;
	*out = p;
	return 0;
}

const struct kpt_project_workload *kpt_project_workload(const struct kpt_project *p, const char *name)
{
	for (size_t i = 0; p && name && i < p->nwl; i++)
		if (strcmp(p->wl[i].name, name) == 0)
			return &p->wl[i];
	return NULL;
}

void kpt_project_destroy(struct kpt_project *p)
{
	if (!p)
		return;
	kpt_arena_release(&p->arena);
	free(p);
}
