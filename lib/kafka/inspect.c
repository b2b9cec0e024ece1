/* inspect: cluster metadata, a group's lag and offsets for a time (see inspect.h). */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/diag.h"
#include "kafka/inspect.h"
#include "base/jscan.h"
#include "base/sstime.h"
#include "base/table.h"

struct inspect {
	const struct ss_inspect_opts *o;
	rd_kafka_t *rk;
	const rd_kafka_metadata_t *md;
	/* the partitions asked about, sorted; opaque: their rd_kafka_metadata_partition_t */
	rd_kafka_topic_partition_list_t *parts;
	ss_buf out; /* NDJSON, written out at the end */
};

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

static void
open_cluster(struct inspect *in, const struct ss_inspect_opts *o)
{
	static const char *const defaults[] = {"allow.auto.create.topics", "false", NULL};

	memset(in, 0, sizeof *in);
	in->o = o;
	in->rk = ss_kafka_new(RD_KAFKA_CONSUMER, ss_kafka_conf(o->k, defaults));
	in->md = ss_kafka_metadata_all(in->rk, o->k);
	in->parts = select_partitions(in);
}

/* Write out what was collected; the exit status. */
static int
close_cluster(struct inspect *in)
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
static rd_kafka_topic_partition_list_t *
list_offsets(struct inspect *in, const rd_kafka_topic_partition_list_t *l, int64_t ts)
{
	rd_kafka_resp_err_t err;
	rd_kafka_topic_partition_list_t *q = ss_kafka_offsets_at(in->rk, l, ts, (int)in->o->k->timeout_ms, &err);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_diag_die(ss_kafka_exit_code(err), "cannot list offsets on %s: %s",
			    ss_kopts_brokers(in->o->k), rd_kafka_err2str(err));
	return q;
}

/* JSON and table cells */

static void
put_string(ss_buf *b, const char *s)
{
	if (s == NULL)
		ss_buf_adds(b, "null");
	else
		ss_jscan_quote(b, s, strlen(s));
}

/* ,"name": */
static void
put_name(ss_buf *b, const char *name)
{
	ss_buf_adds(b, ",\"");
	ss_buf_adds(b, name);
	ss_buf_adds(b, "\":");
}

/* An offset, or null for none (a logical offset, or a partition's error). */
static void
put_offset(ss_buf *b, const rd_kafka_topic_partition_t *e)
{
	if (e->err != RD_KAFKA_RESP_ERR_NO_ERROR || e->offset < 0)
		ss_buf_adds(b, "null");
	else
		ss_kafka_put_int(b, e->offset);
}

static void
put_start(ss_buf *b, const char *topic, int32_t partition)
{
	ss_buf_adds(b, "{\"topic\":");
	put_string(b, topic);
	put_name(b, "partition");
	ss_kafka_put_int(b, partition);
}

/* ,"error":"..." for a partition's error, and the line's end. */
static void
put_end(ss_buf *b, rd_kafka_resp_err_t err)
{
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		put_name(b, "error");
		put_string(b, rd_kafka_err2str(err));
	}
	ss_buf_adds(b, "}\n");
}

/* Small strings for table cells, in a ring: valid until 16 more are made. */
static const char *
cell_int(int64_t v)
{
	static char ring[16][24];
	static int next;
	char *s = ring[next++ % 16];

	snprintf(s, sizeof ring[0], "%lld", (long long)v);
	return s;
}

static const char *
cell_offset(const rd_kafka_topic_partition_t *e)
{
	return e->err != RD_KAFKA_RESP_ERR_NO_ERROR || e->offset < 0 ? NULL : cell_int(e->offset);
}

static const char *
cell_error(rd_kafka_resp_err_t err)
{
	return err != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_err2str(err) : "";
}

static rd_kafka_resp_err_t
first_error(rd_kafka_resp_err_t a, rd_kafka_resp_err_t b)
{
	return a != RD_KAFKA_RESP_ERR_NO_ERROR ? a : b;
}

