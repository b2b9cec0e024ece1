/* jscan: a validating JSON scanner over raw bytes, without building values.
 * Written by hand because libjq has no lazy mode: the fast tools in this field find a
 * field's raw bytes and splice records through unchanged instead of re-serializing.
 * All functions read [p, end) and never allocate, but ss_jscan_quote, which appends to
 * the caller's buf. No padding is needed after end: the validator's SIMD blocks
 * (jscan_blocks.c) read a document's last short block as its last 64 bytes, or copy it.
 * Scanning and validating are in jscan.c; plain paths (ss_jpath_*) and
 * ss_jscan_unescape in jpath.c. */
#ifndef SS_JSCAN_H
#define SS_JSCAN_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "base/buf.h"

/* JSON's whitespace: space, tab, newline, carriage return. */
static inline bool
ss_jscan_is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
/* The first byte of [p,end) that is not whitespace, or end. */
static inline const char *
ss_jscan_skip_ws(const char *p, const char *end)
{
	/* above the space is never whitespace: one compare for most bytes */
	while (p < end && (unsigned char)*p <= ' ' && ss_jscan_is_ws(*p))
		p++;
	return p;
}
/* Skip one JSON value (after leading whitespace) and return the byte after it, or NULL
 * when the text is not valid JSON (including invalid UTF-8 in strings, or nesting deeper
 * than jq 1.6 parses: 256 arrays, 128 objects, each object counting as two arrays). On
 * NULL, *why (if given) says what is wrong. */
const char *ss_jscan_value(const char *p, const char *end, const char **why);
/* Check that [p,end) holds exactly one JSON value, optionally surrounded by whitespace. */
bool ss_jscan_document(const char *p, const char *end, const char **why);
/* ss_jscan_document for a text that is to be written as a member's value in an object
 * (an envelope's "value"): nested no deeper than jq parses it there. */
bool ss_jscan_member_document(const char *p, const char *end, const char **why);
/* One member of an object: its key (quotes included) and its value, raw. Where the value
 * is an object (*value == '{'; not set for others), its members noted too are
 * m[sub..sub+nsub) of the same array, in reverse order (the last first), or nsub is
 * SS_JSUB_NONE. esc false: the key holds no escape, its bytes between the quotes are
 * its name (true: it may hold one). */
struct ss_jmember {
	const char *key, *keyend, *value, *valueend;
	uint32_t sub, nsub;
	bool esc;
};
#define SS_JSUB_NONE UINT32_MAX
/* ss_jscan_document, noting in m[0..*n) the members of a document that is an object
 * (in order, duplicates included): *n = SIZE_MAX when it is not one or has more than
 * max. One pass for both: a record is validated and its fields found together. The
 * members of its members that are objects (.meta in {"meta":{"station":...}}, an
 * envelope's .value) are noted from m[max - 1] down, where the others leave room. */
bool ss_jscan_document_members(const char *p, const char *end, struct ss_jmember *m, size_t max,
			       size_t *n, const char **why);
/* The members the tools note per record: a record with more has its fields looked at
 * over the whole record (ss_jpath_find_in). Records of 33 members: a join's CPU 1.2x
 * with 16 noted as with 64. */
enum { SS_JMEMBERS_NOTED = 64 };
/* Is [p,end) valid UTF-8 (no overlongs, no surrogates)? */
bool ss_jscan_utf8(const char *p, const char *end);
/* Append to b a JSON string literal for bytes [s, s+n): quoted, escaped; invalid UTF-8
 * becomes U+FFFD, so the result is always valid JSON. Returns false if a replacement
 * happened. */
bool ss_jscan_quote(ss_buf *b, const char *s, size_t n);
/* Append to b the characters of the valid JSON string literal [p,end) (quotes included),
 * as jq reads them: a surrogate pair is one code point, a lone low surrogate U+FFFD. */
void ss_jscan_unescape(ss_buf *b, const char *p, const char *end);

/* A plain path: .a.b[0]."c d" — object keys and array indexes only. */
struct ss_jpath;
/* Parse a jq expression that is a plain path; NULL if it is anything else. */
struct ss_jpath *ss_jpath_parse(const char *expr);
void ss_jpath_free(struct ss_jpath *path);
/* Find the raw value at the path in a JSON document (one not validated yet gives
 * false, and nothing past end is read). Returns true and sets
 * [*vstart,*vend) when found; false when a step is missing or has the wrong type
 * (jq would give null for missing keys, an error for wrong types: *type_error says which). */
bool ss_jpath_find(const struct ss_jpath *path, const char *p, const char *end,
		   const char **vstart, const char **vend, bool *type_error);
/* ss_jpath_find on the document [p,end). m NULL: one not validated yet. Otherwise
 * ss_jscan_document_members validated it and noted its members in m[0..n): the first
 * step is looked up there; n SIZE_MAX (too many members, or not an object): the
 * document is looked at (ss_jpath_look), not validated again. */
bool ss_jpath_find_in(const struct ss_jpath *path, const char *p, const char *end,
		      const struct ss_jmember *m, size_t n, const char **vstart, const char **vend,
		      bool *type_error);
/* The same from step `from` on: [p,end) holds the value the steps before it led to. */
bool ss_jpath_find_from(const struct ss_jpath *path, int from, const char *p, const char *end,
			const char **vstart, const char **vend, bool *type_error);
/* A quick look at a line not validated yet (is a file in time order?): the value at the
 * path, the values on the way skipped by their structure, not checked. On a valid
 * document it finds what ss_jpath_find finds; on an invalid one, some span or nothing,
 * and nothing past end is read. */
bool ss_jpath_look(const struct ss_jpath *path, const char *p, const char *end,
		   const char **vstart, const char **vend);
/* ss_jpath_find_from the same way, for a document validated already: what it finds, at
 * the cost of a look. */
bool ss_jpath_look_from(const struct ss_jpath *path, int from, const char *p, const char *end,
			const char **vstart, const char **vend, bool *type_error);
int ss_jpath_nsteps(const struct ss_jpath *path);
/* The key of step i (NUL-terminated, *len bytes), or NULL when the step is an index. */
const char *ss_jpath_key(const struct ss_jpath *path, int i, size_t *len);
/* The path of step i alone (the caller frees it with ss_jpath_free); NULL when out of
 * memory. */
struct ss_jpath *ss_jpath_step(const struct ss_jpath *path, int i);
#endif
