/* partwm: see partwm.h for the rule. */
#include "stream/partwm.h"

#include <stdlib.h>

#include "base/diag.h"
#include "stream/feed.h"

enum ss_partwm_state
ss_partwm_state(const struct ss_partwm_rule *r, const struct ss_partwm_part *p)
{
	bool read_last = p->pos >= p->feed_last; /* the writer's word is about what we have */

	/* before told: a writer that lists nothing now may have said so earlier */
	if (p->feed == SS_FEED_ENDED && read_last)
		return SS_PARTWM_DONE;
	if (!r->told)
		return SS_PARTWM_HEARD;
	if (p->feed < 0)
		return r->unlisted_reads ? SS_PARTWM_READING :
		    p->pos >= 0 ? SS_PARTWM_HEARD : SS_PARTWM_DONE;
	if (p->feed == SS_FEED_REVOKED && read_last)
		return SS_PARTWM_REVOKED;
	if (p->feed == SS_FEED_CAUGHT_UP && read_last)
		return SS_PARTWM_CAUGHT_UP;
	return SS_PARTWM_READING;
}

/* Does a partition in this state stop holding after idle silence? */
static bool
may_idle(const struct ss_partwm_rule *r, enum ss_partwm_state s)
{
	return s == SS_PARTWM_CAUGHT_UP || (s == SS_PARTWM_HEARD && r->heard_idles) ||
	    (s == SS_PARTWM_REVOKED && r->revoked_idles);
}

bool
ss_partwm_idle(const struct ss_partwm_rule *r, const struct ss_partwm_part *p,
    enum ss_partwm_state s, int64_t now)
{
	return may_idle(r, s) && now - p->seen >= r->idle;
}

void
ss_partwm_low_add(struct ss_partwm_low *l, const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p, int64_t now)
{
	ss_partwm_low_add_state(l, r, p, ss_partwm_state(r, p), now);
}

void
ss_partwm_low_add_state(struct ss_partwm_low *l, const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p, enum ss_partwm_state s, int64_t now)
{
	if (s == SS_PARTWM_DONE)
		return;
	if (ss_partwm_idle(r, p, s, now)) {
		if (p->maxt > l->idle_hi)
			l->idle_hi = p->maxt; /* none holds: no further than these went */
		return;
	}
	if (may_idle(r, s) && p->seen + r->idle < l->idle_next)
		l->idle_next = p->seen + r->idle;
	if (p->maxt == SS_PARTWM_NONE) {
		l->timeless++; /* nothing from it yet: anything may come */
	} else {
		if (p->maxt < l->lo)
			l->lo = p->maxt;
		l->held++;
	}
}

/* ---- the fold kept up to date (partwm.h) ---- */

struct ss_partwm_low
ss_partwm_share(const struct ss_partwm_rule *r, const struct ss_partwm_part *p, int64_t now)
{
	struct ss_partwm_low l = SS_PARTWM_LOW_INIT;

	ss_partwm_low_add(&l, r, p, now);
	return l;
}

/* The partitions of one call, for the heap to read their times. */
struct parts {
	const char *base;
	size_t stride;
};

static int64_t
maxt_of(const struct parts *ps, size_t i)
{
	return ((const struct ss_partwm_part *)(const void *)(ps->base + i * ps->stride))->maxt;
}

static int64_t
heap_key(const struct ss_partwm_fold *f, const struct parts *ps, size_t k)
{
	return maxt_of(ps, f->heap[k]);
}

static void
heap_set(struct ss_partwm_fold *f, size_t k, size_t i)
{
	f->heap[k] = i;
	f->at[i] = k;
}

static void
heap_swap(struct ss_partwm_fold *f, size_t a, size_t b)
{
	size_t t = f->heap[a];

	heap_set(f, a, f->heap[b]);
	heap_set(f, b, t);
}

/* The entry at k moved to where its time puts it. */
static void
heap_fix(struct ss_partwm_fold *f, const struct parts *ps, size_t k)
{
	while (k > 0 && heap_key(f, ps, k) < heap_key(f, ps, (k - 1) / 2)) {
		heap_swap(f, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= f->nheap)
			return;
		if (c + 1 < f->nheap && heap_key(f, ps, c + 1) < heap_key(f, ps, c))
			c++;
		if (heap_key(f, ps, k) <= heap_key(f, ps, c))
			return;
		heap_swap(f, k, c);
		k = c;
	}
}

