/* The join's in-memory state: a hash map from encoded key to that key's right history
 * (sorted by event time), and the release heap of held left records; and the match rule
 * that picks the answer between the right records around a time (the index's too). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/hash.h"

/* The slot of key (enc, len) with hash h: its own, or the empty one where it belongs. */
static size_t
map_find(const struct asof_map *m, uint64_t h, const char *enc, size_t len)
{
	size_t i = h & (m->cap - 1);

	for (; m->slot[i].hash != 0; i = (i + 1) & (m->cap - 1)) {
		const struct asof_key *k = m->slot[i].key;
		if (m->slot[i].hash == h && k->enclen == len && memcmp(k->enc, enc, len) == 0)
			break;
	}
	return i;
}

static void
map_grow(struct asof_map *m)
{
	struct asof_map g = *m; /* (its slabs too) */

	g.cap = m->cap ? m->cap * 2 : 64;
	g.slot = calloc(g.cap, sizeof *g.slot);
	if (g.slot == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slot[i].hash == 0)
			continue;
		size_t j = m->slot[i].hash & (g.cap - 1);
		while (g.slot[j].hash != 0)
			j = (j + 1) & (g.cap - 1);
		g.slot[j] = m->slot[i];
	}
	free(m->slot);
	*m = g;
}

static uint64_t
in_key_hash(const struct asof_in *in)
{
	return in->khash != 0 ? in->khash : asof_key_hash(in->key.data, in->key.len);
}

void
asof_key_prefetch(const struct asof_map *m, const struct asof_in *in)
{
	asof_key_prefetch_stage(m, in_key_hash(in), ASOF_AHEAD_SLOT);
}

/* (no --by: the empty key, maybe from a NULL buffer, of which no byte is read) */
uint64_t
asof_key_hash(const char *enc, size_t len)
{
	return ss_hash_bytes(enc, len) | 1; /* 0 marks an empty slot */
}

/* Few keys (the seed's 100 stations): the map, the newest history of each key and its
 * bytes stay in the cache between lookups, and the stages below are work for nothing.
 * On the seed shape they were 7-9% of a join's samples (perf) but their skipping saves
 * only ~2% of its CPU time: most of what they waited for, the batch's records coming
 * from the parsing core, is then waited for where the records are read. 1,024 keys of
 * ~200-byte records are ~0.5 MB, an L2 cache's worth. */
enum { KEYS_CACHED = 1024 };

static bool
asof_keys_cached(const struct asof_map *m)
{
	return m->n <= KEYS_CACHED;
}

/* The key's header is read, not prefetched, at its stage. Measured on the wide shape
 * (10,000 keys, perf): after a prefetch of the header ten records ahead, the lookup still
 * missed on it (asof_key_get ~11% of all samples) and so did the stages after it (upper,
 * asof_expired, the right record's bytes in emit_projected: ~15%); after a load, the
 * load's own wait is ~12% and the others ~6% together. The prefetch is apparently
 * dropped on this machine where a load is not; why, perf cannot tell here (no hardware
 * counters in this VM). */
void
asof_key_prefetch_stage(const struct asof_map *m, uint64_t hash, enum asof_ahead_stage stage)
{
	if (asof_keys_cached(m))
		return;
	size_t at = hash & (m->cap - 1);
	if (stage == ASOF_AHEAD_SLOT) {
		__builtin_prefetch(&m->slot[at]);
		return;
	}
	/* its first probes, which the slot stage brought in (a key is often not in the
	 * first: the map is up to half full) */
	const struct asof_key *k = NULL;
	for (int probe = 0; probe < 4 && k == NULL && m->slot[at].hash != 0; probe++, at = (at + 1) & (m->cap - 1))
		if (m->slot[at].hash == hash)
			k = m->slot[at].key;
	if (k == NULL)
		return;
	if (stage == ASOF_AHEAD_KEY) /* a load, not a prefetch: see above; the key's bytes
					are on the same line (struct asof_key) */
		(void)*(volatile const uint32_t *)&k->enclen;
	else if (k->n > 0 && stage == ASOF_AHEAD_HIST) {
		__builtin_prefetch(&k->hist[0]);
		__builtin_prefetch(&k->hist[k->n - 1]);
	} else if (k->n > 0) { /* a left record copies it into its result */
		const struct asof_right *r = &k->hist[k->n - 1];
		if (!r->has_known) /* whole records out: all of its bytes */
			asof_right_prefetch(r);
		else { /* --select reads what was found ahead */
			/* 36 bytes, on two cache lines wherever they cross one: with their start
			 * alone asked for, emit_projected waited for their end in 4% of a
			 * projection's samples (wide shape, perf), 0.8% with both */
			const char *known = asof_right_known_bytes(r);
			__builtin_prefetch(r->raw);
			__builtin_prefetch(known);
			__builtin_prefetch(known + sizeof(struct asof_known) - 1);
		}
	}
}

