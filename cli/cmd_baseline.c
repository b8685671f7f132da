/* cmd_baseline.c - kptprof baseline list|show|update|path: a baseline is a
 * folder of sessions, DIR/<gpu-slug>/<suite>/<time>-<gpu>.kpt, one
 * recording per session (machine and boot), the newest --keep kept (DIR:
 * --baselines, else $KPTPROF_BASELINES, else ./baselines). A single recording
 * DIR/<gpu-slug>/<suite>.kpt (the older layout) still works, and update
 * moves it into the folder as one session. The baseline itself (listing,
 * naming, adding, pruning) is analyzer/baseline's (kpt_baseline.h); this
 * file parses and prints. */
#define _GNU_SOURCE /* asprintf */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_baseline.h"
#include "kpt_cli.h"
#include "kpt_format.h"
#include "kpt_project.h"

struct bl_args {
	const char *dir, *suite, *gpu, *from;
	const char *project;        /* --project FILE */
	struct kpt_project *proj;   /* the project that applies, NULL none */
	uint64_t keep;              /* 0: not given (16) */
	char **pos;                 /* the operands: FILE of show and update */
	int npos;
};

enum { V_LIST, V_SHOW, V_UPDATE, V_PATH, V_COUNT };
static const char *const verbs[V_COUNT] = { "list", "show", "update", "path" };
/* the most operands each verb takes */
static const int verb_npos[V_COUNT] = { 0, 1, 1, 0 };

#define BA struct bl_args
#define V(v) (1u << (v))
const struct kpt_opt kpt_baseline_opts[] = {
	KPT_OPT_VERB(V_LIST, "list", "every baseline under DIR: GPU, suite, runs, kernels, when recorded, file"),
	KPT_OPT_VERB(V_SHOW, "show [FILE]", "GPU, runs, kernels and meta of FILE, else of the baseline for --gpu or --from "
			"and --suite"),
	KPT_OPT_VERB(V_UPDATE, "update FILE", "add FILE (>= 2 runs) as a session to DIR/<its gpu-slug>/<suite>/ (never over "
			"another session; the same GPU and boot: replaced)"),
	KPT_OPT_VERB(V_PATH, "path", "print the baseline path for --gpu or --from and --suite"),
	KPT_OPT_STRING(0, "baselines", "DIR", BA, dir,
		       "folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed "
		       "share/kptprof/baselines)"),
	KPT_OPT_STRING(0, "project", "FILE", BA, project,
		       "the project of FILE (kptprof.json): its baselines folder, its name the suite of show and path, "
		       "update of its recordings into its folder (default: kptprof.json of the working folder or one above "
		       "it; --baselines overrides)"),
	KPT_OPT_STRING(0, "suite", "S", BA, suite,
		       "suite (default: the project's name, else default, for show and path; FILE's recorded suite for update)",
		       .verbs = V(V_SHOW) | V(V_UPDATE) | V(V_PATH)),
	KPT_OPT_STRING(0, "gpu", "NAME", BA, gpu,
		       "GPU of show and path: a slug or a device name (required: this or --from, but for show FILE)",
		       .verbs = V(V_SHOW) | V(V_PATH)),
	KPT_OPT_STRING(0, "from", "FILE", BA, from,
		       "GPU of show and path: the one FILE was recorded on (required: this or --gpu)",
		       .verbs = V(V_SHOW) | V(V_PATH)),
	KPT_OPT_U64(0, "keep", "N", BA, keep, 1, 1000, "update: sessions a baseline keeps, 1 to 1000 (default 16)",
		    .verbs = V(V_UPDATE)),
	KPT_OPT_WIDE(.verbs = 1u << V_LIST | 1u << V_SHOW),
	KPT_OPT_WIDTH(.verbs = 1u << V_LIST | 1u << V_SHOW),
	KPT_OPT_END,
};
#undef V
#undef BA

