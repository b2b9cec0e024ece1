/* Plain paths (ss_jpath_*) found in raw JSON, and string literals unescaped (see jscan.h). */
#include "base/jscan.h"
#include "base/jscan_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct step {
	char *key; /* NULL for an index */
	size_t keylen;
	bool backslash; /* the key holds one (then a raw key of its length may be escaped) */
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
		st->backslash = st->key != NULL && memchr(st->key, '\\', st->keylen) != NULL;
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

/* key_equals of a raw key that may hold an escape: decoded as it is compared. */
__attribute__((noinline)) static bool
key_equals_escaped(const char *q, const char *end, const struct step *st)
{
	size_t i = 0, keylen = st->keylen;
	const char *key = st->key;

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

/* Are the n bytes at a those at b? Keys are short: up to 16 bytes are compared by two
 * overlapping loads a side, none past a + n or b + n (a byte-by-byte loop here was 4% of
 * a join's instructions on the seed's records, two keys of 7 and 9 bytes). */
static inline bool
same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t a0, a1, b0, b1;
	uint32_t c0, c1, d0, d1;
	uint16_t e0, e1, f0, f1;

	if (n > 16)
		return memcmp(a, b, n) == 0;
	if (n >= 8) {
		memcpy(&a0, a, 8), memcpy(&a1, a + n - 8, 8);
		memcpy(&b0, b, 8), memcpy(&b1, b + n - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	if (n >= 4) {
		memcpy(&c0, a, 4), memcpy(&c1, a + n - 4, 4);
		memcpy(&d0, b, 4), memcpy(&d1, b + n - 4, 4);
		return ((c0 ^ d0) | (c1 ^ d1)) == 0;
	}
	if (n >= 2) {
		memcpy(&e0, a, 2), memcpy(&e1, a + n - 2, 2);
		memcpy(&f0, b, 2), memcpy(&f1, b + n - 2, 2);
		return ((e0 ^ f0) | (e1 ^ f1)) == 0;
	}
	return n == 0 || a[0] == b[0];
}

/* May [q, q+n) hold a backslash? False only where it holds none: keys are short, and up
 * to 16 bytes are looked at by two overlapping loads, as same_bytes compares (a byte is a
 * backslash where x ^ 0x5c is zero, and zero where (x - 1) & ~x has its high bit); a
 * longer key is left to key_equals_escaped, which decodes it as it compares. Inline:
 * "temp" and "text" against .ts went through that call in every weather record. */
static inline bool
may_hold_escape(const char *q, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t a, b;
	uint32_t c, d;

	if (n > 16)
		return true;
	if (n >= 8) {
		memcpy(&a, q, 8), memcpy(&b, q + n - 8, 8);
	} else if (n >= 4) {
		memcpy(&c, q, 4), memcpy(&d, q + n - 4, 4);
		a = c, b = d;
	} else
		return (n > 0 && q[0] == '\\') || (n > 1 && q[1] == '\\') || (n > 2 && q[2] == '\\');
	a ^= 0x5c5c5c5c5c5c5c5cu;
	b ^= 0x5c5c5c5c5c5c5c5cu;
	return (((a - ones) & ~a) | ((b - ones) & ~b)) & highs;
}

/* Compare a raw JSON string literal [p,e) (quotes included) with key; handles escapes.
 * Inline, the escapes apart: it runs for every member passed on the way to a path (2-3
 * per path in a record), and as a call it was 5% of a join's CPU samples, most of them
 * its prologue and epilogue (wide shape, perf). */
__attribute__((always_inline)) static inline bool
key_equals(const char *p, const char *e, const struct step *st)
{
	const char *q = p + 1, *end = e - 1;
	size_t rawlen = (size_t)(end - q), keylen = st->keylen;
	const char *key = st->key;

	/* an escape only ever shortens a key: a raw key of the same length has none (unless
	 * the key itself holds a backslash), a shorter one cannot match, and a longer one
	 * only through an escape */
	if (rawlen == keylen && !st->backslash)
		return same_bytes(q, key, keylen);
	if (rawlen < keylen || (keylen > 0 && q[0] != key[0] && q[0] != '\\'))
		return false; /* too short, or its first character is another */
	if (!may_hold_escape(q, rawlen))
		return false; /* no escape: another length, or a backslash the key has and it not */
	return key_equals_escaped(q, end, st);
}

/* The byte after the string literal at p (its opening quote), not checked: only its
 * closing quote is looked for. NULL when it has none before end. */
static const char *
skip_string_unchecked(const char *p, const char *end)
{
	const unsigned char *q = (const unsigned char *)p + 1, *e = (const unsigned char *)end;

	while ((q = skip_to_quote(q, e)) < e) {
		if (*q == '"')
			return (const char *)q + 1;
		q += 2; /* a backslash and what it escapes */
	}
	return NULL;
}

/* What a quick look stops at: within a container, the bytes that open or close a string
 * or a container; after a scalar, the bytes that may follow a value. */
static const bool in_container_stop[256] = {['"'] = true, ['{'] = true, ['['] = true, ['}'] = true, [']'] = true};
static const bool scalar_stop[256] = {
	[','] = true, ['}'] = true, [']'] = true, [' '] = true, ['\t'] = true, ['\n'] = true, ['\r'] = true,
};

/* The byte after the container at p ('{' or '['), by its brackets alone; NULL when it
 * does not close before end. */
static const char *
skip_container_unchecked(const char *p, const char *end)
{
	size_t depth = 0;

	for (; p < end; p++) {
		while (p < end && !in_container_stop[(unsigned char)*p])
			p++;
		if (p == end)
			break;
		if (*p == '"') {
			if ((p = skip_string_unchecked(p, end)) == NULL)
				return NULL;
			p--; /* the loop steps past the closing quote */
		} else if (*p == '{' || *p == '[')
			depth++;
		else if (--depth == 0)
			return p + 1;
	}
	return NULL;
}

/* The byte after the value at p, found by its structure alone: strings by their closing
 * quote, containers by their brackets, scalars by what may follow them; nothing is
 * checked. On valid JSON, where ss_jscan_value ends; on anything else, somewhere up to
 * end or NULL, and nothing past end is read. For a quick look at a line not validated
 * yet, and for the values skipped in a document validated before. */
static const char *
skip_unchecked(const char *p, const char *end)
{
	if (p < end && *p == '"')
		return skip_string_unchecked(p, end);
	if (p < end && (*p == '{' || *p == '['))
		return skip_container_unchecked(p, end);
	/* a number's digits 8 at a time (times in epoch ms, ids), then its other bytes */
	p = skip_digits(p + (p < end && *p == '-'), end);
	while (p < end && !scalar_stop[(unsigned char)*p])
		p++;
	return p;
}

/* The byte after the value at p: validated (ss_jscan_value), or found by its structure
 * alone for a quick look (skip_unchecked). */
static const char *
skip_value(const char *p, const char *end, bool look)
{
	const char *why;

	return look ? skip_unchecked(p, end) : ss_jscan_value(p, end, &why);
}

/* The byte after the key at p (its opening quote), or NULL. A look only looks for its
 * closing quote, unless it has an escape: key_equals decodes escapes checked before. */
static const char *
key_end(const char *p, const char *end, bool look)
{
	const char *why;

	if (look) {
		const unsigned char *q = skip_to_quote((const unsigned char *)p + 1, (const unsigned char *)end);
		if (q < (const unsigned char *)end && *q == '"')
			return (const char *)q + 1;
	}
	return scan_string(p, end, &why);
}

#ifdef SS_X86_SIMD
/* The candidates (see next_key_candidate) among the 16 positions from q: bit i for q + i
 * (the 18 bytes from q are read). */
static inline unsigned
key_candidates16(const char *q, char c, char c2)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
	__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(q + 1));
	__m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(q + 2));
	__m128i second = _mm_or_si128(_mm_cmpeq_epi8(v2, _mm_set1_epi8(c2)), _mm_cmpeq_epi8(v2, bslash));
	__m128i key = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v1, _mm_set1_epi8(c))),
				    second);
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, bslash), key));
}

