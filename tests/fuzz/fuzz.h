/* Shared helpers of the fuzz targets. Each target is one .c file defining
 * LLVMFuzzerTestOneInput; it is linked either with libFuzzer (tests/fuzz/run) or with
 * replay.c, a plain main that runs the corpus once (tests/fuzz.bats, no clang needed).
 * A property that does not hold calls fuzz_fail, which aborts: libFuzzer saves the input. */
#ifndef SS_FUZZ_H
#define SS_FUZZ_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define fuzz_fail(...) do { \
	fprintf(stderr, "%s:%d: property failed: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	abort(); \
} while (0)

/* Split data at the first '\n': head (NUL-terminated copy, caller frees) and the rest. */
static inline char *
fuzz_split(const uint8_t *data, size_t size, const char **rest, size_t *restlen)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t n = nl ? (size_t)(nl - data) : size;
	char *head = malloc(n + 1);

	memcpy(head, data, n);
	head[n] = '\0';
	*rest = (const char *)data + (nl ? n + 1 : n);
	*restlen = nl ? size - n - 1 : 0;
	return head;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
