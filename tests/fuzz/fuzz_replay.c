/* fuzz_replay.c - runs fuzz targets' inputs without libFuzzer: every file
 * named on the command line, or inside a directory named there, goes through
 * LLVMFuzzerTestOneInput once. Exit 0 when all ran (a broken promise aborts),
 * 2 when an input cannot be read or none was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, k;

	if (!f) {
		fprintf(stderr, "fuzz_replay: cannot read '%s'\n", path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *p = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = p;
		}
		k = fread(buf + len, 1, cap - len, f);
		len += k;
	} while (k > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *dir;
		struct dirent *e;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "fuzz_replay: cannot read '%s'\n", argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 2;
			count++;
			continue;
		}
		dir = opendir(argv[i]);
		while (dir && (e = readdir(dir))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			if (run_file(path))
				return 2;
			count++;
		}
		if (dir)
			closedir(dir);
	}
	if (!count) {
		fprintf(stderr, "fuzz_replay: no inputs\n");
		return 2;
	}
	printf("fuzz_replay: %d inputs ran\n", count);
	return 0;
}
