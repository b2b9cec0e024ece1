/* inspect_list: -L, the brokers and every partition's leader, replicas and watermarks. */
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

static int
cmp_broker(const void *a, const void *b)
{
	const rd_kafka_metadata_broker_t *x = *(const rd_kafka_metadata_broker_t *const *)a;
	const rd_kafka_metadata_broker_t *y = *(const rd_kafka_metadata_broker_t *const *)b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The brokers by id (free the array). */
static const rd_kafka_metadata_broker_t **
sorted_brokers(const rd_kafka_metadata_t *md)
{
	const rd_kafka_metadata_broker_t **v = ss_xmalloc(((size_t)md->broker_cnt + 1) * sizeof *v);

	for (int i = 0; i < md->broker_cnt; i++)
		v[i] = &md->brokers[i];
	qsort(v, (size_t)md->broker_cnt, sizeof *v, cmp_broker);
	return v;
}

static void
put_broker(ss_buf *b, const rd_kafka_metadata_broker_t *br)
{
	ss_buf_adds(b, "{\"id\":");
	ss_kafka_put_int(b, br->id);
	insp_put_name(b, "host");
	insp_put_string(b, br->host);
	insp_put_name(b, "port");
	ss_kafka_put_int(b, br->port);
	ss_buf_addc(b, '}');
}

static void
brokers_json(struct inspect *in, int32_t controller, const char *cluster)
{
	const rd_kafka_metadata_broker_t **v = sorted_brokers(in->md);
	ss_buf *b = &in->out;

	ss_buf_adds(b, "{\"brokers\":[");
	for (int i = 0; i < in->md->broker_cnt; i++) {
		if (i > 0)
			ss_buf_addc(b, ',');
		put_broker(b, v[i]);
	}
	ss_buf_adds(b, "]");
	insp_put_name(b, "controller");
	if (controller >= 0)
		ss_kafka_put_int(b, controller);
	else
		ss_buf_adds(b, "null");
	insp_put_name(b, "cluster");
	insp_put_string(b, cluster);
	ss_buf_adds(b, "}\n");
	free(v);
}

static void
brokers_table(struct inspect *in, int32_t controller, const char *cluster)
{
	static const char *const head[] = {"BROKER", "HOST", "PORT", "ROLE"};
	const rd_kafka_metadata_broker_t **v = sorted_brokers(in->md);
	ss_table *t = ss_table_new(4, head);

	for (int i = 0; i < in->md->broker_cnt; i++) {
		const char *row[] = {insp_cell_int(v[i]->id), v[i]->host, insp_cell_int(v[i]->port),
				     v[i]->id == controller ? "controller" : ""};
		ss_table_row(t, row);
	}
	if (cluster != NULL)
		printf("cluster %s\n", cluster);
	ss_table_print(t, stdout);
	ss_table_free(t);
	free(v);
}

static void
brokers(struct inspect *in)
{
	int32_t controller = rd_kafka_controllerid(in->rk, 0);
	char *cluster = rd_kafka_clusterid(in->rk, 0);

	if (in->o->table)
		brokers_table(in, controller, cluster);
	else
		brokers_json(in, controller, cluster);
	if (cluster != NULL)
		rd_kafka_mem_free(in->rk, cluster);
}

static void
put_ids(ss_buf *b, const int32_t *ids, int n)
{
	ss_buf_addc(b, '[');
	for (int i = 0; i < n; i++) {
		if (i > 0)
			ss_buf_addc(b, ',');
		ss_kafka_put_int(b, ids[i]);
	}
	ss_buf_addc(b, ']');
}

/* "1,2,3" for a table (a ring of 4). */
static const char *
cell_ids(const int32_t *ids, int n)
{
	static char ring[4][256];
	static int next;
	char *s = ring[next++ % 4];
	size_t len = 0;

	s[0] = '\0';
	for (int i = 0; i < n && len + 13 < sizeof ring[0]; i++)
		len += (size_t)snprintf(s + len, sizeof ring[0] - len, "%s%d", i > 0 ? "," : "", ids[i]);
	return s;
}

static void
partition_json(ss_buf *b, const rd_kafka_topic_partition_t *e, const rd_kafka_topic_partition_t *lo,
	       const rd_kafka_topic_partition_t *hi)
{
	const rd_kafka_metadata_partition_t *p = e->opaque;

	insp_put_start(b, e->topic, e->partition);
	insp_put_name(b, "leader");
	if (p->leader >= 0)
		ss_kafka_put_int(b, p->leader);
	else
		ss_buf_adds(b, "null");
	insp_put_name(b, "replicas");
	put_ids(b, p->replicas, p->replica_cnt);
	insp_put_name(b, "isr");
	put_ids(b, p->isrs, p->isr_cnt);
	insp_put_name(b, "low");
	insp_put_offset(b, lo);
	insp_put_name(b, "high");
	insp_put_offset(b, hi);
	insp_put_end(b, insp_first_error(p->err, insp_first_error(lo->err, hi->err)));
}

static void
partition_row(ss_table *t, const rd_kafka_topic_partition_t *e, const rd_kafka_topic_partition_t *lo,
	      const rd_kafka_topic_partition_t *hi)
{
	const rd_kafka_metadata_partition_t *p = e->opaque;
	const char *row[] = {e->topic, insp_cell_int(e->partition), p->leader >= 0 ? insp_cell_int(p->leader) : NULL,
			     cell_ids(p->replicas, p->replica_cnt), cell_ids(p->isrs, p->isr_cnt),
			     insp_cell_offset(lo), insp_cell_offset(hi),
			     insp_cell_error(insp_first_error(p->err, insp_first_error(lo->err, hi->err)))};

	ss_table_row(t, row);
}

int
ss_inspect_list(const struct ss_inspect_opts *o)
{
	static const char *const head[] = {"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "LOW", "HIGH", "ERROR"};
	struct inspect in;
	rd_kafka_topic_partition_list_t *lo, *hi;
	ss_table *t = NULL;

	insp_open_cluster(&in, o);
	lo = insp_list_offsets(&in, in.parts, RD_KAFKA_OFFSET_BEGINNING);
	hi = insp_list_offsets(&in, in.parts, RD_KAFKA_OFFSET_END);
	brokers(&in);
	if (o->table)
		t = ss_table_new(8, head);
	for (int i = 0; i < in.parts->cnt; i++) {
		if (t != NULL)
			partition_row(t, &in.parts->elems[i], &lo->elems[i], &hi->elems[i]);
		else
			partition_json(&in.out, &in.parts->elems[i], &lo->elems[i], &hi->elems[i]);
	}
	if (t != NULL) {
		putchar('\n');
		ss_table_print(t, stdout);
		ss_table_free(t);
	}
	rd_kafka_topic_partition_list_destroy(lo);
	rd_kafka_topic_partition_list_destroy(hi);
	return insp_close_cluster(&in);
}