/* -L */

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
	put_name(b, "host");
	put_string(b, br->host);
	put_name(b, "port");
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
	put_name(b, "controller");
	if (controller >= 0)
		ss_kafka_put_int(b, controller);
	else
		ss_buf_adds(b, "null");
	put_name(b, "cluster");
	put_string(b, cluster);
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
		const char *row[] = {cell_int(v[i]->id), v[i]->host, cell_int(v[i]->port),
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

	put_start(b, e->topic, e->partition);
	put_name(b, "leader");
	if (p->leader >= 0)
		ss_kafka_put_int(b, p->leader);
	else
		ss_buf_adds(b, "null");
	put_name(b, "replicas");
	put_ids(b, p->replicas, p->replica_cnt);
	put_name(b, "isr");
	put_ids(b, p->isrs, p->isr_cnt);
	put_name(b, "low");
	put_offset(b, lo);
	put_name(b, "high");
	put_offset(b, hi);
	put_end(b, first_error(p->err, first_error(lo->err, hi->err)));
}

static void
partition_row(ss_table *t, const rd_kafka_topic_partition_t *e, const rd_kafka_topic_partition_t *lo,
	      const rd_kafka_topic_partition_t *hi)
{
	const rd_kafka_metadata_partition_t *p = e->opaque;
	const char *row[] = {e->topic, cell_int(e->partition), p->leader >= 0 ? cell_int(p->leader) : NULL,
			     cell_ids(p->replicas, p->replica_cnt), cell_ids(p->isrs, p->isr_cnt),
			     cell_offset(lo), cell_offset(hi),
			     cell_error(first_error(p->err, first_error(lo->err, hi->err)))};

	ss_table_row(t, row);
}

int
ss_inspect_list(const struct ss_inspect_opts *o)
{
	static const char *const head[] = {"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "LOW", "HIGH", "ERROR"};
	struct inspect in;
	rd_kafka_topic_partition_list_t *lo, *hi;
	ss_table *t = NULL;

	open_cluster(&in, o);
	lo = list_offsets(&in, in.parts, RD_KAFKA_OFFSET_BEGINNING);
	hi = list_offsets(&in, in.parts, RD_KAFKA_OFFSET_END);
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
	return close_cluster(&in);
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

	open_cluster(&in, o);
	at = list_offsets(&in, in.parts, o->time_ms);
	hi = list_offsets(&in, in.parts, RD_KAFKA_OFFSET_END);
	ss_time_format(o->time_ms * 1000000, when, sizeof when);
	if (o->table)
		t = ss_table_new(5, head);
	for (int i = 0; i < in.parts->cnt; i++) {
		rd_kafka_topic_partition_t *e = &at->elems[i];
		rd_kafka_resp_err_t err = first_error(e->err, hi->elems[i].err);
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR && e->offset < 0)
			e->offset = hi->elems[i].offset; /* no record that late: where it would be */
		if (t != NULL) {
			const char *row[] = {e->topic, cell_int(e->partition), when,
					     err ? NULL : cell_offset(e), cell_error(err)};
			ss_table_row(t, row);
			continue;
		}
		put_start(&in.out, e->topic, e->partition);
		put_name(&in.out, "time");
		ss_kafka_put_int(&in.out, o->time_ms);
		put_name(&in.out, "offset");
		if (err)
			ss_buf_adds(&in.out, "null");
		else
			put_offset(&in.out, e);
		put_end(&in.out, err);
	}
	if (t != NULL) {
		ss_table_print(t, stdout);
		ss_table_free(t);
	}
	rd_kafka_topic_partition_list_destroy(at);
	rd_kafka_topic_partition_list_destroy(hi);
	return close_cluster(&in);
}

/* --lag */

struct member {
	char *id, *client_id, *host;
	rd_kafka_topic_partition_list_t *parts; /* assigned to it */
};

struct group {
	bool described; /* false where the brokers cannot describe groups */
	char *state;
	struct member *members;
	size_t nmembers;
};

