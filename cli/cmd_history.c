/* cmd_history.c - `kptprof history add|ls|show|plot|detect`: every run kept
 * in a store (analyzer/history/kpt_history.h), series per kernel key, trend plots
 * and change points. docs/history.md has the store and the method. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_cli.h"
#include "kpt_gnuplot.h"
#include "kpt_history.h"
#include "kpt_history_pool.h"
#include "kpt_json.h"
#include "kpt_progress.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_LABELS 64

enum sub { S_ADD, S_LS, S_SHOW, S_PLOT, S_DETECT, S_COUNT };

/* The string options, in args.val[]. */
enum opt { O_DB, O_COMMIT, O_BRANCH, O_SUITE, O_GPU, O_WORKLOAD, O_OUT, O_COUNT };

static const char *const sub_names[S_COUNT] = {
	[S_ADD] = "add", [S_LS] = "ls", [S_SHOW] = "show", [S_PLOT] = "plot", [S_DETECT] = "detect",
};
static const char *const format_names[] = { "text", "json", NULL };

struct args {
	enum sub sub;
	const char *val[O_COUNT];
	const char *pos;            /* FILE of add, KEY of show/plot */
	struct kpt_history_label labels[MAX_LABELS];
	uint32_t nlabels;
	int json;
	uint32_t last, min_seg, head, min_machines;
	uint64_t u_last, u_min_seg, u_head, u_min_machines; /* as parsed; last 0: all */
	double threshold, min_step, alpha;
};

/* --label K=V, repeatable */
static int set_label(const char *cmd, const char *opt, const char *v, void *field, void *args)
{
	struct args *a = args;
	const char *eq = strchr(v, '=');

	if (!eq || eq == v)
		return kpt_cli_usage_error("history", "bad value '%s' for --label: write it as KEY=VALUE", v);
	if (a->nlabels == MAX_LABELS)
		return kpt_cli_usage_error("history", "more than %d labels", MAX_LABELS);
	if (!(a->labels[a->nlabels].name = strndup(v, (size_t)(eq - v))))
		return kpt_cli_usage_error("history", "out of memory");
	a->labels[a->nlabels++].value = eq + 1;
	return 0;
}

#define HA struct args
#define B(s) (1u << (s))
#define SERIES (B(S_SHOW) | B(S_PLOT) | B(S_DETECT))
const struct kpt_opt kpt_history_opts[] = {
	KPT_OPT_VERB(S_ADD, "add FILE", "store FILE's per-key run medians, environment, GPU, suite, commit, branch"),
	KPT_OPT_VERB(S_LS, "ls", "list the stored sessions"),
	KPT_OPT_VERB(S_SHOW, "show KEY", "one kernel key's series, change points marked; KEY: its number, its name or part of it"),
	KPT_OPT_VERB(S_PLOT, "plot KEY", "a trend plot DIR/history-keyN.png with the noise band and change points (gnuplot)"),
	KPT_OPT_VERB(S_DETECT, "detect", "change points of every key, machine effects out; exit 1 when a key got slower at the "
			"head of the branch"),
	KPT_OPT_STRING(0, "db", "URL", HA, val[O_DB],
		       "SQLite file or postgresql://USER:PASSWORD@HOST:PORT/DB (default $KPTPROF_DB, else "
		       ".kptprof/history.db)"),
	KPT_OPT_STRING(0, "commit", "SHA", HA, val[O_COMMIT], "add: the commit (default: the recording's meta commit)",
		       .verbs = B(S_ADD)),
	KPT_OPT_STRING(0, "branch", "B", HA, val[O_BRANCH],
		       "add: the branch (default: meta branch, else main); others: the series' branch (default main)"),
	KPT_OPT_CALL(0, "label", "K=V", HA, labels, set_label, "add: a label of the session; repeatable (default: none)",
		     .verbs = B(S_ADD)),
	KPT_OPT_STRING(0, "suite", "S", HA, val[O_SUITE],
		       "add: the suite (default: the recording's); show/plot: default the newest session's; ls/detect: "
		       "default every suite"),
	KPT_OPT_STRING(0, "gpu", "SLUG", HA, val[O_GPU],
		       "the GPU model slug (default: show/plot the newest session's; ls/detect every GPU)",
		       .verbs = B(S_LS) | SERIES),
	KPT_OPT_STRING(0, "workload", "W", HA, val[O_WORKLOAD],
		       "show/plot: the workload's total (sum of its keys); detect: only its keys (default: none)",
		       .verbs = SERIES),
	KPT_OPT_U64(0, "last", "N", HA, u_last, 1, UINT32_MAX, "only the last N sessions (default: all)",
		    .verbs = B(S_LS) | SERIES),
	KPT_OPT_CHOICE(0, "format", "text|json", HA, json, format_names,
		       "output format of ls, show and detect (default text)",
		       .verbs = B(S_LS) | B(S_SHOW) | B(S_DETECT)),
	KPT_OPT_STRING('o', "output", "DIR", HA, val[O_OUT], "plot: folder of the .gp and .png (default .)",
		       .verbs = B(S_PLOT)),
	KPT_OPT_DOUBLE(0, "threshold", "PCT", HA, threshold, 0.01, 1000,
		       "detect: a slower step of this size at the head fails, exit 1 (default 2)", .verbs = B(S_DETECT)),
	KPT_OPT_U64(0, "head", "N", HA, u_head, 1, UINT32_MAX,
		    "detect: the head is the last N sessions of the branch (default 10)", .verbs = B(S_DETECT)),
	KPT_OPT_DOUBLE(0, "min-step", "PCT", HA, min_step, 0.01, 1000,
		       "smallest step reported as a change point (default 1)", .verbs = SERIES),
	KPT_OPT_DOUBLE(0, "alpha", "A", HA, alpha, 1e-12, 0.5,
		       "false change point rate per series, Bonferroni over split positions (default 0.001)",
		       .verbs = SERIES),
	KPT_OPT_U64(0, "min-seg", "N", HA, u_min_seg, 1, 1000, "fewest sessions on each side of a step (default 3)",
		    .verbs = SERIES),
	KPT_OPT_U64(0, "min-machines", "N", HA, u_min_machines, 1, 1000,
		    "detect: fewest machines (GPUs) after a step that must carry it (default 3; a store of fewer "
		    "machines, e.g. one runner: all of them)", .verbs = B(S_DETECT)),
	KPT_OPT_WIDE(.verbs = B(S_LS) | B(S_SHOW) | B(S_DETECT)),
	KPT_OPT_WIDTH(.verbs = B(S_LS) | B(S_SHOW) | B(S_DETECT)),
	KPT_OPT_END,
};
#undef SERIES
#undef B
#undef HA

