/* test_project.c - the project file (lib/kpt_project.h, docs/projects.md):
 * a good file loads with every field; each class of error names its line
 * and key; find walks up; the bundled suite as a project. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_project.h"

static char tmpdir[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "%s/kpt-project-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes text to tmpdir/name and returns its path (static buffer). */
static const char *write_file(const char *name, const char *text)
{
	static char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	return path;
}

static const char good[] =
	"{\n"
	"  \"project\": \"mylib\",\n"
	"  \"build\": [\"cmake\", \"--build\", \"build\"],\n"
	"  \"baselines\": \"perf/baselines\",\n"
	"  \"db\": \"postgresql://h/db\",\n"
	"  \"runs\": 7,\n"
	"  \"workloads\": [\n"
	"    { \"name\": \"train-step\",\n"
	"      \"command\": [\"python3\", \"bench/step.py\", \"--steps\", \"60\"],\n"
	"      \"env\": { \"OMP_NUM_THREADS\": \"4\", \"A_B\": \"x=y\" },\n"
	"      \"cwd\": \"bench\",\n"
	"      \"timeout\": \"10m\",\n"
	"      \"capture\": { \"nvtx\": \"step@dom\", \"steps\": \"20-59\" },\n"
	"      \"runs\": 3,\n"
	"      \"warmup\": 1 },\n"
	"    { \"name\": \"api\", \"command\": [\"./a.out\"], \"timeout\": 90.5,\n"
	"      \"capture\": { \"cudaProfilerApi\": true } },\n"
	"    { \"name\": \"iters\", \"command\": [\"kpt-workloads\"], \"capture\": { \"every\": 10 } }\n"
	"  ]\n"
	"}\n";

static void test_good_file_loads_every_field(void **state)
{
	struct kpt_project *p = NULL;
	struct kpt_diag d;
	char bench[PATH_MAX + 16], real[PATH_MAX];
	const char *path;
	const struct kpt_project_workload *w;

	(void)state;
	snprintf(bench, sizeof bench, "%s/bench", tmpdir);
	mkdir(bench, 0755);
	path = write_file("kptprof.json", good);
	assert_int_equal(kpt_project_load(path, &p, &d), 0);
	assert_non_null(realpath(tmpdir, real));
	assert_string_equal(p->root, real);
	assert_string_equal(p->name, "mylib");
	assert_string_equal(p->build[0], "cmake");
	assert_string_equal(p->build[2], "build");
	assert_null(p->build[3]);
	assert_true(strstr(p->baselines, "/perf/baselines") && p->baselines[0] == '/');
	assert_string_equal(p->db, "postgresql://h/db");
	assert_int_equal(p->runs, 7);
	assert_int_equal(p->nwl, 3);
	assert_false(p->builtin);
	w = kpt_project_workload(p, "train-step");
	assert_ptr_equal(w, &p->wl[0]);
	assert_string_equal(w->argv[3], "60");
	assert_null(w->argv[4]);
	assert_string_equal(w->env[0], "OMP_NUM_THREADS=4");
	assert_string_equal(w->env[1], "A_B=x=y");
	assert_null(w->env[2]);
	assert_string_equal(w->cwd + strlen(w->cwd) - 6, "/bench");
	assert_true(w->timeout_s == 600);
	assert_string_equal(w->capture_range, "nvtx:step@dom");
	assert_string_equal(w->steps, "20-59");
	assert_null(w->every);
	assert_string_equal(w->step_range, "step");
	assert_int_equal(w->runs, 3);
	assert_int_equal(w->warmup, 1);
	assert_string_equal(w->root_range, "train-step");
	w = &p->wl[1];
	assert_true(w->timeout_s == 90.5);
	assert_string_equal(w->capture_range, "cudaProfilerApi");
	assert_null(w->step_range);
	assert_string_equal(w->cwd, p->root);
	assert_int_equal(w->runs, 0);
	w = &p->wl[2];
	assert_null(w->capture_range);
	assert_string_equal(w->every, "10");
	assert_string_equal(w->step_range, "kpt:iter");
	assert_null(kpt_project_workload(p, "nope"));
	kpt_project_destroy(p);
}

/* Loads text and checks the error: code, and that the message starts
 * with "kptprof.json:LINE: KEY: " and holds what. */
static void expect_error(const char *text, int code, int line, const char *key, const char *what)
{
	struct kpt_project *p = (struct kpt_project *)1;
	struct kpt_diag d;
	char want[512];
	const char *path = write_file("kptprof.json", text);

	assert_int_equal(kpt_project_load(path, &p, &d), code);
	assert_null(p);
	snprintf(want, sizeof want, "%s:%d: %s: ", path, line, key);
	if (strncmp(d.msg, want, strlen(want)) != 0 || !strstr(d.msg, what))
		fail_msg("got '%s', want '%s...%s'", d.msg, want, what);
	assert_null(strchr(d.msg, '\n'));
}

