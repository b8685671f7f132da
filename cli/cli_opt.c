/* cli_opt.c - the one option parser of kptprof, and what is generated from
 * the same tables: --help, man pages (roff) and bash/zsh completion.
 *
 * A command declares its options (and verbs) once, as a struct kpt_opt
 * table in its cmd_<name>.c (kpt_cli.h), and names it in the command table
 * (main.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_cli.h"

/* ---- lookup ------------------------------------------------------------------------ */

/* Operand or verb: a word of argv that is no option. */
static int is_word(const struct kpt_opt *o)
{
	return o->kind == KPT_OPTK_OPERAND || o->kind == KPT_OPTK_VERB;
}

/* Calls fn for every option of t, descending into included tables; base is
 * the args struct t's offsets are relative to. Stops at the first nonzero
 * return and returns it. */
typedef int (*opt_visit_fn)(const struct kpt_opt *o, char *base, void *ctx);

static int opt_walk(const struct kpt_opt *t, char *base, opt_visit_fn fn, void *ctx)
{
	for (; t && t->kind != KPT_OPTK_END; t++) {
		int rc = t->kind == KPT_OPTK_TABLE ? opt_walk(t->sub, base ? base + t->off : NULL, fn, ctx)
						   : fn(t, base, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

struct opt_find {
	const char *arg;              /* "--name", "--name=V", "-o" */
	size_t len;                   /* length of the name part of arg */
	int is_short;
	const struct kpt_opt *hit;
	char *base;
};

static int find_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	struct opt_find *f = ctx;

	if (is_word(o))
		return 0;
	if (f->is_short ? o->short_name && o->short_name == f->arg[1]
			: o->name && strlen(o->name) == f->len - 2 && strncmp(o->name, f->arg + 2, f->len - 2) == 0) {
		f->hit = o;
		f->base = base;
		return 1;
	}
	return 0;
}

/* Edit distance of a and b (both short: option and command names). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
	}
	return prev[lb];
}

const char *kpt_cli_nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, wl = strlen(word);

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);

		/* a prefix of 3+ letters counts as close: "hist" -> "history" */
		if (wl >= 3 && strncmp(names[i], word, wl) == 0)
			d = 1;
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return bd <= 2 && bd < wl ? best : NULL;
}

struct opt_names {
	const char *names[256];
	char buf[256][48];
	size_t n;
};

static int names_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	struct opt_names *nm = ctx;

	if (is_word(o) || !o->name || nm->n == 256)
		return 0;
	snprintf(nm->buf[nm->n], sizeof nm->buf[0], "--%s", o->name);
	nm->names[nm->n] = nm->buf[nm->n];
	nm->n++;
	return 0;
}

static int unknown_option(const char *cmd, const struct kpt_opt *t, const char *arg)
{
	struct opt_names *nm = calloc(1, sizeof *nm);
	char word[64];
	const char *near = NULL;

	if (nm) {
		opt_walk(t, NULL, names_visit, nm);
		snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg);
		near = kpt_cli_nearest(word, nm->names, nm->n);
	}
	if (near) {
		fprintf(stderr, "kptprof %s: unknown option '%s'\nhint: did you mean '%s'? 'kptprof %s --help' "
			"shows the options\n", cmd, arg, near, cmd);
		free(nm);
		return KPT_EXIT_ERROR;
	}
	free(nm);
	return kpt_cli_usage_error(cmd, "unknown option '%s'", arg);
}

struct verb_find {
	const char *word;
	int index;                   /* -1: none */
	const char *names[32];       /* the verbs, for "did you mean" */
	char buf[32][24];
	size_t n;
};

