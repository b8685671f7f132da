/* fuzz_history.c - the history store's fuzzer: a small populated SQLite
 * store, its rows mutated (numbers to extremes, negative, huge; text to odd
 * bytes; NULLs; deleted rows; the schema version), then the commands that
 * read a store run on it: history ls (text and JSON), show, detect, gate
 * --db, view --db, and history add into it.
 *
 *   fuzz_history [--seed S] [--count N] [--seconds T] [-j N] [--gnuplot-every K]
 *                WORKDIR BASE.kpt NEW.kpt
 *
 * The seed store is BASE added three times and NEW once (suite default,
 * commits c1..c4, a label); gate, view and add take NEW. Store i is mutated
 * with seed S + i alone, so `--seed X --count 1` remakes store X exactly
 * (it is also kept as WORKDIR/fail-X.db). Each command runs in a forked
 * child through kptprof's own main (cli/main.c, included below), which is
 * faster than exec: with ASan/UBSan (KPT_SANITIZE=ON) a sanitizer report
 * exits 86. A child that exits other than 0, 1 or 2, dies of a signal or
 * runs over 60 s (a hang) is a failure: its stderr tail and the seed are printed.
 * -j N: N workers, each its own store and folder (WORKDIR/wN), store i on
 * worker i mod N. --gnuplot-every K: view renders its plots with gnuplot on
 * store i when K divides i (default 10; 1: every store), else keeps them as
 * scripts (--no-gnuplot): gnuplot is another program, its start-up was 40%
 * of the time per store, and the scripts are written either way.
 * The summary gives the CPU seconds per store of each command.
 * Exit 0 when none failed, 1 when one did, 2 on bad usage or setup.
 * .ci/run runs it for a bounded time (tests/fuzz/run-history-fuzz.sh);
 * ctest runs 10 stores (fuzz.history_store). */
#define main kptprof_main
#include "../../cli/main.c"
#undef main

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SANITIZER_EXIT 86
#define CHILD_SECONDS 60
#define NCMDS 7
#define MAX_JOBS 64

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
	return "exitcode=86:detect_leaks=0";
}

const char *__ubsan_default_options(void)
{
	return "exitcode=86:halt_on_error=1:print_stacktrace=1";
}

static char work[4096], store[4200], seed_store[4200], errfile[4200], viewdir[4200];

