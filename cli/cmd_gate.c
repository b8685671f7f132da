/* cmd_gate.c - kptprof gate: record a suite, or a project's workloads
 * (kptprof.json), on this GPU (or take --from FILE), open this GPU model's
 * baseline (analyzer/baseline: a folder of sessions, or with --db the last
 * sessions of the history store), diff, write the reports, exit as diff
 * does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_ab.h"
#include "cmd_diff.h"
#include "kpt_baseline.h"
#include "kpt_cli.h"
#include "kpt_format.h"
#include "kpt_history.h"
#include "kpt_progress.h"
#include "kpt_project.h"
#include "kpt_record.h"

/* Where baselines live when --baselines is not given. */
static const char *default_baselines(void)
{
	return kpt_cli_baselines_dir();
}

/* True when this machine can record: the collector's GPU probe
 * (kpt_record.h), its GPUs into l for the recorder (no second probe). */
static int have_gpu_driver(struct kpt_gpu_list *l)
{
	struct kpt_diag d;

	kpt_diag_clear(&d);
	return kpt_collector_find(NULL)->probe(l, &d) == 0;
}

/* One pair of gate --against done: the progress line. */
static void against_pair(void *ctx, const struct kpt_ab_pair *p)
{
	(void)ctx;
	fprintf(stderr, "kptprof gate: pair %ld/%ld (%s first): A %.1f s, B %.1f s\n", p->i + 1, p->pairs,
		p->b_first ? "B" : "A", p->wall_s[0], p->wall_s[1]);
}

/* The project file of this checkout for gate --against: --project, else,
 * without --suite, the kptprof.json that applies here; 0 with *out NULL
 * when none does (the bundled suite, against_suite). */
static int against_project(const char *project, int suite_given, struct kpt_project **out, struct kpt_diag *d)
{
	*out = NULL;
	return project || !suite_given ? kpt_cli_project(project, out, d) : 0;
}

/* The bundled suite of this build as this checkout's side (kpt-workloads
 * beside kptprof, or $KPTPROF_WORKLOADS). Into *out. */
static int against_suite(const char *suite, const char *dir, struct kpt_project **out, struct kpt_diag *d)
{
	char runner[PATH_MAX];

	if (kpt_cli_find_runner(runner, sizeof runner) < 0) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "no %s here and no workload runner 'kpt-workloads' beside kptprof: "
			     "nothing to run", KPT_PROJECT_FILE);
		return kpt_diag_hint(d, "write a %s (docs/projects.md), or build the kernels (a CUDA toolkit is "
				     "needed) or set KPTPROF_WORKLOADS", KPT_PROJECT_FILE);
	}
	return kpt_project_builtin(runner, suite, dir, out, d);
}

static void checked_out(const char *against, const struct kpt_ab_checkout *co)
{
	fprintf(stderr, "kptprof gate: '%s' is commit %.12s, checked out in %s\n", kpt_cli_term(against), co->commit,
		kpt_cli_term(co->path));
}

/* The base side of gate --against: a build folder of the bundled suite
 * (no checkout), else REF checked out into co and built, its own project
 * file (or the bundled suite) read from there. Build output to log. */
static int against_base(const char *against, const struct kpt_project *b, const char *suite, const char *dir,
			struct kpt_ab_checkout *co, int logfd, const char *log, struct kpt_project **out,
			struct kpt_diag *d)
{
	char runner[PATH_MAX], here[PATH_MAX], real[PATH_MAX], file[2 * PATH_MAX + 8], bld[PATH_MAX + 8];
	struct stat sb;
	size_t n;
	int rc;

	if (b->builtin && stat(against, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (kpt_ab_build_runner(against, runner, sizeof runner) < 0) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' is a folder without a built kpt-workloads", against);
			return kpt_diag_hint(d, "give a build folder of the base commit (cmake --build BUILD --target "
					     "kpt-workloads) or a git ref");
		}
		return kpt_project_builtin(runner, suite, dir, out, d);
	}
	if (!b->builtin && (!realpath(b->path, real) || !realpath(b->root, here)))
		return kpt_diag_set(d, KPT_E_IO, "cannot resolve '%s': %s", b->path, strerror(errno));
	if (b->builtin && !getcwd(here, sizeof here))
		return kpt_diag_set(d, KPT_E_IO, "cannot read the current folder: %s", strerror(errno));
	if ((rc = kpt_ab_checkout(here, against, NULL, co, d)) < 0)
		return rc;
	if (b->builtin) {
		checked_out(against, co);
		snprintf(bld, sizeof bld, "%s/build", co->tmp);
		fprintf(stderr, "kptprof gate: building its kpt-workloads (log: %s)\n", kpt_cli_term(log));
		if ((rc = kpt_ab_build_suite(co->path, bld, logfd, log, runner, sizeof runner, d)) < 0)
			return rc;
		return kpt_project_builtin(runner, suite, dir, out, d);
	}
	/* the same file in the other revision: its path below the top */
	n = strlen(co->top);
	if (strncmp(real, co->top, n) != 0 || real[n] != '/')
		return kpt_diag_set(d, KPT_E_INVAL, "'%s' is not inside the git repository '%s'", real, co->top);
	snprintf(file, sizeof file, "%s%s", co->path, real + n);
	if (stat(file, &sb) != 0) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' has no '%s': nothing to compare against", against, real + n + 1);
		return kpt_diag_hint(d, "compare against a revision that has the project file (it came later)");
	}
	if ((rc = kpt_project_load(file, out, d)) < 0)
		return rc;
	checked_out(against, co);
	if (!(*out)->build)
		return 0;
	fprintf(stderr, "kptprof gate: building it (log: %s)\n", kpt_cli_term(log));
	return kpt_ab_build(*out, co->path, logfd, log, 0, d);
}

/* After gate --against: this checkout's side b.kpt against the committed
 * baseline of its GPU, a check for shifts both revisions share (one
 * line). A project without a baseline for this GPU: one info line. */
