/* The as-of join engine: fed parsed records (asof_parse.c), keeps the right history,
 * holds or revises left records, and writes {"left":L,"right":R} spliced from the raw
 * input bytes. The input loop that feeds it lives in asof_run.c, the --state file in
 * asof_state.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "stream/wfile.h"
#include "base/proj.h"

enum { UNSPILL_BATCH = 1024 }; /* spilled held records read back at a time */

static int64_t
sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The right watermark: newest right event time minus --grace, the minimum over the
 * right partitions (asof_wm.c). Every left record whose release point it has passed is
 * final. */
static int64_t
watermark(const ss_asof *j)
{
	return j->wm;
}

/* --select runs on jq directly: it may yield several values or none (a filter). */
static jq_state *
compile_select(const char *text)
{
	ss_expr_free(ss_expr_compile(text, "--select")); /* reports errors as every tool does */
	jq_state *jq = jq_init();
	if (jq == NULL || !jq_compile(jq, text))
		ss_diag_die(SS_EXIT_EXPR, "--select: cannot compile '%s'", text);
	return jq;
}

/* Bytes of held left records kept in memory before they overflow to disk. */
static size_t
spill_limit(void)
{
	const char *env = getenv("SS_ASOF_SPILL_BYTES");
	long long n = env ? atoll(env) : 0;

	return n > 0 ? (size_t)n : (size_t)64 << 20;
}

/* Memory a right record in the history takes: its bytes, its entry, malloc's header. */
#define HIST_COST(len) ((len) + sizeof(struct asof_right) + 16)

/* Bytes of right history kept in memory before the oldest of it goes to disk. */
static size_t
history_limit(void)
{
	const char *env = getenv("SS_ASOF_HISTORY_BYTES");
	long long n = env ? atoll(env) : 0;

	return n > 0 ? (size_t)n : (size_t)64 << 20;
}

static void release_final(ss_asof *j);
static void finish_held(ss_asof *j);

/* --order left: results in left input order per left partition (only defer reorders). */
static bool
ordered(const ss_asof *j)
{
	return j->o.order_left && j->o.emit == SS_ASOF_DEFER;
}

/* A held record whose result waits for older ones of its left partition (--order left). */
static bool
waiting(const ss_asof *j, const struct asof_held *h)
{
	return ordered(j) && (h->revision & ASOF_DONE);
}

/* The counters of this join, and the records it still holds. */
void
asof_join_totals(const ss_asof *j, struct asof_counters *c, size_t *held)
{
	*c = j->n;
	*held = j->heap.n + (size_t)j->spilled + (size_t)j->waiting;
}

/* The join being opened, until it is returned. A failure on the way (a file refused, a
 * bad expression, a state file that will not open) ends the process, and what the join
 * had built is then process state like any other, not a leak: LeakSanitizer, which
 * reports blocks nothing points to, must find it from here (CI: a refused --late-file
 * was reported as a leak of the whole join when no register still held it). Volatile:
 * nothing in the program reads it, and the compiler would drop the stores. */
static ss_asof *volatile opening;

