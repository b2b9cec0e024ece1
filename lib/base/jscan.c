/* A validating JSON scanner that works on raw bytes and builds nothing (see jscan.h). */
#include "base/jscan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(SS_PORTABLE)
#define SS_X86_SIMD 1
#include <immintrin.h>
#endif

/* jq 1.6's parser refuses documents nested deeper than this; agree with it. */
#define MAX_DEPTH 256

/* Length of the UTF-8 sequence at p, or 0 if invalid (overlong, surrogate, > U+10FFFF). */
static size_t
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

bool
ss_jscan_utf8(const char *s, const char *e)
{
	const unsigned char *p = (const unsigned char *)s, *end = (const unsigned char *)e;

	while (p < end) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		size_t n = utf8_seq(p, end);
		if (n == 0)
			return false;
		p += n;
	}
	return true;
}

bool
ss_jscan_quote(ss_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	bool clean = true;

	ss_buf_addc(b, '"');
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
			p++;
		ss_buf_add(b, run, (size_t)(p - run));
		if (p == end)
			break;
		unsigned c = *p;
		if (c >= 0x80) {
			size_t len = utf8_seq(p, end);
			if (len == 0) {
				ss_buf_add(b, "\\ufffd", 6);
				clean = false;
				p++;
			} else {
				ss_buf_add(b, p, len);
				p += len;
			}
			continue;
		}
		p++;
		switch (c) {
		case '"': ss_buf_add(b, "\\\"", 2); break;
		case '\\': ss_buf_add(b, "\\\\", 2); break;
		case '\n': ss_buf_add(b, "\\n", 2); break;
		case '\t': ss_buf_add(b, "\\t", 2); break;
		case '\r': ss_buf_add(b, "\\r", 2); break;
		case '\b': ss_buf_add(b, "\\b", 2); break;
		case '\f': ss_buf_add(b, "\\f", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			ss_buf_add(b, u, 6);
		}
		}
	}
	ss_buf_addc(b, '"');
	return clean;
}

static int
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
static long
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

/* The SIMD width the string scanner uses, chosen once: AVX2 where the CPU has it, else
 * SSE2 (always there on x86-64), else the portable loop. SS_SIMD=portable|sse2|avx2
 * asks for a narrower one (the tests run every path on the same inputs). */
enum simd { SIMD_PORTABLE, SIMD_SSE2, SIMD_AVX2 };
static enum simd simd_level = SIMD_PORTABLE;

#ifdef SS_X86_SIMD
__attribute__((constructor)) static void
choose_simd(void)
{
	const char *want = getenv("SS_SIMD");

	__builtin_cpu_init();
	simd_level = __builtin_cpu_supports("avx2") ? SIMD_AVX2 : SIMD_SSE2;
	if (want != NULL && strcmp(want, "portable") == 0)
		simd_level = SIMD_PORTABLE;
	else if (want != NULL && strcmp(want, "sse2") == 0)
		simd_level = SIMD_SSE2;
}

/* 32 bytes a time; what is left (under 32) goes to the SSE2 loop. */
__attribute__((target("avx2"))) static const unsigned char *
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

static const unsigned char *
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
static const unsigned char *
skip_plain(const unsigned char *q, const unsigned char *e)
{
#ifdef SS_X86_SIMD
	if (simd_level == SIMD_AVX2 && e - q >= 32) {
		q = skip_plain_avx2(q, e);
		if (q == e || !plain_ascii[*q])
			return q;
	}
	if (simd_level >= SIMD_SSE2) {
		q = skip_plain_sse2(q, e);
		if (q == e || !plain_ascii[*q])
			return q;
	}
#endif
	while (q < e && plain_ascii[*q])
		q++;
	return q;
}

/* p at the opening quote; returns the byte after the closing quote or NULL. */
static const char *
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
			if (e - q < 2)
				break;
			c = q[1];
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

static const char *
scan_number(const char *p, const char *end, const char **why)
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
scan_literal(const char *p, const char *end, const char *word, const char **why)
{
	size_t n = strlen(word);

	if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) {
		*why = "invalid literal";
		return NULL;
	}
	return p + n;
}

/* Iterative, so hostile nesting costs no stack: containers[] remembers '{' or '['.
 * At most maxdepth containers deep (MAX_DEPTH for a whole document). */
