/* kpt_folder.c - the recordings of a folder (kpt_folder.h). */
#include "kpt_folder.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_grow.h"

int kpt_recording_name(const char *name)
{
	size_t len = strlen(name);

	return len >= 5 && name[0] != '.' && strcmp(name + len - 4, ".kpt") == 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kpt_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int kpt_folder_recordings(int fd, const char *shown, char ***names, size_t *n, struct kpt_diag *d)
{
	int dup_fd = dup(fd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	char **v = NULL;
	size_t cnt = 0, cap = 0;

	*names = NULL;
	*n = 0;
	if (!dir) {
		int err = errno;

		if (dup_fd >= 0)
			close(dup_fd);
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", shown, strerror(err));
	}
	rewinddir(dir);
	while ((e = readdir(dir))) {
		if (!kpt_recording_name(e->d_name))
			continue;
		if (kpt_grow(&v, &cap, cnt + 1, sizeof *v) < 0 || !(v[cnt] = strdup(e->d_name))) {
			kpt_names_free(v, cnt);
			closedir(dir);
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory listing '%s'", shown);
		}
		cnt++;
	}
	closedir(dir);
	if (cnt)
		qsort(v, cnt, sizeof *v, cmp_name);
	*names = v;
	*n = cnt;
	return 0;
}