static rd_kafka_event_t *
admin_wait(struct inspect *in, rd_kafka_queue_t *q, const char *what)
{
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, (int)in->o->k->timeout_ms + 1000);
	rd_kafka_resp_err_t err = ev == NULL ? RD_KAFKA_RESP_ERR__TIMED_OUT : rd_kafka_event_error(ev);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_diag_die(ss_kafka_exit_code(err), "group %s: cannot %s on %s: %s", in->o->group, what,
			    ss_kopts_brokers(in->o->k), ev != NULL ? rd_kafka_event_error_string(ev) :
			    rd_kafka_err2str(err));
	return ev;
}

static rd_kafka_AdminOptions_t *
admin_options(struct inspect *in, rd_kafka_admin_op_t op)
{
	rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(in->rk, op);
	char err[256];

	rd_kafka_AdminOptions_set_request_timeout(ao, (int)in->o->k->timeout_ms, err, sizeof err);
	return ao;
}

static void
die_error(struct inspect *in, const rd_kafka_error_t *e, const char *what)
{
	if (e != NULL)
		ss_diag_die(ss_kafka_exit_code(rd_kafka_error_code(e)), "group %s: cannot %s: %s",
			    in->o->group, what, rd_kafka_error_string(e));
}

/* The committed offsets (ListConsumerGroupOffsets) of the partitions asked about, those
 * without one left out. The partitions are always named: librdkafka's mock cluster
 * answers nothing to "every partition". */
static rd_kafka_topic_partition_list_t *
committed_offsets(struct inspect *in)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(in->parts->cnt + 1);
	rd_kafka_queue_t *q;
	rd_kafka_ListConsumerGroupOffsets_t *req;
	rd_kafka_AdminOptions_t *ao;
	rd_kafka_event_t *ev;
	const rd_kafka_group_result_t **gr;
	const rd_kafka_topic_partition_list_t *got;
	size_t n;

	if (in->parts->cnt == 0)
		return l;
	q = rd_kafka_queue_new(in->rk);
	req = rd_kafka_ListConsumerGroupOffsets_new(in->o->group, in->parts);
	ao = admin_options(in, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
	rd_kafka_ListConsumerGroupOffsets(in->rk, &req, 1, ao, q);
	ev = admin_wait(in, q, "list committed offsets");
	gr = rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev), &n);
	if (n > 0) {
		die_error(in, rd_kafka_group_result_error(gr[0]), "list committed offsets");
		got = rd_kafka_group_result_partitions(gr[0]);
		for (int i = 0; got != NULL && i < got->cnt; i++)
			if (got->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && got->elems[i].offset >= 0)
				rd_kafka_topic_partition_list_add(l, got->elems[i].topic, got->elems[i].partition)
				    ->offset = got->elems[i].offset;
	}
	rd_kafka_event_destroy(ev);
	rd_kafka_AdminOptions_destroy(ao);
	rd_kafka_ListConsumerGroupOffsets_destroy(req);
	rd_kafka_queue_destroy(q);
	rd_kafka_topic_partition_list_sort(l, NULL, NULL);
	return l;
}

/* Can the brokers describe groups? librdkafka 2.0.2's DescribeConsumerGroups, refused by
 * a broker without DescribeGroups (the mock cluster), keeps a broker reference that makes
 * rd_kafka_destroy hang; the older rd_kafka_list_groups fails cleanly: ask it first. */
static bool
can_describe(struct inspect *in)
{
	const struct rd_kafka_group_list *gl = NULL;
	rd_kafka_resp_err_t err = rd_kafka_list_groups(in->rk, in->o->group, &gl, (int)in->o->k->timeout_ms);

	if (gl != NULL)
		rd_kafka_group_list_destroy(gl);
	if (err == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE)
		return false;
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_diag_die(ss_kafka_exit_code(err), "group %s: cannot describe it on %s: %s", in->o->group,
			    ss_kopts_brokers(in->o->k), rd_kafka_err2str(err));
	return true;
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? ss_xstrdup(s) : NULL;
}