static int parse_args(int argc, char **argv, struct args *a)
{
	int idx, n, rc, max;

	memset(a, 0, sizeof *a);
	if (argc < 2)
		return kpt_cli_usage_error("history", "missing subcommand: add, ls, show, plot or detect");
	if (kpt_opt_verb("history", kpt_history_opts, argv[1], &idx))
		return KPT_EXIT_ERROR;
	a->sub = (enum sub)idx;
	a->u_min_seg = 3;
	a->u_head = 10;
	a->u_min_machines = 3;
	a->threshold = 2;
	a->min_step = 1;
	a->alpha = 0.001;
	if ((rc = kpt_opt_parse_verb("history", sub_names[a->sub], a->sub, kpt_history_opts, a, argc - 1, argv + 1,
				     &n)) != KPT_OPT_GO)
		return rc;   /* no --help here: cmd_history took it */
	max = a->sub == S_LS || a->sub == S_DETECT ? 0 : 1;
	if (n > max)   /* the operands are argv[2..n+1] */
		return kpt_cli_usage_error("history", "unexpected argument '%s'", argv[2 + max]);
	a->pos = n ? argv[2] : NULL;
	if (a->sub == S_ADD && !a->pos)
		return kpt_cli_usage_error("history", "'history add' needs a FILE");
	if ((a->sub == S_SHOW || a->sub == S_PLOT) && !a->pos == !a->val[O_WORKLOAD])
		return kpt_cli_usage_error("history", "'history %s' needs a KEY or --workload W (one of them)",
					   sub_names[a->sub]);
	a->last = (uint32_t)a->u_last;
	a->min_seg = (uint32_t)a->u_min_seg;
	a->head = (uint32_t)a->u_head;
	a->min_machines = (uint32_t)a->u_min_machines;
	return 0;
}

/* --db, else $KPTPROF_DB, else .kptprof/history.db */
static const char *db_url(const struct args *a)
{
	const char *env = getenv("KPTPROF_DB");

	return a->val[O_DB] ? a->val[O_DB] : env && env[0] ? env : KPT_HISTORY_DEFAULT_DB;
}

static int open_store(const struct args *a, int create, struct kpt_history **h)
{
	/* only add writes: the others open read-only (a read-only store works) */
	struct kpt_history_open_opts o = { .create = create, .read_only = !create };
	struct kpt_diag d = { 0 };

	if (kpt_history_open(db_url(a), &o, h, &d) < 0)
		return kpt_cli_fail(&d);
	return 0;
}

/* ---- add ------------------------------------------------------------------- */

static int h_add(struct args *a)
{
	struct kpt_history_run run;
	struct kpt_history *h = NULL;
	struct kpt_diag d = { 0 };
	int64_t id;
	int rc;

	/* read the recording first: a bad file must not make a store */
	kpt_progress_begin("loading", 0, "kernels");
	rc = kpt_history_run_load(a->pos, &run, &d);
	kpt_progress_end();
	if (rc < 0)
		return kpt_cli_fail(&d);
	/* a session with no key is no point of any history */
	if (!run.npoints) {
		kpt_diag_set(&d, KPT_E_INVAL, "'%s' holds no kernel key to store (0 keys)", a->pos);
		kpt_diag_hint(&d, "a recording with steps (kpt:iter) keys only the kernels inside them");
		kpt_history_run_release(&run);
		return kpt_cli_fail(&d);
	}
	if (a->val[O_COMMIT])
		run.session.commit = a->val[O_COMMIT];
	if (a->val[O_BRANCH])
		run.session.branch = a->val[O_BRANCH];
	if (a->val[O_SUITE])
		run.session.suite = a->val[O_SUITE];
	run.session.labels = a->labels;
	run.session.nlabels = a->nlabels;
	if ((rc = open_store(a, 1, &h)) != 0) {
		kpt_history_run_release(&run);
		return rc;
	}
	kpt_progress_begin("storing", run.npoints, "keys");
	rc = kpt_history_add(h, &run, &id, &d);
	kpt_progress_end();
	if (rc == 0)
		printf("added session %" PRId64 " to '%s' (%s): %zu kernel keys, %u runs, %s, suite %s, commit %s, branch %s\n",
		       id, kpt_cli_term(kpt_history_where(h)), kpt_history_backend(h), run.npoints, run.session.runs,
		       run.session.gpu_name[0] ? kpt_cli_term(run.session.gpu_name) : "unknown GPU",
		       run.session.suite[0] ? kpt_cli_term(run.session.suite) : "-",
		       run.session.commit[0] ? kpt_cli_term(run.session.commit) : "-", kpt_cli_term(run.session.branch));
	kpt_history_close(h);
	kpt_history_run_release(&run);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}

/* ---- ls -------------------------------------------------------------------- */

static void json_session(struct kpt_json *j, const struct kpt_history_session *s)
{
	kpt_json_begin_object(j);
	kpt_json_kv_i64(j, "session", s->id);
	kpt_json_kv_str(j, "added", s->added);
	kpt_json_kv_str(j, "time", s->time);
	kpt_json_kv_str(j, "commit", s->commit);
	kpt_json_kv_str(j, "branch", s->branch);
	kpt_json_kv_str(j, "suite", s->suite);
	kpt_json_kv_str(j, "gpu", s->gpu_name);
	kpt_json_kv_str(j, "gpu_slug", s->gpu_slug);
	kpt_json_kv_str(j, "gpu_uuid", s->gpu_uuid);
	kpt_json_kv_str(j, "driver", s->driver);
	kpt_json_kv_str(j, "cuda", s->cuda);
	kpt_json_kv_str(j, "host", s->host);
	kpt_json_kv_str(j, "source", s->source);
	kpt_json_kv_u64(j, "runs", s->runs);
	kpt_json_kv_double(j, "sm_mhz", s->sm_mhz);
	kpt_json_kv_double(j, "temp_c", s->temp_c);
	kpt_json_kv_double(j, "throttled_frac", s->throttled_frac);
	kpt_json_key(j, "labels");
	kpt_json_begin_object(j);
	for (uint32_t i = 0; i < s->nlabels; i++)
		kpt_json_kv_str(j, s->labels[i].name, s->labels[i].value);
	kpt_json_end_object(j);
	kpt_json_end_object(j);
}

