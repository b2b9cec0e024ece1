/* checkpoint_parts: see checkpoint_parts.h for the rule. */
#include "checkpoint/checkpoint_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/diag.h"

int64_t
ckparts_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
ckparts_init(struct ckparts *s, int64_t idle, int expect)
{
	memset(s, 0, sizeof *s);
	s->idle = idle;
	s->expect = expect;
	s->started = ckparts_now();
}

void
ckparts_free(struct ckparts *s)
{
	free(s->v);
	free(s->heap);
	s->heap = NULL;
	s->nheap = 0;
	ss_tpindex_free(&s->index);
	s->v = NULL;
	s->n = s->cap = 0;
	s->low_ok = false;
}

static bool
is(const void *owner, size_t at, const char *topic, int32_t partition)
{
	const struct ckpart *p = &((const struct ckparts *)owner)->v[at];

	return p->env.partition == partition && strcmp(p->env.topic, topic) == 0;
}

static struct ckpart *
add(struct ckparts *s, const char *topic, int32_t partition)
{
	struct ckpart *p;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->v = ss_xrealloc(s->v, s->cap * sizeof *s->v);
	}
	ss_tpindex_add(&s->index, topic, partition, s->n);
	p = &s->v[s->n++];
	*p = (struct ckpart){ .env.partition = partition, .env.offset = -1, .wm = { .maxt =
	    SS_PARTWM_NONE, .seen = ckparts_now(), .pos = -1, .feed = -1, .feed_last = -1 },
	    .written = CKPART_UNWRITTEN };
	snprintf(p->env.topic, sizeof p->env.topic, "%s", topic);
	s->low_ok = false;
	return p;
}

/* The partition, added if new; what the stream's rule folded is still valid. */
static struct ckpart *
part(struct ckparts *s, const char *topic, int32_t partition)
{
	size_t at = ss_tpindex_find(&s->index, topic, partition, is, s);

	return at == SIZE_MAX ? add(s, topic, partition) : &s->v[at];
}

struct ckpart *
ckparts_get(struct ckparts *s, const char *topic, int32_t partition)
{
	s->low_ok = false; /* the caller may change it */
	return part(s, topic, partition);
}

void
ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].wm.feed = -1;
	s->low_ok = false;
	for (i = 0; i < n; i++) {
		struct ckpart *p = part(s, parts[i].topic, parts[i].partition);

		p->wm.feed = (int)parts[i].state;
		p->wm.feed_last = parts[i].last;
	}
	s->told = n > 0;
}

struct ss_partwm_rule
ckparts_rule(int64_t idle, bool told)
{
	return (struct ss_partwm_rule){ .idle = idle, .told = told, .heard_idles = true,
	    .revoked_idles = true };
}

static struct ss_partwm_rule
stream_rule(const struct ckparts *s)
{
	return ckparts_rule(s->idle, s->told);
}

enum ss_partwm_state
ckpart_state(const struct ckparts *s, const struct ckpart *p)
{
	struct ss_partwm_rule r = stream_rule(s);

	return ss_partwm_state(&r, &p->wm);
}

/* The partition's share in the stream's rule, alone, as of now. */
static struct ss_partwm_low
share(const struct ckparts *s, const struct ckpart *p, int64_t now)
{
	struct ss_partwm_rule r = stream_rule(s);
	struct ss_partwm_low l = SS_PARTWM_LOW_INIT;

	ss_partwm_low_add(&l, &r, &p->wm, now);
	return l;
}

/* ---- the holders with a time, in a min-heap by time: the lowest in O(log n) ---- */

static int64_t
heap_key(const struct ckparts *s, size_t k)
{
	return s->v[s->heap[k]].wm.maxt;
}

static void
heap_set(struct ckparts *s, size_t k, size_t i)
{
	s->heap[k] = i;
	s->v[i].heap_at = k;
}

static void
heap_swap(struct ckparts *s, size_t a, size_t b)
{
	size_t t = s->heap[a];

	heap_set(s, a, s->heap[b]);
	heap_set(s, b, t);
}

/* The entry at k moved to where its time puts it. */
static void
heap_fix(struct ckparts *s, size_t k)
{
	while (k > 0 && heap_key(s, k) < heap_key(s, (k - 1) / 2)) {
		heap_swap(s, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= s->nheap)
			return;
		if (c + 1 < s->nheap && heap_key(s, c + 1) < heap_key(s, c))
			c++;
		if (heap_key(s, k) <= heap_key(s, c))
			return;
		heap_swap(s, k, c);
		k = c;
	}
}

static void
heap_push(struct ckparts *s, size_t i)
{
	heap_set(s, s->nheap++, i);
	heap_fix(s, s->nheap - 1);
}