static void
copy_members(struct group *g, const rd_kafka_ConsumerGroupDescription_t *d)
{
	g->nmembers = rd_kafka_ConsumerGroupDescription_member_count(d);
	g->members = ss_xmalloc((g->nmembers + 1) * sizeof *g->members);
	for (size_t i = 0; i < g->nmembers; i++) {
		const rd_kafka_MemberDescription_t *m = rd_kafka_ConsumerGroupDescription_member(d, i);
		const rd_kafka_MemberAssignment_t *a = rd_kafka_MemberDescription_assignment(m);
		const rd_kafka_topic_partition_list_t *p = a != NULL ? rd_kafka_MemberAssignment_partitions(a) : NULL;
		g->members[i] = (struct member){
		    .id = dup_or_null(rd_kafka_MemberDescription_consumer_id(m)),
		    .client_id = dup_or_null(rd_kafka_MemberDescription_client_id(m)),
		    .host = dup_or_null(rd_kafka_MemberDescription_host(m)),
		    .parts = p != NULL ? rd_kafka_topic_partition_list_copy(p) : rd_kafka_topic_partition_list_new(0),
		};
	}
}

static void
describe_group(struct inspect *in, struct group *g)
{
	const char *name = in->o->group;
	rd_kafka_queue_t *q;
	rd_kafka_AdminOptions_t *ao;
	rd_kafka_event_t *ev;
	const rd_kafka_ConsumerGroupDescription_t **d;
	size_t n;

	memset(g, 0, sizeof *g);
	if (!can_describe(in))
		return;
	q = rd_kafka_queue_new(in->rk);
	ao = admin_options(in, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
	rd_kafka_DescribeConsumerGroups(in->rk, &name, 1, ao, q);
	ev = admin_wait(in, q, "describe it");
	d = rd_kafka_DescribeConsumerGroups_result_groups(rd_kafka_event_DescribeConsumerGroups_result(ev), &n);
	if (n > 0) {
		die_error(in, rd_kafka_ConsumerGroupDescription_error(d[0]), "describe it");
		g->described = true;
		g->state = ss_xstrdup(rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupDescription_state(d[0])));
		copy_members(g, d[0]);
	}
	rd_kafka_event_destroy(ev);
	rd_kafka_AdminOptions_destroy(ao);
	rd_kafka_queue_destroy(q);
}

static void
free_group(struct group *g)
{
	for (size_t i = 0; i < g->nmembers; i++) {
		free(g->members[i].id);
		free(g->members[i].client_id);
		free(g->members[i].host);
		rd_kafka_topic_partition_list_destroy(g->members[i].parts);
	}
	free(g->members);
	free(g->state);
}

static const struct member *
owner(const struct group *g, const rd_kafka_topic_partition_t *e)
{
	for (size_t i = 0; i < g->nmembers; i++)
		if (rd_kafka_topic_partition_list_find(g->members[i].parts, e->topic, e->partition) != NULL)
			return &g->members[i];
	return NULL;
}

static void
put_member(ss_buf *b, const struct member *m)
{
	if (m == NULL) {
		ss_buf_adds(b, "null");
		return;
	}
	ss_buf_adds(b, "{\"id\":");
	put_string(b, m->id);
	put_name(b, "client_id");
	put_string(b, m->client_id);
	put_name(b, "host");
	put_string(b, m->host);
	ss_buf_addc(b, '}');
}

/* The lag of a partition, -1 when its high watermark is not known. */
static int64_t
lag_of(const rd_kafka_topic_partition_t *c, const rd_kafka_topic_partition_t *hi)
{
	if (hi->err != RD_KAFKA_RESP_ERR_NO_ERROR || hi->offset < 0)
		return -1;
	return hi->offset > c->offset ? hi->offset - c->offset : 0;
}

