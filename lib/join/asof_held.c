/* Held left records (defer, revise, --order left): held, spilled past the memory bound, and released. */
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"

enum { UNSPILL_BATCH = 1024 }; /* spilled held records read back at a time */

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

/* The bytes a held record takes in memory (counted against SS_ASOF_SPILL_BYTES). */
static size_t
held_size(const struct asof_held *h)
{
	return sizeof *h + h->len + (h->has_known ? sizeof(struct asof_known) : 0);
}

/* Put a held record into its key's list, the arrival list and the release heap. */
void
asof_held_link(asof_join *j, struct asof_held *h)
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
	j->held_bytes += held_size(h);
}

/* ---- --order left: per left partition, results in arrival order ---- */

/* The queue of a left partition number (-1: the records without envelope). Partitions
 * of the same number in several left topics share one: their order is kept all the same. */
static uint32_t
oq_find(asof_join *j, int32_t partition)
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
oq_of(asof_join *j, const struct asof_in *in)
{
	return oq_find(j, in->has_env ? in->env.partition : -1);
}

/* Does a new left record of this partition have to wait? */
bool
asof_oq_busy(asof_join *j, const struct asof_in *in)
{
	uint32_t i = oq_of(j, in); /* before j->oq is read: it may move */

	return j->oq[i].first != NULL || j->oq[i].spilled > 0;
}

/* A queue's spilled count, as a state file keeps it (asof_state_queues). */
void
asof_oq_loaded(asof_join *j, int64_t match, uint64_t n)
{
	uint32_t i = oq_find(j, (int32_t)(match - 1)); /* before j->oq is read: it may move */

	j->oq[i].spilled = n;
}

static void
oq_push(asof_join *j, struct asof_held *h)
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

static void emit_done(asof_join *j, struct asof_held *h);
static void unhold(asof_join *j, struct asof_held *h);

/* Write the done records at the head of queue i. */
static void
oq_drain(asof_join *j, uint32_t i)
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
arrival_unlink(asof_join *j, struct asof_held *h)
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
order_link(asof_join *j, struct asof_held *h)
{
	if (h->revision & ASOF_DONE) {
		key_link(h);
		h->anext = h->aprev = NULL;
		j->held_bytes += held_size(h);
		j->waiting++;
	} else {
		asof_held_link(j, h);
	}
	oq_push(j, h);
}

/* A held record's answer is final, or written early (mark): done; out when it is its
 * partition's oldest. */
static void
order_done(asof_join *j, struct asof_held *h, unsigned mark)
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
spill_out(asof_join *j, struct asof_held *h)
{
	asof_state_held_put(asof_spill_store(j), h, true);
	j->spilled++;
	if (j->spill_min_t == ASOF_NONE || h->t < j->spill_min_t)
		j->spill_min_t = h->t;
	if (asof_ordered(j))
		j->oq[h->oq].spilled++;
	free(h);
}

void
asof_hold(asof_join *j, struct asof_key *k, const struct asof_in *in, int64_t p, const struct asof_right *r,
	  int64_t revision)
{
	bool has_known = in->known.n > 0;
	struct asof_held *h = ss_xmalloc(sizeof *h + in->len + (has_known ? sizeof in->known : 0));

	/* the clock only for --max-delay: a held record each left record, in a batch */
	int64_t since = j->o.max_delay >= 0 ? ss_time_mono() : 0;

	*h = (struct asof_held){.t = in->t, .p = p, .since = since, .id = ++j->lid,
				.match = r ? r->seq : 0, .revision = (uint32_t)revision, .has_known = has_known,
				.line = in->line, .key = k, .len = in->len};
	memcpy(h->raw, in->raw, in->len);
	if (has_known)
		memcpy(h->raw + in->len, &in->known, sizeof in->known);
	/* --order left: a queue's records on disk are newer than its records in memory */
	uint64_t behind = j->spilled;
	if (asof_ordered(j)) {
		h->oq = oq_of(j, in);
		h->match = (uint64_t)(j->oq[h->oq].partition + 1);
		behind = j->oq[h->oq].spilled;
	}
	if (j->o.emit == SS_ASOF_DEFER && (behind > 0 || j->held_bytes + held_size(h) > j->spill_limit)) {
		spill_out(j, h);
		return;
	}
	if (asof_ordered(j)) {
		order_link(j, h);
	} else {
		asof_held_link(j, h);
	}
	if (j->st)
		asof_state_held_put(j->st, h, false);
}

