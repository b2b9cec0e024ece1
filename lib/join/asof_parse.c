/* Parsing the join's records: a line validated, its time (--on) and key (--by) read into
 * a struct asof_in, a bad one reported by the --on-error policy. A bad one that ends the
 * run (--on-error fail) is not reported here but kept in j->bad and said by the result
 * (ASOF_GOT_FATAL): the run sends the held records first, then asof_parse_fail reports
 * it and exits. The run's (j is the router): the input loop (asof_run.c), the reader
 * (asof_read.c) and, on the main thread, the files parsed ahead (asof_ahead.c: the lines
 * its thread left) call it, and it calls none of them; of the engine, only the one
 * join's watermark (a bad record's partition went on). */
#include <string.h>

#include "join/asof_impl.h"
#include "base/keyenc.h"

/* A bad record to the --on-error policy; one that ends the run is kept for the caller
 * (j->bad), who reports it once the held records are out (asof_parse_fail). */
static void
report(ss_asof *j, const char *name, const struct asof_in *in, const char *reason)
{
	if (j->o.onerror->mode != SS_ONERROR_FAIL) {
		ss_errpolicy_reject(j->o.onerror, name, in->line, in->raw, in->len, reason);
		return;
	}
	j->bad.pending = true;
	j->bad.name = name;
	j->bad.line = in->line;
	j->bad.raw = in->raw;
	j->bad.len = in->len;
	snprintf(j->bad.reason, sizeof j->bad.reason, "%s", reason);
}

void
asof_parse_fail(ss_asof *j)
{
	if (j->bad.pending)
		ss_errpolicy_reject(j->o.onerror, j->bad.name, j->bad.line, j->bad.raw, j->bad.len, j->bad.reason);
}

/* What a parse that did not give a good record gave: nothing, or the end of the run. */
static enum asof_got
not_good(const ss_asof *j)
{
	return j->bad.pending ? ASOF_GOT_FATAL : ASOF_GOT_NONE;
}

static void
reject(ss_asof *j, bool left, const struct asof_in *in, const char *what, const char *why)
{
	char reason[512];

	if (!left && in->line <= j->rquiet)
		return; /* reported when the file was read the first time */
	snprintf(reason, sizeof reason, "%s: %s%s%s", left ? "left" : "right", what, *what ? ": " : "", why);
	report(j, left ? j->cx->lname : j->cx->rname, in, reason);
}

/* A record of the one input whose side is not known (ss_asof_run_one). */
static void
reject_unsided(ss_asof *j, const struct asof_in *in, const char *what, const char *why)
{
	char reason[512];

	snprintf(reason, sizeof reason, "%s%s%s", what, *what ? ": " : "", why);
	report(j, j->cx->lname, in, reason);
}

static bool
parse_time(ss_asof *j, bool left, struct asof_in *in, ss_rec *rec)
{
	ss_expr *e = left ? j->cx->lon : j->cx->ron;
	const char *p, *why = "no time";
	size_t n;
	bool ok;

	if (ss_expr_raw(e, rec, &p, &n)) {
		ok = ss_time_from_raw(p, n, j->o.unit, &in->t, &why);
	} else if (ss_expr_absent(e, rec)) {
		ok = false;
		why = "no such field";
	} else {
		jv v = ss_expr_eval(e, rec);
		char buf[256];
		if (!jv_is_valid(v))
			why = ss_expr_errmsg(v, buf, sizeof buf);
		ok = jv_is_valid(v) && ss_time_from_jv(v, j->o.unit, &in->t, &why);
		if (!ok) {
			reject(j, left, in, ss_expr_text(e), why);
			jv_free(v);
			return false;
		}
		jv_free(v);
	}
	if (!ok)
		reject(j, left, in, ss_expr_text(e), why);
	return ok;
}

static bool
parse_key(ss_asof *j, bool left, struct asof_in *in, ss_rec *rec)
{
	ss_expr *e = left ? j->cx->lby : j->cx->rby;
	const char *p;
	size_t n;

	ss_buf_reset(&in->key);
	in->khash = 0;
	if (e == NULL)
		return true;
	if (ss_expr_raw(e, rec, &p, &n) && ss_keyenc_raw(&in->key, p, n))
		return true;
	if (ss_expr_absent(e, rec)) {
		/* a typo in --by would otherwise join every record under the key null */
		reject(j, left, in, ss_expr_text(e), "no such field (ask for null explicitly: '... // null')");
		return false;
	}
	/* (an array of paths is encoded from the raw bytes; other expressions run in libjq) */
	char err[256];
	if (ss_expr_key(e, rec, &in->key, NULL, err, sizeof err) < 0) {
		reject(j, left, in, ss_expr_text(e), err);
		return false;
	}
	return true;
}

void
asof_parsed(ss_asof *j, bool left, const struct asof_in *in)
{
	j->nread++;
	if (left && !j->left_seen) {
		/* a left input without envelopes (a plain file) is not searched for them:
		 * the fast path of one left time, unless the state needs the offsets */
		j->left_seen = true;
		j->left_bare = !in->has_env && j->o.state == NULL && j->dir == NULL;
	}
}

/* A lookup among the members instead of a scan of the record when the result is
 * written (proj.h ss_proj_known). A record that is not an object has nothing known: its
 * projection meets jq's error itself (a value not found ahead is written null). */
void
asof_find_known(const struct ss_jpath *const *paths, int n, const char *raw, size_t len,
		const struct ss_jmember *m, size_t nm, struct asof_known *known)
{
	const char *vs, *ve;
	bool type_error;

	for (int i = 0; i < n; i++) {
		bool found = ss_jpath_find_in(paths[i], raw, raw + len, m, nm, &vs, &ve, &type_error);
		if (type_error)
			return; /* (known->n stays 0) */
		known->at[i] = found ? (uint32_t)(vs - raw) + 1 : 0;
		known->len[i] = found ? (uint32_t)(ve - vs) : 0;
	}
	known->n = (uint8_t)n;
}

