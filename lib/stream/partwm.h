/* partwm: the watermark of a partitioned stream, the one rule behind ss-asof's right
 * watermark (asof_wm.c) and ss-checkpoint's markers (checkpoint_parts.c, and the rows of
 * them pulse and status read, checkpoint.c).
 *
 * Kafka orders records within a partition, not across partitions, and a consumer may
 * deliver one partition's whole backlog before the next partition's first record. So a
 * stream is only as far as its slowest partition: its watermark is the lowest newest
 * event time over the partitions that still hold it back, also one that has delivered
 * nothing yet (then anything may still come: the watermark is unknown). Which do is
 * what the stream's writer says of them (lib/stream/feed.h), each word as of the offset of the
 * last record it wrote of the partition, so only once that record was read:
 *   - done: it ended (its last record read): holds nothing;
 *   - caught up with its log: holds until silent for idle, then not until it speaks;
 *   - revoked by a rebalance: the same, or holds as reading (the caller says);
 *   - heard: no writer that tells (or one that does not list it): holds, and stops
 *     holding after idle silence if the caller says so;
 *   - reading: anything else: holds.
 *
 * What differs between the two callers stays with them, said here once:
 *   - ss-checkpoint lets a revoked partition and one heard from turn idle; ss-asof waits
 *     for a revoked one (a join cannot answer without it) and lets one heard from turn
 *     idle only with --right-partitions (struct ss_partwm_rule);
 *   - told, a partition the writer does not list is reading for ss-asof; for
 *     ss-checkpoint heard if read in this run, else done (known from the state file);
 *   - without a writer that tells, a holder without a time makes ss-asof's watermark
 *     unknown and is skipped by ss-checkpoint (a row of a version without markers);
 *   - when none holds: ss-asof takes the highest of the idle ones (INT64_MAX when all
 *     ended: everything is final), ss-checkpoint the stream's largest event time;
 *   - ss-asof's watermark never goes back (and lags --grace behind); ss-checkpoint's
 *     marker may go back, when a silent partition speaks again.
 *
 * Ownership: the caller owns its partitions (a struct ss_partwm_part in each of its own)
 * and every struct here; nothing here allocates or reads a clock (now is the caller's
 * monotonic time, as seen is). */
#ifndef SS_PARTWM_H
#define SS_PARTWM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --idle of ss-asof and ss-checkpoint: 30s, a few Kafka session timeouts. */
#define SS_DEFAULT_IDLE (30 * INT64_C(1000000000))

#define SS_PARTWM_NONE INT64_MIN /* no event time yet */

/* Also ss-checkpoint's state column (checkpoint.h): keep the values. */
enum ss_partwm_state {
	SS_PARTWM_HEARD = -1,
	SS_PARTWM_READING = 0,
	SS_PARTWM_CAUGHT_UP = 1,
	SS_PARTWM_DONE = 2,
	SS_PARTWM_REVOKED = 3,
};

/* One partition's progress, as the rule needs it. */
struct ss_partwm_part {
	int64_t maxt;      /* newest event time read from it, SS_PARTWM_NONE for none */
	int64_t seen;      /* monotonic: its last record (or when listed or restored) */
	int64_t pos;       /* offset of its newest record read in this run, -1 for none */
	int64_t feed_last; /* the writer's word (feed) is as of this offset */
	int feed;          /* enum ss_feed_pstate as the writer says, -1: not listed */
};

/* How the caller reads the states (see above). */
struct ss_partwm_rule {
	int64_t idle;        /* ns of silence after which a partition that may stop holding does */
	bool told;           /* the writer lists the partitions */
	bool heard_idles;    /* a heard one may stop holding (else it holds, as reading) */
	bool revoked_idles;  /* a revoked one may stop holding (else it holds, as reading) */
	bool unlisted_reads; /* told: one the writer does not list is reading */
};

