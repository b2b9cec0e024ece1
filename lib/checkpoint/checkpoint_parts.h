/* checkpoint_parts: the topic-partitions of a stream ss-checkpoint reads (heartbeat: a
 * dependency's, pulse: the dependent stream's), kept in memory between commits, and the
 * stream's marker of theirs: the rule of lib/stream/partwm.h (the lowest newest time over the
 * partitions that hold it, every one the writer lists counting, also one that has
 * delivered nothing yet), read as a checkpoint reads it (ckparts_rule):
 *   - the partitions come from the input's writer (lib/stream/feed.h), or from a regular file
 *     read beforehand; one the writer does not list is heard from if read in this run,
 *     else done (known from the state file only: holds nothing);
 *   - caught up, revoked (a rebalance that gives it back must not move the marker, one
 *     that gave it to another member for good must not stall it; ss-asof's right
 *     watermark, which cannot answer without it, waits for it instead) and heard from
 *     all hold the marker until silent for --idle (wall clock), then not until they
 *     speak again;
 *   - the marker is unknown while a listed partition that holds it has delivered
 *     nothing; it is the largest event time of the stream when none holds it (all
 *     ended, or silent); unlike ss-asof's watermark it may go back.
 * Without a writer that tells, a partition is one heard from, and --partitions N makes
 * the stream wait (no marker decision) until N were heard from or --idle passed since
 * the start (the rule before partitions were told; checkpoint_filter.c says so on
 * standard error). The partitions and their memory are the struct ckparts' owner's. */
#ifndef SS_CHECKPOINT_PARTS_H
#define SS_CHECKPOINT_PARTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/envelope.h"
#include "stream/feed.h"
#include "stream/partwm.h"
#include "stream/tpindex.h"

/* The state column of the file is enum ss_partwm_state (NULL for heard), or: */
#define CKPART_UNWRITTEN (-2) /* no state written yet */

struct ckpart {
	struct ss_envelope env;   /* its offset: the last passed (restored or read), -1: none */
	struct ss_partwm_part wm; /* wm.maxt: its marker; wm.pos: its last record in this run */
	int written;              /* the state last written to the file, or CKPART_UNWRITTEN */
	bool moved;               /* a record since the last write */
	bool dirty;               /* something to write */
};

struct ckparts {
	struct ckpart *v;
	size_t n, cap;
	struct ss_tpindex index; /* where each partition is in v */
	struct ss_partwm_fold fold; /* the rule folded over them, kept up to date */
	size_t timed;            /* how many have a time, while timed_ok */
	bool timed_ok;
	int64_t idle;    /* ns of silence after which a heard or caught-up partition stops holding */
	int expect;      /* --partitions: without a writer that tells, wait for that many */
	int64_t started; /* monotonic */
	bool told;       /* the input's writer says which partitions it reads */
	bool dirty;
};

/* Monotonic time for seen and idle (coarse: a few ms are plenty for --idle). */
int64_t ckparts_now(void);
void ckparts_init(struct ckparts *s, int64_t idle, int expect);
void ckparts_free(struct ckparts *s);
/* The partition, added (unread, unlisted, seen now) if new, for the caller to change
 * (what was folded over the partitions is folded again when next asked for). */
struct ckpart *ckparts_get(struct ckparts *s, const char *topic, int32_t partition);
/* A record of env's partition with event time ts was read. */
void ckparts_note(struct ckparts *s, const struct ss_envelope *env, int64_t ts, int64_t now);
/* What the writer says now (n == 0: it says nothing, or there is none). */
void ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n);
/* How a checkpoint reads its partitions' states (see above): for those in memory, and
 * for the rows a heartbeat wrote (each with the --idle it was written with). */
struct ss_partwm_rule ckparts_rule(int64_t idle, bool told);
enum ss_partwm_state ckpart_state(const struct ckparts *s, const struct ckpart *p);
/* The stream's marker into *lo: false when it is unknown (a partition that holds it has
 * delivered nothing, or there is nothing at all). top: the largest event time of the
 * stream, or NULL for none. */
bool ckparts_low(struct ckparts *s, int64_t now, const int64_t *top, int64_t *lo);
/* How many partitions the stream waits for before its marker counts: those that hold it
 * without a record (told), or the --partitions not heard from yet (not told). */
int ckparts_waiting(struct ckparts *s, int64_t now);
/* Mark the partitions whose state changed since last written; true if any is dirty. */
bool ckparts_restate(struct ckparts *s);
#endif