/* --select's values in a good record parsed here, as the parse-ahead threads find them:
 * a left record's for its result, a right record's of a batch for the results it
 * answers. A live join's right records are found here when a result needs them: many
 * never answer one, and here is the joining thread (a parsing thread finds them for all,
 * having the time). */
static void
note_known(const ss_asof *j, bool left, struct asof_in *in)
{
	if (j->cx->nknown[left] > 0 && (left || j->batch))
		asof_find_known(j->cx->known[left], j->cx->nknown[left], in->raw, in->len, in->members,
				in->nmembers, &in->known);
}

/* The fields of a validated record, and its envelope unless env_read says in->env
 * already holds it. */
static enum asof_got
parse_valid(ss_asof *j, bool left, struct asof_in *in, bool env_read)
{
	ss_rec rec;
	bool ok;

	/* envelopes give partition watermarks and left times, and --state's offsets */
	if (!env_read)
		in->has_env = !j->batch && !(left && j->left_bare) &&
			      ss_envelope_get_members(in->raw, in->len, in->members, in->nmembers, &in->env);
	ss_rec_init(&rec, in->raw, in->len);
	ss_rec_set_members(&rec, in->members, in->nmembers);
	ok = parse_time(j, left, in, &rec) && parse_key(j, left, in, &rec);
	ss_rec_done(&rec);
	if (!ok && j->bad.pending)
		return ASOF_GOT_FATAL; /* the run ends here: nothing more of this record */
	if (!ok && in->has_env && j->one)
		asof_wm_seen(j->one, left, &in->env); /* read, if not applied: its partition went on */
	if (ok) {
		asof_parsed(j, left, in);
		note_known(j, left, in);
	}
	if (ok && j->dir && !in->has_env) {
		reject(j, left, in, "", "--state-dir needs enveloped records (topic, partition, offset)");
		return not_good(j);
	}
	return ok ? ASOF_GOT_RECORD : ASOF_GOT_NONE;
}

bool
asof_peek_time(ss_asof *j, bool left, const char *raw, size_t len, int64_t *t)
{
	ss_expr *e = left ? j->cx->lon : j->cx->ron;
	const char *p, *why;
	size_t n;
	ss_rec rec;
	bool ok;

	ss_rec_init(&rec, raw, len);
	if (ss_expr_look(e, raw, len, &p, &n)) {
		ok = ss_time_from_raw(p, n, j->o.unit, t, &why);
	} else {
		jv v = ss_expr_eval(e, &rec);
		ok = jv_is_valid(v) && ss_time_from_jv(v, j->o.unit, t, &why);
		jv_free(v);
	}
	ss_rec_done(&rec);
	return ok;
}

static void
locate(struct asof_in *in, const char *raw, size_t len, uint64_t line)
{
	in->raw = raw;
	in->len = len;
	in->line = line;
	in->known.n = 0;
	in->hist = NULL; /* (asof_right took over the last one's) */
}

/* Is the record valid JSON? Its members are noted on the way, for its fields. */
static bool
valid_noted(struct asof_in *in, const char **why)
{
	size_t max = sizeof in->members / sizeof in->members[0];

	return ss_jscan_document_members(in->raw, in->raw + in->len, in->members, max, &in->nmembers, why);
}

/* Parse a line into in: a good record, nothing for a blank line or a rejected record
 * (the policy has reported it), or the end of the run (kept in j->bad, not reported). */
enum asof_got
asof_parse(ss_asof *j, bool left, const char *raw, size_t len, uint64_t line, struct asof_in *in)
{
	const char *why;

	locate(in, raw, len, line);
	if (ss_ndjson_blank(raw, len))
		return ASOF_GOT_NONE;
	if (!valid_noted(in, &why)) {
		reject(j, left, in, "invalid JSON", why);
		return not_good(j);
	}
	return parse_valid(j, left, in, false);
}

/* A line of the one input (--left-topic/--right-topic), validated once: its side from
 * its envelope's topic, its fields. */
enum asof_got
asof_parse_one(ss_asof *j, const char *raw, size_t len, uint64_t line, bool *left)
{
	struct asof_in one, *in;
	struct ss_envelope env;
	const char *why;

	locate(&one, raw, len, line);
	if (ss_ndjson_blank(raw, len))
		return ASOF_GOT_NONE;
	if (!valid_noted(&one, &why)) {
		reject_unsided(j, &one, "invalid JSON", why);
		return not_good(j);
	}
	if (!ss_envelope_get_members(raw, len, one.members, one.nmembers, &env)) {
		reject_unsided(j, &one, "", "--left-topic needs enveloped records (topic, partition, offset)");
		return not_good(j);
	}
	if (strcmp(env.topic, j->o.left_topic) != 0 && strcmp(env.topic, j->o.right_topic) != 0) {
		reject_unsided(j, &one, env.topic, "a topic neither --left-topic nor --right-topic");
		return not_good(j);
	}
	*left = strcmp(env.topic, j->o.left_topic) == 0;
	in = *left ? &j->lin : &j->rin;
	locate(in, raw, len, line);
	if (one.nmembers != SIZE_MAX) /* (all of it: the members of members are at its end) */
		memcpy(in->members, one.members, sizeof one.members);
	in->nmembers = one.nmembers;
	in->has_env = true;
	in->env = env;
	return parse_valid(j, *left, in, true);
}
