/* test_history_store.c - the history store (analyzer/history/kpt_history.h) on a
 * real database. Built twice (tests/unit/history.cmake):
 *   test_history_store     on SQLite files in a temporary folder;
 *   test_history_store_pg  (KPT_TEST_PG) on the PostgreSQL server named by
 *                          $KPT_TEST_PG_URL, one fresh database per test;
 *                          exits 77 (skipped) without it. .ci/run starts a
 *                          server and sets it (tests/pg-server.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kpt_diff.h"
#include "kpt_history.h"
#include "kpt_history_db.h"

#if defined(KPT_TEST_PG) && !defined(KPT_TEST_NO_PQ)
#include <libpq-fe.h>
#endif

#define WRITERS 8
#define RUNS_EACH 200
#define KEYS 12
#define FIRST_WRITERS 12

static char url[1024];
static char tmpdir[256];
static int ntest;

/* A fresh, empty store for each test. */
static int fresh_store(void **state)
{
	(void)state;
	ntest++;
#ifdef KPT_TEST_NO_PQ
	return -1;
#elif defined(KPT_TEST_PG)
	{
		const char *base = getenv("KPT_TEST_PG_URL");
		char sql[128], *slash;
		PGconn *c = PQconnectdb(base);
		PGresult *r;

		if (PQstatus(c) != CONNECTION_OK) {
			fprintf(stderr, "cannot connect to $KPT_TEST_PG_URL: %s", PQerrorMessage(c));
			PQfinish(c);
			return -1;
		}
		snprintf(sql, sizeof sql, "CREATE DATABASE kpt_t%d_%d", (int)getpid(), ntest);
		r = PQexec(c, sql);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fprintf(stderr, "%s", PQerrorMessage(c));
			PQclear(r);
			PQfinish(c);
			return -1;
		}
		PQclear(r);
		PQfinish(c);
		snprintf(url, sizeof url, "%s", base);
		slash = strrchr(url + strlen("postgresql://"), '/');
		if (!slash)
			return -1;
		snprintf(slash, sizeof url - (size_t)(slash - url), "/kpt_t%d_%d", (int)getpid(), ntest);
	}
#else
	snprintf(url, sizeof url, "%s/store%d/history.db", tmpdir, ntest);
#endif
	return 0;
}

static struct kpt_history *open_ok(int schema)
{
	struct kpt_history *h = NULL;
	struct kpt_history_open_opts o = { .create = 1, .schema = schema };
	struct kpt_diag d = { 0 };
	int rc = kpt_history_open(url, &o, &h, &d);

	if (rc != 0)
		fprintf(stderr, "open '%s': %s\n", url, d.msg);
	assert_int_equal(rc, 0);
	return h;
}

/* A synthetic session: nkeys keys "k<i>" with 3 runs around (i+1) us. */
struct fake {
	struct kpt_history_run run;
	struct kpt_history_point pts[512];
	double runs[512][3];
	char names[512][16];
	char commit[32];
};

static void fake_init(struct fake *f, int nkeys, const char *commit, double scale)
{
	memset(f, 0, sizeof *f);
	snprintf(f->commit, sizeof f->commit, "%s", commit);
	f->run.session = (struct kpt_history_session){ .commit = f->commit, .branch = "main",
		.suite = "default", .gpu_name = "NVIDIA H100 80GB HBM3", .gpu_slug = "nvidia-h100-80gb-hbm3",
		.gpu_uuid = "GPU-1", .driver = "580", .cuda = "13.0", .host = "test", .source = "fake",
		.time = "", .runs = 3, .sm_mhz = 1980, .temp_c = NAN, .throttled_frac = 0 };
	for (int i = 0; i < nkeys; i++) {
		snprintf(f->names[i], sizeof f->names[i], "k%d", i);
		for (int r = 0; r < 3; r++)
			f->runs[i][r] = (1000.0 * (i + 1) + r) * scale;
		f->pts[i] = (struct kpt_history_point){ .key = { .name = f->names[i], .path = "w/r",
			.workload = "w", .grid = { (uint32_t)i + 1, 1, 1 }, .block = { 256, 1, 1 } },
			.nruns = 3, .run_ns = f->runs[i],
			.centre_ns = exp((log(f->runs[i][0]) + log(f->runs[i][1]) + log(f->runs[i][2])) / 3) };
	}
	f->run.points = f->pts;
	f->run.npoints = (size_t)nkeys;
}