static void against_committed(const struct kpt_project *b, const char *dir, const char *out, const char *rslug,
			      struct kpt_diff_cli *dc)
{
	char bpath[2 * PATH_MAX], bfile[PATH_MAX + 16], slug[256];
	const char *bdir = b->builtin ? dir : b->baselines;
	struct kpt_diff *df = NULL;
	const char *bases[1] = { bpath };
	struct kpt_diag d = { 0 };
	struct stat sb;

	snprintf(bfile, sizeof bfile, "%s/b.kpt", out);
	snprintf(slug, sizeof slug, "%s", rslug);
	/* the recorder names the GPU it probed; without a probe
	 * (KPTPROF_SKIP_GPU_CHECK) the recording does */
	if (!slug[0] && kpt_cli_file_series(bfile, slug, sizeof slug, NULL, 0, &d) < 0)
		return;
	if (!slug[0] || !bdir || kpt_cli_check_component("GPU slug", slug, bfile, &d) < 0)
		return;
	kpt_baseline_path(bdir, slug, b->name, bpath, sizeof bpath);
	if (stat(bpath, &sb) != 0) {
		if (b->builtin)
			fprintf(stderr, "kptprof gate: no committed baseline '%s' to check shared shifts against\n",
				kpt_cli_term(bpath));
		else
			fprintf(stderr, "kptprof gate: project '%s' has no baseline for %s: shared shifts not checked\n",
				kpt_cli_term(b->name), kpt_cli_term(slug));
		return;
	}
	if (kpt_diff_paths_multi(bases, 1, bfile, &dc->o, &df, &d) == 0) {
		fprintf(stderr, "kptprof gate: this revision against the committed baseline %s: %u SLOW, %u AMBG of %zu keys%s\n",
			kpt_cli_term(bpath), df->counts[KPT_V_SLOW], df->counts[KPT_V_AMBG], df->nrows,
			df->counts[KPT_V_SLOW] ? " (slower than other machines' sessions too: did the base branch regress? "
						  "'kptprof diff' on the recordings in -o shows which)" : "");
		kpt_diff_destroy(df);
	}
}

/* gate --against: the workloads of REF (checked out and built in a git
 * worktree; for the bundled suite also a build folder) and of this
 * checkout (pb: its project, owned from here; NULL: the bundled suite),
 * interleaved on this machine by kpt_ab_run, paired verdicts (diff's exit
 * status), then this side against the committed baseline as a check for
 * shifts both share (one line). */
static int gate_against(const char *against, struct kpt_project *pb, const struct kpt_gpu_list *gpus,
			const char *suite, uint64_t pairs, uint64_t settle_us, const char *keep, const char *dir,
			struct kpt_diff_cli *dc)
{
	struct kpt_project *pa = NULL;
	struct kpt_ab_checkout co = { 0 };
	struct kpt_ab_opts ao = { 0 };
	struct kpt_ab_result res = { 0 };
	struct kpt_record_opts ro;
	struct kpt_diag d = { 0 };
	char tmp[PATH_MAX], out[PATH_MAX], log[PATH_MAX + 16], label[512];
	const char *tmpdir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	int rc, made = 0, logfd = -1;

