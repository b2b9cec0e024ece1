/* The right history beyond memory (its oldest part on disk) and the answers of left records from it. */
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"

/* Memory a right record in the history takes: its bytes (and what was found ahead in
 * it), its entry, malloc's header. */
static size_t
hist_cost(const struct asof_right *r)
{
	return r->len + (r->has_known ? sizeof(struct asof_known) : 0) + sizeof *r + 16;
}

/* Could the history have lost the answer for time t? (left too far out of order) */
bool
asof_expired(const asof_join *j, const struct asof_key *k, int64_t t)
{
	if (!k->pruned)
		return false;
	int64_t first = k->hist[0].t;
	return first > t || (first == t && j->o.strict && j->o.direction != SS_ASOF_FORWARD);
}

/* ---- right history: in memory, its oldest part on disk past the memory bound ---- */

/* Where evicted history, spilled and closed left records go: the state file, or a private
 * temporary one. */
struct asof_state *
asof_spill_store(asof_join *j)
{
	if (j->spill == NULL)
		j->spill = asof_state_open("");
	return j->spill;
}

/* The latest record of k at or before t (strict: before), wherever it is. */
const struct asof_right *
asof_history_backward(asof_join *j, const struct asof_key *k, int64_t t, bool strict)
{
	const struct asof_right *r = asof_hist_backward(k, t, strict);

	if (r != NULL || !k->on_disk)
		return r; /* what is on disk is older than anything in memory */
	if (!asof_state_right_near(asof_spill_store(j), k, strict ? t - 1 : t, true, &j->near[0]))
		return NULL;
	return &j->near[0];
}

/* The earliest record of k at or after t (strict: after), wherever it is. */
const struct asof_right *
asof_history_forward(asof_join *j, const struct asof_key *k, int64_t t, bool strict)
{
	const struct asof_right *r = asof_hist_forward(k, t, strict);

	if (!k->on_disk || (r != NULL && r != &k->hist[0]))
		return r;
	if (!asof_state_right_near(asof_spill_store(j), k, strict ? t + 1 : t, false, &j->near[1]))
		return r;
	return r == NULL || j->near[1].t < r->t ? &j->near[1] : r;
}

static int
cmp_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The median time of the history in memory, of every step-th record (all when few). It
 * only splits the history into an older half, for disk, and the rest, so 4,096 times
 * tell it well enough; 65,536, sorted, with a division per record to pick them, were 3%
 * of a live join's samples (perf, 1M wide records through pipes). */
static int64_t
history_median(const asof_join *j)
{
	enum { SAMPLE = 4096 };
	int64_t v[SAMPLE];
	size_t n = 0, total = 0, step, skip = 0;

	for (size_t i = 0; i < j->keys.cap; i++)
		if (j->keys.slot[i].key != NULL)
			total += j->keys.slot[i].key->n;
	step = total / SAMPLE + 1;
	for (size_t i = 0; i < j->keys.cap && n < SAMPLE; i++) {
		const struct asof_key *k = j->keys.slot[i].key;
		if (k == NULL)
			continue;
		size_t r = skip; /* the first of this key's to take, counted on from the last */
		for (; r < k->n && n < SAMPLE; r += step)
			v[n++] = k->hist[r].t;
		skip = r - k->n;
	}
	qsort(v, n, sizeof *v, cmp_time);
	return n ? v[n / 2] : INT64_MIN;
}

/* Key k's records older than cutoff, but its newest such one, go to disk. */
static size_t
evict_key(asof_join *j, struct asof_key *k, int64_t cutoff)
{
	size_t drop = 0, bytes = 0;

	while (drop + 1 < k->n && k->hist[drop + 1].t < cutoff)
		drop++;
	if (drop > 0 && j->st == NULL) /* the state file has every record already */
		asof_state_right_evicted(asof_spill_store(j), k, k->hist, drop);
	for (size_t i = 0; i < drop; i++) {
		bytes += hist_cost(&k->hist[i]);
		free(k->hist[i].raw);
	}
	if (drop > 0) {
		memmove(k->hist, k->hist + drop, (k->n - drop) * sizeof *k->hist);
		k->n -= drop;
		k->on_disk = true;
	}
	return bytes;
}

static int
cmp_key_enc(const void *a, const void *b)
{
	const struct asof_key *x = *(const struct asof_key *const *)a, *y = *(const struct asof_key *const *)b;
	int c = memcmp(x->enc, y->enc, x->enclen < y->enclen ? x->enclen : y->enclen);

	return c != 0 ? c : (x->enclen > y->enclen) - (x->enclen < y->enclen);
}

