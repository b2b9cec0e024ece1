#include "expr.h"

#include <jq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "diag.h"
#include "jscan.h"

struct ss_expr {
	char *text;
	jq_state *jq;
	struct ss_jpath *path; /* non-NULL when the expression is a plain path */
};

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

ss_expr *
ss_expr_compile(const char *text, const char *option)
{
	ss_expr *e = ss_xmalloc(sizeof *e);
	ss_buf errors = {0};

	e->text = ss_xstrdup(text);
	e->path = ss_jpath_parse(text);
	e->jq = jq_init();
	if (e->jq == NULL)
		ss_diag_die(SS_EXIT_DATA, "cannot initialize jq");
	jq_set_error_cb(e->jq, collect_error, &errors);
	if (!jq_compile(e->jq, text)) {
		ss_diag_die(SS_EXIT_EXPR, "%s: %s", option, errors.len ? ss_buf_cstr(&errors) : "invalid jq expression");
	}
	jq_set_error_cb(e->jq, NULL, NULL);
	ss_buf_free(&errors);
	return e;
}

void
ss_expr_free(ss_expr *e)
{
	if (e == NULL)
		return;
	jq_teardown(&e->jq);
	if (e->path)
		ss_jpath_free(e->path);
	free(e->text);
	free(e);
}

bool
ss_expr_is_path(const ss_expr *e)
{
	return e->path != NULL;
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
	jq_start(e->jq, input, 0);
	jv out = jq_next(e->jq);
	if (jv_is_valid(out))
		return out;
	if (jv_invalid_has_msg(jv_copy(out)))
		return out;
	jv_free(out);
	return jv_invalid_with_msg(jv_string("expression yields no value"));
}

bool
ss_expr_raw(ss_expr *e, ss_rec *r, const char **start, size_t *len)
{
	const char *vs, *ve;
	bool type_error;

	if (e->path == NULL || !ss_jpath_find(e->path, r->raw, r->raw + r->len, &vs, &ve, &type_error))
		return false;
	*start = vs;
	*len = (size_t)(ve - vs);
	return true;
}

jv
ss_expr_eval(ss_expr *e, ss_rec *r)
{
	const char *vs, *ve;
	bool type_error;

	if (e->path) {
		if (ss_jpath_find(e->path, r->raw, r->raw + r->len, &vs, &ve, &type_error))
			return jv_parse_sized(vs, (int)(ve - vs));
		if (!type_error)
			return jv_null();
		/* fall through: let jq produce its own error message */
	}
	return ss_expr_eval_jv(e, jv_copy(ss_rec_doc(r)));
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