/* What a worker sends its parent at the end. */
struct tally {
	uint64_t stores, fails, last; /* last: the highest store index run, plus 1 */
	double cpu[NCMDS]; /* CPU seconds of each command's children, summed */
};

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t pick(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

/* Runs kptprof argv in a child; returns its wait status, -1 when it
 * could not start. stdout goes to /dev/null, stderr to errfile. */
static int run_child(char **argv)
{
	int argc = 0, st;
	pid_t pid;

	while (argv[argc])
		argc++;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR), err = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (nul < 0 || err < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(err, 2) < 0)
			_exit(99);
		alarm(CHILD_SECONDS);
		/* _exit after the flush: exit()'s handlers (the sanitizers
		 * unregistering every library's globals) cost more than most
		 * commands, and there is no leak check to run (detect_leaks=0) */
		st = kptprof_main(argc, argv);
		fflush(NULL);
		_exit(st);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int rc = 0;

	if (!in || !out) {
		if (in)
			fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (ferror(in))
		rc = -1;
	fclose(in);
	if (fclose(out) != 0)
		rc = -1;
	return rc;
}

/* ---- mutations ---------------------------------------------------------- */

static const char *const tables[] = { "sessions", "points", "kernel_keys", "session_labels", "kpt_schema" };

static const int64_t ints[] = {
	0, -1, 1, 2, 3, 5, 7, 255, 65535, 65536, INT32_MAX, (int64_t)INT32_MAX + 1, UINT32_MAX,
	(int64_t)UINT32_MAX + 1, INT64_MAX, INT64_MIN, INT64_MAX - 1, -2, 100000, 99999, 1000000,
};

static const double reals[] = { 0.0, -0.0, -1.0, 1e-300, 1e308, HUGE_VAL, -HUGE_VAL, 0.5, 1.5, 4e9, -4e9, 1e-9 };

static const char *const texts[] = {
	"", "-1", "0", "4294967295", "9223372036854775807", "18446744073709551616", "nan", "inf", "-inf",
	"1e999", ",", ",,,", ":", "::", "0:0:", "4294967295:1:1", "0:4294967295:1", "1:1:-5,0:1:nan",
	"99999:1:1", "100000:1:1", "-1:-1:-1", "1,2,3,4,5,6,7,8,9,10", "1e-320,1", "0,0,0", "-5,5",
	"4380,4380,4380:", "%", "_", "%_\\", "'", "''", "\"", "\\", "\xff\xfe", "\xc3\x28", "a\xe2\x82",
	"\xed\xa0\x80", "\x1b[31m", "..", "../x", "/", "main", "default", "nvidia-h100-80gb-hbm3",
	"1,1,1", "4294967295,4294967295,4294967295", "0,0,0", "-1,-1,-1",
};

static int exec_bind(sqlite3 *db, const char *sql, int64_t rowid, uint64_t *s)
{
	sqlite3_stmt *st = NULL;
	int kind = (int)pick(s, 10), rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (kind < 3) {
		rc = sqlite3_bind_int64(st, 1, ints[pick(s, sizeof ints / sizeof ints[0])]);
	} else if (kind < 4) {
		rc = sqlite3_bind_int64(st, 1, (int64_t)rng_next(s));
	} else if (kind < 6) {
		rc = sqlite3_bind_double(st, 1, reals[pick(s, sizeof reals / sizeof reals[0])]);
	} else if (kind < 8) {
		rc = sqlite3_bind_text(st, 1, texts[pick(s, sizeof texts / sizeof texts[0])], -1, SQLITE_STATIC);
	} else if (kind < 9) {
		char buf[64];
		size_t n = 1 + pick(s, sizeof buf - 1);

		for (size_t i = 0; i < n; i++)
			buf[i] = (char)(1 + pick(s, 255)); /* any byte but NUL */
		rc = sqlite3_bind_text(st, 1, buf, (int)n, SQLITE_TRANSIENT);
	} else {
		rc = sqlite3_bind_null(st, 1);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, rowid);
	if (rc == SQLITE_OK)
		sqlite3_step(st); /* a constraint may refuse it: the store stays as it was */
	sqlite3_finalize(st);
	return 0;
}

static int64_t count_rows(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int64_t n = 0;

	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int64_t nth_rowid(sqlite3 *db, const char *table, int64_t k)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int64_t id = -1;

	snprintf(sql, sizeof sql, "SELECT rowid FROM %s ORDER BY rowid LIMIT 1 OFFSET %" PRId64, table, k);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* Column c (0-based) of table, into buf; 0 when it has one. */
static int column_name(sqlite3 *db, const char *table, uint64_t c, char *buf, size_t cap)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int64_t n = 0;
	int rc = -1;

	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW)
		n++;
	sqlite3_reset(st);
	for (int64_t i = 0; n && sqlite3_step(st) == SQLITE_ROW; i++)
		if ((uint64_t)i == c % (uint64_t)n) {
			snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 1));
			rc = 0;
			break;
		}
	sqlite3_finalize(st);
	return rc;
}

/* 1 to 4 mutations of the store at path, all decided by seed. */
static int mutate(const char *path, uint64_t seed)
{
	sqlite3 *db = NULL;
	uint64_t s = seed;
	int n = 1 + (int)pick(&s, 4);

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	sqlite3_exec(db, "PRAGMA foreign_keys=OFF", NULL, NULL, NULL);
	for (int m = 0; m < n; m++) {
		const char *t = tables[pick(&s, sizeof tables / sizeof tables[0])];
		int64_t rows = count_rows(db, t), row = nth_rowid(db, t, (int64_t)pick(&s, (uint64_t)(rows ? rows : 1)));
		char col[64], sql[256];
		uint64_t op = pick(&s, 10);

		if (row < 0)
			continue;
		if (op == 0) {
			snprintf(sql, sizeof sql, "DELETE FROM %s WHERE rowid = %" PRId64, t, row);
			sqlite3_exec(db, sql, NULL, NULL, NULL);
			continue;
		}
		if (column_name(db, t, pick(&s, 64), col, sizeof col) < 0)
			continue;
		snprintf(sql, sizeof sql, "UPDATE %s SET \"%s\" = ?1 WHERE rowid = ?2", t, col);
		exec_bind(db, sql, row, &s);
	}
	return sqlite3_close(db) == SQLITE_OK ? 0 : -1;
}

/* ---- driver -------------------------------------------------------------- */

