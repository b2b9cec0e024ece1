/* The right watermark, partition-aware. Records without an envelope advance one
 * watermark (j->maxr), as they always did. Records with an envelope advance one per
 * topic-partition: a topic's partitions arrive interleaved at different speeds, so the
 * join's watermark is the minimum over the partitions seen (and over j->maxr if such
 * records came too), ignoring partitions silent for longer than --idle (wall clock)
 * until they speak again. The watermark never goes back: results released are final. */
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
asof_wm_part(ss_asof *j, const char *topic, int32_t partition)
{
	struct asof_part *p = j->parts;

	/* consecutive records often come from the same partition */
	if (j->last_part < j->nparts) {
		p = &j->parts[j->last_part];
		if (p->partition == partition && strcmp(p->topic, topic) == 0)
			return p;
	}
	for (size_t i = 0; i < j->nparts; i++) {
		p = &j->parts[i];
		if (p->partition == partition && strcmp(p->topic, topic) == 0) {
			j->last_part = i;
			return p;
		}
	}
	if (j->nparts == j->capparts) {
		j->capparts = j->capparts ? 2 * j->capparts : 16;
		j->parts = realloc(j->parts, j->capparts * sizeof *j->parts);
		if (j->parts == NULL)
			ss_diag_die(SS_EXIT_DATA, "out of memory");
	}
	p = &j->parts[j->nparts];
	*p = (struct asof_part){.partition = partition, .maxt = ASOF_NONE, .seen = ss_time_mono()};
	strcpy(p->topic, topic);
	j->last_part = j->nparts++;
	return p;
}

/* Recompute the effective watermark; true if it advanced. */
bool
asof_wm_update(ss_asof *j)
{
	int64_t lo = j->maxr, hi = j->maxr;
	int64_t now = j->nparts ? ss_time_mono() : 0;

	j->idle_next = INT64_MAX;
	if ((size_t)j->o.right_partitions > j->nparts && now - j->started < j->o.idle) {
		/* a partition not seen yet may be far behind the others */
		j->idle_next = j->started + j->o.idle;
		return false;
	}
	for (size_t i = 0; i < j->nparts; i++) {
		const struct asof_part *p = &j->parts[i];
		if (p->maxt == ASOF_NONE)
			continue;
		if (p->maxt > hi)
			hi = p->maxt;
		if (now - p->seen >= j->o.idle)
			continue;
		if (lo == ASOF_NONE || p->maxt < lo)
			lo = p->maxt;
		if (p->seen + j->o.idle < j->idle_next)
			j->idle_next = p->seen + j->o.idle;
	}
	if (lo == ASOF_NONE)
		lo = hi; /* every partition idle: none holds the others back */
	int64_t wm = sat_sub(lo, j->o.grace);
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
		struct asof_part *p = asof_wm_part(j, in->env.topic, in->env.partition);
		p->seen = ss_time_mono();
		maxt = &p->maxt;
	}
	if (*maxt != ASOF_NONE && in->t < sat_sub(*maxt, j->o.grace))
		return true;
	if (in->t > *maxt) {
		*maxt = in->t;
		if (j->nparts == 0) /* the hot path of one watermark */
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
	if (j->nparts == 0 || j->idle_next == INT64_MAX || (j->heap.n == 0 && j->spilled == 0))
		return -1;
	int64_t left = j->idle_next - ss_time_mono();
	return left <= 0 ? 0 : (int)(left / 1000000 + 1);
}