	if (!pb && (rc = against_suite(suite, dir, &pb, &d)) < 0)
		goto fail;
	if (keep && mkdir(keep, 0755) != 0 && errno != EEXIST) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot make '%s': %s", keep, strerror(errno));
		goto fail;
	}
	snprintf(tmp, sizeof tmp, "%s/kptprof-against.XXXXXX", tmpdir);
	if (!keep && !mkdtemp(tmp)) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
		goto fail;
	}
	made = !keep;
	snprintf(out, sizeof out, "%s", keep ? keep : tmp);
	snprintf(log, sizeof log, "%s/build.log", out);
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot write '%s': %s", log, strerror(errno));
		goto fail;
	}
	if ((rc = against_base(against, pb, suite, dir, &co, logfd, log, &pa, &d)) < 0)
		goto fail;
	kpt_cli_record_defaults(&ro);
	ro.gpus = gpus;  /* probed once by gate, not again for every run */
	snprintf(label, sizeof label, "%s%s%.12s%s", against, co.commit[0] ? " (" : "", co.commit,
		 co.commit[0] ? ")" : "");
	ao.a = pa;
	ao.b = pb;
	ao.label[0] = label;
	ao.label[1] = pb->builtin ? "this build" : NULL;
	ao.pairs = (long)pairs;
	/* --settle-us: compute-bound kernels under the power cap vary by
	 * several percent from process to process with the state the power
	 * controller is in; an idle gap before each timed iteration takes
	 * that out (docs/decision-rule.md, "Same-machine A/B"). The bundled
	 * suite's runner takes it; kpt_ab_run drops it for both sides when
	 * the base's runner is from before the option. */
	ao.settle_us = pb->builtin && settle_us ? (long)settle_us : -1;
	ao.dir = out;
	ao.base = &ro;
	ao.progress = against_pair;
	fprintf(stderr, "kptprof gate: '%s' (A: %s) against this checkout (B), %llu pairs interleaved on this machine "
		"(log: %s/ab.log)\n", kpt_cli_term(pb->name), kpt_cli_term(label), (unsigned long long)pairs,
		kpt_cli_term(out));
	rc = kpt_ab_run(&ao, &res, &d);
	kpt_ab_cli_notes("gate", &res.notes);
	if (rc == KPT_E_NODEV) {
		fprintf(stderr, "kptprof gate: no usable GPU (skipped)\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (rc < 0)
		goto fail;
	if (keep)
		fprintf(stderr, "kptprof gate: recordings in %s/a.kpt and %s/b.kpt\n", kpt_cli_term(out), kpt_cli_term(out));
	rc = kpt_ab_cli_diff("gate", out, dc);
	if (rc == KPT_EXIT_OK || rc == KPT_EXIT_REGRESSION)
		against_committed(pb, dir, out, res.slug, dc);
	goto out;
fail:
	rc = kpt_diff_cli_fail(dc, &d);
	/* keep the folder when the message names a log in it */
	if (made && strstr(d.msg, out))
		made = 0;
out:
	if (logfd >= 0)
		close(logfd);
	kpt_ab_checkout_remove(&co);
	if (made)
		kpt_ab_cli_remove(out, (long)pairs);
	kpt_project_destroy(pa);
	kpt_project_destroy(pb);
	return rc;
}

/* ---- against a committed baseline: a folder of sessions, or the history
 * store's newest sessions (analyzer/baseline/kpt_baseline.h) ---- */

/* What gate records and gates against: the bundled suite, or a project's
 * workloads (its name is the suite; its folder, or its store, the baseline). */
struct gate_plan {
	const char *suite;
	struct kpt_project *project;  /* NULL: the bundled suite */
	const char *project_given;    /* --project FILE, NULL: found from the cwd */
	int dir_given;                /* --baselines */
	struct kpt_baseline_where where;
};

/* Opens the baseline of the plan for slug; none: the error says how to
 * make one for this case (the store's own message for --db). */
static int open_baseline(const struct gate_plan *g, const char *slug, struct kpt_baseline **b, struct kpt_diag *d)
{
	int rc = kpt_baseline_open(slug, g->suite, &g->where, b, d);
	char how[PATH_MAX + 64], upd[PATH_MAX + 32] = "";

	if (rc != KPT_E_NOTFOUND || g->where.db)
		return rc;
	/* update finds the project's folder itself from the project's tree */
	kpt_cli_record_how(g->suite, g->project ? g->project->path : NULL, how, sizeof how);
	if (!g->project || g->dir_given)
		snprintf(upd, sizeof upd, " --baselines %s", g->where.dir);
	else if (g->project_given)
		snprintf(upd, sizeof upd, " --project %s", g->project_given);
	kpt_diag_hint(d, "make one with '%s --runs 5 -o rec.kpt' and 'kptprof baseline update rec.kpt%s' on this GPU, "
		      "better on several machines, then commit it", how, upd);
	return rc;
}

/* ---- sequential resolution (docs/decision-rule.md, "Sequential
 * resolution"): keys AMBG by run-to-run noise get more runs of their
 * workloads, appended to the candidate as runs of the same session, and
 * are looked at again at alpha/(1+rounds); every other verdict of the
 * first look stands. ---- */

/* Where an extra round's runs come from: the recorder (GPU), or for tests
 * --resolve-from FILE (each round takes that recording whole). */
struct gate_source {
	const struct gate_plan *g;
	const struct kpt_gpu_list *gpus;
	long settle;
	const char *from;  /* --resolve-from, NULL: record */
};

/* Records runs runs of workloads names[0..n) into out; *wall_s the
 * seconds it took. */
static int source_runs(const struct gate_source *s, const char *const *names, size_t n, long runs, const char *out,
		       const char **load, double *wall_s, struct kpt_diag *d)
{
	struct kpt_record_opts o;
	struct kpt_record_result r;
	struct timespec t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*load = s->from ? s->from : out;
	if (s->from) {
		*wall_s = 0;
		return 0;
	}
	kpt_cli_record_defaults(&o);
	o.gpus = s->gpus;
	o.runs = runs;
	o.settle_us = s->settle;
	o.out = out;
	o.suite = s->g->suite;
	o.workloads = names;
	o.nworkloads = (int)n;
	rc = s->g->project ? kpt_record_project(s->g->project, names, n, &o, &r, d) : kpt_record_run(&o, &r, d);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	if (rc == 0 && r.status != 0)
		rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "recording more runs of '%s' failed (exit status %d)", s->g->suite,
				  r.status);
	return rc;
}

#define RESOLVE_MAX_ROUNDS 16
/* a round's runs when the first recording's count is unknown (a project's
 * own runs per workload): the default --runs */
#define RESOLVE_RUNS_UNKNOWN 5u

struct gate_resolve {
	uint64_t rounds;   /* cap on extra rounds, 0: off */
	double time_s;     /* cap on their seconds; < 0: half of first_wall_s (none when 0) */
	double first_wall_s;
	long runs;         /* the --runs value: cap of one round's runs */
};

/* The first look of base against rec, then extra rounds while run-noise
 * AMBG keys remain and the caps allow; reports (kpt_diff_cli_report). */