static void show_err(void)
{
	FILE *f = fopen(errfile, "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof line, f) && n++ < 40)
		fprintf(stderr, "    %s", line);
	if (f)
		fclose(f);
}

static int parse_u64(const char *opt, const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v ? v : "", &end, 10);
	if (!v || errno || end == v || *end) {
		fprintf(stderr, "fuzz_history: bad value for %s\n", opt);
		return -1;
	}
	return 0;
}

static uint64_t gnuplot_every = 10;

static double cpu_per(const struct tally *t, int c)
{
	return t->stores ? t->cpu[c] / (double)t->stores : 0.0;
}

/* Stores first, first + step, ... below count, until seconds have passed
 * since start; each one mutated and run through the seven commands. */
static void worker(struct tally *t, uint64_t first, uint64_t step, uint64_t seed, uint64_t count,
		   uint64_t seconds, time_t start, const char *new_)
{
	for (uint64_t k = first; k < count && (!seconds || (uint64_t)(time(NULL) - start) < seconds); k += step) {
		uint64_t s = seed + k;
		char *gp = gnuplot_every && s % gnuplot_every == 0 ? NULL : "--no-gnuplot";
		char *cmds[NCMDS][16] = {
			{ "kptprof", "history", "ls", "--db", store, NULL },
			{ "kptprof", "history", "ls", "--db", store, "--format", "json", NULL },
			{ "kptprof", "history", "show", "1", "--db", store, "--suite", "default", NULL },
			{ "kptprof", "history", "detect", "--db", store, "--format", "json", NULL },
			{ "kptprof", "gate", "--from", (char *)new_, "--db", store, "--suite", "default", NULL },
			{ "kptprof", "view", (char *)new_, "--db", store, "--suite", "default", "-o", viewdir, gp, NULL },
			{ "kptprof", "history", "add", (char *)new_, "--db", store, "--suite", "default", NULL },
		};

		unlink(store);
		if (copy_file(seed_store, store) < 0 || mutate(store, s) < 0) {
			fprintf(stderr, "fuzz_history: cannot copy or mutate the store '%s'\n", store);
			t->fails++;
			return;
		}
		for (size_t c = 0; c < NCMDS; c++) {
			double cpu0 = children_cpu();
			int st = run_child(cmds[c]);
			char keep[4300];

			t->cpu[c] += children_cpu() - cpu0;
			if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) <= 2)
				continue;
			t->fails++;
			snprintf(keep, sizeof keep, "%s/fail-%" PRIu64 ".db", work, s);
			unlink(keep);
			if (copy_file(seed_store, keep) < 0 || mutate(keep, s) < 0)
				snprintf(keep, sizeof keep, "(could not be kept)");
			fprintf(stderr, "fuzz_history: seed %" PRIu64 ": '%s %s%s%s': %s %d (store remade in %s; "
				"--seed %" PRIu64 " --count 1 repeats it)\n", s, cmds[c][1], cmds[c][2],
				cmds[c][3] ? " " : "", cmds[c][3] ? cmds[c][3] : "",
				st < 0 ? "cannot run" : WIFSIGNALED(st) ? "killed by signal" : "exit",
				st < 0 ? 0 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), keep, s);
			show_err();
		}
		t->stores++;
		t->last = k + 1 > t->last ? k + 1 : t->last;
	}
}

/* Forks jobs workers, each with its own store, stderr file and view folder
 * under WORKDIR/wN, and sums their tallies into total. -1: could not start
 * or hear from one (counted as failed). */