static int h_ls(struct args *a, struct kpt_history *h)
{
	struct kpt_history_filter f = { .suite = a->val[O_SUITE], .gpu_slug = a->val[O_GPU],
					.branch = a->val[O_BRANCH], .last = a->last };
	struct kpt_history_set *set;
	struct kpt_diag d = { 0 };
	char sha[16];
	int width, wb = 10, ws = 8, wg = 24, added = 1;

	if (kpt_history_sessions(h, &f, &set, &d) < 0)
		return kpt_cli_fail(&d);
	if (a->json) {
		struct kpt_json j;

		kpt_json_init(&j, stdout, 2);
		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "store", kpt_history_backend(h));
		kpt_json_kv_i64(&j, "schema", kpt_history_schema(h));
		kpt_json_key(&j, "sessions");
		kpt_json_begin_array(&j);
		for (size_t i = 0; i < set->nsessions; i++)
			json_session(&j, &set->sessions[i]);
		kpt_json_end_array(&j);
		kpt_json_end_object(&j);
		kpt_history_set_destroy(set);
		return kpt_json_finish(&j, &d) < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
	}
	/* piped, the columns of old; on a terminal (kpt_cli_table_width)
	 * branch, suite and gpu as wide as their cells, "added" gives way when
	 * the row does not fit, labels get what is left */
	width = kpt_cli_table_width();
	if (width > 0) {
		wb = 6, ws = 5, wg = 3;
		for (size_t i = 0; i < set->nsessions; i++) {
			const struct kpt_history_session *s = &set->sessions[i];
			int k;

			k = (int)kpt_text_columns(kpt_cli_term(s->branch));
			wb = k > wb ? k : wb;
			k = (int)kpt_text_columns(s->suite[0] ? kpt_cli_term(s->suite) : "-");
			ws = k > ws ? k : ws;
			k = (int)kpt_text_columns(kpt_cli_term(s->gpu_slug));
			wg = k > wg ? k : wg;
		}
		if (8 + 1 + 21 + 12 + 1 + wb + 1 + ws + 1 + wg + 1 + 5 + 1 + 5 + 2 + 6 > width)
			added = 0;
	}
	printf("%-8s ", "session");
	if (added)
		printf("%-20s ", "added");
	printf("%-12s %-*s %-*s %-*s %5s %5s  %s\n", "commit", wb, "branch", ws, "suite", wg, "gpu", "runs", "keys",
	       "labels");
	for (size_t i = 0; i < set->nsessions; i++) {
		const struct kpt_history_session *s = &set->sessions[i];
		char *lab = NULL;
		size_t len = 0;
		FILE *lf = open_memstream(&lab, &len);
		int used;

		used = printf("%-8" PRId64 " ", s->id);
		if (added)
			used += printf("%-20s ", kpt_cli_term(s->added));
		used += printf("%-12s ", kpt_cli_term(kpt_cli_short_commit(s->commit, sha)));
		used += printf("%-*s ", wb, kpt_cli_term(s->branch));
		used += printf("%-*s ", ws, s->suite[0] ? kpt_cli_term(s->suite) : "-");
		used += printf("%-*s %5u %5u  ", wg, kpt_cli_term(s->gpu_slug), s->runs, s->keys);
		for (uint32_t l = 0; lf && l < s->nlabels; l++)
			fprintf(lf, "%s%s=%s", l ? "," : "", kpt_cli_term(s->labels[l].name),
				kpt_cli_term(s->labels[l].value));
		if (lf)
			fclose(lf);
		if (lab && width > 0 && kpt_text_columns(lab) > (size_t)(width > used + 4 ? width - used : 4)) {
			char *cut[1] = { NULL };
			const char *one[1] = { lab };

			if (kpt_text_column(one, 1, (size_t)(width > used + 4 ? width - used : 4), KPT_CUT_MIDDLE, cut) == 0)
				printf("%s", cut[0]);
			kpt_text_column_free(cut, 1);
		} else if (lab) {
			printf("%s", lab);
		}
		free(lab);
		printf("\n");
	}
	if (!set->nsessions)
		fprintf(stderr, "kptprof: no sessions in '%s' match\n", kpt_cli_term(kpt_history_where(h)));
	kpt_history_set_destroy(set);
	return KPT_EXIT_OK;
}

/* ---- series: which group, which key ------------------------------------- */

/* The (suite, GPU slug) of show/plot: the options, else the newest session
 * on the branch. */
static int pick_group(const struct args *a, struct kpt_history *h, struct kpt_history_filter *f,
		      struct kpt_history_set **keep)
{
	struct kpt_history_filter g = { .suite = a->val[O_SUITE], .gpu_slug = a->val[O_GPU],
					.branch = a->val[O_BRANCH] ? a->val[O_BRANCH] : "main", .last = 1 };
	struct kpt_diag d = { 0 };

	if (kpt_history_sessions(h, &g, keep, &d) < 0)
		return kpt_cli_fail(&d);
	if (!(*keep)->nsessions) {
		fprintf(stderr, "kptprof: no sessions on branch '%s'%s%s%s%s in '%s'\n", kpt_cli_term(g.branch),
			g.suite ? " of suite " : "", g.suite ? kpt_cli_term(g.suite) : "", g.gpu_slug ? " on GPU " : "",
			g.gpu_slug ? kpt_cli_term(g.gpu_slug) : "", kpt_cli_term(kpt_history_where(h)));
		return KPT_EXIT_ERROR;
	}
	*f = g;
	f->suite = (*keep)->sessions[0].suite;
	f->gpu_slug = (*keep)->sessions[0].gpu_slug;
	f->last = a->last;
	return 0;
}