/* The cells of one session row: GPU, suite, runs, kernels, recorded, file. */
enum { C_GPU, C_SUITE, C_RUNS, C_KERNELS, C_TIME, C_FILE, C_COUNT };

/* Fills cells[C_COUNT] (malloc'd) for the recording at path; 0, or the
 * exit status after printing why it cannot be read. */
static int bl_row(const char *path, char **cells)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_counts c;
	const struct kpt_device *dev;
	size_t ndev;
	const char *t, *s;

	if (kpt_file_open(path, &f, &d) < 0 || kpt_file_counts(f, &c, &d) < 0 ||
	    kpt_file_devices(f, &dev, &ndev, &d) < 0) {
		kpt_file_close(f);
		return kpt_cli_fail(&d);
	}
	t = kpt_file_meta_get(f, "time");
	s = kpt_file_meta_get(f, "suite");
	cells[C_GPU] = strdup(ndev ? kpt_cli_term(dev[0].slug) : "?");
	cells[C_SUITE] = strdup(s ? kpt_cli_term(s) : "-");
	if (asprintf(&cells[C_RUNS], "%u", c.runs) < 0)
		cells[C_RUNS] = NULL;
	if (asprintf(&cells[C_KERNELS], "%llu", (unsigned long long)c.kernels) < 0)
		cells[C_KERNELS] = NULL;
	cells[C_TIME] = strdup(t ? kpt_cli_term(t) : "-");
	cells[C_FILE] = strdup(kpt_cli_term(path));
	kpt_file_close(f);
	return 0;
}

/* The sessions at paths as a table (with its header line when `header`):
 * columns as wide as their cells; on a terminal (kpt_cli_table_width) the
 * file names keep their tail in what is left, Recorded giving way first
 * below 20 columns for them. */
static int bl_table(const char *const *paths, size_t n, int header)
{
	static const char *const titles[C_COUNT] = { "GPU", "Suite", "Runs", "Kernels", "Recorded", "File" };
	char *(*cells)[C_COUNT] = calloc(n ? n : 1, sizeof *cells), **files = calloc(n ? n : 1, sizeof *files);
	const char **full = calloc(n ? n : 1, sizeof *full);
	size_t w[C_COUNT], used = 0, k = 0;
	int rc = 0, width = kpt_cli_table_width(), show_time = 1;

	if (!cells || !files || !full) {
		free(cells), free(files), free(full);
		fprintf(stderr, "kptprof baseline: out of memory\n");
		return KPT_EXIT_ERROR;
	}
	/* piped, the columns of old (scripts read them); on a terminal as wide
	 * as their cells */
	static const size_t piped_w[C_COUNT] = { 28, 12, 5, 10, 20, 0 };

	for (int c = 0; c < C_COUNT; c++)
		w[c] = width > 0 || !piped_w[c] ? strlen(titles[c]) : piped_w[c];
	for (size_t i = 0; i < n; i++) {
		if (bl_row(paths[i], cells[k]) != 0) {
			rc = KPT_EXIT_ERROR;
			continue;
		}
		for (int c = 0; c < C_COUNT; c++) {
			size_t len = cells[k][c] ? kpt_text_columns(cells[k][c]) : 1;

			w[c] = len > w[c] ? len : w[c];
		}
		full[k] = cells[k][C_FILE] ? cells[k][C_FILE] : "?";
		k++;
	}
	for (int c = 0; c < C_FILE; c++)
		used += w[c] + (c == C_KERNELS ? 2 : 1);
	if (width > 0 && used + 20 > (size_t)width) {
		show_time = 0;
		used -= w[C_TIME] + 1;
	}
	if (kpt_text_column(full, k, width > 0 ? ((size_t)width > used + 12 ? (size_t)width - used : 12) : 0,
			    KPT_CUT_TAIL, files) < 0)
		memset(files, 0, (n ? n : 1) * sizeof *files);
	if (header) {
		printf("%-*s %-*s %*s %*s  ", (int)w[C_GPU], titles[C_GPU], (int)w[C_SUITE], titles[C_SUITE],
		       (int)w[C_RUNS], titles[C_RUNS], (int)w[C_KERNELS], titles[C_KERNELS]);
		if (show_time)
			printf("%-*s ", (int)w[C_TIME], titles[C_TIME]);
		printf("%s\n", titles[C_FILE]);
	}
	for (size_t i = 0; i < k; i++) {
		char **r = cells[i];

		printf("%-*s %-*s %*s %*s  ", (int)w[C_GPU], r[C_GPU] ? r[C_GPU] : "?", (int)w[C_SUITE],
		       r[C_SUITE] ? r[C_SUITE] : "?", (int)w[C_RUNS], r[C_RUNS] ? r[C_RUNS] : "?", (int)w[C_KERNELS],
		       r[C_KERNELS] ? r[C_KERNELS] : "?");
		if (show_time)
			printf("%-*s ", (int)w[C_TIME], r[C_TIME] ? r[C_TIME] : "?");
		printf("%s\n", files[i] ? files[i] : full[i]);
	}
	kpt_text_column_free(files, k);
	for (size_t i = 0; i < k; i++)
		for (int c = 0; c < C_COUNT; c++)
			free(cells[i][c]);
	free(cells), free(files), free(full);
	return rc;
}