static void add_ok(struct kpt_history *h, struct fake *f)
{
	struct kpt_diag d = { 0 };
	int64_t id = 0;
	int rc = kpt_history_add(h, &f->run, &id, &d);

	if (rc)
		fprintf(stderr, "add: %s\n", d.msg);
	assert_int_equal(rc, 0);
	assert_true(id > 0);
}

/* The series of fake key "k<i>" (series come in key id order, which is
 * not the order keys were first added). */
static const struct kpt_history_series *series_of(const struct kpt_history_set *s, int i)
{
	char name[16];

	snprintf(name, sizeof name, "k%d", i);
	for (size_t k = 0; k < s->nseries; k++)
		if (strcmp(s->series[k].key.name, name) == 0)
			return &s->series[k];
	fail_msg("no series for key %s", name);
	return NULL;
}

static struct kpt_history_set *query_all(struct kpt_history *h, int with_runs)
{
	struct kpt_history_filter f = { .with_runs = with_runs };
	struct kpt_history_set *s = NULL;
	struct kpt_diag d = { 0 };

	assert_int_equal(kpt_history_query(h, &f, &s, &d), 0);
	return s;
}

static void test_adds_and_reads_back_a_session(void **state)
{
	struct kpt_history *h = open_ok(0);
	struct fake f;
	struct kpt_history_label lab[] = { { "ci", "yes" }, { "pr", "42" } };
	struct kpt_history_set *s;

	(void)state;
	fake_init(&f, 5, "abc123", 1);
	f.run.session.labels = lab;
	f.run.session.nlabels = 2;
	add_ok(h, &f);
	s = query_all(h, 1);
	assert_int_equal(s->nsessions, 1);
	assert_string_equal(s->sessions[0].commit, "abc123");
	assert_string_equal(s->sessions[0].gpu_uuid, "GPU-1");
	assert_int_equal(s->sessions[0].nlabels, 2);
	assert_string_equal(s->sessions[0].labels[1].name, "pr");
	assert_string_equal(s->sessions[0].labels[1].value, "42");
	assert_int_equal(s->nseries, 5);
	for (int k = 0; k < 5; k++) {
		const struct kpt_history_series *se = series_of(s, k);

		assert_int_equal(se->n, 1);
		assert_int_equal(se->nruns[0], 3);
		assert_true(fabs(se->run_ns[0][2] - f.runs[k][2]) < 1e-6);
		assert_true(fabs(se->centre_ns[0] / f.pts[k].centre_ns - 1) < 1e-9);
		assert_int_equal(se->key.grid[0], k + 1);
		assert_int_equal(se->key.block[0], 256);
		assert_string_equal(se->key.workload, "w");
	}
	assert_int_equal(kpt_history_schema(h), KPT_HISTORY_SCHEMA);
	kpt_history_set_destroy(s);
	kpt_history_close(h);
}

/* The store keeps a recording's per-run medians exactly as the diff takes
 * them: the centre of each key is the diff's row.base_ns. */
static void test_real_recording_keeps_the_diff_run_medians(void **state)
{
	const char *path = KPT_SRC_DIR "/tests/data/default_h100_candidate.kpt";
	struct kpt_history_run run;
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_history *h = open_ok(0);
	struct kpt_history_set *s;
	size_t checked = 0;

	(void)state;
	assert_int_equal(kpt_history_run_load(path, &run, &d), 0);
	assert_true(run.npoints > 100);
	assert_string_equal(run.session.gpu_slug, "nvidia-h100-80gb-hbm3");
	assert_true(strncmp(run.session.gpu_uuid, "GPU-", 4) == 0);
	assert_int_equal(kpt_history_add(h, &run, NULL, &d), 0);
	/* key by key: the diff's groups of launches are formed when comparing,
	 * the store keeps their members */
	assert_int_equal(kpt_diff_paths(path, path, &(struct kpt_diff_opts){ .aggregate_min = -1 }, &df, &d), 0);
	s = query_all(h, 1);
	assert_int_equal(s->nseries, run.npoints);
	for (size_t r = 0; r < df->nrows; r++)
		for (size_t k = 0; k < s->nseries; k++) {
			const struct kpt_history_key *key = &s->series[k].key;

			if (strcmp(key->name, df->rows[r].name) || strcmp(key->path, df->rows[r].path) ||
			    key->ordinal != df->rows[r].ordinal || memcmp(key->grid, df->rows[r].grid, sizeof key->grid))
				continue;
			assert_true(fabs(s->series[k].centre_ns[0] / df->rows[r].base_ns - 1) < 1e-9);
			assert_int_equal(s->series[k].nruns[0], df->rows[r].base_runs);
			for (uint32_t i = 0; i < df->rows[r].base_runs; i++)
				assert_true(fabs(s->series[k].run_ns[0][i] / df->rows[r].base_run_ns[i] - 1) < 1e-9);
			checked++;
		}
	assert_int_equal(checked, df->nrows);
	kpt_diff_destroy(df);
	kpt_history_set_destroy(s);
	kpt_history_run_release(&run);
	kpt_history_close(h);
}