/* The rule over a stream's partitions: start from SS_PARTWM_LOW_INIT, add each one. */
struct ss_partwm_low {
	int64_t lo;        /* the lowest newest time over the holders that have one, or INT64_MAX */
	size_t held;       /* how many holders have one */
	size_t timeless;   /* holders without a record yet */
	int64_t idle_hi;   /* the highest newest time over those silent for idle, or NONE */
	int64_t idle_next; /* monotonic: when the next holder may stop holding, or INT64_MAX */
};
#define SS_PARTWM_LOW_INIT ((struct ss_partwm_low){ .lo = INT64_MAX, .idle_hi = SS_PARTWM_NONE, \
	.idle_next = INT64_MAX })

enum ss_partwm_state ss_partwm_state(const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p);
/* Fold the partition into l, as of now (monotonic, as its seen). */
void ss_partwm_low_add(struct ss_partwm_low *l, const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p, int64_t now);
/* The same for a partition whose state s was judged already, by another process that
 * stored it: ss-checkpoint's pulse and status read the rows a heartbeat wrote
 * (checkpoint.h), where the feed behind the state is not at hand. Their seen and now
 * are wall-clock time: any clock does, the same for both. */
void ss_partwm_low_add_state(struct ss_partwm_low *l, const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p, enum ss_partwm_state s, int64_t now);
/* Has the partition in state s stopped holding for idle silence as of now? (For
 * ss-checkpoint status, which shows it.) */
bool ss_partwm_idle(const struct ss_partwm_rule *r, const struct ss_partwm_part *p,
    enum ss_partwm_state s, int64_t now);

/* The rule folded over a stream's partitions, kept up to date record by record, so that
 * a record costs O(log n) and not a fold over n partitions (a topic of 10,000 of them
 * made that 20 times the cost of the rest). A record changes one partition: its share
 * (what it alone adds to the fold) moves out and its new one in; counts go down and up,
 * the lowest time is the top of a min-heap of the partitions that hold with one. All of
 * them are folded again when that cannot be exact (ss_partwm_fold_move says when), when
 * the rule changed, when the caller changed partitions otherwise (ss_partwm_fold_drop),
 * or once the time passes low.idle_next (a partition may have turned idle).
 * The caller owns the partitions: n of them, the i-th's struct ss_partwm_part at
 * base + i * stride (the array may move between calls; partitions are only appended,
 * and one appended is folded in by the next ss_partwm_fold_get);
 * the fold owns its heap (zeroed to start; ss_partwm_fold_free). */
struct ss_partwm_fold {
	struct ss_partwm_low low;  /* the fold, while ok */
	struct ss_partwm_rule rule; /* ... under this rule */
	size_t n;                  /* ... over this many partitions */
	bool ok;
	size_t *heap, nheap;       /* the holders with a time (their i), a min-heap by maxt */
	size_t *at, cap;           /* at[i]: where partition i is in heap, SIZE_MAX: not there */
};
/* The fold over the partitions as of now (again only if it must be). */
struct ss_partwm_low ss_partwm_fold_get(struct ss_partwm_fold *f, const struct ss_partwm_rule *r,
    const void *base, size_t stride, size_t n, int64_t now);
/* Partition p's share in the rule, alone, as of now: take it before a record changes
 * the partition, for ss_partwm_fold_move. */
struct ss_partwm_low ss_partwm_share(const struct ss_partwm_rule *r,
    const struct ss_partwm_part *p, int64_t now);
/* Partition i had share `before` and was changed since, by a record or otherwise: the
 * fold follows it (or is dropped, to be folded again). */
void ss_partwm_fold_move(struct ss_partwm_fold *f, const struct ss_partwm_rule *r,
    const void *base, size_t stride, size_t i, const struct ss_partwm_low *before, int64_t now);
/* Partitions changed in a way the caller does not follow: fold them all again. */
void ss_partwm_fold_drop(struct ss_partwm_fold *f);
void ss_partwm_fold_free(struct ss_partwm_fold *f);
#endif