/* Everything about one recording: file, GPU, runs, kernels, its meta;
 * long values wrapped on a terminal. */
static int bl_describe(const char *path, FILE *out)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_counts c;
	const struct kpt_device *dev;
	const struct kpt_meta_kv *kv;
	size_t ndev, n, width = (size_t)kpt_cli_table_width();
	char *line;

	if (kpt_file_open(path, &f, &d) < 0 || kpt_file_counts(f, &c, &d) < 0 ||
	    kpt_file_devices(f, &dev, &ndev, &d) < 0) {
		kpt_file_close(f);
		return kpt_cli_fail(&d);
	}
	fprintf(out, "file:     ");
	kpt_text_wrap(out, kpt_cli_term(path), 10, width, 10);
	if (ndev && asprintf(&line, "gpu:      %s (%s), driver %s (CUDA %u.%u)", kpt_cli_term(dev[0].name),
			     kpt_cli_term(dev[0].slug),
			     dev[0].driver_string[0] ? kpt_cli_term(dev[0].driver_string) : "?",
			     dev[0].driver_version / 1000, dev[0].driver_version % 1000 / 10) >= 0) {
		kpt_text_wrap(out, line, 0, width, 10);
		free(line);
	}
	fprintf(out, "runs:     %u (processes %u)\nkernels:  %llu\n", c.runs, c.processes,
		(unsigned long long)c.kernels);
	if (kpt_file_meta(f, &kv, &n, &d) == 0)
		for (size_t i = 0; i < n; i++) {
			int k = fprintf(out, "%-9s ", kpt_cli_term(kv[i].key));

			kpt_text_wrap(out, kpt_cli_term(kv[i].value), k > 0 ? (size_t)k : 0, width, 10);
		}
	kpt_file_close(f);
	return 0;
}

/* GPU slug for path/show: --gpu (a slug or a device name), or --from FILE. */
static int bl_slug(const struct bl_args *a, char *buf, size_t cap)
{
	struct kpt_diag d = { 0 };

	if (a->gpu) {
		kpt_slug(a->gpu, buf, (int)cap);
		return kpt_cli_check_component("GPU slug", buf, "--gpu", &d) < 0 ? kpt_cli_fail(&d) : 0;
	}
	if (!a->from)
		return kpt_cli_usage_error("baseline", "say which GPU: --gpu NAME or --from FILE (a recording made on it)");
	if (kpt_cli_file_series(a->from, buf, cap, NULL, 0, &d) < 0)
		return kpt_cli_fail(&d);
	return kpt_cli_check_component("GPU slug", buf, a->from, &d) < 0 ? kpt_cli_fail(&d) : 0;
}

