/* hash: a fast 64-bit hash of a byte string, for in-memory hash tables (never stored on
 * disk: it may change between versions). Eight bytes a time with a 128-bit multiply
 * mix (as wyhash and rapidhash do); a table that must be exact compares the bytes
 * after the hash. */
#ifndef SS_HASH_H
#define SS_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t
ss_hash_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t
ss_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xa0761d6478bd642fULL);
	uint64_t w;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = ss_hash_mix(h ^ w, 0xe7037ed1a0b428dbULL);
	}
	w = 0;
	if (n > 0) /* the empty key may have no bytes at all (NULL) */
		memcpy(&w, p, n);
	return ss_hash_mix(h ^ w ^ 0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL);
}
#endif
