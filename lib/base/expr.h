/* expr: jq expressions (libjq), compiled once and run per record.
 * A plain path (.a.b, .a[0]) takes a fast path over the raw bytes (jscan), and so does a
 * projection for ss_expr_json (proj.h): neither builds the whole document. Results are jv values owned by the caller (jv_free them). */
#ifndef SS_EXPR_H
#define SS_EXPR_H
#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ss_jmember;
struct ss_jpath;

typedef struct ss_expr ss_expr;
/* A record being processed: raw text plus its parsed form, built at most once. */
typedef struct ss_rec {
	const char *raw;
	size_t len;
	jv doc; /* jv_invalid() until needed */
	bool parsed;
	/* its top-level members, when it was validated (NULL: not yet; ss_jpath_find_in) */
	const struct ss_jmember *members;
	size_t nmembers;
} ss_rec;

/* Compile; on a compile error print jq's message ("ss-TOOL: OPTION: ...") and exit 3. */
ss_expr *ss_expr_compile(const char *text, const char *option);
void ss_expr_free(ss_expr *e);
/* A plain path, or one with a literal for its missing, null or false values
 * (.station // null): ss_expr_raw and ss_expr_look answer it without libjq. */
bool ss_expr_is_path(const ss_expr *e);
/* A plain path whose first step is a key, without a literal: only an object has a value
 * for it (anything else has null, or a type error). */
bool ss_expr_needs_object(const ss_expr *e);
/* ss_expr_is_path, or an array of plain paths ([.station, .device]): a key that
 * ss_expr_key_nojq can take from the raw bytes. */
bool ss_expr_is_paths(const ss_expr *e);
const char *ss_expr_text(const ss_expr *e);

void ss_rec_init(ss_rec *r, const char *raw, size_t len);
/* The record's members as ss_jscan_document_members noted them while validating it
 * (borrowed; n SIZE_MAX: not noted): plain paths then start from them, or look at the
 * record, instead of validating it again. */
void ss_rec_set_members(ss_rec *r, const struct ss_jmember *m, size_t n);
/* ss_jpath_find_in on the record, among its members where they were noted. */
bool ss_rec_find(const struct ss_jpath *path, const ss_rec *r, const char **vstart, const char **vend,
		 bool *type_error);
/* The parsed document (borrowed: do not free; valid until ss_rec_done). */
jv ss_rec_doc(ss_rec *r);
void ss_rec_done(ss_rec *r);

/* First output of the expression on the record. Returns the value (caller frees), or
 * jv_invalid_with_msg(...) when the expression errors or yields nothing. */
jv ss_expr_eval(ss_expr *e, ss_rec *r);
/* Fast path only: the raw bytes of a plain path's result (ss_expr_is_path). Returns true
 * and the span when the value exists, or the literal where it stands for the value;
 * false otherwise (use ss_expr_eval). */
bool ss_expr_raw(ss_expr *e, ss_rec *r, const char **start, size_t *len);
/* ss_expr_raw for a quick look at a line not validated yet (ss_jpath_look): on a valid
 * line the same span; on an invalid one, some span or false. Never the answer for a
 * record, only for a guess about the file (is it in time order?). */
bool ss_expr_look(const ss_expr *e, const char *raw, size_t n, const char **start, size_t *len);
/* The result as a key: its keyenc bytes appended to enc and its JSON text to text (either
 * may be NULL). Plain paths and arrays of plain paths ([.station, .timestamp]) never build
 * the document. Returns 1, 0 when the result is null, -1 on an error (message in err). */
struct ss_buf;
int ss_expr_key(ss_expr *e, ss_rec *r, struct ss_buf *enc, struct ss_buf *text, char *err, size_t errsize);
/* ss_expr_key's encoding without libjq, for threads: 1 appended to enc, or -1 with enc
 * unchanged where it cannot tell alone (not ss_expr_is_paths, a field that is not there,
 * a type error, a value only ss_keyenc_raw encodes): ss_expr_key's to answer. */
int ss_expr_key_nojq(const ss_expr *e, ss_rec *r, struct ss_buf *enc);
/* The result's text as jq -c prints it, appended to out: 1, or -1 on an error (message in
 * err). Projections (proj.h: paths, arrays and objects of them, literals) are evaluated
 * on the raw bytes and never build the document. */
int ss_expr_json(ss_expr *e, ss_rec *r, struct ss_buf *out, char *err, size_t errsize);
/* Is the expression a plain path (or an array of them) that leads to no value in the
 * record: a field that is not there, which jq would quietly turn into null? Other
 * expressions are never absent (`.a // null` asks for null explicitly). */
bool ss_expr_absent(const ss_expr *e, ss_rec *r);
/* Run on a jv input (for tools that build values); consumes input. */
jv ss_expr_eval_jv(ss_expr *e, jv input);
/* The message of an invalid result (not consumed) as a C string in buf. */
const char *ss_expr_errmsg(jv invalid, char *buf, size_t size);
#endif