/* The baseline of show and path (the folder kind): opened, or the exit
 * status after the message. NOTFOUND leaves *b NULL and returns 0 with
 * the path looked for in missing (path prints it). */
static int bl_open(const struct bl_args *a, struct kpt_baseline **b, char *missing, size_t cap)
{
	struct kpt_baseline_where w = { .dir = a->dir };
	const char *suite = a->suite ? a->suite : a->proj ? a->proj->name : "default";
	char slug[256];
	struct kpt_diag d = { 0 };
	int rc = bl_slug(a, slug, sizeof slug);

	*b = NULL;
	if (rc)
		return rc;
	if (kpt_cli_check_component("suite", suite, "--suite", &d) < 0)
		return kpt_cli_fail(&d);
	if ((rc = kpt_baseline_open(slug, suite, &w, b, &d)) == KPT_E_NOTFOUND) {
		kpt_baseline_path(a->dir, slug, suite, missing, cap);
		return 0;
	}
	return rc < 0 ? kpt_cli_fail(&d) : 0;
}

static void bl_note(void *ctx, enum kpt_baseline_note_kind kind, const char *text)
{
	(void)ctx;
	fprintf(stderr, "kptprof baseline: %s%s\n", kind == KPT_BASELINE_NOTE_WARNING ? "warning: " : "",
		kpt_cli_term(text));
}

/* Adds the recording as a session (kpt_baseline_add: naming, same
 * session, duplicates, pruning) and says what it did. */
static int bl_update(struct bl_args *a)
{
	struct kpt_baseline_add_opts o = { .suite = a->suite, .keep = (unsigned long)a->keep, .note = bl_note };
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };

	if (a->npos != 1)
		return kpt_cli_usage_error("baseline", "update needs the recording: kptprof baseline update FILE");
	if (a->suite && kpt_cli_check_component("suite", a->suite, "--suite", &d) < 0)
		return kpt_cli_fail(&d);
	if (!a->dir) {
		/* a recording of the project goes to its folder, any other to the default */
		char slug[256], suite[256];

		if (kpt_cli_file_series(a->pos[0], slug, sizeof slug, suite, sizeof suite, &d) < 0)
			return kpt_cli_fail(&d);
		/* a recording of no suite (an imported trace) in a project: the
		 * project's, said in one line */
		if (a->proj && !a->suite && !suite[0]) {
			fprintf(stderr, "kptprof baseline: '%s' names no suite: filed as project '%s' (--suite NAME for "
					"another)\n", kpt_cli_term(a->pos[0]), kpt_cli_term(a->proj->name));
			a->suite = o.suite = a->proj->name;
		}
		a->dir = a->proj && strcmp(a->suite ? a->suite : suite, a->proj->name) == 0 ? a->proj->baselines :
			 kpt_cli_baselines_dir();
	}
	if (kpt_baseline_add(a->dir, a->pos[0], &o, &r, &d) < 0)
		return kpt_cli_fail(&d);
	fprintf(stderr, "kptprof baseline: '%s' holds %zu session%s\n", kpt_cli_term(r.folder), r.sessions,
		r.sessions == 1 ? "" : "s");
	printf("%s\n", r.path);
	return kpt_cli_stdout_done(0);
}

static int bl_list(const struct bl_args *a)
{
	struct kpt_diag d = { 0 };
	char **v = NULL;
	size_t n = 0;
	int rc = 0;

	if (kpt_baseline_list_all(a->dir, &v, &n, &d) < 0)
		return kpt_cli_fail(&d);
	rc = bl_table((const char *const *)v, n, 1);
	kpt_baseline_paths_free(v, n);
	if (!n)
		fprintf(stderr, "kptprof baseline: no baselines under '%s'\nhint: 'kptprof baseline update FILE' adds one\n",
			a->dir);
	return rc;
}

/* "baseline: FOLDER (N sessions)"; on a terminal the folder keeps its tail
 * within the width (a deep checkout's path would wrap it). */
