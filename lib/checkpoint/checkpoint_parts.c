/* checkpoint_parts: see checkpoint_parts.h for the rule. */
#include "checkpoint/checkpoint_parts.h"

#include <stddef.h>
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
	ss_partwm_fold_free(&s->fold);
	ss_tpindex_free(&s->index);
	s->v = NULL;
	s->n = s->cap = 0;
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
	struct ckpart *p = part(s, topic, partition);

	ss_partwm_fold_drop(&s->fold); /* the caller may change it */
	s->timed_ok = false;
	return p;
}

void
ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].wm.feed = -1;
	ss_partwm_fold_drop(&s->fold);
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

/* Where the partitions' struct ss_partwm_part are, for the fold. */
#define CKPARTS_WM(s) ((const char *)(s)->v + offsetof(struct ckpart, wm)), sizeof(struct ckpart)

void
ckparts_note(struct ckparts *s, const struct ss_envelope *env, int64_t ts, int64_t now)
{
	struct ckpart *p = part(s, env->topic, env->partition);
	struct ss_partwm_rule r = stream_rule(s);
	struct ss_partwm_low before = ss_partwm_share(&r, &p->wm, now);

	if (p->wm.maxt == SS_PARTWM_NONE && ts != SS_PARTWM_NONE)
		s->timed++;
	p->env.offset = p->wm.pos = env->offset;
	if (ts > p->wm.maxt)
		p->wm.maxt = ts;
	p->wm.seen = now;
	p->moved = p->dirty = s->dirty = true;
	ss_partwm_fold_move(&s->fold, &r, CKPARTS_WM(s), (size_t)(p - s->v), &before, now);
}

/* The rule folded over the partitions: a record costs O(log n), not a fold over all of
 * them (partwm.h). */
static struct ss_partwm_low
stream_low(struct ckparts *s, int64_t now)
{
	struct ss_partwm_rule r = stream_rule(s);

	return ss_partwm_fold_get(&s->fold, &r, CKPARTS_WM(s), s->n, now);
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
	if (!s->timed_ok) { /* (a caller of ckparts_get may have set times) */
		s->timed = 0;
		for (size_t i = 0; i < s->n; i++)
			s->timed += s->v[i].wm.maxt != SS_PARTWM_NONE;
		s->timed_ok = true;
	}
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