bool
asof_join_keys_cached(const asof_join *j)
{
	return asof_keys_cached(&j->keys);
}

/* (here, not in asof.c: the run's parsing calls it, and asof.c reaches the run's reading
 * through asof_index.c, which both builds the index and answers from it) */
void
asof_join_prefetch_stage(const asof_join *j, uint64_t hash, enum asof_ahead_stage stage)
{
	asof_key_prefetch_stage(&j->keys, hash, stage);
}

/* Where a key of len bytes keeps its inline history entries: after its bytes and their
 * NUL, on 32 bytes (the second cache line for a key of up to 15 bytes). */
static size_t
inline_at(size_t len)
{
	return (offsetof(struct asof_key, enc) + len + 1 + 31) & ~(size_t)31;
}

static struct asof_right *
inline_hist(const struct asof_key *k)
{
	return (struct asof_right *)(void *)((char *)k + inline_at(k->enclen));
}

/* Keys go only with their map: they are cut from slabs of this size, one after
 * another on cache-line bounds, without malloc's header and alignment slack per key
 * (aligned_alloc for each: +1.3 MB at 10,000 keys). */
enum { KEY_SLAB = 64 * 1024 };

/* size bytes (a multiple of 64) on a cache-line bound, for a key */
static void *
key_mem(struct asof_map *m, size_t size)
{
	if (m->slab == NULL || m->slab_size - m->slab_used < size) {
		size_t n = size + 64 > KEY_SLAB ? size + 64 : KEY_SLAB;
		char *slab = aligned_alloc(64, n);
		if (slab == NULL)
			ss_diag_die(SS_EXIT_DATA, "out of memory");
		memcpy(slab, &m->slab, sizeof m->slab);
		m->slab = slab;
		m->slab_used = 64;
		m->slab_size = n;
	}
	void *k = m->slab + m->slab_used;
	m->slab_used += size;
	return k;
}

/* A new key with no history, on cache-line bounds (see struct asof_key). */
static struct asof_key *
key_new(struct asof_map *m, uint64_t h, const char *enc, size_t len)
{
	size_t size = (inline_at(len) + ASOF_HIST_INLINE * sizeof(struct asof_right) + 63) & ~(size_t)63;
	struct asof_key *k = key_mem(m, size);

	memset(k, 0, size);
	k->enclen = (uint32_t)len; /* (where its history starts) */
	k->hist = inline_hist(k);
	k->cap = ASOF_HIST_INLINE;
	k->hash = h;
	memcpy(k->enc, enc, len);
	return k;
}

static struct asof_key *
key_get(struct asof_map *m, uint64_t h, const char *enc, size_t len)
{
	if (len == 0)
		enc = ""; /* memcmp of no bytes, never from NULL */
	if (2 * (m->n + 1) > m->cap)
		map_grow(m);
	size_t i = map_find(m, h, enc, len);
	if (m->slot[i].hash != 0)
		return m->slot[i].key;
	struct asof_key *k = key_new(m, h, enc, len);
	m->slot[i] = (struct asof_slot_ent){.hash = h, .key = k};
	m->n++;
	return k;
}

struct asof_key *
asof_key_get(struct asof_map *m, const char *enc, size_t len)
{
	return key_get(m, asof_key_hash(enc, len), enc, len);
}