/* Each key keeps its newest records in memory (evict_key), so with many keys what stays
 * after an eviction can be most of the bound, or more: 400,000 keys of 250-byte records
 * through pipes (64 MiB) evicted on every right record, each eviction a pass over every
 * key, and a join the same files make in 0.5 s had not ended after 120 s. The next one
 * waits until the history is half as large again as what stayed, or for the bound if
 * that is more (always, while a third of the bound is freed, as with few keys): its pass
 * over the keys is then paid once for at least half as many new records as there are
 * keys. */
static size_t
next_eviction(const asof_join *j)
{
	size_t grown = j->hist_bytes + j->hist_bytes / 2;

	return grown > j->hist_limit ? grown : j->hist_limit;
}

/* Over the memory bound: the older half of the history goes to disk (the default keeps
 * all of it, for the exact answer to a left record late by any amount). Keys in the
 * order of their bytes, as the table's (key, t) index keeps them: one sweep through it
 * instead of a jump to another page for each key in the map's hash order. */
static void
evict(asof_join *j)
{
	int64_t cutoff = history_median(j);
	size_t freed = 0, n = 0;
	struct asof_key **keys = ss_xmalloc((j->keys.n ? j->keys.n : 1) * sizeof *keys);

	for (size_t i = 0; i < j->keys.cap; i++)
		if (j->keys.slot[i].key != NULL)
			keys[n++] = j->keys.slot[i].key;
	qsort(keys, n, sizeof *keys, cmp_key_enc);
	for (size_t i = 0; i < n; i++)
		freed += evict_key(j, keys[i], cutoff);
	free(keys);
	j->hist_bytes = freed < j->hist_bytes ? j->hist_bytes - freed : 0;
	j->hist_next = next_eviction(j);
}

/* The object of the record's known values alone, {"k1":v1,"k2":v2} (those it has), into
 * out, and their offsets into it in *known. */
static size_t
trimmed(char *out, const char *bytes, struct asof_known *known, const struct asof_trim *trim)
{
	size_t n = 0;

	out[n++] = '{';
	for (int i = 0; i < known->n; i++) {
		if (known->at[i] == 0)
			continue; /* (no such key: none in the object either) */
		if (n > 1)
			out[n++] = ',';
		memcpy(out + n, trim->keys.data + trim->at[i], trim->at[i + 1] - trim->at[i]);
		n += trim->at[i + 1] - trim->at[i];
		memcpy(out + n, bytes + known->at[i] - 1, known->len[i]);
		known->at[i] = (uint32_t)n + 1;
		n += known->len[i];
	}
	out[n++] = '}';
	return n;
}

/* The buffer the history keeps a right record in: its bytes, or the object of its known
 * values, then what was found ahead in it for --select, where asof_right_known_bytes
 * finds it. */
char *
asof_hist_copy(const char *bytes, size_t *len, const struct asof_known *known, const struct asof_trim *trim)
{
	size_t more = known->n > 0 ? sizeof *known : 0;
	bool trim_it = trim != NULL && trim->n > 0 && known->n == trim->n;
	size_t cap = *len;

	if (trim_it) {
		cap = 2 + trim->keys.len + (size_t)known->n;
		for (int i = 0; i < known->n; i++)
			cap += known->len[i];
	}
	char *raw = ss_xmalloc(cap + more ? cap + more : 1);
	struct asof_known k = *known;

	if (trim_it)
		*len = trimmed(raw, bytes, &k, trim);
	else
		memcpy(raw, bytes, *len);
	if (more > 0)
		memcpy(raw + *len, &k, more);
	return raw;
}

/* A right record into the history; NULL when one of the same key and time ranks higher. */
const struct asof_right *
asof_history_put(asof_join *j, struct asof_key *k, const struct asof_in *in, uint64_t seq)
{
	if (k->on_disk && k->n > 0 && in->t < k->hist[0].t) {
		/* among the evicted: it goes where they are */
		struct asof_right r = {.t = in->t, .seq = seq, .len = (uint32_t)in->len, .raw = (char *)in->raw};
		asof_state_right_put(asof_spill_store(j), k, &r);
		free(in->hist);
		if (!asof_state_right_near(asof_spill_store(j), k, in->t, true, &j->near[0]) || j->near[0].seq != seq)
			return NULL;
		return &j->near[0];
	}
	size_t len = in->hist ? in->hist_len : in->len;
	char *raw = in->hist ? in->hist : asof_hist_copy(in->raw, &len, &in->known, &j->cx->trim);
	const struct asof_right *r = asof_hist_put(k, in->t, seq, raw, len, in->known.n > 0);
	if (r == NULL)
		return NULL;
	if (j->st)
		asof_state_right_put(j->st, k, r);
	j->hist_bytes += hist_cost(r);
	return r;
}