static void bl_show_header(const char *where, size_t nv)
{
	static const char head[] = "baseline: ";
	char tail[32], *cut = NULL;
	const char *w = kpt_cli_term(where);
	const int width = kpt_cli_table_width();
	size_t other;

	snprintf(tail, sizeof tail, " (%zu session%s)", nv, nv == 1 ? "" : "s");
	other = strlen(head) + strlen(tail);
	if (width > 0 && other + kpt_text_columns(w) > (size_t)width &&
	    kpt_text_column(&w, 1, (size_t)width > other + 12 ? (size_t)width - other : 12, KPT_CUT_TAIL, &cut) < 0)
		cut = NULL;
	printf("%s%s%s\n", head, cut ? cut : w, tail);
	kpt_text_column_free(&cut, 1);
}

static int bl_show(const struct bl_args *a)
{
	struct kpt_baseline *b;
	struct kpt_baseline_desc ds;
	const char *const *v;
	char missing[PATH_MAX + 512];
	size_t nv;
	int rc;

	if (a->npos == 1)
		return bl_describe(a->pos[0], stdout);
	if ((rc = bl_open(a, &b, missing, sizeof missing)))
		return rc;
	if (!b) {
		fprintf(stderr, "kptprof: no baseline '%s'\nhint: 'kptprof baseline list' shows what there is\n",
			kpt_cli_term(missing));
		return KPT_EXIT_ERROR;
	}
	kpt_baseline_describe(b, &ds);
	v = kpt_baseline_files(b, &nv);
	if (ds.one_file) {
		rc = bl_describe(v[0], stdout);
	} else {
		bl_show_header(ds.where, nv);
		rc = bl_table(v, nv, 0);
	}
	kpt_baseline_close(b);
	return rc;
}

static int bl_path(const struct bl_args *a)
{
	struct kpt_baseline *b;
	struct kpt_baseline_desc ds;
	char missing[PATH_MAX + 512];
	int rc;

	if ((rc = bl_open(a, &b, missing, sizeof missing)))
		return rc;
	if (b)
		kpt_baseline_describe(b, &ds);
	printf("%s\n", b ? ds.where : missing);
	kpt_baseline_close(b);
	return 0;
}

/* The action verb (index into cmd_baseline's verbs) on the parsed args. */
static int bl_run(int verb, struct bl_args *a)
{
	static int (*const run[V_COUNT])(const struct bl_args *) = {
		[V_LIST] = bl_list, [V_SHOW] = bl_show, [V_PATH] = bl_path,
	};

	return verb == V_UPDATE ? bl_update(a) : run[verb](a);
}

int cmd_baseline(int argc, char **argv)
{
	struct bl_args a = { 0 };
	struct kpt_diag d = { 0 };
	int verb, rc;

	if (argc < 2 || kpt_cli_is_help(argv[1]))
		return argc < 2 ? kpt_cli_usage_error("baseline", "expected list, show, update or path")
				: kpt_cli_help("baseline");
	if (kpt_opt_verb("baseline", kpt_baseline_opts, argv[1], &verb))
		return KPT_EXIT_ERROR;
	if ((rc = kpt_opt_parse_verb("baseline", verbs[verb], verb, kpt_baseline_opts, &a, argc - 1, argv + 1,
				     &a.npos)) != KPT_OPT_GO)
		return rc;
	a.pos = argv + 2;
	if (a.npos > verb_npos[verb])
		return kpt_cli_usage_error("baseline", "too many arguments: '%s'", a.pos[verb_npos[verb]]);
	/* the project that applies: --project FILE, else kptprof.json from here up */
	if (kpt_cli_project(a.project, &a.proj, &d) < 0)
		return kpt_cli_fail(&d);
	/* update picks its folder by the recording's suite (bl_update) */
	if (!a.dir && verb != V_UPDATE)
		a.dir = a.proj ? a.proj->baselines : kpt_cli_baselines_dir();
	rc = kpt_cli_stdout_done(bl_run(verb, &a));
	kpt_project_destroy(a.proj);
	return rc;
}
