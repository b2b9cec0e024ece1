/* inspect: the setup and output all three share, and --offsets-at (see inspect.h). */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/diag.h"
#include "kafka/inspect.h"
#include "kafka/inspect_impl.h"
#include "base/jscan.h"
#include "base/sstime.h"
#include "base/table.h"

/* Setup: a group-less consumer, the metadata, the partitions asked about */

static const rd_kafka_metadata_topic_t *
find_topic(const rd_kafka_metadata_t *md, const char *name)
{
	for (int i = 0; i < md->topic_cnt; i++)
		if (strcmp(md->topics[i].topic, name) == 0)
			return &md->topics[i];
	return NULL;
}

static void
add_topic(rd_kafka_topic_partition_list_t *l, const rd_kafka_metadata_topic_t *t)
{
	for (int i = 0; i < t->partition_cnt; i++)
		rd_kafka_topic_partition_list_add(l, t->topic, t->partitions[i].id)->opaque = &t->partitions[i];
}

static bool
named_before(const struct ss_inspect_opts *o, int i)
{
	for (int j = 0; j < i; j++)
		if (strcmp(o->topics[j], o->topics[i]) == 0)
			return true;
	return false;
}

static rd_kafka_topic_partition_list_t *
select_partitions(const struct inspect *in)
{
	const struct ss_inspect_opts *o = in->o;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);

	for (int i = 0; i < o->ntopics; i++) {
		const rd_kafka_metadata_topic_t *t = find_topic(in->md, o->topics[i]);
		if (t == NULL)
			ss_diag_die(SS_EXIT_DATA, "%s: no such topic on %s", o->topics[i],
				    ss_kopts_brokers(o->k));
		if (!named_before(o, i))
			add_topic(l, t);
	}
	for (int i = 0; o->ntopics == 0 && i < in->md->topic_cnt; i++)
		if (strncmp(in->md->topics[i].topic, "__", 2) != 0)
			add_topic(l, &in->md->topics[i]);
	rd_kafka_topic_partition_list_sort(l, NULL, NULL);
	return l;
}

void
insp_open_cluster(struct inspect *in, const struct ss_inspect_opts *o)
{
	static const char *const defaults[] = {"allow.auto.create.topics", "false", NULL};

	memset(in, 0, sizeof *in);
	in->o = o;
	in->rk = ss_kafka_new(RD_KAFKA_CONSUMER, ss_kafka_conf(o->k, defaults));
	in->md = ss_kafka_metadata_all(in->rk, o->k);
	in->parts = select_partitions(in);
}

/* Write out what was collected; the exit status. */
int
insp_close_cluster(struct inspect *in)
{
	int status = SS_EXIT_OK;

	if ((in->out.len > 0 && fwrite(in->out.data, 1, in->out.len, stdout) != in->out.len) ||
	    fflush(stdout) != 0)
		status = SS_EXIT_DATA;
	ss_buf_free(&in->out);
	rd_kafka_topic_partition_list_destroy(in->parts);
	rd_kafka_metadata_destroy(in->md);
	rd_kafka_destroy(in->rk);
	return status;
}

/* The offsets of l's partitions at ts (ss_kafka_offsets_at). An error of one partition
 * stays in its element: a listing shows the other partitions. */
rd_kafka_topic_partition_list_t *
insp_list_offsets(struct inspect *in, const rd_kafka_topic_partition_list_t *l, int64_t ts)
{
	rd_kafka_resp_err_t err;
	rd_kafka_topic_partition_list_t *q = ss_kafka_offsets_at(in->rk, l, ts, (int)in->o->k->timeout_ms, &err);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_diag_die(ss_kafka_exit_code(err), "cannot list offsets on %s: %s",
			    ss_kopts_brokers(in->o->k), rd_kafka_err2str(err));
	return q;
}

/* JSON and table cells */

void
insp_put_string(ss_buf *b, const char *s)
{
	if (s == NULL)
		ss_buf_adds(b, "null");
	else
		ss_jscan_quote(b, s, strlen(s));
}