static int gate_resolve_diff(const struct kpt_diff_side *side, const char *const *files, size_t nfiles, const char *rec,
			     const struct gate_source *src, const struct gate_resolve *rs, struct kpt_diff_cli *dc,
			     const char *tmpdir)
{
	struct kpt_diff_side *own = NULL;
	const struct kpt_diff_side *base = side;
	struct kpt_diff_side *sides[1 + RESOLVE_MAX_ROUNDS] = { 0 }, *cand = NULL;
	struct kpt_diff *df0 = NULL, *dfk[RESOLVE_MAX_ROUNDS] = { 0 };
	struct kpt_diff_opts ok = dc->o;
	struct kpt_diag d = { 0 };
	struct kpt_file *f = NULL;
	const char **names = NULL;
	char path[PATH_MAX + 32];
	double budget, spent = 0, per_run;
	uint32_t rounds = rs->rounds > RESOLVE_MAX_ROUNDS ? RESOLVE_MAX_ROUNDS : (uint32_t)rs->rounds;
	uint32_t k = 0, nsides = 0, machine = 0;
	int rc;

	if (dc->quiet)
		kpt_progress_stop();
	/* the first look exactly as without resolution (kpt_diff_cli_run) */
	kpt_progress_begin("loading", 0, "kernels");
	rc = side ? kpt_diff_side_vs_path(side, rec, &dc->o, &df0, &d) : kpt_diff_paths_multi(files, nfiles, rec, &dc->o, &df0, &d);
	kpt_progress_end();
	if (rc < 0)
		goto fail;
	df0->resolve.on = rounds > 0;
	df0->resolve.first_wall_s = rs->first_wall_s;
	ok.alpha = (dc->o.alpha > 0 ? dc->o.alpha : df0->opts.alpha) / (1.0 + rounds);
	df0->resolve.alpha_relook = rounds ? ok.alpha : 0;
	for (size_t i = 0; i < df0->nrows; i++) {
		df0->resolve.initial += (uint32_t)kpt_diff_row_run_noise_ambg(&df0->rows[i]);
		machine += df0->rows[i].verdict == KPT_V_AMBG && df0->rows[i].machine_limited;
	}
	if (!rounds || !df0->resolve.initial)
		goto report;
	/* the sides the re-looks compare: loaded again only when needed */
	if (!side && (rc = kpt_diff_sessions_load(files, nfiles, &dc->o, &own, &d)) < 0)
		goto fail;
	if (own)
		base = own;
	if ((rc = kpt_file_open(rec, &f, &d)) < 0 || (rc = kpt_diff_side_load(f, &dc->o, &sides[nsides++], &d)) < 0)
		goto fail;
	kpt_file_close(f);
	f = NULL;
	budget = rs->time_s >= 0 ? rs->time_s : rs->first_wall_s > 0 ? 0.5 * rs->first_wall_s : -1;
	per_run = rs->first_wall_s > 0 && rs->runs > 0 ? rs->first_wall_s / (double)rs->runs : 0;
	if (!(names = calloc(df0->nrows + 1, sizeof *names))) {
		rc = kpt_diag_set(&d, KPT_E_NOMEM, "out of memory");
		goto fail;
	}
	for (k = 1; k <= rounds; k++) {
		size_t nn = 0, open = 0;
		uint32_t need = 2;
		int all = 0;
		double wall = 0;
		const char *load = path;

		for (size_t i = 0; i < df0->nrows; i++) {
			const struct kpt_diff_row *r = &df0->rows[i];
			size_t w = 0;

			if (!kpt_diff_row_run_noise_ambg(r))
				continue;
			open++;
			need = r->more_runs > need ? r->more_runs : need;
			/* a key outside every workload of the project (or of no
			 * range): its runs come with the whole recording */
			if (!r->workload[0] || (src->g->project && !kpt_project_workload(src->g->project, r->workload))) {
				all = 1;
				continue;
			}
			while (w < nn && strcmp(names[w], r->workload) != 0)
				w++;
			if (w == nn)
				names[nn++] = r->workload;
		}
		if (!open)
			break;
		if (need > (rs->runs > 0 ? rs->runs : RESOLVE_RUNS_UNKNOWN))
			need = rs->runs > 0 ? (uint32_t)rs->runs : RESOLVE_RUNS_UNKNOWN;
		if (all)
			nn = 0;
		/* seconds per run: the last round's (its workloads only), else
		 * the first recording's (every workload: an upper bound); as
		 * many runs as the budget left allows, at least 2 */
		if (budget >= 0 && per_run > 0 && budget - spent < 2 * per_run) {
			fprintf(stderr, "kptprof gate: %zu AMBG key%s left: 2 more runs would pass the %.0f s resolve "
				"budget (--resolve-time)\n", open, open == 1 ? "" : "s", budget);
			break;
		}
		if (budget >= 0 && per_run > 0 && need > (budget - spent) / per_run)
			need = (uint32_t)((budget - spent) / per_run);
		if (budget == 0 || (budget > 0 && spent >= budget)) {
			fprintf(stderr, "kptprof gate: %zu AMBG key%s left: the %.0f s resolve budget is spent (--resolve-time)\n",
				open, open == 1 ? "" : "s", budget);
			break;
		}
		fprintf(stderr, "kptprof gate: resolving %zu AMBG key%s: recording %u more runs of %s", open,
			open == 1 ? "" : "s", need, nn ? kpt_cli_term(names[0]) : "every workload");
		if (nn > 1)
			fprintf(stderr, " and %zu other workload%s", nn - 1, nn == 2 ? "" : "s");
		fprintf(stderr, " (round %u of %u)\n", k, rounds);
		snprintf(path, sizeof path, "%s/kptprof-resolve-%ld-%u.kpt", tmpdir, (long)getpid(), k);
		rc = source_runs(src, names, nn, need, path, &load, &wall, &d);
		if (rc == 0)
			rc = kpt_file_open(load, &f, &d);
		if (rc == 0)
			rc = kpt_diff_side_load(f, &dc->o, &sides[nsides++], &d);
		kpt_file_close(f);
		f = NULL;
		if (!src->from)
			unlink(path);
		if (rc < 0)
			goto fail;
		spent += wall;
		if (wall > 0 && need > 0)
			per_run = wall / need;
		df0->resolve.rounds = k;
		{
			const uint32_t *ids;
			uint32_t got;

			kpt_diff_side_runs(sides[nsides - 1], &ids, &got);
			df0->resolve.extra_runs += got;
		}
		kpt_diff_side_destroy(cand);
		cand = NULL;
		if ((rc = kpt_diff_side_combine((const struct kpt_diff_side *const *)sides, nsides, 0, rec, &cand, &d)) < 0 ||
		    (rc = kpt_diff_compare(base, cand, &ok, &dfk[k - 1], &d)) < 0)
			goto fail;
		/* only keys still AMBG by run noise are looked at again */
		df0->resolve.settled += kpt_diff_adopt_relook(df0, dfk[k - 1], k);
	}
	df0->resolve.extra_wall_s = spent;
report:
	if (df0->resolve.settled)
		fprintf(stderr, "kptprof gate: %u of %u AMBG key%s settled in %u extra round%s (%u runs, %.1f s)\n",
			df0->resolve.settled, df0->resolve.initial, df0->resolve.initial == 1 ? "" : "s",
			df0->resolve.rounds, df0->resolve.rounds == 1 ? "" : "s", df0->resolve.extra_runs, spent);
	rc = kpt_diff_cli_report(df0, dc);
	df0 = NULL;
	if (machine)
		fprintf(stderr, "kptprof gate: %u key%s AMBG by machine noise (not re-recorded: more runs here cannot "
			"settle them): 'kptprof gate --against REF' or 'kptprof ab' hears them, or add baseline sessions "
			"of this runner\n", machine, machine == 1 ? "" : "s");
	goto out;
fail:
	rc = kpt_diff_cli_fail(dc, &d);
out:
	kpt_file_close(f);
	kpt_diff_destroy(df0);
	for (uint32_t i = 0; i < RESOLVE_MAX_ROUNDS; i++)
		kpt_diff_destroy(dfk[i]);
	for (uint32_t i = 0; i < nsides; i++)
		kpt_diff_side_destroy(sides[i]);
	kpt_diff_side_destroy(cand);
	kpt_diff_side_destroy(own);
	free(names);
	return rc;
}