/* The same 32 positions at a time, from *q while 34 bytes are left: the first candidate,
 * or NULL with *q past the positions looked at. */
__attribute__((target("avx2"))) static inline const char *
key_candidate_avx2(const char **q, const char *e, char c, char c2)
{
	const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
	const __m256i first = _mm256_set1_epi8(c), second = _mm256_set1_epi8(c2);

	for (const char *p = *q; e - p > 33; p += 32, *q = p) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 1));
		__m256i v2 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 2));
		__m256i next = _mm256_or_si256(_mm256_cmpeq_epi8(v2, second), _mm256_cmpeq_epi8(v2, bslash));
		__m256i key = _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v1, first)),
					       next);
		unsigned mask = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, bslash), key));
		if (mask != 0)
			return p + __builtin_ctz(mask);
	}
	return NULL;
}
#endif

/* The first byte at or after q (before e) that is a backslash, or a quote followed by c
 * and then c2 or a backslash: where a key that starts with c c2 (c2 the closing quote of
 * a key of one character), or an escape, may be; e if there is none. The bytes from lo
 * (at most q) on may be read. Two characters, not one: a look for .ts met "temp" and
 * "text" in every weather record, each a stop out of the loop (a third of a look's
 * instructions in an order check, wide shape). */
static const char *
next_key_candidate(const char *lo, const char *q, const char *e, char c, char c2)
{
#ifdef SS_X86_SIMD
	const char *hit;
	if (ss_jscan_simd >= SIMD_AVX2 && (hit = key_candidate_avx2(&q, e, c, c2)) != NULL)
		return hit;
	if (ss_jscan_simd >= SIMD_SSE2) {
		for (; e - q > 17; q += 16) {
			unsigned mask = key_candidates16(q, c, c2);
			if (mask != 0)
				return q + __builtin_ctz(mask);
		}
		/* the last positions but two by a load of the 18 bytes before e, those before q
		 * masked off (a byte at a time, they were a tenth of a look's instructions on
		 * short records) */
		if (e - q > 2 && e - lo > 17) {
			const char *b = e - 18; /* q - b is 1 to 15 */
			unsigned mask = key_candidates16(b, c, c2) & (~0u << (q - b));
			if (mask != 0)
				return b + __builtin_ctz(mask);
			q = e - 2;
		}
	}
#endif
	for (; q < e; q++)
		if (*q == '\\' || (*q == '"' && e - q > 2 && q[1] == c && (q[2] == c2 || q[2] == '\\')))
			return q;
	return e;
}

