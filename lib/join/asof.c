/* The as-of join engine: open and free a join, and the record path. Fed parsed records
 * (asof_parse.c), it puts right ones into the history (asof_match.c), answers or holds
 * left ones (asof_held.c), revises results, and writes them (asof_emit.c). The input loop
 * that feeds it lives in asof_run.c, the --state file in asof_state.c. */
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"

/* Bytes of held left records kept in memory before they overflow to disk. */
static size_t
spill_limit(void)
{
	const char *env = getenv("SS_ASOF_SPILL_BYTES");
	long long n = env ? atoll(env) : 0;

	return n > 0 ? (size_t)n : (size_t)64 << 20;
}

/* Bytes of right history kept in memory before the oldest of it goes to disk. */
static size_t
history_limit(void)
{
	const char *env = getenv("SS_ASOF_HISTORY_BYTES");
	long long n = env ? atoll(env) : 0;

	return n > 0 ? (size_t)n : (size_t)64 << 20;
}

/* The counters of this join, and the records it still holds. */
void
asof_join_totals(const asof_join *j, struct asof_counters *c, size_t *held)
{
	*c = j->n;
	*held = j->heap.n + (size_t)j->spilled + (size_t)j->waiting;
}

bool
asof_join_holds(const asof_join *j)
{
	return j->heap.n > 0 || j->spilled > 0;
}

void
asof_join_batch(asof_join *j)
{
	j->batch = true;
	j->revision0 = j->o.emit == SS_ASOF_REVISE;
	j->o.emit = SS_ASOF_DEFER;
	j->o.max_delay = -1;
}

void
asof_join_prefetch(const asof_join *j, const struct asof_in *in)
{
	asof_key_prefetch(&j->keys, in);
}

void
asof_join_answer(asof_join *j, const struct asof_in *in, const struct asof_right *r)
{
	j->n.left++;
	asof_emit_in(j, in, r, -1, 0);
}

/* ---- bad records (asof_parse.c reports them) ---- */

/* A bad record is about to end the run (--on-error fail; the run calls this before the
 * report, asof_parse_fail): without a state file the held records would be lost with
 * the process, so they go out with what is known, as at the end of the right input. */
void
asof_join_finish_held(asof_join *j)
{
	if (j->o.onerror->mode != SS_ONERROR_FAIL || j->st || (j->heap.n == 0 && j->spilled == 0))
		return;
	j->right_eof = true;
	asof_release_final(j);
}

/* The join being opened, until it is returned. A failure on the way (a state file that
 * will not open) ends the process, and what the join had built is then process state
 * like any other, not a leak: LeakSanitizer, which reports blocks nothing points to,
 * must find it from here (CI: a refused --late-file, now refused as the router opens
 * the run's cx, was reported as a leak of the whole join when no register still held
 * it). Volatile: nothing in the program reads it, and the compiler would drop the
 * stores. */
static asof_join *volatile opening;