/* The runs of a recording of p's own runs: run i is run i of every
 * workload (kpt_record_project), so the most any workload has. */
static long project_runs(const struct kpt_project *p)
{
	long n = 0;

	for (size_t i = 0; p && i < p->nwl; i++) {
		long w = p->wl[i].runs ? p->wl[i].runs : p->runs;

		n = w > n ? w : n;
	}
	return n;
}

/* Extra rounds apply: asked for, and runs that can be appended (not
 * --paired, whose runs pair by number, nor run subsets by number). */
static int resolve_on(const struct gate_resolve *rs, const struct kpt_diff_cli *dc)
{
	return rs->rounds && !dc->o.paired && !dc->o.base_runs && !dc->o.new_runs;
}

static const char *resolve_tmpdir(void)
{
	return getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
}

/* Says what rec is gated against, then diffs: the session files listed at
 * open (each a file: no second listing), or the store's side. */
static int gate_diff(const char *cmd, struct kpt_baseline *b, const char *rec, const struct gate_source *src,
		     const struct gate_resolve *rs, struct kpt_diff_cli *dc)
{
	struct kpt_baseline_desc ds;
	const char *const *files;
	size_t n;

	kpt_baseline_describe(b, &ds);
	/* the progress line's seconds count the comparison, not the recording */
	if (kpt_cli_progress_start(cmd) != 0)
		return KPT_EXIT_ERROR;
	if (kpt_baseline_side(b)) {
		char c0[13], c1[13];

		fprintf(stderr, "kptprof gate: %s vs baseline from history store '%s' (%s): branch '%s', the last %zu "
			"session%s of suite '%s' on %s, commits %s..%s (added %s..%s), %llu runs\n", kpt_cli_term(rec),
			kpt_cli_term(ds.where), ds.backend, kpt_cli_term(ds.branch), ds.sessions, ds.sessions == 1 ? "" : "s",
			kpt_cli_term(ds.suite), kpt_cli_term(ds.slug), kpt_cli_term(kpt_cli_short_commit(ds.first_commit, c0)),
			kpt_cli_term(kpt_cli_short_commit(ds.last_commit, c1)), kpt_cli_term(ds.first_added),
			kpt_cli_term(ds.last_added), (unsigned long long)ds.runs);
		if (resolve_on(rs, dc))
			return gate_resolve_diff(kpt_baseline_side(b), NULL, 0, rec, src, rs, dc, resolve_tmpdir());
		return kpt_diff_cli_run_side(kpt_baseline_side(b), rec, dc);
	}
	fprintf(stderr, "kptprof gate: %s vs baseline %s (%zu session%s)\n", kpt_cli_term(rec), kpt_cli_term(ds.where),
		ds.sessions, ds.sessions == 1 ? "" : "s");
	files = kpt_baseline_files(b, &n);
	if (resolve_on(rs, dc))
		return gate_resolve_diff(NULL, files, n, rec, src, rs, dc, resolve_tmpdir());
	return kpt_diff_cli_run(cmd, files, n, rec, dc);
}

/* --from FILE: its GPU slug (one read of its header); the suite it names
 * must be the plan's (gating a seed recording against the default
 * baseline would be all NEW and GONE). */
static int from_slug(const char *path, const struct gate_plan *g, int suite_given, char *slug, size_t cap,
		     struct kpt_diag *d)
{
	char s[256];
	int rc = kpt_cli_file_series(path, slug, cap, s, sizeof s, d);

	/* the slug becomes a folder name under --baselines */
	if (rc == 0)
		rc = kpt_cli_check_component("GPU slug", slug, path, d);
	if (rc == 0 && !s[0] && !suite_given && !g->project) {
		/* a program's recording gated against the default suite would
		 * match nothing and pass for ever */
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is not a recording of a suite: nothing to gate it against by default", path);
		return kpt_diag_hint(d, "name its baseline: 'kptprof gate --from %s --suite NAME' with a baseline of that "
				     "name, or 'kptprof diff BASELINE %s'", path, path);
	}
	if (rc == 0 && s[0] && strcmp(s, g->suite) != 0) {
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is a recording of suite '%s', not '%s'", path, s, g->suite);
		rc = kpt_diag_hint(d, "gate it with --suite %s", s);
	}
	return rc;
}

/* Records the plan once through the recorder, its notes on stderr; r says
 * which GPU and suite it recorded. gpus: what gate probed (the recorder
 * then probes no more), NULL: the recorder probes. */