static void
heap_remove(struct ckparts *s, size_t i)
{
	size_t k = s->v[i].heap_at;

	s->v[i].heap_at = SIZE_MAX;
	if (k == --s->nheap)
		return;
	heap_set(s, k, s->heap[s->nheap]);
	heap_fix(s, k);
}

/* ---- the rule folded over all partitions, kept up to date record by record ---- */

/* Fold a partition's share (share()) into l. */
static void
fold(struct ss_partwm_low *l, const struct ss_partwm_low *sh)
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

/* Partition i's share went from b to a: the fold follows, or false when it cannot
 * without folding every partition again. Counts go down and up; the lowest time is the
 * heap's; a share that leaves takes nothing from idle_next (the folded one is then at
 * most too early: stream_low folds again then, for nothing), nor from idle_hi unless it
 * was the highest (then it cannot tell: false; a silent partition speaks again). */
static bool
refold(struct ckparts *s, size_t i, const struct ss_partwm_low *b, const struct ss_partwm_low *a)
{
	if (b->idle_hi != SS_PARTWM_NONE && b->idle_hi >= s->low.idle_hi)
		return false;
	s->low.held -= b->held;
	s->low.timeless -= b->timeless;
	if (b->held && !a->held)
		heap_remove(s, i);
	else if (!b->held && a->held)
		heap_push(s, i);
	else if (a->held)
		heap_fix(s, s->v[i].heap_at);
	fold(&s->low, a);
	s->low.lo = s->nheap > 0 ? heap_key(s, 0) : INT64_MAX;
	return true;
}

void
ckparts_note(struct ckparts *s, const struct ss_envelope *env, int64_t ts, int64_t now)
{
	struct ckpart *p = part(s, env->topic, env->partition);
	struct ss_partwm_low before = share(s, p, now);
	bool had_time = p->wm.maxt != SS_PARTWM_NONE;

	p->env.offset = p->wm.pos = env->offset;
	if (ts > p->wm.maxt)
		p->wm.maxt = ts;
	p->wm.seen = now;
	p->moved = p->dirty = s->dirty = true;
	struct ss_partwm_low after = share(s, p, now);
	if (!had_time && p->wm.maxt != SS_PARTWM_NONE)
		s->timed++; /* (counted again by the next fold, if there is one) */
	if (s->low_ok && (now >= s->low.idle_next || !refold(s, (size_t)(p - s->v), &before, &after)))
		s->low_ok = false;
}

/* The stream's rule folded over its partitions (and how many have a time, and the heap
 * of those that hold it with one), again only when something may have changed it in a
 * way a record's refold cannot follow: a partition (ckparts_get, add, feed), or the
 * time (a partition may have turned idle at low.idle_next). So a record costs
 * O(log n), not a fold over every partition. */
static struct ss_partwm_low
stream_low(struct ckparts *s, int64_t now)
{
	if (s->low_ok && now < s->low.idle_next)
		return s->low;
	s->low = SS_PARTWM_LOW_INIT;
	s->timed = 0;
	s->heap = ss_xrealloc(s->heap, (s->n ? s->n : 1) * sizeof *s->heap);
	s->nheap = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct ss_partwm_low sh = share(s, &s->v[i], now);
		fold(&s->low, &sh);
		s->timed += s->v[i].wm.maxt != SS_PARTWM_NONE;
		s->v[i].heap_at = SIZE_MAX;
		if (sh.held)
			heap_push(s, i);
	}
	s->low_ok = true;
	return s->low;
}

bool
ckparts_low(struct ckparts *s, int64_t now, const int64_t *top, int64_t *lo)
{
	struct ss_partwm_low l = stream_low(s, now);

	/* not told, one without a marker is a row of a version without markers: skipped */
	if (s->told && l.timeless > 0)
		return false; /* nothing from it yet: anything may come */
	if (l.held > 0)
		*lo = l.lo;
	else if (top != NULL)
		*lo = *top;
	return l.held > 0 || top != NULL;
}

int
ckparts_waiting(struct ckparts *s, int64_t now)
{
	if (s->told)
		return (int)stream_low(s, now).timeless;
	if (s->expect == 0 || now - s->started >= s->idle)
		return 0;
	stream_low(s, now); /* (for the count of partitions with a time) */
	return s->timed >= (size_t)s->expect ? 0 : s->expect - (int)s->timed;
}

bool
ckparts_restate(struct ckparts *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		struct ckpart *p = &s->v[i];

		if (ckpart_state(s, p) != p->written)
			p->dirty = s->dirty = true;
	}
	return s->dirty;
}