static const char *
scan_value(const char *p, const char *end, const char **why, int maxdepth)
{
	char containers[MAX_DEPTH];
	int depth = 0;
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
			if (depth == maxdepth) {
				*why = "nesting too deep";
				return NULL;
			}
			containers[depth++] = *p;
			p = ss_jscan_skip_ws(p + 1, end);
			if (p < end && *p == (containers[depth - 1] == '{' ? '}' : ']')) {
				depth--;
				p++;
				goto after_value;
			}
			if (containers[depth - 1] == '{')
				goto object_key;
			continue;
		case '"':
			p = scan_string(p, end, why);
			break;
		case 't':
			p = scan_literal(p, end, "true", why);
			break;
		case 'f':
			p = scan_literal(p, end, "false", why);
			break;
		case 'n':
			p = scan_literal(p, end, "null", why);
			break;
		default:
			if (*p == '-' || (*p >= '0' && *p <= '9'))
				p = scan_number(p, end, why);
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
		if ((p = scan_string(p, end, why)) == NULL)
			return NULL;
		p = ss_jscan_skip_ws(p, end);
		if (p >= end || *p != ':') {
			*why = "expected ':'";
			return NULL;
		}
		p++;
	}
}

const char *
ss_jscan_value(const char *p, const char *end, const char **why)
{
	return scan_value(p, end, why, MAX_DEPTH);
}

/* The members of the object at p (its '{'), validated as scan_value would: returns the
 * byte after its '}' or NULL (*why set); *n = SIZE_MAX when it has more than max. */
