/* kpt_record_project.c - recording a project's workloads (kpt_project.h,
 * kpt_record_project in kpt_record.h): which to record, their launches, a
 * warm-up run and then run i of each in turn, the project's meta.
 * CUDA-free; linked into kptprof. Prints nothing: notes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_project.h"
#include "kpt_outfile.h"
#include "kpt_record_int.h"
#include "kpt_window.h"

/* ---- a project's workloads ---------------------------------------------------------------- */

/* The bundled suite: exactly kpt_record_run with o.suite. */
static int record_builtin(const struct kpt_project *p, const char *const *names, size_t nnames,
			  const struct kpt_record_opts *base, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o = *base;

	for (size_t i = 0; i < nnames; i++)
		if (strcmp(names[i], p->wl[0].name) != 0)
			return kpt_diag_set(d, KPT_E_NOTFOUND, "no workload '%s' in suite '%s'", names[i], p->name);
	o.cmd = NULL;
	/* the project's own runner: another revision's build (gate --against) */
	if (p->wl[0].argv && p->wl[0].argv[0])
		o.runner = p->wl[0].argv[0];
	o.suite = p->wl[0].name;
	o.workloads = NULL;
	o.nworkloads = 0;
	o.runs = base->runs > 0 ? base->runs : p->runs;
	return kpt_record_run(&o, r, d);
}

/* One workload to record: its place in the project, its launch, runs. */
struct proj_wl {
	const struct kpt_project_workload *w;
	size_t index;
	long runs;
	const char *win[KPT_WINDOW_SETTINGS];
	char tag[32];
	struct launch l;
};

/* Appends ", "-less text to a growing string; -1 out of memory. */
static int str_add(char **buf, size_t *len, const char *sep, const char *a, const char *b)
{
	size_t need = strlen(sep) + strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
	char *nb = realloc(*buf, *len + need);

	if (!nb)
		return -1;
	*buf = nb;
	*len += (size_t)sprintf(nb + *len, "%s%s%s%s", *len ? sep : "", a, b ? "/" : "", b ? b : "");
	return 0;
}

/* The workloads of p to record (names, or all), in p's order, checked:
 * window and command. 0, or a diag. */
static int project_pick(const struct kpt_project *p, const char *const *names, size_t nnames, long runs,
			struct proj_wl *out, size_t *nout, struct kpt_diag *d)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nwl; i++) {
		const struct kpt_project_workload *w = &p->wl[i];
		struct proj_wl *pw = &out[n];
		struct kpt_window_spec spec;
		char path[PATH_MAX * 2];
		int want = nnames == 0;

		for (size_t k = 0; k < nnames && !want; k++)
			want = strcmp(names[k], w->name) == 0;
		if (!want)
			continue;
		memset(pw, 0, sizeof *pw);
		pw->w = w;
		pw->index = i;
		pw->runs = runs > 0 ? runs : w->runs > 0 ? w->runs : p->runs;
		pw->win[0] = w->capture_range;
		pw->win[1] = w->steps;
		pw->win[2] = w->every;
		if (kpt_window_parse(pw->win[0], pw->win[1], pw->win[2], NULL, NULL, &spec, d) < 0) {
			char msg[sizeof d->msg];

			snprintf(msg, sizeof msg, "%s", d->msg);
			return kpt_diag_set(d, KPT_E_INVAL, "workload '%s': %s", w->name, msg);
		}
		snprintf(path, sizeof path, "%s/%s", w->cwd ? w->cwd : ".", w->argv[0]);
		if (!kpt_record_command_exists(w->argv[0][0] != '/' && strchr(w->argv[0], '/') ? path : w->argv[0]))
			return kpt_diag_set(d, KPT_E_NOTFOUND, "workload '%s': command not found: '%s'", w->name,
					    w->argv[0]);
		snprintf(pw->tag, sizeof pw->tag, "-w%03zu", i);
		n++;
	}
	for (size_t k = 0; k < nnames; k++)
		if (!kpt_project_workload(p, names[k])) {
			char *list = NULL;
			size_t len = 0;

			for (size_t i = 0; i < p->nwl; i++)
				if (str_add(&list, &len, ", ", p->wl[i].name, NULL) < 0)
					break;
			kpt_diag_set(d, KPT_E_NOTFOUND, "no workload '%s' in project '%s'", names[k], p->name);
			kpt_diag_hint(d, "its workloads: %s", list ? list : "");
			free(list);
			return d->code;
		}
	*nout = n;
	return 0;
}

/* The meta strings of a project's recording, malloc'd into pm (free with
 * proj_meta_free); command: the workloads' commands, "; "-separated. */
