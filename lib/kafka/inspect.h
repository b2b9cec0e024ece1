/* inspect: what a person debugging a pipeline asks a cluster first, without reading a
 * record or joining a group: its brokers and partitions (ss-consume -L), how far a
 * consumer group is behind (ss-consume -G GROUP --lag), and the offset of each partition
 * for a time (ss-consume --offsets-at TIME). Answers are NDJSON lines on stdout, or
 * aligned tables (table.h) when the caller asks for them (stdout is a terminal).
 *
 * Nothing is subscribed, fetched or committed: the handle is a consumer without a
 * group; a group's committed offsets and members come from the admin API
 * (ListConsumerGroupOffsets, DescribeConsumerGroups), so a running member of the group
 * is never rebalanced. Topics are looked up in the metadata of every topic, so a name
 * that does not exist is reported, never auto-created.
 *
 * The caller owns the options and everything they point to; each call frees what it
 * allocated and returns the exit status (ss(7)): 0, 1 for an unknown topic or a group
 * without committed offsets, 75 when the brokers do not answer within the timeout. */
#ifndef SS_INSPECT_H
#define SS_INSPECT_H
#include <stdbool.h>
#include <stdint.h>
#include "kafka/kafka.h"

struct ss_inspect_opts {
	const struct ss_kopts *k;
	char *const *topics; /* the topics named, or none: every topic not starting "__" */
	int ntopics;
	const char *group;   /* ss_inspect_lag's group */
	int64_t time_ms;     /* ss_inspect_offsets_at's time, ms since the epoch */
	bool table;          /* aligned tables instead of NDJSON */
};

/* -L: a first line {"brokers":[{"id","host","port"}...],"controller","cluster"}, then one
 * line per partition: topic, partition, leader, replicas, isr, low, high. */
int ss_inspect_list(const struct ss_inspect_opts *o);
/* --lag: one line per partition the group has committed an offset for: topic,
 * partition, committed, high, lag, member ({"id","client_id","host"} of the member it is
 * assigned to, or null); then {"group","state","members","partitions","total_lag"}.
 * Where the brokers cannot describe groups (librdkafka's mock cluster), state and
 * members are null. */
int ss_inspect_lag(const struct ss_inspect_opts *o);
/* --offsets-at: one line per partition: topic, partition, time, offset (of the first
 * record at or after time; the high watermark where there is none). */
int ss_inspect_offsets_at(const struct ss_inspect_opts *o);
#endif