/* A child process that opens the store (making it when absent) and adds
 * `adds` fake sessions, commits "w<w>-<r>"; exits 0 when all landed. */
static pid_t spawn_writer(int w, int adds)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct kpt_history *hw;
		struct kpt_history_open_opts o = { .create = 1 };
		struct kpt_diag d = { 0 };
		struct fake *f = malloc(sizeof *f);
		char commit[32];

		if (!f || kpt_history_open(url, &o, &hw, &d) < 0) {
			fprintf(stderr, "writer %d: open: %s\n", w, d.msg);
			_exit(3);
		}
		for (int r = 0; r < adds; r++) {
			snprintf(commit, sizeof commit, "w%d-%d", w, r);
			fake_init(f, KEYS, commit, 1 + 0.001 * r);
			if (kpt_history_add(hw, &f->run, NULL, &d) < 0) {
				fprintf(stderr, "writer %d run %d: %s\n", w, r, d.msg);
				_exit(4);
			}
		}
		kpt_history_close(hw);
		free(f);
		_exit(0);
	}
	return pid;
}

/* 8 processes add 200 sessions each at once: every one is stored once. */
static void test_eight_concurrent_writers_lose_nothing(void **state)
{
	struct kpt_history *h = open_ok(0);
	pid_t pid[WRITERS];
	struct kpt_history_set *s;
	static char seen[WRITERS][RUNS_EACH];

	(void)state;
	kpt_history_close(h); /* the store exists; each writer opens its own */
	for (int w = 0; w < WRITERS; w++)
		pid[w] = spawn_writer(w, RUNS_EACH);
	for (int w = 0; w < WRITERS; w++) {
		int st = 0;

		assert_int_equal(waitpid(pid[w], &st, 0), pid[w]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	h = open_ok(0);
	s = query_all(h, 0);
	assert_int_equal(s->nsessions, WRITERS * RUNS_EACH);
	memset(seen, 0, sizeof seen);
	for (size_t i = 0; i < s->nsessions; i++) {
		int w, r;

		assert_int_equal(sscanf(s->sessions[i].commit, "w%d-%d", &w, &r), 2);
		assert_true(w >= 0 && w < WRITERS && r >= 0 && r < RUNS_EACH);
		assert_int_equal(seen[w][r], 0); /* no duplicate */
		seen[w][r] = 1;
	}
	assert_int_equal(s->nseries, KEYS); /* keys created once, shared */
	for (size_t k = 0; k < s->nseries; k++)
		assert_int_equal(s->series[k].n, WRITERS * RUNS_EACH);
	kpt_history_set_destroy(s);
	kpt_history_close(h);
}

/* 12 processes make the same fresh store at once (the first adds of a
 * CI fleet): every add lands. Before the retry around the WAL switch and
 * the schema's creation, 6 of 720 such adds failed "database is locked".
 * $KPT_TEST_FIRST_WRITER_ROUNDS sets the rounds (default 5: 60 adds). */
static void test_first_writers_on_a_fresh_store_all_succeed(void **state)
{
	const char *env = getenv("KPT_TEST_FIRST_WRITER_ROUNDS");
	int rounds = env && atoi(env) > 0 ? atoi(env) : 5, failed = 0;
	char base[sizeof url - 16];

	(void)state;
	snprintf(base, sizeof base, "%.1000s", url);
	for (int round = 0; round < rounds; round++) {
		pid_t pid[FIRST_WRITERS];
		struct kpt_history *h;
		struct kpt_history_set *s;
		int failed_before = failed;

		if (strncmp(base, "postgres", 8) == 0) {
			if (round)
				fresh_store(NULL);
		} else {
			snprintf(url, sizeof url, "%s.%d", base, round);
		}
		for (int w = 0; w < FIRST_WRITERS; w++)
			pid[w] = spawn_writer(w, 1);
		for (int w = 0; w < FIRST_WRITERS; w++) {
			int st = 0;

			assert_int_equal(waitpid(pid[w], &st, 0), pid[w]);
			failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		}
		h = open_ok(0);
		s = query_all(h, 0);
		assert_int_equal(s->nsessions + (size_t)(failed - failed_before), FIRST_WRITERS);
		kpt_history_set_destroy(s);
		kpt_history_close(h);
	}
	if (failed)
		fail_msg("%d of %d first adds failed", failed, rounds * FIRST_WRITERS);
	fprintf(stderr, "%d fresh stores x %d first writers: every add landed\n", rounds, FIRST_WRITERS);
}

static void stop_here(void *ctx, size_t written)
{
	int fd = *(int *)ctx;

	(void)written;
	if (write(fd, "x", 1) != 1)
		_exit(5);
	pause(); /* killed here, inside the transaction */
}

/* A writer killed between two batches of points leaves no partial run,
 * and the store takes the next add. */
static void test_killed_writer_leaves_no_partial_run(void **state)
{
	struct kpt_history *h = open_ok(0);
	struct fake *f = malloc(sizeof *f);
	struct kpt_history_set *s;
	int fds[2], st = 0;
	char c;
	pid_t pid;

	(void)state;
	assert_non_null(f);
	fake_init(f, 3, "before", 1);
	add_ok(h, f);
	kpt_history_close(h);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct kpt_history_open_opts o = { .create = 1, .on_chunk = stop_here, .ctx = &fds[1] };
		struct kpt_diag d = { 0 };

		if (kpt_history_open(url, &o, &h, &d) < 0)
			_exit(3);
		fake_init(f, 450, "killed", 1); /* 450 points: 3 batches */
		kpt_history_add(h, &f->run, NULL, &d);
		_exit(4); /* not reached: killed in the hook */
	}
	assert_int_equal(read(fds[0], &c, 1), 1); /* the first batch is written */
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	close(fds[0]);
	close(fds[1]);
	h = open_ok(0);
	s = query_all(h, 0);
	assert_int_equal(s->nsessions, 1);
	assert_string_equal(s->sessions[0].commit, "before");
	assert_int_equal(s->nseries, 3); /* no key of the killed run either */
	kpt_history_set_destroy(s);
	fake_init(f, 4, "after", 1);
	add_ok(h, f);
	s = query_all(h, 0);
	assert_int_equal(s->nsessions, 2);
	assert_string_equal(s->sessions[1].commit, "after");
	kpt_history_set_destroy(s);
	kpt_history_close(h);
	free(f);
}

static int count_rows(void *ctx, const struct kpt_hdb_row *row)
{
	(void)row;
	++*(int *)ctx;
	return 0;
}

/* A store of schema 1 with sessions is migrated to the newest schema on
 * open; its sessions survive and labels (schema 2) work. */
static void test_migrates_a_populated_v1_store(void **state)
{
	struct kpt_history *h = open_ok(1);
	struct fake f;
	struct kpt_history_set *s;
	struct kpt_history_label lab[] = { { "ci", "1" } };
	struct kpt_diag d = { 0 };

	(void)state;
	assert_int_equal(kpt_history_schema(h), 1);
	fake_init(&f, 4, "old1", 1);
	add_ok(h, &f);
	fake_init(&f, 4, "old2", 1.01);
	add_ok(h, &f);
	f.run.session.labels = lab; /* schema 1 has no labels */
	f.run.session.nlabels = 1;
	assert_int_equal(kpt_history_add(h, &f.run, NULL, &d), KPT_E_UNSUPPORTED);
	kpt_history_close(h);

	h = open_ok(0);
	assert_int_equal(kpt_history_schema(h), KPT_HISTORY_SCHEMA);
	fake_init(&f, 4, "new", 1.02);
	f.run.session.labels = lab;
	f.run.session.nlabels = 1;
	add_ok(h, &f);
	s = query_all(h, 0);
	assert_int_equal(s->nsessions, 3);
	assert_string_equal(s->sessions[0].commit, "old1");
	assert_string_equal(s->sessions[1].commit, "old2");
	assert_int_equal(s->sessions[0].nlabels, 0);
	assert_int_equal(s->sessions[2].nlabels, 1);
	assert_int_equal(s->nseries, 4);
	assert_int_equal(s->series[0].n, 3);
	kpt_history_set_destroy(s);
	kpt_history_close(h);
	{
		/* the version table records both steps */
		const struct kpt_hdb_ops *ops = strncmp(url, "postgres", 8) == 0 ? kpt_hdb_pg : kpt_hdb_sqlite;
		struct kpt_hdb *db;
		int n = 0;

		assert_int_equal(ops->open(url, 0, &db, &d), 0);
		assert_int_equal(ops->query(db, "SELECT version FROM kpt_schema", 0, NULL, count_rows, &n, &d), 0);
		assert_int_equal(n, KPT_HISTORY_SCHEMA);
		ops->close(db);
	}
}

/* A store of schema 2 with sessions is migrated to schema 3 (what the
 * gate's diff needs: the diff environment of a session, each run median's
 * run, samples and cycle median, drops, mangled names): the old sessions
 * read as unknown (have 0, no run info), a new one round-trips, and a
 * baseline side is built from both. */
static void test_migrates_a_populated_v2_store_to_the_diff_env(void **state)
{
	struct kpt_history *h = open_ok(2);
	struct fake f;
	struct kpt_history_set *s;
	struct kpt_diff_side *side = NULL;
	struct kpt_history_run_info ri[3] = { { 0, 20, 1.5e9 }, { 2, 19, NAN }, { 3, 20, 1.6e9 } };
	struct kpt_diag d = { 0 };
	const struct kpt_history_series *k4;

	(void)state;
	fake_init(&f, 4, "old1", 1);
	add_ok(h, &f);
	fake_init(&f, 4, "old2", 1.01);
	add_ok(h, &f);
	kpt_history_close(h);

	h = open_ok(0);
	assert_int_equal(kpt_history_schema(h), 3);
	fake_init(&f, 5, "new", 1.02);
	f.run.session.runs = 4;
	f.run.session.env = (struct kpt_history_diff_env){ .have = 1, .boot = "b-1", .iterated = 1,
		.copy_gbps = 3000, .bf16_tflops = 700, .sm_mhz_min = 1900, .sm_mhz_max = 1980,
		.temp_c_max = 60, .capped_frac = 0.5, .kernels = 1234, .samples = 1000, .skipped = 7,
		.outside = 3, .dropped_throttle = 2, .dropped_clock = 1, .env_samples = 99, .throttle_bits = 4 };
	f.pts[4].key.mangled = "_Z2k4v";
	f.pts[4].run_info = ri;
	f.pts[4].dropped = 3;
	add_ok(h, &f);
	assert_int_equal(kpt_history_baseline(h, "default", "nvidia-h100-80gb-hbm3", "main", 10, &s, &d), 0);
	assert_int_equal(s->nsessions, 3);
	assert_false(s->sessions[0].env.have);
	assert_true(s->sessions[2].env.have);
	assert_string_equal(s->sessions[2].env.boot, "b-1");
	assert_int_equal(s->sessions[2].env.iterated, 1);
	assert_true(s->sessions[2].env.copy_gbps == 3000);
	assert_true(s->sessions[2].env.capped_frac == 0.5);
	assert_int_equal(s->sessions[2].env.kernels, 1234);
	assert_int_equal(s->sessions[2].env.throttle_bits, 4);
	assert_true(isnan(s->sessions[0].env.temp_c_max));
	k4 = series_of(s, 4);
	assert_int_equal(k4->n, 1);
	assert_string_equal(k4->key.mangled, "_Z2k4v");
	assert_non_null(k4->run_info[0]);
	assert_int_equal(k4->run_info[0][1].slot, 2);
	assert_int_equal(k4->run_info[0][1].samples, 19);
	assert_true(isnan(k4->run_info[0][1].cyc));
	assert_true(k4->run_info[0][2].cyc == 1.6e9);
	assert_int_equal(k4->dropped[0], 3);
	assert_null(series_of(s, 0)->run_info[0]); /* stored at schema 2 */
	assert_int_equal(kpt_history_side(s, "t", &side, &d), 0);
	assert_int_equal(kpt_diff_side_sessions(side), 3);
	assert_int_equal(kpt_diff_side_keys(side), 5);
	{
		const uint32_t *runs;
		uint32_t nr, n;
		double cyc;
		uint64_t dr;
		size_t k;

		kpt_diff_side_runs(side, &runs, &nr);
		assert_int_equal(nr, 3 + 3 + 4); /* the new session recorded 4 runs */
		for (k = 0; k < 5; k++) {
			struct kpt_diff_key_info ki;

			kpt_diff_side_key(side, k, &ki);
			if (strcmp(ki.name, "k4") == 0)
				break;
		}
		assert_true(k < 5);
		/* run 2 of the third session: slot 6 + 2 */
		kpt_diff_side_run_stats(side, k, 8, &n, &cyc, &dr);
		assert_int_equal(n, 19);
		assert_true(kpt_diff_side_run_median(side, k, 8) == f.runs[4][1]);
		assert_true(isnan(kpt_diff_side_run_median(side, k, 7))); /* slot 1: no median */
	}
	kpt_diff_side_destroy(side);
	kpt_history_set_destroy(s);
	kpt_history_close(h);
}

static void test_refuses_a_newer_schema(void **state)
{
	struct kpt_history *h = open_ok(0);
	const struct kpt_hdb_ops *ops = strncmp(url, "postgres", 8) == 0 ? kpt_hdb_pg : kpt_hdb_sqlite;
	struct kpt_hdb *db;
	struct kpt_diag d = { 0 };
	struct kpt_history_open_opts o = { .create = 1 };

	(void)state;
	kpt_history_close(h);
	assert_int_equal(ops->open(url, 0, &db, &d), 0);
	assert_int_equal(ops->exec(db, "INSERT INTO kpt_schema (version) VALUES (99)", &d), 0);
	ops->close(db);
	h = NULL;
	assert_int_equal(kpt_history_open(url, &o, &h, &d), KPT_E_VERSION);
	assert_null(h);
	assert_non_null(strstr(d.msg, "99"));
}

/* The gate's query: the last N sessions of one suite, GPU and branch, with
 * each key's run medians. */
static void test_baseline_returns_the_last_sessions_with_run_medians(void **state)
{
	struct kpt_history *h = open_ok(0);
	struct fake f;
	struct kpt_history_set *s;
	struct kpt_diag d = { 0 };
	char c[16];

	(void)state;
	for (int i = 0; i < 6; i++) {
		snprintf(c, sizeof c, "c%d", i);
		fake_init(&f, 3, c, 1 + i * 0.01);
		f.run.session.branch = i == 5 ? "feature" : "main";
		add_ok(h, &f);
	}
	fake_init(&f, 3, "h200", 1);
	f.run.session.gpu_slug = "nvidia-h200";
	add_ok(h, &f);
	assert_int_equal(kpt_history_baseline(h, "default", "nvidia-h100-80gb-hbm3", "main", 3, &s, &d), 0);
	assert_int_equal(s->nsessions, 3);
	assert_string_equal(s->sessions[0].commit, "c2");
	assert_string_equal(s->sessions[2].commit, "c4");
	assert_int_equal(s->nseries, 3);
	assert_int_equal(series_of(s, 1)->n, 3);
	assert_int_equal(series_of(s, 1)->nruns[2], 3);
	assert_true(fabs(series_of(s, 1)->run_ns[2][0] - 2000 * 1.04) < 1e-6);
	kpt_history_set_destroy(s);
	kpt_history_close(h);
}

/* Kernel names, paths and labels are bytes from a recording: a name that
 * is not UTF-8 (or holds the escape PostgreSQL's backend uses, U+FFFF) is
 * stored and read back byte for byte, and found by name. Before, a
 * PostgreSQL store refused the whole add ("invalid byte sequence"). */
static void test_stores_names_that_are_not_utf8(void **state)
{
	static const char *const odd[] = {
		"bad\xff\xfe name", "lone \xc3", "surrogate \xed\xa0\x80", "esc \xef\xbf\xbf\xef\xbf\xbf done",
		"overlong \xc0\xaf", "mixed \xe2\x82\xac \x80\x81 \xf4\x90\x80\x80",
	};
	enum { N = sizeof odd / sizeof odd[0] };
	struct kpt_history *h = open_ok(0);
	struct kpt_history_set *s, *keys;
	struct kpt_diag d = { 0 };
	struct fake f;

	(void)state;
	fake_init(&f, N, "c1", 1);
	for (int i = 0; i < N; i++)
		f.pts[i].key.name = odd[i];
	f.pts[0].key.path = "w/\xff";
	f.run.session.host = "host\xfe";
	add_ok(h, &f);
	s = query_all(h, 1);
	assert_int_equal(s->nseries, N);
	for (int i = 0; i < N; i++) {
		int found = 0;

		for (size_t k = 0; k < s->nseries; k++)
			found += strcmp(s->series[k].key.name, odd[i]) == 0;
		if (found != 1)
			fail_msg("name %d not read back as it was added", i);
	}
	assert_string_equal(s->sessions[0].host, "host\xfe");
	kpt_history_set_destroy(s);
	assert_int_equal(kpt_history_find_keys(h, odd[3], &keys, &d), 0);
	assert_int_equal(keys->nseries, 1);
	assert_string_equal(keys->series[0].key.name, odd[3]);
	kpt_history_set_destroy(keys);
	kpt_history_close(h);
}

/* Runs sql on the store's database directly, as whoever shares it could. */
static void store_exec(const char *sql)
{
	const struct kpt_hdb_ops *ops = strncmp(url, "postgres", 8) == 0 ? kpt_hdb_pg : kpt_hdb_sqlite;
	struct kpt_hdb *db;
	struct kpt_diag d = { 0 };

	assert_int_equal(ops->open(url, 0, &db, &d), 0);
	if (ops->exec(db, sql, &d) != 0)
		fail_msg("%s: %s", sql, d.msg);
	ops->close(db);
}

/* Opens the store, reads the gate's baseline and builds its side; the
 * first error's code, its message in msg. */
static int read_baseline(char *msg, size_t cap)
{
	struct kpt_history *h = NULL;
	struct kpt_history_set *set = NULL;
	struct kpt_diff_side *side = NULL;
	struct kpt_diag d = { 0 };
	int rc = kpt_history_open(url, NULL, &h, &d);

	if (rc == 0)
		rc = kpt_history_gate_side(h, "default", "nvidia-h100-80gb-hbm3", "main", 10, &set, &side, &d);
	snprintf(msg, cap, "%.500s", d.msg);
	kpt_diff_side_destroy(side);
	kpt_history_set_destroy(set);
	kpt_history_close(h);
	return rc;
}

/* A store is untrusted input (docs/security.md): a row whose numbers
 * would index past an array, size a huge allocation or reach the rule as
 * a negative time is refused with one line naming the store, the row and
 * the value. Before these checks the first two crashed every gate --db
 * (SIGSEGV) and the third grew to 24 GB. */
static void test_rejects_out_of_range_rows(void **state)
{
	static const struct {
		const char *bad, *restore, *says;
	} rows[] = {
		{ "UPDATE points SET run_info = '4294967295:1:1,1:1:1,2:1:1' WHERE session_id = 2",
		  "UPDATE points SET run_info = NULL", "run_info slot 4294967295 is out of range" },
		{ "UPDATE points SET run_info = '-1:1:1,1:1:1,2:1:1' WHERE session_id = 2",
		  "UPDATE points SET run_info = NULL", "run_info slot 4294967295 is out of range" },
		{ "UPDATE kpt_schema SET version = -1", "DELETE FROM kpt_schema; INSERT INTO kpt_schema VALUES (1), (2), (3)",
		  "kpt_schema version -1 is not a schema version" },
		{ "UPDATE sessions SET runs = 2147483647 WHERE id = 2", "UPDATE sessions SET runs = 3",
		  "session 2: runs 2147483647 is out of range (0 to 100000)" },
		{ "UPDATE sessions SET runs = -3 WHERE id = 2", "UPDATE sessions SET runs = 3",
		  "session 2: runs -3 is out of range" },
		{ "UPDATE points SET run_info = '0:4000000000:1,1:1:1,2:1:1' WHERE session_id = 2",
		  "UPDATE points SET run_info = NULL", "the baseline would take more than 1024 MiB" },
		{ "UPDATE points SET centre_ns = -1 WHERE session_id = 1", "UPDATE points SET centre_ns = 1000",
		  "centre_ns -1 is not a positive time" },
		{ "UPDATE points SET run_ns = '1000,-5,1000' WHERE session_id = 1", "UPDATE points SET run_ns = '1000,1000,1000'",
		  "run_ns -5 is not a positive time" },
		{ "UPDATE points SET run_ns = '' WHERE session_id = 1", "UPDATE points SET run_ns = '1000,1000,1000'",
		  "0 run medians" },
		{ "UPDATE kernel_keys SET ordinal = -7", "UPDATE kernel_keys SET ordinal = 0", "ordinal -7 is out of range" },
		{ "UPDATE sessions SET capped_frac = 7 WHERE id = 3", "UPDATE sessions SET capped_frac = 0",
		  "session 3: capped_frac 7 is out of range" },
		{ "UPDATE sessions SET samples = -1 WHERE id = 3", "UPDATE sessions SET samples = 0",
		  "session 3: samples -1 is out of range" },
	};
	struct kpt_history *h = open_ok(0);
	struct fake f;
	char c[16], msg[512];

	(void)state;
	for (int i = 0; i < 4; i++) {
		snprintf(c, sizeof c, "c%d", i);
		fake_init(&f, 3, c, 1);
		add_ok(h, &f);
	}
	kpt_history_close(h);
	assert_int_equal(read_baseline(msg, sizeof msg), 0);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		store_exec(rows[i].bad);
		assert_int_equal(read_baseline(msg, sizeof msg), KPT_E_FORMAT);
		if (!strstr(msg, rows[i].says) || !strstr(msg, "history") || strchr(msg, '\n'))
			fail_msg("after '%s': '%s' lacks '%s'", rows[i].bad, msg, rows[i].says);
		store_exec(rows[i].restore);
		if (read_baseline(msg, sizeof msg) != 0)
			fail_msg("after '%s': %s", rows[i].restore, msg);
	}
}