struct asof_key *
asof_key_of(struct asof_map *m, const struct asof_in *in)
{
	return key_get(m, in_key_hash(in), in->key.data, in->key.len);
}

void
asof_map_free(struct asof_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct asof_key *k = m->slot[i].key;
		if (k == NULL)
			continue;
		for (size_t r = 0; r < k->n; r++)
			free(k->hist[r].raw);
		if (k->hist != inline_hist(k))
			free(k->hist);
	}
	while (m->slab != NULL) {
		char *slab = m->slab;
		memcpy(&m->slab, slab, sizeof m->slab);
		free(slab);
	}
	free(m->slot);
	*m = (struct asof_map){0};
}

/* Index of the first record with time > t (strict: >= t). */
static size_t
upper(const struct asof_key *k, int64_t t, bool strict)
{
	size_t lo = 0, hi = k->n;

	/* the common case, in-order data, is answered at the end */
	if (hi > 0 && (strict ? k->hist[hi - 1].t < t : k->hist[hi - 1].t <= t))
		return hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strict ? k->hist[mid].t < t : k->hist[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct asof_right *
asof_hist_backward(const struct asof_key *k, int64_t t, bool strict)
{
	size_t i = upper(k, t, strict);

	return i > 0 ? &k->hist[i - 1] : NULL;
}

const struct asof_right *
asof_hist_forward(const struct asof_key *k, int64_t t, bool strict)
{
	size_t i = upper(k, t, !strict);

	return i < k->n ? &k->hist[i] : NULL;
}

/* Twice the room: the inline entries move to an array of their own. */
static void
hist_grow(struct asof_key *k)
{
	if (k->hist == inline_hist(k)) {
		k->hist = ss_xmalloc(2 * k->cap * sizeof *k->hist);
		memcpy(k->hist, inline_hist(k), k->n * sizeof *k->hist);
	} else {
		k->hist = ss_xrealloc(k->hist, 2 * k->cap * sizeof *k->hist);
	}
	k->cap *= 2;
}

const struct asof_right *
asof_hist_put(struct asof_key *k, int64_t t, uint64_t seq, char *raw, size_t len, bool has_known)
{
	size_t i = upper(k, t, true); /* first record with time >= t */

	if (i < k->n && k->hist[i].t == t) {
		/* same key and time: the later record replaces the earlier */
		if (seq < k->hist[i].seq) {
			free(raw);
			return NULL;
		}
		free(k->hist[i].raw);
	} else {
		if (k->n == k->cap)
			hist_grow(k);
		memmove(&k->hist[i + 1], &k->hist[i], (k->n - i) * sizeof *k->hist);
		k->n++;
	}
	k->hist[i] = (struct asof_right){.t = t, .seq = seq, .len = (uint32_t)len, .has_known = has_known, .raw = raw};
	return &k->hist[i];
}

void
asof_retire(struct asof_retired *r, char *raw)
{
	if (r == NULL) {
		free(raw);
		return;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->v = ss_xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n++] = raw;
}

void
asof_retired_clear(struct asof_retired *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	r->n = 0;
}

void
asof_hist_prune(struct asof_key *k, int64_t cutoff, struct asof_retired *done,
		void (*cb)(const struct asof_key *, const struct asof_right *, void *), void *arg)
{
	size_t drop = 0;

	/* keep the newest record older than cutoff: it answers lookups at cutoff */
	while (drop + 1 < k->n && k->hist[drop + 1].t < cutoff)
		drop++;
	if (drop == 0)
		return;
	for (size_t i = 0; i < drop; i++) {
		if (cb)
			cb(k, &k->hist[i], arg);
		asof_retire(done, k->hist[i].raw);
	}
	memmove(k->hist, k->hist + drop, (k->n - drop) * sizeof *k->hist);
	k->n -= drop;
	k->pruned = true;
	if (k->cap > 64 && k->n < k->cap / 4) {
		k->cap /= 2;
		k->hist = ss_xrealloc(k->hist, k->cap * sizeof *k->hist);
	}
}

/* ---- release heap: a binary min-heap on the release point p, and the parked ---- */

static bool
before(const struct asof_heap_entry *a, const struct asof_heap_entry *b)
{
	return a->p < b->p || (a->p == b->p && a->id < b->id);
}

static void
place(struct asof_heap *h, size_t i, struct asof_heap_entry e)
{
	h->v[i] = e;
	e.x->heap = i;
}

static void
sift_up(struct asof_heap *h, size_t i)
{
	struct asof_heap_entry e = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&e, &h->v[parent]))
			break;
		place(h, i, h->v[parent]);
		i = parent;
	}
	place(h, i, e);
}

