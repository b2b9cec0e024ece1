/* jscan_ref: the validator as it was before its strings were found by 64-byte blocks
 * (lib/base/jscan.c and jscan_impl.h at that time, the portable loop only, every name
 * prefixed ref_), kept verbatim as the reference fuzz_jscan compares the product with.
 * Not a product path: nothing in lib/ includes it. */
#ifndef SS_JSCAN_REF_H
#define SS_JSCAN_REF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/jscan.h"

/* Length of the UTF-8 sequence at p, or 0 if invalid (overlong, surrogate, > U+10FFFF). */
static inline size_t
ref_utf8_seq(const unsigned char *p, const unsigned char *end)
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
ref_hexval(char c)
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
ref_hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = ref_hexval((char)p[i]);
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
static const bool ref_plain_ascii[256] = {
	PLAIN_16(0x00), PLAIN_16(0x10), PLAIN_16(0x20), PLAIN_16(0x30),
	PLAIN_16(0x40), PLAIN_16(0x50), PLAIN_16(0x60), PLAIN_16(0x70),
};
#undef PLAIN_16
#undef PLAIN

static inline const unsigned char *
ref_skip_plain(const unsigned char *q, const unsigned char *e)
{
	while (q < e && ref_plain_ascii[*q])
		q++;
	return q;
}

/* p at the opening quote; returns the byte after the closing quote or NULL. */
static inline const char *
ref_scan_string(const char *p, const char *end, const char **why)
{
	const unsigned char *q = (const unsigned char *)p + 1, *e = (const unsigned char *)end;

	while (q < e) {
		q = ref_skip_plain(q, e);
		if (q == e)
			break;
		unsigned c = *q;
		if (c == '"')
			return (const char *)q + 1;
		if (c == '\\') {
			if (e - q < 2)
				break;
			c = q[1];
			if (c == 'u') {
				long cp = ref_hex4(q + 2, e);
				if (cp < 0) {
					*why = "invalid \\u escape in string";
					return NULL;
				}
				q += 6;
				/* a high surrogate needs its low half next, as jq's parser requires */
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					if (e - q < 2 || q[0] != '\\' || q[1] != 'u' || (cp = ref_hex4(q + 2, e)) < 0xDC00 || cp > 0xDFFF) {
						*why = "invalid \\u surrogate pair in string";
						return NULL;
					}
					q += 6;
				}
				continue;
			}
			if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
				*why = "invalid escape in string";
				return NULL;
			}
			q += 2;
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
		size_t n = ref_utf8_seq(q, e);
		if (n == 0) {
			*why = "invalid UTF-8";
			return NULL;
		}
		q += n;
	}
	*why = "unterminated string";
	return NULL;
}


/* jscan.c: jq 1.6's parser opens no container with 256 slots of its stack in use, an
 * array taking one, an object two (itself and the key of the member being read) */
#define REF_MAX_SLOTS 256

static const char *
ref_scan_number(const char *p, const char *end, const char **why)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		goto bad;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p;
bad:
	(void)s;
	*why = "invalid number";
	return NULL;
}

static const char *
ref_scan_literal(const char *p, const char *end, const char *word, const char **why)
{
	size_t n = strlen(word);

	if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) {
		*why = "invalid literal";
		return NULL;
	}
	return p + n;
}

/* Iterative, so hostile nesting costs no stack: containers[] remembers '{' or '['.
 * The containers open take at most maxslots (REF_MAX_SLOTS for a whole document). */