/* After a record went into the history: keep memory bounded. */
void
asof_history_bound(asof_join *j)
{
	if (j->hist_bytes > j->hist_next && j->o.retain < 0 && !j->batch)
		evict(j);
}

/* The history a state file gave back counts against the memory bound too. */
void
asof_history_loaded(asof_join *j)
{
	j->hist_bytes = 0;
	for (size_t i = 0; i < j->keys.cap; i++) {
		const struct asof_key *k = j->keys.slot[i].key;
		for (size_t r = 0; k != NULL && r < k->n; r++)
			j->hist_bytes += hist_cost(&k->hist[r]);
	}
	asof_history_bound(j);
}

const struct asof_right *
asof_best_match(asof_join *j, const struct asof_key *k, int64_t t)
{
	const struct asof_right *b = NULL, *f = NULL;

	if (j->o.direction != SS_ASOF_FORWARD)
		b = asof_history_backward(j, k, t, j->o.strict);
	if (j->o.direction != SS_ASOF_BACKWARD)
		f = asof_history_forward(j, k, t, j->o.strict);
	return asof_pick(&j->o, t, b, f);
}

/* The latest right event time that could still change the match of a left record at t
 * in key k: once the watermark is past it, the answer is final. */
int64_t
asof_release_point(asof_join *j, const struct asof_key *k, int64_t t)
{
	if (j->o.direction == SS_ASOF_BACKWARD)
		return j->o.strict ? t - 1 : t;
	int64_t p = j->o.tolerance < 0 ? INT64_MAX : asof_sat_add(t, j->o.tolerance);
	const struct asof_right *f = asof_history_forward(j, k, t, j->o.strict);
	if (f)
		p = asof_min64(p, f->t);
	if (j->o.direction == SS_ASOF_NEAREST) {
		const struct asof_right *b = asof_history_backward(j, k, t, j->o.strict);
		if (b)
			p = asof_min64(p, asof_sat_add(t, t - b->t));
	}
	return p;
}

/* A right record at r can only lower a held record's release point. */
int64_t
asof_release_point_after(const asof_join *j, const struct asof_held *h, int64_t r)
{
	bool fwd = j->o.strict ? r > h->t : r >= h->t;
	bool back = j->o.strict ? r < h->t : r <= h->t;

	if (j->o.direction == SS_ASOF_FORWARD)
		return fwd ? asof_min64(h->p, r) : h->p;
	if (fwd)
		return asof_min64(h->p, r);
	if (back)
		return asof_min64(h->p, asof_sat_add(h->t, h->t - r));
	return h->p;
}

/* ---- pruning ---- */

static void
drop_from_state(const struct asof_key *k, const struct asof_right *r, void *arg)
{
	asof_state_right_del(arg, k, r);
}

/* Keep history from the slower stream's position minus --retain, and whatever the held
 * records of this key still need. */
void
asof_prune(asof_join *j, struct asof_key *k)
{
	/* by default all of it is kept: a left record may come late by any amount; a
	 * merge of two ordered files knows it never does (asof_run.c) */
	if (j->lw == ASOF_NONE || k->n < 2 || (j->o.retain < 0 && !j->batch))
		return;
	int64_t cutoff = asof_sat_add(asof_min64(j->lw, j->wm), j->o.retain < 0 ? 0 : -j->o.retain);
	if (k->hist[1].t >= cutoff)
		return;
	if (j->o.direction == SS_ASOF_BACKWARD && !asof_ordered(j)) {
		/* release points are the left times: the heap's top is the oldest held (not so
		 * with --order left: a done record waiting is in no heap) */
		if (j->heap.n > 0)
			cutoff = asof_min64(cutoff, asof_heap_top(&j->heap)->t);
	} else {
		for (const struct asof_held *h = k->held; h; h = h->knext)
			cutoff = asof_min64(cutoff, h->t);
	}
	if (j->spilled > 0)
		cutoff = asof_min64(cutoff, j->spill_min_t);
	bool was_pruned = k->pruned;
	asof_hist_prune(k, cutoff, j->retired, j->st ? drop_from_state : NULL, j->st);
	if (asof_keeps_closed(j))
		asof_state_closed_prune(asof_spill_store(j), k, cutoff);
	if (j->st && k->pruned && !was_pruned)
		asof_state_pruned(j->st, k);
}

