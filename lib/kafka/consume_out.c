/* consume_out: records to envelopes on the output queue, bad records, backpressure. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include "kafka/avro.h"
#include "base/diag.h"
#include "kafka/consume_impl.h"
#include "stream/outq.h"
#include "base/sstime.h"

#define HIGH_WATER (8u << 20)
#define LOW_WATER (1u << 20)
#define READER_WAIT_MS 500

void
cons_closed_output(struct consumer *c)
{
	c->status = SS_EXIT_PIPE;
	c->finished = true;
}

void
cons_drain(struct consumer *c)
{
	if (ss_outq_drain(c->out) == EPIPE)
		cons_closed_output(c);
}

void
cons_drain_all(struct consumer *c)
{
	if (ss_outq_drain_all(c->out) == EPIPE)
		cons_closed_output(c);
}

/* A reader that is merely slower than Kafka gets a short blocking wait: pausing would
 * drop what librdkafka has prefetched and fetch it again. Returns what is pending. */
static size_t
wait_for_reader(struct consumer *c)
{
	struct pollfd pfd = {.fd = c->o->out_fd, .events = POLLOUT};
	int64_t until = ss_time_mono_ms() + READER_WAIT_MS;

	while (!c->finished && ss_outq_pending(c->out) > HIGH_WATER && ss_time_mono_ms() < until) {
		(void)poll(&pfd, 1, 50);
		cons_drain(c);
	}
	return ss_outq_pending(c->out);
}

/* Pause every partition while the output holds too much even after a short wait (a
 * stalled reader), resume once it drained. */
void
cons_flow_control(struct consumer *c)
{
	size_t pending = ss_outq_pending(c->out);
	bool pause;

	if (!c->bp_paused && pending > HIGH_WATER)
		pending = wait_for_reader(c);
	if (!c->bp_paused && pending > HIGH_WATER)
		pause = true;
	else if (c->bp_paused && pending < LOW_WATER)
		pause = false;
	else
		return;
	c->bp_paused = pause;
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (!p->assigned || p->done)
				continue;
			cons_set_paused(c, c->topics[i].name, p, pause);
			if (pause) /* paused, it may fall behind its log unseen */
				cons_feed_part(c, &c->topics[i], p, SS_FEED_BEHIND);
		}
}

/* A key or value: decoded from Avro with a codec, else in its form. 0, or the status of
 * a payload that cannot be decoded (*why says why). */
static int
put_part(struct consumer *c, ss_buf *b, ss_avro *avro, const void *p, size_t len, enum ss_kfmt fmt,
	 const struct topic *t, const rd_kafka_message_t *m, const char **why)
{
	const char *what = p == m->key ? "key" : "value";

	if (avro != NULL && p != NULL)
		return ss_avro_decode(avro, p, len, b, why);
	if (!ss_kafka_put_payload(b, p, len, fmt) && c->json_warnings++ < 5)
		ss_diag_warn("%s [%d] offset %lld: %s is not JSON", t->name, m->partition,
			     (long long)m->offset, what);
	return 0;
}

/* Write the envelope of m; 0, or the status of a key or value that cannot be decoded
 * (nothing written then, *why says which and why). */
static int
put_envelope(struct consumer *c, struct topic *t, const rd_kafka_message_t *m, const char **why)
{
	ss_buf *b = ss_outq_buf(c->out);
	size_t mark = b->len;
	rd_kafka_timestamp_type_t tstype;
	rd_kafka_headers_t *hdrs = NULL;
	int64_t ts = rd_kafka_message_timestamp(m, &tstype);
	int rc;

	ss_buf_add(b, t->prefix.data, t->prefix.len);
	ss_kafka_put_int(b, m->partition);
	ss_buf_add(b, ",\"offset\":", 10);
	ss_kafka_put_int(b, m->offset);
	ss_buf_add(b, ",\"timestamp\":", 13);
	if (tstype == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE)
		ss_buf_add(b, "null", 4);
	else
		ss_kafka_put_int(b, ts);
	ss_buf_add(b, ",\"key\":", 7);
	if ((rc = put_part(c, b, c->key_avro, m->key, m->key_len, c->o->key_fmt, t, m, why)) != 0) {
		b->len = mark;
		return rc;
	}
	ss_buf_add(b, ",\"value\":", 9);
	if ((rc = put_part(c, b, c->value_avro, m->payload, m->len, c->o->value_fmt, t, m, why)) != 0) {
		b->len = mark;
		return rc;
	}
	ss_buf_add(b, ",\"headers\":", 11);
	if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_kafka_put_headers(b, hdrs);
	else
		ss_buf_add(b, "{}", 2);
	ss_buf_add(b, "}\n", 2);
	return 0;
}