static asof_join *
join_alloc(struct asof_ctx *cx, const struct ss_asof_opts *opts)
{
	asof_join *j = calloc(1, sizeof *j);

	if (j == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	j->o = *opts;
	j->cx = cx;
	j->maxr = j->lw = j->lw_bare = j->spill_min_t = j->wm = ASOF_NONE;
	j->idle_next = INT64_MAX;
	j->partition = -1;
	j->started = ss_time_mono();
	j->spill_limit = spill_limit();
	j->hist_limit = j->hist_next = history_limit();
	return j;
}

/* ---- restore: the --state file's rows back into this join (state_load pulls them from
 * asof_state.c and applies each here; the state file writes no field of the join) ---- */

static void
restore_meta(asof_join *j, const char *name, int64_t v)
{
	if (strcmp(name, "maxr") == 0)
		j->maxr = v;
	else if (strcmp(name, "lw") == 0)
		j->lw_bare = v;
	else if (strcmp(name, "rseq") == 0)
		j->rseq = (uint64_t)v;
	else if (strcmp(name, "lid") == 0)
		j->lid = (uint64_t)v;
	else if (strcmp(name, "wm") == 0)
		j->wm = v;
}

/* Partitions restored count as just heard from: silent ones turn idle after --idle. */
static void
restore_part(asof_join *j, bool left, const char *topic, int32_t partition, int64_t maxt)
{
	struct asof_parts *ps = left ? &j->lparts : &j->rparts;

	if (strlen(topic) >= sizeof ps->v->topic)
		return;
	asof_part_get(ps, topic, partition)->wm.maxt = maxt;
}

static void
restore_history(asof_join *j, const void *key, size_t keylen, int64_t t, uint64_t seq, char *raw, size_t len)
{
	asof_hist_put(asof_key_get(&j->keys, key, keylen), t, seq, raw, len, false);
}

static void
restore_pruned(asof_join *j, const void *key, size_t keylen)
{
	asof_key_get(&j->keys, key, keylen)->pruned = true;
}

static void
restore_held(asof_join *j, uint64_t spilled, int64_t min_t)
{
	j->spilled = spilled;
	j->spill_min_t = min_t;
}

/* The state file's rows into this join, in the order they come: meta, parts, history
 * and pruned keys, held. */
static void
state_load(asof_join *j)
{
	struct asof_state_rows *it = asof_state_rows_open(j->st);
	struct asof_state_row r;

	while (asof_state_row_next(it, &r)) {
		switch (r.kind) {
		case ASOF_ROW_META:
			restore_meta(j, r.meta.name, r.meta.value);
			break;
		case ASOF_ROW_PART:
			restore_part(j, r.part.left, r.part.topic, r.part.partition, r.part.maxt);
			break;
		case ASOF_ROW_HISTORY:
			restore_history(j, r.history.key, r.history.keylen, r.history.t, r.history.seq,
					r.history.raw, r.history.len);
			break;
		case ASOF_ROW_PRUNED:
			restore_pruned(j, r.pruned.key, r.pruned.keylen);
			break;
		case ASOF_ROW_HELD:
			restore_held(j, r.held.spilled, r.held.min_t);
			break;
		}
	}
	asof_state_rows_close(it);
}

/* What a restart needs of this join, into the open batch of its state. */
static void
state_save(asof_join *j)
{
	asof_state_meta(j->st, "maxr", j->maxr);
	asof_state_meta(j->st, "lw", j->lw_bare); /* the left partitions' times have their table */
	asof_state_meta(j->st, "rseq", (int64_t)j->rseq);
	asof_state_meta(j->st, "lid", (int64_t)j->lid);
	asof_state_meta(j->st, "wm", j->wm);
	for (int left = 0; left < 2; left++) {
		const struct asof_parts *ps = left ? &j->lparts : &j->rparts;
		for (size_t i = 0; i < ps->n; i++)
			if (ps->v[i].wm.maxt != ASOF_NONE)
				asof_state_part(j->st, left, ps->v[i].topic, ps->v[i].partition, ps->v[i].wm.maxt);
	}
}

/* --order left: the spilled count of each left partition's queue. */
static void
queues_load(asof_join *j)
{
	struct asof_queue_count *c;
	size_t n = asof_state_queues(j->st, &c);

	for (size_t i = 0; i < n; i++)
		asof_oq_loaded(j, c[i].match, c[i].n);
	free(c);
}

static void
state_open(asof_join *j)
{
	j->st = j->spill = asof_state_open(j->o.state);
	state_load(j);
	asof_lw_update(j);
	if (asof_ordered(j) && j->spilled > 0)
		queues_load(j);
	asof_history_loaded(j);
	if (j->rseq > 0)
		j->cx->had_history = true;
	asof_outbox_resend(j);
	asof_wm_update(j);
	asof_release_final(j);
}

asof_join *
asof_join_new(struct asof_ctx *cx, const struct ss_asof_opts *top, const char *path, int32_t partition,
	      bool right_eof)
{
	asof_join *j = opening = join_alloc(cx, top);

	j->partition = partition;
	j->o.state = path;
	j->o.state_dir = NULL;
	j->o.right_partitions = 0; /* its one right partition */
	j->right_eof = right_eof;
	state_open(j);
	opening = NULL;
	return j;
}

asof_join *
asof_join_open(struct asof_ctx *cx, const struct ss_asof_opts *opts)
{
	asof_join *j = opening = join_alloc(cx, opts);

	if (opts->state)
		state_open(j);
	opening = NULL;
	return j;
}

/* ---- records ---- */

/* With --state, flush the results and commit every so many records, so that a crash
 * replays a bounded tail (results are flushed first: at least once, never lost). */
static void
checkpoint(asof_join *j)
{
	if (j->st && ++j->uncommitted >= CHECKPOINT_RECORDS)
		asof_join_idle(j);
}

/* Keep the revision counter of an enveloped record, for replays after a seek. */
static void
record_revision(asof_join *j, const struct asof_held *h)
{
	struct ss_envelope env;

	asof_state_held_put(j->st, h, false);
	if (ss_envelope_get(h->raw, h->len, &env))
		asof_state_revision_set(j->st, &env, h->revision);
}

/* Revise the open records of key k (and lower release points) after a right record. */
static void
right_changed(asof_join *j, struct asof_key *k, int64_t t)
{
	for (struct asof_held *h = k->held; h; h = h->knext) {
		if (asof_waiting(j, h))
			continue; /* its answer is final: only written later */
		if (j->o.direction != SS_ASOF_BACKWARD) {
			int64_t p = asof_release_point_after(j, h, t);
			if (p != h->p) {
				h->p = p;
				asof_heap_fix(&j->heap, h);
			}
		}
		if (j->o.emit != SS_ASOF_REVISE)
			continue;
		const struct asof_right *r = asof_best_match(j, k, h->t);
		uint64_t seq = r ? r->seq : 0;
		if (seq == h->match)
			continue;
		h->match = seq;
		h->revision++;
		j->n.revisions++;
		asof_emit_held(j, h, r, h->revision, 0);
		if (j->st)
			record_revision(j, h);
	}
}

/* Held because nothing says which partitions the right input has: say so, once. */
static void
tell_blind(asof_join *j)
{
	if (j->cx->blind_told || j->wm != ASOF_NONE || !asof_wm_blind(j))
		return;
	j->cx->blind_told = true;
	ss_diag_warn("%s: its records carry Kafka partitions, but nothing says which partitions it has "
		     "(its writer is not ss-consume on this host): left records wait for its end to be "
		     "answered exactly; --right-partitions N says how many to wait for", j->cx->rname);
}

/* A closed left record (revise) whose answer a late right record may have changed. */
static void
revise_closed(asof_join *j, struct asof_held *h)
{
	struct ss_envelope env;

	if (asof_expired(j, h->key, h->t))
		return; /* --retain dropped what it needs: its answer stands */
	const struct asof_right *r = asof_best_match(j, h->key, h->t);
	uint64_t seq = r ? r->seq : 0;
	if (seq == h->match)
		return;
	h->match = seq;
	h->revision++;
	j->n.revisions++;
	asof_emit_held(j, h, r, h->revision, 0);
	asof_state_closed_put(asof_spill_store(j), h);
	if (j->st && ss_envelope_get(h->raw, h->len, &env))
		asof_state_revision_set(j->st, &env, h->revision);
}

static uint64_t right_seq(asof_join *j, const struct asof_in *in);

/* --emit revise: a late right record is applied all the same, and every result it
 * changes, open or closed, gets a new revision. Only left records between its
 * neighbours in its key's history can have their answer changed by it. */
static void
correct_late(asof_join *j, const struct asof_in *in)
{
	struct asof_key *k = asof_key_of(&j->keys, in);

	if (asof_history_put(j, k, in, right_seq(j, in)) == NULL)
		return;
	if (k->held)
		right_changed(j, k, in->t);
	const struct asof_right *prev = asof_history_backward(j, k, in->t, true);
	int64_t lo = prev ? prev->t : INT64_MIN;
	const struct asof_right *next = asof_history_forward(j, k, in->t, true);
	struct asof_row *rows;
	size_t n = asof_state_closed_get(asof_spill_store(j), k, lo, next ? next->t : INT64_MAX, &rows);
	for (size_t i = 0; i < n; i++) {
		struct asof_held *h = asof_held_from_row(j, k, &rows[i]);
		free(rows[i].bytes);
		revise_closed(j, h);
		free(h);
	}
	free(rows);
	asof_history_bound(j);
}

/* A right record's identity, and its rank among records of the same key and time (the
 * higher replaces the lower): by partition and offset for records of Kafka, whatever
 * the order partitions arrive in; by arrival for the others. */
static uint64_t
right_seq(asof_join *j, const struct asof_in *in)
{
	uint64_t n = ++j->rseq;

	if (!in->has_env)
		return n;
	return UINT64_C(1) << 62 | (uint64_t)in->env.partition << 42 | ((uint64_t)in->env.offset & ((UINT64_C(1) << 42) - 1));
}

void
asof_join_right(asof_join *j, const struct asof_in *in)
{
	bool keep = in->has_env && j->st; /* exactly once needs the state file */

	if (keep && asof_state_seen(j->st, &in->env)) {
		j->n.replayed++;
		asof_wm_seen(j, false, &in->env);
		free(in->hist);
		return;
	}
	j->n.right++;
	if (asof_wm_right(j, in)) {
		asof_late(j, in);
		if (asof_keeps_closed(j))
			correct_late(j, in);
		else
			free(in->hist);
	} else {
		struct asof_key *k = asof_key_of(&j->keys, in);
		if (asof_history_put(j, k, in, right_seq(j, in)) != NULL) {
			if (k->held && (j->o.direction != SS_ASOF_BACKWARD || j->o.emit == SS_ASOF_REVISE))
				right_changed(j, k, in->t);
			asof_prune(j, k);
			asof_history_bound(j);
		}
	}
	if (keep)
		asof_state_applied(j->st, &in->env);
	asof_release_final(j);
	if (j->heap.n > 0 || j->spilled > 0)
		tell_blind(j);
	checkpoint(j);
}

/* Revision number of a left record's first result in this run: 0, or the next one when
 * the record is a replay (after a seek) of one already emitted. */
static int64_t
first_revision(asof_join *j, const struct asof_in *in)
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
asof_join_left(asof_join *j, const struct asof_in *in)
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
	struct asof_key *k = asof_key_of(&j->keys, in);
	if (asof_expired(j, k, in->t)) {
		/* a replay's earlier result knew more than what is left: do not revise it */
		asof_to_late_file(j, in);
		if (replay)
			asof_approximated(j, ASOF_MARK_EXPIRED, in->line);
		else if (asof_ordered(j) && asof_oq_busy(j, in))
			asof_hold(j, k, in, 0, NULL, ASOF_DONE | ASOF_MARK_EXPIRED);
		else
			asof_emit_in(j, in, NULL,
				  j->o.emit == SS_ASOF_REVISE ? first_revision(j, in) : -1, ASOF_MARK_EXPIRED);
	} else if (j->o.emit == SS_ASOF_EAGER) {
		bool now_final = asof_final(j, asof_release_point(j, k, in->t));
		asof_emit_in(j, in, asof_best_match(j, k, in->t), -1, now_final ? 0 : ASOF_MARK_EARLY);
	} else {
		const struct asof_right *r = asof_best_match(j, k, in->t);
		int64_t p = asof_release_point(j, k, in->t);
		if (j->o.emit == SS_ASOF_REVISE) {
			int64_t rev = first_revision(j, in);
			asof_emit_in(j, in, r, rev, 0);
			struct asof_held *open = replay ? find_open(k, in) : NULL;
			if (open) {
				open->revision = (uint32_t)rev;
				open->match = r ? r->seq : 0;
				record_revision(j, open);
			} else if (!asof_final(j, p)) {
				asof_hold(j, k, in, p, r, rev);
			} else {
				asof_close_now(j, k, in, r, rev);
			}
		} else if (asof_final(j, p) && asof_ordered(j) && asof_oq_busy(j, in)) {
			asof_hold(j, k, in, p, r, ASOF_DONE); /* after the older ones of its partition */
		} else if (asof_final(j, p)) {
			asof_emit_in(j, in, r, -1, 0);
		} else {
			asof_hold(j, k, in, p, r, 0);
			tell_blind(j);
		}
	}
	if (keep)
		asof_state_applied(j->st, &in->env);
	checkpoint(j);
}

bool
asof_join_applied(asof_join *j, const struct ss_envelope *env)
{
	return j->st != NULL && asof_state_seen(j->st, env);
}

void
asof_join_right_end(asof_join *j)
{
	j->right_eof = true;
	asof_release_final(j);
}

void
asof_join_idle(asof_join *j)
{
	asof_ctx_flush(j->cx);
	if (j->st) {
		asof_outbox_trim(j);
		state_save(j);
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

void
asof_join_close(asof_join *j)
{
	if (j->spill && j->spill != j->st)
		asof_state_close(j->spill);
	if (j->st)
		asof_state_close(j->st);
	j->spill = j->st = NULL;
}

void
asof_join_free(asof_join *j)
{
	asof_join_close(j);
	if (asof_ordered(j)) { /* every held record in memory is in its partition's queue */
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
	free(j->near[0].raw);
	free(j->near[1].raw);
	free(j->heap.v);
	free(j->outbox.v);
	asof_parts_free(&j->rparts);
	asof_parts_free(&j->lparts);
	asof_map_free(&j->keys);
	ss_buf_free(&j->obuf);
	free(j);
}
