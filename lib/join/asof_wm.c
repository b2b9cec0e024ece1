/* The right watermark and the left time, partition-aware.
 *
 * Kafka orders records within a partition, not across partitions, and a consumer may
 * deliver one partition's whole backlog before the next partition's first record. So
 * the right watermark (every left record whose answer it has passed is final) is the
 * lowest newest time over every partition the right input has, not only those heard
 * from so far: a partition that has delivered nothing holds it back entirely. The
 * partitions come from the right input's writer (lib/stream/feed.h: ss-consume tells its
 * reader which partitions it reads, which ended, which caught up with their log). A
 * partition that ended no longer holds it back once its last record is read; one that
 * caught up with its log and has been silent for --idle neither, until it speaks again.
 * Without a writer that tells, enveloped records cannot be known to be all there until
 * the right input ends (or --right-partitions N of them have spoken). Records without an
 * envelope are one ordered stream (j->maxr). The watermark never goes back: a right
 * record older than it is late, as is one older than its own partition's newest time
 * (minus --grace). The rule over the partitions is lib/stream/partwm.h's, read as a join must
 * (right_rule).
 *
 * The left time that bounds right history (only with --retain) is the minimum over the
 * left partitions heard from, ignoring those silent for --idle. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"

static int64_t
sat_sub(int64_t a, int64_t b)
{
	if (a == ASOF_NONE)
		return ASOF_NONE;
	return a < INT64_MIN + b ? INT64_MIN + 1 : a - b;
}

static bool
is_part(const void *owner, size_t at, const char *topic, int32_t partition)
{
	const struct asof_part *p = &((const struct asof_parts *)owner)->v[at];

	return p->partition == partition && strcmp(p->topic, topic) == 0;
}

/* The partition, added if new; what the fold over them holds is still true. */
static struct asof_part *
part(struct asof_parts *ps, const char *topic, int32_t partition)
{
	size_t at = ss_tpindex_find(&ps->index, topic, partition, is_part, ps);

	if (at != SIZE_MAX)
		return &ps->v[at];
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->v = ss_xrealloc(ps->v, ps->cap * sizeof *ps->v);
	}
	struct asof_part *p = &ps->v[ps->n];
	*p = (struct asof_part){.partition = partition, .wm = {.maxt = ASOF_NONE, .seen = ss_time_mono(),
				.pos = -1, .feed = -1, .feed_last = -1}};
	strcpy(p->topic, topic);
	ss_tpindex_add(&ps->index, topic, partition, ps->n++);
	return p;
}

struct asof_part *
asof_part_get(struct asof_parts *ps, const char *topic, int32_t partition)
{
	struct asof_part *p = part(ps, topic, partition);

	ss_partwm_fold_drop(&ps->fold); /* the caller may change it */
	return p;
}

void
asof_parts_free(struct asof_parts *ps)
{
	free(ps->v);
	ss_tpindex_free(&ps->index);
	ss_partwm_fold_free(&ps->fold);
}

/* The partitions' struct ss_partwm_part, for their fold. */
#define PARTS_WM(ps) ((const char *)(ps)->v + offsetof(struct asof_part, wm)), sizeof(struct asof_part)

/* A record of partition p (of ps, under rule r) was read: its time (or ASOF_NONE for
 * none to take), its offset and when, and the fold follows. */
static void
part_read(struct asof_parts *ps, const struct ss_partwm_rule *r, struct asof_part *p, int64_t t,
	  int64_t offset, int64_t now)
{
	struct ss_partwm_low before = ss_partwm_share(r, &p->wm, now);

	p->wm.seen = now;
	if (offset > p->wm.pos)
		p->wm.pos = offset;
	if (t != ASOF_NONE && (p->wm.maxt == ASOF_NONE || t > p->wm.maxt))
		p->wm.maxt = t;
	ss_partwm_fold_move(&ps->fold, r, PARTS_WM(ps), (size_t)(p - ps->v), &before, now);
}

/* How a join reads the right partitions' states (partwm.h): it cannot answer without a
 * revoked partition, nor without one the writer does not list (restored from the
 * state, or not listed yet); without a writer that tells, one heard from may turn idle
 * only with --right-partitions. A writer that has no partitions yet (before its
 * assignment) tells nothing. */
