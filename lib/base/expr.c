#include "base/expr.h"

#include <jq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/diag.h"
#include "base/jscan.h"
#include "base/keyenc.h"
#include "base/proj.h"

struct ss_expr {
	char *text;
	jq_state *jq;
	ss_expr *next, *prev;  /* the live expressions with a jq state */
	struct ss_jpath *path; /* non-NULL when the expression is a plain path, */
	ss_buf alt;	       /* or PATH // LITERAL: then the literal as jq -c prints it */
	struct ss_jpath **tuple; /* non-NULL when it is an array of plain paths */
	int ntuple;
	struct ss_proj *proj; /* non-NULL when it is a projection (proj.h) */
};

/* Split "[.a, .b.c]" into plain paths; false if it is anything else. Commas inside
 * quotes or brackets are not handled: such expressions simply take the jq route. */
static bool
parse_tuple(ss_expr *e, const char *text)
{
	size_t n = strlen(text);

	while (n && text[n - 1] == ' ')
		n--;
	while (*text == ' ')
		text++, n--;
	if (n < 3 || text[0] != '[' || text[n - 1] != ']' || strpbrk(text, "\"|(){}"))
		return false;
	char *body = strndup(text + 1, n - 2), *save = NULL;
	e->tuple = ss_xmalloc(n * sizeof *e->tuple);
	for (char *tok = strtok_r(body, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if ((e->tuple[e->ntuple] = ss_jpath_parse(tok)) == NULL) {
			while (e->ntuple > 0)
				ss_jpath_free(e->tuple[--e->ntuple]);
			free(e->tuple);
			e->tuple = NULL;
			break;
		}
		e->ntuple++;
	}
	free(body);
	return e->tuple != NULL;
}

/* PATH // LITERAL (".station // null", as ss-asof's message suggests): the path, and the
 * literal in e->alt; false if it is anything else. The text is cut at its last "//", so
 * a literal holding "//" or a path whose key does takes the jq route. */
static bool
parse_alternative(ss_expr *e, const char *text)
{
	const char *cut = NULL;

	for (const char *s = strstr(text, "//"); s != NULL; s = strstr(s + 1, "//"))
		cut = s;
	if (cut == NULL || !ss_proj_literal(cut + 2, &e->alt))
		return false;
	if (!isfinite(strtod(cut + 2, NULL))) {
		/* jq's 1e400 is an infinity, which it prints as the largest double: that text
		 * would not be the key jq finds (strtod reads a string or a word as 0) */
		ss_buf_free(&e->alt);
		return false;
	}
	char *path = strndup(text, (size_t)(cut - text));
	e->path = ss_jpath_parse(path);
	free(path);
	if (e->path == NULL)
		ss_buf_free(&e->alt);
	return e->path != NULL;
}

static void
collect_error(void *data, jv msg)
{
	ss_buf *b = data;

	if (jv_get_kind(msg) == JV_KIND_STRING) {
		if (b->len)
			ss_buf_adds(b, "; ");
		ss_buf_adds(b, jv_string_value(msg));
	}
	jv_free(msg);
}

static void compile_jq(ss_expr *e, const char *option);

ss_expr *
ss_expr_compile(const char *text, const char *option)
{
	ss_expr *e = ss_xmalloc(sizeof *e);

	e->text = ss_xstrdup(text);
	e->path = ss_jpath_parse(text);
	e->alt = (ss_buf){0};
	e->tuple = NULL;
	e->ntuple = 0;
	if (e->path == NULL && !parse_alternative(e, text))
		parse_tuple(e, text);
	e->proj = ss_proj_compile(text);
	e->jq = NULL;
	e->next = e->prev = NULL;
	/* Plain paths and arrays of them are valid jq by construction and rarely need libjq
	 * at all: compiling them lazily saves ~12 ms of start-up per expression. */
	if (e->path == NULL && e->tuple == NULL)
		compile_jq(e, option);
	return e;
}

/* The expressions holding a jq state. An exit in the middle of a run (a data error
 * under --on-error fail) tears them down: libjq keeps an evaluation's stack through a
 * pointer to its end, which leak checkers take for memory lost. */
static ss_expr *live;

static void
teardown_live(void)
{
	for (ss_expr *e = live; e != NULL; e = e->next)
		jq_teardown(&e->jq);
	live = NULL;
}

static void
live_add(ss_expr *e)
{
	static bool registered;

	if (!registered && atexit(teardown_live) == 0)
		registered = true;
	e->prev = NULL;
	e->next = live;
	if (live != NULL)
		live->prev = e;
	live = e;
}

static void
live_remove(ss_expr *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else if (live == e)
		live = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	e->next = e->prev = NULL;
}

static void
compile_jq(ss_expr *e, const char *option)
{
	ss_buf errors = {0};

	e->jq = jq_init();
	if (e->jq == NULL)
		ss_diag_die(SS_EXIT_DATA, "cannot initialize jq");
	live_add(e);
	jq_set_error_cb(e->jq, collect_error, &errors);
	if (!jq_compile(e->jq, e->text))
		ss_diag_die(SS_EXIT_EXPR, "%s: %s", option, errors.len ? ss_buf_cstr(&errors) : "invalid jq expression");
	jq_set_error_cb(e->jq, NULL, NULL);
	ss_buf_free(&errors);
}

void
ss_expr_free(ss_expr *e)
{
	if (e == NULL)
		return;
	if (e->jq) {
		live_remove(e);
		jq_teardown(&e->jq);
	}
	if (e->path)
		ss_jpath_free(e->path);
	ss_buf_free(&e->alt);
	for (int i = 0; i < e->ntuple; i++)
		ss_jpath_free(e->tuple[i]);
	free(e->tuple);
	ss_proj_free(e->proj);
	free(e->text);
	free(e);
}

bool
ss_expr_is_path(const ss_expr *e)
{
	return e->path != NULL;
}

bool
ss_expr_needs_object(const ss_expr *e)
{
	size_t len;

	return e->path != NULL && e->alt.len == 0 && ss_jpath_nsteps(e->path) > 0 &&
	       ss_jpath_key(e->path, 0, &len) != NULL;
}

bool
ss_expr_is_paths(const ss_expr *e)
{
	return e->path != NULL || e->tuple != NULL;
}

const char *
ss_expr_text(const ss_expr *e)
{
	return e->text;
}

void
ss_rec_init(ss_rec *r, const char *raw, size_t len)
{
	r->raw = raw;
	r->len = len;
	r->doc = jv_invalid();
	r->parsed = false;
	r->members = NULL;
	r->nmembers = SIZE_MAX;
}

void
ss_rec_set_members(ss_rec *r, const struct ss_jmember *m, size_t n)
{
	r->members = m;
	r->nmembers = n;
}

bool
ss_rec_find(const struct ss_jpath *path, const ss_rec *r, const char **vs, const char **ve, bool *type_error)
{
	return ss_jpath_find_in(path, r->raw, r->raw + r->len, r->members, r->nmembers, vs, ve, type_error);
}

jv
ss_rec_doc(ss_rec *r)
{
	if (!r->parsed) {
		r->doc = jv_parse_sized(r->raw, (int)r->len);
		r->parsed = true;
	}
	return r->doc;
}

void
ss_rec_done(ss_rec *r)
{
	if (r->parsed)
		jv_free(r->doc);
	r->parsed = false;
	r->doc = jv_invalid();
}

jv
ss_expr_eval_jv(ss_expr *e, jv input)
{
	if (!jv_is_valid(input))
		return input;
	if (e->jq == NULL)
		compile_jq(e, e->text);
	jq_start(e->jq, input, 0);
	jv out = jq_next(e->jq);
	if (jv_is_valid(out))
		return out;
	if (jv_invalid_has_msg(jv_copy(out)))
		return out;
	jv_free(out);
	return jv_invalid_with_msg(jv_string("expression yields no value"));
}

/* The alternative's literal where the value found [*vs, *ve) (found or not) is missing,
 * null or false, as jq's // gives it; true when there is one then. */
static bool
alternative(const ss_expr *e, bool found, const char **vs, const char **ve)
{
	if (e->alt.len == 0 || (found && **vs != 'n' && **vs != 'f'))
		return found; /* (a valid value that starts so is null or false) */
	*vs = e->alt.data;
	*ve = e->alt.data + e->alt.len;
	return true;
}

/* The value of the expression's i-th path (its path, or the i-th of its array) in the
 * record, or its alternative's; false when there is none, type_error set where the path
 * indexes a value of another type. */
static inline bool
part_value(const ss_expr *e, int i, ss_rec *r, const char **vs, const char **ve, bool *type_error)
{
	if (e->path == NULL)
		return ss_rec_find(e->tuple[i], r, vs, ve, type_error);
	bool found = ss_rec_find(e->path, r, vs, ve, type_error);
	if (e->alt.len == 0) /* (a plain path: every record's --on and --by) */
		return found;
	return !*type_error && alternative(e, found, vs, ve);
}

bool
ss_expr_raw(ss_expr *e, ss_rec *r, const char **start, size_t *len)
{
	const char *vs, *ve;
	bool type_error;

	if (e->path == NULL || !part_value(e, 0, r, &vs, &ve, &type_error))
		return false;
	*start = vs;
	*len = (size_t)(ve - vs);
	return true;
}

bool
ss_expr_look(const ss_expr *e, const char *raw, size_t n, const char **start, size_t *len)
{
	const char *vs, *ve;

	/* (a look cannot tell a missing field from a type error: the alternative's guess is
	 * the literal for both) */
	if (e->path == NULL || !alternative(e, ss_jpath_look(e->path, raw, raw + n, &vs, &ve), &vs, &ve))
		return false;
	*start = vs;
	*len = (size_t)(ve - vs);
	return true;
}

/* A plain path that leads nowhere in the record (a missing field), as opposed to one
 * whose value is null. */
static bool
path_absent(const struct ss_jpath *path, const ss_rec *r)
{
	const char *vs, *ve;
	bool type_error;

	return !ss_rec_find(path, r, &vs, &ve, &type_error) && !type_error;
}

bool
ss_expr_absent(const ss_expr *e, ss_rec *r)
{
	if (e->path)
		return e->alt.len == 0 && path_absent(e->path, r);
	for (int i = 0; i < e->ntuple; i++)
		if (path_absent(e->tuple[i], r))
			return true;
	return false;
}

jv
ss_expr_eval(ss_expr *e, ss_rec *r)
{
	const char *vs, *ve;
	bool type_error;

	if (e->path) {
		if (part_value(e, 0, r, &vs, &ve, &type_error))
			return jv_parse_sized(vs, (int)(ve - vs));
		if (!type_error)
			return jv_null();
		/* fall through: let jq produce its own error message */
	}
	return ss_expr_eval_jv(e, jv_copy(ss_rec_doc(r)));
}

int
ss_expr_json(ss_expr *e, ss_rec *r, ss_buf *out, char *err, size_t errsize)
{
	struct ss_proj_root root = {r->raw, r->len, NULL, 0, false};

	if (e->proj && ss_proj_eval(e->proj, &root, out))
		return 1;
	jv v = ss_expr_eval(e, r);
	if (!jv_is_valid(v)) {
		ss_expr_errmsg(v, err, errsize);
		jv_free(v);
		return -1;
	}
	jv s = jv_dump_string(v, 0);
	ss_buf_add(out, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
	jv_free(s);
	return 1;
}

const char *
ss_expr_errmsg(jv invalid, char *buf, size_t size)
{
	jv msg = jv_invalid_get_msg(jv_copy(invalid));

	if (jv_get_kind(msg) == JV_KIND_STRING)
		snprintf(buf, size, "%s", jv_string_value(msg));
	else if (jv_get_kind(msg) == JV_KIND_NULL)
		snprintf(buf, size, "expression yields no value");
	else {
		jv s = jv_dump_string(jv_copy(msg), 0);
		snprintf(buf, size, "%s", jv_string_value(s));
		jv_free(s);
	}
	jv_free(msg);
	return buf;
}

/* The i-th element of a key (part_value) from raw bytes; false on a type error (let jq
 * explain). nojq (the parsing threads): false also for a field that is not there (the
 * main thread says so) and for a value only ss_keyenc_raw encodes. */
__attribute__((always_inline)) static inline bool
raw_element(const ss_expr *e, int i, ss_rec *r, ss_buf *enc, ss_buf *text, bool nojq)
{
	const char *vs, *ve;
	bool type_error;

	if (!part_value(e, i, r, &vs, &ve, &type_error)) {
		if (type_error || nojq)
			return false;
		vs = "null";
		ve = vs + 4;
	}
	size_t len = (size_t)(ve - vs);
	if (enc && !(nojq ? ss_keyenc_raw_nojq(enc, vs, len) == 1 : ss_keyenc_raw(enc, vs, len)))
		return false;
	if (text)
		ss_buf_add(text, vs, len);
	return true;
}

/* The key of a plain path, PATH // LITERAL or an array of plain paths, from raw bytes
 * (raw_element): 1, 0 when it is null, -1 with enc and text unchanged where it cannot
 * be told so. Inlined (raw_element too) into its two callers, each with its nojq a
 * constant: as calls, the parsing threads' keys took 1.1% more of a wide join's
 * instructions. */
__attribute__((always_inline)) static inline int
key_fast(const ss_expr *e, ss_rec *r, ss_buf *enc, ss_buf *text, bool nojq)
{
	size_t enc0 = enc ? enc->len : 0, text0 = text ? text->len : 0;

	if (e->path) {
		if (!raw_element(e, 0, r, enc, text, nojq))
			goto slow;
		return enc ? enc->data[enc0] != 1 : strncmp(text->data + text0, "null", 4) != 0;
	}
	if (enc)
		ss_keyenc_array_open(enc);
	if (text)
		ss_buf_addc(text, '[');
	for (int i = 0; i < e->ntuple; i++) {
		if (text && i)
			ss_buf_addc(text, ',');
		if (!raw_element(e, i, r, enc, text, nojq))
			goto slow;
	}
	if (enc)
		ss_keyenc_array_close(enc);
	if (text)
		ss_buf_addc(text, ']');
	return 1;
slow:
	if (enc)
		enc->len = enc0;
	if (text)
		text->len = text0;
	return -1;
}

int
ss_expr_key_nojq(const ss_expr *e, ss_rec *r, ss_buf *enc)
{
	return ss_expr_is_paths(e) && key_fast(e, r, enc, NULL, true) >= 0 ? 1 : -1;
}

int
ss_expr_key(ss_expr *e, ss_rec *r, ss_buf *enc, ss_buf *text, char *err, size_t errsize)
{
	if (ss_expr_is_paths(e)) {
		int rc = key_fast(e, r, enc, text, false);
		if (rc >= 0)
			return rc;
	}
	jv v = ss_expr_eval(e, r);
	if (!jv_is_valid(v)) {
		ss_expr_errmsg(v, err, errsize);
		jv_free(v);
		return -1;
	}
	int rc = jv_get_kind(v) != JV_KIND_NULL;
	if (enc)
		ss_keyenc_jv(enc, v);
	if (text) {
		jv s = jv_dump_string(v, 0);
		ss_buf_adds(text, jv_string_value(s));
		jv_free(s);
	} else
		jv_free(v);
	return rc;
}
