/* The right watermark and the left time, partition-aware. Records without an envelope advance one
 * watermark (j->maxr), as they always did. Records with an envelope advance one per
 * topic-partition: a topic's partitions arrive interleaved at different speeds, so the
 * join's watermark is the minimum over the partitions seen (and over j->maxr if such
 * records came too), ignoring partitions silent for longer than --idle (wall clock)
 * until they speak again. The watermark never goes back: results released are final.
 * The left time that right history is kept for is the minimum over the left partitions
 * in the same way, so that a left partition behind the others finds its history. */
#include <stdlib.h>
#include <string.h>

#include "asof_impl.h"
#include "diag.h"

static int64_t
sat_sub(int64_t a, int64_t b)
{
	if (a == ASOF_NONE)
		return ASOF_NONE;
	return a < INT64_MIN + b ? INT64_MIN + 1 : a - b;
}

struct asof_part *
asof_part_get(struct asof_parts *ps, const char *topic, int32_t partition)
{
	struct asof_part *p;

	/* consecutive records often come from the same partition */
	if (ps->last < ps->n) {
		p = &ps->v[ps->last];
		if (p->partition == partition && strcmp(p->topic, topic) == 0)
			return p;
	}
	for (size_t i = 0; i < ps->n; i++) {
		p = &ps->v[i];
		if (p->partition == partition && strcmp(p->topic, topic) == 0) {
			ps->last = i;
			return p;
		}
	}
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->v = ss_xrealloc(ps->v, ps->cap * sizeof *ps->v);
	}
	p = &ps->v[ps->n];
	*p = (struct asof_part){.partition = partition, .maxt = ASOF_NONE, .seen = ss_time_mono()};
	strcpy(p->topic, topic);
	ps->last = ps->n++;
	return p;
}

/* The lowest newest time over bare (records without envelope) and the partitions heard
 * from within --idle; the highest when every partition is idle, as then none holds the
 * others back. Lowers *idle_next to when the first live partition turns idle. */
static int64_t
lowest_live(const ss_asof *j, const struct asof_parts *ps, int64_t bare, int64_t now, int64_t *idle_next)
{
	int64_t lo = bare, hi = bare;

	for (size_t i = 0; i < ps->n; i++) {
		const struct asof_part *p = &ps->v[i];
		if (p->maxt == ASOF_NONE)
			continue;
		if (p->maxt > hi)
			hi = p->maxt;
		if (now - p->seen >= j->o.idle)
			continue;
		if (lo == ASOF_NONE || p->maxt < lo)
			lo = p->maxt;
		if (p->seen + j->o.idle < *idle_next)
			*idle_next = p->seen + j->o.idle;
	}
	return lo == ASOF_NONE ? hi : lo;
}

/* Recompute the effective watermark; true if it advanced. */
bool
asof_wm_update(ss_asof *j)
{
	int64_t now = j->rparts.n ? ss_time_mono() : 0;

	j->idle_next = INT64_MAX;
	if ((size_t)j->o.right_partitions > j->rparts.n && now - j->started < j->o.idle) {
		/* a partition not seen yet may be far behind the others */
		j->idle_next = j->started + j->o.idle;
		return false;
	}
	int64_t wm = sat_sub(lowest_live(j, &j->rparts, j->maxr, now, &j->idle_next), j->o.grace);
	if (wm == ASOF_NONE || (j->wm != ASOF_NONE && wm <= j->wm))
		return false;
	j->wm = wm;
	return true;
}

/* Is right record in late in its own partition? Then advance that partition. */
bool
asof_wm_right(ss_asof *j, const struct asof_in *in)
{
	int64_t *maxt = &j->maxr;

	if (in->has_env) {
		struct asof_part *p = asof_part_get(&j->rparts, in->env.topic, in->env.partition);
		p->seen = ss_time_mono();
		maxt = &p->maxt;
	}
	if (*maxt != ASOF_NONE && in->t < sat_sub(*maxt, j->o.grace))
		return true;
	if (in->t > *maxt) {
		*maxt = in->t;
		if (j->rparts.n == 0) /* the hot path of one watermark */
			j->wm = sat_sub(in->t, j->o.grace);
		else
			asof_wm_update(j);
	}
	return false;
}

/* Milliseconds until a partition turns idle (-1: no need to wake up for it). */
int
asof_wm_timeout(const ss_asof *j)
{
	if (j->rparts.n == 0 || j->idle_next == INT64_MAX || (j->heap.n == 0 && j->spilled == 0))
		return -1;
	int64_t left = j->idle_next - ss_time_mono();
	return left <= 0 ? 0 : (int)(left / 1000000 + 1);
}

void
asof_lw_update(ss_asof *j)
{
	int64_t idle_next = INT64_MAX;

	j->lw = lowest_live(j, &j->lparts, j->lw_bare, ss_time_mono(), &idle_next);
}

void
asof_lw_left(ss_asof *j, const struct asof_in *in)
{
	if (!in->has_env) {
		if (in->t <= j->lw_bare)
			return;
		j->lw_bare = in->t;
		if (j->lparts.n == 0) { /* the hot path of one left time */
			j->lw = in->t;
			return;
		}
	} else {
		struct asof_part *p = asof_part_get(&j->lparts, in->env.topic, in->env.partition);
		int64_t now = ss_time_mono();
		bool was_idle = now - p->seen >= j->o.idle;
		p->seen = now;
		if (in->t <= p->maxt && !was_idle)
			return; /* nothing changes */
		if (in->t > p->maxt)
			p->maxt = in->t;
	}
	asof_lw_update(j);
}
