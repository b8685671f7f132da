/* kpt_diff_load.c - diffs from paths: both files loaded (the base on a
 * second thread), a folder of sessions combined into one side, the
 * counters of each file attached to SLOW rows (kpt_diff.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_counters.h"
#include "kpt_diff_private.h"
#include "kpt_folder.h"
#include "kpt_grow.h"

struct load_job {
	const char *path;
	const struct kpt_diff_opts *opts;
	struct kpt_diff_side *side;
	struct kpt_counter_table *counters; /* NULL when unreadable */
	struct kpt_diag d;
	int rc;
};

static void *load_job_run(void *arg)
{
	struct load_job *j = arg;
	struct kpt_file *f = NULL;

	j->rc = kpt_file_open(j->path, &f, &j->d);
	if (j->rc == 0)
		j->rc = kpt_diff_side_load(f, j->opts, &j->side, &j->d);
	/* Counters only explain SLOW keys: a file without them is no error. */
	if (j->rc == 0 && kpt_counter_table_load(f, &j->counters, NULL) < 0)
		j->counters = NULL;
	kpt_file_close(f);
	return NULL;
}

/* Loads both files, the base on a second thread (two files of 10 million
 * kernels each take about half the time on two cores). */
int kpt_diff_paths(const char *base_path, const char *new_path,
		   const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct load_job jb = { .path = base_path, .opts = opts }, jn = { .path = new_path, .opts = opts };
	pthread_t t;
	int threaded, rc;

	*out = NULL;
	threaded = pthread_create(&t, NULL, load_job_run, &jb) == 0;
	if (!threaded)
		load_job_run(&jb);
	load_job_run(&jn);
	if (threaded)
		pthread_join(t, NULL);
	if (jb.rc < 0 || jn.rc < 0) {
		if (d)
			*d = jb.rc < 0 ? jb.d : jn.d;
		rc = jb.rc < 0 ? jb.rc : jn.rc;
	} else {
		rc = kpt_diff_compare(jb.side, jn.side, opts, out, d);
	}
	if (rc >= 0 && kpt_diff_attach_counters(*out, jb.counters, jn.counters) < 0) {
		kpt_diff_destroy(*out);
		*out = NULL;
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory explaining SLOW keys with counters");
	}
	kpt_counter_table_destroy(jb.counters);
	kpt_counter_table_destroy(jn.counters);
	kpt_diff_side_destroy(jb.side);
	kpt_diff_side_destroy(jn.side);
	return rc;
}

/* Appends path, or the recordings of folder path (kpt_folder_recordings:
 * sorted by name) as path/name, to *v. */
static int expand_path(const char *path, char ***v, size_t *n, size_t *cap, struct kpt_diag *d)
{
	struct stat st;
	char **names = NULL;
	size_t nn = 0;
	int fd, rc;

	if (stat(path, &st) != 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (kpt_grow(v, cap, *n + 1, sizeof **v) < 0 || !((*v)[*n] = strdup(path)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory listing '%s'", path);
		(*n)++;
		return 0;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	rc = kpt_folder_recordings(fd, path, &names, &nn, d);
	close(fd);
	if (rc < 0)
		return rc;
	if (!nn) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' holds no .kpt sessions", path);
		return kpt_diag_hint(d, "'kptprof baseline update FILE' adds a session");
	}
	for (size_t i = 0; i < nn && rc == 0; i++) {
		size_t len = strlen(path) + strlen(names[i]) + 2;

		if (kpt_grow(v, cap, *n + 1, sizeof **v) < 0 || !((*v)[*n] = malloc(len)))
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory listing '%s'", path);
		else
			snprintf((*v)[(*n)++], len, "%s/%s", path, names[i]);
	}
	kpt_names_free(names, nn);
	return rc;
}

int kpt_diff_sessions_load(const char *const *base_paths, size_t nbase, const struct kpt_diff_opts *opts,
			   struct kpt_diff_side **out, struct kpt_diag *d)
{
	char **files = NULL;
	size_t n = 0, cap = 0;
	struct kpt_diff_side **sides = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < nbase && rc == 0; i++)
		rc = expand_path(base_paths[i], &files, &n, &cap, d);
	if (rc == 0 && !n)
		rc = kpt_diag_set(d, KPT_E_INVAL, "no baseline given");
	if (rc == 0 && !(sides = calloc(n, sizeof *sides)))
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading sessions");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct kpt_file *f = NULL;

		rc = kpt_file_open(files[i], &f, d);
		if (rc == 0)
			rc = kpt_diff_side_load(f, opts, &sides[i], d);
		kpt_file_close(f);
	}
	if (rc == 0 && n == 1) {
		*out = sides[0];
		sides[0] = NULL;
	} else if (rc == 0) {
		char label[64];
		const char *lab = label;

		if (nbase == 1)
			lab = base_paths[0];
		else
			snprintf(label, sizeof label, "%zu sessions", n);
		rc = kpt_diff_side_combine((const struct kpt_diff_side *const *)sides, n, 0, lab, out, d);
	}
	for (size_t i = 0; i < n; i++) {
		if (sides)
			kpt_diff_side_destroy(sides[i]);
		free(files[i]);
	}
	free(sides);
	free(files);
	return rc;
}

int kpt_diff_paths_multi(const char *const *base_paths, size_t nbase, const char *new_path,
			 const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct kpt_diff_side *b = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (nbase == 1 && stat(base_paths[0], &st) == 0 && !S_ISDIR(st.st_mode))
		return kpt_diff_paths(base_paths[0], new_path, opts, out, d);
	rc = kpt_diff_sessions_load(base_paths, nbase, opts, &b, d);
	if (rc == 0)
		rc = kpt_diff_side_vs_path(b, new_path, opts, out, d);
	kpt_diff_side_destroy(b);
	return rc;
}

int kpt_diff_side_vs_path(const struct kpt_diff_side *base, const char *new_path,
			  const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct load_job jn = { .path = new_path, .opts = opts };
	int rc;

	*out = NULL;
	load_job_run(&jn);
	rc = jn.rc;
	if (rc < 0 && d)
		*d = jn.d;
	if (rc == 0)
		rc = kpt_diff_compare(base, jn.side, opts, out, d);
	if (rc >= 0 && *out && kpt_diff_attach_counters(*out, NULL, jn.counters) < 0) {
		kpt_diff_destroy(*out);
		*out = NULL;
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory explaining SLOW keys with counters");
	}
	kpt_counter_table_destroy(jn.counters);
	kpt_diff_side_destroy(jn.side);
	return rc;
}