#define WL1 "{\n\"project\": \"p\",\n\"workloads\": [\n{ \"name\": \"a\", \"command\": [\"x\"] },\n"

static void test_wrong_type_names_line_and_key(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\",\n\"command\": \"x y\" }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].command", "expected an array of strings");
	expect_error("{\n\"project\": 3,\n\"workloads\": []\n}", KPT_E_INVAL, 2, "project", "expected a string");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\", 2] }\n]\n}\n", KPT_E_INVAL, 5,
		     "workloads[1].command", "element 1 is a number");
}

static void test_syntax_error_names_line(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\",\n\"command\": [\"x\",] }\n]\n}\n", KPT_E_FORMAT, 6,
		     "workloads[1].command[1]", "bad JSON");
	expect_error("{\n\"project\": \"p\"\n\"workloads\": []\n}", KPT_E_FORMAT, 3, "(top level)", "bad JSON: expected ','");
	expect_error("", KPT_E_FORMAT, 1, "(top level)", "empty file");
	expect_error("{\"project\": \"p\", \"workloads\": [{\"name\":\"a\",\"command\":[\"x\"]}]}\n[]", KPT_E_FORMAT, 2,
		     "(top level)", "more after");
}

static void test_unknown_key_suggests_the_near_one(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"timout\": 5 }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].timout", "unknown key (did you mean 'timeout'?)");
	expect_error("{\n\"project\": \"p\",\n\"colour\": 1 }", KPT_E_INVAL, 3, "colour", "unknown key");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"nvtx\": \"s\", \"step\": \"1-2\" } }\n]\n}\n",
		     KPT_E_INVAL, 6, "workloads[1].capture.step", "did you mean 'steps'");
}

static void test_names_are_path_components(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"../x\", \"command\": [\"x\"] }\n]\n}\n", KPT_E_INVAL, 5, "workloads[1].name",
		     "not a safe folder name");
	expect_error(WL1 "{ \"name\": \"Big\", \"command\": [\"x\"] }\n]\n}\n", KPT_E_INVAL, 5, "workloads[1].name",
		     "not a safe folder name");
	expect_error("{\n\"project\": \".hidden\",\n\"workloads\": []\n}", KPT_E_INVAL, 2, "project",
		     "not a safe folder name");
	assert_true(kpt_project_name_ok("a.b_c-1"));
	assert_false(kpt_project_name_ok("a..b"));
	assert_false(kpt_project_name_ok(""));
}

static void test_duplicate_names_and_keys(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"command\": [\"y\"],\n\"name\": \"a\" }\n]\n}\n", KPT_E_INVAL, 6, "workloads[1].name",
		     "duplicate workload name 'a' (also workloads[0])");
	expect_error("{\n\"project\": \"p\",\n\"project\": \"q\" }", KPT_E_INVAL, 3, "project", "duplicate key");
}

static void test_missing_and_empty(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\" }\n]\n}\n", KPT_E_INVAL, 5, "workloads[1]", "missing key 'command'");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [] }\n]\n}\n", KPT_E_INVAL, 5, "workloads[1].command",
		     "expected an array");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"\"] }\n]\n}\n", KPT_E_INVAL, 5, "workloads[1].command",
		     "empty");
	expect_error("{\n\"project\": \"p\",\n\"workloads\": []\n}", KPT_E_INVAL, 3, "workloads", "non-empty array");
	expect_error("{\n\"project\": \"p\" }", KPT_E_INVAL, 1, "(top level)", "missing key 'workloads'");
}

static void test_capture_combinations(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"nvtx\": \"s\", \"steps\": \"1-2\", "
		     "\"every\": 3 } }\n]\n}\n", KPT_E_INVAL, 6, "workloads[1].capture", "one of 'steps' and 'every'");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"cudaProfilerApi\": true, \"every\": 3 } }"
		     "\n]\n}\n", KPT_E_INVAL, 6, "workloads[1].capture", "not with 'cudaProfilerApi'");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"cudaProfilerApi\": true, \"nvtx\": \"s\" } }"
		     "\n]\n}\n", KPT_E_INVAL, 6, "workloads[1].capture", "one of 'nvtx' and 'cudaProfilerApi'");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"nvtx\": \"s\", \"steps\": \"5-2\" } }"
		     "\n]\n}\n", KPT_E_INVAL, 6, "workloads[1].capture.steps", "A <= B");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"every\": 0 } }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].capture.every", "out of range");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"capture\": { \"nvtx\": \"@d\" } }\n]\n}\n",
		     KPT_E_INVAL, 6, "workloads[1].capture.nvtx", "NAME@DOMAIN");
}

