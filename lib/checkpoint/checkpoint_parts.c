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
	s->v = NULL;
	s->n = s->cap = 0;
}

static bool
is(const struct ckpart *p, const char *topic, int32_t partition)
{
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
	p = &s->v[s->n++];
	*p = (struct ckpart){ .env.partition = partition, .env.offset = -1, .wm = { .maxt =
	    SS_PARTWM_NONE, .seen = ckparts_now(), .pos = -1, .feed = -1, .feed_last = -1 },
	    .written = CKPART_UNWRITTEN };
	snprintf(p->env.topic, sizeof p->env.topic, "%s", topic);
	return p;
}

struct ckpart *
ckparts_get(struct ckparts *s, const char *topic, int32_t partition)
{
	size_t i = s->last;

	/* records mostly come in runs from one partition: try the last one first */
	if (i >= s->n || !is(&s->v[i], topic, partition)) {
		for (i = 0; i < s->n && !is(&s->v[i], topic, partition); i++)
			;
		if (i == s->n)
			add(s, topic, partition);
	}
	s->last = i;
	return &s->v[i];
}

void
ckparts_note(struct ckparts *s, const struct ss_envelope *env, int64_t ts, int64_t now)
{
	struct ckpart *p = ckparts_get(s, env->topic, env->partition);

	p->env.offset = p->wm.pos = env->offset;
	if (ts > p->wm.maxt)
		p->wm.maxt = ts;
	p->wm.seen = now;
	p->moved = p->dirty = s->dirty = true;
}

void
ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].wm.feed = -1;
	for (i = 0; i < n; i++) {
		struct ckpart *p = ckparts_get(s, parts[i].topic, parts[i].partition);

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

static struct ss_partwm_low
stream_low(const struct ckparts *s, int64_t now)
{
	struct ss_partwm_rule r = stream_rule(s);
	struct ss_partwm_low l = SS_PARTWM_LOW_INIT;
	size_t i;

	for (i = 0; i < s->n; i++)
		ss_partwm_low_add(&l, &r, &s->v[i].wm, now);
	return l;
}

bool
ckparts_low(const struct ckparts *s, int64_t now, const int64_t *top, int64_t *lo)
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
ckparts_waiting(const struct ckparts *s, int64_t now)
{
	int n = 0;
	size_t i;

	if (s->told)
		return (int)stream_low(s, now).timeless;
	if (s->expect == 0 || now - s->started >= s->idle)
		return 0;
	for (i = 0; i < s->n; i++)
		n += s->v[i].wm.maxt != SS_PARTWM_NONE;
	return n >= s->expect ? 0 : s->expect - n;
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
