/* checkpoint_parts: the topic-partitions of a stream ss-checkpoint reads (heartbeat: a
 * dependency's, pulse: the dependent stream's), kept in memory between commits, and the
 * rule that makes the stream's marker of theirs.
 *
 * Kafka orders records within a partition, not across partitions, and a consumer may
 * deliver one partition's whole backlog before the next partition's first record. So a
 * stream is only as far as its slowest partition, and every partition counts, also one
 * that has delivered nothing yet. The partitions come from the input's writer
 * (lib/feed.h: ss-consume says which partitions it reads, which ended, which caught up
 * with their log), or from a regular file read beforehand. With a writer that tells, a
 * partition of the stream:
 *   - done: the writer says it ended and its last record was read, or the writer does
 *     not read it (one known from the state file only): holds nothing;
 *   - caught up: the writer says it caught up with its log and its last record was
 *     read: holds the marker until silent for --idle (wall clock), then not until it
 *     speaks again;
 *   - revoked: the writer says a rebalance took it away and its last record was read:
 *     the same (a rebalance that gives it back must not move the marker, one that gave
 *     it to another member for good must not stall it; ss-asof's right watermark, which
 *     cannot answer without it, waits for it instead);
 *   - reading: anything else; holds the marker, at its newest event time, or, without
 *     one (nothing from it yet), holds it entirely: the marker is unknown.
 * The marker is the lowest newest time over the partitions that hold it, and the largest
 * event time of the stream when none does (all ended, or silent).
 * Without a writer that tells, a partition is one heard from: it holds while heard from
 * within --idle, and --partitions N makes the stream wait (no marker decision) until N
 * were heard from or --idle passed since the start (the rule before partitions were
 * told; cmd/ss-checkpoint.c says so on standard error). */
#ifndef SS_CHECKPOINT_PARTS_H
#define SS_CHECKPOINT_PARTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envelope.h"
#include "feed.h"

/* Also the state column of the file (NULL for heard). */
enum ckpart_state {
	CKPART_HEARD = -1,    /* no writer that tells: holds while heard from within --idle */
	CKPART_READING = 0,   /* holds */
	CKPART_CAUGHT_UP = 1, /* holds until silent for --idle */
	CKPART_DONE = 2,      /* holds nothing */
	CKPART_REVOKED = 3,   /* holds until silent for --idle */
};
#define CKPART_UNWRITTEN (-2) /* no state written yet */

struct ckpart {
	struct ss_envelope env; /* its offset: the last passed (restored or read), -1 for none */
	int64_t marker;         /* its newest event time, when has_marker */
	int64_t seen;           /* monotonic: its last record, or when restored or listed */
	int64_t pos;            /* offset of its last record read in this run, -1 for none */
	int64_t feed_last;      /* the writer's word (feed) is as of this offset */
	int feed;               /* enum ss_feed_pstate as the writer says; -1: not listed */
	int written;            /* the state last written to the file, or CKPART_UNWRITTEN */
	bool has_marker;
	bool moved;             /* a record since the last write */
	bool dirty;             /* something to write */
};

struct ckparts {
	struct ckpart *v;
	size_t n, cap, last;
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
/* The partition, added (unread, unlisted, seen now) if new. */
struct ckpart *ckparts_get(struct ckparts *s, const char *topic, int32_t partition);
/* A record of env's partition with event time ts was read. */
void ckparts_note(struct ckparts *s, const struct ss_envelope *env, int64_t ts, int64_t now);
/* What the writer says now (n == 0: it says nothing, or there is none). */
void ckparts_feed(struct ckparts *s, const struct ss_feed_part *parts, size_t n);
enum ckpart_state ckpart_state(const struct ckparts *s, const struct ckpart *p);
/* The stream's marker into *lo: false when it is unknown (a partition that holds it has
 * delivered nothing, or there is nothing at all). top: the largest event time of the
 * stream, or NULL for none. */
bool ckparts_low(const struct ckparts *s, int64_t now, const int64_t *top, int64_t *lo);
/* How many partitions the stream waits for before its marker counts: those that hold it
 * without a record (told), or the --partitions not heard from yet (not told). */
int ckparts_waiting(const struct ckparts *s, int64_t now);
/* Mark the partitions whose state changed since last written; true if any is dirty. */
bool ckparts_restate(struct ckparts *s);
#endif