static ss_asof *
join_alloc(const struct ss_asof_opts *opts, ss_writer *out)
{
	ss_asof *j = calloc(1, sizeof *j);

	if (j == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	j->o = *opts;
	j->out = out;
	j->maxr = j->lw = j->lw_bare = j->spill_min_t = j->wm = ASOF_NONE;
	j->idle_next = INT64_MAX;
	j->partition = -1;
	j->started = ss_time_mono();
	j->spill_limit = spill_limit();
	j->hist_limit = history_limit();
	j->finish_held = finish_held;
	return j;
}

static void history_loaded(ss_asof *j);

static void oq_loaded(ss_asof *j, int64_t match, uint64_t n);

static void
state_open(ss_asof *j)
{
	j->st = j->spill = asof_state_open(j->o.state);
	asof_state_load(j->st, j);
	if (ordered(j) && j->spilled > 0)
		asof_state_queues(j->st, j, oq_loaded);
	history_loaded(j);
	if (j->rseq > 0)
		asof_top(j)->had_history = true;
	asof_outbox_resend(j);
	asof_wm_update(j);
	release_final(j);
}

ss_asof *
asof_join_new(ss_asof *top, const char *path, int32_t partition)
{
	ss_asof *j = opening = join_alloc(&top->o, top->out);

	j->top = top;
	j->partition = partition;
	j->o.state = path;
	j->o.state_dir = NULL;
	j->o.right_partitions = 0; /* its one right partition */
	j->lon = top->lon;
	j->ron = top->ron;
	j->lby = top->lby;
	j->rby = top->rby;
	j->select = top->select;
	j->proj = top->proj;
	j->late = top->late;
	j->right_eof = top->right_eof;
	state_open(j);
	opening = NULL;
	return j;
}

ss_asof *
asof_join_open(const struct ss_asof_opts *opts, ss_writer *out)
{
	ss_asof *j = opening = join_alloc(opts, out);

	j->lon = ss_expr_compile(opts->left_on, opts->left_on == opts->right_on ? "--on" : "--left-on");
	j->ron = ss_expr_compile(opts->right_on, opts->left_on == opts->right_on ? "--on" : "--right-on");
	if (opts->left_by)
		j->lby = ss_expr_compile(opts->left_by, opts->left_by == opts->right_by ? "--by" : "--left-by");
	if (opts->right_by)
		j->rby = ss_expr_compile(opts->right_by, opts->left_by == opts->right_by ? "--by" : "--right-by");
	if (opts->select) {
		j->select = compile_select(opts->select);
		j->proj = ss_proj_compile(opts->select);
	}
	if (opts->late_file && (j->late = ss_wfile_append(opts->late_file)) == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot open: %s", opts->late_file, ss_wfile_strerror(errno));
	if (opts->acks) {
		j->acks = ss_acks_open(opts->acks);
		ss_acks_start(j->acks); /* before the first line, resent ones included */
	}
	if (opts->state)
		state_open(j);
	opening = NULL;
	return j;
}

/* ---- bad records (asof_parse.c reports them) ---- */

/* A bad record is about to end the run (--on-error fail): without a state file the held
 * records would be lost with the process, so they go out with what is known, as at
 * the end of the right input. */
static void
finish_held(ss_asof *j)
{
	if (j->o.onerror->mode != SS_ONERROR_FAIL || j->st || j->dir || (j->heap.n == 0 && j->spilled == 0))
		return;
	j->right_eof = true;
	release_final(j);
}

/* ---- output ---- */

static void
write_selected(ss_asof *j, const ss_buf *b, uint64_t line)
{
	jq_start(j->select, jv_parse_sized(b->data, (int)b->len), 0);
	for (;;) {
		jv v = jq_next(j->select);
		if (jv_is_valid(v)) {
			jv s = jv_dump_string(v, 0);
			asof_out(j, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
			jv_free(s);
			continue;
		}
		if (jv_invalid_has_msg(jv_copy(v))) {
			char msg[256], reason[320];
			snprintf(reason, sizeof reason, "left: --select: %s", ss_expr_errmsg(v, msg, sizeof msg));
			jv_free(v);
			/* a partition-join's names are its top's, which the run sets */
			ss_errpolicy_reject(j->o.onerror, asof_top(j)->lname, line, b->data, b->len, reason);
			return;
		}
		jv_free(v);
		return;
	}
}

/* An approximation chosen by a flag touched a result: it is marked in the output,
 * counted, and said on stderr the first time. */
static void
approximated(ss_asof *j, unsigned mark, uint64_t line)
{
	ss_asof *top = asof_top(j);

	if (mark & ASOF_MARK_EXPIRED) {
		j->n.expired++;
		if (!(top->told & ASOF_MARK_EXPIRED))
			ss_diag_warn("%s:%" PRIu64 ": a left record older than the right history kept (--retain): "
				     "written with \"right\": null and \"expired\": true, and counted", top->lname, line);
	}
	if (mark & ASOF_MARK_EARLY) {
		j->n.early++;
		if (!(top->told & ASOF_MARK_EARLY))
			ss_diag_warn("%s:%" PRIu64 ": a result written before the right stream passed its time (%s): "
				     "marked \"final\": false, and counted", top->lname, line,
				     j->o.emit == SS_ASOF_EAGER ? "--emit eager" : "--max-delay");
	}
	top->told |= mark;
}

/* The marks of a result, as JSON members. */
static const char *
mark_text(unsigned mark)
{
	return mark & ASOF_MARK_EXPIRED ? ",\"expired\":true" : mark & ASOF_MARK_EARLY ? ",\"final\":false" : "";
}

/* --select of proj.h's grammar, run on the parts of the result, which is never assembled;
 * false when libjq is to say why it fails on them. */
static bool
emit_projected(ss_asof *j, const char *raw, size_t len, const struct asof_right *r, int64_t revision,
	       unsigned mark)
{
	struct ss_proj_member m[4] = {{"left", raw, len}, {"right", r ? r->raw : "null", r ? r->len : 4}};
	struct ss_proj_root root = {NULL, 0, m, 2};
	char num[32];

	if (revision >= 0)
		m[root.nmembers++] = (struct ss_proj_member){"revision", num,
			(size_t)snprintf(num, sizeof num, "%" PRId64, revision)};
	if (mark & ASOF_MARK_EXPIRED)
		m[root.nmembers++] = (struct ss_proj_member){"expired", "true", 4};
	else if (mark & ASOF_MARK_EARLY)
		m[root.nmembers++] = (struct ss_proj_member){"final", "false", 5};
	ss_buf_reset(&j->obuf);
	if (!ss_proj_eval(j->proj, &root, &j->obuf))
		return false;
	asof_out(j, j->obuf.data, j->obuf.len);
	return true;
}

/* Write one result; revision < 0 outside revise mode; mark: ASOF_MARK_*. */
void
asof_emit(ss_asof *j, const char *raw, size_t len, uint64_t line, const struct asof_right *r, int64_t revision,
	  unsigned mark)
{
	ss_buf *b = &j->obuf;
	char num[32];

	if (mark)
		approximated(j, mark, line);
	if (r == NULL && j->o.inner)
		return;
	if (revision < 0 && j->revision0)
		revision = 0;
	j->n.emitted++;
	j->n.matched += r != NULL;
	if (j->select == NULL && asof_top(j)->acks == NULL) {
		/* straight into the output buffer: no line to keep, nothing to reshape; a
		 * reader of a killed process's output still gets whole lines */
		const char *marks = mark_text(mark);
		/* the whole line in one write(2): braces and names 19 bytes, the revision
		 * member at most sizeof num */
		ss_writer_reserve(j->out, len + (r ? r->len : 4) + 19 + sizeof num + strlen(marks));
		ss_writer_write(j->out, "{\"left\":", 8);
		ss_writer_write(j->out, raw, len);
		ss_writer_write(j->out, ",\"right\":", 9);
		if (r)
			ss_writer_write(j->out, r->raw, r->len);
		else
			ss_writer_write(j->out, "null", 4);
		if (revision >= 0)
			ss_writer_write(j->out, num, (size_t)snprintf(num, sizeof num, ",\"revision\":%" PRId64, revision));
		ss_writer_puts(j->out, marks);
		ss_writer_write(j->out, "}\n", 2);
		return;
	}
	if (j->proj && emit_projected(j, raw, len, r, revision, mark))
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
	if (j->select)
		write_selected(j, b, line);
	else
		asof_out(j, b->data, b->len);
}

/* ---- matching ---- */

/* Could the history have lost the answer for time t? (left too far out of order) */
static bool
expired(const ss_asof *j, const struct asof_key *k, int64_t t)
{
	if (!k->pruned)
		return false;
	int64_t first = k->hist[0].t;
	return first > t || (first == t && j->o.strict && j->o.direction != SS_ASOF_FORWARD);
}

/* ---- right history: in memory, its oldest part on disk past the memory bound ---- */

/* Where evicted history goes: the state file, or a private temporary one. */
static struct asof_state *
history_store(ss_asof *j)
{
	if (j->spill == NULL)
		j->spill = asof_state_open("");
	return j->spill;
}

/* The latest record of k at or before t (strict: before), wherever it is. */
static const struct asof_right *
hist_backward(ss_asof *j, const struct asof_key *k, int64_t t, bool strict)
{
	const struct asof_right *r = asof_hist_backward(k, t, strict);

	if (r != NULL || !k->on_disk)
		return r; /* what is on disk is older than anything in memory */
	return asof_state_right_near(history_store(j), k, strict ? t - 1 : t, true, &j->near[0]) ? &j->near[0] : NULL;
}

/* The earliest record of k at or after t (strict: after), wherever it is. */
static const struct asof_right *
hist_forward(ss_asof *j, const struct asof_key *k, int64_t t, bool strict)
{
	const struct asof_right *r = asof_hist_forward(k, t, strict);

	if (!k->on_disk || (r != NULL && r != &k->hist[0]))
		return r;
	if (!asof_state_right_near(history_store(j), k, strict ? t + 1 : t, false, &j->near[1]))
		return r;
	return r == NULL || j->near[1].t < r->t ? &j->near[1] : r;
}

static int
cmp_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The median time of the history in memory (a sample of it, when large). */
static int64_t
history_median(const ss_asof *j)
{
	enum { SAMPLE = 65536 };
	size_t n = 0, total = 0, step;
	int64_t *v = ss_xmalloc(SAMPLE * sizeof *v);

	for (size_t i = 0; i < j->keys.cap; i++)
		if (j->keys.slot[i].key != NULL)
			total += j->keys.slot[i].key->n;
	step = total / SAMPLE + 1;
	for (size_t i = 0, seen = 0; i < j->keys.cap; i++) {
		const struct asof_key *k = j->keys.slot[i].key;
		for (size_t r = 0; k != NULL && r < k->n; r++, seen++)
			if (seen % step == 0 && n < SAMPLE)
				v[n++] = k->hist[r].t;
	}
	qsort(v, n, sizeof *v, cmp_time);
	int64_t m = n ? v[n / 2] : INT64_MIN;
	free(v);
	return m;
}

/* Key k's records older than cutoff, but its newest such one, go to disk. */
static size_t
evict_key(ss_asof *j, struct asof_key *k, int64_t cutoff)
{
	size_t drop = 0, bytes = 0;

	while (drop + 1 < k->n && k->hist[drop + 1].t < cutoff)
		drop++;
	for (size_t i = 0; i < drop; i++) {
		if (j->st == NULL) /* the state file has every record already */
			asof_state_right_put(history_store(j), k, &k->hist[i]);
		bytes += HIST_COST(k->hist[i].len);
		free(k->hist[i].raw);
	}
	if (drop > 0) {
		memmove(k->hist, k->hist + drop, (k->n - drop) * sizeof *k->hist);
		k->n -= drop;
		k->on_disk = true;
	}
	return bytes;
}

/* Over the memory bound: the older half of the history goes to disk (the default keeps
 * all of it, for the exact answer to a left record late by any amount). */
static void
evict(ss_asof *j)
{
	int64_t cutoff = history_median(j);
	size_t freed = 0;

	for (size_t i = 0; i < j->keys.cap; i++)
		if (j->keys.slot[i].key != NULL)
			freed += evict_key(j, j->keys.slot[i].key, cutoff);
	j->hist_bytes = freed < j->hist_bytes ? j->hist_bytes - freed : 0;
}

/* A right record into the history; NULL when one of the same key and time ranks higher. */
static const struct asof_right *
history_put(ss_asof *j, struct asof_key *k, const struct asof_in *in, uint64_t seq)
{
	if (k->on_disk && k->n > 0 && in->t < k->hist[0].t) {
		/* among the evicted: it goes where they are */
		struct asof_right r = {.t = in->t, .seq = seq, .len = (uint32_t)in->len, .raw = (char *)in->raw};
		asof_state_right_put(history_store(j), k, &r);
		if (!asof_state_right_near(history_store(j), k, in->t, true, &j->near[0]) || j->near[0].seq != seq)
			return NULL;
		return &j->near[0];
	}
	char *raw = ss_xmalloc(in->len ? in->len : 1);
	memcpy(raw, in->raw, in->len);
	const struct asof_right *r = asof_hist_put(k, in->t, seq, raw, in->len);
	if (r == NULL)
		return NULL;
	if (j->st)
		asof_state_right_put(j->st, k, r);
	j->hist_bytes += HIST_COST(in->len);
	return r;
}

/* After a record went into the history: keep memory bounded. */
static void
history_bound(ss_asof *j)
{
	if (j->hist_bytes > j->hist_limit && j->o.retain < 0 && !j->batch)
		evict(j);
}

/* The history a state file gave back counts against the memory bound too. */
static void
history_loaded(ss_asof *j)
{
	j->hist_bytes = 0;
	for (size_t i = 0; i < j->keys.cap; i++) {
		const struct asof_key *k = j->keys.slot[i].key;
		for (size_t r = 0; k != NULL && r < k->n; r++)
			j->hist_bytes += HIST_COST(k->hist[r].len);
	}
	history_bound(j);
}

static const struct asof_right *
best_match(ss_asof *j, const struct asof_key *k, int64_t t)
{
	const struct asof_right *b = NULL, *f = NULL;

	if (j->o.direction != SS_ASOF_FORWARD)
		b = hist_backward(j, k, t, j->o.strict);
	if (j->o.direction != SS_ASOF_BACKWARD)
		f = hist_forward(j, k, t, j->o.strict);
	return asof_pick(j, t, b, f);
}

/* The latest right event time that could still change the match of a left record at t
 * in key k: once the watermark is past it, the answer is final. */
static int64_t
release_point(ss_asof *j, const struct asof_key *k, int64_t t)
{
	if (j->o.direction == SS_ASOF_BACKWARD)
		return j->o.strict ? t - 1 : t;
	int64_t p = j->o.tolerance < 0 ? INT64_MAX : sat_add(t, j->o.tolerance);
	const struct asof_right *f = hist_forward(j, k, t, j->o.strict);
	if (f)
		p = min64(p, f->t);
	if (j->o.direction == SS_ASOF_NEAREST) {
		const struct asof_right *b = hist_backward(j, k, t, j->o.strict);
		if (b)
			p = min64(p, sat_add(t, t - b->t));
	}
	return p;
}

/* A right record at r can only lower a held record's release point. */
static int64_t
release_point_after(const ss_asof *j, const struct asof_held *h, int64_t r)
{
	bool fwd = j->o.strict ? r > h->t : r >= h->t;
	bool back = j->o.strict ? r < h->t : r <= h->t;

	if (j->o.direction == SS_ASOF_FORWARD)
		return fwd ? min64(h->p, r) : h->p;
	if (fwd)
		return min64(h->p, r);
	if (back)
		return min64(h->p, sat_add(h->t, h->t - r));
	return h->p;
}

/* ---- held records ---- */

/* Put a held record first in its key's list. */
static void
key_link(struct asof_held *h)
{
	struct asof_key *k = h->key;

	h->knext = k->held;
	h->kprev = NULL;
	if (k->held)
		k->held->kprev = h;
	k->held = h;
}

/* Put a held record into its key's list, the arrival list and the release heap. */
void
asof_held_link(ss_asof *j, struct asof_held *h)
{
	key_link(h);
	h->anext = NULL;
	h->aprev = j->alast;
	if (j->alast)
		j->alast->anext = h;
	else
		j->afirst = h;
	j->alast = h;
	asof_heap_push(&j->heap, h);
	j->held_bytes += sizeof *h + h->len;
}

/* ---- --order left: per left partition, results in arrival order ---- */

/* The queue of a left partition number (-1: the records without envelope). Partitions
 * of the same number in several left topics share one: their order is kept all the same. */
static uint32_t
oq_find(ss_asof *j, int32_t partition)
{
	if (j->noq > 0 && j->oq[j->oqlast].partition == partition)
		return (uint32_t)j->oqlast;
	for (size_t i = 0; i < j->noq; i++)
		if (j->oq[i].partition == partition)
			return (uint32_t)(j->oqlast = i);
	if (j->noq == j->oqcap) {
		j->oqcap = j->oqcap ? 2 * j->oqcap : 8;
		j->oq = ss_xrealloc(j->oq, j->oqcap * sizeof *j->oq);
	}
	j->oq[j->noq] = (struct asof_oq){.partition = partition};
	return (uint32_t)(j->oqlast = j->noq++);
}

static uint32_t
oq_of(ss_asof *j, const struct asof_in *in)
{
	return oq_find(j, in->has_env ? in->env.partition : -1);
}

/* Does a new left record of this partition have to wait? */
static bool
oq_busy(ss_asof *j, const struct asof_in *in)
{
	uint32_t i = oq_of(j, in); /* before j->oq is read: it may move */

	return j->oq[i].first != NULL || j->oq[i].spilled > 0;
}

/* A queue's spilled count, as a state file keeps it (asof_state_queues). */
static void
oq_loaded(ss_asof *j, int64_t match, uint64_t n)
{
	uint32_t i = oq_find(j, (int32_t)(match - 1)); /* before j->oq is read: it may move */

	j->oq[i].spilled = n;
}

static void
oq_push(ss_asof *j, struct asof_held *h)
{
	struct asof_oq *q = &j->oq[h->oq];

	h->onext = NULL;
	if (q->last == NULL) {
		q->first = q->last = h;
	} else if (q->last->id < h->id) {
		q->last->onext = h;
		q->last = h;
	} else { /* not newer than the newest (not expected): into its place */
		struct asof_held **pp = &q->first;
		while ((*pp)->id < h->id)
			pp = &(*pp)->onext;
		h->onext = *pp;
		*pp = h;
	}
}

static void emit_done(ss_asof *j, struct asof_held *h);
static void unhold(ss_asof *j, struct asof_held *h);

/* Write the done records at the head of queue i. */
static void
oq_drain(ss_asof *j, uint32_t i)
{
	struct asof_oq *q = &j->oq[i];
	struct asof_held *h;

	while ((h = q->first) != NULL && (h->revision & ASOF_DONE)) {
		q->first = h->onext;
		if (q->first == NULL)
			q->last = NULL;
		j->waiting--;
		emit_done(j, h);
		unhold(j, h);
	}
}

static void
arrival_unlink(ss_asof *j, struct asof_held *h)
{
	if (h->aprev)
		h->aprev->anext = h->anext;
	else
		j->afirst = h->anext;
	if (h->anext)
		h->anext->aprev = h->aprev;
	else
		j->alast = h->aprev;
	h->anext = h->aprev = NULL;
}

/* A held record into memory with --order left: a done one in its key's list (its answer
 * needs the history kept) and its queue only, else as asof_held_link does. */
static void
order_link(ss_asof *j, struct asof_held *h)
{
	if (h->revision & ASOF_DONE) {
		key_link(h);
		h->anext = h->aprev = NULL;
		j->held_bytes += sizeof *h + h->len;
		j->waiting++;
	} else {
		asof_held_link(j, h);
	}
	oq_push(j, h);
}

/* A held record's answer is final, or written early (mark): done; out when it is its
 * partition's oldest. */
static void
order_done(ss_asof *j, struct asof_held *h, unsigned mark)
{
	arrival_unlink(j, h);
	h->revision = ASOF_DONE | mark;
	j->waiting++;
	if (j->st && j->oq[h->oq].first != h)
		asof_state_held_put(j->st, h, false); /* it waits: a restart knows it is done */
	oq_drain(j, h->oq);
}

/* Held records beyond the memory bound wait in the state file (or a temporary one). */
static void
spill_out(ss_asof *j, struct asof_held *h)
{
	if (j->spill == NULL)
		j->spill = asof_state_open("");
	asof_state_held_put(j->spill, h, true);
	j->spilled++;
	if (j->spill_min_t == ASOF_NONE || h->t < j->spill_min_t)
		j->spill_min_t = h->t;
	if (ordered(j))
		j->oq[h->oq].spilled++;
	free(h);
}

static void
hold(ss_asof *j, struct asof_key *k, const struct asof_in *in, int64_t p, const struct asof_right *r,
     int64_t revision)
{
	struct asof_held *h = ss_xmalloc(sizeof *h + in->len);

	/* the clock only for --max-delay: a held record each left record, in a batch */
	int64_t since = j->o.max_delay >= 0 ? ss_time_mono() : 0;

	*h = (struct asof_held){.t = in->t, .p = p, .since = since, .id = ++j->lid,
				.match = r ? r->seq : 0, .revision = (uint32_t)revision, .line = in->line,
				.key = k, .len = in->len};
	memcpy(h->raw, in->raw, in->len);
	/* --order left: a queue's records on disk are newer than its records in memory */
	uint64_t behind = j->spilled;
	if (ordered(j)) {
		h->oq = oq_of(j, in);
		h->match = (uint64_t)(j->oq[h->oq].partition + 1);
		behind = j->oq[h->oq].spilled;
	}
	if (j->o.emit == SS_ASOF_DEFER && (behind > 0 || j->held_bytes + sizeof *h + h->len > j->spill_limit)) {
		spill_out(j, h);
		return;
	}
	if (ordered(j)) {
		order_link(j, h);
	} else {
		asof_held_link(j, h);
	}
	if (j->st)
		asof_state_held_put(j->st, h, false);
}

static void
unhold(ss_asof *j, struct asof_held *h)
{
	struct asof_key *k = h->key;

	if (h->kprev)
		h->kprev->knext = h->knext;
	else
		k->held = h->knext;
	if (h->knext)
		h->knext->kprev = h->kprev;
	if (!waiting(j, h)) /* a done one left the arrival list when it was done */
		arrival_unlink(j, h);
	if (j->st)
		asof_state_held_del(j->st, h);
	j->held_bytes -= sizeof *h + h->len;
	free(h);
}

/* --emit revise keeps every left record whose answer is final (on disk), so that a right
 * record that comes late can still correct it: the last revision is the exact answer. */
static bool
keeps_closed(const ss_asof *j)
{
	return j->o.emit == SS_ASOF_REVISE && !j->batch;
}

static struct asof_state *
closed_store(ss_asof *j)
{
	if (j->spill == NULL)
		j->spill = asof_state_open("");
	return j->spill;
}

/* Keep a left record whose answer (revision, match) is final as it is now. */
static void
close_now(ss_asof *j, struct asof_key *k, const struct asof_in *in, const struct asof_right *r, int64_t revision)
{
	struct asof_held *h = ss_xmalloc(sizeof *h + in->len);

	*h = (struct asof_held){.t = in->t, .match = r ? r->seq : 0, .revision = (uint32_t)revision,
				.line = in->line, .key = k, .len = in->len};
	memcpy(h->raw, in->raw, in->len);
	asof_state_closed_put(closed_store(j), h);
	free(h);
}

/* Emit (defer) or close (revise) a held record: its answer is final, or --max-delay
 * ran out (mark ASOF_MARK_EARLY). */
static void
release(ss_asof *j, struct asof_held *h, unsigned mark)
{
	if (ordered(j)) {
		order_done(j, h, mark);
		return;
	}
	if (j->o.emit == SS_ASOF_DEFER)
		asof_emit(j, h->raw, h->len, h->line, best_match(j, h->key, h->t), -1, mark);
	else if (keeps_closed(j))
		asof_state_closed_put(closed_store(j), h);
	unhold(j, h);
}

/* The right file has been indexed whole in the middle of a merge (asof_run.c): the
 * records held so far get their final answers from the index. */
static void
answer_from_index(ss_asof *j, struct asof_held *h)
{
	struct asof_in q = {.t = h->t, .key = {.data = h->key->enc, .len = h->key->enclen}};
	struct asof_right buf[2];

	asof_emit(j, h->raw, h->len, h->line, asof_index_match(j->index, j, &q, buf), -1, 0);
}

static void
answer_spilled_from_index(ss_asof *j, struct asof_held *h)
{
	answer_from_index(j, h);
	free(h);
}

/* --order left: a done record's result, as release would have written it. */
static void
emit_done(ss_asof *j, struct asof_held *h)
{
	unsigned mark = h->revision & ~ASOF_DONE;

	if (mark & ASOF_MARK_EXPIRED)
		asof_emit(j, h->raw, h->len, h->line, NULL, -1, mark);
	else if (j->index)
		answer_from_index(j, h);
	else
		asof_emit(j, h->raw, h->len, h->line, best_match(j, h->key, h->t), -1, mark);
}

void
asof_answer_held(ss_asof *j)
{
	if (ordered(j)) { /* every answer is final now (right_eof), and out in order */
		release_final(j);
		return;
	}
	while (j->heap.n > 0) {
		struct asof_held *h = asof_heap_pop(&j->heap);
		answer_from_index(j, h);
		unhold(j, h);
	}
	while (j->spilled > 0 &&
	       asof_state_unspill(j->spill, j, ASOF_UNSPILL_P, INT64_MAX, UNSPILL_BATCH, answer_spilled_from_index) > 0)
		;
}

/* Is the answer of a record with release point p final? */
static bool
final(const ss_asof *j, int64_t p)
{
	return j->right_eof || p < watermark(j);
}

static void
release_spilled(ss_asof *j, struct asof_held *h)
{
	asof_emit(j, h->raw, h->len, h->line, best_match(j, h->key, h->t), -1, 0);
	free(h);
}

static void
release_spilled_early(ss_asof *j, struct asof_held *h)
{
	asof_emit(j, h->raw, h->len, h->line, best_match(j, h->key, h->t), -1, ASOF_MARK_EARLY);
	free(h);
}

/* A spilled record back in memory: its release point may have come closer meanwhile. */
static void
relink(ss_asof *j, struct asof_held *h)
{
	if (ordered(j)) {
		if (!(h->revision & ASOF_DONE))
			h->p = min64(h->p, release_point(j, h->key, h->t));
		h->oq = oq_find(j, (int32_t)h->match - 1);
		j->oq[h->oq].spilled--;
		j->oq[h->oq].from = h->id + 1; /* the ones after it are on disk */
		order_link(j, h);
		if (j->st)
			asof_state_held_put(j->st, h, false);
		oq_drain(j, h->oq);
		return;
	}
	h->p = min64(h->p, release_point(j, h->key, h->t));
	asof_held_link(j, h);
	if (j->st)
		asof_state_held_put(j->st, h, false);
}

static void
release_final(ss_asof *j)
{
	for (;;) {
		while (j->heap.n > 0 && final(j, j->heap.v[0]->p))
			release(j, asof_heap_pop(&j->heap), 0);
		if (j->spilled == 0)
			break;
		int64_t wm = watermark(j);
		size_t n = 0;
		if (ordered(j)) {
			/* back into memory in arrival order, behind the ones of their partition
			 * there: none is written from disk ahead of an older one. A partition
			 * with none in memory gets its oldest back whatever the memory bound
			 * (a batch at most), so that one held long holds up no other. */
			for (size_t i = 0; i < j->noq; i++) {
				const struct asof_oq *q = &j->oq[i];
				if (q->spilled > 0 && (q->first == NULL || j->held_bytes < j->spill_limit / 2))
					n += asof_state_unspill_queue(j->spill, j, q->partition + 1, (int64_t)q->from,
								      UNSPILL_BATCH, relink);
			}
			if (n == 0)
				break;
			continue;
		}
		if (j->right_eof || wm != ASOF_NONE)
			n += asof_state_unspill(j->spill, j, ASOF_UNSPILL_P, j->right_eof ? INT64_MAX : wm - 1,
						UNSPILL_BATCH, release_spilled);
		if (j->held_bytes < j->spill_limit / 2)
			n += asof_state_unspill(j->spill, j, ASOF_UNSPILL_P, INT64_MAX, UNSPILL_BATCH, relink);
		if (n == 0)
			break;
	}
	if (j->spilled > 0)
		j->spill_min_t = asof_state_spill_min(j->spill);
}

void
asof_join_tick(ss_asof *j)
{
	if (j->feed_synced != asof_top(j)->feed_gen) {
		asof_wm_feed(j); /* the right input's writer said more */
		if (asof_wm_update(j))
			release_final(j);
	}
	if (j->lparts.n > 0)
		asof_lw_update(j); /* a left partition may have turned idle */
	if (j->rparts.n > 0 && j->idle_next != INT64_MAX && ss_time_mono() >= j->idle_next &&
	    asof_wm_update(j))
		release_final(j); /* a partition turned idle: it holds the others back no more */
	if (j->o.max_delay < 0 || j->o.emit != SS_ASOF_DEFER)
		return;
	int64_t now = ss_time_mono();
	for (;;) {
		while (j->afirst && now - j->afirst->since >= j->o.max_delay) {
			struct asof_held *h = j->afirst;
			asof_heap_remove(&j->heap, h);
			release(j, h, ASOF_MARK_EARLY);
		}
		/* --order left: the spilled ones are newer; they come back as room is made,
		 * with their arrival times */
		uint64_t before = j->spilled;
		if (!ordered(j) || before == 0 || j->held_bytes >= j->spill_limit / 2)
			break;
		release_final(j);
		if (j->spilled == before)
			break;
	}
	while (!ordered(j) && j->spilled > 0 &&
	       asof_state_unspill(j->spill, j, ASOF_UNSPILL_SINCE, now - j->o.max_delay, UNSPILL_BATCH,
				  release_spilled_early) > 0)
		;
}

static int
max_delay_timeout(const ss_asof *j)
{
	if (j->o.max_delay < 0 || j->o.emit != SS_ASOF_DEFER || j->afirst == NULL)
		return -1;
	int64_t left = j->afirst->since + j->o.max_delay - ss_time_mono();
	return left <= 0 ? 0 : (int)(left / 1000000 + 1);
}

int
asof_join_timeout(const ss_asof *j)
{
	int a = max_delay_timeout(j), b = asof_wm_timeout(j);

	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

bool
asof_join_done(const ss_asof *j)
{
	return j->left_eof && (j->right_eof || (j->heap.n == 0 && j->spilled == 0));
}

/* ---- records ---- */

/* With --state, flush the results and commit every so many records, so that a crash
 * replays a bounded tail (results are flushed first: at least once, never lost). */
static void
checkpoint(ss_asof *j)
{
	if (j->st && ++j->uncommitted >= CHECKPOINT_RECORDS)
		asof_join_idle(j);
}

static void
drop_from_state(const struct asof_key *k, const struct asof_right *r, void *arg)
{
	asof_state_right_del(arg, k, r);
}

/* Keep history from the slower stream's position minus --retain, and whatever the held
 * records of this key still need. */
static void
prune(ss_asof *j, struct asof_key *k)
{
	/* by default all of it is kept: a left record may come late by any amount; a
	 * merge of two ordered files knows it never does (asof_run.c) */
	if (j->lw == ASOF_NONE || k->n < 2 || (j->o.retain < 0 && !j->batch))
		return;
	int64_t cutoff = sat_add(min64(j->lw, watermark(j)), j->o.retain < 0 ? 0 : -j->o.retain);
	if (k->hist[1].t >= cutoff)
		return;
	if (j->o.direction == SS_ASOF_BACKWARD && !ordered(j)) {
		/* release points are the left times: the heap's top is the oldest held (not so
		 * with --order left: a done record waiting is in no heap) */
		if (j->heap.n > 0)
			cutoff = min64(cutoff, j->heap.v[0]->t);
	} else {
		for (const struct asof_held *h = k->held; h; h = h->knext)
			cutoff = min64(cutoff, h->t);
	}
	if (j->spilled > 0)
		cutoff = min64(cutoff, j->spill_min_t);
	bool was_pruned = k->pruned;
	asof_hist_prune(k, cutoff, j->st ? drop_from_state : NULL, j->st);
	if (keeps_closed(j))
		asof_state_closed_prune(closed_store(j), k, cutoff);
	if (j->st && k->pruned && !was_pruned)
		asof_state_pruned(j->st, k);
}

/* A late right record, or an expired left one: to the --late-file. */
static void
to_late_file(ss_asof *j, const struct asof_in *in)
{
	if (j->late) {
		fwrite(in->raw, 1, in->len, j->late);
		fputc('\n', j->late);
	}
}

static bool keeps_closed(const ss_asof *j);

/* A right record older than what its partition delivered (or than the watermark the
 * join released): not applied, counted, to the --late-file; said once. */
static void
late(ss_asof *j, const struct asof_in *in)
{
	ss_asof *top = asof_top(j);

	j->n.late++;
	to_late_file(j, in);
	if (top->told & ASOF_MARK_LATE)
		return;
	top->told |= ASOF_MARK_LATE;
	ss_diag_warn("%s:%" PRIu64 ": a right record older than what its partition already delivered "
		     "(--grace %gs): late, %s, and counted%s", top->rname, in->line, (double)j->o.grace / 1e9,
		     keeps_closed(j) ? "applied, every result it changes revised" : "not applied",
		     j->late ? " (in the --late-file)" : "");
}

/* Keep the revision counter of an enveloped record, for replays after a seek. */
static void
record_revision(ss_asof *j, const struct asof_held *h)
{
	struct ss_envelope env;

	asof_state_held_put(j->st, h, false);
	if (ss_envelope_get(h->raw, h->len, &env))
		asof_state_revision_set(j->st, &env, h->revision);
}

/* Revise the open records of key k (and lower release points) after a right record. */
static void
right_changed(ss_asof *j, struct asof_key *k, int64_t t)
{
	for (struct asof_held *h = k->held; h; h = h->knext) {
		if (waiting(j, h))
			continue; /* its answer is final: only written later */
		if (j->o.direction != SS_ASOF_BACKWARD) {
			int64_t p = release_point_after(j, h, t);
			if (p != h->p) {
				h->p = p;
				asof_heap_fix(&j->heap, h);
			}
		}
		if (j->o.emit != SS_ASOF_REVISE)
			continue;
		const struct asof_right *r = best_match(j, k, h->t);
		uint64_t seq = r ? r->seq : 0;
		if (seq == h->match)
			continue;
		h->match = seq;
		h->revision++;
		j->n.revisions++;
		asof_emit(j, h->raw, h->len, h->line, r, h->revision, 0);
		if (j->st)
			record_revision(j, h);
	}
}

/* Held because nothing says which partitions the right input has: say so, once. */
static void
tell_blind(ss_asof *j)
{
	ss_asof *top = asof_top(j);

	if (top->blind_told || j->wm != ASOF_NONE || !asof_wm_blind(j))
		return;
	top->blind_told = true;
	ss_diag_warn("%s: its records carry Kafka partitions, but nothing says which partitions it has "
		     "(its writer is not ss-consume on this host): left records wait for its end to be "
		     "answered exactly; --right-partitions N says how many to wait for", top->rname);
}

/* A closed left record (revise) whose answer a late right record may have changed. */
static void
revise_closed(ss_asof *j, struct asof_held *h)
{
	struct ss_envelope env;

	if (expired(j, h->key, h->t))
		return; /* --retain dropped what it needs: its answer stands */
	const struct asof_right *r = best_match(j, h->key, h->t);
	uint64_t seq = r ? r->seq : 0;
	if (seq == h->match)
		return;
	h->match = seq;
	h->revision++;
	j->n.revisions++;
	asof_emit(j, h->raw, h->len, h->line, r, h->revision, 0);
	asof_state_closed_put(closed_store(j), h);
	if (j->st && ss_envelope_get(h->raw, h->len, &env))
		asof_state_revision_set(j->st, &env, h->revision);
}

static uint64_t right_seq(ss_asof *j, const struct asof_in *in);

/* --emit revise: a late right record is applied all the same, and every result it
 * changes, open or closed, gets a new revision. Only left records between its
 * neighbours in its key's history can have their answer changed by it. */
static void
correct_late(ss_asof *j, const struct asof_in *in)
{
	struct asof_key *k = asof_key_get(&j->keys, in->key.data, in->key.len);

	if (history_put(j, k, in, right_seq(j, in)) == NULL)
		return;
	if (k->held)
		right_changed(j, k, in->t);
	const struct asof_right *prev = hist_backward(j, k, in->t, true);
	int64_t lo = prev ? prev->t : INT64_MIN;
	const struct asof_right *next = hist_forward(j, k, in->t, true);
	asof_state_closed_each(closed_store(j), j, k, lo, next ? next->t : INT64_MAX, revise_closed);
	history_bound(j);
}

/* A right record's identity, and its rank among records of the same key and time (the
 * higher replaces the lower): by partition and offset for records of Kafka, whatever
 * the order partitions arrive in; by arrival for the others. */
static uint64_t
right_seq(ss_asof *j, const struct asof_in *in)
{
	uint64_t n = ++j->rseq;

	if (!in->has_env)
		return n;
	return UINT64_C(1) << 62 | (uint64_t)in->env.partition << 42 | ((uint64_t)in->env.offset & ((UINT64_C(1) << 42) - 1));
}

void
asof_join_right(ss_asof *j, const struct asof_in *in)
{
	bool keep = in->has_env && j->st; /* exactly once needs the state file */

	if (keep && asof_state_seen(j->st, &in->env)) {
		j->n.replayed++;
		asof_wm_seen(j, false, &in->env);
		return;
	}
	j->n.right++;
	if (asof_wm_right(j, in)) {
		late(j, in);
		if (keeps_closed(j))
			correct_late(j, in);
	} else {
		struct asof_key *k = asof_key_get(&j->keys, in->key.data, in->key.len);
		if (history_put(j, k, in, right_seq(j, in)) != NULL) {
			if (k->held && (j->o.direction != SS_ASOF_BACKWARD || j->o.emit == SS_ASOF_REVISE))
				right_changed(j, k, in->t);
			prune(j, k);
			history_bound(j);
		}
	}
	if (keep)
		asof_state_applied(j->st, &in->env);
	release_final(j);
	if (j->heap.n > 0 || j->spilled > 0)
		tell_blind(j);
	checkpoint(j);
}

void
asof_check_right_empty(ss_asof *j)
{
	ss_asof *top = asof_top(j);

	if (top->right_empty && !top->o.allow_empty_right)
		ss_diag_die(SS_EXIT_DATA, "%s: ended without a record: every left record would be joined with "
			    "null (did its consumer fail? --allow-empty-right accepts it)", top->rname);
}

/* Revision number of a left record's first result in this run: 0, or the next one when
 * the record is a replay (after a seek) of one already emitted. */
static int64_t
first_revision(ss_asof *j, const struct asof_in *in)
{
	if (!in->has_env || j->st == NULL)
		return 0;
	int64_t rev = asof_state_revision_get(j->st, &in->env) + 1;
	asof_state_revision_set(j->st, &in->env, rev);
	return rev;
}

/* The open record a replayed left record repeats, if it is still open. */
static struct asof_held *
find_open(struct asof_key *k, const struct asof_in *in)
{
	for (struct asof_held *h = k->held; h; h = h->knext)
		if (h->t == in->t && h->len == in->len && memcmp(h->raw, in->raw, in->len) == 0)
			return h;
	return NULL;
}

void
asof_join_left(ss_asof *j, const struct asof_in *in)
{
	bool keep = in->has_env && j->st; /* exactly once needs the state file */
	bool replay = keep && asof_state_seen(j->st, &in->env);

	if (replay && j->o.emit != SS_ASOF_REVISE) {
		j->n.replayed++;
		return;
	}
	j->n.left++;
	if (in->t > j->lw || in->has_env || j->lparts.n > 0)
		asof_lw_left(j, in);
	struct asof_key *k = asof_key_get(&j->keys, in->key.data, in->key.len);
	if (expired(j, k, in->t)) {
		/* a replay's earlier result knew more than what is left: do not revise it */
		to_late_file(j, in);
		if (replay)
			approximated(j, ASOF_MARK_EXPIRED, in->line);
		else if (ordered(j) && oq_busy(j, in))
			hold(j, k, in, 0, NULL, ASOF_DONE | ASOF_MARK_EXPIRED);
		else
			asof_emit(j, in->raw, in->len, in->line, NULL,
				  j->o.emit == SS_ASOF_REVISE ? first_revision(j, in) : -1, ASOF_MARK_EXPIRED);
	} else if (j->o.emit == SS_ASOF_EAGER) {
		bool now_final = final(j, release_point(j, k, in->t));
		asof_emit(j, in->raw, in->len, in->line, best_match(j, k, in->t), -1, now_final ? 0 : ASOF_MARK_EARLY);
	} else {
		const struct asof_right *r = best_match(j, k, in->t);
		int64_t p = release_point(j, k, in->t);
		if (j->o.emit == SS_ASOF_REVISE) {
			int64_t rev = first_revision(j, in);
			asof_emit(j, in->raw, in->len, in->line, r, rev, 0);
			struct asof_held *open = replay ? find_open(k, in) : NULL;
			if (open) {
				open->revision = (uint32_t)rev;
				open->match = r ? r->seq : 0;
				record_revision(j, open);
			} else if (!final(j, p)) {
				hold(j, k, in, p, r, rev);
			} else {
				close_now(j, k, in, r, rev);
			}
		} else if (final(j, p) && ordered(j) && oq_busy(j, in)) {
			hold(j, k, in, p, r, ASOF_DONE); /* after the older ones of its partition */
		} else if (final(j, p)) {
			asof_emit(j, in->raw, in->len, in->line, r, -1, 0);
		} else {
			hold(j, k, in, p, r, 0);
			tell_blind(j);
		}
	}
	if (keep)
		asof_state_applied(j->st, &in->env);
	checkpoint(j);
}

bool
asof_join_applied(ss_asof *j, const struct ss_envelope *env)
{
	return j->st != NULL && asof_state_seen(j->st, env);
}

void
asof_join_right_end(ss_asof *j)
{
	j->right_eof = true;
	release_final(j);
}

void
asof_join_idle(ss_asof *j)
{
	ss_writer_flush(j->out);
	if (j->late)
		fflush(j->late);
	if (j->acks)
		j->delivered = ss_acks_delivered(j->acks);
	if (j->st) {
		asof_outbox_trim(j);
		asof_state_meta(j->st, j);
		asof_state_commit(j->st);
		j->uncommitted = 0;
	}
	if (j->spill && j->spill != j->st)
		asof_state_commit(j->spill);
}

void
asof_counters_add(struct asof_counters *sum, const struct asof_counters *c)
{
	sum->left += c->left;
	sum->right += c->right;
	sum->emitted += c->emitted;
	sum->matched += c->matched;
	sum->late += c->late;
	sum->expired += c->expired;
	sum->revisions += c->revisions;
	sum->early += c->early;
	sum->replayed += c->replayed;
}

/* What a partition-join borrows from its top join stays the top's to free. */
static void
free_shared(ss_asof *j)
{
	ss_expr_free(j->lon);
	ss_expr_free(j->ron);
	ss_expr_free(j->lby);
	ss_expr_free(j->rby);
	if (j->select)
		jq_teardown(&j->select);
	ss_proj_free(j->proj);
	if (j->late)
		fclose(j->late);
}

void
asof_join_free(ss_asof *j)
{
	if (j->spill && j->spill != j->st)
		asof_state_close(j->spill);
	if (j->st)
		asof_state_close(j->st);
	if (ordered(j)) { /* every held record in memory is in its partition's queue */
		for (size_t i = 0; i < j->noq; i++)
			while (j->oq[i].first) {
				struct asof_held *h = j->oq[i].first;
				j->oq[i].first = h->onext;
				free(h);
			}
	} else {
		while (j->afirst) {
			struct asof_held *h = j->afirst;
			j->afirst = h->anext;
			free(h);
		}
	}
	free(j->oq);
	ss_reader_free(j->lrd);
	ss_reader_free(j->rrd);
	free(j->near[0].raw);
	free(j->near[1].raw);
	free(j->heap.v);
	free(j->outbox.v);
	ss_acks_close(j->acks);
	free(j->rparts.v);
	free(j->lparts.v);
	asof_map_free(&j->keys);
	if (j->top == NULL)
		free_shared(j);
	ss_buf_free(&j->obuf);
	ss_buf_free(&j->lin.key);
	ss_buf_free(&j->rin.key);
	free(j);
}
