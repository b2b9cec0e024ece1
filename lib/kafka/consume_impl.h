/* consume_impl: what the files of the consumer (consume*.c) share inside lib/kafka/; nothing
 * outside lib/kafka/ includes it. consume.c (setup, main loop, seeks, progress) calls the
 * others; consume_group calls consume_start, consume_commit and consume_out; consume_out
 * calls consume_commit; everything calls consume_parts, which calls none of them. */
#ifndef SS_CONSUME_IMPL_H
#define SS_CONSUME_IMPL_H
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/progress.h"
#include "kafka/avro.h"
#include "kafka/consume.h"
#include "stream/feed.h"
#include "stream/outq.h"

struct part {
	int32_t id;
	bool assigned;
	bool done;             /* reached the -e snapshot or --until */
	bool paused;           /* paused in librdkafka (done or backpressure) */
	int64_t end;           /* -e snapshot (high watermark at start), or -1 */
	int64_t start;         /* where the current assignment started */
	int64_t next;          /* offset after the last record written */
	int64_t written;       /* offset of the last record written in this run, or -1 */
	int64_t committable;   /* offset after the last record that reached the output */
	int64_t committed;
};

struct topic {
	char *name;
	ss_buf prefix;         /* {"topic":"NAME","partition": */
	struct part *parts;
	int nparts;
};

struct mark {
	uint64_t pos;
	struct part *part;
	int64_t next;
};

struct stored {
	char *topic;
	int32_t partition;
	int64_t offset;
};

struct consumer {
	const struct ss_consume_opts *o;
	rd_kafka_t *rk;
	ss_outq *out;
	struct topic *topics;
	int ntopics;
	struct topic *last_topic;
	const rd_kafka_topic_t *last_rkt;
	struct mark *marks;    /* ring of marks (group mode) */
	size_t mhead, mlen, mcap;
	struct stored *stored; /* --offsets-from, as last read */
	size_t nstored;
	ss_feed_out *feed;     /* what the reader of our output is told beside it (feed.h) */
	bool assigned_once;    /* an assignment arrived (the end test needs one) */
	bool bp_paused;
	bool finished;
	int64_t nrecords;
	int64_t next_commit, next_seeks, next_progress;
	ss_progress *progress; /* the live line, or NULL */
	int json_warnings;
	ss_avro *key_avro, *value_avro; /* --key-format/--value-format avro, else NULL */
	int status;
};

/* consume_parts.c: topics and partitions */
struct topic *cons_find_topic(struct consumer *c, const char *name);
/* Partition id of t, added if new; NULL if id < 0. */
struct part *cons_get_part(struct topic *t, int32_t id);
struct part *cons_lookup(struct consumer *c, const char *topic, int32_t id);
/* Ends the run with err's exit code. */
void cons_die_kafka(rd_kafka_resp_err_t err, const char *what);
void cons_set_paused(struct consumer *c, const char *topic, struct part *p, bool pause);
void cons_check_finished(struct consumer *c);
void cons_feed_part(struct consumer *c, const struct topic *t, const struct part *p, enum ss_feed_pstate state);
void cons_mark_done(struct consumer *c, struct topic *t, struct part *p);

/* consume_start.c: start positions */
void cons_clear_stored(struct consumer *c);
void cons_load_stored(struct consumer *c);
bool cons_stored_offset(const struct consumer *c, const char *topic, int32_t partition, int64_t *offset);
rd_kafka_topic_partition_list_t *cons_list_offsets(struct consumer *c, const rd_kafka_topic_partition_list_t *l,
						   int64_t ts);
void cons_resolve_starts(struct consumer *c, rd_kafka_topic_partition_list_t *l);
void cons_settle_assignment(struct consumer *c, const rd_kafka_topic_partition_list_t *l);

/* consume_commit.c: commits (-G) */
void cons_push_mark(struct consumer *c, struct part *p, int64_t next);
void cons_commit(struct consumer *c, bool sync);

/* consume_out.c: output */
void cons_closed_output(struct consumer *c);
void cons_drain(struct consumer *c);
void cons_drain_all(struct consumer *c);
void cons_flow_control(struct consumer *c);
void cons_handle_message(struct consumer *c, const rd_kafka_message_t *m);

/* consume_group.c: rebalances (librdkafka's rebalance callback, opaque the consumer) */
void cons_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *l, void *opaque);
#endif
