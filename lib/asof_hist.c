/* The join's in-memory state: a hash map from encoded key to that key's right history
 * (sorted by event time), and the release heap of held left records. */
#include <stdlib.h>
#include <string.h>

#include "asof_impl.h"
#include "diag.h"

/* FNV-1a: keys are short (a station name, an id), so a simple hash is enough. */
static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return h;
}

static void
map_grow(struct asof_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct asof_key **slot = calloc(cap, sizeof *slot);

	if (slot == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	for (size_t i = 0; i < m->cap; i++) {
		struct asof_key *k = m->slot[i];
		if (k == NULL)
			continue;
		size_t j = k->hash & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = k;
	}
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
}

struct asof_key *
asof_key_get(struct asof_map *m, const char *enc, size_t len)
{
	uint64_t h = hash_bytes(enc, len);

	if (2 * (m->n + 1) > m->cap)
		map_grow(m);
	size_t i = h & (m->cap - 1);
	for (struct asof_key *k; (k = m->slot[i]) != NULL; i = (i + 1) & (m->cap - 1))
		if (k->hash == h && k->enclen == len && (len == 0 || memcmp(k->enc, enc, len) == 0))
			return k;
	struct asof_key *k = calloc(1, sizeof *k);
	if (k == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	k->hash = h;
	k->enclen = (uint32_t)len;
	k->enc = ss_xmalloc(len + 1);
	if (len > 0) /* no --by: the empty key, maybe from a NULL buffer */
		memcpy(k->enc, enc, len);
	m->slot[i] = k;
	m->n++;
	return k;
}

void
asof_map_free(struct asof_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct asof_key *k = m->slot[i];
		if (k == NULL)
			continue;
		for (size_t r = 0; r < k->n; r++)
			free(k->hist[r].raw);
		free(k->hist);
		free(k->enc);
		free(k);
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

const struct asof_right *
asof_hist_put(struct asof_key *k, int64_t t, uint64_t seq, char *raw, size_t len)
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
		if (k->n == k->cap) {
			k->cap = k->cap ? 2 * k->cap : 4;
			k->hist = ss_xrealloc(k->hist, k->cap * sizeof *k->hist);
		}
		memmove(&k->hist[i + 1], &k->hist[i], (k->n - i) * sizeof *k->hist);
		k->n++;
	}
	k->hist[i] = (struct asof_right){.t = t, .seq = seq, .len = (uint32_t)len, .raw = raw};
	return &k->hist[i];
}

void
asof_hist_prune(struct asof_key *k, int64_t cutoff,
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
		free(k->hist[i].raw);
	}
	memmove(k->hist, k->hist + drop, (k->n - drop) * sizeof *k->hist);
	k->n -= drop;
	k->pruned = true;
	if (k->cap > 64 && k->n < k->cap / 4) {
		k->cap /= 2;
		k->hist = ss_xrealloc(k->hist, k->cap * sizeof *k->hist);
	}
}

/* ---- release heap: a binary min-heap on the release point p ---- */

static bool
before(const struct asof_held *a, const struct asof_held *b)
{
	return a->p < b->p || (a->p == b->p && a->id < b->id);
}

static void
place(struct asof_heap *h, size_t i, struct asof_held *x)
{
	h->v[i] = x;
	x->heap = i;
}

static void
sift_up(struct asof_heap *h, size_t i)
{
	struct asof_held *x = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(x, h->v[parent]))
			break;
		place(h, i, h->v[parent]);
		i = parent;
	}
	place(h, i, x);
}

static void
sift_down(struct asof_heap *h, size_t i)
{
	struct asof_held *x = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
			c++;
		if (!before(h->v[c], x))
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, x);
}

void
asof_heap_push(struct asof_heap *h, struct asof_held *x)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 256;
		h->v = ss_xrealloc(h->v, h->cap * sizeof *h->v);
	}
	h->v[h->n] = x;
	sift_up(h, h->n++);
}

void
asof_heap_remove(struct asof_heap *h, struct asof_held *x)
{
	size_t i = x->heap;
	struct asof_held *last = h->v[--h->n];

	if (i == h->n)
		return;
	place(h, i, last);
	asof_heap_fix(h, last);
}

struct asof_held *
asof_heap_pop(struct asof_heap *h)
{
	struct asof_held *x = h->v[0];

	asof_heap_remove(h, x);
	return x;
}

void
asof_heap_fix(struct asof_heap *h, struct asof_held *x)
{
	sift_up(h, x->heap);
	sift_down(h, x->heap);
}
