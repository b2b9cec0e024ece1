/* checkpoint_parts: see checkpoint_parts.h for the rule. */
#include "checkpoint_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"

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
	*p = (struct ckpart){ .env.partition = partition, .env.offset = -1, .pos = -1,
	    .feed = -1, .feed_last = -1, .written = CKPART_UNWRITTEN, .seen = ckparts_now() };
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

	p->env.offset = p->pos = env->offset;
	if (!p->has_marker || ts > p->marker) {
		p->marker = ts;
		p->has_marker = true;
	}
	p->seen = now;
	p->moved = p->dirty = s->dirty = true;
}

void
ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].feed = -1;
	for (i = 0; i < n; i++) {
		struct ckpart *p = ckparts_get(s, parts[i].topic, parts[i].partition);

		p->feed = (int)parts[i].state;
		p->feed_last = parts[i].last;
	}
	s->told = n > 0;
}

enum ckpart_state
ckpart_state(const struct ckparts *s, const struct ckpart *p)
{
	bool read_last = p->pos >= p->feed_last; /* the writer's word is about what we have */

	if (!s->told)
		return CKPART_HEARD;
	if (p->feed < 0) /* heard from, but not in the list (yet); or not read by this writer */
		return p->pos >= 0 ? CKPART_HEARD : CKPART_DONE;
	if (p->feed == SS_FEED_ENDED)
		return read_last ? CKPART_DONE : CKPART_READING;
	if (p->feed == SS_FEED_REVOKED && read_last)
		return CKPART_REVOKED;
	if (p->feed == SS_FEED_CAUGHT_UP && read_last)
		return CKPART_CAUGHT_UP;
	return CKPART_READING;
}

static bool
holds(const struct ckparts *s, const struct ckpart *p, int64_t now)
{
	switch (ckpart_state(s, p)) {
	case CKPART_DONE:
		return false;
	case CKPART_READING:
		return true;
	default: /* heard, caught up, revoked */
		return now - p->seen < s->idle;
	}
}

bool
ckparts_low(const struct ckparts *s, int64_t now, const int64_t *top, int64_t *lo)
{
	bool any = false;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct ckpart *p = &s->v[i];

		if (!holds(s, p, now))
			continue;
		if (!p->has_marker) {
			if (s->told)
				return false; /* nothing from it yet: anything may come */
			continue; /* a row of a version without markers */
		}
		if (!any || p->marker < *lo)
			*lo = p->marker;
		any = true;
	}
	if (!any && top != NULL)
		*lo = *top;
	return any || top != NULL;
}

int
ckparts_waiting(const struct ckparts *s, int64_t now)
{
	int n = 0;
	size_t i;

	if (s->told) {
		for (i = 0; i < s->n; i++)
			n += !s->v[i].has_marker && holds(s, &s->v[i], now);
		return n;
	}
	if (s->expect == 0 || now - s->started >= s->idle)
		return 0;
	for (i = 0; i < s->n; i++)
		n += s->v[i].has_marker;
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
