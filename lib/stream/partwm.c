/* partwm: see partwm.h for the rule. */
#include "stream/partwm.h"

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
