/* feed: what the writer of a pipe tells its reader on the same host, beside the data.
 *
 * A consumer of a Kafka topic knows what the records alone cannot say: which partitions
 * it reads (also those that have delivered nothing yet), which of them ended (-e, --until)
 * or have caught up with their log, and how the consumer itself ended (read all it was
 * asked to, or failed: a process substitution hides its exit status). A join needs all
 * three to be exact. The data stays pure NDJSON: the writer keeps this in a small file
 * named after the pipe (its device and inode, which both ends of a pipe share), in
 * $SS_FEED_DIR, or /dev/shm/ss-feed-UID, or $TMPDIR/ss-feed-UID; a reader finds it by
 * the pipe it reads. A reader whose writer is no ss tool, or runs on another host,
 * finds nothing and says so where it matters.
 *
 * The file is rewritten whole (under a temporary name, then renamed). Each partition's
 * state is stated for the offset of the last record written of it: a reader that has
 * not seen that record yet must not take the state for a fact about what it has. The
 * writer's handle, the reader's handle and their memory are their owners'. */
#ifndef SS_FEED_H
#define SS_FEED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ss_feed_pstate {
	SS_FEED_BEHIND,    /* more to read: the log goes on past what was written */
	SS_FEED_CAUGHT_UP, /* everything in the log when last fetched was written */
	SS_FEED_ENDED,     /* nothing more in this run (the end asked for was reached) */
	SS_FEED_REVOKED,   /* no longer read by this writer (a group rebalance) */
};

enum ss_feed_state {
	SS_FEED_RUNNING,
	SS_FEED_FINISHED, /* the writer read all it was asked to and wrote it out */
	SS_FEED_FAILED,   /* it stopped early: exit status given (a killed writer: 0) */
};

struct ss_feed_part {
	char topic[256];
	int32_t partition;
	int64_t last; /* offset of the last record written of it, -1 for none yet */
	enum ss_feed_pstate state;
};

/* The writer's side. */
typedef struct ss_feed_out ss_feed_out;
/* Start telling the reader of fd about it; NULL when fd is not a pipe or FIFO. */
ss_feed_out *ss_feed_publish(int fd, const char *writer);
/* Set a partition's state (added if new); written out by the next ss_feed_flush. */
void ss_feed_set(ss_feed_out *f, const char *topic, int32_t partition, int64_t last,
		 enum ss_feed_pstate state);
/* Write the file if anything changed: at most every 100 ms unless now. */
void ss_feed_flush(ss_feed_out *f, bool now);
/* The writer ends: finished (status 0) or failed with that exit status. Write it before
 * the pipe closes, so that the reader sees it at the end of its input. Frees f; the file
 * stays for the reader, who removes it. */
void ss_feed_end(ss_feed_out *f, int status);
/* Copy a reader's view, as a filter passing records through does (ss-checkpoint). */
void ss_feed_relay(ss_feed_out *f, const struct ss_feed_part *parts, size_t n);

/* The reader's side. */
typedef struct ss_feed_in ss_feed_in;
/* The feed of the pipe or FIFO fd, or NULL when fd is neither. The file may not exist
 * (yet): see ss_feed_refresh. */
ss_feed_in *ss_feed_find(int fd);
/* Read the file again if it changed, at most every 50 ms unless now. True when it was
 * read again (what it says may have changed). */
bool ss_feed_refresh(ss_feed_in *f, bool now);
/* Is the writer known to tell (its file is there and belongs to this pipe)? */
bool ss_feed_known(const ss_feed_in *f);
/* The partitions as last read: valid until the next refresh. */
const struct ss_feed_part *ss_feed_parts(const ss_feed_in *f, size_t *n);
/* How the writer ended, asked after the end of its input (refresh first): finished,
 * or failed with *status (0: killed, it could not say); SS_FEED_RUNNING when the
 * writer is not known. */
enum ss_feed_state ss_feed_state(const ss_feed_in *f, int *status);
/* Forget the feed; with consumed, the input was read to its end: remove the file. */
void ss_feed_close(ss_feed_in *f, bool consumed);
#endif
