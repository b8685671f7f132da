/* test_import_gunzip.c - gzip-compressed traces (kpt_import_gunzip): the
 * bytes come back whole, several members are concatenated, and a gzip bomb
 * stops at the cap instead of filling memory or the disk. The gzip data is
 * made by the gzip program (always on Debian); a build without zlib skips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kpt_import_int.h"

/* gzip -c of n bytes of text (repeated); malloc'd, *len bytes. NULL when
 * gzip cannot run. */
static unsigned char *gzip_of(const char *text, size_t n, size_t *len)
{
	char in[] = "/tmp/kpt-gz-in.XXXXXX", cmd[128];
	unsigned char *out = NULL;
	size_t tl = strlen(text), cap = 0;
	int fd = mkstemp(in);
	FILE *f, *p;

	*len = 0;
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return NULL;
	for (size_t i = 0; i < n; i += tl)
		fwrite(text, 1, n - i < tl ? n - i : tl, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "gzip -c < %s", in);
	if ((p = popen(cmd, "r"))) {
		size_t r;

		do {
			if (*len + 65536 > cap) {
				unsigned char *t = realloc(out, cap = cap * 2 + 65536);

				if (!t)
					break;
				out = t;
			}
			r = fread(out + *len, 1, 65536, p);
			*len += r;
		} while (r > 0);
		if (pclose(p) != 0) {
			free(out);
			out = NULL;
		}
	}
	unlink(in);
	return out;
}

static int have_zlib(void)
{
	struct kpt_diag d = { 0 };
	const unsigned char *data;
	size_t len;
	static const unsigned char none[2] = { 0x1f, 0x8b };

	return kpt_import_gunzip("x", none, sizeof none, 1, &data, &len, &d) != KPT_E_UNSUPPORTED;
}

static void test_inflates_the_trace_whole(void **state)
{
	static const char text[] = "{\"traceEvents\": []}\n";
	struct kpt_diag d = { 0 };
	const unsigned char *data;
	size_t gzlen, len;
	unsigned char *gz;

	(void)state;
	if (!have_zlib())
		skip();
	gz = gzip_of(text, sizeof text - 1, &gzlen);
	assert_non_null(gz);
	assert_int_equal(kpt_import_gunzip("t.json.gz", gz, gzlen, 1 << 20, &data, &len, &d), 0);
	assert_int_equal(len, sizeof text - 1);
	assert_memory_equal(data, text, len);
	munmap((void *)data, len);
	free(gz);
}

static void test_concatenated_members_are_one_stream(void **state)
{
	struct kpt_diag d = { 0 };
	const unsigned char *data;
	size_t gzlen, len;
	unsigned char *gz, *two;

	(void)state;
	if (!have_zlib())
		skip();
	gz = gzip_of("ab", 2, &gzlen);
	assert_non_null(gz);
	two = malloc(2 * gzlen);
	assert_non_null(two);
	memcpy(two, gz, gzlen);
	memcpy(two + gzlen, gz, gzlen);
	assert_int_equal(kpt_import_gunzip("t.gz", two, 2 * gzlen, 1 << 20, &data, &len, &d), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(data, "abab", 4);
	munmap((void *)data, len);
	free(two);
	free(gz);
}

/* 64 MiB of spaces compress to about 64 KiB: with a 1 MiB cap the import
 * stops after 1 MiB of output with one line. */
static void test_refuses_a_gzip_bomb_at_the_cap(void **state)
{
	struct kpt_diag d = { 0 };
	const unsigned char *data = NULL;
	size_t gzlen, len = 0;
	unsigned char *gz;

	(void)state;
	if (!have_zlib())
		skip();
	gz = gzip_of("                                ", (size_t)64 << 20, &gzlen);
	assert_non_null(gz);
	assert_true(gzlen < ((size_t)1 << 20));
	assert_int_equal(kpt_import_gunzip("bomb.json.gz", gz, gzlen, (uint64_t)1 << 20, &data, &len, &d),
			 KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "'bomb.json.gz': more than 1 MiB once decompressed"));
	assert_null(data);
	free(gz);
}

static void test_refuses_truncated_and_bad_data(void **state)
{
	struct kpt_diag d = { 0 };
	const unsigned char *data = NULL;
	size_t gzlen, len = 0;
	unsigned char *gz;

	(void)state;
	if (!have_zlib())
		skip();
	gz = gzip_of("0123456789abcdef", 4096, &gzlen);
	assert_non_null(gz);
	assert_int_equal(kpt_import_gunzip("t.gz", gz, gzlen / 2, 1 << 20, &data, &len, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "truncated"));
	gz[12] ^= 0xff;
	gz[13] ^= 0xff;
	gz[20] ^= 0xff;
	assert_true(kpt_import_gunzip("t.gz", gz, gzlen, 1 << 20, &data, &len, &d) < 0);
	assert_null(data);
	free(gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflates_the_trace_whole),
		cmocka_unit_test(test_concatenated_members_are_one_stream),
		cmocka_unit_test(test_refuses_a_gzip_bomb_at_the_cap),
		cmocka_unit_test(test_refuses_truncated_and_bad_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
