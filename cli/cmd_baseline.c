/* cmd_baseline.c - kptprof baseline list|show|update|path: a baseline is a
 * folder of sessions, DIR/<gpu-slug>/<suite>/<time>-<gpu>.kpt, one
 * recording per session (machine and boot), the newest --keep kept (DIR:
 * --baselines, else $KPTPROF_BASELINES, else ./baselines). A single recording
 * DIR/<gpu-slug>/<suite>.kpt (the older layout) still works, and update
 * moves it into the folder as one session. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include "kpt_cli.h"
#include "kpt_diff.h"
#include "kpt_format.h"

struct bl_args {
	const char *dir, *suite, *gpu, *from;
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
	KPT_OPT_VERB(V_UPDATE, "update FILE", "add FILE (>= 2 runs) as a session to DIR/<its gpu-slug>/<suite>/ (same GPU "
			"and boot: replaced)"),
	KPT_OPT_VERB(V_PATH, "path", "print the baseline path for --gpu or --from and --suite"),
	KPT_OPT_STRING(0, "baselines", "DIR", BA, dir,
		       "folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed "
		       "share/kptprof/baselines)"),
	KPT_OPT_STRING(0, "suite", "S", BA, suite,
		       "suite (default: default for show and path, FILE's recorded suite for update)",
		       .verbs = V(V_SHOW) | V(V_UPDATE) | V(V_PATH)),
	KPT_OPT_STRING(0, "gpu", "NAME", BA, gpu,
		       "GPU of show and path: a slug or a device name (required: this or --from, but for show FILE)",
		       .verbs = V(V_SHOW) | V(V_PATH)),
	KPT_OPT_STRING(0, "from", "FILE", BA, from,
		       "GPU of show and path: the one FILE was recorded on (required: this or --gpu)",
		       .verbs = V(V_SHOW) | V(V_PATH)),
	KPT_OPT_U64(0, "keep", "N", BA, keep, 1, 1000, "update: sessions a baseline keeps, 1 to 1000 (default 16)",
		    .verbs = V(V_UPDATE)),
	KPT_OPT_END,
};
#undef V
#undef BA

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
		fprintf(out, "%-28s %-12s %5u %10llu  %-20s %s\n", ndev ? kpt_cli_term(dev[0].slug) : "?",
			s ? kpt_cli_term(s) : "-", c.runs, (unsigned long long)c.kernels, t ? kpt_cli_term(t) : "-",
			kpt_cli_term(path));
	} else {
		const struct kpt_meta_kv *kv;
		size_t n;

		fprintf(out, "file:     %s\n", kpt_cli_term(path));
		if (ndev)
			fprintf(out, "gpu:      %s (%s), driver %s (CUDA %u.%u)\n", kpt_cli_term(dev[0].name),
				kpt_cli_term(dev[0].slug), dev[0].driver_string[0] ? kpt_cli_term(dev[0].driver_string) : "?",
				dev[0].driver_version / 1000, dev[0].driver_version % 1000 / 10);
		fprintf(out, "runs:     %u (processes %u)\nkernels:  %llu\n", c.runs, c.processes,
			(unsigned long long)c.kernels);
		if (kpt_file_meta(f, &kv, &n, &d) == 0)
			for (size_t i = 0; i < n; i++)
				fprintf(out, "%-9s %s\n", kpt_cli_term(kv[i].key), kpt_cli_term(kv[i].value));
	}
	kpt_file_close(f);
	return 0;
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The session files of a baseline folder, sorted by name (oldest first:
 * names start with the recording's time). */
