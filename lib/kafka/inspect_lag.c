/* inspect_lag: --lag, a group's committed offsets against the high watermarks. */
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
	insp_put_string(b, m->id);
	insp_put_name(b, "client_id");
	insp_put_string(b, m->client_id);
	insp_put_name(b, "host");
	insp_put_string(b, m->host);
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

	insp_put_start(b, c->topic, c->partition);
	insp_put_name(b, "committed");
	ss_kafka_put_int(b, c->offset);
	insp_put_name(b, "high");
	insp_put_offset(b, hi);
	insp_put_name(b, "lag");
	if (lag >= 0)
		ss_kafka_put_int(b, lag);
	else
		ss_buf_adds(b, "null");
	insp_put_name(b, "member");
	put_member(b, m);
	insp_put_end(b, hi->err);
}

static void
lag_row(ss_table *t, const rd_kafka_topic_partition_t *c, const rd_kafka_topic_partition_t *hi,
	const struct member *m)
{
	int64_t lag = lag_of(c, hi);
	const char *row[] = {c->topic, insp_cell_int(c->partition), insp_cell_int(c->offset), insp_cell_offset(hi),
			     lag >= 0 ? insp_cell_int(lag) : NULL, m != NULL ? m->id : NULL,
			     m != NULL ? m->client_id : NULL, m != NULL ? m->host : NULL, insp_cell_error(hi->err)};

	ss_table_row(t, row);
}

static void
total_json(ss_buf *b, const struct inspect *in, const struct group *g, int nparts, int64_t total)
{
	ss_buf_adds(b, "{\"group\":");
	insp_put_string(b, in->o->group);
	insp_put_name(b, "state");
	insp_put_string(b, g->state);
	insp_put_name(b, "members");
	if (g->described)
		ss_kafka_put_int(b, (int64_t)g->nmembers);
	else
		ss_buf_adds(b, "null");
	insp_put_name(b, "partitions");
	ss_kafka_put_int(b, nparts);
	insp_put_name(b, "total_lag");
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

	insp_open_cluster(&in, o);
	c = committed_offsets(&in);
	if (c->cnt == 0)
		ss_diag_die(SS_EXIT_DATA, "group %s has no committed offsets%s on %s", o->group,
			    o->ntopics > 0 ? " for these topics" : "", ss_kopts_brokers(o->k));
	hi = insp_list_offsets(&in, c, RD_KAFKA_OFFSET_END);
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
	return insp_close_cluster(&in);
}
