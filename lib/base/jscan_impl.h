/* jscan_impl: the string scanner, static inline in jscan.c and jpath.c alike (private to them). */
#ifndef SS_JSCAN_IMPL_H
#define SS_JSCAN_IMPL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(SS_PORTABLE)
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif


/* The first byte at or after p (before end) that is not a digit. Long runs (epoch
 * milliseconds) 8 bytes a time where a word can be read as 8 little-endian bytes: a
 * byte x ^ '0' is a digit's value exactly when neither it nor it + 6 has high bits (a
 * carry out of a byte only reaches later bytes, after the first non-digit). */
static inline const char *
skip_digits(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101u;
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= ones * '0';
		uint64_t bad = (w | (w + ones * 6)) & ones * 0xF0;
		if (bad != 0)
			return p + __builtin_ctzll(bad) / 8;
		p += 8;
	}
#endif
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* Length of the UTF-8 sequence at p, or 0 if invalid (overlong, surrogate, > U+10FFFF). */
static inline size_t
utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c < 0xC2 || c > 0xF4)
		return 0;
	if (c < 0xE0) {
		if (end - p < 2 || (p[1] & 0xC0) != 0x80)
			return 0;
		return 2;
	}
	if (c < 0xF0) {
		if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && p[1] < 0xA0)
			return 0;
		if (c == 0xED && p[1] > 0x9F)
			return 0;
		return 3;
	}
	if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
		return 0;
	if (c == 0xF0 && p[1] < 0x90)
		return 0;
	if (c == 0xF4 && p[1] > 0x8F)
		return 0;
	return 4;
}

static inline int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The value of 4 hex digits at p (before end), or -1. */
static inline long
hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hexval((char)p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* Bytes a string holds as they are (printable ASCII but the quote and the backslash):
 * skipped by one table lookup each, as most string bytes are. */
#define PLAIN(c) ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define PLAIN_16(b) PLAIN(b), PLAIN(b + 1), PLAIN(b + 2), PLAIN(b + 3), PLAIN(b + 4), \
	PLAIN(b + 5), PLAIN(b + 6), PLAIN(b + 7), PLAIN(b + 8), PLAIN(b + 9), PLAIN(b + 10), \
	PLAIN(b + 11), PLAIN(b + 12), PLAIN(b + 13), PLAIN(b + 14), PLAIN(b + 15)
static const bool plain_ascii[256] = {
	PLAIN_16(0x00), PLAIN_16(0x10), PLAIN_16(0x20), PLAIN_16(0x30),
	PLAIN_16(0x40), PLAIN_16(0x50), PLAIN_16(0x60), PLAIN_16(0x70),
};
#undef PLAIN_16
#undef PLAIN

/* The SIMD width the string scanner uses, chosen once: AVX-512 (BW) where the CPU has
 * it, AVX2, else SSE2 (always there on x86-64), else the portable loop.
 * SS_SIMD=portable|sse2|avx2|avx512 asks for a narrower one (the tests run every path on
 * the same inputs). Only the validator's blocks (jscan_blocks.c) are 64 bytes wide: the
 * scans below take AVX2 on an AVX-512 CPU too (>= SIMD_AVX2). */
enum simd { SIMD_PORTABLE, SIMD_SSE2, SIMD_AVX2, SIMD_AVX512 };
extern enum simd ss_jscan_simd; /* jscan_blocks.c sets it before main */

#ifdef SS_X86_SIMD
/* 32 bytes a time; what is left (under 32) goes to the SSE2 loop. */
__attribute__((target("avx2"))) static inline const unsigned char *
skip_plain_avx2(const unsigned char *q, const unsigned char *e)
{
	const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\'),
		      space = _mm256_set1_epi8(0x20);

	while (e - q >= 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)q);
		/* signed: bytes from 0x80 are negative, below the space, special too */
		__m256i special = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote),
								  _mm256_cmpeq_epi8(v, bslash)),
						  _mm256_cmpgt_epi8(space, v));
		unsigned mask = (unsigned)_mm256_movemask_epi8(special);
		if (mask != 0)
			return q + __builtin_ctz(mask);
		q += 32;
	}
	return q;
}

static inline const unsigned char *
skip_plain_sse2(const unsigned char *q, const unsigned char *e)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);

	while (e - q >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
		__m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
					       _mm_cmplt_epi8(v, space));
		unsigned mask = (unsigned)_mm_movemask_epi8(special);
		if (mask != 0)
			return q + __builtin_ctz(mask);
		q += 16;
	}
	return q;
}
#endif