static void
unhold(asof_join *j, struct asof_held *h)
{
	struct asof_key *k = h->key;

	if (h->kprev)
		h->kprev->knext = h->knext;
	else
		k->held = h->knext;
	if (h->knext)
		h->knext->kprev = h->kprev;
	if (!asof_waiting(j, h)) /* a done one left the arrival list when it was done */
		arrival_unlink(j, h);
	if (j->st)
		asof_state_held_del(j->st, h);
	j->held_bytes -= held_size(h);
	free(h);
}

/* Keep a left record whose answer (revision, match) is final as it is now. */
void
asof_close_now(asof_join *j, struct asof_key *k, const struct asof_in *in, const struct asof_right *r,
	       int64_t revision)
{
	struct asof_held *h = ss_xmalloc(sizeof *h + in->len);

	*h = (struct asof_held){.t = in->t, .match = r ? r->seq : 0, .revision = (uint32_t)revision,
				.line = in->line, .key = k, .len = in->len};
	memcpy(h->raw, in->raw, in->len);
	asof_state_closed_put(asof_spill_store(j), h);
	free(h);
}

/* Emit (defer) or close (revise) a held record: its answer is final, or --max-delay
 * ran out (mark ASOF_MARK_EARLY). */
static void
release(asof_join *j, struct asof_held *h, unsigned mark)
{
	if (asof_ordered(j)) {
		order_done(j, h, mark);
		return;
	}
	if (j->o.emit == SS_ASOF_DEFER)
		asof_emit_held(j, h, asof_best_match(j, h->key, h->t), -1, mark);
	else if (asof_keeps_closed(j))
		asof_state_closed_put(asof_spill_store(j), h);
	unhold(j, h);
}

/* The right file has been indexed whole in the middle of a merge (asof_run.c): the
 * records held so far get their final answers from the index. */
static void
answer_from_index(asof_join *j, struct asof_held *h)
{
	struct asof_in q = {.t = h->t, .key = {.data = h->key->enc, .len = h->key->enclen}};
	struct asof_right buf[2];

	asof_emit_held(j, h, asof_index_match(j->index, &j->o, &q, buf), -1, 0);
}

static void
answer_spilled_from_index(asof_join *j, struct asof_held *h)
{
	answer_from_index(j, h);
	free(h);
}

/* --order left: a done record's result, as release would have written it. */
static void
emit_done(asof_join *j, struct asof_held *h)
{
	unsigned mark = h->revision & ~ASOF_DONE;

	if (mark & ASOF_MARK_EXPIRED)
		asof_emit_held(j, h, NULL, -1, mark);
	else if (j->index)
		answer_from_index(j, h);
	else
		asof_emit_held(j, h, asof_best_match(j, h->key, h->t), -1, mark);
}

struct asof_held *
asof_held_from_row(asof_join *j, struct asof_key *k, const struct asof_row *r)
{
	struct asof_held *h = ss_xmalloc(sizeof *h + r->len);

	*h = (struct asof_held){
		.id = r->id,
		.key = k ? k : asof_key_get(&j->keys, r->bytes, r->keylen),
		.t = r->t,
		.p = r->p,
		.match = r->match,
		.revision = r->revision,
		.line = r->line,
		.since = r->since,
		.len = r->len,
	};
	memcpy(h->raw, r->bytes + r->keylen, r->len);
	return h;
}

/* Spilled records the state file gave back (off its disk already), each to fn, which
 * owns it. */
static size_t
unspilled(asof_join *j, struct asof_row *rows, size_t n, void (*fn)(asof_join *, struct asof_held *))
{
	struct asof_held **taken = ss_xmalloc((n ? n : 1) * sizeof *taken);

	for (size_t i = 0; i < n; i++) {
		taken[i] = asof_held_from_row(j, NULL, &rows[i]);
		free(rows[i].bytes);
	}
	free(rows);
	j->spilled -= n;
	for (size_t i = 0; i < n; i++)
		fn(j, taken[i]);
	free(taken);
	return n;
}

static size_t
unspill(asof_join *j, enum asof_unspill by, int64_t max, void (*fn)(asof_join *, struct asof_held *))
{
	struct asof_row *rows;
	size_t n = asof_state_unspill(j->spill, by, max, UNSPILL_BATCH, &rows);

	return unspilled(j, rows, n, fn);
}

static size_t
unspill_queue(asof_join *j, const struct asof_oq *q, void (*fn)(asof_join *, struct asof_held *))
{
	struct asof_row *rows;
	size_t n = asof_state_unspill_queue(j->spill, q->partition + 1, (int64_t)q->from, UNSPILL_BATCH, &rows);

	return unspilled(j, rows, n, fn);
}

static void
answer_held(asof_join *j)
{
	if (asof_ordered(j)) { /* every answer is final now (right_eof), and out in order */
		asof_release_final(j);
		return;
	}
	while (j->heap.n > 0) {
		struct asof_held *h = asof_heap_pop(&j->heap);
		answer_from_index(j, h);
		unhold(j, h);
	}
	while (j->spilled > 0 &&
	       unspill(j, ASOF_UNSPILL_P, INT64_MAX, answer_spilled_from_index) > 0)
		;
}