/* Could a member named st's key be in [p, end), where p is past a member (outside any
 * string)? Every such key is written between quotes, as its own bytes or with an escape:
 * where neither is found, no such member follows. An escape inside a string is stepped
 * over as the pair it is (so an escaped quote opens nothing), unless it may be part of
 * the key: right after a quote, or where a candidate key goes on with it. Before, any
 * backslash said "may follow", and a text field with one escape (a quote, a newline)
 * sent every look on through the rest of its line, member by member. */
static bool
key_may_follow(const char *p, const char *end, const struct step *st)
{
	size_t n = st->keylen;

	if (n == 0)
		return true;
	char c2 = n > 1 ? st->key[1] : '"';
	for (const char *q = p; (q = next_key_candidate(p, q, end, st->key[0], c2)) < end;) {
		if (*q == '\\') {
			if (q > p && q[-1] == '"')
				return true; /* a key that starts with an escape */
			q = end - q > 2 ? q + 2 : end;
			continue;
		}
		size_t i = 1; /* (keys are short: compared here, not by a call) */
		while (i < n && q + 1 + i < end && q[1 + i] == st->key[i])
			i++;
		if (q + 1 + i < end && q[1 + i] == (i == n ? '"' : '\\'))
			return true; /* the key, or one that may be it written with an escape */
		q++;
	}
	return false;
}

/* Does [p, end) end with the object's '}' (JSON's white space after it)? A look takes
 * an object cut short for one without the member, as the whole scan does. */
static bool
ends_object(const char *p, const char *end)
{
	while (end > p && ss_jscan_is_ws(end[-1]))
		end--;
	return end > p && end[-1] == '}';
}

/* Within the object at p, find the LAST member named key (jq keeps the last duplicate).
 * A look stops at a match that no later member can repeat: on a valid document it finds
 * what the whole scan finds; on another it may find a value where the scan finds none,
 * as a look may (ss_jpath_look). */
static bool
find_member(const char *p, const char *end, const struct step *st, bool look, const char **vs,
	    const char **ve)
{
	bool found = false;

	/* the document is usually valid; where it is not (ss_jpath_find or ss_jpath_look on
	 * a line not validated yet), nothing past end is read */
	p = ss_jscan_skip_ws(p + 1, end);
	if (p >= end || *p != '"')
		return false;
	for (;;) {
		const char *ks = p, *ke = key_end(p, end, look);
		if (ke == NULL || (p = ss_jscan_skip_ws(ke, end)) >= end || *p != ':')
			return false;
		p = ss_jscan_skip_ws(p + 1, end);
		const char *v = p;
		if ((p = skip_value(p, end, look)) == NULL)
			return false;
		if (key_equals(ks, ke, st)) {
			*vs = v;
			*ve = p;
			found = true;
			if (look && ends_object(p, end) && !key_may_follow(p, end, st))
				return true;
		}
		p = ss_jscan_skip_ws(p, end);
		if (p < end && *p == '}')
			return found;
		if (p >= end || *p != ',' || (p = ss_jscan_skip_ws(p + 1, end)) >= end || *p != '"')
			return false;
	}
}

