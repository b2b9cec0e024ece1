/* proj: projections evaluated on raw JSON bytes, without libjq.
 * A jq expression made only of paths (.a.b, .[0], ."k", .["k"]), arrays and objects of
 * them ([.a, .b], {id: .a, w: .b.c}, {a}) and literals (numbers, strings, true, false,
 * null) is compiled once into a tree. A run splices the values' bytes into the output as
 * jq -c prints them: jq 1.6 prints numbers as doubles, re-escapes strings and keeps the
 * last of duplicate keys, so a value whose bytes it would print otherwise goes through
 * libjq's jv (parsed and dumped) and every other value is copied as it is.
 * The input is a document, or an object given by its members' bytes (ss-asof's
 * {"left":L,"right":R}), which is never assembled.
 * Ownership: ss_proj_compile returns a tree the caller frees with ss_proj_free; a root and
 * the bytes it points to are borrowed for one call; results are appended to the caller's
 * buffer. Input bytes must be valid JSON (jscan). */
#ifndef SS_PROJ_H
#define SS_PROJ_H
#include <stdbool.h>
#include <stddef.h>

struct ss_buf;
typedef struct ss_proj ss_proj;

/* The most values found ahead in one member's object (ss_proj_known). */
#define SS_PROJ_KNOWN 4

/* A value found ahead: its bytes, or raw NULL where the object has no such key. */
struct ss_proj_span {
	const char *raw;
	size_t len;
};

/* One member of an object given by parts: its name (NUL-terminated) and value bytes;
 * known: NULL, or the values in raw, an object, of the paths ss_proj_known(p, name, i),
 * found ahead (ss-asof's parsing threads look them up among the members they note while
 * validating a record, so that the join does not scan the record again for them). */
struct ss_proj_member {
	const char *name;
	const char *raw;
	size_t len;
	const struct ss_proj_span *known;
};
/* The input: the document [raw, raw+len) when members is NULL, else the object of the
 * nmembers members (distinct names, in their order). */
struct ss_proj_root {
	const char *raw;
	size_t len;
	const struct ss_proj_member *members;
	int nmembers;
	/* every document was validated already (ss-asof's records): the values on a path's
	 * way are skipped by their structure (ss_jpath_look), not checked again */
	bool validated;
};

/* Compile; NULL when the expression is outside the grammar (run it with libjq). The text
 * must be valid jq: what libjq refuses is the caller's to report. */
ss_proj *ss_proj_compile(const char *text);
void ss_proj_free(ss_proj *p);
/* Append the result's jq -c text to out. Returns false, out unchanged, where jq raises an
 * error (a step indexes a value of another type): run libjq for its message. */
bool ss_proj_eval(const ss_proj *p, const struct ss_proj_root *root, struct ss_buf *out);
/* The i-th one-step path (a key) that the expression's paths take right after the member
 * `name` (.left.aid: .aid of "left"), at most SS_PROJ_KNOWN of them; NULL past the last.
 * Borrowed from p. */
const struct ss_jpath *ss_proj_known(const ss_proj *p, const char *name, int i);
/* Can p be evaluated without any byte of member `name` but its known values (the paths
 * ss_proj_known gives), and without failing where `other` is an object? Then every path
 * goes one step into a member other than name (.left, .revision), or two steps through a
 * known value of name or other (.right.wid, .left.aid): the object made of name's known
 * members alone gives the same results. */
bool ss_proj_known_suffice(const ss_proj *p, const char *name, const char *other);
/* Is text a literal alone (a number, a string, true, false, null)? Then its jq -c text
 * is appended to out. */
bool ss_proj_literal(const char *text, struct ss_buf *out);
/* Append the valid JSON value [p, end) (no surrounding whitespace) as jq -c prints it. */
void ss_proj_canonical(struct ss_buf *out, const char *p, const char *end);
#endif
