/* A validating JSON scanner that works on raw bytes and builds nothing (see jscan.h). */
#include "base/jscan.h"
#include "base/jscan_blocks.h"
#include "base/jscan_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* jq 1.6's parser refuses to open a container when this many slots of its stack are in
 * use: one for each array around it, two for each object (the object, and the key of the
 * member the container is the value of). Agree with it, so that libjq parses every
 * record ss accepts: 256 arrays deep, 128 objects. */
#define MAX_SLOTS 256

/* The slots a container takes for those inside it (see MAX_SLOTS). */
static inline int
slots_of(char open)
{
	return open == '{' ? 2 : 1;
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

static const char *
scan_number(const char *p, const char *end, const char **why)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		p = skip_digits(p, end);
	else
		goto bad;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		p = skip_digits(p, end);
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		p = skip_digits(p, end);
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

/* The byte after the string at p (its opening quote), or NULL (*why set), as scan_string
 * says. With blocks (f not NULL; f->base is where the document starts), only the bytes
 * at stop bits are read: the closing quote, and escapes on the way (scan_escape checks
 * them); the rest are plain or valid UTF-8. A string that meets a control byte, an escape
 * that is wrong or a block with invalid UTF-8 is scanned again byte by byte (the reason
 * and where it is found are scan_string's). *esc is set when the string may hold an
 * escape (it met one, or was scanned byte by byte), left as it is when it holds none. */
__attribute__((always_inline)) static inline const char *
string_end(struct ss_jblocks *f, const char *p, const char *end, bool *esc, const char **why)
{
	const unsigned char *e = (const unsigned char *)end;
	size_t i = f == NULL ? 0 : (size_t)((const unsigned char *)p - f->base) + 1;

	while (f != NULL && i < f->len) {
		size_t k = i / 64 - f->first; /* wraps around below first: out of the window too */
		if (k >= f->count) {
			ss_jblocks_classify(f, i / 64);
			k = 0;
		}
		if (f->bad >> k & 1)
			break;
		uint64_t stop = f->stop[k] >> i % 64;
		if (stop == 0) {
			i = (i | 63) + 1;
			continue;
		}
		const unsigned char *q = f->base + i + __builtin_ctzll(stop);
		if (*q == '"')
			return (const char *)q + 1;
		*esc = true;
		if (*q != '\\' || (q = scan_escape(q, e, why)) == NULL)
			break;
		i = (size_t)(q - f->base);
	}
	*esc = true;
	return scan_string(p, end, why);
}

/* A member's key and its ':' at p (after white space): the value's start (after its white
 * space), or NULL (*why set). */
__attribute__((always_inline)) static inline const char *
member_head(struct ss_jblocks *f, const char *p, const char *end, const char **ks, const char **ke,
	    bool *esc, const char **why)
{
	if (p >= end || *p != '"') {
		*why = "expected a string key";
		return NULL;
	}
	*ks = p;
	*esc = false;
	if ((p = string_end(f, p, end, esc, why)) == NULL)
		return NULL;
	*ke = p;
	p = ss_jscan_skip_ws(p, end);
	if (p >= end || *p != ':') {
		*why = "expected ':'";
		return NULL;
	}
	return ss_jscan_skip_ws(p + 1, end);
}

/* Iterative, so hostile nesting costs no stack: containers[] remembers '{' or '['.
 * Containers take at most maxslots (MAX_SLOTS for a whole document, less for a value
 * inside containers). */
static const char *
scan_value(struct ss_jblocks *f, const char *p, const char *end, const char **why, int maxslots)
{
	char containers[MAX_SLOTS];
	int depth = 0, slots = 0;
	const char *dummy, *ks, *ke; /* (a member's key: not kept here) */
	bool esc;		     /* (nor whether a string may hold an escape) */

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
			if (slots >= maxslots) {
				*why = "nesting too deep";
				return NULL;
			}
			containers[depth++] = *p;
			slots += slots_of(*p);
			p = ss_jscan_skip_ws(p + 1, end);
			if (p < end && *p == (containers[depth - 1] == '{' ? '}' : ']')) {
				slots -= slots_of(containers[--depth]);
				p++;
				goto after_value;
			}
			if (containers[depth - 1] == '{')
				goto object_key;
			continue;
		case '"':
			p = string_end(f, p, end, &esc, why);
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
				slots -= slots_of(open);
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
		if ((p = member_head(f, p, end, &ks, &ke, &esc, why)) == NULL)
			return NULL;
	}
}