static int proj_meta(const struct kpt_project *p, const struct proj_wl *pw, size_t n, struct proj_merge *pm,
		     char **command)
{
	char *names = NULL, *steps = NULL, *win = NULL, *cmd = NULL;
	size_t ln = 0, ls = 0, lw = 0, lc = 0;
	int bad = 0;

	for (size_t i = 0; i < n && !bad; i++) {
		struct kpt_window_spec spec;
		char desc[2 * KPT_WINDOW_NAME_MAX + 128];
		char *argv = kpt_record_join_argv(pw[i].w->argv);

		bad |= !argv || str_add(&names, &ln, ",", pw[i].w->name, NULL) < 0 ||
		       str_add(&cmd, &lc, "; ", argv, NULL) < 0;
		free(argv);
		if (pw[i].w->step_range)
			bad |= str_add(&steps, &ls, ",", pw[i].w->name, pw[i].w->step_range) < 0;
		if (kpt_window_parse(pw[i].win[0], pw[i].win[1], pw[i].win[2], NULL, NULL, &spec, NULL) == 0 &&
		    kpt_window_is_set(&spec)) {
			kpt_window_describe(&spec, desc, sizeof desc);
			bad |= str_add(&win, &lw, "; ", pw[i].w->name, NULL) < 0 || str_add(&win, &lw, ": ", desc, NULL) < 0;
		}
	}
	pm->project = p->path;
	pm->workloads = names;
	pm->step_ranges = steps;
	pm->window = win;
	*command = cmd;
	return bad ? -1 : 0;
}

static void proj_meta_free(struct proj_merge *pm, char *command)
{
	free((char *)pm->workloads);
	free((char *)pm->step_ranges);
	free((char *)pm->window);
	free(command);
}

int kpt_record_project(const struct kpt_project *p, const char *const *names, size_t nnames,
		       const struct kpt_record_opts *base, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o = *base;
	struct proj_merge pm = { 0 };
	struct proj_wl *pw = NULL;
	const char **roots = NULL;
	struct kpt_diag local;
	struct session s;
	char *command = NULL;
	size_t n = 0;
	long runs = 0;
	int rc;

	if (!d)
		d = &local;
	kpt_diag_clear(d);
	memset(r, 0, sizeof *r);
	if (p->builtin)
		return record_builtin(p, names, nnames, base, r, d);
	if (!(pw = calloc(p->nwl, sizeof *pw)) || !(roots = calloc(p->nwl, sizeof *roots))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto done;
	}
	if ((rc = project_pick(p, names, nnames, base->runs, pw, &n, d)) < 0)
		goto done;
	for (size_t i = 0; i < p->nwl; i++)
		roots[i] = p->wl[i].root_range;
	for (size_t i = 0; i < n; i++)
		runs = pw[i].runs > runs ? pw[i].runs : runs;
	if (proj_meta(p, pw, n, &pm, &command) < 0) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto done;
	}
	pm.root = roots;
	pm.nwl = p->nwl;
	/* the recording's own options: the runner's are not a project's */
	o.cmd = NULL;
	o.suite = p->name;
	o.workloads = NULL;
	o.nworkloads = 0;
	o.iterations = o.warmup = o.settle_us = -1;
	o.cold = 0;
	o.window = NULL;
	o.runs = runs;
	memset(o.win, 0, sizeof o.win);
	if ((rc = kpt_record_session_open(&s, &o, runs, r, d)) < 0)
		goto done;
	snprintf(r->suite, sizeof r->suite, "%s", p->name);
	for (size_t i = 0; i < n; i++) {
		struct launch *l = &pw[i].l;

		*l = (struct launch){ .coll = s.coll, .inject = s.inject, .tmp = s.tmp, .api = o.api, .prefix = 'w',
				      .kinds = o.kinds, .win = pw[i].win, .tag = pw[i].tag, .env = pw[i].w->env,
				      .cwd = pw[i].w->cwd, .timeout_s = pw[i].w->timeout_s, .child_log = o.child_log };
		kpt_record_program_defaults(l);
	}
	/* run -1 is warm-up ('w' files, never merged); then run i of each */
	for (long run = -1; run < runs && rc == 0; run++) {
		int first = 0;

		for (size_t i = 0; i < n && rc == 0; i++) {
			long reps = run < 0 ? pw[i].w->warmup : run < pw[i].runs;

			pw[i].l.prefix = run < 0 ? 'w' : 'r';
			for (long k = 0; k < reps && rc == 0; k++) {
				int killed = 0, st = kpt_record_run_once(&pw[i].l, pw[i].w->argv, run < 0 ? k : run, &killed, d);

				if (st < 0) {
					rc = d->code ? d->code : KPT_E_IO;
					break;
				}
				if (killed)
					kpt_record_note(r, KPT_NOTE_WARNING, "workload '%s' %s %ld: killed after its timeout of %g s",
					     pw[i].w->name, run < 0 ? "warm-up run" : "run", run < 0 ? k : run,
					     pw[i].w->timeout_s);
				if (st != 0 && r->status == 0)
					r->status = st;
				if (st != 0 && first == 0)
					first = st;
			}
		}
		if (run >= 0)
			kpt_record_session_exit(&s, run, first);
	}
	for (size_t i = 0; i < n && rc == 0 && o.counters_metrics; i++)
		rc = kpt_record_counters_pass(&o, r, &pw[i].l, pw[i].w->argv, d);
	if (rc == 0)
		rc = kpt_record_session_merge(&s, &o, r, p->name, command ? command : p->name, NULL, &pm, d);
	kpt_record_session_close(&s);
done:
	proj_meta_free(&pm, command);
	free(roots);
	free(pw);
	return rc < 0 ? (d->code ? (int)d->code : rc) : 0;
}