static int bl_sessions(const char *dir, char ***out, size_t *n)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cnt = 0;

	*out = NULL;
	*n = 0;
	if (!dd) {
		fprintf(stderr, "kptprof: cannot read '%s': %s\n", dir, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	while ((e = readdir(dd))) {
		size_t len = strlen(e->d_name);
		char **t;

		if (len < 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".kpt") != 0)
			continue;
		t = realloc(v, (cnt + 1) * sizeof *t);
		if (!t || !(t[cnt] = malloc(strlen(dir) + len + 2))) {
			free(t ? t : v);
			closedir(dd);
			fprintf(stderr, "kptprof: out of memory\n");
			return KPT_EXIT_ERROR;
		}
		sprintf(t[cnt++], "%s/%s", dir, e->d_name);
		v = t;
	}
	closedir(dd);
	if (cnt)
		qsort(v, cnt, sizeof *v, cmp_name);
	*out = v;
	*n = cnt;
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
			struct stat st;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
				char **v = NULL;
				size_t nv = 0;

				if (bl_sessions(path, &v, &nv) != 0) {
					rc = KPT_EXIT_ERROR;
					continue;
				}
				for (size_t k = 0; k < nv; k++) {
					if (bl_describe(v[k], stdout, 0) != 0)
						rc = KPT_EXIT_ERROR;
					free(v[k]);
					n++;
				}
				free(v);
				continue;
			}
			if (len < 5 || strcmp(e->d_name + len - 4, ".kpt") != 0)
				continue;
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
		return kpt_cli_check_component("GPU slug", buf, "--gpu", &d) < 0 ? kpt_cli_fail(&d) : 0;
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
	return kpt_cli_check_component("GPU slug", buf, a->from, &d) < 0 ? kpt_cli_fail(&d) : 0;
}

static int bl_path(const struct bl_args *a, char *out, size_t cap)
{
	char slug[256];
	int rc = bl_slug(a, slug, sizeof slug);
	struct kpt_diag d = { 0 };

	if (rc)
		return rc;
	if (a->suite && kpt_cli_check_component("suite", a->suite, "--suite", &d) < 0)
		return kpt_cli_fail(&d);
	{
		struct stat st;

		/* the folder of sessions, else the older single file */
		snprintf(out, cap, "%s/%s/%s", a->dir, slug, a->suite ? a->suite : "default");
		if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
			snprintf(out, cap, "%s/%s/%s.kpt", a->dir, slug, a->suite ? a->suite : "default");
	}
	return 0;
}