static int run_workers(struct tally *total, unsigned jobs, uint64_t seed, uint64_t count, uint64_t seconds,
		       time_t start, const char *new_)
{
	int fds[MAX_JOBS][2], bad = 0;
	pid_t pids[MAX_JOBS];

	fflush(NULL);
	for (unsigned w = 0; w < jobs; w++) {
		if (pipe(fds[w]) < 0 || (pids[w] = fork()) < 0) {
			fprintf(stderr, "fuzz_history: cannot start worker %u: %s\n", w, strerror(errno));
			jobs = w;
			bad = 1;
			break;
		}
		if (pids[w] == 0) {
			struct tally t = { 0 };
			char dir[4150];

			close(fds[w][0]);
			snprintf(dir, sizeof dir, "%s/w%u", work, w);
			if (mkdir(dir, 0777) != 0 && errno != EEXIST)
				_exit(2);
			snprintf(store, sizeof store, "%s/m.db", dir);
			snprintf(errfile, sizeof errfile, "%s/child.err", dir);
			snprintf(viewdir, sizeof viewdir, "%s/view", dir);
			worker(&t, w, jobs, seed, count, seconds, start, new_);
			fflush(NULL);
			_exit(write(fds[w][1], &t, sizeof t) == (ssize_t)sizeof t ? 0 : 2);
		}
		close(fds[w][1]);
	}
	for (unsigned w = 0; w < jobs; w++) {
		struct tally t;
		int st;

		if (read(fds[w][0], &t, sizeof t) == (ssize_t)sizeof t) {
			total->stores += t.stores;
			total->fails += t.fails;
			total->last = t.last > total->last ? t.last : total->last;
			for (int c = 0; c < NCMDS; c++)
				total->cpu[c] += t.cpu[c];
		} else {
			fprintf(stderr, "fuzz_history: worker %u sent no tally\n", w);
			total->fails++;
		}
		close(fds[w][0]);
		while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR)
			;
	}
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, count = UINT64_MAX, seconds = 0, njobs = 1;
	struct tally total = { 0 };
	const char *base, *new_;
	unsigned jobs;
	int i = 1;
	time_t start = time(NULL);

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		uint64_t *dst = strcmp(argv[i], "--seed") == 0 ? &seed : strcmp(argv[i], "--count") == 0 ? &count :
			strcmp(argv[i], "--seconds") == 0 ? &seconds : strcmp(argv[i], "-j") == 0 ? &njobs :
			strcmp(argv[i], "--gnuplot-every") == 0 ? &gnuplot_every : NULL;

		if (!dst || parse_u64(argv[i], argv[i + 1], dst) < 0) {
			fprintf(stderr, "fuzz_history: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (argc - i != 3 || (count == UINT64_MAX && !seconds) || njobs < 1 || njobs > MAX_JOBS) {
		fprintf(stderr, "usage: fuzz_history [--seed S] [--count N] [--seconds T] [-j N] [--gnuplot-every K] "
			"WORKDIR BASE.kpt NEW.kpt\n(--count or --seconds, or both; -j 1 to %d; --gnuplot-every 0: never)\n",
			MAX_JOBS);
		return 2;
	}
	jobs = (unsigned)njobs;
	snprintf(work, sizeof work, "%s", argv[i]);
	base = argv[i + 1];
	new_ = argv[i + 2];
	if (mkdir(work, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz_history: cannot make '%s': %s\n", work, strerror(errno));
		return 2;
	}
	snprintf(seed_store, sizeof seed_store, "%s/seed.db", work);
	snprintf(store, sizeof store, "%s/m.db", work);
	snprintf(errfile, sizeof errfile, "%s/child.err", work);
	snprintf(viewdir, sizeof viewdir, "%s/view", work);
	unlink(seed_store);
	for (int k = 0; k < 4; k++) {
		char commit[8];
		char *add[] = { "kptprof", "history", "add", (char *)(k < 3 ? base : new_), "--db", seed_store,
				"--suite", "default", "--commit", commit, k == 1 ? "--label" : NULL, "run=ci", NULL };
		int st;

		snprintf(commit, sizeof commit, "c%d", k + 1);
		st = run_child(add);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fuzz_history: cannot make the seed store (history add '%s'):\n", add[3]);
			show_err();
			return 2;
		}
	}
	printf("fuzz_history: seed %" PRIu64 ", stores %s%" PRIu64 "%s, %u job%s\n", seed,
	       count == UINT64_MAX ? "until " : "", count == UINT64_MAX ? seconds : count,
	       count == UINT64_MAX ? " s" : "", jobs, jobs == 1 ? "" : "s");
	fflush(stdout);
	if (jobs == 1) {
		worker(&total, 0, 1, seed, count, seconds, start, new_);
	} else if (run_workers(&total, jobs, seed, count, seconds, start, new_) < 0) {
		return 2;
	}
	printf("fuzz_history: %" PRIu64 " mutated stores x 7 commands in %lld s, %" PRIu64 " failed (seeds %" PRIu64
	       "..%" PRIu64 ")\n", total.stores, (long long)(time(NULL) - start), total.fails, seed,
	       seed + (total.last ? total.last - 1 : 0));
	printf("fuzz_history: CPU s per store: ls %.3f, ls json %.3f, show %.3f, detect %.3f, gate %.3f, view %.3f, "
	       "add %.3f\n", cpu_per(&total, 0), cpu_per(&total, 1), cpu_per(&total, 2), cpu_per(&total, 3),
	       cpu_per(&total, 4), cpu_per(&total, 5), cpu_per(&total, 6));
	return total.fails ? 1 : 0;
}

