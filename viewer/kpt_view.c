/* kpt_view.c - the HTML report directory of `kptprof view` (see kpt_view.h). */
#define _GNU_SOURCE             /* asprintf */
#include "kpt_view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_export.h"
#include "kpt_format.h"
#include "kpt_gnuplot.h"
#include "kpt_units.h"
#include "kpt_outfile.h"
#include "kpt_text.h"
#include "kpt_plot.h"
#include "kpt_progress.h"
#include "kpt_range_index.h"
#include "kpt_summary.h"
#include "kpt_timeline.h"

#define VIEW_MARKER ".kptprof-view"
#define VIEW_MAX_NOTES 32
#define VIEW_SAME_ROWS 1000     /* SAME keys listed (under <details>) */

/* One plot of the report: the writer makes STEM.gp, then it is rendered. */
struct view_plot {
	const char *stem;
	const char *caption;
	int written, rendered;
	char why[1024];             /* not written or not rendered: why */
};

struct fam_total {
	char name[256];
	double ns;
};

#define VIEW_HISTORY_ROWS 40     /* SLOW and AMBG keys given their history */
#define VIEW_HISTORY_LAST 30     /* sessions of each */

/* One SLOW or AMBG key's history from the store: per session of set, the
 * sum of the centres of the stored keys the row stands for (one key; the
 * configs of a loose row; the ordinals of an aggregated one), NAN where
 * none was stored; change points over the sessions that have a value. */
struct key_hist {
	const struct kpt_diff_row *row;
	struct kpt_history_set *set;  /* owned; NULL: the store has no such key */
	double *ns;                   /* [set->nsessions] */
	uint32_t nkeys;               /* stored keys summed */
	uint32_t *at;                 /* [n] session index of each value */
	uint32_t n;
	struct kpt_cp *cp;            /* change points, .at indexes at[] */
	uint32_t ncp;
};

struct view {
	const struct kpt_view_opts *o;
	const char *path;           /* the recording */
	char *dir;                  /* DIR without trailing '/' */
	char *tmp;                  /* DIR.tmp-XXXXXX (mkdtemp) */
	mode_t umask;               /* the process's, for DIR's mode */
	struct kpt_file *f;
	struct kpt_counts counts;
	struct kpt_summary *by_kernel, *by_range;
	struct kpt_env_summary *env;
	size_t nenv;
	struct kpt_diff *df;
	struct kpt_timeline_family fams[KPT_TL_PALETTE];
	char *fam_names[KPT_TL_PALETTE];
	size_t nfams;
	int has_timeline, has_iter_timeline, has_trace, gnuplot_missing;
	uint32_t iter_ordinal;
	const char *iter_name;      /* range zoomed on (owned by f); NULL none */
	uint64_t iter_ns;
	char notes[VIEW_MAX_NOTES][1100];
	size_t nnotes;
	struct view_plot plots[4];  /* one per view_plots[] entry */
	size_t nplots;
	struct kpt_roof_point *roof;
	size_t nroof;
	struct fam_total *ftot;     /* families by kernel time (summary) */
	const char *prefer[KPT_TL_PALETTE]; /* their names, for both timelines */
	size_t nprefer;
	struct key_hist *hist;      /* [nhist] with o->history and a diff */
	size_t nhist;
};

