/* kpt_baseline_folder.c - the folder kind: the .kpt files of DIR/<slug>/<suite>/, one
 * recording per session, else the older one file DIR/<slug>/<suite>.kpt.
 * Listed once at open (kpt_folder_recordings); reading follows links. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_baseline_private.h"
#include "kpt_folder.h"
#include "kpt_format.h"

static int folder_open(struct kpt_baseline *b, struct kpt_diag *d)
{
	const char *dir = b->where.dir;
	size_t len = strlen(dir) + strlen(b->slug) + strlen(b->suite) + 8;
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	int fd, rc;

	if (!(b->path = malloc(len)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	kpt_baseline_path(dir, b->slug, b->suite, b->path, len);
	b->desc.where = b->path;
	if ((fd = open(b->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		/* the older one-file layout */
		snprintf(b->path, len, "%s/%s/%s.kpt", dir, b->slug, b->suite);
		if (stat(b->path, &st) != 0 || !S_ISREG(st.st_mode))
			return kpt_diag_set(d, KPT_E_NOTFOUND,
					    "no baseline for GPU '%s' and suite '%s' (looked for '%s/%s/%s/' and '%s')",
					    b->slug, b->suite, dir, b->slug, b->suite, b->path);
		if (!(b->files = malloc(sizeof *b->files)) || !(b->files[0] = strdup(b->path)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		b->nfiles = b->desc.sessions = 1;
		b->desc.one_file = 1;
		return 0;
	}
	rc = kpt_folder_recordings(fd, b->path, &names, &n, d);
	close(fd);
	if (rc < 0)
		return rc;
	if (!n) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "no baseline for GPU '%s' and suite '%s': '%s' holds no .kpt sessions",
			     b->slug, b->suite, b->path);
		return rc = KPT_E_NOTFOUND;
	}
	/* the names become paths, in place */
	for (size_t i = 0; i < n; i++) {
		size_t pl = strlen(b->path) + strlen(names[i]) + 2;
		char *p = malloc(pl);

		if (!p) {
			kpt_baseline_paths_free(names, n);
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		}
		snprintf(p, pl, "%s/%s", b->path, names[i]);
		free(names[i]);
		names[i] = p;
	}
	b->files = names;
	b->nfiles = b->desc.sessions = n;
	return 0;
}

/* The newest session's gap: the last file of the listing. */
static long folder_settle_us(struct kpt_baseline *b)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	long v;

	if (!b->nfiles)
		return -1;
	v = kpt_file_open(b->files[b->nfiles - 1], &f, &d) == 0 ? kpt_file_settle_us(f) : -1;
	kpt_file_close(f);
	return v < 0 ? -1 : v;
}

static void folder_close(struct kpt_baseline *b)
{
	kpt_baseline_paths_free(b->files, b->nfiles);
	free(b->path);
}

const struct kpt_baseline_ops kpt_baseline_folder_ops = {
	.name = "folder",
	.open = folder_open,
	.settle_us = folder_settle_us,
	.close = folder_close,
};
