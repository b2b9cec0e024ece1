/* inspect_impl: what inspect.c (setup, output cells, --offsets-at), inspect_list.c (-L)
 * and inspect_lag.c (--lag) share inside lib/kafka/; nothing outside lib/kafka/ includes
 * it. inspect_list.c and inspect_lag.c call inspect.c, never the other way. */
#ifndef SS_INSPECT_IMPL_H
#define SS_INSPECT_IMPL_H
#include <librdkafka/rdkafka.h>
#include <stdint.h>

#include "base/buf.h"
#include "kafka/inspect.h"

struct inspect {
	const struct ss_inspect_opts *o;
	rd_kafka_t *rk;
	const rd_kafka_metadata_t *md;
	/* the partitions asked about, sorted; opaque: their rd_kafka_metadata_partition_t */
	rd_kafka_topic_partition_list_t *parts;
	ss_buf out; /* NDJSON, written out at the end */
};

/* A group-less consumer, the metadata, the partitions asked about. */
void insp_open_cluster(struct inspect *in, const struct ss_inspect_opts *o);
/* Write out what was collected; the exit status. */
int insp_close_cluster(struct inspect *in);
/* The offsets of l's partitions at ts (ss_kafka_offsets_at). An error of one partition
 * stays in its element: a listing shows the other partitions. */
rd_kafka_topic_partition_list_t *insp_list_offsets(struct inspect *in, const rd_kafka_topic_partition_list_t *l,
						   int64_t ts);

/* JSON */
void insp_put_string(ss_buf *b, const char *s);
/* ,"name": */
void insp_put_name(ss_buf *b, const char *name);
/* An offset, or null for none (a logical offset, or a partition's error). */
void insp_put_offset(ss_buf *b, const rd_kafka_topic_partition_t *e);
void insp_put_start(ss_buf *b, const char *topic, int32_t partition);
/* ,"error":"..." for a partition's error, and the line's end. */
void insp_put_end(ss_buf *b, rd_kafka_resp_err_t err);

/* Small strings for table cells, in a ring: valid until 16 more are made. */
const char *insp_cell_int(int64_t v);
const char *insp_cell_offset(const rd_kafka_topic_partition_t *e);
const char *insp_cell_error(rd_kafka_resp_err_t err);
rd_kafka_resp_err_t insp_first_error(rd_kafka_resp_err_t a, rd_kafka_resp_err_t b);
#endif