__attribute__((format(printf, 2, 3)))
static void note(struct view *v, const char *fmt, ...)
{
	va_list ap;

	if (v->nnotes == VIEW_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(v->notes[v->nnotes++], sizeof v->notes[0], fmt, ap);
	va_end(ap);
}

/* ---- the output folder --------------------------------------------------- */

/* The manifest of a view folder: the names its .kptprof-view marker lists
 * ("file NAME" lines), which are the files that view wrote there. Read
 * without following a link; at most 64 KiB. Returns the file's text
 * (malloc'd, NUL-terminated; NULL when there is no readable marker); the
 * names are looked up in it with in_manifest(). */
static char *read_manifest(const char *dir)
{
	char *p, *buf = NULL;
	int fd;
	ssize_t n = 0, got;

	if (asprintf(&p, "%s/%s", dir, VIEW_MARKER) < 0)
		return NULL;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(p);
	if (fd < 0 || !(buf = malloc(65537))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (n < 65536 && (got = read(fd, buf + n, (size_t)(65536 - n))) > 0)
		n += got;
	close(fd);
	buf[n] = '\0';
	return buf;
}

static int in_manifest(const char *manifest, const char *name)
{
	size_t len = strlen(name);

	for (const char *l = manifest; l && *l;) {
		const char *nl = strchr(l, '\n');

		if (strncmp(l, "file ", 5) == 0 && strncmp(l + 5, name, len) == 0 && (l[5 + len] == '\n' ||
										 !l[5 + len]))
			return 1;
		l = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* Removes the files of an old view (those its manifest lists, and the
 * marker), then the folder; what view did not write stays (the folder
 * then stays too). */
static void rm_view(const char *dir)
{
	char *manifest = read_manifest(dir);
	DIR *dp = opendir(dir);
	struct dirent *e;

	while (dp && manifest && (e = readdir(dp))) {
		char *p;

		if ((!in_manifest(manifest, e->d_name) && strcmp(e->d_name, VIEW_MARKER) != 0) ||
		    asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		unlink(p);
		free(p);
	}
	if (dp)
		closedir(dp);
	free(manifest);
	rmdir(dir);
}

/* Removes the plain files of a flat folder we made (mkdtemp), then it. */
static void rm_flat(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp))) {
		char *p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		unlink(p);
		free(p);
	}
	closedir(dp);
	rmdir(dir);
}

/* 0: dir absent; 1: replaceable (empty or ours); KPT_E_INVAL: refuse.
 * stranger (cap 64): "" or the first file of a view folder that its
 * manifest does not list (the caller refuses then, after the more
 * specific check of its inputs). */
static int check_target(const char *dir, char *stranger, struct kpt_diag *d)
{
	struct stat st;
	DIR *dp;
	struct dirent *e;
	int entries = 0, marker = 0;
	char *manifest;

	if (stat(dir, &st) != 0)
		return errno == ENOENT ? 0 : kpt_diag_set(d, KPT_E_IO, "cannot use '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return kpt_diag_set(d, KPT_E_INVAL, "'%s' exists and is not a folder", dir);
	dp = opendir(dir);
	if (!dp)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", dir, strerror(errno));
	manifest = read_manifest(dir);
	while ((e = readdir(dp))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		entries++;
		marker |= strcmp(e->d_name, VIEW_MARKER) == 0;
		if (!stranger[0] && strcmp(e->d_name, VIEW_MARKER) != 0 && !in_manifest(manifest, e->d_name)) {
			size_t k = 0;

			for (const char *c = e->d_name; *c && k + 1 < 64; c++)
				stranger[k++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
			stranger[k] = '\0';
		}
	}
	closedir(dp);
	free(manifest);
	if (entries && !marker) {
		kpt_diag_set(d, KPT_E_INVAL, "'%s' exists and is not a kptprof view: not replacing it", dir);
		kpt_diag_hint(d, "choose another -o folder, or remove this one");
		return KPT_E_INVAL;
	}
	return 1;
}

/* Replacing DIR removes what is in it: an input file there (FILE or the
 * baseline, through any path or link) would be lost. KPT_E_INVAL then. */
static int check_inputs_outside(const char *dir, const char *const *inputs, size_t n, struct kpt_diag *d)
{
	char *rdir = realpath(dir, NULL);
	int rc = 0;

	if (!rdir)
		return kpt_diag_set(d, KPT_E_IO, "cannot resolve '%s': %s", dir, strerror(errno));
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *rin = inputs[i] ? realpath(inputs[i], NULL) : NULL;
		size_t len = strlen(rdir);

		if (rin && strncmp(rin, rdir, len) == 0 && (rin[len] == '/' || len == 1)) {
			rc = kpt_diag_set(d, KPT_E_INVAL, "'%s' lies inside the output folder '%s': "
					  "replacing the folder would delete it", inputs[i], dir);
			kpt_diag_hint(d, "choose another -o folder, or move the recording out of it");
		}
		free(rin);
	}
	free(rdir);
	return rc;
}

static FILE *open_out(struct view *v, const char *name, struct kpt_diag *d)
{
	char *p;
	FILE *fp;
	int fd;

	if (asprintf(&p, "%s/%s", v->tmp, name) < 0) {
		kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		return NULL;
	}
	/* in view's own new folder: no link can be there; watched for size
	 * like every output (kpt_outfile.h) */
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	fp = fd < 0 ? NULL : kpt_out_watch(fd, p, 1, 65536);
	if (!fp) {
		kpt_diag_set(d, KPT_E_IO, "cannot create '%s': %s", p, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	free(p);
	return fp;
}

/* ---- gathering ------------------------------------------------------------- */

/* Roofline points: workloads whose FLOPs and bytes per iteration the
 * recording declares in meta ("workload.<name>.flops", ".bytes"), with
 * their GPU time per iteration: the kernel time under the workload's NVTX
 * range (summary by range: the path is the workload or starts with it),
 * divided by the number of `kpt:iter` ranges directly inside a range of
 * that name (or by the number of such ranges when there is none).
 * O(ranges + strings x workloads). */
struct range_counts {
	double *named;              /* [string id] ranges with that name */
	double *iters;              /* [string id] kpt:iter ranges whose parent has that name */
	uint32_t nstr;
};

static int count_ranges(struct view *v, struct range_counts *rc, struct kpt_diag *d)
{
	const struct kpt_range *rng;
	struct kpt_range_index ri;
	uint32_t iter_id = KPT_NONE;
	size_t n;
	int err;

	if ((err = kpt_file_ranges(v->f, &rng, &n, d)) < 0)
		return err;
	rc->nstr = kpt_file_string_count(v->f);
	for (uint32_t s = 0; s < rc->nstr && iter_id == KPT_NONE; s++)
		if (strcmp(kpt_file_string(v->f, s), KPT_SUMMARY_ITER_RANGE) == 0)
			iter_id = s;
	rc->named = calloc(rc->nstr + 1, sizeof *rc->named);
	rc->iters = calloc(rc->nstr + 1, sizeof *rc->iters);
	if (!rc->named || !rc->iters || kpt_range_index_build(&ri, rng, n) != 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		long p;

		if (rng[i].name >= rc->nstr)
			continue;
		rc->named[rng[i].name]++;
		if (rng[i].name != iter_id || rng[i].parent == KPT_NONE)
			continue;
		p = kpt_range_index_find(&ri, rng[i].parent);
		if (p >= 0 && rng[p].name < rc->nstr)
			rc->iters[rng[p].name]++;
	}
	kpt_range_index_release(&ri);
	return 0;
}

static int gather_roofline(struct view *v, struct kpt_diag *d)
{
	struct range_counts cnt = { 0 };
	const struct kpt_meta_kv *kv;
	size_t nkv;
	int rc, counted = 0;

	if ((rc = kpt_file_meta(v->f, &kv, &nkv, d)) < 0)
		return rc;
	v->roof = calloc(nkv ? nkv : 1, sizeof *v->roof);
	if (!v->roof)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < nkv; i++) {
		const char *k = kv[i].key, *dot, *bytes;
		char *name, *bkey;
		double total = 0, iters = 0;
		size_t len;

		if (strncmp(k, "workload.", 9) != 0 || !(dot = strrchr(k, '.')) || strcmp(dot, ".flops") != 0 ||
		    dot <= k + 9)
			continue;
		if (!counted && (rc = count_ranges(v, &cnt, d)) < 0)
			goto out;
		counted = 1;
		len = (size_t)(dot - (k + 9));
		name = strndup(k + 9, len);
		if (!name || asprintf(&bkey, "workload.%s.bytes", name) < 0) {
			free(name);
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			goto out;
		}
		bytes = kpt_file_meta_get(v->f, bkey);
		free(bkey);
		for (size_t r = 0; r < v->by_range->n; r++) {
			const char *p = v->by_range->rows[r].name;

			if (strncmp(p, name, len) == 0 && (p[len] == '\0' || p[len] == '/'))
				total += (double)v->by_range->rows[r].total_ns;
		}
		for (uint32_t s = 0; s < cnt.nstr; s++)
			if (strcmp(kpt_file_string(v->f, s), name) == 0) {
				iters = cnt.iters[s] > 0 ? cnt.iters[s] : cnt.named[s];
				break;
			}
		if (!bytes || total <= 0 || iters <= 0) {
			free(name);
			continue;
		}
		v->roof[v->nroof].name = name;
		v->roof[v->nroof].flops = strtod(kv[i].value, NULL);
		v->roof[v->nroof].bytes = strtod(bytes, NULL);
		v->roof[v->nroof].ns = total / iters;
		v->nroof++;
	}
	rc = 0;
out:
	free(cnt.named);
	free(cnt.iters);
	return rc;
}

/* Whether stored key k is one the diff row stands for. */
static int row_has_key(const struct kpt_diff_row *r, const struct kpt_history_key *k)
{
	if (strcmp(k->name, r->name) != 0 || strcmp(k->path, r->path) != 0)
		return 0;
	if (r->loose || r->aggregated)
		return 1;
	return k->ordinal == r->ordinal && memcmp(k->grid, r->grid, sizeof k->grid) == 0 &&
	       memcmp(k->block, r->block, sizeof k->block) == 0;
}

/* Adds stored key id's series (sessions of filter f) into h. */
static int hist_add_key(struct view *v, struct key_hist *h, int64_t id, struct kpt_history_filter *f,
			struct kpt_diag *d)
{
	struct kpt_history_set *one = NULL;
	int rc;

	f->key_id = id;
	if ((rc = kpt_history_query(v->o->history, f, &one, d)) < 0)
		return rc;
	if (!h->set) {
		h->set = one;
		one = NULL;
		if (!(h->ns = malloc((h->set->nsessions ? h->set->nsessions : 1) * sizeof *h->ns))) {
			kpt_history_set_destroy(one);
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		}
		for (size_t i = 0; i < h->set->nsessions; i++)
			h->ns[i] = NAN;
	}
	{
		const struct kpt_history_set *src = one ? one : h->set;

		for (size_t k = 0; k < src->nseries; k++)
			for (uint32_t j = 0; j < src->series[k].n; j++) {
				int64_t sid = src->sessions[src->series[k].sess[j]].id;

				/* both sets hold the same sessions, but for adds in between */
				for (size_t i = 0; i < h->set->nsessions; i++)
					if (h->set->sessions[i].id == sid) {
						h->ns[i] = (isnan(h->ns[i]) ? 0 : h->ns[i]) + src->series[k].centre_ns[j];
						break;
					}
			}
	}
	h->nkeys++;
	kpt_history_set_destroy(one);
	return 0;
}

/* The history of each SLOW and AMBG row (the first VIEW_HISTORY_ROWS). */
static int gather_history(struct view *v, struct kpt_diag *d)
{
	const struct kpt_diff *df = v->df;
	struct kpt_history_filter f = { .suite = v->o->history_suite ? v->o->history_suite : df->new_.suite,
					.gpu_slug = df->new_.gpu_slug,
					.branch = v->o->history_branch ? v->o->history_branch : "main",
					.last = v->o->history_last ? v->o->history_last : VIEW_HISTORY_LAST };
	int rc = 0;

	v->hist = calloc(VIEW_HISTORY_ROWS, sizeof *v->hist);
	if (!v->hist)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < df->nrows && v->nhist < VIEW_HISTORY_ROWS && rc == 0; i++) {
		const struct kpt_diff_row *r = &df->rows[i];
		struct key_hist *h = &v->hist[v->nhist];
		struct kpt_history_set *keys = NULL;
		double *x;

		if (r->verdict != KPT_V_SLOW && r->verdict != KPT_V_AMBG)
			continue;
		h->row = r;
		v->nhist++;
		if ((rc = kpt_history_find_keys(v->o->history, r->name, &keys, d)) < 0)
			break;
		for (size_t k = 0; k < keys->nseries && rc == 0; k++)
			if (row_has_key(r, &keys->series[k].key))
				rc = hist_add_key(v, h, keys->series[k].key.id, &f, d);
		kpt_history_set_destroy(keys);
		if (rc < 0 || !h->set)
			continue;
		h->at = malloc((h->set->nsessions ? h->set->nsessions : 1) * sizeof *h->at);
		x = malloc((h->set->nsessions ? h->set->nsessions : 1) * sizeof *x);
		if (!h->at || !x) {
			free(x);
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			break;
		}
		for (uint32_t j = 0; j < h->set->nsessions; j++)
			if (h->ns[j] > 0) {
				h->at[h->n] = j;
				x[h->n++] = h->ns[j];
			}
		/* the detector of `history detect`, with its defaults; too
		 * short a series has none */
		if (h->n >= 6 && kpt_cp_detect(x, h->n, NULL, &h->cp, &h->ncp, NULL) < 0)
			h->ncp = 0;
		free(x);
	}
	return rc;
}

static int gather(struct view *v, struct kpt_diag *d)
{
	struct kpt_summary_opts so = { .by = KPT_SUMMARY_BY_KERNEL, .device = KPT_NONE,
				       .any_thread = v->o->diff.any_thread };
	int rc;

	if ((rc = kpt_file_open(v->path, &v->f, d)) < 0 || (rc = kpt_file_counts(v->f, &v->counts, d)) < 0 ||
	    (rc = kpt_file_load_strings(v->f, d)) < 0)
		return rc;
	kpt_progress_begin("summary", 0, "kernels");
	rc = kpt_summary_create(v->f, &so, &v->by_kernel, d);
	so.by = KPT_SUMMARY_BY_RANGE;
	if (rc >= 0)
		rc = kpt_summary_create(v->f, &so, &v->by_range, d);
	kpt_progress_end();
	if (rc < 0)
		return rc;
	if ((rc = kpt_env_summarize(v->f, &v->env, &v->nenv, d)) < 0)
		return rc;
	kpt_progress_begin("diff", 0, "kernels");
	if (v->o->base_side)
		rc = kpt_diff_side_vs_path(v->o->base_side, v->path, &v->o->diff, &v->df, d);
	else if (v->o->baseline)
		rc = kpt_diff_paths_multi(&v->o->baseline, 1, v->path, &v->o->diff, &v->df, d);
	kpt_progress_end();
	if (rc < 0)
		return rc;
	if (v->df && v->o->history && (rc = gather_history(v, d)) < 0)
		return rc;
	return gather_roofline(v, d);
}

/* ---- pictures ---------------------------------------------------------------- */

/* The timeline's window and colour priorities from what the summary already
 * knows, so the timeline reads the kernels once: the window spans every
 * kernel and memop; the families with the most kernel time come first. */
static int cmp_fam_total(const void *a, const void *b)
{
	const struct fam_total *x = a, *y = b;

	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) : strcmp(x->name, y->name);
}

static int timeline_window(struct view *v, struct kpt_timeline_opts *to)
{
	struct fam_total **fams = &v->ftot;
	const struct kpt_summary *s = v->by_kernel;
	const struct kpt_memop *mem;
	size_t nmem, nf = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;

	if (s->kernels) {
		t0 = s->first_ns;
		t1 = s->last_ns;
	}
	/* The kernels' span (kpt_timeline_opts): memops outside it are marked
	 * at the lane ends rather than stretching the window. */
	if (!s->kernels && kpt_file_memops(v->f, &mem, &nmem, NULL) == 0)
		for (size_t i = 0; i < nmem; i++) {
			t0 = mem[i].start_ns < t0 ? mem[i].start_ns : t0;
			t1 = mem[i].end_ns > t1 ? mem[i].end_ns : t1;
		}
	if (t0 == UINT64_MAX)
		return 0;           /* nothing: let the timeline say so */
	to->t0_ns = t0;
	to->t1_ns = t1 > t0 ? t1 : t0 + 1;
	*fams = calloc(s->n ? s->n : 1, sizeof **fams);
	if (!*fams)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < s->n; i++) {
		char fam[256];
		size_t j;

		/* the stored name, as the timeline sees it */
		kpt_kernel_family(s->rows[i].name, fam, sizeof fam);
		for (j = 0; j < nf && strcmp((*fams)[j].name, fam) != 0; j++)
			;
		if (j == nf)
			snprintf((*fams)[nf++].name, sizeof (*fams)[0].name, "%s", fam);
		(*fams)[j].ns += (double)s->rows[i].total_ns;
	}
	qsort(*fams, nf, sizeof **fams, cmp_fam_total);
	for (size_t i = 0; i < nf && i < KPT_TL_PALETTE; i++)
		v->prefer[v->nprefer++] = (*fams)[i].name;
	to->prefer = v->prefer;
	to->nprefer = v->nprefer;
	return 0;
}

static int make_timeline(struct view *v, struct kpt_diag *d)
{
	struct kpt_timeline_opts to = { .width = v->o->timeline_width };
	struct kpt_timeline *tl = NULL;
	struct kpt_canvas c = { 0 };
	struct kpt_diag why;
	char *png = NULL, title[512];
	const struct kpt_device *dev;
	size_t ndev;
	int rc;

	if (timeline_window(v, &to) < 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");

	if (kpt_file_devices(v->f, &dev, &ndev, NULL) < 0)
		ndev = 0;
	snprintf(title, sizeof title, "%s%s%s", strrchr(v->path, '/') ? strrchr(v->path, '/') + 1 : v->path,
		 ndev ? ": " : "", ndev ? dev[0].name : "");
	to.title = title;
	kpt_progress_begin("timeline", 0, "kernels");
	rc = kpt_timeline_from_file(v->f, &to, &tl, &why);
	kpt_progress_end();
	if (rc == KPT_E_NOTFOUND) {
		note(v, "timeline: %s", why.msg);
		return 0;
	}
	if (rc < 0) {
		if (d)
			*d = why;
		return rc;
	}
	for (size_t i = 0; i < kpt_timeline_family_count(tl) && i < KPT_TL_PALETTE; i++) {
		v->fams[v->nfams] = *kpt_timeline_family_at(tl, i);
		v->fam_names[v->nfams] = strdup(v->fams[v->nfams].name);
		if (!v->fam_names[v->nfams])
			break;          /* the legend table is a nicety */
		v->fams[v->nfams].name = v->fam_names[v->nfams];
		v->nfams++;
	}
	if (asprintf(&png, "%s/timeline.png", v->tmp) < 0)
		png = NULL;
	rc = !png ? kpt_diag_set(d, KPT_E_NOMEM, "out of memory") : kpt_timeline_draw(tl, &c, d);
	if (rc == 0) {
		rc = kpt_canvas_write_png(&c, png, &why);
		if (rc == KPT_E_UNSUPPORTED) {
			note(v, "timeline: %s", why.msg);
			rc = 0;
		} else if (rc < 0) {
			if (d)
				*d = why;
		} else {
			v->has_timeline = 1;
		}
	}
	free(png);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
	return rc;
}

/* A second timeline zoomed on one iteration (kpt:iter), when there is one. */
static int make_iter_timeline(struct view *v, struct kpt_diag *d)
{
	struct kpt_timeline_opts to = {
		.width = v->o->timeline_width, .range_rows = 4, .prefer = v->prefer, .nprefer = v->nprefer,
	};
	struct kpt_diag why;
	char *png = NULL, title[512];
	int rc;

	if (!v->has_timeline)
		return 0;
	v->iter_name = KPT_SUMMARY_ITER_RANGE;
	rc = kpt_timeline_iteration_window(v->f, v->iter_name, &to.t0_ns, &to.t1_ns, &v->iter_ordinal, &why);
	/* An arbitrary program: its first repeated top-level range (a
	 * training loop's step) stands for an iteration. */
	if (rc == KPT_E_NOTFOUND && kpt_timeline_repeated_range(v->f, &v->iter_name, NULL) == 0)
		rc = kpt_timeline_iteration_window(v->f, v->iter_name, &to.t0_ns, &to.t1_ns, &v->iter_ordinal, &why);
	if (rc == KPT_E_NOTFOUND)
		return 0;           /* no iterations to zoom on */
	if (rc < 0) {
		if (d)
			*d = why;
		return rc;
	}
	v->iter_ns = to.t1_ns - to.t0_ns;
	snprintf(title, sizeof title, "one iteration (the %s %s range of the first process)",
		 v->iter_ordinal ? "second" : "first", v->iter_name);
	to.title = title;
	if (asprintf(&png, "%s/timeline-iteration.png", v->tmp) < 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	kpt_progress_begin("iteration timeline", 0, "kernels");
	rc = kpt_timeline_write_png(v->f, &to, png, &why);
	kpt_progress_end();
	free(png);
	if (rc < 0) {
		if (d)
			*d = why;
		return rc;
	}
	v->has_iter_timeline = 1;
	return 0;
}

typedef int (*plot_fn)(struct view *v, const char *stem, struct kpt_diag *d);

static int plot_change(struct view *v, const char *stem, struct kpt_diag *d)
{
	return kpt_plot_diff_change(v->df, v->tmp, stem, d);
}

static int plot_runs(struct view *v, const char *stem, struct kpt_diag *d)
{
	return kpt_plot_diff_runs(v->df, v->tmp, stem, d);
}

/* The timeline's colour of a family (its 12 largest), else the hash colour. */
static unsigned timeline_color(void *ctx, const char *family)
{
	const struct view *v = ctx;

	for (size_t i = 0; i < v->nfams; i++)
		if (strcmp(v->fams[i].name, family) == 0)
			return v->fams[i].color;
	return kpt_family_color(family);
}

static int plot_top(struct view *v, const char *stem, struct kpt_diag *d)
{
	return kpt_plot_top_kernels(v->by_kernel, "Kernels by share of GPU time", timeline_color, v, v->tmp,
				    stem, d);
}

static int plot_roof(struct view *v, const char *stem, struct kpt_diag *d)
{
	const struct kpt_device *dev;
	size_t ndev;
	struct kpt_roofline r = { .pts = v->roof, .n = v->nroof };

	if (kpt_file_devices(v->f, &dev, &ndev, NULL) == 0 && ndev) {
		r.device = dev[0].name;
		r.copy_gbps = dev[0].copy_gbps;
		r.bf16_tflops = dev[0].bf16_tflops;
	}
	return kpt_plot_roofline(&r, v->tmp, stem, d);
}

/* The plots, in report order; diff plots only with a baseline. */
static const struct {
	const char *stem;
	const char *caption;
	plot_fn fn;
	int needs_diff;
} view_plots[] = {
	{ "diff-change", "Change of each kernel, NEW vs BASE, with its interval", plot_change, 1 },
	{ "diff-runs", "Run medians of the SLOW and AMBG kernels", plot_runs, 1 },
	{ "top-kernels", "Kernels by share of GPU time", plot_top, 0 },
	{ "roofline", "Roofline of the workloads with known FLOPs and bytes", plot_roof, 0 },
};

_Static_assert(sizeof view_plots / sizeof view_plots[0] == sizeof ((struct view *)0)->plots /
	       sizeof ((struct view *)0)->plots[0], "one view_plot per view_plots[] entry");

static int make_plots(struct view *v, struct kpt_diag *d)
{
	for (size_t i = 0; i < sizeof view_plots / sizeof view_plots[0]; i++) {
		struct view_plot *p = &v->plots[v->nplots];
		struct kpt_diag why;
		int rc;

		if (view_plots[i].needs_diff && !v->df)
			continue;
		v->nplots++;
		p->stem = view_plots[i].stem;
		p->caption = view_plots[i].caption;
		rc = view_plots[i].fn(v, p->stem, &why);
		if (rc == KPT_E_NOTFOUND) {
			snprintf(p->why, sizeof p->why, "%s", why.msg);
			continue;
		}
		if (rc < 0) {
			if (d)
				*d = why;
			return rc;
		}
		p->written = 1;
		if (v->o->no_render || v->gnuplot_missing)
			continue;
		rc = kpt_gnuplot_render(v->tmp, p->stem, v->o->gnuplot_timeout_ms, &why);
		if (rc == KPT_E_UNSUPPORTED) {
			v->gnuplot_missing = 1;
			note(v, "%s", why.msg);
		} else if (rc < 0) {
			snprintf(p->why, sizeof p->why, "%s", why.msg);
		} else {
			p->rendered = 1;
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One pass over the kernels' start times: their count, smallest and
 * largest (pass NULL h), or, with h, a histogram of those in [lo, hi] by
 * (start - lo) >> shift into h[65536], *below counting those under lo, or,
 * with out, those in [lo, hi] appended to out (room for all of them). */
struct starts_pass {
	uint64_t n, min, max;       /* all kernels */
	uint64_t lo, hi;            /* the value range looked at */
	unsigned shift;
	uint64_t *h, below;
	uint64_t *out;
	size_t nout;
};

static int starts_scan(struct view *v, struct starts_pass *p, struct kpt_diag *d)
{
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	size_t n;
	int rc = kpt_kernel_cursor_create(v->f, &cur, d);

	p->n = p->below = 0;
	p->nout = 0;
	p->min = UINT64_MAX;
	p->max = 0;
	while (rc >= 0 && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0) {
		for (size_t i = 0; i < n; i++) {
			uint64_t t = k[i].start_ns;

			p->n++;
			p->min = t < p->min ? t : p->min;
			p->max = t > p->max ? t : p->max;
			if (t < p->lo)
				p->below++;
			else if (t <= p->hi && p->h)
				p->h[(t - p->lo) >> p->shift]++;
			else if (t <= p->hi && p->out)
				p->out[p->nout++] = t;
		}
	}
	kpt_kernel_cursor_destroy(cur);
	return rc < 0 ? rc : 0;
}

/* Kernels gathered at once to sort when choosing the trace window. */
#define WINDOW_GATHER (1u << 22)

/* Order statistics rlo <= rhi of the start times into *t0, *t1, given p
 * from a first pass (p->lo, p->hi: the smallest and largest start, inside:
 * the kernels). A histogram of 65536 buckets narrows [lo, hi] until at
 * most WINDOW_GATHER kernels start in it, which are then sorted. When the
 * two ranks fall in the first and the last bucket, each is selected alone. */
static int select_starts(struct view *v, struct starts_pass p, uint64_t inside, uint64_t rlo, uint64_t rhi,
			 uint64_t *t0, uint64_t *t1, struct kpt_diag *d)
{
	uint64_t *h = NULL;
	int rc = 0;

	while (inside > WINDOW_GATHER) {
		uint64_t seen, b0 = 0, b1 = 0, top;
		int got0 = 0;

		for (p.shift = 0; ((p.hi - p.lo) >> p.shift) >= 65536; p.shift++)
			;
		if (!h && !(h = malloc(65536 * sizeof *h)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory choosing the trace window");
		memset(h, 0, 65536 * sizeof *h);
		p.h = h;
		if ((rc = starts_scan(v, &p, d)) < 0)
			break;
		seen = p.below;
		for (uint64_t b = 0; b < 65536; b++) {
			if (!got0 && seen + h[b] > rlo) {
				b0 = b;
				got0 = 1;
			}
			if (seen + h[b] > rhi) {
				b1 = b;
				break;
			}
			seen += h[b];
		}
		if (p.shift == 0) { /* buckets of one value each */
			*t0 = p.lo + b0;
			*t1 = p.lo + b1;
			free(h);
			return 0;
		}
		if (b0 == 0 && b1 == 65535) { /* [lo, hi] would not shrink */
			uint64_t unused;

			free(h);
			p.h = NULL;
			if ((rc = select_starts(v, p, inside, rlo, rlo, t0, &unused, d)) < 0)
				return rc;
			return select_starts(v, p, inside, rhi, rhi, &unused, t1, d);
		}
		inside = 0;
		for (uint64_t b = b0; b <= b1; b++)
			inside += h[b];
		top = p.lo + (b1 << p.shift) + ((UINT64_C(1) << p.shift) - 1);
		p.hi = top >= p.lo && top < p.hi ? top : p.hi;
		p.lo += b0 << p.shift;
	}
	free(h);
	p.h = NULL;
	if (rc >= 0 && !(p.out = malloc((inside ? inside : 1) * sizeof *p.out)))
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory choosing the trace window");
	if (rc >= 0 && (rc = starts_scan(v, &p, d)) >= 0) {
		qsort(p.out, p.nout, sizeof *p.out, cmp_u64);
		*t0 = p.out[rlo - p.below];
		*t1 = p.out[rhi - p.below];
	}
	free(p.out);
	return rc < 0 ? rc : 0;
}

/* [t0, t1]: the start times of the cap kernels around the median start of
 * the recording's kernels. Memory: 512 KiB and at most WINDOW_GATHER start
 * times, whatever the number of kernels K (select_starts). O(K) time a
 * pass over the kernels; 3 passes on ordinary recordings, at most 11. */
static int middle_window(struct view *v, uint64_t cap, uint64_t *t0, uint64_t *t1, struct kpt_diag *d)
{
	struct starts_pass p = { .lo = 0, .hi = UINT64_MAX };
	uint64_t rlo, rhi;
	int rc;

	if ((rc = starts_scan(v, &p, d)) < 0 || !p.n)
		return rc;
	rlo = p.n / 2 > cap / 2 ? p.n / 2 - cap / 2 : 0;
	rhi = rlo + cap - 1 < p.n ? rlo + cap - 1 : p.n - 1;
	p.lo = p.min;
	p.hi = p.max;
	return select_starts(v, p, p.n, rlo, rhi, t0, t1, d);
}

/* trace.json: the Chrome trace of the kernels around the middle of the
 * recording (at most trace_max_kernels, unless trace_all), written through
 * a counted stream with a byte budget: past it the file is left out with
 * a note, never half-written. */
static int write_trace(struct view *v, struct kpt_diag *d)
{
	uint64_t cap = v->o->trace_max_kernels ? v->o->trace_max_kernels : 200000;
	uint64_t t0 = 0, t1 = UINT64_MAX;
	struct kpt_out_count c = { .limit = v->o->trace_max_bytes ? v->o->trace_max_bytes : UINT64_C(1) << 30 };
	FILE *fp, *w;
	char *p, sz[32];
	int rc;

	if (!v->o->trace_all && v->counts.kernels > cap) {
		if ((rc = middle_window(v, cap, &t0, &t1, d)) < 0)
			return rc;
		note(v, "trace.json: the %llu kernels around the middle of the recording, of %llu; "
			"'kptprof view --trace-all' or 'kptprof export --format chrome' for all of them",
		     (unsigned long long)cap, (unsigned long long)v->counts.kernels);
	}
	if (asprintf(&p, "%s/trace.json", v->tmp) < 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	if ((rc = kpt_out_create(p, &fp, d)) < 0) {
		free(p);
		return rc;
	}
	c.inner = fp;
	if (!(w = kpt_out_counted(&c))) {
		kpt_out_discard(fp, p);
		free(p);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	rc = kpt_export_chrome_window(v->f, w, t0, t1, d);
	if (fclose(w) != 0 && rc >= 0)
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", p, strerror(errno));
	if (c.over) {
		kpt_out_discard(fp, p);
		free(p);
		note(v, "trace.json: not written: it would pass %s (--trace-bytes); "
			"use 'kptprof export --format chrome' for the whole recording",
		     (snprintf(sz, sizeof sz, "%llu bytes", (unsigned long long)c.limit), sz));
		return 0;
	}
	if (rc < 0)
		kpt_out_discard(fp, p);
	else
		rc = kpt_out_publish(fp, p, 0, d);
	free(p);
	v->has_trace = rc == 0;
	return rc;
}

/* two passes (the window, then the export) counted as one phase */
static int make_trace(struct view *v, struct kpt_diag *d)
{
	int rc;

	kpt_progress_begin("trace", 0, "kernels");
	rc = write_trace(v, d);
	kpt_progress_end();
	return rc;
}

/* ---- HTML -------------------------------------------------------------------- */

static const char view_css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0 auto;"
	"max-width:1680px;padding:16px 24px;color:#1a1a1a;background:#fff;font-size:14px}"
	"h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}"
	"table{border-collapse:collapse;margin:6px 0 12px}th,td{border-bottom:1px solid #e4e4e4;padding:3px 8px;"
	"text-align:left;vertical-align:top}th{background:#f4f4f4;font-weight:600}td.n,th.n{text-align:right;"
	"font-variant-numeric:tabular-nums;white-space:nowrap}td.name{font-family:ui-monospace,Menlo,Consolas,monospace;"
	"font-size:12px;word-break:break-all;max-width:900px}.sub{color:#666;font-size:12px}"
	".badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-weight:600;font-size:12px}"
	".headline{font-size:20px;font-weight:700;padding:10px 14px;border-radius:6px;margin:8px 0}"
	".bad{background:#fde8e8;color:#8a1414}.good{background:#e6f4ea;color:#135c2a}"
	".note{background:#fff7e0;border-left:4px solid #e8a21c;padding:6px 10px;margin:6px 0}"
	".severe{background:#fde8e8;border-left-color:#d62f2f}img{max-width:100%;height:auto;border:1px solid #eee}"
	"figure{margin:10px 0 18px}figcaption{color:#444;font-size:13px;margin-top:4px}"
	".sw{display:inline-block;width:11px;height:11px;margin-right:6px;vertical-align:middle}"
	"code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}";

static void esc(FILE *out, const char *s)
{
	kpt_text_write(out, KPT_TEXT_MARKUP, s);
}

static void td_ns(FILE *out, double ns)
{
	char buf[48];

	kpt_fmt_duration(ns, buf, sizeof buf);
	fprintf(out, "<td class=\"n\">%s</td>", buf);
}

static void td_pct(FILE *out, double pct)
{
	if (isfinite(pct))
		fprintf(out, "<td class=\"n\">%+.2f%%</td>", pct);
	else
		fprintf(out, "<td class=\"n\">-</td>");
}

static void badge(FILE *out, int verdict)
{
	fprintf(out, "<span class=\"badge\" style=\"background:#%06x\">%s</span>", kpt_verdict_color(verdict),
		kpt_verdict_label(verdict));
}

static void figure(FILE *out, const struct view *v, const char *stem)
{
	for (size_t i = 0; i < v->nplots; i++) {
		const struct view_plot *p = &v->plots[i];

		if (strcmp(p->stem, stem) != 0)
			continue;
		if (p->rendered) {
			fprintf(out, "<figure><img src=\"%s.png\" alt=\"", p->stem);
			esc(out, p->caption);
			fprintf(out, "\"><figcaption>");
			esc(out, p->caption);
			fprintf(out, " (<a href=\"%s.gp\">%s.gp</a>: re-render with <code>gnuplot %s.gp</code>)</figcaption></figure>\n",
				p->stem, p->stem, p->stem);
		} else if (p->written) {
			fprintf(out, "<p class=\"note\">");
			esc(out, p->caption);
			fprintf(out, ": not drawn (");
			esc(out, p->why[0] ? p->why : v->gnuplot_missing ? "gnuplot is not installed" :
				 "gnuplot was not run: --no-gnuplot");
			fprintf(out, "); the script is <a href=\"%s.gp\">%s.gp</a> (run <code>gnuplot %s.gp</code> in this folder).</p>\n",
				p->stem, p->stem, p->stem);
		} else {
			fprintf(out, "<p class=\"note\">");
			esc(out, p->caption);
			fprintf(out, ": ");
			esc(out, p->why);
			fprintf(out, "</p>\n");
		}
	}
}

/* The legend of the change plot: its numbered keys with their whole names
 * and ranges (the plot's y labels are abbreviated). */
static void change_legend(FILE *out, const struct view *v)
{
	size_t *idx = malloc((v->df->nrows ? v->df->nrows : 1) * sizeof *idx), n, total;
	char b[48];

	if (!idx)
		return;
	n = kpt_plot_change_keys(v->df, idx, &total);
	if (n) {
		fprintf(out, "<details><summary>The %zu numbered keys of the plot</summary>\n<table><tr>"
			     "<th class=\"n\">#</th><th>Verdict</th><th class=\"n\">Change</th><th>Kernel</th>"
			     "<th>Range</th></tr>\n", n);
		for (size_t k = 0; k < n; k++) {
			const struct kpt_diff_row *r = &v->df->rows[idx[k]];

			snprintf(b, sizeof b, "%+.2f%%", r->change_pct);
			fprintf(out, "<tr><td class=\"n\">%zu</td><td>%s</td><td class=\"n\">%s</td><td><code>", k + 1,
				kpt_verdict_label(r->verdict), b);
			esc(out, r->name);
			if (r->ordinal)
				fprintf(out, " #%u", r->ordinal);
			fprintf(out, "</code></td><td><code>");
			esc(out, r->path && r->path[0] ? r->path : "-");
			fprintf(out, "</code></td></tr>\n");
		}
		fprintf(out, "</table></details>\n");
	}
	free(idx);
}

static void key_config(FILE *out, const struct kpt_diff_row *r)
{
	if (r->path && r->path[0]) {
		fprintf(out, "<br><span class=\"sub\">range ");
		esc(out, r->path);
		fprintf(out, "</span>");
	}
	if (!r->loose && (r->grid[0] || r->block[0]))
		fprintf(out, "<br><span class=\"sub\">grid (%u,%u,%u) block (%u,%u,%u)</span>", r->grid[0],
			r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
	if (r->ordinal)
		fprintf(out, "<span class=\"sub\"> launch #%u</span>", r->ordinal);
	if (r->loose)
		fprintf(out, "<br><span class=\"sub\">matched by name and range only (launch configs differ)</span>");
}

static void diff_row(FILE *out, const struct kpt_diff_row *r)
{
	fprintf(out, "<tr><td>");
	badge(out, r->verdict);
	fprintf(out, "</td><td class=\"name\">");
	esc(out, r->name);
	key_config(out, r);
	fprintf(out, "</td>");
	td_ns(out, r->base_ns);
	td_ns(out, r->new_ns);
	td_pct(out, r->change_pct);
	if (isfinite(r->ci_low_pct))
		fprintf(out, "<td class=\"n\">[%+.2f, %+.2f]</td>", r->ci_low_pct, r->ci_high_pct);
	else
		fprintf(out, "<td class=\"n\">-</td>");
	if (isfinite(r->noise_pct))
		fprintf(out, "<td class=\"n\">%.2f%%</td>", r->noise_pct);
	else
		fprintf(out, "<td class=\"n\">-</td>");
	fprintf(out, "<td class=\"n\">%u / %u</td><td>", r->base_runs, r->new_runs);
	if (r->verdict == KPT_V_AMBG && r->machine_limited)
		fprintf(out, "machine noise %.1f%%: more runs cannot settle it against the %g%% threshold; "
			"use kptprof ab or add baseline sessions", r->between_pct, r->threshold_pct);
	else if (r->verdict == KPT_V_AMBG && r->more_runs)
		fprintf(out, "about %u more runs per side would settle it", r->more_runs);
	fprintf(out, "</td></tr>\n");
}

static void diff_table_head(FILE *out)
{
	fprintf(out, "<table><tr><th>verdict</th><th>kernel</th><th class=\"n\">base</th><th class=\"n\">new</th>"
		     "<th class=\"n\">change</th><th class=\"n\">interval, %%</th><th class=\"n\">noise</th>"
		     "<th class=\"n\">runs b/n</th><th></th></tr>\n");
}

static void html_diff(FILE *out, const struct view *v)
{
	const struct kpt_diff *df = v->df;
	size_t same = 0;

	fprintf(out, "<h2 id=\"verdicts\">Verdicts against the baseline</h2>\n");
	if (df->result == KPT_DIFF_REGRESSION)
		fprintf(out, "<div class=\"headline bad\">Regression: %u kernel%s SLOW</div>\n", df->counts[KPT_V_SLOW],
			df->counts[KPT_V_SLOW] == 1 ? "" : "s");
	else
		fprintf(out, "<div class=\"headline good\">No regression</div>\n");
	fprintf(out, "<p>");
	for (int i = 0; i < KPT_V_COUNT; i++) {
		badge(out, i);
		fprintf(out, " %u &nbsp; ", df->counts[i]);
	}
	fprintf(out, "<br><span class=\"sub\">BASE <code>");
	esc(out, df->base.path);
	fprintf(out, "</code> (%u runs), NEW <code>", df->base.runs);
	esc(out, df->new_.path);
	fprintf(out, "</code> (%u runs); threshold %.3g%% (%.3g%% for kernels under %.0f us, %.3g%% from %.0f us), family alpha %.3g (Holm, %u keys)%s</span></p>\n",
		df->new_.runs, df->opts.threshold_pct, df->opts.short_threshold_pct, df->opts.short_ns / 1e3,
		df->opts.long_threshold_pct, df->opts.long_ns / 1e3, df->opts.alpha,
		df->n_tested, df->forced ? "; GPU models differ (forced)" : "");
	if (df->n_loose)
		fprintf(out, "<p class=\"note\">%u key%s matched by name and NVTX range only: launch configurations differ between the recordings.</p>\n",
			df->n_loose, df->n_loose == 1 ? " was" : "s were");
	for (size_t i = 0; i < df->nnotes; i++) {
		fprintf(out, "<p class=\"note%s\"><b>", df->notes[i].severe ? " severe" : "");
		esc(out, df->notes[i].what);
		fprintf(out, "</b>: ");
		esc(out, df->notes[i].text);
		fprintf(out, "</p>\n");
	}
	figure(out, v, "diff-change");
	change_legend(out, v);
	figure(out, v, "diff-runs");
	diff_table_head(out);
	for (size_t i = 0; i < df->nrows; i++) {
		if (df->rows[i].verdict == KPT_V_SAME) {
			same++;
			continue;
		}
		diff_row(out, &df->rows[i]);
	}
	fprintf(out, "</table>\n");
	if (same) {
		size_t shown = 0;

		fprintf(out, "<details><summary>%zu SAME kernel%s%s</summary>\n", same, same == 1 ? "" : "s",
			same > VIEW_SAME_ROWS ? " (the first 1000)" : "");
		diff_table_head(out);
		for (size_t i = 0; i < df->nrows && shown < VIEW_SAME_ROWS; i++)
			if (df->rows[i].verdict == KPT_V_SAME) {
				diff_row(out, &df->rows[i]);
				shown++;
			}
		fprintf(out, "</table></details>\n");
	}
	if (df->ntotals) {
		fprintf(out, "<h3>Totals</h3><table><tr><th>kind</th><th>name</th><th class=\"n\">keys</th>"
			     "<th class=\"n\">base</th><th class=\"n\">new</th><th class=\"n\">change</th>"
			     "<th class=\"n\">geomean change</th><th>verdicts</th></tr>\n");
		for (size_t i = 0; i < df->ntotals && i < 200; i++) {
			const struct kpt_diff_total *t = &df->totals[i];
			static const char *const kinds[] = {
				[KPT_TOTAL_RANGE] = "range", [KPT_TOTAL_WORKLOAD] = "workload", [KPT_TOTAL_ALL] = "all",
			};

			fprintf(out, "<tr><td>%s</td><td class=\"name\">", t->kind <= KPT_TOTAL_ALL ? kinds[t->kind] : "?");
			esc(out, t->name[0] ? t->name : "(no range)");
			fprintf(out, "</td><td class=\"n\">%u</td>", t->keys);
			td_ns(out, t->base_ns);
			td_ns(out, t->new_ns);
			td_pct(out, t->change_pct);
			td_pct(out, t->geomean_change_pct);
			fprintf(out, "<td>");
			for (int k = 0; k < KPT_V_COUNT; k++)
				if (t->verdicts[k])
					fprintf(out, "%s %u ", kpt_verdict_label(k), t->verdicts[k]);
			fprintf(out, "</td></tr>\n");
		}
		fprintf(out, "</table>\n");
	}
}

/* A sparkline of h's values (oldest left), this recording's time as the
 * last, hollow point, change points as dashed lines; <title>s name each
 * point. */
static void hist_svg(FILE *out, const struct key_hist *h)
{
	const double W = 360, H = 56, pad = 5;
	double lo = h->row->new_ns, hi = h->row->new_ns, span;
	uint32_t n = h->n + 1;
	char b[48];

	for (uint32_t j = 0; j < h->n; j++) {
		lo = fmin(lo, h->ns[h->at[j]]);
		hi = fmax(hi, h->ns[h->at[j]]);
	}
	if (hi - lo < 0.02 * hi) { /* a flat series stays flat: at least 2% tall */
		double mid = (hi + lo) / 2;

		lo = mid * 0.99;
		hi = mid * 1.01;
	}
	span = hi - lo > 0 ? hi - lo : 1;
#define HX(j) (pad + (n > 1 ? (double)(j) * (W - 2 * pad) / (n - 1) : (W - 2 * pad) / 2))
#define HY(val) (pad + (hi - (val)) / span * (H - 2 * pad))
	fprintf(out, "<svg class=\"spark\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", W, H, W, H);
	for (uint32_t c = 0; c < h->ncp; c++)
		fprintf(out, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#d62f2f\" stroke-dasharray=\"3,2\">"
			"<title>change point %+.1f%%</title></line>", (HX(h->cp[c].at - 1) + HX(h->cp[c].at)) / 2,
			(HX(h->cp[c].at - 1) + HX(h->cp[c].at)) / 2, H, h->cp[c].step_pct);
	fprintf(out, "<polyline fill=\"none\" stroke=\"#3060c0\" stroke-width=\"1.5\" points=\"");
	for (uint32_t j = 0; j < h->n; j++)
		fprintf(out, "%s%.1f,%.1f", j ? " " : "", HX(j), HY(h->ns[h->at[j]]));
	fprintf(out, "\"/>");
	for (uint32_t j = 0; j < h->n; j++) {
		const struct kpt_history_session *se = &h->set->sessions[h->at[j]];

		kpt_fmt_duration(h->ns[h->at[j]], b, sizeof b);
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#3060c0\"><title>", HX(j),
			HY(h->ns[h->at[j]]));
		esc(out, se->commit[0] ? se->commit : "-");
		fprintf(out, " ");
		esc(out, se->added);
		fprintf(out, ": %s</title></circle>", b);
	}
	kpt_fmt_duration(h->row->new_ns, b, sizeof b);
	fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#fff\" stroke=\"#e08000\" stroke-width=\"1.5\">"
		"<title>this recording: %s</title></circle></svg>", HX(h->n), HY(h->row->new_ns), b);
#undef HX
#undef HY
}

static void html_history(FILE *out, const struct view *v)
{
	const struct kpt_diff *df = v->df;

	fprintf(out, "<h3 id=\"history\">History of the SLOW and AMBG kernels</h3>\n<p class=\"sub\">From history store <code>");
	esc(out, kpt_history_where(v->o->history));
	fprintf(out, "</code>: suite <code>");
	esc(out, v->o->history_suite ? v->o->history_suite : df->new_.suite);
	fprintf(out, "</code>, GPU <code>");
	esc(out, df->new_.gpu_slug);
	fprintf(out, "</code>, branch <code>");
	esc(out, v->o->history_branch ? v->o->history_branch : "main");
	fprintf(out, "</code>, the last %u sessions, oldest first; the hollow point is this recording; dashed lines are "
		     "change points (<code>kptprof history detect</code>'s detector).</p>\n",
		v->o->history_last ? v->o->history_last : VIEW_HISTORY_LAST);
	for (size_t i = 0; i < v->nhist; i++) {
		const struct key_hist *h = &v->hist[i];
		char b[48];

		fprintf(out, "<div class=\"hist\"><p>");
		badge(out, h->row->verdict);
		fprintf(out, " <span class=\"name\">");
		esc(out, h->row->name);
		fprintf(out, "</span>");
		key_config(out, h->row);
		fprintf(out, "</p>\n");
		if (!h->n) {
			fprintf(out, "<p class=\"sub\">no stored history of this key</p></div>\n");
			continue;
		}
		hist_svg(out, h);
		fprintf(out, "\n<details><summary>%u session%s%s, %u change point%s</summary>\n<table><tr><th>commit</th>"
			     "<th>added</th><th class=\"n\">time</th><th class=\"n\">change point</th></tr>\n",
			h->n, h->n == 1 ? "" : "s", h->nkeys > 1 ? " (summed over its stored keys)" : "", h->ncp,
			h->ncp == 1 ? "" : "s");
		for (uint32_t j = 0; j < h->n; j++) {
			const struct kpt_history_session *se = &h->set->sessions[h->at[j]];

			fprintf(out, "<tr><td><code>");
			esc(out, se->commit[0] ? se->commit : "-");
			fprintf(out, "</code></td><td>");
			esc(out, se->added);
			fprintf(out, "</td>");
			td_ns(out, h->ns[h->at[j]]);
			fprintf(out, "<td class=\"n\">");
			for (uint32_t c = 0; c < h->ncp; c++)
				if (h->cp[c].at == j)
					fprintf(out, "%+.1f%%", h->cp[c].step_pct);
			fprintf(out, "</td></tr>\n");
		}
		kpt_fmt_duration(h->row->new_ns, b, sizeof b);
		fprintf(out, "<tr><td>this recording</td><td></td><td class=\"n\">%s</td><td></td></tr>\n</table></details></div>\n", b);
	}
}

static void kv_row(FILE *out, const char *k, const char *val)
{
	fprintf(out, "<tr><th>");
	esc(out, k);
	fprintf(out, "</th><td class=\"name\">");
	esc(out, val);
	fprintf(out, "</td></tr>\n");
}

static void html_environment(FILE *out, struct view *v)
{
	const struct kpt_device *dev;
	const struct kpt_meta_kv *kv;
	const struct kpt_process *pr;
	size_t ndev = 0, nkv = 0, npr = 0;
	char a[48], b[48];

	fprintf(out, "<h2 id=\"environment\">Environment</h2>\n");
	if (kpt_file_devices(v->f, &dev, &ndev, NULL) == 0 && ndev) {
		fprintf(out, "<table><tr><th>#</th><th>GPU</th><th>SMs</th><th>CC</th><th class=\"n\">memory</th>"
			     "<th class=\"n\">L2</th><th class=\"n\">SM / mem clock max</th><th>driver</th><th>CUDA</th>"
			     "<th class=\"n\">copy ceiling</th><th class=\"n\">bf16 ceiling</th><th>UUID</th></tr>\n");
		for (size_t i = 0; i < ndev; i++) {
			fprintf(out, "<tr><td>%u</td><td>", dev[i].index);
			esc(out, dev[i].name);
			fprintf(out, "<br><span class=\"sub\">");
			esc(out, dev[i].slug);
			kpt_fmt_bytes((double)dev[i].mem_bytes, a, sizeof a);
			kpt_fmt_bytes((double)dev[i].l2_bytes, b, sizeof b);
			fprintf(out, "</span></td><td>%u</td><td>%u.%u</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
				     "<td class=\"n\">%u / %u MHz</td><td>",
				dev[i].sm_count, dev[i].cc_major, dev[i].cc_minor, a, b, dev[i].sm_clock_max_mhz,
				dev[i].mem_clock_max_mhz);
			esc(out, dev[i].driver_string && dev[i].driver_string[0] ? dev[i].driver_string : "");
			fprintf(out, " (%u.%u)</td>", dev[i].driver_version / 1000, dev[i].driver_version % 1000 / 10);
			if (dev[i].runtime_version) /* 0: the collector could not tell */
				fprintf(out, "<td>%u.%u</td>", dev[i].runtime_version / 1000,
					dev[i].runtime_version % 1000 / 10);
			else
				fprintf(out, "<td>-</td>");
			if (dev[i].copy_gbps > 0)
				fprintf(out, "<td class=\"n\">%.0f GB/s</td>", dev[i].copy_gbps);
			else
				fprintf(out, "<td class=\"n\">-</td>");
			if (dev[i].bf16_tflops > 0)
				fprintf(out, "<td class=\"n\">%.0f TFLOP/s</td>", dev[i].bf16_tflops);
			else
				fprintf(out, "<td class=\"n\">-</td>");
			fprintf(out, "<td class=\"name\">");
			esc(out, dev[i].uuid);
			fprintf(out, "</td></tr>\n");
		}
		fprintf(out, "</table>\n");
	}
	if (v->nenv) {
		fprintf(out, "<table><tr><th>GPU</th><th class=\"n\">samples</th><th class=\"n\">SM clock min / median / max</th>"
			     "<th class=\"n\">mem clock</th><th class=\"n\">temperature</th><th class=\"n\">power median / max</th>"
			     "<th>throttle reasons seen</th><th class=\"n\">slowdown samples</th></tr>\n");
		for (size_t i = 0; i < v->nenv; i++) {
			const struct kpt_env_summary *e = &v->env[i];
			char thr[256];

			kpt_throttle_format(e->throttle_any, thr, sizeof thr);
			fprintf(out, "<tr><td>%u</td><td class=\"n\">%llu</td><td class=\"n\">%u / %u / %u MHz</td>"
				     "<td class=\"n\">%u MHz</td><td class=\"n\">%u-%u C</td><td class=\"n\">%.0f / %.0f W</td><td>",
				e->device, (unsigned long long)e->samples, e->sm_mhz_min, e->sm_mhz_median, e->sm_mhz_max,
				e->mem_mhz_median, e->temp_c_min, e->temp_c_max, e->power_mw_median / 1000.0,
				e->power_mw_max / 1000.0);
			esc(out, thr);
			fprintf(out, "</td><td class=\"n\">%llu</td></tr>\n", (unsigned long long)e->slowdown_samples);
		}
		fprintf(out, "</table>\n");
	} else {
		fprintf(out, "<p class=\"sub\">No NVML environment samples in this recording.</p>\n");
	}
	if (kpt_file_meta(v->f, &kv, &nkv, NULL) == 0 && nkv) {
		fprintf(out, "<details open><summary>Recording metadata (%zu keys)</summary><table>\n", nkv);
		for (size_t i = 0; i < nkv; i++)
			kv_row(out, kv[i].key, kv[i].value);
		fprintf(out, "</table></details>\n");
	}
	if (kpt_file_processes(v->f, &pr, &npr, NULL) == 0 && npr) {
		fprintf(out, "<details><summary>%zu processes</summary><table><tr><th>#</th><th>run</th><th>pid</th>"
			     "<th>exit</th><th class=\"n\">dropped records</th><th>command</th></tr>\n", npr);
		for (size_t i = 0; i < npr && i < 500; i++) {
			fprintf(out, "<tr><td>%u</td><td>%u</td><td>%u</td><td>", pr[i].index, pr[i].run, pr[i].pid);
			if (pr[i].exit_status == INT32_MIN)
				fprintf(out, "?");
			else
				fprintf(out, "%d", pr[i].exit_status);
			fprintf(out, "</td><td class=\"n\">%llu</td><td class=\"name\">", (unsigned long long)pr[i].dropped);
			esc(out, kpt_file_string(v->f, pr[i].command));
			fprintf(out, "</td></tr>\n");
		}
		fprintf(out, "</table></details>\n");
	}
}

static void html_summary(FILE *out, const struct view *v)
{
	const struct kpt_counts *c = &v->counts;
	const struct kpt_summary *s = v->by_kernel;
	char gpu[48], span[48];

	kpt_fmt_duration((double)s->total_ns, gpu, sizeof gpu);
	kpt_fmt_duration(s->last_ns > s->first_ns ? (double)(s->last_ns - s->first_ns) : 0, span, sizeof span);
	fprintf(out, "<h2 id=\"summary\">Summary</h2>\n<table>"
		     "<tr><th>kernels</th><td class=\"n\">%llu</td><th>distinct names</th><td class=\"n\">%zu</td></tr>"
		     "<tr><th>GPU time (sum of kernels)</th><td class=\"n\">%s</td><th>first to last kernel</th><td class=\"n\">%s</td></tr>"
		     "<tr><th>memcpy / memset</th><td class=\"n\">%llu</td><th>NVTX ranges</th><td class=\"n\">%llu</td></tr>"
		     "<tr><th>processes / runs</th><td class=\"n\">%u / %u</td><th>devices</th><td class=\"n\">%u</td></tr>"
		     "<tr><th>env samples</th><td class=\"n\">%llu</td><th>dropped CUPTI records</th><td class=\"n\">%llu</td></tr>"
		     "</table>\n",
		(unsigned long long)c->kernels, s->n, gpu, span, (unsigned long long)c->memops,
		(unsigned long long)c->ranges, c->processes, c->runs, c->devices, (unsigned long long)c->env_samples,
		(unsigned long long)c->dropped_records);
	if (c->dropped_records)
		fprintf(out, "<p class=\"note severe\">CUPTI dropped %llu records: the recording is incomplete.</p>\n",
			(unsigned long long)c->dropped_records);
}

static void html_timeline(FILE *out, const struct view *v)
{
	fprintf(out, "<h2 id=\"timeline\">Timeline</h2>\n");
	if (!v->has_timeline) {
		fprintf(out, "<p class=\"note\">No timeline picture (see the notes below).</p>\n");
		return;
	}
	fprintf(out, "<figure><img src=\"timeline.png\" alt=\"timeline\"><figcaption>One lane per GPU and stream: "
		     "bar height is the busy fraction of each pixel column, colour the kernel family with the most time in it; "
		     "NVTX ranges above (host time), memcpy/memset in the strip under each lane.%s</figcaption></figure>\n",
		v->has_trace ? " Full detail: <a href=\"trace.json\">trace.json</a> in Perfetto." : "");
	if (v->has_iter_timeline) {
		char span[48];

		kpt_fmt_duration((double)v->iter_ns, span, sizeof span);
		fprintf(out, "<figure><img src=\"timeline-iteration.png\" alt=\"timeline of one iteration\"><figcaption>"
			     "Zoomed on one iteration: the kernels launched inside the %s <code>",
			v->iter_ordinal ? "second" : "first");
		esc(out, v->iter_name);
		fprintf(out, "</code> range of the first process%s, %s from the first kernel's start to the last one's end."
			     "</figcaption></figure>\n",
			strcmp(v->iter_name, KPT_SUMMARY_ITER_RANGE) ? " (no kpt:iter ranges: its first repeated top-level range)" : "",
			span);
	}
	if (v->nfams) {
		fprintf(out, "<table><tr><th>family</th><th class=\"n\">kernels</th><th class=\"n\">time</th></tr>\n");
		for (size_t i = 0; i < v->nfams; i++) {
			fprintf(out, "<tr><td><span class=\"sw\" style=\"background:#%06x\"></span>", v->fams[i].color);
			esc(out, v->fams[i].name);
			fprintf(out, "</td><td class=\"n\">%llu</td>", (unsigned long long)v->fams[i].kernels);
			td_ns(out, v->fams[i].total_ns);
			fprintf(out, "</tr>\n");
		}
		fprintf(out, "</table>\n");
	}
}

static void html_kernels(FILE *out, const struct view *v)
{
	const struct kpt_summary *s = v->by_kernel, *r = v->by_range;
	size_t top = v->o->top > 0 ? (size_t)v->o->top : 50;

	fprintf(out, "<h2 id=\"kernels\">Kernels</h2>\n");
	figure(out, v, "top-kernels");
	figure(out, v, "roofline");
	if (v->nroof) {
		fprintf(out, "<table><tr><th>workload</th><th class=\"n\">time / iteration</th><th class=\"n\">TFLOP/s</th>"
			     "<th class=\"n\">GB/s</th><th class=\"n\">FLOP/byte</th></tr>\n");
		for (size_t i = 0; i < v->nroof; i++) {
			const struct kpt_roof_point *p = &v->roof[i];

			fprintf(out, "<tr><td class=\"name\">");
			esc(out, p->name);
			fprintf(out, "</td>");
			td_ns(out, p->ns);
			fprintf(out, "<td class=\"n\">%.1f</td><td class=\"n\">%.0f</td><td class=\"n\">%.3g</td></tr>\n",
				p->flops / p->ns / 1e3, p->bytes / p->ns, p->bytes > 0 ? p->flops / p->bytes : 0);
		}
		fprintf(out, "</table>\n");
	}
	fprintf(out, "<table><tr><th class=\"n\">Time %%</th><th class=\"n\">Total</th><th class=\"n\">Instances</th>"
		     "<th class=\"n\">Avg</th><th class=\"n\">Med</th><th class=\"n\">Min</th><th class=\"n\">Max</th>"
		     "<th class=\"n\">StdDev</th><th>Name</th></tr>\n");
	for (size_t i = 0; i < s->n && i < top; i++) {
		const struct kpt_summary_row *k = &s->rows[i];

		fprintf(out, "<tr><td class=\"n\">%.1f</td>", k->time_pct);
		td_ns(out, (double)k->total_ns);
		fprintf(out, "<td class=\"n\">%llu</td>", (unsigned long long)k->instances);
		td_ns(out, k->avg_ns);
		td_ns(out, k->median_ns);
		td_ns(out, (double)k->min_ns);
		td_ns(out, (double)k->max_ns);
		td_ns(out, k->stddev_ns);
		fprintf(out, "<td class=\"name\">");
		esc(out, k->display);
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</table>\n");
	if (s->n > top)
		fprintf(out, "<p class=\"sub\">%zu more kernels not listed (<code>kptprof report --top N</code>).</p>\n",
			s->n - top);
	fprintf(out, "<h2 id=\"ranges\">NVTX ranges</h2>\n<p class=\"sub\">Kernel time by the NVTX range path of the launch "
		     "(exclusive; iterations merged).</p>\n<table><tr><th class=\"n\">Time %%</th><th class=\"n\">Total</th>"
		     "<th class=\"n\">Kernels</th><th class=\"n\">Med</th><th>Range path</th></tr>\n");
	for (size_t i = 0; i < r->n && i < top; i++) {
		const struct kpt_summary_row *k = &r->rows[i];

		fprintf(out, "<tr><td class=\"n\">%.1f</td>", k->time_pct);
		td_ns(out, (double)k->total_ns);
		fprintf(out, "<td class=\"n\">%llu</td>", (unsigned long long)k->instances);
		td_ns(out, k->median_ns);
		fprintf(out, "<td class=\"name\">");
		esc(out, k->display);
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</table>\n");
}

static void html_files(FILE *out, const struct view *v)
{
	fprintf(out, "<h2 id=\"files\">Files</h2>\n<ul>\n");
	if (v->has_trace)
		fprintf(out, "<li><a href=\"trace.json\">trace.json</a>: Chrome trace; open it in Perfetto "
			     "(ui.perfetto.dev, Open trace file) or chrome://tracing.</li>\n");
	if (v->has_timeline)
		fprintf(out, "<li><a href=\"timeline.png\">timeline.png</a></li>\n");
	if (v->has_iter_timeline)
		fprintf(out, "<li><a href=\"timeline-iteration.png\">timeline-iteration.png</a></li>\n");
	for (size_t i = 0; i < v->nplots; i++)
		if (v->plots[i].written)
			fprintf(out, "<li><a href=\"%s.gp\">%s.gp</a>%s%s%s: gnuplot script with its data inline</li>\n",
				v->plots[i].stem, v->plots[i].stem, v->plots[i].rendered ? " and <a href=\"" : "",
				v->plots[i].rendered ? v->plots[i].stem : "", v->plots[i].rendered ? ".png\">png</a>" : "");
	fprintf(out, "</ul>\n");
	if (v->nnotes) {
		fprintf(out, "<h2 id=\"notes\">Notes</h2>\n");
		for (size_t i = 0; i < v->nnotes; i++) {
			fprintf(out, "<p class=\"note\">");
			esc(out, v->notes[i]);
			fprintf(out, "</p>\n");
		}
	}
}

static int write_html(struct view *v, struct kpt_diag *d)
{
	FILE *out = open_out(v, "index.html", d);
	const char *base = strrchr(v->path, '/') ? strrchr(v->path, '/') + 1 : v->path;
	const char *when = kpt_file_meta_get(v->f, "time"), *host = kpt_file_meta_get(v->f, "host");
	const char *suite = kpt_file_meta_get(v->f, "suite"), *cmd = kpt_file_meta_get(v->f, "command");
	int bad;

	if (!out)
		return d ? d->code : KPT_E_IO;
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>kptprof: ");
	esc(out, base);
	fprintf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>kptprof report: ", view_css);
	esc(out, base);
	fprintf(out, "</h1>\n<p class=\"sub\">");
	if (suite) {
		fprintf(out, "suite <b>");
		esc(out, suite);
		fprintf(out, "</b> &middot; ");
	}
	if (when) {
		esc(out, when);
		fprintf(out, " &middot; ");
	}
	if (host) {
		fprintf(out, "host ");
		esc(out, host);
		fprintf(out, " &middot; ");
	}
	fprintf(out, "file <code>");
	esc(out, v->path);
	fprintf(out, "</code>");
	if (cmd) {
		fprintf(out, "<br>command <code>");
		esc(out, cmd);
		fprintf(out, "</code>");
	}
	fprintf(out, "</p>\n<p class=\"sub\">%s<a href=\"#summary\">summary</a> &middot; <a href=\"#environment\">environment</a> &middot; "
		     "<a href=\"#timeline\">timeline</a> &middot; <a href=\"#kernels\">kernels</a> &middot; "
		     "<a href=\"#ranges\">NVTX ranges</a> &middot; <a href=\"#files\">files</a></p>\n",
		v->df ? "<a href=\"#verdicts\">verdicts</a> &middot; " : "");
	if (v->gnuplot_missing)
		fprintf(out, "<p class=\"note\">gnuplot is not installed: the plots are kept as scripts (*.gp) in this folder; "
			     "install gnuplot and run <code>gnuplot NAME.gp</code> here to draw them.</p>\n");
	if (v->df)
		html_diff(out, v);
	if (v->df && v->o->history)
		html_history(out, v);
	html_summary(out, v);
	html_environment(out, v);
	html_timeline(out, v);
	html_kernels(out, v);
	html_files(out, v);
	fprintf(out, "<p class=\"sub\">Written by kptprof %s. Every name above comes from the recording, shown as recorded "
		     "(demangled).</p>\n</body></html>\n",
		v->o->tool_version ? v->o->tool_version : "?");
	bad = ferror(out);
	if (fclose(out) != 0 || bad)
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s/index.html': %s", v->tmp, strerror(errno));
	return 0;
}

static int write_marker(struct view *v, struct kpt_diag *d)
{
	FILE *out = open_out(v, VIEW_MARKER, d);

	if (!out)
		return d ? d->code : KPT_E_IO;
	fprintf(out, "kptprof view %s\nsource ", v->o->tool_version ? v->o->tool_version : "?");
	for (const char *c = v->path; *c; c++)
		fputc((unsigned char)*c < 0x20 ? '?' : *c, out);
	fputc('\n', out);
	/* the manifest: the files of this view, the only ones a later view
	 * replacing this folder removes */
	{
		DIR *dp = opendir(v->tmp);
		struct dirent *e;

		while (dp && (e = readdir(dp)))
			if (e->d_name[0] != '.' && !strchr(e->d_name, '\n'))
				fprintf(out, "file %s\n", e->d_name);
		if (dp)
			closedir(dp);
	}
	if (ferror(out) | (fclose(out) != 0))
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s/%s'", v->tmp, VIEW_MARKER);
	return 0;
}

/* Moves the finished tmp folder to dir, replacing a previous view there:
 * the old one is renamed onto a fresh empty DIR.old-XXXXXX first (rename
 * replaces an empty folder), then removed. */
static int publish(struct view *v, const char *dir, int exists, struct kpt_diag *d)
{
	char *old = NULL;
	int rc = 0;

	if (exists) {
		if (asprintf(&old, "%s.old-XXXXXX", dir) < 0)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		if (!mkdtemp(old) || rename(dir, old) != 0) {
			rc = kpt_diag_set(d, KPT_E_IO, "cannot move '%s' aside: %s", dir, strerror(errno));
			rmdir(old);
			free(old);
			return rc;
		}
	}
	if (chmod(v->tmp, 0777 & ~v->umask) != 0 || rename(v->tmp, dir) != 0) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot publish '%s' as '%s': %s", v->tmp, dir, strerror(errno));
		if (old)
			rename(old, dir);
	} else if (old) {
		rm_view(old);
	}
	free(old);
	return rc;
}

static void view_release(struct view *v)
{
	for (size_t i = 0; i < v->nhist; i++) {
		kpt_history_set_destroy(v->hist[i].set);
		free(v->hist[i].ns);
		free(v->hist[i].at);
		free(v->hist[i].cp);
	}
	free(v->hist);
	kpt_summary_destroy(v->by_kernel);
	kpt_summary_destroy(v->by_range);
	free(v->env);
	kpt_diff_destroy(v->df);
	kpt_file_close(v->f);
	for (size_t i = 0; i < v->nfams; i++)
		free(v->fam_names[i]);
	for (size_t i = 0; i < v->nroof; i++)
		free((char *)v->roof[i].name);
	free(v->roof);
	free(v->ftot);
	free(v->dir);
	free(v->tmp);
}

int kpt_view_write(const char *path, const struct kpt_view_opts *o, const char *dir,
		   struct kpt_view_result *res, struct kpt_diag *d)
{
	static const struct kpt_view_opts defaults = { 0 };
	struct view *v = calloc(1, sizeof *v);
	char stranger[64] = "";
	int exists, rc;

	if (res)
		memset(res, 0, sizeof *res);
	if (!v)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	v->o = o ? o : &defaults;
	v->path = path;
	/* "out/" names the folder "out": the siblings go beside it */
	dir = v->dir = strdup(dir);
	if (!v->dir) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t n = strlen(v->dir); n > 1 && v->dir[n - 1] == '/'; n--)
		v->dir[n - 1] = '\0';
	if ((exists = rc = check_target(dir, stranger, d)) < 0)
		goto out;
	if (exists) {
		const char *inputs[] = { path, v->o->baseline };

		if ((rc = check_inputs_outside(dir, inputs, 2, d)) < 0)
			goto out;
	}
	if (stranger[0]) {
		rc = kpt_diag_set(d, KPT_E_INVAL, "'%s' holds '%s', which kptprof view did not write: "
				  "not replacing the folder", dir, stranger);
		kpt_diag_hint(d, "choose another -o folder, or move that file out of it");
		goto out;
	}
	if (asprintf(&v->tmp, "%s.tmp-XXXXXX", dir) < 0) {
		v->tmp = NULL;
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	/* mkdtemp makes the folder 0700; publish() gives it the mode mkdir
	 * would have. umask can only be read by setting it (process-wide, a
	 * moment here). */
	v->umask = umask(077);
	umask(v->umask);
	if (!mkdtemp(v->tmp)) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot create '%s': %s", v->tmp, strerror(errno));
		free(v->tmp);
		v->tmp = NULL;
		goto out;
	}
	if ((rc = gather(v, d)) < 0 || (rc = make_timeline(v, d)) < 0 || (rc = make_iter_timeline(v, d)) < 0 ||
	    (rc = make_plots(v, d)) < 0 || (rc = make_trace(v, d)) < 0 || (rc = write_html(v, d)) < 0 ||
	    (rc = write_marker(v, d)) < 0)
		goto out;
	rc = publish(v, dir, exists, d);
	if (rc == 0 && res) {
		for (size_t i = 0; i < v->nplots; i++) {
			res->plots += v->plots[i].written;
			res->rendered += v->plots[i].rendered;
		}
		res->gnuplot_missing = v->gnuplot_missing;
		res->has_timeline = v->has_timeline;
		res->has_trace = v->has_trace;
		res->notes = v->nnotes;
		if (v->df) {
			res->diffed = 1;
			res->diff_result = v->df->result;
			memcpy(res->counts, v->df->counts, sizeof res->counts);
		}
	}
out:
	if (rc < 0 && v->tmp)
		rm_flat(v->tmp);
	view_release(v);
	free(v);
	return rc < 0 ? rc : 0;
}

int kpt_view_diff_plots(const struct kpt_diff *df, const char *dir, int no_render,
			struct kpt_view_result *res, struct kpt_diag *d)
{
	static const struct {
		const char *stem;
		int (*fn)(const struct kpt_diff *, const char *, const char *, struct kpt_diag *);
	} plots[] = {
		{ "diff-change", kpt_plot_diff_change },
		{ "diff-runs", kpt_plot_diff_runs },
	};
	struct kpt_view_result local;
	struct kpt_diag why;
	int missing = no_render;

	if (!res)
		res = &local;
	memset(res, 0, sizeof *res);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return kpt_diag_set(d, KPT_E_IO, "cannot create '%s': %s", dir, strerror(errno));
	for (size_t i = 0; i < sizeof plots / sizeof plots[0]; i++) {
		int rc = plots[i].fn(df, dir, plots[i].stem, &why);

		if (rc == KPT_E_NOTFOUND)
			continue;
		if (rc < 0) {
			if (d)
				*d = why;
			return rc;
		}
		res->plots++;
		if (missing)
			continue;
		rc = kpt_gnuplot_render(dir, plots[i].stem, 0, &why);
		if (rc == KPT_E_UNSUPPORTED) {
			missing = res->gnuplot_missing = 1;
		} else if (rc < 0) {
			if (d)
				*d = why;
			return rc;
		} else {
			res->rendered++;
		}
	}
	return 0;
}