static void key_text(FILE *out, const struct kpt_history_key *k)
{
	if (!k->id) { /* a workload's total (detect) */
		fprintf(out, "workload %s (sum of its kernels)", kpt_cli_term(k->workload));
		return;
	}
	fprintf(out, "%s [grid %u,%u,%u block %u,%u,%u #%u]%s%s", kpt_cli_term(k->name), k->grid[0], k->grid[1],
		k->grid[2], k->block[0], k->block[1], k->block[2], k->ordinal, k->path[0] ? " in " : "",
		kpt_cli_term(k->path));
}

/* The one key that KEY names (an id, an exact name, or a substring). */
static int pick_key(const struct args *a, struct kpt_history *h, int64_t *id)
{
	struct kpt_history_set *keys;
	struct kpt_diag d = { 0 };

	if (kpt_history_find_keys(h, a->pos, &keys, &d) < 0)
		return kpt_cli_fail(&d);
	if (keys->nseries != 1) {
		fprintf(stderr, "kptprof: %s kernel key in '%s' matches '%s'\n",
			keys->nseries ? "more than one" : "no", kpt_cli_term(kpt_history_where(h)), kpt_cli_term(a->pos));
		for (size_t i = 0; i < keys->nseries && i < 20; i++) {
			fprintf(stderr, "  %" PRId64 ": ", keys->series[i].key.id);
			key_text(stderr, &keys->series[i].key);
			fprintf(stderr, "\n");
		}
		fprintf(stderr, "hint: name the key by its number (the first column above, or 'history detect')\n");
		kpt_history_set_destroy(keys);
		return KPT_EXIT_ERROR;
	}
	*id = keys->series[0].key.id;
	kpt_history_set_destroy(keys);
	return 0;
}

/* One series to show or plot: a key's, or a workload's total (the sum of
 * its keys' centres in each session that has them). */
struct one {
	struct kpt_history_set *set, *group;
	struct kpt_history_filter f;
	const char *title;
	char title_buf[256];
	uint32_t n;
	uint32_t *sess;
	double *ns;
	struct kpt_cp *cp;
	uint32_t ncp;
};

static void one_release(struct one *o)
{
	kpt_history_set_destroy(o->set);
	kpt_history_set_destroy(o->group);
	free(o->sess);
	free(o->ns);
	free(o->cp);
}

static int load_one(const struct args *a, struct kpt_history *h, struct one *o)
{
	struct kpt_diag d = { 0 };
	struct kpt_cp_opts co = { a->min_step, a->alpha, a->min_seg };
	int64_t key = 0;
	int rc;

	memset(o, 0, sizeof *o);
	if ((rc = pick_group(a, h, &o->f, &o->group)) != 0)
		return rc;
	if (a->pos && (rc = pick_key(a, h, &key)) != 0)
		return rc;
	o->f.key_id = key;
	o->f.workload = a->val[O_WORKLOAD];
	o->f.with_runs = a->pos != NULL;
	if (kpt_history_query(h, &o->f, &o->set, &d) < 0)
		return kpt_cli_fail(&d);
	if (!o->set->nseries) {
		fprintf(stderr, "kptprof: %s '%s' has no points for suite '%s' on GPU '%s', branch '%s'\n",
			a->pos ? "kernel key" : "workload", kpt_cli_term(a->pos ? a->pos : a->val[O_WORKLOAD]),
			kpt_cli_term(o->f.suite), kpt_cli_term(o->f.gpu_slug), kpt_cli_term(o->f.branch));
		return KPT_EXIT_ERROR;
	}
	o->sess = calloc(o->set->nsessions, sizeof *o->sess);
	o->ns = calloc(o->set->nsessions, sizeof *o->ns);
	if (!o->sess || !o->ns)
		return kpt_cli_usage_error("history", "out of memory");
	if (a->pos) {
		const struct kpt_history_series *se = &o->set->series[0];

		o->n = se->n;
		memcpy(o->sess, se->sess, se->n * sizeof *se->sess);
		memcpy(o->ns, se->centre_ns, se->n * sizeof *se->centre_ns);
		snprintf(o->title_buf, sizeof o->title_buf, "%.200s", se->key.name);
	} else {
		for (size_t k = 0; k < o->set->nseries; k++)
			for (uint32_t i = 0; i < o->set->series[k].n; i++)
				o->ns[o->set->series[k].sess[i]] += o->set->series[k].centre_ns[i];
		for (uint32_t s = 0; s < o->set->nsessions; s++)
			if (o->ns[s] > 0) {
				o->sess[o->n] = s;
				o->ns[o->n++] = o->ns[s];
			}
		snprintf(o->title_buf, sizeof o->title_buf, "workload %.200s", a->val[O_WORKLOAD]);
	}
	o->title = o->title_buf;
	if (kpt_cp_detect(o->ns, o->n, &co, &o->cp, &o->ncp, &d) < 0)
		return kpt_cli_fail(&d);
	return 0;
}

static const struct kpt_cp *cp_at(const struct one *o, uint32_t i)
{
	for (uint32_t c = 0; c < o->ncp; c++)
		if (o->cp[c].at == i)
			return &o->cp[c];
	return NULL;
}

/* ---- show ------------------------------------------------------------------ */

static void json_key(struct kpt_json *j, const struct kpt_history_key *k)
{
	kpt_json_begin_object(j);
	kpt_json_kv_i64(j, "id", k->id);
	kpt_json_kv_str(j, "name", k->name);
	kpt_json_kv_str(j, "path", k->path);
	kpt_json_kv_str(j, "workload", k->workload);
	kpt_json_key(j, "grid");
	kpt_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		kpt_json_u64(j, k->grid[i]);
	kpt_json_end_array(j);
	kpt_json_key(j, "block");
	kpt_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		kpt_json_u64(j, k->block[i]);
	kpt_json_end_array(j);
	kpt_json_kv_u64(j, "ordinal", k->ordinal);
	kpt_json_end_object(j);
}