/* Blocks for the document [p, end), classified `window` at a time (a whole document:
 * all of a record at once; a value: one, as it may end long before end), or NULL where
 * the portable loop is asked for or the text is too short for blocks to pay. */
static struct ss_jblocks *
blocks_for(struct ss_jblocks *f, const char *p, const char *end, unsigned window)
{
	if (ss_jscan_simd == SIMD_PORTABLE || end - p < 64)
		return NULL;
	/* field by field: the bitmaps are written before they are read */
	f->base = (const unsigned char *)p;
	f->len = (size_t)(end - p);
	f->first = f->count = 0;
	f->window = window;
	return f;
}

const char *
ss_jscan_value(const char *p, const char *end, const char **why)
{
	struct ss_jblocks f;

	return scan_value(blocks_for(&f, p, end, 1), p, end, why, MAX_SLOTS);
}

/* scan_value on a member's value (after its whitespace), its containers taking at most
 * maxslots: strings and numbers, most values, without the call and its container stack. */
__attribute__((always_inline)) static inline const char *
member_value(struct ss_jblocks *f, const char *p, const char *end, const char **why, int maxslots)
{
	bool esc; /* (asked of keys only) */

	if (p < end && *p == '"')
		return string_end(f, p, end, &esc, why);
	if (p < end && (*p == '-' || (*p >= '0' && *p <= '9')))
		return scan_number(p, end, why);
	return scan_value(f, p, end, why, maxslots);
}

/* After a member: the byte after its object's '}' (*closed), or the next member's key,
 * or NULL (*why set). */
__attribute__((always_inline)) static inline const char *
member_next(const char *p, const char *end, bool *closed, const char **why)
{
	p = ss_jscan_skip_ws(p, end);
	if ((*closed = p < end && *p == '}'))
		return p + 1;
	if (p >= end || *p != ',') {
		*why = p >= end ? "unexpected end of input" : "expected ',' or '}'";
		return NULL;
	}
	return ss_jscan_skip_ws(p + 1, end);
}

/* The object at p (its '{'), a member's value in the document's object, validated as
 * scan_value would; its members noted in m from *lo down (m[*lo - 1], m[*lo - 2], ...,
 * so in reverse order), none at or below floor: *sub and *nsub for the member whose value
 * it is, or *nsub SS_JSUB_NONE (and *lo as it was) where they do not fit. */
static const char *
scan_nested(struct ss_jblocks *f, const char *p, const char *end, struct ss_jmember *m, size_t floor,
	    size_t *lo, uint32_t *sub, uint32_t *nsub, const char **why)
{
	size_t top = *lo;
	bool closed, fits = true;

	p = ss_jscan_skip_ws(p + 1, end);
	if ((closed = p < end && *p == '}'))
		p++;
	while (!closed) {
		const char *ks, *ke, *vs;
		bool esc;
		if ((vs = p = member_head(f, p, end, &ks, &ke, &esc, why)) == NULL ||
		    (p = member_value(f, p, end, why, MAX_SLOTS - 2 * slots_of('{'))) == NULL)
			return NULL;
		if (fits && (fits = *lo - 1 > floor))
			m[--*lo] = (struct ss_jmember){ks, ke, vs, p, 0, SS_JSUB_NONE, esc};
		if ((p = member_next(p, end, &closed, why)) == NULL)
			return NULL;
	}
	if (!fits)
		*lo = top;
	*sub = (uint32_t)*lo;
	*nsub = fits ? (uint32_t)(top - *lo) : SS_JSUB_NONE;
	return p;
}