static struct ss_partwm_rule
right_rule(const asof_join *j)
{
	bool told = (ss_feed_known(j->cx->rfeed) && j->feed_parts > 0) || j->partition >= 0;

	return (struct ss_partwm_rule){.idle = j->o.idle, .told = told,
				       .heard_idles = j->o.right_partitions > 0, .unlisted_reads = true};
}

/* The left partitions: each holds the left time until silent for --idle (a writer's
 * word about them is not taken). */
static struct ss_partwm_rule
left_rule(const asof_join *j)
{
	return (struct ss_partwm_rule){.idle = j->o.idle, .heard_idles = true};
}

/* Does the partition belong to this join's right side? */
static bool
right_part(const asof_join *j, const struct ss_feed_part *fp)
{
	if (j->o.right_topic != NULL && strcmp(fp->topic, j->o.right_topic) != 0)
		return false; /* one input: the left topic's partitions are not ours */
	return j->partition < 0 || fp->partition == j->partition;
}

void
asof_wm_feed(asof_join *j)
{
	size_t n;
	const struct ss_feed_part *fp = ss_feed_parts(j->cx->rfeed, &n);

	j->feed_parts = 0;
	for (size_t i = 0; i < n; i++) {
		if (!right_part(j, &fp[i]))
			continue;
		struct asof_part *p = asof_part_get(&j->rparts, fp[i].topic, fp[i].partition);
		p->wm.feed = (int)fp[i].state;
		p->wm.feed_last = fp[i].last;
		j->feed_parts++;
	}
	j->feed_synced = j->cx->feed_gen;
}

void
asof_wm_seen(asof_join *j, bool left, const struct ss_envelope *env)
{
	struct asof_parts *ps = left ? &j->lparts : &j->rparts;
	struct ss_partwm_rule r = left ? left_rule(j) : right_rule(j);

	part_read(ps, &r, part(ps, env->topic, env->partition), ASOF_NONE, env->offset, ss_time_mono());
}

/* Without a writer that tells the partitions: have enough of them spoken? */
static bool
enough_heard(const asof_join *j, int64_t now)
{
	if (j->o.right_partitions == 0)
		return false; /* only the end of the right input tells */
	return j->rparts.n >= (size_t)j->o.right_partitions || now - j->started >= j->o.idle;
}

bool
asof_wm_blind(const asof_join *j)
{
	return j->rparts.n > 0 && (!ss_feed_known(j->cx->rfeed) || j->feed_parts == 0) &&
	       j->o.right_partitions == 0 && j->partition < 0;
}

/* Has the right input had no record at all (this run or in the state), where that is
 * an error? Then its writer's word that every partition ended releases nothing: the left
 * records wait for the end of the input, which fails the run (asof_check_right_empty)
 * rather than answering them with null first. */
static bool
right_none(const asof_join *j)
{
	return !j->cx->right_seen && !j->cx->had_history && !j->o.allow_empty_right;
}

/* The lowest newest right time over the partitions that can still deliver a record
 * that is not late; INT64_MAX when none can; ASOF_NONE when nothing is final yet.
 * Sets j->idle_next to when a partition turns idle. */
static int64_t
right_low(asof_join *j, int64_t now)
{
	struct ss_partwm_rule r = right_rule(j);
	struct ss_partwm_low l = ss_partwm_fold_get(&j->rparts.fold, &r, PARTS_WM(&j->rparts), j->rparts.n, now);

	j->idle_next = l.idle_next;
	if (j->maxr != ASOF_NONE && j->maxr < l.lo)
		l.lo = j->maxr; /* records without an envelope: one more ordered stream */
	if ((j->maxr == ASOF_NONE && j->rparts.n == 0) || l.timeless > 0 ||
	    (j->rparts.n > 0 && !r.told && !enough_heard(j, now)))
		return ASOF_NONE;
	if (l.lo == INT64_MAX && l.idle_hi != ASOF_NONE)
		return l.idle_hi; /* only idle ones: no further than they went */
	if (l.lo == INT64_MAX && right_none(j))
		return ASOF_NONE; /* every partition ended empty: the input's end says if that is an error */
	return l.lo;
}