static int h_show(struct args *a, struct kpt_history *h)
{
	struct one o;
	struct kpt_diag d = { 0 };
	char buf[32], sha[16];
	int narrow;
	int rc = load_one(a, h, &o);

	if (rc != 0) {
		one_release(&o);
		return rc;
	}
	if (a->json) {
		struct kpt_json j;

		kpt_json_init(&j, stdout, 2);
		kpt_json_begin_object(&j);
		if (a->pos) {
			kpt_json_key(&j, "key");
			json_key(&j, &o.set->series[0].key);
		} else {
			kpt_json_kv_str(&j, "workload", a->val[O_WORKLOAD]);
		}
		kpt_json_kv_str(&j, "suite", o.f.suite);
		kpt_json_kv_str(&j, "gpu_slug", o.f.gpu_slug);
		kpt_json_kv_str(&j, "branch", o.f.branch);
		kpt_json_key(&j, "points");
		kpt_json_begin_array(&j);
		for (uint32_t i = 0; i < o.n; i++) {
			const struct kpt_history_session *s = &o.set->sessions[o.sess[i]];

			kpt_json_begin_object(&j);
			kpt_json_kv_i64(&j, "session", s->id);
			kpt_json_kv_str(&j, "commit", s->commit);
			kpt_json_kv_str(&j, "added", s->added);
			kpt_json_kv_str(&j, "time", s->time);
			kpt_json_kv_double(&j, "centre_ns", o.ns[i]);
			if (a->pos) {
				const struct kpt_history_series *se = &o.set->series[0];

				kpt_json_key(&j, "run_ns");
				kpt_json_begin_array(&j);
				for (uint32_t r = 0; r < se->nruns[i]; r++)
					kpt_json_double(&j, se->run_ns[i][r]);
				kpt_json_end_array(&j);
			}
			kpt_json_end_object(&j);
		}
		kpt_json_end_array(&j);
		kpt_json_key(&j, "change_points");
		kpt_json_begin_array(&j);
		for (uint32_t c = 0; c < o.ncp; c++) {
			kpt_json_begin_object(&j);
			kpt_json_kv_i64(&j, "session", o.set->sessions[o.sess[o.cp[c].at]].id);
			kpt_json_kv_str(&j, "commit", o.set->sessions[o.sess[o.cp[c].at]].commit);
			kpt_json_kv_double(&j, "step_pct", o.cp[c].step_pct);
			kpt_json_kv_double(&j, "confidence", 1 - o.cp[c].p);
			kpt_json_end_object(&j);
		}
		kpt_json_end_array(&j);
		kpt_json_end_object(&j);
		one_release(&o);
		return kpt_json_finish(&j, &d) < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
	}
	if (a->pos) {
		char *kt = NULL;
		size_t kl = 0;
		FILE *kf = open_memstream(&kt, &kl);

		if (kf) {
			fprintf(kf, "key %" PRId64 ": ", o.set->series[0].key.id);
			key_text(kf, &o.set->series[0].key);
			fclose(kf);
			kpt_text_wrap(stdout, kt, 0, (size_t)kpt_cli_table_width(), 4);
		}
		free(kt);
	} else {
		printf("workload %s: sum of %zu kernel keys\n", kpt_cli_term(a->val[O_WORKLOAD]), o.set->nseries);
	}
	printf("suite %s, GPU %s, branch %s: %u sessions\n\n", o.f.suite[0] ? kpt_cli_term(o.f.suite) : "-",
	       kpt_cli_term(o.f.gpu_slug), kpt_cli_term(o.f.branch), o.n);
	/* on a narrow terminal "added" gives way and the confidence is short */
	narrow = kpt_cli_table_width() > 0 && kpt_cli_table_width() < 110;
	printf("%-8s %-12s ", "session", "commit");
	if (!narrow)
		printf("%-20s ", "added");
	printf("%12s %5s %8s  %s\n", "centre", "runs", "change", "change point");
	for (uint32_t i = 0; i < o.n; i++) {
		const struct kpt_history_session *s = &o.set->sessions[o.sess[i]];
		const struct kpt_cp *cp = cp_at(&o, i);
		char chg[16] = "";

		if (i)
			snprintf(chg, sizeof chg, "%+.2f%%", 100 * (o.ns[i] / o.ns[i - 1] - 1));
		printf("%-8" PRId64 " %-12s ", s->id, kpt_cli_term(kpt_cli_short_commit(s->commit, sha)));
		if (!narrow)
			printf("%-20s ", kpt_cli_term(s->added));
		printf("%12s %5u %8s", kpt_cli_fmt_ns(o.ns[i], buf, sizeof buf),
		       a->pos ? o.set->series[0].nruns[i] : s->runs, chg);
		if (cp)
			printf(narrow ? "  step %+.2f%% (conf %.3f)" : "  step %+.2f%% (confidence %.4f)", cp->step_pct,
			       1 - cp->p);
		printf("\n");
	}
	one_release(&o);
	return KPT_EXIT_OK;
}

/* ---- plot ------------------------------------------------------------------ */