static void
sift_down(struct asof_heap *h, size_t i)
{
	struct asof_heap_entry e = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->nv)
			break;
		if (c + 1 < h->nv && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &e))
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, e);
}

/* x's entry to its place after its point changed, or after it took another's place. */
static void
resift(struct asof_heap *h, const struct asof_held *x)
{
	sift_up(h, x->heap);
	sift_down(h, x->heap);
}

static void
heap_push(struct asof_heap *h, struct asof_held *x)
{
	if (h->nv == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 256;
		h->v = ss_xrealloc(h->v, h->cap * sizeof *h->v);
	}
	h->v[h->nv] = (struct asof_heap_entry){x->p, x->id, x};
	sift_up(h, h->nv++);
}

static void
heap_remove(struct asof_heap *h, struct asof_held *x)
{
	size_t i = x->heap;
	struct asof_heap_entry last = h->v[--h->nv];

	if (i == h->nv)
		return;
	place(h, i, last);
	resift(h, last.x);
}

static void
unpark(struct asof_heap *h, struct asof_held *x)
{
	if (x->wprev)
		x->wprev->wnext = x->wnext;
	else
		h->parked = x->wnext;
	if (x->wnext)
		x->wnext->wprev = x->wprev;
	else
		h->parked_last = x->wprev;
}

void
asof_heap_push(struct asof_heap *h, struct asof_held *x)
{
	h->n++;
	if (x->p != INT64_MAX || (h->parked_last != NULL && h->parked_last->id > x->id)) {
		heap_push(h, x); /* (a record back from the spill file comes out of id order) */
		return;
	}
	x->heap = ASOF_PARKED;
	x->wnext = NULL;
	x->wprev = h->parked_last;
	if (h->parked_last)
		h->parked_last->wnext = x;
	else
		h->parked = x;
	h->parked_last = x;
}

void
asof_heap_remove(struct asof_heap *h, struct asof_held *x)
{
	h->n--;
	if (x->heap == ASOF_PARKED)
		unpark(h, x);
	else
		heap_remove(h, x);
}

struct asof_held *
asof_heap_pop(struct asof_heap *h)
{
	struct asof_held *x = asof_heap_top(h);

	asof_heap_remove(h, x);
	return x;
}

void
asof_heap_fix(struct asof_heap *h, struct asof_held *x)
{
	if (x->heap == ASOF_PARKED) {
		if (x->p != INT64_MAX) {
			unpark(h, x);
			heap_push(h, x);
		}
		return;
	}
	h->v[x->heap].p = x->p;
	resift(h, x);
}

struct asof_held *
asof_heap_top(const struct asof_heap *h)
{
	if (h->parked == NULL)
		return h->v[0].x;
	struct asof_heap_entry first = {INT64_MAX, h->parked->id, h->parked};
	return h->nv > 0 && before(&h->v[0], &first) ? h->v[0].x : h->parked;
}

/* ---- the match rule ---- */

static bool
within(const struct ss_asof_opts *o, int64_t a, int64_t b)
{
	return o->tolerance < 0 || b - a <= o->tolerance;
}

const struct asof_right *
asof_pick(const struct ss_asof_opts *o, int64_t t, const struct asof_right *b, const struct asof_right *f)
{
	if (b && !within(o, b->t, t))
		b = NULL;
	if (f && !within(o, t, f->t))
		f = NULL;
	if (b && f) /* nearest: the closer one, ties to backward */
		return f->t - t < t - b->t ? f : b;
	return b ? b : f;
}