/* ,"name": */
void
insp_put_name(ss_buf *b, const char *name)
{
	ss_buf_adds(b, ",\"");
	ss_buf_adds(b, name);
	ss_buf_adds(b, "\":");
}

/* An offset, or null for none (a logical offset, or a partition's error). */
void
insp_put_offset(ss_buf *b, const rd_kafka_topic_partition_t *e)
{
	if (e->err != RD_KAFKA_RESP_ERR_NO_ERROR || e->offset < 0)
		ss_buf_adds(b, "null");
	else
		ss_kafka_put_int(b, e->offset);
}

void
insp_put_start(ss_buf *b, const char *topic, int32_t partition)
{
	ss_buf_adds(b, "{\"topic\":");
	insp_put_string(b, topic);
	insp_put_name(b, "partition");
	ss_kafka_put_int(b, partition);
}

/* ,"error":"..." for a partition's error, and the line's end. */
void
insp_put_end(ss_buf *b, rd_kafka_resp_err_t err)
{
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		insp_put_name(b, "error");
		insp_put_string(b, rd_kafka_err2str(err));
	}
	ss_buf_adds(b, "}\n");
}

/* Small strings for table cells, in a ring: valid until 16 more are made. */
const char *
insp_cell_int(int64_t v)
{
	static char ring[16][24];
	static int next;
	char *s = ring[next++ % 16];

	snprintf(s, sizeof ring[0], "%lld", (long long)v);
	return s;
}

const char *
insp_cell_offset(const rd_kafka_topic_partition_t *e)
{
	return e->err != RD_KAFKA_RESP_ERR_NO_ERROR || e->offset < 0 ? NULL : insp_cell_int(e->offset);
}

const char *
insp_cell_error(rd_kafka_resp_err_t err)
{
	return err != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_err2str(err) : "";
}

rd_kafka_resp_err_t
insp_first_error(rd_kafka_resp_err_t a, rd_kafka_resp_err_t b)
{
	return a != RD_KAFKA_RESP_ERR_NO_ERROR ? a : b;
}

/* --offsets-at */

int
ss_inspect_offsets_at(const struct ss_inspect_opts *o)
{
	static const char *const head[] = {"TOPIC", "PARTITION", "TIME", "OFFSET", "ERROR"};
	struct inspect in;
	rd_kafka_topic_partition_list_t *at, *hi;
	ss_table *t = NULL;
	char when[64];

	insp_open_cluster(&in, o);
	at = insp_list_offsets(&in, in.parts, o->time_ms);
	hi = insp_list_offsets(&in, in.parts, RD_KAFKA_OFFSET_END);
	ss_time_format(o->time_ms * 1000000, when, sizeof when);
	if (o->table)
		t = ss_table_new(5, head);
	for (int i = 0; i < in.parts->cnt; i++) {
		rd_kafka_topic_partition_t *e = &at->elems[i];
		rd_kafka_resp_err_t err = insp_first_error(e->err, hi->elems[i].err);
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR && e->offset < 0)
			e->offset = hi->elems[i].offset; /* no record that late: where it would be */
		if (t != NULL) {
			const char *row[] = {e->topic, insp_cell_int(e->partition), when,
					     err ? NULL : insp_cell_offset(e), insp_cell_error(err)};
			ss_table_row(t, row);
			continue;
		}
		insp_put_start(&in.out, e->topic, e->partition);
		insp_put_name(&in.out, "time");
		ss_kafka_put_int(&in.out, o->time_ms);
		insp_put_name(&in.out, "offset");
		if (err)
			ss_buf_adds(&in.out, "null");
		else
			insp_put_offset(&in.out, e);
		insp_put_end(&in.out, err);
	}
	if (t != NULL) {
		ss_table_print(t, stdout);
		ss_table_free(t);
	}
	rd_kafka_topic_partition_list_destroy(at);
	rd_kafka_topic_partition_list_destroy(hi);
	return insp_close_cluster(&in);
}