/* The index is the run's: borrowed for the answers of the records held so far (the
 * left records after them the run answers from it itself, asof_join_answer). */
void
asof_join_indexed(asof_join *j, struct asof_index *ix)
{
	j->right_eof = true;
	j->n.right = asof_index_records(ix);
	j->index = ix;
	answer_held(j);
	j->index = NULL;
}

static void
release_spilled(asof_join *j, struct asof_held *h)
{
	asof_emit_held(j, h, asof_best_match(j, h->key, h->t), -1, 0);
	free(h);
}

static void
release_spilled_early(asof_join *j, struct asof_held *h)
{
	asof_emit_held(j, h, asof_best_match(j, h->key, h->t), -1, ASOF_MARK_EARLY);
	free(h);
}

/* A spilled record back in memory: its release point may have come closer meanwhile. */
static void
relink(asof_join *j, struct asof_held *h)
{
	if (asof_ordered(j)) {
		if (!(h->revision & ASOF_DONE))
			h->p = asof_min64(h->p, asof_release_point(j, h->key, h->t));
		h->oq = oq_find(j, (int32_t)h->match - 1);
		j->oq[h->oq].spilled--;
		j->oq[h->oq].from = h->id + 1; /* the ones after it are on disk */
		order_link(j, h);
		if (j->st)
			asof_state_held_put(j->st, h, false);
		oq_drain(j, h->oq);
		return;
	}
	h->p = asof_min64(h->p, asof_release_point(j, h->key, h->t));
	asof_held_link(j, h);
	if (j->st)
		asof_state_held_put(j->st, h, false);
}

void
asof_release_final(asof_join *j)
{
	for (;;) {
		while (j->heap.n > 0 && asof_final(j, asof_heap_top(&j->heap)->p))
			release(j, asof_heap_pop(&j->heap), 0);
		if (j->spilled == 0)
			break;
		int64_t wm = j->wm;
		size_t n = 0;
		if (asof_ordered(j)) {
			/* back into memory in arrival order, behind the ones of their partition
			 * there: none is written from disk ahead of an older one. A partition
			 * with none in memory gets its oldest back whatever the memory bound
			 * (a batch at most), so that one held long holds up no other. */
			for (size_t i = 0; i < j->noq; i++) {
				const struct asof_oq *q = &j->oq[i];
				if (q->spilled > 0 && (q->first == NULL || j->held_bytes < j->spill_limit / 2))
					n += unspill_queue(j, q, relink);
			}
			if (n == 0)
				break;
			continue;
		}
		if (j->right_eof || wm != ASOF_NONE)
			n += unspill(j, ASOF_UNSPILL_P, j->right_eof ? INT64_MAX : wm - 1, release_spilled);
		if (j->held_bytes < j->spill_limit / 2)
			n += unspill(j, ASOF_UNSPILL_P, INT64_MAX, relink);
		if (n == 0)
			break;
	}
	if (j->spilled > 0)
		j->spill_min_t = asof_state_spill_min(j->spill);
}

void
asof_join_tick(asof_join *j)
{
	if (j->feed_synced != j->cx->feed_gen) {
		asof_wm_feed(j); /* the right input's writer said more */
		if (asof_wm_update(j))
			asof_release_final(j);
	}
	if (j->lparts.n > 0)
		asof_lw_update(j); /* a left partition may have turned idle */
	if (j->rparts.n > 0 && j->idle_next != INT64_MAX && ss_time_mono() >= j->idle_next &&
	    asof_wm_update(j))
		asof_release_final(j); /* a partition turned idle: it holds the others back no more */
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
		if (!asof_ordered(j) || before == 0 || j->held_bytes >= j->spill_limit / 2)
			break;
		asof_release_final(j);
		if (j->spilled == before)
			break;
	}
	while (!asof_ordered(j) && j->spilled > 0 &&
	       unspill(j, ASOF_UNSPILL_SINCE, now - j->o.max_delay, release_spilled_early) > 0)
		;
}

static int
max_delay_timeout(const asof_join *j)
{
	if (j->o.max_delay < 0 || j->o.emit != SS_ASOF_DEFER || j->afirst == NULL)
		return -1;
	int64_t left = j->afirst->since + j->o.max_delay - ss_time_mono();
	return left <= 0 ? 0 : (int)(left / 1000000 + 1);
}

int
asof_join_timeout(const asof_join *j)
{
	int a = max_delay_timeout(j), b = asof_wm_timeout(j);

	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