static int h_plot(struct args *a, struct kpt_history *h)
{
	const char *dir = a->val[O_OUT] ? a->val[O_OUT] : ".";
	char stem[96], sha[16];
	struct kpt_diag d = { 0 };
	struct one o;
	FILE *gp;
	int rc = load_one(a, h, &o);

	if (rc != 0) {
		one_release(&o);
		return rc;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		one_release(&o);
		fprintf(stderr, "kptprof: cannot make folder '%s': %s\n", dir, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	if (a->pos)
		snprintf(stem, sizeof stem, "history-key%" PRId64, o.set->series[0].key.id);
	else
		snprintf(stem, sizeof stem, "history-%.80s", a->val[O_WORKLOAD]);
	for (char *p = stem; *p; p++)
		if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			*p = '_';
	if (kpt_gp_open(dir, stem, "a kernel's time over the sessions of its history", 1000, 480, &gp, &d) < 0) {
		one_release(&o);
		return kpt_cli_fail(&d);
	}
	/* $data: x, centre (us), band low, band high: the level of the point's
	 * segment between change points +- 2 noise SDs */
	fprintf(gp, "$data << EOD\n");
	{
		double sd = kpt_cp_noise(o.ns, o.n), lvl = NAN;
		uint32_t c = 0;

		sd = isfinite(sd) ? sd : 0;
		if (!o.ncp) { /* one segment: its geometric mean */
			double sum = 0;

			for (uint32_t k = 0; k < o.n; k++)
				sum += log(o.ns[k]);
			lvl = exp(sum / o.n);
		}
		for (uint32_t i = 0; i < o.n; i++) {
			while (c < o.ncp && o.cp[c].at <= i)
				c++;
			if (o.ncp)
				lvl = c < o.ncp ? o.cp[c].before_ns : o.cp[o.ncp - 1].after_ns;
			fprintf(gp, "%u %.6g %.6g %.6g\n", i, o.ns[i] / 1e3, lvl * exp(-2 * sd) / 1e3,
				lvl * exp(2 * sd) / 1e3);
		}
	}
	fprintf(gp, "EOD\n");
	fprintf(gp, "set title ");
	kpt_gp_quote(gp, o.title);
	fprintf(gp, "\nset xlabel ");
	{
		char xl[256];

		snprintf(xl, sizeof xl, "session (suite %s, GPU %s, branch %s)", o.f.suite, o.f.gpu_slug, o.f.branch);
		kpt_gp_quote(gp, xl);
	}
	fprintf(gp, "\nset ylabel 'time (us)'\nset grid ytics\nset key top left\n");
	for (uint32_t c = 0; c < o.ncp; c++) {
		char lbl[64];

		snprintf(lbl, sizeof lbl, "%+.1f%% at %s", o.cp[c].step_pct,
			 kpt_cli_short_commit(o.set->sessions[o.sess[o.cp[c].at]].commit, sha));
		fprintf(gp, "set arrow from %g, graph 0 to %g, graph 1 nohead lc rgb '%s' dt 2\n",
			o.cp[c].at - 0.5, o.cp[c].at - 0.5, o.cp[c].step_pct > 0 ? "#c0392b" : "#27ae60");
		fprintf(gp, "set label ");
		kpt_gp_quote(gp, lbl);
		fprintf(gp, " at %g, graph 0.95 left offset 0.5,0 tc rgb '%s'\n", o.cp[c].at - 0.5,
			o.cp[c].step_pct > 0 ? "#c0392b" : "#27ae60");
	}
	fprintf(gp, "plot $data using 1:3:4 with filledcurves lc rgb '#d6e4f0' title 'noise band (level +- 2 SD)', \\\n"
		"     $data using 1:2 with linespoints pt 7 ps 0.6 lc rgb '#1f4e79' title 'centre of the run medians'\n");
	if (kpt_gp_close(gp, dir, stem, &d) < 0) {
		one_release(&o);
		return kpt_cli_fail(&d);
	}
	one_release(&o);
	rc = kpt_gnuplot_render(dir, stem, 0, &d);
	if (rc == KPT_E_UNSUPPORTED) {
		printf("%s/%s.gp\n", dir, stem);
		fprintf(stderr, "hint: gnuplot not found: install it (Debian: apt-get install gnuplot-nox) and run 'gnuplot %s.gp' in '%s'\n",
			stem, dir);
		return KPT_EXIT_OK;
	}
	if (rc < 0)
		return kpt_cli_fail(&d);
	printf("%s/%s.png\n", dir, stem);
	return KPT_EXIT_OK;
}

/* ---- detect ---------------------------------------------------------------- */

struct group {
	const char *suite, *gpu_slug;
};

/* The distinct (suite, GPU slug) pairs of the branch's sessions, or the one
 * the options name. */
static int list_groups(const struct args *a, struct kpt_history *h, const char *branch,
		       struct kpt_history_set **all, struct group **g, size_t *ng)
{
	struct kpt_history_filter f = { .suite = a->val[O_SUITE], .gpu_slug = a->val[O_GPU], .branch = branch };
	struct kpt_diag d = { 0 };

	*g = NULL;
	*ng = 0;
	if (kpt_history_sessions(h, &f, all, &d) < 0)
		return kpt_cli_fail(&d);
	*g = calloc((*all)->nsessions + 1, sizeof **g);
	if (!*g)
		return kpt_cli_usage_error("history", "out of memory");
	for (size_t i = 0; i < (*all)->nsessions; i++) {
		const struct kpt_history_session *s = &(*all)->sessions[i];
		size_t j = 0;

		while (j < *ng && !(strcmp((*g)[j].suite, s->suite) == 0 && strcmp((*g)[j].gpu_slug, s->gpu_slug) == 0))
			j++;
		if (j == *ng)
			(*g)[(*ng)++] = (struct group){ s->suite, s->gpu_slug };
	}
	return 0;
}

/* What detect counts and where it writes, across groups. */
struct detect_run {
	const struct args *a;
	struct kpt_json *j;         /* NULL: text */
	uint32_t regressions, total, unbacked;
};

/* The series a change point is on, as text: a key, a key's launches summed,
 * a family's machine effect or a workload's total. */
static void pool_series_text(FILE *out, const struct kpt_pool_series *x)
{
	switch (x->kind) {
	case KPT_POOL_KEY:
		fprintf(out, "%" PRId64 ": ", x->se->key.id);
		key_text(out, &x->se->key);
		break;
	case KPT_POOL_GROUP:
		fprintf(out, "%" PRId64 ": %s (%u launches/iter summed)%s%s", x->se->key.id, x->se->key.name, x->nkeys,
			x->se->key.path[0] ? " in " : "", x->se->key.path);
		break;
	case KPT_POOL_FAMILY:
		fprintf(out, "family %s (its machine effect: median of %u keys)", x->name, x->nkeys);
		break;
	case KPT_POOL_TOTAL:
		fprintf(out, "workload %s (sum of its kernels)", x->name);
		break;
	}
}

static const char *const pool_kind_names[] = {
	[KPT_POOL_KEY] = "key", [KPT_POOL_GROUP] = "launches", [KPT_POOL_FAMILY] = "family", [KPT_POOL_TOTAL] = "workload",
};

/* One line of text wrapped to the table width (one line when piped),
 * continuation lines indented by indent. */
__attribute__((format(printf, 2, 3))) static void printf_wrapped(size_t indent, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	kpt_text_wrap(stdout, buf, 0, (size_t)kpt_cli_table_width(), indent);
}

/* detect's rows on a terminal (piped or --wide: the one-line rows of
 * old, whose numbers alone take 100 columns): the series on a line of its
 * own */
static int detect_narrow(void)
{
	return kpt_cli_table_width() > 0;
}

static void print_found(const struct kpt_history_set *set, const struct kpt_pool_series *x, const struct kpt_pool_cp *c)
{
	const struct kpt_history_session *s = &set->sessions[x->sess[c->cp.at]];
	const struct kpt_history_session *prev = &set->sessions[x->sess[c->cp.at - 1]];
	char b1[32], b2[32], sha[16], sha2[16], mach[24];

	snprintf(mach, sizeof mach, "%u/%u", c->machines_carry, c->machines_after);
	if (x->kind == KPT_POOL_FAMILY) { /* levels are relative, not times */
		snprintf(b1, sizeof b1, "%+.2f%%", 100 * (c->cp.before_ns / 1e6 - 1));
		snprintf(b2, sizeof b2, "%+.2f%%", 100 * (c->cp.after_ns / 1e6 - 1));
	} else {
		kpt_cli_fmt_ns(c->cp.before_ns, b1, sizeof b1);
		kpt_cli_fmt_ns(c->cp.after_ns, b2, sizeof b2);
	}
	if (detect_narrow()) {
		/* a terminal too narrow for the piped row: previous commit and
		 * session give way, the series goes on its own wrapped line */
		char *st = NULL;
		size_t sl = 0;
		FILE *sf = open_memstream(&st, &sl);

		printf("%+7.2f%% %7.4f %-12s %9s -> %-9s %5.2f%% %5s %s\n", c->cp.step_pct, 1 - c->cp.p,
		       kpt_cli_term(kpt_cli_short_commit(s->commit, sha)), b1, b2, c->cp.noise_pct, mach,
		       c->regression ? "REGRESSION" : "");
		if (sf) {
			pool_series_text(sf, x);
			fclose(sf);
			fputs("    ", stdout);
			kpt_text_wrap(stdout, st, 4, (size_t)kpt_cli_table_width(), 4);
		}
		free(st);
		return;
	}
	printf("%+7.2f%% %10.6f  %-12s %-12s %8" PRId64 " %10s -> %-10s %5.2f%% %8s  %s", c->cp.step_pct, 1 - c->cp.p,
	       kpt_cli_term(kpt_cli_short_commit(s->commit, sha)), kpt_cli_term(kpt_cli_short_commit(prev->commit, sha2)), s->id, b1, b2, c->cp.noise_pct, mach,
	       c->regression ? "REGRESSION " : "");
	pool_series_text(stdout, x);
	printf("\n");
}

static void json_found(struct kpt_json *j, const struct kpt_history_set *set, const struct kpt_pool_series *x,
		       const struct kpt_pool_cp *c)
{
	const struct kpt_history_session *s = &set->sessions[x->sess[c->cp.at]];
	const struct kpt_history_session *prev = &set->sessions[x->sess[c->cp.at - 1]];

	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "kind", pool_kind_names[x->kind]);
	kpt_json_key(j, "key");
	if (x->se) {
		json_key(j, &x->se->key);
	} else { /* family, workload: no key of their own */
		struct kpt_history_key k = { .name = "", .mangled = "", .path = "",
					     .workload = x->kind == KPT_POOL_TOTAL ? x->name : "" };

		json_key(j, &k);
	}
	kpt_json_kv_str(j, "family", x->kind == KPT_POOL_FAMILY ? x->name : x->family);
	kpt_json_kv_u64(j, "keys", x->nkeys);
	kpt_json_kv_i64(j, "session", s->id);
	kpt_json_kv_str(j, "commit", s->commit);
	kpt_json_kv_str(j, "previous_commit", prev->commit);
	kpt_json_kv_double(j, "step_pct", c->cp.step_pct);
	kpt_json_kv_double(j, "confidence", 1 - c->cp.p);
	kpt_json_kv_double(j, "p", c->cp.p);
	kpt_json_kv_double(j, "before_ns", c->cp.before_ns);
	kpt_json_kv_double(j, "after_ns", c->cp.after_ns);
	kpt_json_kv_double(j, "noise_pct", c->cp.noise_pct);
	kpt_json_kv_u64(j, "sessions_after", x->n - c->cp.at);
	kpt_json_kv_u64(j, "machines", c->machines_carry);
	kpt_json_kv_u64(j, "machines_after", c->machines_after);
	kpt_json_kv_bool(j, "head", c->head);
	kpt_json_kv_bool(j, "regression", c->regression);
	kpt_json_end_object(j);
}

/* Change points of one (suite, GPU model) group under the pool model
 * (analyzer/history/kpt_history_pool.h); text or JSON rows. */
static int detect_group(struct detect_run *r, const struct kpt_history_set *set)
{
	struct kpt_pool_opts o;
	struct kpt_pool_result *res;
	struct kpt_diag d = { 0 };
	int rc;

	kpt_pool_opts_default(&o);
	o.cp = (struct kpt_cp_opts){ r->a->min_step, r->a->alpha, r->a->min_seg };
	o.min_machines = r->a->min_machines;
	o.head = r->a->head;
	o.threshold_pct = r->a->threshold;
	o.no_totals = r->a->val[O_WORKLOAD] != NULL;
	/* a phase per group: the group's lines follow on stdout */
	kpt_progress_begin("detect", 0, "series");
	rc = kpt_history_pool_detect(set, &o, &res, &d);
	kpt_progress_end();
	if (rc < 0)
		return kpt_cli_fail(&d);
	if (r->j) {
		kpt_json_kv_u64(r->j, "machines", res->machines);
		/* which reading of the machines: one runner, or a pool */
		kpt_json_kv_str(r->j, "mode", res->machines == 1 ? "one_runner" : "pool");
		kpt_json_kv_u64(r->j, "min_machines_used", res->min_machines);
		kpt_json_kv_u64(r->j, "unbacked", res->unbacked);
		kpt_json_key(r->j, "change_points");
		kpt_json_begin_array(r->j);
	} else {
		if (res->machines == 1)
			printf("mode: one runner (1 machine): its session-to-session noise is the noise, a step needs no "
			       "other machine\n");
		else
			printf("mode: a pool of %u machines: a step must be carried by %u of them%s\n", res->machines,
			       res->min_machines, res->min_machines < r->a->min_machines ? " (all: fewer than --min-machines)" : "");
	}
	if (!r->j && res->ncps) {
		if (detect_narrow())
			printf("%8s %7s %-12s %9s    %-9s %6s %5s\n    %s\n", "step", "conf", "commit", "before", "after",
			       "noise", "mach", "series");
		else
			printf("%8s %10s  %-12s %-12s %8s %10s    %-10s %6s %8s  %s\n", "step", "confidence", "commit",
			       "previous", "session", "before", "after", "noise", "machines", "series");
	}
	for (size_t c = 0; c < res->ncps; c++) {
		const struct kpt_pool_series *x = &res->series[res->cps[c].series];

		if (r->j)
			json_found(r->j, set, x, &res->cps[c]);
		else
			print_found(set, x, &res->cps[c]);
	}
	if (r->j)
		kpt_json_end_array(r->j);
	else if (!res->ncps)
		printf("no change points\n");
	if (!r->j && res->unbacked)
		printf("(%u change point%s of single series not carried by %u or more of the %u machines: not reported)\n",
		       res->unbacked, res->unbacked == 1 ? "" : "s", res->min_machines, res->machines);
	r->regressions += res->regressions;
	r->total += (uint32_t)res->ncps;
	r->unbacked += res->unbacked;
	kpt_pool_result_destroy(res);
	return 0;
}

static int h_detect(struct args *a, struct kpt_history *h)
{
	const char *branch = a->val[O_BRANCH] ? a->val[O_BRANCH] : "main";
	struct kpt_history_set *all = NULL;
	struct group *g = NULL;
	size_t ng = 0;
	struct kpt_diag d = { 0 };
	struct kpt_json j;
	struct detect_run r = { a, NULL, 0, 0, 0 };
	int rc = list_groups(a, h, branch, &all, &g, &ng);

	if (rc != 0)
		goto out;
	if (!ng) {
		fprintf(stderr, "kptprof: no sessions on branch '%s' in '%s'\n", branch, kpt_history_where(h));
		rc = KPT_EXIT_ERROR;
		goto out;
	}
	if (a->json) {
		r.j = &j;
		kpt_json_init(&j, stdout, 3);
		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "branch", branch);
		kpt_json_kv_double(&j, "threshold_pct", a->threshold);
		kpt_json_kv_double(&j, "min_step_pct", a->min_step);
		kpt_json_kv_double(&j, "alpha", a->alpha);
		kpt_json_kv_u64(&j, "head", a->head);
		kpt_json_kv_u64(&j, "min_machines", a->min_machines);
		kpt_json_key(&j, "groups");
		kpt_json_begin_array(&j);
	}
	for (size_t gi = 0; gi < ng && rc == 0; gi++) {
		struct kpt_history_filter f = { .suite = g[gi].suite, .gpu_slug = g[gi].gpu_slug, .branch = branch,
						.workload = a->val[O_WORKLOAD], .last = a->last };
		struct kpt_history_set *set;

		if (kpt_history_query(h, &f, &set, &d) < 0) {
			rc = kpt_cli_fail(&d);
			break;
		}
		if (a->json) {
			kpt_json_begin_object(&j);
			kpt_json_kv_str(&j, "suite", f.suite);
			kpt_json_kv_str(&j, "gpu_slug", f.gpu_slug);
			kpt_json_kv_u64(&j, "sessions", set->nsessions);
			kpt_json_kv_u64(&j, "keys", set->nseries);
		} else {
			if (gi)
				printf("\n");
			printf_wrapped(4, "suite %s, GPU %s, branch %s: %zu sessions, %zu kernel keys",
				       f.suite[0] ? kpt_cli_term(f.suite) : "-", kpt_cli_term(f.gpu_slug), kpt_cli_term(branch),
				       set->nsessions, set->nseries);
		}
		rc = detect_group(&r, set);
		if (a->json)
			kpt_json_end_object(&j);
		kpt_history_set_destroy(set);
	}
	if (rc != 0)
		goto out;
	if (a->json) {
		kpt_json_end_array(&j);
		kpt_json_kv_u64(&j, "change_points", r.total);
		kpt_json_kv_u64(&j, "unbacked", r.unbacked);
		kpt_json_kv_u64(&j, "head_regressions", r.regressions);
		kpt_json_kv_str(&j, "result", r.regressions ? "regression" : "ok");
		kpt_json_end_object(&j);
		if (kpt_json_finish(&j, &d) < 0) {
			rc = kpt_cli_fail(&d);
			goto out;
		}
	} else if (r.regressions) {
		printf("\n");
		printf_wrapped(0, "%u series (kernel keys, launches, families, workload totals) got slower by %g%% or more "
			       "in the last %u sessions of %s", r.regressions, a->threshold, a->head, branch);
	}
	rc = r.regressions ? KPT_EXIT_REGRESSION : KPT_EXIT_OK;
out:
	free(g);
	kpt_history_set_destroy(all);
	return rc;
}