/* The first byte at or after q that is not plain (or e). Strings are mostly plain: they
 * are looked at 32 or 16 bytes at a time where the CPU can. */
static inline const unsigned char *
skip_plain(const unsigned char *q, const unsigned char *e)
{
#ifdef SS_X86_SIMD
	if (ss_jscan_simd >= SIMD_AVX2 && e - q >= 32) {
		q = skip_plain_avx2(q, e);
		if (q == e || !plain_ascii[*q])
			return q;
	}
	if (ss_jscan_simd >= SIMD_SSE2) {
		q = skip_plain_sse2(q, e);
		if (q == e || !plain_ascii[*q])
			return q;
	}
#endif
	while (q < e && plain_ascii[*q])
		q++;
	return q;
}

/* The first quote or backslash at or after q (or e): the end of a string whose bytes
 * are not checked (a quick look, jpath.c), 32 or 16 bytes a time where the CPU can. */
#ifdef SS_X86_SIMD
__attribute__((target("avx2"))) static inline const unsigned char *
skip_to_quote_avx2(const unsigned char *q, const unsigned char *e)
{
	const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');

	for (; e - q >= 32; q += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)q);
		unsigned mask = (unsigned)_mm256_movemask_epi8(
			_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, bslash)));
		if (mask != 0)
			return q + __builtin_ctz(mask);
	}
	return q;
}

static inline const unsigned char *
skip_to_quote_sse2(const unsigned char *q, const unsigned char *e)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');

	for (; e - q >= 16; q += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
		unsigned mask = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		if (mask != 0)
			return q + __builtin_ctz(mask);
	}
	return q;
}
#endif

static inline const unsigned char *
skip_to_quote(const unsigned char *q, const unsigned char *e)
{
#ifdef SS_X86_SIMD
	if (ss_jscan_simd >= SIMD_AVX2 && (q = skip_to_quote_avx2(q, e)) < e && (*q == '"' || *q == '\\'))
		return q; /* found: not looked for again 16 bytes a time */
	if (ss_jscan_simd >= SIMD_SSE2)
		q = skip_to_quote_sse2(q, e);
#endif
	while (q < e && *q != '"' && *q != '\\')
		q++;
	return q;
}

/* q at a backslash in a string (before e): the byte after its escape, or NULL (*why set)
 * if it is not one JSON allows. Inlined: text with many escapes (\u everywhere) pays no
 * call for each. */
__attribute__((always_inline)) static inline const unsigned char *
scan_escape(const unsigned char *q, const unsigned char *e, const char **why)
{
	if (e - q < 2) {
		*why = "unterminated string";
		return NULL;
	}
	unsigned c = q[1];
	if (c == 'u') {
		long cp = hex4(q + 2, e);
		if (cp < 0) {
			*why = "invalid \\u escape in string";
			return NULL;
		}
		q += 6;
		/* a high surrogate needs its low half next, as jq's parser requires */
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (e - q < 2 || q[0] != '\\' || q[1] != 'u' || (cp = hex4(q + 2, e)) < 0xDC00 || cp > 0xDFFF) {
				*why = "invalid \\u surrogate pair in string";
				return NULL;
			}
			q += 6;
		}
		return q;
	}
	switch (c) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return q + 2;
	default:
		*why = "invalid escape in string";
		return NULL;
	}
}

/* p at the opening quote; returns the byte after the closing quote or NULL. */
static inline const char *
scan_string(const char *p, const char *end, const char **why)
{
	const unsigned char *q = (const unsigned char *)p + 1, *e = (const unsigned char *)end;

	while (q < e) {
		q = skip_plain(q, e);
		if (q == e)
			break;
		unsigned c = *q;
		if (c == '"')
			return (const char *)q + 1;
		if (c == '\\') {
			if ((q = scan_escape(q, e, why)) == NULL)
				return NULL;
			continue;
		}
		if (c < 0x20) {
			*why = c == 0 ? "NUL byte in string" : "control character in string";
			return NULL;
		}
		if (c < 0x80) {
			q++;
			continue;
		}
		size_t n = utf8_seq(q, e);
		if (n == 0) {
			*why = "invalid UTF-8";
			return NULL;
		}
		q += n;
	}
	*why = "unterminated string";
	return NULL;
}

#endif