static int verb_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	struct verb_find *v = ctx;
	size_t len = strcspn(o->name, " ");

	if (o->kind != KPT_OPTK_VERB || v->n == 32)
		return 0;
	snprintf(v->buf[v->n], sizeof v->buf[0], "%.*s", (int)len, o->name);
	v->names[v->n] = v->buf[v->n];
	/* kpt_cli_list_verb: "ls" and "list" are one verb, whichever the table spells */
	if (strcmp(kpt_cli_list_verb(v->buf[v->n], "ls"), kpt_cli_list_verb(v->word, "ls")) == 0) {
		v->index = __builtin_ctz(o->verbs);
		return 1;
	}
	v->n++;
	return 0;
}

int kpt_opt_verb(const char *cmd, const struct kpt_opt *opts, const char *word, int *index)
{
	struct verb_find v = { .word = word, .index = -1 };
	const char *near;
	char list[256];
	size_t len = 0;

	if (opt_walk(opts, NULL, verb_visit, &v)) {
		*index = v.index;
		return 0;
	}
	list[0] = '\0';
	for (size_t i = 0; i < v.n && len < sizeof list; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", v.names[i]);
	near = kpt_cli_nearest(word, v.names, v.n);
	for (size_t i = 0; !near && i < v.n; i++) {   /* "lisst" is near "list", the other spelling of "ls" */
		const char *other = strcmp(v.names[i], "ls") == 0 ? "list" : "ls";

		if ((strcmp(v.names[i], "ls") == 0 || strcmp(v.names[i], "list") == 0) &&
		    kpt_cli_nearest(word, &other, 1))
			near = v.names[i];
	}
	fprintf(stderr, "kptprof %s: unknown verb '%s'\n", cmd, kpt_cli_term(word));
	if (near)
		fprintf(stderr, "hint: did you mean 'kptprof %s %s'? the verbs: %s\n", cmd, near, list);
	else
		fprintf(stderr, "hint: the verbs of '%s': %s\n", cmd, list);
	return KPT_EXIT_ERROR;
}

/* ---- parsing ----------------------------------------------------------------------- */

static void opt_label(const struct kpt_opt *o, char *buf, size_t cap)
{
	if (o->name)
		snprintf(buf, cap, "--%s", o->name);
	else
		snprintf(buf, cap, "-%c", o->short_name);
}

/* Stores value v of option o into the args at base; 0 or KPT_EXIT_ERROR
 * after printing why. */
static int opt_store(const char *cmd, const struct kpt_opt *o, char *base, const char *v)
{
	char label[64], *end;
	double x;
	uint64_t u;
	int idx, n;

	opt_label(o, label, sizeof label);
	switch (o->kind) {
	case KPT_OPTK_FLAG:
		*(int *)(base + o->off) = 1;
		return 0;
	case KPT_OPTK_STRING:
		if ((o->flags & KPT_OPTF_NONEMPTY) && !v[0])
			return kpt_cli_usage_error(cmd, "empty %s", label);
		*(const char **)(base + o->off) = v;
		return 0;
	case KPT_OPTK_U64:
		if (kpt_cli_parse_u64(cmd, label, v, (uint64_t)o->lo,
				      o->hi >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)o->hi, &u))
			return KPT_EXIT_ERROR;
		*(uint64_t *)(base + o->off) = u;
		return 0;
	case KPT_OPTK_DOUBLE:
		errno = 0;
		x = strtod(v, &end);
		if (errno || end == v || *end || !(x >= o->lo && x <= o->hi))
			return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected a number in [%g, %g]", v,
						   label, o->lo, o->hi);
		*(double *)(base + o->off) = x;
		return 0;
	case KPT_OPTK_CHOICE:
		for (n = 0; o->choices[n]; n++)
			;
		if (kpt_cli_parse_choice(cmd, label, v, o->choices, n, &idx))
			return KPT_EXIT_ERROR;
		*(int *)(base + o->off) = idx;
		return 0;
	case KPT_OPTK_CALL:
		return o->call(cmd, label, v, base + o->off, base);
	default:
		return 0;
	}
}

/* Who parses: the command and, for a command of verbs, the verb and its bit. */
struct opt_ctx {
	const char *cmd;
	const char *verb;   /* NULL: a command without verbs */
	unsigned bit;
};