/* Recompute the effective watermark; true if it advanced. */
bool
asof_wm_update(asof_join *j)
{
	int64_t lo = right_low(j, ss_time_mono());

	if (lo == ASOF_NONE)
		return false;
	int64_t wm = lo == INT64_MAX ? INT64_MAX : sat_sub(lo, j->o.grace);
	if (j->wm != ASOF_NONE && wm <= j->wm)
		return false;
	j->wm = wm;
	return true;
}

void
asof_wm_promise(asof_join *j, int64_t t)
{
	if (j->wm == ASOF_NONE || t > j->wm)
		j->wm = t;
}

/* Is the right record late: older than its own partition's newest time (minus
 * --grace), or than the watermark released (its partition was not waited for)?
 * If not, advance its partition and the watermark. */
bool
asof_wm_right(asof_join *j, const struct asof_in *in)
{
	struct asof_part *p = NULL;

	j->cx->right_seen = true;
	if (in->has_env) {
		if (j->rparts.n == 0 && j->partition < 0) { /* the first: what are the others? */
			if (ss_feed_refresh(j->cx->rfeed, true))
				j->cx->feed_gen++;
			asof_wm_feed(j);
		}
		p = part(&j->rparts, in->env.topic, in->env.partition);
	}
	int64_t maxt = p != NULL ? p->wm.maxt : j->maxr;
	/* (a whole right file: nothing is late, its times are kept for the state, and its
	 * end releases all) */
	bool late = !j->cx->right_whole && ((maxt != ASOF_NONE && in->t < sat_sub(maxt, j->o.grace)) ||
					    (j->wm != ASOF_NONE && in->t < j->wm));
	int64_t take = !late && (maxt == ASOF_NONE || in->t > maxt) ? in->t : ASOF_NONE;
	if (p != NULL) { /* read, late or not: its partition went on */
		struct ss_partwm_rule r = right_rule(j);
		part_read(&j->rparts, &r, p, take, in->env.offset, ss_time_mono());
	} else if (take != ASOF_NONE) {
		j->maxr = take;
	}
	if (take == ASOF_NONE || j->cx->right_whole)
		return late;
	if (j->rparts.n == 0) /* the hot path of one ordered stream */
		j->wm = sat_sub(in->t, j->o.grace);
	else
		asof_wm_update(j);
	return false;
}

/* Milliseconds until the watermark may move without a record (a partition turns idle,
 * the writer may have said more): -1 when there is no need to wake up. */
int
asof_wm_timeout(const asof_join *j)
{
	if (j->heap.n == 0 && j->spilled == 0)
		return -1;
	int t = j->cx->rfeed != NULL ? 100 : -1;
	if (j->rparts.n == 0 || j->idle_next == INT64_MAX)
		return t;
	int64_t left = j->idle_next - ss_time_mono();
	int idle = left <= 0 ? 0 : (int)(left / 1000000 + 1);
	return t < 0 || idle < t ? idle : t;
}

/* The left time: the lowest newest time over the left partitions not silent for --idle
 * (and of records without an envelope); when all are silent, the highest they got to. */
void
asof_lw_update(asof_join *j)
{
	struct ss_partwm_rule r = left_rule(j);
	struct ss_partwm_low l = ss_partwm_fold_get(&j->lparts.fold, &r, PARTS_WM(&j->lparts), j->lparts.n,
						    ss_time_mono());
	int64_t lo = j->lw_bare;

	if (l.held > 0 && (lo == ASOF_NONE || l.lo < lo))
		lo = l.lo;
	j->lw = lo != ASOF_NONE ? lo : l.idle_hi;
}

void
asof_lw_left(asof_join *j, const struct asof_in *in)
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
		struct asof_part *p = part(&j->lparts, in->env.topic, in->env.partition);
		struct ss_partwm_rule r = left_rule(j);
		int64_t now = ss_time_mono();
		bool was_idle = now - p->wm.seen >= j->o.idle, rises = in->t > p->wm.maxt;
		part_read(&j->lparts, &r, p, in->t, in->env.offset, now);
		if (!rises && !was_idle)
			return; /* nothing changes */
	}
	asof_lw_update(j);
}
