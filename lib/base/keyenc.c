/* Order-preserving encoding of JSON values (see keyenc.h). Tags follow jq's kind order;
 * strings escape 0x00 as 00 FF and end with 00 01, arrays end with 00, so no encoding is a
 * proper prefix of another and memcmp gives jq's order. */
#include "base/keyenc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jscan.h"

enum { TAG_NULL = 1, TAG_FALSE, TAG_TRUE, TAG_NUMBER, TAG_STRING, TAG_ARRAY, TAG_OBJECT };

static void
enc_number(ss_buf *b, double d)
{
	unsigned char out[9] = {TAG_NUMBER};
	uint64_t bits = 0;

	if (d == 0)
		d = 0; /* -0 equals 0 */
	if (!isnan(d)) {
		memcpy(&bits, &d, sizeof bits);
		bits = bits >> 63 ? ~bits : bits ^ (1ULL << 63);
	}
	/* NaN stays all zero bytes: below every number, as jq sorts it */
	for (int i = 0; i < 8; i++)
		out[1 + i] = (unsigned char)(bits >> (56 - 8 * i));
	ss_buf_add(b, out, sizeof out);
}

static void
enc_string_body(ss_buf *b, const char *s, size_t n)
{
	static const char zero[2] = {0, (char)0xFF};
	const char *end = s + n, *z;

	ss_buf_addc(b, TAG_STRING);
	while ((z = memchr(s, 0, (size_t)(end - s))) != NULL) {
		ss_buf_add(b, s, (size_t)(z - s));
		ss_buf_add(b, zero, 2);
		s = z + 1;
	}
	ss_buf_add(b, s, (size_t)(end - s));
}

static void
enc_string(ss_buf *b, const char *s, size_t n)
{
	enc_string_body(b, s, n);
	ss_buf_add(b, "\0\1", 2);
}

/* Do the eight bytes in v hold a backslash or a NUL? (A byte is zero where (v - 1) & ~v
 * has its high bit.) */
static inline bool
word_has_backslash_or_nul(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t w = v ^ 0x5c5c5c5c5c5c5c5cu;

	return (((v - ones) & ~v) | ((w - ones) & ~w)) & highs;
}

/* Does [s, s+n) hold a backslash or a NUL? Eight bytes at a time, both at once, the last
 * ones by loads that overlap (none outside the string): a --by key's two memchr calls
 * were ~60 of its ~150 instructions (wide shape, callgrind). */
static bool
has_backslash_or_nul(const char *s, size_t n)
{
	uint64_t v;
	uint32_t lo, hi;

	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&v, s + i, 8);
			if (word_has_backslash_or_nul(v))
				return true;
		}
		memcpy(&v, s + n - 8, 8);
		return word_has_backslash_or_nul(v);
	}
	if (n >= 4) {
		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		return word_has_backslash_or_nul(lo | (uint64_t)hi << 32);
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\\' || s[i] == '\0')
			return true;
	return false;
}

/* enc_string of a string without NULs, in one append. */
static void
enc_plain_string(ss_buf *b, const char *s, size_t n)
{
	if (b->len + n + 4 > b->cap)
		ss_buf_grow(b, n + 3);
	char *o = b->data + b->len;
	o[0] = TAG_STRING;
	memcpy(o + 1, s, n);
	o[n + 1] = 0;
	o[n + 2] = 1;
	b->len += n + 3;
}

static void
enc(ss_buf *b, jv v, bool prefix)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:
		ss_buf_addc(b, TAG_NULL);
		break;
	case JV_KIND_FALSE:
		ss_buf_addc(b, TAG_FALSE);
		break;
	case JV_KIND_TRUE:
		ss_buf_addc(b, TAG_TRUE);
		break;
	case JV_KIND_NUMBER:
		enc_number(b, jv_number_value(v));
		break;
	case JV_KIND_STRING:
		if (prefix)
			enc_string_body(b, jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)));
		else
			enc_string(b, jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)));
		break;
	case JV_KIND_ARRAY: {
		int n = jv_array_length(jv_copy(v));
		ss_buf_addc(b, TAG_ARRAY);
		for (int i = 0; i < n; i++) {
			jv x = jv_array_get(jv_copy(v), i);
			enc(b, x, false);
			jv_free(x);
		}
		if (!prefix)
			ss_buf_addc(b, 0);
		break;
	}
	case JV_KIND_OBJECT: {
		/* jq compares the sorted key lists first, then the values in key order */
		jv keys = jv_keys(jv_copy(v));
		int n = jv_array_length(jv_copy(keys));
		ss_buf_addc(b, TAG_OBJECT);
		enc(b, keys, false);
		for (int i = 0; i < n; i++) {
			jv x = jv_object_get(jv_copy(v), jv_array_get(jv_copy(keys), i));
			enc(b, x, false);
			jv_free(x);
		}
		jv_free(keys);
		break;
	}
	default:
		ss_buf_addc(b, TAG_NULL);
	}
}

void
ss_keyenc_array_open(ss_buf *b)
{
	ss_buf_addc(b, TAG_ARRAY);
}

void
ss_keyenc_array_close(ss_buf *b)
{
	ss_buf_addc(b, 0);
}

void
ss_keyenc_jv(ss_buf *b, jv v)
{
	enc(b, v, false);
}

void
ss_keyenc_prefix(ss_buf *b, jv v)
{
	enc(b, v, true);
}

/* Past the spaces and tabs before a raw value. */
static void
skip_blanks(const char **p, size_t *len)
{
	while (*len && (**p == ' ' || **p == '\t'))
		(*p)++, (*len)--;
}

int
ss_keyenc_raw_nojq(ss_buf *b, const char *p, size_t len)
{
	skip_blanks(&p, &len);
	if (len == 0)
		return 0;
	switch (*p) {
	case 'n':
		ss_buf_addc(b, TAG_NULL);
		return 1;
	case 'f':
		ss_buf_addc(b, TAG_FALSE);
		return 1;
	case 't':
		ss_buf_addc(b, TAG_TRUE);
		return 1;
	case '"':
		if (len < 2 || p[len - 1] != '"')
			break;
		if (!has_backslash_or_nul(p + 1, len - 2)) {
			enc_plain_string(b, p + 1, len - 2);
			return 1;
		}
		if (memchr(p, '\\', len) == NULL) {
			enc_string(b, p + 1, len - 2);
			return 1;
		}
		break;
	default:
		if ((*p == '-' || (*p >= '0' && *p <= '9')) && len < 64) {
			char tmp[64];
			memcpy(tmp, p, len);
			tmp[len] = '\0';
			enc_number(b, strtod(tmp, NULL));
			return 1;
		}
	}
	return -1;
}

bool
ss_keyenc_raw(ss_buf *b, const char *p, size_t len)
{
	int rc = ss_keyenc_raw_nojq(b, p, len);

	if (rc >= 0)
		return rc;
	skip_blanks(&p, &len);
	jv v = jv_parse_sized(p, (int)len);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return false;
	}
	enc(b, v, false);
	jv_free(v);
	return true;
}