static const char *
scan_members(const char *p, const char *end, struct ss_jmember *m, size_t max, size_t *n,
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
		if ((p = scan_string(p, end, why)) == NULL)
			return NULL;
		const char *ke = p;
		p = ss_jscan_skip_ws(p, end);
		if (p >= end || *p != ':') {
			*why = "expected ':'";
			return NULL;
		}
		p = ss_jscan_skip_ws(p + 1, end);
		const char *vs = p;
		if ((p = scan_value(p, end, why, MAX_DEPTH - 1)) == NULL)
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
value_ends_document(const char *p, const char *end, const char **why)
{
	if (p == NULL)
		return false;
	if (ss_jscan_skip_ws(p, end) != end) {
		*why = "unexpected text after the JSON value";
		return false;
	}
	return true;
}

bool
ss_jscan_document_members(const char *p, const char *end, struct ss_jmember *m, size_t max,
			  size_t *n, const char **why)
{
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	p = ss_jscan_skip_ws(p, end);
	*n = SIZE_MAX;
	if (p < end && *p == '{')
		p = scan_members(p, end, m, max, n, why);
	else
		p = ss_jscan_value(p, end, why);
	return value_ends_document(p, end, why);
}

bool
ss_jscan_document(const char *p, const char *end, const char **why)
{
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	return value_ends_document(ss_jscan_value(p, end, why), end, why);
}

/* ---- plain paths ---- */

struct step {
	char *key; /* NULL for an index */
	size_t keylen;
	long index;
};

struct ss_jpath {
	int nsteps;
	struct step steps[];
};

static bool
is_ident(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* Parse a quoted key with simple escapes only (\" and \\); NULL otherwise. */
static const char *
parse_quoted(const char *s, struct step *st)
{
	const char *q = s + 1;
	char *out = malloc(strlen(s) + 1);
	size_t n = 0;

	if (out == NULL)
		return NULL;
	while (*q && *q != '"') {
		if (*q == '\\') {
			if (q[1] != '"' && q[1] != '\\')
				break;
			q++;
		}
		out[n++] = *q++;
	}
	if (*q != '"') {
		free(out);
		return NULL;
	}
	st->key = out;
	st->keylen = n;
	return q + 1;
}

void
ss_jpath_free(struct ss_jpath *jp)
{
	for (int i = 0; i < jp->nsteps; i++)
		free(jp->steps[i].key);
	free(jp);
}

struct ss_jpath *
ss_jpath_parse(const char *expr)
{
	size_t cap = strlen(expr) + 1;
	struct ss_jpath *jp = calloc(1, sizeof *jp + cap * sizeof(struct step));
	const char *s = expr;

	if (jp == NULL)
		return NULL;
	while (*s == ' ')
		s++;
	/* jq reads invalid UTF-8 in a key as U+FFFD: leave such paths to jq */
	if (*s != '.' || !ss_jscan_utf8(expr, expr + cap - 1))
		goto no;
	if (s[1] == '\0' || (s[1] == ' ' && s[strspn(s + 1, " ") + 1] == '\0'))
		return jp; /* identity */
	while (*s && *s != ' ') {
		struct step *st = &jp->steps[jp->nsteps];
		if (*s == '.' && is_ident(s[1], true)) {
			const char *b = ++s;
			while (is_ident(*s, false))
				s++;
			st->keylen = (size_t)(s - b);
			st->key = strndup(b, st->keylen);
			/* jq 1.6 lexes .e5 as a number (then fails): not a path for jq */
			if ((*b == 'e' || *b == 'E') && st->keylen > 1 && strspn(b + 1, "0123456789") == st->keylen - 1)
				goto no;
		} else if (*s == '.' && s[1] == '"') {
			if ((s = parse_quoted(s + 1, st)) == NULL)
				goto no;
		} else if (*s == '[' || (*s == '.' && s[1] == '[' && jp->nsteps == 0)) {
			/* .[0] starts a path; jq 1.6 has no .a.[0] (libjq is compiled lazily for
			 * plain paths, so jpath must refuse what jq would) */
			s += *s == '.' ? 2 : 1;
			if (*s == '"') {
				if ((s = parse_quoted(s, st)) == NULL || *s != ']')
					goto no;
			} else {
				char *e;
				if (*s < '0' || *s > '9')
					goto no;
				st->index = strtol(s, &e, 10);
				if (*e != ']' || st->index > 1000000000)
					goto no;
				s = e;
			}
			s++;
		} else
			goto no;
		jp->nsteps++;
	}
	while (*s == ' ')
		s++;
	if (*s)
		goto no;
	return jp;
no:
	free(jp->steps[jp->nsteps].key); /* a step parsed but not counted */
	ss_jpath_free(jp);
	return NULL;
}

/* UTF-8 bytes of code point cp into out; returns their count. */
static size_t
utf8_put(unsigned long cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Decode the \u escape at q (after the 'u') of a valid string, as jq does: a surrogate
 * pair is one code point, a lone low surrogate U+FFFD. Advances *q. */
static unsigned long
unescape_u(const char **q, const char *end)
{
	const unsigned char *u = (const unsigned char *)*q;
	unsigned long cp = (unsigned long)hex4(u, (const unsigned char *)end);

	*q += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF) { /* jscan checked that the low half follows */
		cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned long)hex4(u + 6, (const unsigned char *)end) - 0xDC00);
		*q += 6;
	} else if (cp >= 0xDC00 && cp <= 0xDFFF)
		cp = 0xFFFD;
	return cp;
}

/* The bytes the escape at *q (after its backslash) of a valid string stands for, into
 * c; returns their count (up to 4) and advances *q past the escape. */
static size_t
unescape_one(const char **q, const char *end, char c[4])
{
	switch (*(*q)++) {
	case 'b': c[0] = '\b'; return 1;
	case 'f': c[0] = '\f'; return 1;
	case 'n': c[0] = '\n'; return 1;
	case 'r': c[0] = '\r'; return 1;
	case 't': c[0] = '\t'; return 1;
	case 'u': return utf8_put(unescape_u(q, end), c);
	default: c[0] = (*q)[-1]; return 1;
	}
}

void
ss_jscan_unescape(ss_buf *b, const char *p, const char *end)
{
	const char *q = p + 1, *e = end - 1, *run;
	char c[4];

	while (q < e) {
		for (run = q; q < e && *q != '\\'; q++)
			;
		ss_buf_add(b, run, (size_t)(q - run));
		if (q == e)
			break;
		q++;
		ss_buf_add(b, c, unescape_one(&q, e, c));
	}
}

/* Compare a raw JSON string literal [p,e) (quotes included) with key; handles escapes. */
static bool
key_equals(const char *p, const char *e, const char *key, size_t keylen)
{
	const char *q = p + 1, *end = e - 1;
	size_t i = 0;

	if (memchr(q, '\\', (size_t)(end - q)) == NULL)
		return (size_t)(end - q) == keylen && memcmp(q, key, keylen) == 0;
	while (q < end) {
		char c[4];
		size_t n = 1;
		c[0] = *q++;
		if (c[0] == '\\')
			n = unescape_one(&q, end, c);
		if (keylen - i < n || memcmp(key + i, c, n) != 0)
			return false;
		i += n;
	}
	return i == keylen;
}

/* Within the object at p, find the LAST member named key (jq keeps the last duplicate). */
static bool
find_member(const char *p, const char *end, const struct step *st, const char **vs, const char **ve)
{
	const char *why;
	bool found = false;

	/* the document is usually valid; where it is not (a quick look at a line before it
	 * is validated), nothing is found and nothing past end is read */
	p = ss_jscan_skip_ws(p + 1, end);
	if (p >= end || *p != '"')
		return false;
	for (;;) {
		const char *ks = p, *ke = scan_string(p, end, &why);
		if (ke == NULL || (p = ss_jscan_skip_ws(ke, end)) >= end || *p != ':')
			return false;
		p = ss_jscan_skip_ws(p + 1, end);
		const char *v = p;
		if ((p = ss_jscan_value(p, end, &why)) == NULL)
			return false;
		if (key_equals(ks, ke, st->key, st->keylen)) {
			*vs = v;
			*ve = p;
			found = true;
		}
		p = ss_jscan_skip_ws(p, end);
		if (p < end && *p == '}')
			return found;
		if (p >= end || *p != ',' || (p = ss_jscan_skip_ws(p + 1, end)) >= end || *p != '"')
			return false;
	}
}

static bool
find_element(const char *p, const char *end, long index, const char **vs, const char **ve)
{
	const char *why;

	p = ss_jscan_skip_ws(p + 1, end);
	if (p >= end || *p == ']')
		return false;
	for (long i = 0;; i++) {
		const char *v = p;
		if ((p = ss_jscan_value(p, end, &why)) == NULL)
			return false;
		if (i == index) {
			*vs = v;
			*ve = p;
			return true;
		}
		p = ss_jscan_skip_ws(p, end);
		if (p >= end || *p != ',')
			return false;
		p = ss_jscan_skip_ws(p + 1, end);
	}
}

int
ss_jpath_nsteps(const struct ss_jpath *path)
{
	return path->nsteps;
}

const char *
ss_jpath_key(const struct ss_jpath *path, int i, size_t *len)
{
	*len = path->steps[i].keylen;
	return path->steps[i].key;
}

bool
ss_jpath_find(const struct ss_jpath *path, const char *p, const char *end,
	      const char **vstart, const char **vend, bool *type_error)
{
	return ss_jpath_find_from(path, 0, p, end, vstart, vend, type_error);
}

bool
ss_jpath_find_from(const struct ss_jpath *path, int from, const char *p, const char *end,
		   const char **vstart, const char **vend, bool *type_error)
{
	const char *why;

	*type_error = false;
	p = ss_jscan_skip_ws(p, end);
	const char *e = end; /* the document is valid: members are found before its end */
	for (int i = from; i < path->nsteps; i++) {
		const struct step *st = &path->steps[i];
		if (p >= e || *p == 'n')
			return false; /* null indexed by anything is null */
		if (st->key && *p == '{') {
			if (!find_member(p, e, st, &p, &e))
				return false;
		} else if (!st->key && *p == '[') {
			if (!find_element(p, e, st->index, &p, &e))
				return false;
		} else {
			*type_error = true;
			return false;
		}
	}
	if (from == path->nsteps && (e = ss_jscan_value(p, end, &why)) == NULL)
		return *type_error = true, false;
	*vstart = p;
	*vend = e;
	return true;
}

bool
ss_jpath_find_in(const struct ss_jpath *path, const char *p, const char *end,
		 const struct ss_jmember *m, size_t n, const char **vstart, const char **vend,
		 bool *type_error)
{
	const struct step *st = &path->steps[0];

	if (m == NULL || n == SIZE_MAX || path->nsteps == 0 || st->key == NULL)
		return ss_jpath_find(path, p, end, vstart, vend, type_error);
	*type_error = false;
	for (size_t i = n; i-- > 0;) /* the last duplicate, as jq keeps it */
		if (key_equals(m[i].key, m[i].keyend, st->key, st->keylen))
			return ss_jpath_find_from(path, 1, m[i].value, m[i].valueend, vstart, vend, type_error);
	return false;
}
