/* cmd_baseline.c - kptprof baseline list|show|update|path: baselines are
 * recordings kept as DIR/<gpu-slug>/<suite>.kpt (DIR: --baselines, else
 * $KPT_BASELINES, else ./baselines). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_format.h"

struct bl_args {
	const char *dir, *suite, *gpu, *from;
	const char *pos[2];
	int npos;
};

static int bl_parse(int argc, char **argv, struct bl_args *a)
{
	static const char *const names[] = { "--baselines", "--suite", "--gpu", "--from" };
	const char *e = getenv("KPT_BASELINES");

	memset(a, 0, sizeof *a);
	a->dir = e && e[0] ? e : "baselines";
	for (int i = 2; i < argc; i++) {
		const char **dst[] = { &a->dir, &a->suite, &a->gpu, &a->from };
		int hit = 0, rc;
		const char *v;

		for (size_t j = 0; j < sizeof names / sizeof names[0] && !hit; j++) {
			rc = kpt_cli_opt(argc, argv, &i, names[j], &v);
			if (rc < 0)
				return KPT_EXIT_ERROR;
			if (rc == 1) {
				*dst[j] = v;
				hit = 1;
			}
		}
		if (hit)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return kpt_cli_usage_error("baseline", "unknown option '%s'", argv[i]);
		if (a->npos == 2)
			return kpt_cli_usage_error("baseline", "too many arguments: '%s'", argv[i]);
		a->pos[a->npos++] = argv[i];
	}
	return 0;
}

/* One-line summary of a recording: GPU, suite, runs, kernels, time. */
static int bl_describe(const char *path, FILE *out, int full)
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
	if (!full) {
		fprintf(out, "%-28s %-12s %5u %10llu  %-20s %s\n", ndev ? dev[0].slug : "?", s ? s : "-",
			c.runs, (unsigned long long)c.kernels, t ? t : "-", path);
	} else {
		const struct kpt_meta_kv *kv;
		size_t n;

		fprintf(out, "file:     %s\n", path);
		if (ndev)
			fprintf(out, "gpu:      %s (%s), driver %s (CUDA %u.%u)\n", dev[0].name,
				dev[0].slug, dev[0].driver_string[0] ? dev[0].driver_string : "?",
				dev[0].driver_version / 1000, dev[0].driver_version % 1000 / 10);
		fprintf(out, "runs:     %u (processes %u)\nkernels:  %llu\n", c.runs, c.processes,
			(unsigned long long)c.kernels);
		if (kpt_file_meta(f, &kv, &n, &d) == 0)
			for (size_t i = 0; i < n; i++)
				fprintf(out, "%-9s %s\n", kv[i].key, kv[i].value);
	}
	kpt_file_close(f);
	return 0;
}