static void test_ranges_of_numbers(void **state)
{
	(void)state;
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"timeout\": -1 }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].timeout", ">= 0");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"timeout\": \"10 parsecs\" }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].timeout", "expected seconds");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"runs\": 1001 }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].runs", "out of range (1 to 1000)");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"warmup\": 101 }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].warmup", "out of range (0 to 100)");
	expect_error("{\n\"project\": \"p\",\n\"runs\": 0,\n\"workloads\": []\n}", KPT_E_INVAL, 3, "runs", "out of range");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"env\": { \"1X\": \"v\" } }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].env.1X", "not a variable name");
	expect_error(WL1 "{ \"name\": \"b\", \"command\": [\"x\"],\n\"cwd\": \"no/such\" }\n]\n}\n", KPT_E_INVAL, 6,
		     "workloads[1].cwd", "no such folder");
}

static void test_unreadable_and_oversized_files(void **state)
{
	struct kpt_project *p = NULL;
	struct kpt_diag d;
	char path[PATH_MAX + 32];
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/missing.json", tmpdir);
	assert_int_equal(kpt_project_load(path, &p, &d), KPT_E_IO);
	snprintf(path, sizeof path, "%s/big.json", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(ftruncate(fileno(f), (1 << 20) + 1), 0);
	fclose(f);
	assert_int_equal(kpt_project_load(path, &p, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "at most 1 MiB"));
	assert_int_equal(kpt_project_load(tmpdir, &p, &d), KPT_E_IO);
}

static void test_huge_objects_are_refused(void **state)
{
	size_t cap = 4200 * 16 + 256, len = 0;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "{\n\"project\": \"p\",\n\"workloads\": [{\"name\": \"a\", "
				"\"command\": [\"x\"], \"env\": {\n");
	for (int i = 0; i < 4200; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"V%d\": \"1\"", i ? ", " : "", i);
	snprintf(text + len, cap - len, "}}]}\n");
	expect_error(text, KPT_E_INVAL, 4, "workloads[0].env.V4096", "more than 4096 keys in one object");
	/* nesting past the reader's bound is a syntax error, not a deep recursion */
	len = (size_t)snprintf(text, cap, "{\"project\": \"p\",\n\"build\": ");
	for (int i = 0; i < 200; i++)
		text[len++] = '[';
	text[len] = '\0';
	{
		char key[8 + 63 * 3] = "build";

		for (int i = 0; i < 63; i++)
			strcat(key, "[0]");
		expect_error(text, KPT_E_FORMAT, 2, key, "bad JSON: nested deeper than 64");
	}
	free(text);
}

static void test_find_walks_up(void **state)
{
	char deep[PATH_MAX + 32], out[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 32];

	(void)state;
	snprintf(deep, sizeof deep, "%s/a", tmpdir);
	mkdir(deep, 0755);
	snprintf(deep, sizeof deep, "%s/a/b", tmpdir);
	mkdir(deep, 0755);
	write_file("kptprof.json", good);
	assert_int_equal(kpt_project_find(deep, out, sizeof out), 0);
	assert_non_null(realpath(tmpdir, real));
	snprintf(want, sizeof want, "%s/kptprof.json", real);
	assert_string_equal(out, want);
	/* the nearest one wins */
	write_file("a/kptprof.json", good);
	assert_int_equal(kpt_project_find(deep, out, sizeof out), 0);
	snprintf(want, sizeof want, "%s/a/kptprof.json", real);
	assert_string_equal(out, want);
	assert_int_equal(kpt_project_find(deep, out, 8), KPT_E_INVAL);
	assert_int_equal(kpt_project_find("/nonexistent/kpt-test", out, sizeof out), KPT_E_NOTFOUND);
}

static void test_builtin_is_one_workload_running_the_suite(void **state)
{
	struct kpt_project *p = NULL;
	struct kpt_diag d;

	(void)state;
	assert_int_equal(kpt_project_builtin("/opt/kpt-workloads", "quick", "/b", &p, &d), 0);
	assert_true(p->builtin);
	assert_string_equal(p->name, "quick");
	assert_null(p->build);
	assert_null(p->path);
	assert_string_equal(p->baselines, "/b");
	assert_int_equal(p->nwl, 1);
	assert_string_equal(p->wl[0].name, "quick");
	assert_string_equal(p->wl[0].argv[0], "/opt/kpt-workloads");
	assert_string_equal(p->wl[0].argv[1], "--suite");
	assert_string_equal(p->wl[0].argv[2], "quick");
	assert_null(p->wl[0].argv[3]);
	assert_null(p->wl[0].root_range);
	assert_null(p->wl[0].capture_range);
	assert_ptr_equal(kpt_project_workload(p, "quick"), &p->wl[0]);
	kpt_project_destroy(p);
	kpt_project_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_file_loads_every_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_type_names_line_and_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syntax_error_names_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key_suggests_the_near_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_are_path_components, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_names_and_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_combinations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranges_of_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_and_oversized_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_objects_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_walks_up, setup, teardown),
		cmocka_unit_test(test_builtin_is_one_workload_running_the_suite),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