/* fsync of the folder holding path, so a rename in it survives a crash. */
static void sync_parent(const char *path)
{
	char dir[2 * PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if ((fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Temporary files of an update: DST.tmp<PID>. One that a killed update
 * left behind (its process is gone) is removed by the next update. */
#define BL_TMP ".tmp"

/* Copies src to dst through a temporary file in the same folder, created
 * new (O_EXCL: never a planted file or link), synced, renamed into place,
 * and the folder synced: dst is the old file or the whole new one. */
static int copy_file(const char *src, const char *dst)
{
	char tmp[2 * PATH_MAX + 32], buf[1 << 16];
	int in = open(src, O_RDONLY | O_CLOEXEC), out, ok = 1;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "kptprof: cannot read '%s': %s\n", src, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	snprintf(tmp, sizeof tmp, "%s" BL_TMP "%ld", dst, (long)getpid());
	unlink(tmp);  /* ours: a stale one of an earlier process with our pid */
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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
	sync_parent(dst);
	return 0;
}

/* Session identity of a recording: GPU UUID and boot id (meta "boot_id",
 * written by record), and the file name it gets in the folder:
 * <time>-<first 8 hex digits of the UUID>.kpt. */
struct bl_session {
	char uuid[128], boot[64], name[256];
	int has_suite;              /* the recording names its suite (meta "suite") */
	long settle_us;             /* meta "settle_us": the idle gap of its suite runs, 0 none */
};

/* Copies src to dst as a new recording whose meta names the suite (for a
 * recording made with `record -- CMD` or `ab`, which cannot know it); the
 * file appears only complete. */
static int copy_with_suite(const char *src, const char *dst, const char *suite)
{
	struct kpt_file *f = NULL;
	struct kpt_writer *w = NULL;
	struct kpt_diag d = { 0 };
	int rc;

	if ((rc = kpt_file_open(src, &f, &d)) == 0 && (rc = kpt_writer_create(dst, NULL, &w, &d)) == 0 &&
	    (rc = kpt_file_copy_into(f, w, KPT_NONE, 1, &d)) == 0 &&
	    (rc = kpt_writer_meta(w, "suite", suite, &d)) == 0)
		rc = kpt_writer_commit(w, &d);
	kpt_writer_destroy(w);
	kpt_file_close(f);
	return rc < 0 ? kpt_cli_fail(&d) : 0;
}

/* gone_ok: path is a session of the folder, and one that vanished before
 * it could be read (a concurrent update pruned it) returns 1, silently. */
static int bl_identify(const char *path, int gone_ok, struct bl_session *id, struct kpt_counts *c, char *slug,
		       size_t slugcap, const char *want_suite, char *suite, size_t suitecap)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	const struct kpt_device *dev;
	size_t n, k = 0;
	const char *t, *b, *u, *ms;
	char tm[32];

	if (kpt_file_open(path, &f, &d) < 0 || kpt_file_counts(f, c, &d) < 0 ||
	    kpt_file_devices(f, &dev, &n, &d) < 0) {
		kpt_file_close(f);
		if (gone_ok && access(path, F_OK) != 0)
			return 1;
		return kpt_cli_fail(&d);
	}
	if (!n || !c->kernels) {
		kpt_file_close(f);
		fprintf(stderr, "kptprof: '%s' has no %s: not a usable baseline\n", path, n ? "kernels" : "GPU");
		return KPT_EXIT_ERROR;
	}
	t = kpt_file_meta_get(f, "time");
	b = kpt_file_meta_get(f, "boot_id");
	u = dev[0].uuid && dev[0].uuid[0] ? dev[0].uuid : "GPU-unknown";
	snprintf(id->uuid, sizeof id->uuid, "%s", u);
	snprintf(id->boot, sizeof id->boot, "%s", b ? b : "");
	for (const char *p = t ? t : ""; *p && k + 1 < sizeof tm; p++)
		if ((*p >= '0' && *p <= '9') || *p == 'T' || *p == 'Z')
			tm[k++] = *p;
	tm[k] = '\0';
	{
		/* the UUID part is made of [0-9a-z] only: it is a file name */
		char uu[9];
		size_t j = 0;

		for (const char *p = strncmp(u, "GPU-", 4) == 0 ? u + 4 : u; *p && j < 8; p++)
			if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'))
				uu[j++] = *p;
			else if (*p >= 'A' && *p <= 'Z')
				uu[j++] = (char)(*p - 'A' + 'a');
		uu[j] = '\0';
		snprintf(id->name, sizeof id->name, "%s-%s.kpt", k ? tm : "undated", j ? uu : "unknown");
	}
	if (slug) {
		snprintf(slug, slugcap, "%s", dev[0].slug);
		if (kpt_cli_check_component("GPU slug", slug, path, &d) < 0) {
			kpt_file_close(f);
			return kpt_cli_fail(&d);
		}
	}
	id->has_suite = kpt_file_meta_get(f, "suite") != NULL;
	id->settle_us = kpt_file_settle_us(f);
	ms = want_suite ? want_suite : kpt_file_meta_get(f, "suite");
	if (suite) {
		if (!ms || !ms[0]) {
			kpt_file_close(f);
			return kpt_cli_usage_error("baseline", "'%s' names no usable suite: pass --suite NAME", path);
		}
		if (kpt_cli_check_component("suite", ms, want_suite ? "--suite" : path, &d) < 0 ||
		    strlen(ms) >= suitecap) {
			kpt_file_close(f);
			return kpt_cli_fail(&d);
		}
		snprintf(suite, suitecap, "%s", ms);
	}
	kpt_file_close(f);
	return 0;
}

/* True when name (no folder) is a session file as update names them:
 * <time>-<uuid part>.kpt, time of [0-9TZ] or "undated", the UUID part 1
 * to 8 of [0-9a-z]. Only such files are replaced or pruned: whatever else
 * a user keeps in the folder stays. */
static int session_name(const char *name)
{
	const char *p = name, *dash;
	size_t n;

	if (strncmp(p, "undated-", 8) == 0) {
		dash = p + 7;
	} else {
		for (; *p && (*p == 'T' || *p == 'Z' || (*p >= '0' && *p <= '9')); p++)
			;
		if (p == name || *p != '-')
			return 0;
		dash = p;
	}
	for (p = dash + 1, n = 0; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'); p++)
		n++;
	return n >= 1 && n <= 8 && strcmp(p, ".kpt") == 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Reads the whole recording as diff would (every section decodes, the
 * kernels stream, the ranges resolve without a cycle) before it may
 * replace anything. 0, or KPT_EXIT_ERROR after the message. */
static int bl_verify(const char *path)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_diff_side *side = NULL;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	const void *tab;
	size_t n;
	int rc, empty = 0;

	if ((rc = kpt_file_open(path, &f, &d)) == 0 && (rc = kpt_file_load_strings(f, &d)) == 0 &&
	    (rc = kpt_file_meta(f, (const struct kpt_meta_kv **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_devices(f, (const struct kpt_device **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_processes(f, (const struct kpt_process **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_drops(f, (const struct kpt_drop **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_memops(f, (const struct kpt_memop **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_ranges(f, (const struct kpt_range **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_events(f, (const struct kpt_event **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_env(f, (const struct kpt_env_sample **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_file_counters(f, (const struct kpt_counter **)&tab, &n, &d)) == 0 &&
	    (rc = kpt_kernel_cursor_create(f, &cur, &d)) == 0) {
		while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, &d)) > 0)
			;
		if (rc == 0)
			rc = kpt_diff_side_load(f, NULL, &side, &d);
		/* a session with no key would make every later gate compare nothing */
		if (rc == 0 && kpt_diff_side_keys(side) == 0) {
			kpt_diag_set(&d, KPT_E_INVAL, "'%s' holds no kernel key to compare (0 keys): the baseline is unchanged", path);
			rc = kpt_diag_hint(&d, "a recording with steps (kpt:iter) keys only the kernels inside them");
			empty = 1;
		}
	}
	kpt_diff_side_destroy(side);
	kpt_kernel_cursor_destroy(cur);
	kpt_file_close(f);
	if (rc < 0) {
		kpt_cli_fail(&d);
		if (!empty)
			fprintf(stderr, "kptprof baseline: '%s' is not a usable recording: the baseline is unchanged\n", path);
		return KPT_EXIT_ERROR;
	}
	return 0;
}

/* Removes DIR/<session>.kpt.tmp<PID> files whose process is gone (a killed
 * update); those of live processes are theirs. */
static void bl_clean_stale(const char *dir)
{
	DIR *dd = opendir(dir);
	struct dirent *e;

	if (!dd)
		return;
	while ((e = readdir(dd))) {
		const char *t = strstr(e->d_name, ".kpt" BL_TMP);
		char *end, path[2 * PATH_MAX];
		long pid;

		if (!t || t == e->d_name)
			continue;
		errno = 0;
		pid = strtol(t + 4 + strlen(BL_TMP), &end, 10);
		if (errno || *end || pid <= 0 || end == t + 4 + strlen(BL_TMP))
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		if (unlink(path) == 0)
			fprintf(stderr, "kptprof baseline: removed '%s', left by an update that did not finish\n", path);
	}
	closedir(dd);
}

/* Adds the session the recording holds to the suite's folder (replacing a
 * recording of the same session: same GPU UUID and boot), moves an older
 * single-file baseline into the folder, and keeps the newest --keep
 * sessions (default 16). */
static int bl_update(struct bl_args *a)
{
	struct bl_session id, old;
	struct kpt_counts c;
	char slug[256], path[2 * PATH_MAX], sub[PATH_MAX + 256], folder[PATH_MAX + 512], single[PATH_MAX + 512];
	char suite[256], **v = NULL;
	size_t nv = 0;
	unsigned long keep = a->keep ? (unsigned long)a->keep : 16;
	int rc;
	struct stat st;

	if (a->npos != 1)
		return kpt_cli_usage_error("baseline", "update needs the recording: kptprof baseline update FILE");
	if ((rc = bl_identify(a->pos[0], 0, &id, &c, slug, sizeof slug, a->suite, suite, sizeof suite)))
		return rc;
	if ((rc = bl_verify(a->pos[0])))
		return rc;
	if (c.runs < 2) {
		fprintf(stderr, "kptprof: '%s' holds %u run: a baseline needs >= 2 runs to measure noise\n"
				"hint: record it with --runs 5\n", a->pos[0], c.runs);
		return KPT_EXIT_ERROR;
	}
	if (snprintf(sub, sizeof sub, "%s/%s", a->dir, slug) >= (int)sizeof sub ||
	    snprintf(folder, sizeof folder, "%s/%s", sub, suite) >= PATH_MAX ||
	    snprintf(single, sizeof single, "%s/%s.kpt", sub, suite) >= PATH_MAX ||
	    snprintf(path, sizeof path, "%s/%s", folder, id.name) >= PATH_MAX)
		return kpt_cli_usage_error("baseline", "baseline path too long under '%s'", a->dir);
	/* Each level made or found as a plain folder, never through a link
	 * (one committed into the baselines folder by anyone would lead the
	 * writes and deletes out of it). */
	{
		const char *const lv[] = { sub, folder };

		if (mkdir(a->dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "kptprof: cannot make '%s': %s\n", a->dir, strerror(errno));
			return KPT_EXIT_ERROR;
		}
		for (int i = 0; i < 2; i++) {
			if (mkdir(lv[i], 0755) != 0 && errno != EEXIST) {
				fprintf(stderr, "kptprof: cannot make '%s': %s\n", lv[i], strerror(errno));
				return KPT_EXIT_ERROR;
			}
			if (lstat(lv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "kptprof: '%s' is not a plain folder (a symbolic link?): not writing there\n",
					lv[i]);
				return KPT_EXIT_ERROR;
			}
		}
	}
	if (stat(single, &st) == 0 && S_ISREG(st.st_mode)) {
		struct kpt_counts oc;
		char moved[2 * PATH_MAX];

		if ((rc = bl_identify(single, 0, &old, &oc, NULL, 0, NULL, NULL, 0)))
			return rc;
		snprintf(moved, sizeof moved, "%s/%s", folder, old.name);
		if (rename(single, moved) != 0) {
			fprintf(stderr, "kptprof: cannot move '%s' to '%s': %s\n", single, moved, strerror(errno));
			return KPT_EXIT_ERROR;
		}
		fprintf(stderr, "kptprof baseline: moved the single-file baseline '%s' into '%s' as one session\n",
			single, folder);
	}
	bl_clean_stale(folder);
	if ((rc = bl_sessions(folder, &v, &nv)))
		return rc;
	/* The new file first (an update that fails changes nothing), then the
	 * older file of the same session (GPU and boot) goes. Another update
	 * may remove files meanwhile: one that vanished is no error. */
	rc = a->suite && !id.has_suite ? copy_with_suite(a->pos[0], path, suite) : copy_file(a->pos[0], path);
	for (size_t i = 0; i < nv && rc == 0 && id.boot[0]; i++) {
		struct kpt_counts oc;

		if (strcmp(v[i], path) == 0 || !session_name(base_name(v[i])) ||
		    bl_identify(v[i], 1, &old, &oc, NULL, 0, NULL, NULL, 0) != 0)
			continue;
		if (strcmp(old.uuid, id.uuid) == 0 && strcmp(old.boot, id.boot) == 0 &&
		    (unlink(v[i]) == 0 || errno == ENOENT))
			fprintf(stderr, "kptprof baseline: '%s' is the same session (GPU %s, boot %s): replaced\n",
				v[i], id.uuid, id.boot);
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i]);
	free(v);
	if (rc)
		return KPT_EXIT_ERROR;
	if ((rc = bl_sessions(folder, &v, &nv)))
		return rc;
	{
		size_t ns = 0, left;

		size_t other_gap = 0;

		for (size_t i = 0; i < nv; i++) {
			long g;

			ns += session_name(base_name(v[i]));
			/* one gone meanwhile (a concurrent update pruned it) is skipped */
			if (session_name(base_name(v[i])) && strcmp(v[i], path) != 0 &&
			    (g = kpt_cli_file_settle(v[i])) != -2 && g != id.settle_us)
				other_gap++;
		}
		if (other_gap)
			/* gate records as the newest session was recorded and refuses
			 * a baseline whose sessions differ (docs/decision-rule.md) */
			fprintf(stderr, "kptprof baseline: warning: %zu other session%s of '%s' %s recorded with another idle gap "
					"before each timed iteration than this one (%ld us): gate refuses the mix; remove %s or "
					"record %s again\n", other_gap, other_gap == 1 ? "" : "s", folder,
				other_gap == 1 ? "was" : "were", id.settle_us, other_gap == 1 ? "it" : "them",
				other_gap == 1 ? "it" : "them");
		left = ns;
		for (size_t i = 0; i < nv; i++) {
			if (session_name(base_name(v[i])) && left > keep) {
				left--;
				if (unlink(v[i]) == 0) {
					fprintf(stderr, "kptprof baseline: keeping the newest %lu sessions: removed '%s'\n",
						keep, v[i]);
				} else if (errno != ENOENT) {
					fprintf(stderr, "kptprof: cannot remove '%s': %s\n", v[i], strerror(errno));
					rc = KPT_EXIT_ERROR;
				}
			}
			free(v[i]);
		}
		free(v);
		nv = ns;
	}
	if (c.runs < 5)
		fprintf(stderr, "kptprof baseline: warning: %u runs; 5 or more give tighter intervals\n", c.runs);
	fprintf(stderr, "kptprof baseline: '%s' holds %zu session%s\n", folder, nv > keep ? (size_t)keep : nv,
		(nv > keep ? keep : nv) == 1 ? "" : "s");
	printf("%s\n", path);
	return kpt_cli_stdout_done(rc);
}

/* The action verb (index into cmd_baseline's verbs) on the parsed args. */
static int bl_run(int verb, struct bl_args *a)
{
	char path[PATH_MAX];
	int rc = 0;

	switch (verb) {
	case V_LIST:
		return bl_list(a);
	case V_SHOW:
		if (a->npos == 1)
			return bl_describe(a->pos[0], stdout, 1);
		if ((rc = bl_path(a, path, sizeof path)))
			return rc;
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "kptprof: no baseline '%s'\nhint: 'kptprof baseline list' shows what there is\n", path);
			return KPT_EXIT_ERROR;
		}
		{
			struct stat st;
			char **v = NULL;
			size_t nv = 0;

			if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
				return bl_describe(path, stdout, 1);
			if ((rc = bl_sessions(path, &v, &nv)))
				return rc;
			printf("baseline: %s (%zu session%s)\n", path, nv, nv == 1 ? "" : "s");
			for (size_t k = 0; k < nv; k++) {
				if (bl_describe(v[k], stdout, 0) != 0)
					rc = KPT_EXIT_ERROR;
				free(v[k]);
			}
			free(v);
			return rc;
		}
	case V_UPDATE:
		return bl_update(a);
	default:
		if ((rc = bl_path(a, path, sizeof path)))
			return rc;
		printf("%s\n", path);
		return 0;
	}
}

int cmd_baseline(int argc, char **argv)
{
	struct bl_args a = { .dir = kpt_cli_baselines_dir() };
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
	return kpt_cli_stdout_done(bl_run(verb, &a));
}