static int opt_one(const struct opt_ctx *c, const struct kpt_opt *opts, void *args, int argc, char **argv,
		   int *i)
{
	const char *a = argv[*i], *v = NULL, *eq = strchr(a, '=');
	struct opt_find f = { .arg = a };
	int rc;

	if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0)
		return 0;
	f.is_short = a[1] != '-';
	f.len = eq ? (size_t)(eq - a) : strlen(a);
	if ((f.is_short && f.len != 2) || !opt_walk(opts, args, find_visit, &f))
		return 0;
	if (c->verb && f.hit->verbs && !(f.hit->verbs & c->bit))
		return kpt_cli_usage_error(c->cmd, "'%s %s' takes no %.*s", c->cmd, c->verb, (int)f.len, a);
	if (f.hit->kind == KPT_OPTK_FLAG) {
		if (eq)
			return kpt_cli_usage_error(c->cmd, "option '%.*s' takes no value", (int)f.len, a);
	} else if (eq) {
		v = eq + 1;
	} else if (f.hit->flags & KPT_OPTF_OPTVAL) {
		v = NULL;
	} else if (*i + 1 < argc && strcmp(argv[*i + 1], "--") != 0) {
		v = argv[++*i]; /* "--" ends the options, never a value ('--opt=--' gives one) */
	} else {
		return kpt_cli_usage_error(c->cmd, "option '%s' needs a value", a);
	}
	if ((rc = opt_store(c->cmd, f.hit, f.base, v)) != 0)
		return rc;
	return 1;
}

int kpt_opt_one(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv, int *i)
{
	const struct opt_ctx c = { .cmd = cmd };

	return opt_one(&c, opts, args, argc, argv, i);
}

static int opt_parse(const struct opt_ctx *c, const struct kpt_opt *opts, void *args, int argc, char **argv,
		     int *nargs, int *rest)
{
	int n = 0, i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (strcmp(a, "--") == 0) {
			if (rest)
				break;
			while (++i < argc)
				argv[++n] = argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			argv[++n] = argv[i];
			continue;
		}
		if (kpt_cli_is_help(a)) {
			kpt_cli_help(c->cmd);
			return KPT_EXIT_OK;
		}
		rc = opt_one(c, opts, args, argc, argv, &i);
		if (rc == 0)
			return unknown_option(c->cmd, opts, a);
		if (rc != 1)
			return rc;
	}
	*nargs = n;
	if (rest)
		*rest = i < argc ? i + 1 : argc;
	/* KPTPROF_CHECK_ARGS (tests/docs/check_examples.py): the command line
	 * parsed, stop here, before any file, GPU or store is touched, so the
	 * docs' GPU examples are checked on machines without one. */
	if (getenv("KPTPROF_CHECK_ARGS"))
		return KPT_EXIT_OK;
	return KPT_OPT_GO;
}

int kpt_opt_parse(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv,
		  int *nargs, int *rest)
{
	const struct opt_ctx c = { .cmd = cmd };

	return opt_parse(&c, opts, args, argc, argv, nargs, rest);
}

int kpt_opt_parse_verb(const char *cmd, const char *verb, int index, const struct kpt_opt *opts, void *args,
		       int argc, char **argv, int *nargs)
{
	const struct opt_ctx c = { .cmd = cmd, .verb = verb, .bit = 1u << index };

	return opt_parse(&c, opts, args, argc, argv, nargs, NULL);
}

int kpt_opt_parse_file(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv,
		       const char **path)
{
	int n, rc = kpt_opt_parse(cmd, opts, args, argc, argv, &n, NULL);

	if (rc != KPT_OPT_GO)
		return rc;
	if (n > 1)
		return kpt_cli_usage_error(cmd, "one FILE only, got '%s' and '%s'", argv[1], argv[2]);
	if (n == 0)
		return kpt_cli_usage_error(cmd, "missing FILE (a .kpt recording)");
	*path = argv[1];
	return KPT_OPT_GO;
}

