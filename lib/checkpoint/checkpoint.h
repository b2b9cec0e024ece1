/* checkpoint: Slipstream's Checkpoint and Dependency as bookkeeping in a SQLite state
 * file shared by the processes of a pipeline (ss-checkpoint heartbeat/pulse/status,
 * ss-consume --checkpoint).
 *
 * Tables (created on demand; times are int64 ns since the epoch, UTC):
 *   ss_checkpoint(name, marker, down_marker, episode_start, episode_end)
 *     one row per checkpoint, written by pulse: the dependent marker (see below), the
 *     marker at which the current episode was detected (NULL when up), and the
 *     wall-clock start and end of the last episode.
 *   ss_checkpoint_dependency(checkpoint, name, marker, since, threshold, down, waiting)
 *     marker: the max event time of the dependency's records, written by heartbeat;
 *     since, threshold, down: written by pulse (since = the start of the dependent
 *     stream when the dependency was first counted, the stand-in for a heartbeat never
 *     sent); waiting, by heartbeat: the partitions it waits for (one its input's writer
 *     lists that has delivered nothing, or --partitions not heard from yet): while
 *     more than 0, its heartbeat is not known and pulse decides nothing on it.
 *   ss_checkpoint_dependency_partition(checkpoint, name, topic, partition, marker, seen,
 *     idle, state): per partition of a dependency whose records carry an envelope, its
 *     max event time, the wall-clock time of its last record, the heartbeat's --idle,
 *     and its state (checkpoint_parts.h: 0 reading, 1 caught up, 2 done, 3 revoked,
 *     NULL heard from without a writer that tells).
 *   ss_checkpoint_offset(checkpoint, topic, partition, offset, saved, marker, seen, idle,
 *     state) per partition of the dependent stream: the last offset pulse passed, the
 *     offset remembered at downtime, and as for a dependency's partitions.
 *   ss_checkpoint_event: events committed with their state change, not yet delivered.
 *   ss_checkpoint_episode(checkpoint, dependency, began, ended): per dependency down in
 *     an episode, its wall-clock start and end (NULL while open), written by pulse and
 *     kept for a day after it ends (status draws them).
 *
 * Markers of partitioned streams: a topic's partitions arrive interleaved at their own
 * speeds, and a consumer may deliver one's backlog whole before the next one's first
 * record, so a stream's marker (the dependent marker, a dependency's heartbeat) is the
 * lowest newest time over every partition its input's writer lists (lib/stream/feed.h), those
 * that delivered nothing yet included; see checkpoint_parts.h for which stop holding
 * it. Without a writer that tells: over the partitions heard from within --idle. The
 * max event time when none holds it (no envelopes, all ended, all idle). Unlike a
 * partition's, it may go back, when a slow partition speaks again.
 *   ss_seek_request: the seek requests pulse writes at a recovery (lib/db/seeks.h).
 *   ss_offsets: the last offset applied of each topic-partition heartbeat and pulse
 *   read, written in the transaction of the change it made (lib/db/offsets.h; man ss.7,
 *   Idempotence).
 *
 * Handles own their sqlite3 connection. Event JSON passed to callbacks is borrowed
 * (valid during the call). A database error exits through lib/db/statefile.h: 75 when the
 * database stays busy or cannot be opened for now, 1 otherwise. */
#ifndef SS_CHECKPOINT_H
#define SS_CHECKPOINT_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/sstime.h"
#include "stream/envelope.h"
#include "stream/feed.h"
#include "stream/ndjson.h"

/* A stream's partitions: idle: ns of wall clock after which a silent partition (heard
 * from, or caught up) stops holding the stream's marker back; expect: without a writer
 * that tells, no marker counts before that many partitions were heard from, or idle ns
 * passed since the start (0: none). */
struct ss_checkpoint_parts {
	int64_t idle;
	int expect;
};

/* heartbeat: a dependency's marker. Beats are kept in memory (max of the event times)
 * and written by commit; commit after the records are flushed downstream, so a pulse
 * never sees a heartbeat whose record the join has not been sent. Commit also between
 * records (every 100 ms or so): a partition that waited may have turned idle. */
typedef struct ss_checkpoint_hb ss_checkpoint_hb;
/* parts: copied; idle is stored with the partitions, for the pulse that reads them. */
ss_checkpoint_hb *ss_checkpoint_hb_open(const char *db_path, const char *checkpoint,
    const char *dependency, const struct ss_checkpoint_parts *parts);
/* What the input's writer says of its partitions now (lib/stream/feed.h), or the partitions of
 * a regular file read beforehand, each ended as of its last record there; n == 0 when
 * nothing says. Call before the first record, and again when it may have changed;
 * until the first call a restarted heartbeat leaves the partitions' states as they are. */
