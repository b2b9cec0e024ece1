/* The engine's output: results (spliced from raw bytes, or --select), the --late-file, the marks. */
#include <inttypes.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/proj.h"

/* --select runs on jq directly: it may yield several values or none (a filter). */
jq_state *
asof_select_jq(const char *text)
{
	ss_expr_free(ss_expr_compile(text, "--select")); /* reports errors as every tool does */
	jq_state *jq = jq_init();
	if (jq == NULL || !jq_compile(jq, text))
		ss_diag_die(SS_EXIT_EXPR, "--select: cannot compile '%s'", text);
	return jq;
}

/* The result b of the left record at line, refused by --select with jq's error e. */
static void
select_failed(asof_join *j, const ss_buf *b, uint64_t line, jv e)
{
	char msg[256], reason[320];

	snprintf(reason, sizeof reason, "left: --select: %s", ss_expr_errmsg(e, msg, sizeof msg));
	jv_free(e);
	/* the names are the run's (struct asof_ctx) */
	ss_errpolicy_reject(j->o.onerror, j->cx->lname, line, b->data, b->len, reason);
}

static void
write_selected(asof_join *j, const ss_buf *b, uint64_t line)
{
	if (j->cx->select == NULL)
		j->cx->select = asof_select_jq(j->o.select);
	/* the records are valid, and libjq parses each, but in the result they are a level
	 * deeper: one at jq's depth limit (jscan.c MAX_SLOTS) is not parsed there */
	jv in = jv_parse_sized(b->data, (int)b->len);
	if (!jv_is_valid(in)) {
		select_failed(j, b, line, in);
		return;
	}
	jq_start(j->cx->select, in, 0);
	for (;;) {
		jv v = jq_next(j->cx->select);
		if (jv_is_valid(v)) {
			jv s = jv_dump_string(v, 0);
			asof_out(j, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
			jv_free(s);
			continue;
		}
		if (jv_invalid_has_msg(jv_copy(v))) {
			select_failed(j, b, line, v);
			return;
		}
		jv_free(v);
		return;
	}
}

/* An approximation chosen by a flag touched a result: it is marked in the output,
 * counted, and said on stderr the first time. */
void
asof_approximated(asof_join *j, unsigned mark, uint64_t line)
{
	if (mark & ASOF_MARK_EXPIRED) {
		j->n.expired++;
		if (!(j->cx->told & ASOF_MARK_EXPIRED))
			ss_diag_warn("%s:%" PRIu64 ": a left record older than the right history kept (--retain): "
				     "written with \"right\": null and \"expired\": true, and counted", j->cx->lname, line);
	}
	if (mark & ASOF_MARK_EARLY) {
		j->n.early++;
		if (!(j->cx->told & ASOF_MARK_EARLY))
			ss_diag_warn("%s:%" PRIu64 ": a result written before the right stream passed its time (%s): "
				     "marked \"final\": false, and counted", j->cx->lname, line,
				     j->o.emit == SS_ASOF_EAGER ? "--emit eager" : "--max-delay");
	}
	j->cx->told |= mark;
}

/* The marks of a result, as JSON members. */
static const char *
mark_text(unsigned mark)
{
	return mark & ASOF_MARK_EXPIRED ? ",\"expired\":true" : mark & ASOF_MARK_EARLY ? ",\"final\":false" : "";
}

/* What was found ahead in a record (known, or NULL) as proj.h takes it, in s; NULL for
 * nothing. */
static const struct ss_proj_span *
known_spans(const struct asof_known *known, const char *raw, struct ss_proj_span *s)
{
	if (known == NULL || known->n == 0)
		return NULL;
	for (int i = 0; i < known->n; i++)
		s[i] = known->at[i] ? (struct ss_proj_span){raw + known->at[i] - 1, known->len[i]}
				    : (struct ss_proj_span){NULL, 0};
	return s;
}

/* What was found ahead in a record, kept unaligned at bytes (NULL: nothing), copied into
 * k to be read; NULL for nothing. */
static const struct asof_known *
known_copy(const char *bytes, struct asof_known *k)
{
	if (bytes == NULL)
		return NULL;
	memcpy(k, bytes, sizeof *k);
	return k;
}

/* --select of proj.h's grammar, run on the parts of the result, which is never assembled;
 * false when libjq is to say why it fails on them. */
static bool
emit_projected(asof_join *j, const char *raw, size_t len, const struct asof_known *known,
	       const struct asof_right *r, int64_t revision, unsigned mark)
{
	struct ss_proj_span lspans[SS_PROJ_KNOWN], rspans[SS_PROJ_KNOWN];
	struct asof_known rknown;
	const struct ss_proj_span *rknown_spans = r ? known_spans(known_copy(asof_right_known_bytes(r), &rknown), r->raw, rspans) : NULL;
	struct ss_proj_member m[4] = {{"left", raw, len, known_spans(known, raw, lspans)},
				      {"right", r ? r->raw : "null", r ? r->len : 4, rknown_spans}};
	/* both sides were validated when they were read (or stored, having been) */
	struct ss_proj_root root = {NULL, 0, m, 2, true};
	char num[32];

	if (revision >= 0)
		m[root.nmembers++] = (struct ss_proj_member){"revision", num,
			(size_t)snprintf(num, sizeof num, "%" PRId64, revision), NULL};
	if (mark & ASOF_MARK_EXPIRED)
		m[root.nmembers++] = (struct ss_proj_member){"expired", "true", 4, NULL};
	else if (mark & ASOF_MARK_EARLY)
		m[root.nmembers++] = (struct ss_proj_member){"final", "false", 5, NULL};
	ss_buf_reset(&j->obuf);
	if (!ss_proj_eval(j->cx->proj, &root, &j->obuf))
		return false;
	asof_out(j, j->obuf.data, j->obuf.len);
	return true;
}

/* Write one result; revision < 0 outside revise mode; mark: ASOF_MARK_*; known: what was
 * found ahead in the left record, or NULL. */
static void
emit(asof_join *j, const char *raw, size_t len, const struct asof_known *known, uint64_t line,
     const struct asof_right *r, int64_t revision, unsigned mark)
{
	ss_buf *b = &j->obuf;
	char num[32];

	if (mark)
		asof_approximated(j, mark, line);
	if (r == NULL && j->o.inner)
		return;
	if (revision < 0 && j->revision0)
		revision = 0;
	j->n.emitted++;
	j->n.matched += r != NULL;
	if (j->o.select == NULL && j->cx->acks == NULL) {
		/* straight into the output buffer: no line to keep, nothing to reshape; a
		 * reader of a killed process's output still gets whole lines */
		const char *marks = mark_text(mark);
		/* the whole line in one write(2): braces and names 19 bytes, the revision
		 * member at most sizeof num */
		ss_writer_reserve(j->cx->out, len + (r ? r->len : 4) + 19 + sizeof num + strlen(marks));
		ss_writer_write(j->cx->out, "{\"left\":", 8);
		ss_writer_write(j->cx->out, raw, len);
		ss_writer_write(j->cx->out, ",\"right\":", 9);
		if (r)
			ss_writer_write(j->cx->out, r->raw, r->len);
		else
			ss_writer_write(j->cx->out, "null", 4);
		if (revision >= 0)
			ss_writer_write(j->cx->out, num, (size_t)snprintf(num, sizeof num, ",\"revision\":%" PRId64, revision));
		ss_writer_puts(j->cx->out, marks);
		ss_writer_write(j->cx->out, "}\n", 2);
		return;
	}
	if (j->cx->proj && emit_projected(j, raw, len, known, r, revision, mark))
		return;
	ss_buf_reset(b);
	ss_buf_add(b, "{\"left\":", 8);
	ss_buf_add(b, raw, len);
	ss_buf_add(b, ",\"right\":", 9);
	if (r)
		ss_buf_add(b, r->raw, r->len);
	else
		ss_buf_add(b, "null", 4);
	if (revision >= 0)
		ss_buf_add(b, num, (size_t)snprintf(num, sizeof num, ",\"revision\":%" PRId64, revision));
	ss_buf_adds(b, mark_text(mark));
	ss_buf_addc(b, '}');
	if (j->o.select)
		write_selected(j, b, line);
	else
		asof_out(j, b->data, b->len);
}

void
asof_emit_held(asof_join *j, const struct asof_held *h, const struct asof_right *r, int64_t revision,
	       unsigned mark)
{
	struct asof_known known;

	emit(j, h->raw, h->len, known_copy(asof_held_known_bytes(h), &known), h->line, r, revision, mark);
}

void
asof_emit_in(asof_join *j, const struct asof_in *in, const struct asof_right *r, int64_t revision, unsigned mark)
{
	emit(j, in->raw, in->len, &in->known, in->line, r, revision, mark);
}

/* A late right record, or an expired left one: to the --late-file. */
void
asof_to_late_file(asof_join *j, const struct asof_in *in)
{
	if (j->cx->late) {
		fwrite(in->raw, 1, in->len, j->cx->late);
		fputc('\n', j->cx->late);
	}
}

/* A right record older than what its partition delivered (or than the watermark the
 * join released): not applied, counted, to the --late-file; said once. */
void
asof_late(asof_join *j, const struct asof_in *in)
{
	j->n.late++;
	asof_to_late_file(j, in);
	if (j->cx->told & ASOF_MARK_LATE)
		return;
	j->cx->told |= ASOF_MARK_LATE;
	ss_diag_warn("%s:%" PRIu64 ": a right record older than what its partition already delivered "
		     "(--grace %gs): late, %s, and counted%s", j->cx->rname, in->line, (double)j->o.grace / 1e9,
		     asof_keeps_closed(j) ? "applied, every result it changes revised" : "not applied",
		     j->cx->late ? " (in the --late-file)" : "");
}

void
asof_ctx_flush(struct asof_ctx *cx)
{
	ss_writer_flush(cx->out);
	if (cx->late)
		fflush(cx->late);
	if (cx->acks)
		cx->delivered = ss_acks_delivered(cx->acks);
}