static void
lag_json(ss_buf *b, const rd_kafka_topic_partition_t *c, const rd_kafka_topic_partition_t *hi,
	 const struct member *m)
{
	int64_t lag = lag_of(c, hi);

	put_start(b, c->topic, c->partition);
	put_name(b, "committed");
	ss_kafka_put_int(b, c->offset);
	put_name(b, "high");
	put_offset(b, hi);
	put_name(b, "lag");
	if (lag >= 0)
		ss_kafka_put_int(b, lag);
	else
		ss_buf_adds(b, "null");
	put_name(b, "member");
	put_member(b, m);
	put_end(b, hi->err);
}

static void
lag_row(ss_table *t, const rd_kafka_topic_partition_t *c, const rd_kafka_topic_partition_t *hi,
	const struct member *m)
{
	int64_t lag = lag_of(c, hi);
	const char *row[] = {c->topic, cell_int(c->partition), cell_int(c->offset), cell_offset(hi),
			     lag >= 0 ? cell_int(lag) : NULL, m != NULL ? m->id : NULL,
			     m != NULL ? m->client_id : NULL, m != NULL ? m->host : NULL, cell_error(hi->err)};

	ss_table_row(t, row);
}

static void
total_json(ss_buf *b, const struct inspect *in, const struct group *g, int nparts, int64_t total)
{
	ss_buf_adds(b, "{\"group\":");
	put_string(b, in->o->group);
	put_name(b, "state");
	put_string(b, g->state);
	put_name(b, "members");
	if (g->described)
		ss_kafka_put_int(b, (int64_t)g->nmembers);
	else
		ss_buf_adds(b, "null");
	put_name(b, "partitions");
	ss_kafka_put_int(b, nparts);
	put_name(b, "total_lag");
	ss_kafka_put_int(b, total);
	ss_buf_adds(b, "}\n");
}

static void
total_text(const struct inspect *in, const struct group *g, int nparts, int64_t total)
{
	printf("\ngroup %s", in->o->group);
	if (g->described)
		printf(" (%s, %zu member%s)", g->state, g->nmembers, g->nmembers == 1 ? "" : "s");
	printf(": total lag %lld over %d partition%s\n", (long long)total, nparts, nparts == 1 ? "" : "s");
}

int
ss_inspect_lag(const struct ss_inspect_opts *o)
{
	static const char *const head[] = {"TOPIC", "PARTITION", "COMMITTED", "HIGH", "LAG",
					   "MEMBER", "CLIENT", "HOST", "ERROR"};
	struct inspect in;
	struct group g;
	rd_kafka_topic_partition_list_t *c, *hi;
	ss_table *t = NULL;
	int64_t total = 0;

	open_cluster(&in, o);
	c = committed_offsets(&in);
	if (c->cnt == 0)
		ss_diag_die(SS_EXIT_DATA, "group %s has no committed offsets%s on %s", o->group,
			    o->ntopics > 0 ? " for these topics" : "", ss_kopts_brokers(o->k));
	hi = list_offsets(&in, c, RD_KAFKA_OFFSET_END);
	describe_group(&in, &g);
	if (o->table)
		t = ss_table_new(9, head);
	for (int i = 0; i < c->cnt; i++) {
		const struct member *m = owner(&g, &c->elems[i]);
		int64_t lag = lag_of(&c->elems[i], &hi->elems[i]);
		total += lag > 0 ? lag : 0;
		if (t != NULL)
			lag_row(t, &c->elems[i], &hi->elems[i], m);
		else
			lag_json(&in.out, &c->elems[i], &hi->elems[i], m);
	}
	if (t != NULL) {
		ss_table_print(t, stdout);
		total_text(&in, &g, c->cnt, total);
		ss_table_free(t);
	} else {
		total_json(&in.out, &in, &g, c->cnt, total);
	}
	free_group(&g);
	rd_kafka_topic_partition_list_destroy(c);
	rd_kafka_topic_partition_list_destroy(hi);
	return close_cluster(&in);
}