static bool
find_element(const char *p, const char *end, long index, bool look, const char **vs, const char **ve)
{
	p = ss_jscan_skip_ws(p + 1, end);
	if (p >= end || *p == ']')
		return false;
	for (long i = 0;; i++) {
		const char *v = p;
		if ((p = skip_value(p, end, look)) == NULL)
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

struct ss_jpath *
ss_jpath_step(const struct ss_jpath *path, int i)
{
	const struct step *st = &path->steps[i];
	struct ss_jpath *one = malloc(sizeof *one + sizeof(struct step));

	if (one == NULL)
		return NULL;
	one->nsteps = 1;
	one->steps[0] = *st;
	if (st->key == NULL)
		return one;
	if ((one->steps[0].key = malloc(st->keylen + 1)) == NULL) {
		free(one);
		return NULL;
	}
	memcpy(one->steps[0].key, st->key, st->keylen);
	one->steps[0].key[st->keylen] = '\0';
	return one;
}

bool
ss_jpath_find(const struct ss_jpath *path, const char *p, const char *end,
	      const char **vstart, const char **vend, bool *type_error)
{
	return ss_jpath_find_from(path, 0, p, end, vstart, vend, type_error);
}

/* ---- a look along several steps, in one pass ---- */

/* The value of the FIRST member of the object at p named st's key (unchecked, as a look
 * reads), or NULL where it has none or its structure breaks before. */
static const char *
first_member(const char *p, const char *end, const struct step *st)
{
	p = ss_jscan_skip_ws(p + 1, end);
	while (p < end && *p == '"') {
		const char *ks = p, *ke = key_end(p, end, true);
		if (ke == NULL || (p = ss_jscan_skip_ws(ke, end)) >= end || *p != ':')
			return NULL;
		p = ss_jscan_skip_ws(p + 1, end);
		if (key_equals(ks, ke, st))
			return p;
		if ((p = skip_unchecked(p, end)) == NULL || (p = ss_jscan_skip_ws(p, end)) >= end || *p != ',')
			return NULL;
		p = ss_jscan_skip_ws(p + 1, end);
	}
	return NULL;
}

/* Could a member named as any step's key (from `from` on) be in [p, end)? */
static bool
keys_may_follow(const struct ss_jpath *path, int from, const char *p, const char *end)
{
	for (int i = from; i < path->nsteps; i++)
		if (path->steps[i].key != NULL && key_may_follow(p, end, &path->steps[i]))
			return true;
	return false;
}

/* A look along the steps from `from` on (two or more) that goes into the FIRST member of
 * each key as soon as it meets it: 1 found, 0 not there, -1 not known this way (find_path
 * then looks member by member). What it finds is what jq finds (the LAST member of each
 * key) when no member of any step's key can follow the value found: every later
 * duplicate, at any depth, would follow it. Before, each step skipped the member's whole
 * value to its end, then looked into it: twice over an envelope's "value" for a look at
 * .value.ts in records from ss-consume. */
static int
look_first(const struct ss_jpath *path, int from, const char *p, const char *end, const char **vs,
	   const char **ve, bool *type_error)
{
	for (int i = from; i < path->nsteps; i++) {
		const struct step *st = &path->steps[i];
		const char *e;
		bool ok;
		if ((p = ss_jscan_skip_ws(p, end)) >= end)
			return -1;
		if (st->key && *p == '{')
			ok = (p = first_member(p, end, st)) != NULL;
		else if (!st->key && *p == '[')
			ok = find_element(p, end, st->index, true, &p, &e);
		else /* null indexed by anything is null; anything else, an error */
			ok = false, *type_error = *p != 'n';
		/* (past the first step, what is not found may be in a later duplicate) */
		if (!ok)
			return i == from ? 0 : (*type_error = false, -1);
	}
	if ((*ve = skip_unchecked(p, end)) == NULL || !ends_object(*ve, end) || keys_may_follow(path, from, *ve, end))
		return -1;
	*vs = p;
	return 1;
}

/* The steps from `from` on, values validated on the way, or skipped for a quick look. */
static bool
find_path(const struct ss_jpath *path, int from, bool look, const char *p, const char *end,
	  const char **vstart, const char **vend, bool *type_error)
{
	*type_error = false;
	if (look && path->nsteps - from >= 2) {
		int found = look_first(path, from, p, end, vstart, vend, type_error);
		if (found >= 0)
			return found;
	}
	p = ss_jscan_skip_ws(p, end);
	const char *e = end; /* the document is valid: members are found before its end */
	for (int i = from; i < path->nsteps; i++) {
		const struct step *st = &path->steps[i];
		if (p >= e || *p == 'n')
			return false; /* null indexed by anything is null */
		if (st->key && *p == '{') {
			if (!find_member(p, e, st, look, &p, &e))
				return false;
		} else if (!st->key && *p == '[') {
			if (!find_element(p, e, st->index, look, &p, &e))
				return false;
		} else {
			*type_error = true;
			return false;
		}
	}
	if (from == path->nsteps && (e = skip_value(p, end, look)) == NULL)
		return *type_error = true, false;
	*vstart = p;
	*vend = e;
	return true;
}

bool
ss_jpath_find_from(const struct ss_jpath *path, int from, const char *p, const char *end,
		   const char **vstart, const char **vend, bool *type_error)
{
	return find_path(path, from, false, p, end, vstart, vend, type_error);
}

bool
ss_jpath_look(const struct ss_jpath *path, const char *p, const char *end, const char **vstart,
	      const char **vend)
{
	bool type_error;

	return find_path(path, 0, true, p, end, vstart, vend, &type_error);
}

bool
ss_jpath_look_from(const struct ss_jpath *path, int from, const char *p, const char *end,
		   const char **vstart, const char **vend, bool *type_error)
{
	return find_path(path, from, true, p, end, vstart, vend, type_error);
}

/* key_equals for a member the validator noted: where it met no escape in the key, the
 * key's bytes are its name, and a length compare tells most members apart (before, each
 * key of another length but the same first character was looked at for a backslash:
 * ~13 compares a record for --on, --by and --select, wide shape) */
static inline bool
noted_key_equals(const struct ss_jmember *m, const struct step *st)
{
	if (m->esc)
		return key_equals(m->key, m->keyend, st);
	size_t rawlen = (size_t)(m->keyend - m->key) - 2;
	return rawlen == st->keylen && same_bytes(m->key + 1, st->key, rawlen);
}

/* The path's second step (a key) among the members of its first step's value, noted
 * while validating (sub[0..n), the last first: see struct ss_jmember), and its other
 * steps from there. A look into that value went over its members again for each path:
 * ~450 instructions of ~5,200 a record for .meta.station on the wide shape. */
static bool
find_in_nested(const struct ss_jpath *path, const struct ss_jmember *sub, size_t n, const char **vstart,
	       const char **vend, bool *type_error)
{
	for (size_t i = 0; i < n; i++) {
		if (!noted_key_equals(&sub[i], &path->steps[1]))
			continue;
		if (path->nsteps > 2)
			return find_path(path, 2, true, sub[i].value, sub[i].valueend, vstart, vend, type_error);
		*vstart = sub[i].value;
		*vend = sub[i].valueend;
		return true;
	}
	return false; /* an object without it: null */
}

bool
ss_jpath_find_in(const struct ss_jpath *path, const char *p, const char *end,
		 const struct ss_jmember *m, size_t n, const char **vstart, const char **vend,
		 bool *type_error)
{
	const struct step *st = &path->steps[0];

	if (m == NULL)
		return ss_jpath_find(path, p, end, vstart, vend, type_error);
	/* validated whole, so a look finds the same; a validating find here was a second
	 * validation of every member up to the last (2.1x a join's CPU on records of 33
	 * members) */
	if (n == SIZE_MAX || path->nsteps == 0 || st->key == NULL)
		return find_path(path, 0, true, p, end, vstart, vend, type_error);
	*type_error = false;
	for (size_t i = n; i-- > 0;) { /* the last duplicate, as jq keeps it */
		if (!noted_key_equals(&m[i], st))
			continue;
		if (path->nsteps > 1 && path->steps[1].key != NULL && *m[i].value == '{' && m[i].nsub != SS_JSUB_NONE)
			return find_in_nested(path, m + m[i].sub, m[i].nsub, vstart, vend, type_error);
		if (path->nsteps > 1) /* in a document validated whole: a look finds the same */
			return find_path(path, 1, true, m[i].value, m[i].valueend, vstart, vend, type_error);
		*vstart = m[i].value; /* the member itself: validated when it was noted */
		*vend = m[i].valueend;
		return true;
	}
	return false;
}