void ss_checkpoint_hb_parts(ss_checkpoint_hb *h, const struct ss_feed_part *parts, size_t n);
/* env may be NULL; with one, its offset is recorded in ss_offsets. */
void ss_checkpoint_hb_beat(ss_checkpoint_hb *h, int64_t ts, const struct ss_envelope *env);
void ss_checkpoint_hb_commit(ss_checkpoint_hb *h);
/* Commits and frees. */
void ss_checkpoint_hb_close(ss_checkpoint_hb *h);

/* pulse: the dependent stream's side. */
struct ss_checkpoint_dep {
	const char *name;
	int64_t threshold; /* ns */
};
/* kind is "downtime" or "recovery"; dependency is NULL for recovery. */
typedef void ss_checkpoint_event_fn(const char *kind, const char *dependency,
    const char *json, void *arg);
typedef struct ss_checkpoint_pulse ss_checkpoint_pulse;
/* deps and parts are copied. Resumes an episode in progress (the pulse starts paused)
 * and delivers events a crash kept from being delivered. */
ss_checkpoint_pulse *ss_checkpoint_pulse_open(const char *db_path, const char *checkpoint,
    const struct ss_checkpoint_dep *deps, int ndeps, const struct ss_checkpoint_parts *parts,
    ss_checkpoint_event_fn *on_event, void *arg);
/* As ss_checkpoint_hb_parts, for the dependent stream. */
void ss_checkpoint_pulse_parts(ss_checkpoint_pulse *p, const struct ss_feed_part *parts,
    size_t n);
/* A record that was passed on: advance the marker, note its offset (env may be NULL),
 * check every dependency. Returns true when this record started a downtime episode:
 * flush the output, then commit (which pauses and delivers the events). */
bool ss_checkpoint_pulse_record(ss_checkpoint_pulse *p, int64_t ts,
    const struct ss_envelope *env);
/* The same without a record, between records and at the end of the input: a partition
 * may have turned idle, or the writer said more (after ss_checkpoint_pulse_parts). */
bool ss_checkpoint_pulse_tick(ss_checkpoint_pulse *p);
/* Write the state (call after flushing the records it covers), then deliver events. */
void ss_checkpoint_pulse_commit(ss_checkpoint_pulse *p);
bool ss_checkpoint_pulse_paused(const ss_checkpoint_pulse *p);
/* While paused: read the heartbeats; on recovery write the seek requests, deliver the
 * recovery event and return true (running again). */
bool ss_checkpoint_pulse_poll(ss_checkpoint_pulse *p);
/* Commits and frees. */
void ss_checkpoint_pulse_close(ss_checkpoint_pulse *p);

/* status: each checkpoint (or only `checkpoint`, if not NULL) as one NDJSON line or as
 * a table. width: 0 for the plain table; a terminal's columns to add, under each
 * dependency, its downtime over the last day as a line of cells and how far behind it
 * is (none when the terminal is too narrow). Returns the number of checkpoints shown;
 * exits 1 if the file does not exist. */
int ss_checkpoint_status(const char *db_path, const char *checkpoint, bool json, int width,
    FILE *out);
/* The width of the terminal on stdout, for status: $COLUMNS, else what the terminal
 * says, else 80. */
int ss_checkpoint_terminal_width(void);

/* Run cmd with /bin/sh -c, SS_EVENT=json and the given SS_CHECKPOINT/SS_DEPENDENCY
 * (dependency may be NULL) in its environment, stdin from /dev/null, stdout to stderr
 * (stdout carries data). Waits; returns its exit status (128+N for a signal). */
int ss_checkpoint_run_hook(const char *cmd, const char *kind, const char *checkpoint,
    const char *dependency, const char *json);

/* The filters of ss-checkpoint heartbeat and pulse: records from standard input to
 * standard output, each with its event time, committed as they go; what the input's
 * writer says of its partitions is told on to the reader of the output. SIGINT and
 * SIGTERM stop them between records. They return the exit status (128+N after a
 * signal) and exit on an error; onerror is closed by them. */
struct ss_checkpoint_filter {
	const char *ts; /* --ts: a record's event time (jq) */
	enum ss_tsunit unit;
	struct ss_checkpoint_parts parts;
	struct ss_errpolicy onerror;
};
/* o with the defaults: --ts .timestamp, --ts-unit s, --idle of lib/stream/partwm.h,
 * --on-error fail. */
void ss_checkpoint_filter_init(struct ss_checkpoint_filter *o);
int ss_checkpoint_run_heartbeat(const char *db_path, const char *checkpoint,
    const char *dependency, struct ss_checkpoint_filter *o);
/* Where pulse's events go: appended to file (NULL: standard error), and to the hooks
 * (ss_checkpoint_run_hook; NULL: none). */
struct ss_checkpoint_events {
	const char *file, *on_downtime, *on_recovery;
};
/* deps: as for ss_checkpoint_pulse_open. */
int ss_checkpoint_run_pulse(const char *db_path, const char *checkpoint,
    const struct ss_checkpoint_dep *deps, int ndeps, struct ss_checkpoint_filter *o,
    const struct ss_checkpoint_events *ev);
#endif