/* ---- dispatch -------------------------------------------------------------- */

static int (*const subs[S_COUNT])(struct args *, struct kpt_history *) = {
	[S_LS] = h_ls, [S_SHOW] = h_show, [S_PLOT] = h_plot, [S_DETECT] = h_detect,
};

int cmd_history(int argc, char **argv)
{
	struct args a;
	struct kpt_history *h = NULL;
	int rc;

	for (int i = 1; i < argc; i++)
		if (kpt_cli_is_help(argv[i]))
			return kpt_cli_help("history");
	if ((rc = parse_args(argc, argv, &a)) != 0)
		goto out;
	if (a.sub == S_ADD) {
		rc = h_add(&a);
		goto out;
	}
	if ((rc = open_store(&a, 0, &h)) != 0)
		goto out;
	rc = subs[a.sub](&a, h);
	kpt_history_close(h);
out:
	/* output lost (a full disk, a closed pipe) is an error, never exit 0 */
	if (rc != KPT_EXIT_ERROR && (fflush(stdout) != 0 || ferror(stdout))) {
		struct kpt_diag d = { 0 };

		kpt_diag_set(&d, KPT_E_IO, "history %s: cannot write to standard output: %s", sub_names[a.sub],
			     strerror(errno ? errno : EIO));
		rc = kpt_cli_fail(&d);
	}
	for (uint32_t i = 0; i < a.nlabels; i++)
		free((char *)a.labels[i].name);
	return rc;
}