/* ---- help ---------------------------------------------------------------------------- */

/* "  -o, --output FILE" for o into buf. */
static void opt_left(const struct kpt_opt *o, char *buf, size_t cap)
{
	size_t len;

	if (is_word(o)) {
		snprintf(buf, cap, "  %s", o->name);
		return;
	}
	len = (size_t)snprintf(buf, cap, "  ");
	if (o->short_name)
		len += (size_t)snprintf(buf + len, cap - len, "-%c%s", o->short_name, o->name ? ", " : "");
	if (o->name && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "--%s", o->name);
	if (o->arg && len < cap)
		snprintf(buf + len, cap - len, (o->flags & KPT_OPTF_OPTVAL) ? "[=%s]" : " %s", o->arg);
}

static int width_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	char left[128];
	size_t *w = ctx;

	opt_left(o, left, sizeof left);
	if (strlen(left) > *w)
		*w = strlen(left);
	return 0;
}

/* "  --opt V   help" with the help wrapped to the terminal (80 columns
 * when not one), its lines under the help column. */
static void help_line(const char *left, int w, const char *help)
{
	int n = printf("%-*s  ", w, left);

	kpt_text_wrap(stdout, help, n > 0 ? (size_t)n : 0, (size_t)kpt_cli_help_width(), (size_t)w + 2);
}

static int help_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	char left[128];
	int w = (int)*(size_t *)ctx;

	if (o->flags & KPT_OPTF_HIDDEN)
		return 0;
	opt_left(o, left, sizeof left);
	help_line(left, w, o->help);
	return 0;
}

/* "usage: " and the synopsis lines, each wrapped under its command. */
static void help_usage(const char *usage)
{
	const char *p = usage;

	fputs("usage: ", stdout);
	while (*p) {
		size_t len = strcspn(p, "\n"), lead = strspn(p, " ");
		char *line = strndup(p, len);

		/* a line's own words start after "kptprof CMD " or its indent */
		kpt_text_wrap(stdout, line ? line : "?", p == usage ? 7 : 0, (size_t)kpt_cli_help_width(),
			      p == usage ? 15 : lead ? lead : 15);
		free(line);
		p += len + (p[len] == '\n');
	}
	fputs("\n", stdout);
}

int kpt_cli_help(const char *name)
{
	const struct kpt_cmd *cmd = kpt_cmd_find(name);
	size_t w = 12;

	if (!cmd)
		return kpt_cli_usage_error("help", "unknown command '%s'", name);
	help_usage(cmd->usage);
	kpt_text_wrap(stdout, cmd->summary, 0, (size_t)kpt_cli_help_width(), 0);
	opt_walk(cmd->opts, NULL, width_visit, &w);
	if (w > 28)
		w = 28;
	printf("\noptions:\n");
	opt_walk(cmd->opts, NULL, help_visit, &w);
	help_line("  -h, --help", (int)w, "show this help");
	if (cmd->help_tail)
		cmd->help_tail();
	return KPT_EXIT_OK;
}

/* ---- the option list of a command, for man, completion and Markdown ----------------- */

/* One documented option, operand or verb. */
struct opt_doc {
	char left[128];   /* "-o, --output FILE" (no indent) */
	char shorts[4];   /* "-o" or "" */
	char longs[64];   /* "--output" or "" (operands, verbs: "") */
	char verb[24];    /* a verb: its word ("show" of "show [FILE]"); else "" */
	const char *help;
	int help_len;
	const char *const *choices;
	int takes_value;
	unsigned verbs;   /* kpt_opt.verbs */
};

typedef void (*doc_fn)(const struct opt_doc *d, void *ctx);

struct doc_walk {
	doc_fn fn;
	void *ctx;
};