static void
heap_push(struct ss_partwm_fold *f, const struct parts *ps, size_t i)
{
	heap_set(f, f->nheap++, i);
	heap_fix(f, ps, f->nheap - 1);
}

static void
heap_remove(struct ss_partwm_fold *f, const struct parts *ps, size_t i)
{
	size_t k = f->at[i];

	f->at[i] = SIZE_MAX;
	if (k == --f->nheap)
		return;
	heap_set(f, k, f->heap[f->nheap]);
	heap_fix(f, ps, k);
}

/* Fold a partition's share into l. */
static void
fold_share(struct ss_partwm_low *l, const struct ss_partwm_low *sh)
{
	if (sh->lo < l->lo)
		l->lo = sh->lo;
	l->held += sh->held;
	l->timeless += sh->timeless;
	if (sh->idle_hi > l->idle_hi)
		l->idle_hi = sh->idle_hi;
	if (sh->idle_next < l->idle_next)
		l->idle_next = sh->idle_next;
}

static bool
same_rule(const struct ss_partwm_rule *a, const struct ss_partwm_rule *b)
{
	return a->idle == b->idle && a->told == b->told && a->heard_idles == b->heard_idles &&
	    a->revoked_idles == b->revoked_idles && a->unlisted_reads == b->unlisted_reads;
}

struct ss_partwm_low
ss_partwm_fold_get(struct ss_partwm_fold *f, const struct ss_partwm_rule *r, const void *base,
    size_t stride, size_t n, int64_t now)
{
	struct parts ps = { base, stride };

	if (f->ok && now < f->low.idle_next && same_rule(&f->rule, r) && n == f->n)
		return f->low;
	if (n > f->cap) {
		f->cap = n;
		f->heap = ss_xrealloc(f->heap, n * sizeof *f->heap);
		f->at = ss_xrealloc(f->at, n * sizeof *f->at);
	}
	f->low = SS_PARTWM_LOW_INIT;
	f->rule = *r;
	f->n = n;
	f->nheap = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ss_partwm_part *p = (const void *)(ps.base + i * stride);
		struct ss_partwm_low sh = ss_partwm_share(r, p, now);
		fold_share(&f->low, &sh);
		f->at[i] = SIZE_MAX;
		if (sh.held)
			heap_push(f, &ps, i);
	}
	f->ok = true;
	return f->low;
}

/* A share that leaves takes nothing from idle_next (the fold's is then at most too
 * early: it is folded again then, for nothing), nor from idle_hi unless it was the
 * highest: then the fold cannot tell what is now (a silent partition spoke again). */
void
ss_partwm_fold_move(struct ss_partwm_fold *f, const struct ss_partwm_rule *r, const void *base,
    size_t stride, size_t i, const struct ss_partwm_low *before, int64_t now)
{
	struct parts ps = { base, stride };

	if (!f->ok || now >= f->low.idle_next || !same_rule(&f->rule, r) || i >= f->n ||
	    (before->idle_hi != SS_PARTWM_NONE && before->idle_hi >= f->low.idle_hi)) {
		f->ok = false;
		return;
	}
	struct ss_partwm_low after = ss_partwm_share(r, (const void *)(ps.base + i * stride), now);
	f->low.held -= before->held;
	f->low.timeless -= before->timeless;
	if (before->held && !after.held)
		heap_remove(f, &ps, i);
	else if (!before->held && after.held)
		heap_push(f, &ps, i);
	else if (after.held)
		heap_fix(f, &ps, f->at[i]);
	fold_share(&f->low, &after);
	f->low.lo = f->nheap > 0 ? heap_key(f, &ps, 0) : INT64_MAX;
}

void
ss_partwm_fold_drop(struct ss_partwm_fold *f)
{
	f->ok = false;
}

void
ss_partwm_fold_free(struct ss_partwm_fold *f)
{
	free(f->heap);
	free(f->at);
	*f = (struct ss_partwm_fold){ 0 };
}