#ifdef KPT_TEST_PG
/* Bad URL, wrong password, nobody listening: one line naming the problem,
 * the password never shown. */
static void test_connection_errors_are_one_line(void **state)
{
	const char *base = getenv("KPT_TEST_PG_URL");
	char bad[1024];
	const char *at = strrchr(base, '@');
	struct kpt_history *h = NULL;
	struct kpt_diag d = { 0 };

	(void)state;
	assert_int_equal(kpt_history_open("postgresql://[oops", NULL, &h, &d), KPT_E_INVAL);
	assert_null(strchr(d.msg, '\n'));
	assert_non_null(strstr(d.msg, "bad PostgreSQL URL"));
	assert_non_null(at);
	snprintf(bad, sizeof bad, "postgresql://kpt:not-the-password%s", at);
	assert_int_equal(kpt_history_open(bad, NULL, &h, &d), KPT_E_IO);
	assert_null(strchr(d.msg, '\n'));
	assert_non_null(strstr(d.msg, "password authentication failed"));
	assert_null(strstr(d.msg, "not-the-password"));
	assert_int_equal(kpt_history_open("postgresql://kpt:pw@127.0.0.1:1/postgres", NULL, &h, &d), KPT_E_IO);
	assert_null(strchr(d.msg, '\n'));
	assert_non_null(strstr(d.msg, "refused"));
	assert_null(h);
}
#else
static void test_missing_or_foreign_file_is_an_error(void **state)
{
	struct kpt_history *h = NULL;
	struct kpt_diag d = { 0 };
	char path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/none.db", tmpdir);
	assert_int_equal(kpt_history_open(path, NULL, &h, &d), KPT_E_NOTFOUND);
	assert_int_equal(access(path, F_OK), -1); /* nothing made */
	snprintf(path, sizeof path, "%s/junk.db", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database file\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(kpt_history_open(path, NULL, &h, &d), KPT_E_FORMAT);
	assert_null(strchr(d.msg, '\n'));
	assert_null(h);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_adds_and_reads_back_a_session, fresh_store),
		cmocka_unit_test_setup(test_real_recording_keeps_the_diff_run_medians, fresh_store),
		cmocka_unit_test_setup(test_eight_concurrent_writers_lose_nothing, fresh_store),
		cmocka_unit_test_setup(test_first_writers_on_a_fresh_store_all_succeed, fresh_store),
		cmocka_unit_test_setup(test_killed_writer_leaves_no_partial_run, fresh_store),
		cmocka_unit_test_setup(test_migrates_a_populated_v1_store, fresh_store),
		cmocka_unit_test_setup(test_migrates_a_populated_v2_store_to_the_diff_env, fresh_store),
		cmocka_unit_test_setup(test_refuses_a_newer_schema, fresh_store),
		cmocka_unit_test_setup(test_baseline_returns_the_last_sessions_with_run_medians, fresh_store),
		cmocka_unit_test_setup(test_rejects_out_of_range_rows, fresh_store),
		cmocka_unit_test_setup(test_stores_names_that_are_not_utf8, fresh_store),
#ifdef KPT_TEST_PG
		cmocka_unit_test(test_connection_errors_are_one_line),
#else
		cmocka_unit_test(test_missing_or_foreign_file_is_an_error),
#endif
	};
	int rc;

#ifdef KPT_TEST_PG
	if (!kpt_history_supported("postgresql://x")) {
		fprintf(stderr, "built without libpq: skipped\n");
		return 77;
	}
	if (!getenv("KPT_TEST_PG_URL") || !getenv("KPT_TEST_PG_URL")[0]) {
		fprintf(stderr, "KPT_TEST_PG_URL is not set: skipped (tests/pg-server.sh start DIR prints one)\n");
		return 77;
	}
#else
	if (!kpt_history_supported("x.db")) {
		fprintf(stderr, "built without SQLite: skipped\n");
		return 77;
	}
#endif
	snprintf(tmpdir, sizeof tmpdir, "%s/kpt-history-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char cmd[300];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return rc;
}