static const char *
ref_scan_value(const char *p, const char *end, const char **why, int maxslots)
{
	char containers[REF_MAX_SLOTS];
	int depth = 0, used = 0;
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	for (;;) {
		p = ss_jscan_skip_ws(p, end);
		if (p >= end) {
			*why = "unexpected end of input";
			return NULL;
		}
		/* one value */
		switch (*p) {
		case '{':
		case '[':
			if (used >= maxslots) {
				*why = "nesting too deep";
				return NULL;
			}
			used += *p == '{' ? 2 : 1;
			containers[depth++] = *p;
			p = ss_jscan_skip_ws(p + 1, end);
			if (p < end && *p == (containers[depth - 1] == '{' ? '}' : ']')) {
				used -= containers[--depth] == '{' ? 2 : 1;
				p++;
				goto after_value;
			}
			if (containers[depth - 1] == '{')
				goto object_key;
			continue;
		case '"':
			p = ref_scan_string(p, end, why);
			break;
		case 't':
			p = ref_scan_literal(p, end, "true", why);
			break;
		case 'f':
			p = ref_scan_literal(p, end, "false", why);
			break;
		case 'n':
			p = ref_scan_literal(p, end, "null", why);
			break;
		default:
			if (*p == '-' || (*p >= '0' && *p <= '9'))
				p = ref_scan_number(p, end, why);
			else {
				*why = "unexpected character";
				p = NULL;
			}
		}
		if (p == NULL)
			return NULL;
after_value:
		for (;;) {
			if (depth == 0)
				return p;
			p = ss_jscan_skip_ws(p, end);
			if (p >= end) {
				*why = "unexpected end of input";
				return NULL;
			}
			char open = containers[depth - 1];
			if (*p == (open == '{' ? '}' : ']')) {
				used -= open == '{' ? 2 : 1;
				depth--;
				p++;
				continue;
			}
			if (*p != ',') {
				*why = open == '{' ? "expected ',' or '}'" : "expected ',' or ']'";
				return NULL;
			}
			p = ss_jscan_skip_ws(p + 1, end);
			if (open == '{')
				goto object_key;
			break;
		}
		continue;
object_key:
		if (p >= end || *p != '"') {
			*why = "expected a string key";
			return NULL;
		}
		if ((p = ref_scan_string(p, end, why)) == NULL)
			return NULL;
		p = ss_jscan_skip_ws(p, end);
		if (p >= end || *p != ':') {
			*why = "expected ':'";
			return NULL;
		}
		p++;
	}
}

static const char *
ref_jscan_value(const char *p, const char *end, const char **why)
{
	return ref_scan_value(p, end, why, REF_MAX_SLOTS);
}

/* The members of the object at p (its '{'), validated as ref_scan_value would: returns the
 * byte after its '}' or NULL (*why set); *n = SIZE_MAX when it has more than max. */
static const char *
ref_scan_members(const char *p, const char *end, struct ss_jmember *m, size_t max, size_t *n,
	     const char **why)
{
	*n = 0;
	p = ss_jscan_skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		if (p >= end || *p != '"') {
			*why = "expected a string key";
			return NULL;
		}
		const char *ks = p;
		if ((p = ref_scan_string(p, end, why)) == NULL)
			return NULL;
		const char *ke = p;
		p = ss_jscan_skip_ws(p, end);
		if (p >= end || *p != ':') {
			*why = "expected ':'";
			return NULL;
		}
		p = ss_jscan_skip_ws(p + 1, end);
		const char *vs = p;
		if ((p = ref_scan_value(p, end, why, REF_MAX_SLOTS - 2)) == NULL)
			return NULL;
		if (*n < max)
			m[*n] = (struct ss_jmember){.key = ks, .keyend = ke, .value = vs, .valueend = p};
		if (*n != SIZE_MAX)
			*n = *n < max ? *n + 1 : SIZE_MAX;
		p = ss_jscan_skip_ws(p, end);
		if (p < end && *p == '}')
			return p + 1;
		if (p >= end || *p != ',') {
			*why = p >= end ? "unexpected end of input" : "expected ',' or '}'";
			return NULL;
		}
		p = ss_jscan_skip_ws(p + 1, end);
	}
}

/* p is after the document's value (NULL: not a valid one): only whitespace may follow. */
static bool
ref_value_ends_document(const char *p, const char *end, const char **why)
{
	if (p == NULL)
		return false;
	if (ss_jscan_skip_ws(p, end) != end) {
		*why = "unexpected text after the JSON value";
		return false;
	}
	return true;
}

static bool
ref_jscan_document_members(const char *p, const char *end, struct ss_jmember *m, size_t max,
			  size_t *n, const char **why)
{
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	p = ss_jscan_skip_ws(p, end);
	*n = SIZE_MAX;
	if (p < end && *p == '{')
		p = ref_scan_members(p, end, m, max, n, why);
	else
		p = ref_jscan_value(p, end, why);
	return ref_value_ends_document(p, end, why);
}

static bool
ref_jscan_document(const char *p, const char *end, const char **why)
{
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	return ref_value_ends_document(ref_jscan_value(p, end, why), end, why);
}

#endif
