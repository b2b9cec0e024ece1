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

/* The last 1-7 bytes of a string of `total`, p at the first of them, read whole-word
 * (a byte-wise copy into a word stalls on store forwarding; wyhash reads tails the same
 * way). Bytes may be read twice: the length is hashed too. */
static inline uint64_t
ss_hash_tail(const unsigned char *p, size_t n, size_t total)
{
	uint64_t w;
	uint32_t a, b;

	if (total >= 8) { /* the 8 bytes ending at the string's end */
		memcpy(&w, p + n - 8, 8);
		return w;
	}
	if (n >= 4) {
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		return (uint64_t)a << 32 | b;
	}
	return (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
}

static inline uint64_t
ss_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t total = n;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xa0761d6478bd642fULL);
	uint64_t w = 0;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = ss_hash_mix(h ^ w, 0xe7037ed1a0b428dbULL);
	}
	w = 0;
	if (n > 0) /* the empty key may have no bytes at all (NULL) */
		w = ss_hash_tail(p, n, total);
	return ss_hash_mix(h ^ w ^ 0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL);
}
#endif