static int gate_record(const struct gate_plan *g, const struct kpt_gpu_list *gpus, long runs, long settle,
		       const char *out, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o;
	int rc;

	kpt_cli_record_defaults(&o);
	o.gpus = gpus;
	o.runs = runs;
	o.settle_us = settle;
	o.out = out;
	o.suite = g->suite;
	rc = g->project ? kpt_record_project(g->project, NULL, 0, &o, r, d) : kpt_record_run(&o, r, d);
	if (rc < 0)
		return rc;
	for (int i = 0; i < r->nnotes; i++)
		fprintf(stderr, "%s%s\n", r->note[i].kind == KPT_NOTE_HINT ? "hint: " :
			r->note[i].kind == KPT_NOTE_WARNING ? "kptprof: warning: " : "kptprof: ", r->note[i].text);
	return 0;
}

/* gate --against's idle gap before each timed iteration, us: 1 ms took
 * the paired noise of the attention kernels on an H100 from 1.7-3.3% to
 * 0.2-0.8%, 10 ms to 0.1-0.3% (bench/RESULTS.md, "The power cap in the
 * paired noise"); 3 ms costs about 2 s per run of the default suite. */
#define KPT_AGAINST_SETTLE_US KPT_SUITE_SETTLE_US
#define NOT_GIVEN UINT64_MAX

struct gate_args {
	const char *suite, *dir, *from, *keep, *db, *branch, *against; /* NULL: not given */
	const char *project;                                            /* --project FILE, NULL: found or none */
	uint64_t runs, nsess;                                           /* 0: not given */
	uint64_t settle_us;                                             /* idle gap; NOT_GIVEN: default */
	uint64_t resolve_rounds, resolve_time;                          /* NOT_GIVEN: default */
	const char *resolve_from;                                       /* tests: extra runs from FILE */
	struct kpt_diff_cli dc;
};

#define GA struct gate_args
/* gate's own options; kpt_gate_opts adds the diff options. */
static const struct kpt_opt gate_own_opts[] = {
	/* not KPT_OPT_STRING: '' gets the bad-suite-name message, as any bad name */
	{ .kind = KPT_OPTK_STRING, .name = "suite", .arg = "NAME", .off = offsetof(GA, suite),
	  .help = "suite to record; baseline: DIR/<gpu-slug>/NAME/ (sessions), else NAME.kpt (default default; "
		  "--from a recording of no suite needs it)" },
	KPT_OPT_STRING(0, "project", "FILE", GA, project,
		       "gate the project of FILE (kptprof.json): its workloads, suite = its name, its baselines "
		       "folder or db (default: kptprof.json of the working folder or one above it, unless --suite)"),
	KPT_OPT_STRING(0, "baselines", "DIR", GA, dir,
		       "folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed "
		       "share/kptprof/baselines)"),
	KPT_OPT_STRING(0, "db", "URL", GA, db,
		       "baseline from the history store instead: SQLite file or postgresql://... (default: none)"),
	KPT_OPT_U64(0, "baseline-sessions", "N", GA, nsess, KPT_HISTORY_MIN_SESSIONS, 1000,
		    "with --db: the last N sessions of the suite and GPU model, 2 to 1000 (default 10)"),
	KPT_OPT_STRING(0, "branch", "B", GA, branch, "with --db: the sessions' branch (default main)"),
	KPT_OPT_U64(0, "runs", "M", GA, runs, 2, 1000,
		    "runs to record, 2 to 1000; --against: pairs, 10 unless given; a project: its own (default 5)"),
	KPT_OPT_STRING('o', "output", "FILE", GA, keep,
		       "keep the recording in FILE (default: a temporary file, removed)"),
	KPT_OPT_STRING(0, "from", "FILE", GA, from,
		       "gate this recording instead of recording (default: record; no GPU: exit 77)"),
	KPT_OPT_STRING(0, "against", "BUILD|REF", GA, against,
		       "A/B against git ref REF, checked out in a worktree and built with the project's build "
		       "command (the bundled suite: CMake; or a build folder of it): every workload of both "
		       "revisions interleaved here, paired verdicts (thresholds as ab's: 1%, 0.5% from 200 us, unless "
		       "given), then this revision against the committed baseline (one line) (default: off)"),
	KPT_OPT_U64(0, "settle-us", "U", GA, settle_us, 0, 1000000,
		    "the GPU idles U microseconds before each timed iteration of the suite, so each starts from "
		    "the same power state; 0: off (default: as the baseline was recorded; --against: 3000)"),
	KPT_OPT_U64(0, "resolve-rounds", "N", GA, resolve_rounds, 0, RESOLVE_MAX_ROUNDS,
		    "keys AMBG by run-to-run noise: record up to N more rounds of runs of their workloads, appended "
		    "to the recording, and look again at alpha/(1+N) (docs/decision-rule.md); 0: off; --from: only "
		    "with --resolve-from (default 2)"),
	KPT_OPT_U64(0, "resolve-time", "SEC", GA, resolve_time, 0, 86400,
		    "at most SEC seconds of extra rounds in all (default: half of the first recording's wall time)"),
	KPT_OPT_STRING(0, "resolve-from", "FILE", GA, resolve_from,
		       "for tests: each extra round's runs are the runs of recording FILE instead of recorded ones "
		       "(default: record)"),
	KPT_OPT_END,
};

const struct kpt_opt kpt_gate_opts[] = {
	KPT_OPT_INCLUDE(gate_own_opts),
	KPT_OPT_TABLE(GA, dc, kpt_diff_rule_opts),
	KPT_OPT_TABLE(GA, dc, kpt_diff_report_opts),
	KPT_OPT_END,
};
#undef GA

/* gate without --against: the plan (a project, or the bundled suite), its
 * baseline opened once, the suite recorded once (or --from FILE), one diff. */