static int bl_list(const struct bl_args *a)
{
	DIR *top = opendir(a->dir);
	struct dirent *g;
	int n = 0, rc = 0;

	if (!top) {
		fprintf(stderr, "kptprof: cannot read baselines folder '%s': %s\n", a->dir, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	printf("%-28s %-12s %5s %10s  %-20s %s\n", "GPU", "Suite", "Runs", "Kernels", "Recorded", "File");
	while ((g = readdir(top))) {
		char sub[PATH_MAX];
		DIR *dd;
		struct dirent *e;

		if (g->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", a->dir, g->d_name);
		if (!(dd = opendir(sub)))
			continue;
		while ((e = readdir(dd))) {
			size_t len = strlen(e->d_name);
			char path[PATH_MAX + 256];

			if (len < 5 || strcmp(e->d_name + len - 4, ".kpt") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
			if (bl_describe(path, stdout, 0) != 0)
				rc = KPT_EXIT_ERROR;
			n++;
		}
		closedir(dd);
	}
	closedir(top);
	if (!n)
		fprintf(stderr, "kptprof baseline: no baselines under '%s'\nhint: 'kptprof baseline update FILE' adds one\n", a->dir);
	return rc;
}

/* GPU slug for path/show: --gpu (a slug or a device name), or --from FILE. */
static int bl_slug(const struct bl_args *a, char *buf, size_t cap)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	const struct kpt_device *dev;
	size_t n;

	if (a->gpu) {
		kpt_slug(a->gpu, buf, (int)cap);
		return 0;
	}
	if (!a->from)
		return kpt_cli_usage_error("baseline", "say which GPU: --gpu NAME or --from FILE (a recording made on it)");
	if (kpt_file_open(a->from, &f, &d) < 0 || kpt_file_devices(f, &dev, &n, &d) < 0) {
		kpt_file_close(f);
		return kpt_cli_fail(&d);
	}
	if (!n) {
		kpt_file_close(f);
		fprintf(stderr, "kptprof: '%s' names no GPU\n", a->from);
		return KPT_EXIT_ERROR;
	}
	snprintf(buf, cap, "%s", dev[0].slug);
	kpt_file_close(f);
	return 0;
}

static int bl_path(const struct bl_args *a, char *out, size_t cap)
{
	char slug[256];
	int rc = bl_slug(a, slug, sizeof slug);

	if (rc)
		return rc;
	snprintf(out, cap, "%s/%s/%s.kpt", a->dir, slug, a->suite ? a->suite : "default");
	return 0;
}

/* Copies src to dst through a temporary file renamed into place. */
static int copy_file(const char *src, const char *dst)
{
	char tmp[2 * PATH_MAX + 32], buf[1 << 16];
	int in = open(src, O_RDONLY), out, ok = 1;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "kptprof: cannot read '%s': %s\n", src, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", dst, (long)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "kptprof: cannot write '%s': %s\n", dst, strerror(errno));
		close(in);
		return KPT_EXIT_ERROR;
	}
	while (ok && (n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0 && write(out, buf, (size_t)n) == n;
	}
	ok = ok && fsync(out) == 0;
	ok = close(out) == 0 && ok;
	close(in);
	if (!ok || rename(tmp, dst) != 0) {
		fprintf(stderr, "kptprof: cannot write '%s': %s\n", dst, strerror(errno));
		unlink(tmp);
		return KPT_EXIT_ERROR;
	}
	return 0;
}

static int bl_update(struct bl_args *a)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_counts c;
	const struct kpt_device *dev;
	size_t n;
	char slug[256], path[2 * PATH_MAX], sub[PATH_MAX + 256], suite[256];
	const char *meta_suite;

	if (a->npos != 1)
		return kpt_cli_usage_error("baseline", "update needs the recording: kptprof baseline update FILE");
	if (kpt_file_open(a->pos[0], &f, &d) < 0 || kpt_file_counts(f, &c, &d) < 0 ||
	    kpt_file_devices(f, &dev, &n, &d) < 0) {
		kpt_file_close(f);
		return kpt_cli_fail(&d);
	}
	if (!n || !c.kernels) {
		kpt_file_close(f);
		fprintf(stderr, "kptprof: '%s' has no %s: not a usable baseline\n", a->pos[0], n ? "kernels" : "GPU");
		return KPT_EXIT_ERROR;
	}
	if (c.runs < 2) {
		kpt_file_close(f);
		fprintf(stderr, "kptprof: '%s' holds %u run: a baseline needs >= 2 runs to measure noise\n"
				"hint: record it with --runs 5\n", a->pos[0], c.runs);
		return KPT_EXIT_ERROR;
	}
	meta_suite = a->suite ? a->suite : kpt_file_meta_get(f, "suite");
	if (!meta_suite || !meta_suite[0] || strchr(meta_suite, '/') ||
	    strlen(meta_suite) >= sizeof suite) {
		kpt_file_close(f);
		return kpt_cli_usage_error("baseline", "'%s' names no usable suite: pass --suite NAME", a->pos[0]);
	}
	snprintf(suite, sizeof suite, "%s", meta_suite); /* meta dies with f */
	snprintf(slug, sizeof slug, "%s", dev[0].slug);
	kpt_file_close(f);
	if (snprintf(sub, sizeof sub, "%s/%s", a->dir, slug) >= (int)sizeof sub ||
	    snprintf(path, sizeof path, "%s/%s.kpt", sub, suite) >= PATH_MAX)
		return kpt_cli_usage_error("baseline", "baseline path too long under '%s'", a->dir);
	if ((mkdir(a->dir, 0755) != 0 && errno != EEXIST) || (mkdir(sub, 0755) != 0 && errno != EEXIST)) {
		fprintf(stderr, "kptprof: cannot make '%s': %s\n", sub, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	if (copy_file(a->pos[0], path))
		return KPT_EXIT_ERROR;
	if (c.runs < 5)
		fprintf(stderr, "kptprof baseline: warning: %u runs; 5 or more give tighter intervals\n", c.runs);
	printf("%s\n", path);
	return 0;
}

int cmd_baseline(int argc, char **argv)
{
	static const char *const verbs[] = { "list", "show", "update", "path" };
	struct bl_args a;
	char path[PATH_MAX];
	int verb, rc;

	if (argc < 2 || kpt_cli_is_help(argv[1]))
		return argc < 2 ? kpt_cli_usage_error("baseline", "expected list, show, update or path")
				: kpt_cli_help("baseline");
	if (kpt_cli_parse_choice("baseline", "the action", argv[1], verbs, 4, &verb))
		return KPT_EXIT_ERROR;
	for (int i = 2; i < argc; i++)
		if (kpt_cli_is_help(argv[i]))
			return kpt_cli_help("baseline");
	if ((rc = bl_parse(argc, argv, &a)))
		return rc;
	switch (verb) {
	case 0:
		return bl_list(&a);
	case 1:
		if (a.npos == 1)
			return bl_describe(a.pos[0], stdout, 1);
		if ((rc = bl_path(&a, path, sizeof path)))
			return rc;
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "kptprof: no baseline '%s'\nhint: 'kptprof baseline list' shows what there is\n", path);
			return KPT_EXIT_ERROR;
		}
		return bl_describe(path, stdout, 1);
	case 2:
		return bl_update(&a);
	default:
		if ((rc = bl_path(&a, path, sizeof path)))
			return rc;
		printf("%s\n", path);
		return 0;
	}
}