static int doc_visit(const struct kpt_opt *o, char *base, void *ctx)
{
	struct doc_walk *dw = ctx;
	struct opt_doc d = { .help = o->help, .help_len = (int)strlen(o->help), .choices = o->choices,
			     .takes_value = o->arg != NULL, .verbs = o->verbs };

	if (o->flags & KPT_OPTF_HIDDEN)
		return 0;
	opt_left(o, d.left, sizeof d.left);
	memmove(d.left, d.left + 2, strlen(d.left + 2) + 1);
	if (o->kind == KPT_OPTK_VERB)
		snprintf(d.verb, sizeof d.verb, "%.*s", (int)strcspn(o->name, " "), o->name);
	if (!is_word(o)) {
		if (o->short_name)
			snprintf(d.shorts, sizeof d.shorts, "-%c", o->short_name);
		if (o->name)
			snprintf(d.longs, sizeof d.longs, "--%s", o->name);
	}
	dw->fn(&d, dw->ctx);
	return 0;
}

/* Calls fn for each option, operand and verb of cmd's table, then for -h. */
static void cmd_docs(const struct kpt_cmd *cmd, doc_fn fn, void *ctx)
{
	struct doc_walk dw = { fn, ctx };
	struct opt_doc h = { .left = "-h, --help", .shorts = "-h", .longs = "--help", .help = "show this help",
			     .help_len = 14 };

	opt_walk(cmd->opts, NULL, doc_visit, &dw);
	fn(&h, ctx);
}

/* ---- man pages (roff) ------------------------------------------------------------------- */

/* s[0..n) as roff text: backslashes and dashes escaped, no line starting
 * with a control character. */