/* Member k's slot holds nested members (k members take the slots up to it): none of
 * m[0..k) keeps its own. Returns where nested members may be noted from, down. */
__attribute__((cold, noinline)) static size_t
unnote_nested(struct ss_jmember *m, size_t k, size_t max)
{
	for (size_t i = 0; i < k; i++)
		m[i].nsub = SS_JSUB_NONE;
	return max;
}

/* The members of the object at p (its '{'), validated as scan_value would: returns the
 * byte after its '}' or NULL (*why set); noted in m[0..*n), *n = SIZE_MAX when it has
 * more than max; with the members of those that are objects noted from m's end down
 * (scan_nested), as long as they leave room for the others. (The count is kept in k, a
 * register, and written to *n as the scan ends; sub and nsub are written for objects
 * only: on records of a few short members, each store and test showed, 3% of them.) */
static const char *
scan_members(struct ss_jblocks *f, const char *p, const char *end, struct ss_jmember *m, size_t max,
	     size_t *n, const char **why)
{
	size_t k = 0, lo = max; /* the nested members noted: m[lo..max) */
	bool closed;

	p = ss_jscan_skip_ws(p + 1, end);
	if ((closed = p < end && *p == '}'))
		p++;
	while (!closed) {
		const char *ks, *ke, *vs;
		bool esc;
		if ((vs = p = member_head(f, p, end, &ks, &ke, &esc, why)) == NULL)
			break;
		if (p >= end || *p != '{' || k >= max) {
			if ((p = member_value(f, p, end, why, MAX_SLOTS - slots_of('{'))) == NULL)
				break; /* (a value in the document's object) */
			if (k < max) {
				if (__builtin_expect(k >= lo, 0))
					lo = unnote_nested(m, k, max);
				m[k].key = ks, m[k].keyend = ke, m[k].value = vs, m[k].valueend = p;
				m[k].esc = esc;
			}
		} else {
			uint32_t sub, nsub;
			if ((p = scan_nested(f, p, end, m, k, &lo, &sub, &nsub, why)) == NULL)
				break;
			if (k >= lo) /* (an empty object: it had none to place) */
				lo = unnote_nested(m, k, max), nsub = SS_JSUB_NONE;
			m[k] = (struct ss_jmember){ks, ke, vs, p, sub, nsub, esc};
		}
		if (k != SIZE_MAX)
			k = k < max ? k + 1 : SIZE_MAX;
		if ((p = member_next(p, end, &closed, why)) == NULL)
			break;
	}
	*n = k;
	return p;
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
	struct ss_jblocks blocks, *f = blocks_for(&blocks, p, end, SS_JBLOCKS_WINDOW);

	if (why == NULL)
		why = &dummy;
	p = ss_jscan_skip_ws(p, end);
	*n = SIZE_MAX;
	if (p < end && *p == '{')
		p = scan_members(f, p, end, m, max, n, why);
	else
		p = scan_value(f, p, end, why, MAX_SLOTS);
	return value_ends_document(p, end, why);
}

/* One JSON value in [p,end), its containers taking at most maxslots. */
static bool
document_within(const char *p, const char *end, const char **why, int maxslots)
{
	const char *dummy;
	struct ss_jblocks f;

	if (why == NULL)
		why = &dummy;
	p = scan_value(blocks_for(&f, p, end, SS_JBLOCKS_WINDOW), p, end, why, maxslots);
	return value_ends_document(p, end, why);
}

bool
ss_jscan_member_document(const char *p, const char *end, const char **why)
{
	return document_within(p, end, why, MAX_SLOTS - slots_of('{'));
}

bool
ss_jscan_document(const char *p, const char *end, const char **why)
{
	return document_within(p, end, why, MAX_SLOTS);
}