/* A record whose key or value cannot be decoded: under --on-error fail, or when the
 * registry cannot be reached (retry later, lose nothing), the run ends before it; else
 * it is skipped or dead-lettered (source TOPIC/PARTITION, line its offset) and passed. */
static bool
bad_record(struct consumer *c, const struct topic *t, const rd_kafka_message_t *m, int rc,
	   const char *why)
{
	char source[300];

	if (rc == SS_EXIT_TEMPFAIL || c->o->onerror.mode == SS_ONERROR_FAIL) {
		ss_diag_warn("%s [%d] offset %lld: %s", t->name, m->partition, (long long)m->offset, why);
		c->status = rc;
		c->finished = true;
		return false;
	}
	snprintf(source, sizeof source, "%s/%d", t->name, (int)m->partition);
	ss_errpolicy_reject((struct ss_errpolicy *)&c->o->onerror, source, (uint64_t)m->offset,
			    m->payload, m->len, why);
	return true;
}

static struct topic *
topic_of(struct consumer *c, const rd_kafka_topic_t *rkt)
{
	if (rkt != c->last_rkt) {
		c->last_topic = cons_find_topic(c, rd_kafka_topic_name(rkt));
		c->last_rkt = rkt;
	}
	return c->last_topic;
}

static void
handle_error(struct consumer *c, const rd_kafka_message_t *m)
{
	struct topic *t = m->rkt != NULL ? topic_of(c, m->rkt) : NULL;
	struct part *p = t != NULL ? cons_get_part(t, m->partition) : NULL;

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (p != NULL && p->assigned && p->end >= 0 && m->offset >= p->end)
			cons_mark_done(c, t, p);
		else if (p != NULL && p->assigned && !p->done && !c->bp_paused)
			cons_feed_part(c, t, p, SS_FEED_CAUGHT_UP);
		return;
	}
	if (m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED && t == NULL) {
		/* without -G the group id is librdkafka's placeholder (new_consumer): nothing
		 * joins or commits, so a user with no access to it may still read */
		if (c->o->group == NULL)
			return;
		ss_diag_die(SS_EXIT_NOPERM, "not permitted: group %s: %s", c->o->group,
			    rd_kafka_message_errstr(m));
	}
	if (ss_kafka_exit_code(m->err) == SS_EXIT_NOPERM) /* an ACL: retrying will not help */
		ss_diag_die(SS_EXIT_NOPERM, "not permitted: %s%s%s", t != NULL ? t->name : "",
			    t != NULL ? ": " : "", rd_kafka_message_errstr(m));
	if (t != NULL)
		ss_diag_warn("%s [%d]: %s", t->name, m->partition, rd_kafka_message_errstr(m));
	else
		ss_diag_warn("%s", rd_kafka_message_errstr(m));
	if (m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
		c->status = SS_EXIT_DATA;
		c->finished = true;
	}
}

void
cons_handle_message(struct consumer *c, const rd_kafka_message_t *m)
{
	struct topic *t;
	struct part *p;

	if (m->err) {
		handle_error(c, m);
		return;
	}
	t = topic_of(c, m->rkt);
	p = t != NULL ? cons_get_part(t, m->partition) : NULL;
	if (p == NULL || !p->assigned || p->done || m->offset < p->next)
		return; /* stale, finished, or fetched again after a pause */
	if (p->end >= 0 && m->offset >= p->end) {
		cons_mark_done(c, t, p);
		return;
	}
	if (c->o->until_set && rd_kafka_message_timestamp(m, NULL) > c->o->until_ms) {
		cons_mark_done(c, t, p);
		return;
	}
	const char *why = NULL;
	int rc = put_envelope(c, t, m, &why);
	if (rc != 0 && !bad_record(c, t, m, rc, why))
		return;
	p->next = m->offset + 1;
	p->written = m->offset;
	if (c->o->group != NULL)
		cons_push_mark(c, p, p->next);
	c->nrecords++;
	if (p->end >= 0 && p->next >= p->end)
		cons_mark_done(c, t, p);
	if (c->o->count >= 0 && c->nrecords >= c->o->count)
		c->finished = true;
}