static void roff_text(const char *s, int n)
{
	if (n > 0 && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", stdout);
	for (int i = 0; i < n && s[i]; i++) {
		if (s[i] == '\\')
			fputs("\\e", stdout);
		else if (s[i] == '-')
			fputs("\\-", stdout);
		else
			putchar(s[i]);
	}
}

static void roff_line(const char *s)
{
	roff_text(s, (int)strlen(s));
	putchar('\n');
}

static void man_opt(const struct opt_doc *d, void *ctx)
{
	printf(".TP\n\\fB");
	roff_text(d->left, (int)strlen(d->left));
	printf("\\fR\n");
	roff_text(d->help, d->help_len);
	putchar('\n');
}

static void man_synopsis(const struct kpt_cmd *cmd)
{
	const char *u = cmd->usage, *end = u + strlen(u);

	printf(".SH SYNOPSIS\n.nf\n");
	while (u < end) {
		const char *eol = memchr(u, '\n', (size_t)(end - u));

		if (!eol)
			eol = end;
		roff_text(u, (int)(eol - u));
		putchar('\n');
		u = eol < end ? eol + 1 : end;
	}
	printf(".fi\n");
}

static const char man_footer[] =
	".SH EXIT STATUS\n"
	"0 success (diff, gate: no regression); 1 a kernel got slower (diff, gate, ab; history detect: a slower "
	"step at the head); 2 error: bad option or value, unreadable or unusable input; 77 skipped: no GPU.\n"
	".SH ENVIRONMENT\n"
	".TP\n\\fBKPTPROF_BASELINES\\fR\nfolder of the baselines (default ./baselines, else the installed "
	"share/kptprof/baselines)\n"
	".TP\n\\fBKPTPROF_DB\\fR\nthe history store (default .kptprof/history.db)\n"
	".TP\n\\fBKPTPROF_WORKLOADS\\fR, \\fBKPTPROF_INJECT\\fR\nthe workload runner and the collector library "
	"(default: found relative to kptprof, lib/kptprof/ of its prefix)\n"
	".TP\n\\fBKPTPROF_NO_PROGRESS\\fR\n1: no progress line on standard error for work past 2 s\n"
	".TP\n\\fBKPTPROF_PROGRESS_TEST_AFTER_MS\\fR\nfor tests: the progress line after this many ms, not 2 s\n"
	".TP\n\\fBNO_COLOR\\fR\nno colour on a terminal\n";

static int man_page(const struct kpt_cmd *cmd)
{
	if (!cmd) {
		printf(".TH KPTPROF 1 \"\" \"kptprof %s\" \"kptprof manual\"\n.SH NAME\nkptprof \\- record CUDA "
		       "kernels, compare runs against per\\-GPU baselines, gate pull requests\n", KPT_VERSION);
		printf(".SH SYNOPSIS\n.nf\nkptprof COMMAND [ARGS]\nkptprof help [COMMAND]\nkptprof COMMAND "
		       "\\-\\-help\n.fi\n.SH COMMANDS\n");
		for (int i = 0; i < kpt_ncmds; i++) {
			printf(".TP\n\\fBkptprof\\-%s\\fR(1)\n", kpt_cmds[i].name);
			roff_line(kpt_cmds[i].summary);
		}
		fputs(man_footer, stdout);
		printf(".SH SEE ALSO\nThe documentation in docs/ of the kptprof sources: cli.md, "
		       "architecture.md, decision\\-rule.md, format.md.\n");
		return KPT_EXIT_OK;
	}
	printf(".TH KPTPROF\\-");
	for (const char *s = cmd->name; *s; s++)
		putchar(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
	printf(" 1 \"\" \"kptprof %s\" \"kptprof manual\"\n.SH NAME\nkptprof\\-%s \\- ", KPT_VERSION, cmd->name);
	roff_line(cmd->summary);
	man_synopsis(cmd);
	printf(".SH OPTIONS\n");
	cmd_docs(cmd, man_opt, NULL);
	fputs(man_footer, stdout);
	printf(".SH SEE ALSO\n\\fBkptprof\\fR(1)\n");
	return KPT_EXIT_OK;
}

/* ---- completion ------------------------------------------------------------------------- */

/* ctx: NULL, every option; else the bit of a verb, the options it takes */
static void bash_names(const struct opt_doc *d, void *ctx)
{
	if (ctx && d->verbs && !(d->verbs & *(const unsigned *)ctx))
		return;
	if (d->shorts[0])
		printf(" %s", d->shorts);
	if (d->longs[0])
		printf(" %s", d->longs);
}

static void bash_choices(const struct opt_doc *d, void *ctx)
{
	if (!d->choices || !d->longs[0])
		return;
	printf("\t\t%s", d->longs);
	if (d->shorts[0])
		printf("|%s", d->shorts);
	printf(") COMPREPLY=($(compgen -W \"");
	for (int i = 0; d->choices[i]; i++)
		printf("%s%s", i ? " " : "", d->choices[i]);
	printf("\" -- \"$cur\")); return ;;\n");
}

static int has_verb(const struct kpt_opt *o, char *base, void *ctx)
{
	return o->kind == KPT_OPTK_VERB;
}

static void verb_words(const struct opt_doc *d, void *ctx)
{
	int *n = ctx;

	if (d->verb[0])
		printf("%s%s", (*n)++ ? " " : "", d->verb);
}

/* A command of verbs: the verb as its first word, then the options of that verb. */
static void bash_verb(const struct opt_doc *d, void *ctx)
{
	const struct kpt_cmd *cmd = ctx;
	int ls = strcmp(d->verb, "ls") == 0 || strcmp(d->verb, "list") == 0;

	if (!d->verb[0])
		return;
	printf("\t\t%s) opts=\"", ls ? "ls|list" : d->verb);
	cmd_docs(cmd, bash_names, (void *)&d->verbs);
	printf(" \" ;;\n");
}

static void bash_completion(void)
{
	printf("# bash completion for kptprof, generated by 'kptprof help --completion bash'\n"
	       "_kptprof() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts=\n"
	       "\tCOMPREPLY=()\n\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W \"");
	for (int i = 0; i < kpt_ncmds; i++)
		printf("%s%s", i ? " " : "", kpt_cmds[i].name);
	printf(" --help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase ${COMP_WORDS[1]} in\n");
	for (int i = 0; i < kpt_ncmds; i++) {
		int nv = 0;

		printf("\t%s)\n\t\tcase $prev in\n", kpt_cmds[i].name);
		cmd_docs(&kpt_cmds[i], bash_choices, NULL);
		printf("\t\tesac\n\t\topts=\"");
		cmd_docs(&kpt_cmds[i], bash_names, NULL);
		printf(" \"");
		if (opt_walk(kpt_cmds[i].opts, NULL, has_verb, NULL)) {
			printf("\n\t\tif [ \"$COMP_CWORD\" -eq 2 ] && [[ $cur != -* ]]; then\n"
			       "\t\t\tCOMPREPLY=($(compgen -W \"");
			cmd_docs(&kpt_cmds[i], verb_words, &nv);
			printf("\" -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n\t\tcase ${COMP_WORDS[2]} in\n");
			cmd_docs(&kpt_cmds[i], bash_verb, (void *)&kpt_cmds[i]);
			printf("\t\tesac");
		}
		printf(" ;;\n");
	}
	printf("\tesac\n\tcase $cur in\n\t-*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
	       "\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n\tesac\n}\n"
	       "complete -o filenames -F _kptprof kptprof\n");
}

/* s[0..n) inside a single-quoted zsh _arguments spec: no quote, bracket or
 * colon of the help text may end its field. */
static void zsh_text(const char *s, int n)
{
	for (int i = 0; i < n && s[i]; i++) {
		if (s[i] == '\'')
			fputs("'\\''", stdout);
		else if (s[i] == '[' || s[i] == ']' || s[i] == ':' || s[i] == '\\')
			printf("\\%c", s[i]);
		else
			putchar(s[i]);
	}
}

static void zsh_opt(const struct opt_doc *d, void *ctx)
{
	const char *names[2] = { d->shorts, d->longs };

	for (int k = 0; k < 2; k++) {
		if (!names[k][0])
			continue;
		printf(" \\\n\t\t\t'%s[", names[k]);
		zsh_text(d->help, d->help_len > 60 ? 60 : d->help_len);
		printf("]");
		if (d->choices) {
			printf(":value:(");
			for (int i = 0; d->choices[i]; i++)
				printf("%s%s", i ? " " : "", d->choices[i]);
			printf(")");
		} else if (d->takes_value) {
			printf(":value:_files");
		}
		printf("'");
	}
}

static void zsh_completion(void)
{
	printf("#compdef kptprof\n# zsh completion for kptprof, generated by 'kptprof help --completion zsh'\n"
	       "_kptprof() {\n\tlocal -a cmds\n\tcmds=(\n");
	for (int i = 0; i < kpt_ncmds; i++) {
		printf("\t\t'%s:", kpt_cmds[i].name);
		zsh_text(kpt_cmds[i].summary, (int)strlen(kpt_cmds[i].summary));
		printf("'\n");
	}
	printf("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe 'command' cmds\n\t\treturn\n\tfi\n");
	/* words shifted: _arguments sees the command as its command name, a verb as operand 1 */
	printf("\tshift words\n\t(( CURRENT-- ))\n\tcase $words[1] in\n");
	for (int i = 0; i < kpt_ncmds; i++) {
		int nv = 0;

		printf("\t%s)\n\t\t_arguments", kpt_cmds[i].name);
		cmd_docs(&kpt_cmds[i], zsh_opt, NULL);
		if (opt_walk(kpt_cmds[i].opts, NULL, has_verb, NULL)) {
			printf(" \\\n\t\t\t'1:verb:(");
			cmd_docs(&kpt_cmds[i], verb_words, &nv);
			printf(")'");
		}
		printf(" \\\n\t\t\t'*:file:_files' ;;\n");
	}
	printf("\tesac\n}\n_kptprof \"$@\"\n");
}

/* ---- Markdown: the option tables of docs/cli.md ------------------------------------------ */

/* s[0..n) in a GFM table cell: no pipe ends the cell, no '<' opens a tag,
 * no '*', '`' or '\\' formats. */
static void md_text(const char *s, int n)
{
	for (int i = 0; i < n && s[i]; i++) {
		if (strchr("|<*`\\", s[i]))
			putchar('\\');
		putchar(s[i]);
	}
}

/* "`-o FILE`, `--output FILE`" from the left column "-o, --output FILE":
 * each name with the value. */
static void md_opt(const struct opt_doc *d, void *ctx)
{
	const char *last = d->left, *arg, *p;

	for (p = d->left; (p = strstr(p, ", ")); p += 2)
		last = p + 2;
	arg = strchr(last, ' ');
	printf("| ");
	if (!d->longs[0] && !d->shorts[0]) {    /* an operand, "-- CMD [ARGS...]" */
		putchar('`');
		md_text(d->left, (int)strlen(d->left));
		printf("` | ");
		md_text(d->help, d->help_len);
		printf(" |\n");
		return;
	}
	for (p = d->left; *p;) {
		size_t len = p == last ? strlen(p) : strcspn(p, ",");

		if (p == last && arg)
			len = (size_t)(arg - p);
		printf("%s`", p == d->left ? "" : ", ");
		md_text(p, (int)len);
		if (arg)
			md_text(arg, (int)strlen(arg));
		putchar('`');
		if (p == last)
			break;
		p += len + 2;
	}
	printf(" | ");
	md_text(d->help, d->help_len);
	printf(" |\n");
}

/* The option table of cmd as Markdown: what docs/cli.md holds between
 * "<!-- options: CMD -->" and "<!-- end options -->" (scripts/gen-cli-docs.sh). */
static void md_options(const struct kpt_cmd *cmd)
{
	printf("| option | meaning |\n| --- | --- |\n");
	cmd_docs(cmd, md_opt, NULL);
}

/* ---- kptprof help [CMD | --man [CMD] | --completion bash|zsh] ------------------------------- */

static const char *const shells[] = { "bash", "zsh", NULL };

struct help_args {
	int man, markdown;
	int shell;      /* index in shells, -1: none */
};

const struct kpt_opt kpt_help_opts[] = {
	KPT_OPT_OPERAND("CMD", "the command to show (default: the list of commands)"),
	KPT_OPT_FLAG(0, "man", struct help_args, man, "print the man page of kptprof, or of CMD, as roff"),
	KPT_OPT_FLAG(0, "markdown", struct help_args, markdown,
		     "print the option table of CMD as Markdown, as docs/cli.md has it (scripts/gen-cli-docs.sh)"),
	KPT_OPT_CHOICE(0, "completion", "bash|zsh", struct help_args, shell, shells,
		       "print the shell completion script of kptprof (default: none)"),
	KPT_OPT_END,
};

int cmd_help(int argc, char **argv)
{
	struct help_args a = { .shell = -1 };
	const struct kpt_cmd *cmd = NULL;
	int n, rc;

	if ((rc = kpt_opt_parse("help", kpt_help_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		return rc;
	if (n > 1)
		return kpt_cli_usage_error("help", "one CMD only, got '%s' and '%s'", argv[1], argv[2]);
	if (n == 1 && !(cmd = kpt_cmd_find(argv[1])))
		return kpt_cli_unknown_command(argv[1]);
	if (a.shell >= 0 && (n || a.man || a.markdown))
		return kpt_cli_usage_error("help", "--completion takes no CMD and no --man");
	if (a.markdown && (!cmd || a.man))
		return kpt_cli_usage_error("help", "--markdown takes a CMD and no --man");
	if (a.shell == 0)
		bash_completion();
	else if (a.shell == 1)
		zsh_completion();
	else if (a.man)
		man_page(cmd);
	else if (a.markdown)
		md_options(cmd);
	else if (cmd)
		return cmd->fn == cmd_help ? kpt_cli_help("help") : cmd->fn(2, (char *[]){ argv[1], "--help", NULL });
	else
		kpt_cli_help_list();
	return fflush(stdout) == 0 ? KPT_EXIT_OK : KPT_EXIT_ERROR;
}