static int gate_committed(const char *cmd, struct gate_args *a, long runs)
{
	struct gate_source src = { .from = a->resolve_from };
	struct gate_resolve rs = { .rounds = a->resolve_rounds == NOT_GIVEN ? 2 : a->resolve_rounds,
				   .time_s = a->resolve_time == NOT_GIVEN ? -1 : (double)a->resolve_time };
	struct timespec t0, t1;
	struct gate_plan g = { .suite = a->suite ? a->suite : "default", .project_given = a->project };
	struct kpt_diff_cli *dc = &a->dc;
	struct kpt_baseline *b = NULL;
	struct kpt_record_result r;
	struct kpt_gpu_list l;
	struct kpt_diag d = { 0 };
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256];
	long settle;
	int rc = 0, made_tmp = 0, skip_probe = getenv("KPTPROF_SKIP_GPU_CHECK") != NULL;

	/* a project applies: --project FILE, else kptprof.json from the cwd
	 * up unless --suite names another suite (a bundled one) */
	if (kpt_cli_project(a->project, &g.project, &d) < 0)
		return kpt_diff_cli_fail(dc, &d);
	if (g.project && a->suite && strcmp(a->suite, g.project->name) != 0) {
		if (a->project) {
			rc = kpt_cli_usage_error(cmd, "--suite '%s' is not the project's name '%s' (its recordings' suite)",
						 kpt_cli_term(a->suite), kpt_cli_term(g.project->name));
			goto out;
		}
		kpt_project_destroy(g.project);
		g.project = NULL;
	}
	if (g.project)
		g.suite = g.project->name;
	g.dir_given = a->dir != NULL;
	/* --baselines or --db, else the project's store or folder, else the default folder */
	g.where.db = a->db ? a->db : g.project && !a->dir ? g.project->db : NULL;
	g.where.dir = a->dir ? a->dir : g.project ? g.project->baselines : default_baselines();
	g.where.branch = a->branch;
	g.where.nsessions = (uint32_t)a->nsess;
	if (!dc->suite)
		dc->suite = g.suite;
	dc->require_match = 1;
	if (a->from) {
		if (from_slug(a->from, &g, a->suite != NULL, slug, sizeof slug, &d) < 0 ||
		    open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
		rs.runs = runs ? runs : project_runs(g.project);
		/* made elsewhere: more runs of this machine would mix two
		 * machines in one session; only the test hook supplies them */
		if (!a->resolve_from)
			rs.rounds = 0;
		src.g = &g;
		rc = gate_diff(cmd, b, a->from, &src, &rs, dc);
		goto out;
	}
	/* the one probe: whether this machine records, and the GPU whose
	 * baseline to record like (the recorder's result says the rest);
	 * KPTPROF_SKIP_GPU_CHECK (tests with a stand-in collector): none, the
	 * baseline is found after recording */
	kpt_diag_clear(&d);
	slug[0] = '\0';
	if (!skip_probe && (kpt_collector_find(NULL)->probe(&l, &d) < 0 || l.n < 1)) {
		fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n"
				"hint: 'kptprof gate --from FILE' gates a recording made elsewhere\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (!skip_probe) {
		snprintf(slug, sizeof slug, "%s", l.gpu[0].slug);
		if (kpt_cli_check_component("GPU slug", slug, "this GPU", &d) < 0 || open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
	}
	/* Record as the baseline was recorded: an idle gap before each timed
	 * iteration changes what compute-bound kernels measure (the power
	 * state), so both sides need the same. A project's programs have no
	 * such gap unless asked. */
	settle = a->settle_us != NOT_GIVEN ? (long)a->settle_us : g.project ? -1 : KPT_SUITE_SETTLE_US;
	if (a->settle_us == NOT_GIVEN && !g.project && b && kpt_baseline_settle_us(b) >= 0)
		settle = kpt_baseline_settle_us(b);
	if (a->keep) {
		snprintf(rec, sizeof rec, "%s", a->keep);
	} else {
		if (!mkdtemp(tmpl)) {
			kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
			goto fail;
		}
		made_tmp = 1;
		snprintf(rec, sizeof rec, "%s/%s.kpt", tmpl, g.suite);
	}
	/* a project's own runs unless --runs */
	if (g.project && !a->runs)
		runs = 0;
	if (g.project && runs)
		fprintf(stderr, "kptprof gate: recording project '%s' (%zu workload%s), %ld runs -> %s\n",
			kpt_cli_term(g.suite), g.project->nwl, g.project->nwl == 1 ? "" : "s", runs, kpt_cli_term(rec));
	else if (g.project)
		fprintf(stderr, "kptprof gate: recording project '%s' (%zu workload%s), its runs -> %s\n",
			kpt_cli_term(g.suite), g.project->nwl, g.project->nwl == 1 ? "" : "s", kpt_cli_term(rec));
	else
		fprintf(stderr, "kptprof gate: recording suite '%s', %ld runs, %ld us idle before each timed iteration "
				"-> %s\n", kpt_cli_term(g.suite), runs, settle, kpt_cli_term(rec));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = gate_record(&g, skip_probe ? NULL : &l, runs, settle, rec, &r, &d);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rs.first_wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	rs.runs = runs ? runs : project_runs(g.project);
	src.g = &g;
	src.gpus = skip_probe ? NULL : &l;
	src.settle = settle;
	if (rc == KPT_E_NODEV) {
		kpt_cli_fail(&d);
		fprintf(stderr, "kptprof gate: the recorder found no usable GPU (skipped)\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (rc < 0)
		goto fail;
	if (r.status != 0) {
		kpt_diag_set(&d, KPT_E_UNSUPPORTED, "recording %s '%s' failed (exit status %d)",
			     g.project ? "project" : "suite", g.suite, r.status);
		goto fail;
	}
	/* what was recorded, from the recorder: no second probe, no reopening */
	if (r.suite[0] && strcmp(r.suite, g.suite) != 0) {
		kpt_diag_set(&d, KPT_E_MISMATCH, "'%s' was recorded as suite '%s', not '%s'", rec, r.suite, g.suite);
		goto fail;
	}
	if (!r.slug[0] && !slug[0] && kpt_cli_file_series(rec, r.slug, sizeof r.slug, NULL, 0, &d) < 0)
		goto fail; /* a stand-in collector's: the recorder probed no GPU */
	if (r.slug[0] && strcmp(r.slug, slug) != 0) {
		kpt_baseline_close(b);
		b = NULL;
		snprintf(slug, sizeof slug, "%s", r.slug);
		if (kpt_cli_check_component("GPU slug", slug, rec, &d) < 0 || open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
	}
	rc = gate_diff(cmd, b, rec, &src, &rs, dc);
	goto out;
fail:
	rc = kpt_diff_cli_fail(dc, &d);
out:
	if (made_tmp) {
		unlink(rec);
		rmdir(tmpl);
	}
	kpt_baseline_close(b);
	kpt_project_destroy(g.project);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	struct gate_args a = { .settle_us = NOT_GIVEN, .resolve_rounds = NOT_GIVEN, .resolve_time = NOT_GIVEN };
	struct kpt_diff_cli *dc = &a.dc;
	const char *suite, *dir, *from, *keep, *db, *branch, *against;
	char runs[24];
	struct kpt_diag d = { 0 };
	int rc, suite_given, n;

	if ((rc = kpt_opt_parse("gate", kpt_gate_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		goto out;
	if (n) {
		rc = kpt_cli_usage_error(argv[0], "unexpected argument '%s' (gate takes options only)", argv[1]);
		goto out;
	}
	if ((rc = kpt_diff_cli_check(argv[0], dc)) != 0) /* before anything is recorded */
		goto out;
	suite_given = a.suite != NULL;
	suite = a.suite ? a.suite : "default";
	dir = a.dir, from = a.from, keep = a.keep, db = a.db, branch = a.branch, against = a.against;
	snprintf(runs, sizeof runs, "%llu", (unsigned long long)(a.runs ? a.runs : against ? 10 : 5));
	if (kpt_cli_check_component("suite", suite, "--suite", &d) < 0) {
		rc = kpt_cli_usage_error(argv[0], "bad suite name '%s': expected 1 to %d of a-z, 0-9, '.', '_', '-', "
					 "no leading '.', no '..'", kpt_cli_term(suite), KPT_CLI_COMPONENT_MAX);
		goto out;
	}
	if (!db && (a.nsess || branch)) {
		rc = kpt_cli_usage_error(argv[0], "'%s' picks sessions of the history store: give --db too",
					 a.nsess ? "--baseline-sessions" : "--branch");
		goto out;
	}
	if (db) {
		/* what the stored baseline cannot give: runs to pair or pick
		 * by number, and the samples pooled-u tests */
		const char *bad = dc->o.paired ? "--paired" : dc->o.base_runs ? "--base-runs" :
				  dc->o.method == KPT_DIFF_POOLED_U ? "--method pooled-u" : NULL;

		rc = 0;
		if (bad)
			rc = kpt_cli_usage_error(argv[0], "'%s' needs the baseline's recordings: not with --db", bad);
		else if (dir)
			rc = kpt_cli_usage_error(argv[0], "--db and --baselines name two baselines: give one");
		if (rc)
			goto out;
	}
	if (from && a.settle_us != NOT_GIVEN) {
		rc = kpt_cli_usage_error(argv[0], "--settle-us is how to record: not with --from (nothing is recorded)");
		goto out;
	}
	if (against && (a.resolve_rounds != NOT_GIVEN || a.resolve_time != NOT_GIVEN || a.resolve_from)) {
		/* paired runs of both revisions: no AMBG by run noise to chase
		 * with more runs of one side */
		rc = kpt_cli_usage_error(argv[0], "--resolve-%s records more runs against a committed baseline: not with "
					 "--against", a.resolve_from ? "from" : a.resolve_time != NOT_GIVEN ? "time" : "rounds");
		goto out;
	}
	if (against && (from || db)) {
		rc = kpt_cli_usage_error(argv[0], "--against runs both builds here: not with %s", from ? "--from" : "--db");
		goto out;
	}
	if (!dir)
		dir = default_baselines();
	{
		/* the reports and --keep never over an input: --from, the
		 * store, a session of the baselines (checked before recording;
		 * with --against, --keep is ab's folder) */
		const char *const ins[] = { from, db, dir, a.resolve_from },
				  *const outs[] = { dc->json, dc->junit, dc->markdown, against ? NULL : keep };

		if ((rc = kpt_cli_outputs(argv[0], ins, 4, outs, 4)) != 0 ||
		    (rc = kpt_cli_output_dir(argv[0], dc->plots)) != 0)
			goto out;
	}
	if (against) {
		/* What needs no GPU first, when a project file applies: the file
		 * and the ref, so a broken kptprof.json or a missing base is an
		 * error (2) on any runner, never a skip that CI reads as a pass. */
		struct kpt_project *pb = NULL;
		struct kpt_ab_checkout co0;
		struct kpt_gpu_list gl;
		int skip_probe = getenv("KPTPROF_SKIP_GPU_CHECK") != NULL;
		struct stat sb;

		if ((rc = against_project(a.project, suite_given, &pb, &d)) == 0 && pb &&
		    (stat(against, &sb) != 0 || !S_ISDIR(sb.st_mode)))
			rc = kpt_ab_resolve(pb->root, against, &co0, &d);
		if (rc < 0) {
			kpt_project_destroy(pb);
			rc = kpt_diff_cli_fail(dc, &d);
			goto out;
		}
		if (!skip_probe && !have_gpu_driver(&gl)) {
			kpt_project_destroy(pb);
			fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n");
			rc = KPT_EXIT_SKIP;
			goto out;
		}
		rc = gate_against(against, pb, skip_probe ? NULL : &gl, suite, a.runs ? a.runs : 10,
				  a.settle_us == NOT_GIVEN ? KPT_AGAINST_SETTLE_US : a.settle_us, keep, dir, dc);
		goto out;
	}
	rc = gate_committed(argv[0], &a, strtol(runs, NULL, 10));
out:
	kpt_diff_cli_release(dc);
	return rc;
}
