/* Run fuzz targets without libFuzzer: each argument is a corpus file or directory, every
 * input runs once. Crash inputs saved by libFuzzer become regression tests this way. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int count;

static void
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		exit(2);
	}
	size_t cap = 4096, n = 0, k;
	uint8_t *buf = malloc(cap);
	while ((k = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += k) == cap)
			buf = realloc(buf, cap *= 2);
	fclose(f);
	/* an exact-size copy, so reads past the end are caught as they are under libFuzzer */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	count++;
}

static void
run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		run_path(sub);
	}
	closedir(d);
}

int
main(int argc, char **argv)
{
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		run_path(argv[i]);
	printf("%d inputs\n", count);
	return 0;
}
