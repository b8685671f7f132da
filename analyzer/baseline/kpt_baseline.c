/* kpt_baseline.c - the calls of kpt_baseline.h that do not depend on the
 * kind (they go through the ops table), the name rule, and listing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_baseline_private.h"
#include "kpt_folder.h"
#include "kpt_grow.h"
#include "kpt_project.h"

_Static_assert(KPT_BASELINE_NAME_MAX == KPT_COMPONENT_MAX, "one rule: kpt_project_name_ok");

int kpt_baseline_check_name(const char *what, const char *value, const char *src, struct kpt_diag *d)
{
	size_t k = 0;
	char shown[48];

	if (kpt_project_name_ok(value))
		return 0;
	for (const char *p = value; *p && k + 4 < sizeof shown; p++)
		shown[k++] = *p >= 0x20 && *p < 0x7f ? *p : '?';
	snprintf(shown + k, sizeof shown - k, "%s", value[k] ? "..." : "");
	kpt_diag_set(d, KPT_E_INVAL, "'%s' names %s '%s': not a safe folder name", src, what, shown);
	return kpt_diag_hint(d, "a %s is 1 to %d characters of a-z, 0-9, '.', '_' and '-', not starting with '.' "
			     "and without '..'", what, KPT_BASELINE_NAME_MAX);
}

int kpt_baseline_fd_path(int dirfd, const char *name, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "/proc/self/fd/%d/%s", dirfd, name);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kpt_baseline_paths_free(char **paths, size_t n)
{
	kpt_names_free(paths, n);
}

/* Appends prefix/name (prefix NULL: name) to *v. 0 or -1. */
static int push(char ***v, size_t *n, size_t *cap, const char *prefix, const char *name)
{
	size_t len = (prefix ? strlen(prefix) + 1 : 0) + strlen(name) + 1;
	char *s;

	if (kpt_grow(v, cap, *n + 1, sizeof **v) < 0 || !(s = malloc(len)))
		return -1;
	snprintf(s, len, "%s%s%s", prefix ? prefix : "", prefix ? "/" : "", name);
	(*v)[(*n)++] = s;
	return 0;
}

int kpt_baseline_path(const char *dir, const char *slug, const char *suite, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "%s/%s/%s", dir, slug, suite);

	return len < 0 || (size_t)len >= cap ? KPT_E_INVAL : 0;
}

int kpt_baseline_list_all(const char *dir, char ***paths, size_t *n, struct kpt_diag *d)
{
	DIR *top = opendir(dir);
	struct dirent *g;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	*paths = NULL;
	*n = 0;
	if (!top && errno == ENOENT)
		return 0; /* no folder yet (a new project): no baselines */
	if (!top)
		return kpt_diag_set(d, KPT_E_IO, "cannot read baselines folder '%s': %s", dir, strerror(errno));
	while (rc == 0 && (g = readdir(top))) {
		int gfd;
		DIR *dd;
		struct dirent *e;

		if (g->d_name[0] == '.' || (gfd = openat(dirfd(top), g->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (!(dd = fdopendir(gfd))) {
			close(gfd);
			continue;
		}
		while (rc == 0 && (e = readdir(dd))) {
			struct stat st;
			char sub[8192];
			int sfd;

			if (e->d_name[0] == '.' || fstatat(gfd, e->d_name, &st, 0) != 0 ||
			    (size_t)snprintf(sub, sizeof sub, "%s/%s/%s", dir, g->d_name, e->d_name) >= sizeof sub)
				continue;
			if (S_ISREG(st.st_mode) && kpt_recording_name(e->d_name)) {
				rc = push(&v, &cnt, &cap, NULL, sub);
			} else if (S_ISDIR(st.st_mode) &&
				   (sfd = openat(gfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
				char **names;
				size_t nn;

				if (kpt_folder_recordings(sfd, sub, &names, &nn, d) == 0) {
					for (size_t i = 0; i < nn && rc == 0; i++)
						rc = push(&v, &cnt, &cap, sub, names[i]);
					kpt_baseline_paths_free(names, nn);
				}
				close(sfd);
			}
		}
		closedir(dd);
	}
	closedir(top);
	if (rc < 0) {
		kpt_baseline_paths_free(v, cnt);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory listing '%s'", dir);
	}
	if (cnt)
		qsort(v, cnt, sizeof *v, cmp_str);
	*paths = v;
	*n = cnt;
	return 0;
}

int kpt_baseline_open(const char *slug, const char *suite, const struct kpt_baseline_where *w,
		      struct kpt_baseline **out, struct kpt_diag *d)
{
	struct kpt_baseline *b;
	int rc;

	*out = NULL;
	if (!w->db && !w->dir)
		return kpt_diag_set(d, KPT_E_INVAL, "no baselines folder or history store given");
	/* a folder's names become path components; the store takes any */
	if (!w->db && ((rc = kpt_baseline_check_name("GPU slug", slug, "the recording", d)) < 0 ||
		       (rc = kpt_baseline_check_name("suite", suite, "the suite", d)) < 0))
		return rc;
	if (strlen(slug) > KPT_BASELINE_NAME_MAX || strlen(suite) > KPT_BASELINE_NAME_MAX)
		return kpt_diag_set(d, KPT_E_INVAL, "GPU slug or suite longer than %d bytes", KPT_BASELINE_NAME_MAX);
	if (!(b = calloc(1, sizeof *b)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	b->ops = w->db ? &kpt_baseline_history_ops : &kpt_baseline_folder_ops;
	snprintf(b->slug, sizeof b->slug, "%s", slug);
	snprintf(b->suite, sizeof b->suite, "%s", suite);
	b->where = *w;
	b->desc.kind = b->ops->name;
	b->desc.slug = b->slug;
	b->desc.suite = b->suite;
	if ((rc = b->ops->open(b, d)) < 0) {
		kpt_baseline_close(b);
		return rc;
	}
	*out = b;
	return 0;
}

void kpt_baseline_close(struct kpt_baseline *b)
{
	if (!b)
		return;
	b->ops->close(b);
	free(b);
}

void kpt_baseline_describe(const struct kpt_baseline *b, struct kpt_baseline_desc *out)
{
	*out = b->desc;
}

const char *const *kpt_baseline_files(const struct kpt_baseline *b, size_t *n)
{
	*n = b->nfiles;
	return (const char *const *)b->files;
}

const struct kpt_diff_side *kpt_baseline_side(const struct kpt_baseline *b)
{
	return b->side;
}

struct kpt_history *kpt_baseline_store(const struct kpt_baseline *b)
{
	return b->h;
}

long kpt_baseline_settle_us(struct kpt_baseline *b)
{
	return b->ops->settle_us(b);
}
