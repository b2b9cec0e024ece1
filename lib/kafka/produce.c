/* produce: NDJSON lines to Kafka records (see produce.h).
 * Plain records (no headers, timestamp or partition) are partitioned here and held per
 * partition in lanes until they make a request, then handed to librdkafka in one
 * rd_kafka_produce_batch call (see "lanes" below: why, and when a lane goes early so a
 * trickle waits for nothing); any other record is handed alone, after every lane.
 * Delivery reports are served as records are read and while waiting for input. Records
 * in flight are kept in the order read with their input line numbers (the opaque is the
 * send number), so a failed delivery names its line and --acks can count the lines
 * delivered: every line before the oldest record not yet delivered (a record in a lane
 * is in flight from the start). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/acks.h"
#include "kafka/avro.h"
#include "base/diag.h"
#include "base/expr.h"
#include "base/jscan.h"
#include "base/proc.h"
#include "kafka/produce.h"
#include "base/sstime.h"

#define MAX_REPORTED 10
#define ACKS_EVERY_NS (100 * INT64_C(1000000))
#define BATCH_MAX 1024 /* records per hand-over when librdkafka partitions */
#define BATCH_BYTES (1u << 20)
#define LINGER_MS "100"         /* librdkafka's wait for a part request: see lanes */
#define QUIET_MS 5              /* input quiet this long: every lane is sent */
#define QUIET_FLUSH_MS 10
#define LANE_AGE_NS (50 * INT64_C(1000000)) /* held longer while input flows: handed */
#define LANES_HELD_MAX 50000    /* records held in all lanes */
#define LANES_BYTES_MAX (8u << 20)

/* Records handed to librdkafka and not yet reported on, oldest first. */
struct inflight {
	uint64_t *line; /* the input line of each */
	bool *done;
	uint64_t first; /* send number of the oldest */
	size_t head, n, cap;
};

/* Plain records read and not yet handed to librdkafka, already in flight (send numbers
 * taken, in order). Key and value are copied into the lane's bytes (a line lasts until
 * the next read); messages are filled from rec when the lane is handed over. */
struct batched {
	uint64_t line, sendno;
	size_t koff, klen, voff, vlen;
	bool key, value; /* false: null */
};

/* One partition's plain records, held until they make a request (see lane_add). */
struct lane {
	struct batched *rec;
	size_t n, cap;
	ss_buf bytes;
	size_t handed, handed_bytes; /* handed to librdkafka and not yet reported on */
	int64_t since; /* monotonic ns: when the oldest record joined */
};

struct lanes {
	struct lane *lane; /* one per partition; or one, partitioned by librdkafka */
	int32_t count;     /* the topic's partitions; 0: librdkafka partitions */
	int32_t sticky;    /* the partition of records without a key */
	int32_t *up;       /* partitions with a leader (at the start), for sticky */
	int32_t nup;
	size_t full, full_bytes; /* a request: batch.num.messages, batch.size */
	size_t held, held_bytes; /* records in all lanes */
	rd_kafka_message_t *msg; /* room for a hand-over */
	size_t msg_cap;
	uint64_t rand;
};

/* Where one part of a record comes from: an expression, or a member of an envelope. */
struct field {
	ss_expr *expr;
	struct ss_jpath *env;
	ss_avro *avro; /* --key-format/--value-format avro, else NULL */
	ss_buf raw, bytes;
	char *name; /* for messages: "--key .k", "envelope .timestamp" */
};

struct producer {
	struct ss_produce_opts *o;
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	ss_reader *in;
	ss_writer *dry;
	struct field key, value, headers, partition, timestamp;
	ss_buf line;
	struct inflight fl;
	struct lanes lanes;
	uint64_t ack_limit; /* lines before the first record that failed: never more */
	ss_acks *acks;     /* --acks, or NULL */
	bool joined;       /* the writer's run adopted (at the first line) */
	bool connected;    /* the brokers answered and the topic exists */
	int64_t connect_by; /* monotonic ms: when unanswered brokers end the run */
	int64_t acked_at;  /* monotonic time of the last report */
	char errbuf[512];
	char whybuf[768];
	uint64_t failed;
	uint64_t refused; /* of them, refused by an ACL: said once */
	int fail_status;
	int unpolled;
	bool own_partitions; /* lanes per partition (no -X partitioner) */
	/* the line's top-level members, noted while it was validated (not with --raw): its
	 * fields are found among them, not by validating it again */
	struct ss_jmember members[SS_JMEMBERS_NOTED];
};

struct record {
	const char *key, *value;
	size_t klen, vlen;
	rd_kafka_headers_t *headers;
	int32_t partition;
	int64_t ts_ms; /* 0: now */
};

void
ss_produce_opts_init(struct ss_produce_opts *o)
{
	memset(o, 0, sizeof *o);
	ss_kopts_init(&o->k);
	o->ts_unit = SS_TS_S;
	o->onerror.mode = SS_ONERROR_FAIL;
	o->in_fd = 0;
	o->in_name = "<stdin>";
}

/* ---- records in flight ---- */

static size_t
inflight_slot(const struct inflight *f, uint64_t sendno)
{
	return (f->head + (size_t)(sendno - f->first)) % f->cap;
}

/* Append the record sent as number f->first + f->n. */
static void
inflight_push(struct inflight *f, uint64_t line)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 1024;
		uint64_t *l = ss_xmalloc(cap * sizeof *l);
		bool *d = ss_xmalloc(cap * sizeof *d);
		for (size_t i = 0; i < f->n; i++) {
			l[i] = f->line[(f->head + i) % f->cap];
			d[i] = f->done[(f->head + i) % f->cap];
		}
		free(f->line);
		free(f->done);
		*f = (struct inflight){.line = l, .done = d, .first = f->first, .n = f->n, .cap = cap};
	}
	size_t i = (f->head + f->n++) % f->cap;
	f->line[i] = line;
	f->done[i] = false;
}

/* Mark a record reported on; drop those from the front. */
static void
inflight_done(struct inflight *f, uint64_t sendno)
{
	f->done[inflight_slot(f, sendno)] = true;
	while (f->n > 0 && f->done[f->head]) {
		f->head = (f->head + 1) % f->cap;
		f->first++;
		f->n--;
	}
}

/* A record of this line will never be delivered: the count stops before it. */
static void
failed_line(struct producer *pr, uint64_t line)
{
	if (line - 1 < pr->ack_limit)
		pr->ack_limit = line - 1;
}

/* Input lines all of whose records are delivered: those before the oldest in flight,
 * and before the first that failed. */
static uint64_t
lines_delivered(const struct producer *pr)
{
	uint64_t n = pr->fl.n > 0 ? pr->fl.line[pr->fl.head] - 1 : ss_reader_lineno(pr->in);

	return n < pr->ack_limit ? n : pr->ack_limit;
}

/* --acks: tell the writer of our input how far it is delivered (at most every
 * ACKS_EVERY_NS unless forced: each report is a SQLite transaction). */
static void
report_acks(struct producer *pr, bool force)
{
	int64_t now;

	if (pr->acks == NULL || !pr->joined)
		return;
	now = ss_time_mono();
	if (!force && now - pr->acked_at < ACKS_EVERY_NS)
		return;
	pr->acked_at = now;
	ss_acks_report(pr->acks, lines_delivered(pr));
}

/* Lanes kept: one per partition, or the one that librdkafka partitions. */
static int32_t
lanes_len(const struct lanes *ls)
{
	return ls->count > 0 ? ls->count : 1;
}

/* A lane whose partition has nothing in flight (librdkafka's one lane counts as such:
 * it is handed over whenever the input pauses, as batches were). */
static bool
lane_idle(const struct lanes *ls, const struct lane *l)
{
	return ls->count == 0 || l->handed == 0;
}

/* A lane's record reported on. The partition is the one it was handed to, unless
 * librdkafka had no metadata yet and partitioned it again: then the count is off, which
 * only loosens the hold (lane_hand_full also stops waiting once librdkafka holds none). */
static void
lane_reported(struct lanes *ls, const rd_kafka_message_t *m)
{
	struct lane *l;
	size_t bytes = m->len + m->key_len;

	if (ls->count > 0 && (m->partition < 0 || m->partition >= ls->count))
		return;
	l = &ls->lane[ls->count > 0 ? m->partition : 0];
	if (l->handed > 0)
		l->handed--;
	l->handed_bytes -= bytes < l->handed_bytes ? bytes : l->handed_bytes;
}

static void
dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct producer *pr = opaque;
	uint64_t sendno = (uint64_t)(uintptr_t)m->_private >> 1;
	uint64_t line = pr->fl.line[inflight_slot(&pr->fl, sendno)];
	int status;

	(void)rk;
	if ((uintptr_t)m->_private & 1) /* a lane's record */
		lane_reported(&pr->lanes, m);
	inflight_done(&pr->fl, sendno);
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
		return;
	failed_line(pr, line);
	status = ss_kafka_exit_code(m->err);
	if (status == SS_EXIT_NOPERM) { /* every record after it meets the same ACL */
		if (pr->refused++ == 0)
			ss_diag_warn("%s:%llu: not permitted: topic %s: %s", pr->o->in_name,
				     (unsigned long long)line, pr->o->topic, rd_kafka_err2str(m->err));
		pr->failed++;
	} else if (pr->failed++ - pr->refused < MAX_REPORTED) {
		ss_diag_warn("%s:%llu: not delivered: %s", pr->o->in_name, (unsigned long long)line,
			     rd_kafka_err2str(m->err));
	}
	if (pr->fail_status != SS_EXIT_TEMPFAIL)
		pr->fail_status = status;
}

static void lanes_hand_all(struct producer *pr);

/* Wait until librdkafka holds no record: each is delivered or reported failed. */
static void
flush_all(struct producer *pr)
{
	if (pr->dry != NULL) /* --dry-run: "delivered" is printed */
		ss_writer_flush(pr->dry);
	if (pr->rk == NULL)
		return;
	lanes_hand_all(pr);
	/* rd_kafka_flush, not a poll loop: what is held is sent now, not after linger.ms */
	while (rd_kafka_flush(pr->rk, 100) == RD_KAFKA_RESP_ERR__TIMED_OUT)
		;
	rd_kafka_poll(pr->rk, 0);
}

static void
field_init(struct field *f, const char *expr, const char *option, const char *env_member,
	   bool envelope)
{
	char name[256];

	memset(f, 0, sizeof *f);
	if (expr != NULL) {
		f->expr = ss_expr_compile(expr, option);
		snprintf(name, sizeof name, "%s %s", option, expr);
	} else if (envelope && env_member != NULL) {
		f->env = ss_jpath_parse(env_member);
		snprintf(name, sizeof name, "envelope %s", env_member);
	} else {
		snprintf(name, sizeof name, "%s", option);
	}
	f->name = ss_xstrdup(name);
}

/* A field that cannot be built: its name before the reason. Returns false. */
static bool
field_failed(struct producer *pr, const struct field *f, const char **why)
{
	snprintf(pr->whybuf, sizeof pr->whybuf, "%s: %s", f->name, *why ? *why : "bad value");
	*why = pr->whybuf;
	return false;
}

static void
field_free(struct field *f)
{
	free(f->name);
	ss_expr_free(f->expr);
	if (f->env != NULL)
		ss_jpath_free(f->env);
	ss_avro_free(f->avro);
	ss_buf_free(&f->raw);
	ss_buf_free(&f->bytes);
}

/* The raw JSON text of a field on the record: 1 found, 0 absent (no source or missing
 * member), -1 on an expression error (*why set). */
static int
field_raw(struct producer *pr, struct field *f, ss_rec *rec, const char **p, size_t *len,
	  const char **why)
{
	const char *vs, *ve;
	bool type_error;

	if (f->env != NULL) {
		if (!ss_rec_find(f->env, rec, &vs, &ve, &type_error))
			return 0;
		*p = vs;
		*len = (size_t)(ve - vs);
		return 1;
	}
	if (f->expr == NULL)
		return 0;
	if (ss_expr_raw(f->expr, rec, p, len))
		return 1;
	ss_buf_reset(&f->raw);
	if (ss_expr_json(f->expr, rec, &f->raw, pr->errbuf, sizeof pr->errbuf) < 0) {
		*why = pr->errbuf;
		return -1;
	}
	*p = f->raw.data;
	*len = f->raw.len;
	return 1;
}

/* The bytes of the JSON value [p, p+len): Avro with a codec (null -> NULL), else as
 * ss_kafka_payload_bytes reads it. */
static bool
payload(struct field *f, const char *p, size_t len, const char **out, size_t *outlen, const char **why)
{
	bool isnull;

	if (f->avro == NULL)
		return ss_kafka_payload_bytes(p, len, &f->bytes, out, outlen, &isnull, why);
	if (len == 4 && memcmp(p, "null", 4) == 0)
		return true;
	ss_buf_reset(&f->bytes);
	if (ss_avro_encode(f->avro, p, len, &f->bytes, why) != 0)
		return false;
	*out = f->bytes.data != NULL ? f->bytes.data : "";
	*outlen = f->bytes.len;
	return true;
}

/* Key or value bytes: absent or null -> NULL. */
static bool
field_bytes(struct producer *pr, struct field *f, ss_rec *rec, const char **out, size_t *outlen,
	    const char **why)
{
	const char *p;
	size_t len;
	int rc = field_raw(pr, f, rec, &p, &len, why);

	*out = NULL;
	*outlen = 0;
	if (rc <= 0)
		return rc == 0;
	return payload(f, p, len, out, outlen, why);
}

static bool
field_int(struct producer *pr, struct field *f, ss_rec *rec, bool *found, int64_t *v,
	  const char **why)
{
	const char *p;
	size_t len;
	char tmp[32], *end;
	int rc = field_raw(pr, f, rec, &p, &len, why);

	*found = rc == 1;
	if (rc <= 0 || (len == 4 && memcmp(p, "null", 4) == 0)) {
		*found = false;
		return rc == 0 || rc == 1;
	}
	if (len >= sizeof tmp)
		goto bad;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	errno = 0;
	*v = strtoll(tmp, &end, 10);
	if (end != tmp && *end == '\0' && errno == 0)
		return true;
bad:
	*why = "expected an integer";
	return false;
}

static bool
field_time(struct producer *pr, struct field *f, ss_rec *rec, int64_t *ms, const char **why)
{
	const char *p;
	size_t len;
	int64_t ns;
	int rc = field_raw(pr, f, rec, &p, &len, why);

	*ms = 0;
	if (rc <= 0 || (len == 4 && memcmp(p, "null", 4) == 0))
		return rc >= 0;
	if (!ss_time_from_raw(p, len, pr->o->ts_unit, &ns, why))
		return false;
	*ms = ns / 1000000;
	return true;
}

/* Build the record of one valid line; false with *why (a field's reason) otherwise. */
static bool
build_record(struct producer *pr, ss_rec *rec, struct record *r, const char **why)
{
	const char *hp;
	size_t hlen;
	int64_t v;
	bool found;
	int rc;

	memset(r, 0, sizeof *r);
	r->partition = RD_KAFKA_PARTITION_UA;
	if (pr->value.expr != NULL || pr->value.env != NULL) {
		if (pr->value.env != NULL && field_raw(pr, &pr->value, rec, &hp, &hlen, why) == 0) {
			*why = "envelope has no value";
			return false;
		}
		if (!field_bytes(pr, &pr->value, rec, &r->value, &r->vlen, why))
			return field_failed(pr, &pr->value, why);
	} else if (pr->value.avro != NULL) {
		if (!payload(&pr->value, rec->raw, rec->len, &r->value, &r->vlen, why))
			return false;
	} else {
		r->value = rec->raw;
		r->vlen = rec->len;
	}
	if (!field_bytes(pr, &pr->key, rec, &r->key, &r->klen, why))
		return field_failed(pr, &pr->key, why);
	if (!field_int(pr, &pr->partition, rec, &found, &v, why))
		return field_failed(pr, &pr->partition, why);
	if (found) {
		if (v < 0 || v > INT32_MAX) {
			*why = "partition out of range";
			return field_failed(pr, &pr->partition, why);
		}
		r->partition = (int32_t)v;
	}
	if (pr->timestamp.env != NULL) {
		/* an envelope's timestamp is Kafka's: milliseconds */
		if (!field_int(pr, &pr->timestamp, rec, &found, &v, why)) {
			*why = "expected an integer, Kafka's milliseconds since the epoch "
			       "(--timestamp EXPR takes a time in any form)";
			return field_failed(pr, &pr->timestamp, why);
		}
		r->ts_ms = found ? v : 0;
	} else if (!field_time(pr, &pr->timestamp, rec, &r->ts_ms, why)) {
		return field_failed(pr, &pr->timestamp, why);
	}
	rc = field_raw(pr, &pr->headers, rec, &hp, &hlen, why);
	if (rc < 0 || (rc == 1 && !ss_kafka_headers_from_json(hp, hlen, &r->headers, why)))
		return field_failed(pr, &pr->headers, why);
	return true;
}

static void
print_dry(struct producer *pr, const struct record *r)
{
	ss_buf *b = &pr->line;

	ss_buf_reset(b);
	ss_buf_adds(b, "{\"topic\":");
	ss_jscan_quote(b, pr->o->topic, strlen(pr->o->topic));
	ss_buf_adds(b, ",\"partition\":");
	if (r->partition == RD_KAFKA_PARTITION_UA)
		ss_buf_adds(b, "null");
	else
		ss_kafka_put_int(b, r->partition);
	ss_buf_adds(b, ",\"timestamp\":");
	if (r->ts_ms == 0)
		ss_buf_adds(b, "null");
	else
		ss_kafka_put_int(b, r->ts_ms);
	ss_buf_adds(b, ",\"key\":");
	ss_kafka_put_payload(b, r->key, r->klen, SS_KFMT_AUTO);
	ss_buf_adds(b, ",\"value\":");
	ss_kafka_put_payload(b, r->value, r->vlen, SS_KFMT_AUTO);
	ss_buf_adds(b, ",\"headers\":");
	ss_kafka_put_headers(b, r->headers);
	ss_buf_adds(b, "}\n");
	ss_writer_write(pr->dry, b->data, b->len);
}

static void lanes_init(struct producer *pr, const rd_kafka_metadata_topic_t *t);

static void
check_topic(struct producer *pr, const rd_kafka_metadata_t *md)
{
	if (md->topic_cnt > 0 && md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
		ss_diag_die(SS_EXIT_DATA, "topic %s does not exist", pr->o->topic);
	/* an ACL that hides the topic: said once, not once per record (retrying will not help) */
	if (md->topic_cnt > 0 && ss_kafka_exit_code(md->topics[0].err) == SS_EXIT_NOPERM)
		ss_diag_die(SS_EXIT_NOPERM, "topic %s: %s", pr->o->topic,
			    rd_kafka_err2str(md->topics[0].err));
	lanes_init(pr, md->topic_cnt > 0 ? &md->topics[0] : NULL);
	rd_kafka_metadata_destroy(md);
	pr->connected = true;
}

/* Before the first record: the brokers must answer (a bounded wait, said on a terminal). */
static void
await_brokers(struct producer *pr)
{
	if (!pr->connected)
		check_topic(pr, ss_kafka_metadata(pr->rk, &pr->o->k, pr->o->topic));
}

/* Waiting for input. Until the brokers answered, the wait asks them, so a wrong broker
 * or topic is said without waiting for the first record; and an input that ends before
 * any record needs no broker at all. Once the input has been quiet for QUIET_MS, what
 * is held is sent: every lane, and what librdkafka holds for linger.ms (rd_kafka_flush
 * makes it immediate while it runs). A pipeline's short pauses still fill whole requests. */
static void
idle_wait(struct producer *pr, struct pollfd *pfd)
{
	const rd_kafka_metadata_t *md;
	rd_kafka_resp_err_t err;
	int64_t until = ss_time_mono_ms() + 100;

	if (pr->dry == NULL && !pr->connected) {
		if ((md = ss_kafka_metadata_try(pr->rk, pr->o->topic, 100, &err)) != NULL) {
			check_topic(pr, md);
			return;
		}
		if (ss_time_mono_ms() >= pr->connect_by)
			ss_kafka_die_unreachable(&pr->o->k, err);
	}
	if (pr->connected && pr->fl.n > 0) { /* a trickle: sent now, not after linger.ms */
		if (poll(pfd, 1, QUIET_MS) != 0)
			return;
		lanes_hand_all(pr);
		(void)rd_kafka_flush(pr->rk, QUIET_FLUSH_MS);
	}
	if (ss_time_mono_ms() < until)
		(void)poll(pfd, 1, (int)(until - ss_time_mono_ms()));
}

/* A record librdkafka refused: said (the first MAX_REPORTED), and its line is not
 * delivered. */
static void
send_failed(struct producer *pr, uint64_t lineno, rd_kafka_resp_err_t err)
{
	if (pr->failed++ - pr->refused < MAX_REPORTED)
		ss_diag_warn("%s:%llu: not sent: %s", pr->o->in_name, (unsigned long long)lineno,
			     rd_kafka_err2str(err));
	if (pr->fail_status != SS_EXIT_TEMPFAIL)
		pr->fail_status = ss_kafka_exit_code(err);
	failed_line(pr, lineno);
}

/* ---- lanes: ss-produce's own partitioning and hold ----
 *
 * librdkafka 2.0.2's idempotent producer sends a partition's next request only once fewer
 * than 5 *messages* of it are in flight: one request at a time. While it waits, its broker
 * thread polls without sleeping whenever the oldest record queued behind that request is
 * older than linger.ms (20-50% of ss-produce's CPU with linger.ms 5, on the same cores as
 * a local broker). So ss-produce partitions plain records itself, as librdkafka would
 * (murmur2 of the key, Java's; records without a key stick to a random partition with a
 * leader for a request's worth), holds each partition's records in a lane, and hands a
 * lane over when it makes a request (batch.num.messages or batch.size), once less than
 * two requests' worth of its partition is outstanding: the next request is ready when the
 * answer comes, and nothing waits behind it longer than linger.ms, which can then be long
 * (LINGER_MS) without holding anything back. A lane whose partition has nothing in flight
 * is handed over whenever the input pauses, or once held LANE_AGE_NS while the input never
 * pauses; every lane once the input is quiet (QUIET_MS, then rd_kafka_flush makes
 * linger.ms immediate) and at its end. One hand-over is one rd_kafka_produce_batch call to
 * one partition: no partitioner and no clock read per record. With -X partitioner set,
 * librdkafka partitions: one lane, handed over every BATCH_MAX records, linger.ms 5. */

/* Delivery reports and the acks are served every 1000 records read and whenever the input
 * pauses; so is the age of the lanes. */
static void lanes_hand_old(struct producer *pr);

static void
tick(struct producer *pr)
{
	if (++pr->unpolled < 1000)
		return;
	pr->unpolled = 0;
	rd_kafka_poll(pr->rk, 0);
	report_acks(pr, false);
	lanes_hand_old(pr);
}

static uint32_t
lanes_random(struct lanes *ls)
{
	ls->rand ^= ls->rand << 13; /* xorshift64: spreading, not secrecy */
	ls->rand ^= ls->rand >> 7;
	ls->rand ^= ls->rand << 17;
	return (uint32_t)(ls->rand >> 32);
}

/* Where the next records without a key go: a random partition that had a leader. */
static void
lanes_pick_sticky(struct lanes *ls)
{
	if (ls->nup > 0)
		ls->sticky = ls->up[lanes_random(ls) % (uint32_t)ls->nup];
	else if (ls->count > 0)
		ls->sticky = (int32_t)(lanes_random(ls) % (uint32_t)ls->count);
}

/* The topic's partitions, from the metadata of the start; none (librdkafka partitions)
 * with a partitioner of the user's. */
static void
lanes_init(struct producer *pr, const rd_kafka_metadata_topic_t *t)
{
	struct lanes *ls = &pr->lanes;
	int32_t n = pr->own_partitions && t != NULL && t->err == RD_KAFKA_RESP_ERR_NO_ERROR
			    ? t->partition_cnt : 0;

	ls->count = n;
	ls->lane = ss_xmalloc((size_t)lanes_len(ls) * sizeof *ls->lane);
	memset(ls->lane, 0, (size_t)lanes_len(ls) * sizeof *ls->lane);
	ls->up = ss_xmalloc((size_t)lanes_len(ls) * sizeof *ls->up);
	for (int32_t i = 0; i < n; i++)
		if (t->partitions[i].leader >= 0 && t->partitions[i].id < n)
			ls->up[ls->nup++] = t->partitions[i].id;
	ls->rand = ((uint64_t)ss_time_mono() ^ ((uint64_t)getpid() << 32)) | 1;
	if (n == 0) { /* librdkafka's partitioner: batches as before, linger.ms its own */
		ls->full = BATCH_MAX;
		ls->full_bytes = BATCH_BYTES;
	}
	lanes_pick_sticky(ls);
}

static void
lanes_free(struct lanes *ls)
{
	for (int32_t i = 0; ls->lane != NULL && i < lanes_len(ls); i++) {
		free(ls->lane[i].rec);
		ss_buf_free(&ls->lane[i].bytes);
	}
	free(ls->lane);
	free(ls->up);
	free(ls->msg);
}

/* A key or value in the lane's bytes: NULL for null, never for an empty one (the bytes
 * of a lane of empty ones are never allocated). */
static void *
lane_at(struct lane *l, bool present, size_t off, size_t len)
{
	if (!present)
		return NULL;
	return len == 0 ? (void *)"" : l->bytes.data + off;
}

/* The lane's messages, pointing at its bytes. The opaque is the send number shifted
 * left, its low bit set: a lane's record (dr_msg_cb counts it off its lane; a record sent
 * alone has the bit clear). */
static rd_kafka_message_t *
lane_messages(struct lanes *ls, struct lane *l)
{
	if (ls->msg_cap < l->n) {
		ls->msg_cap = l->n;
		ls->msg = ss_xrealloc(ls->msg, ls->msg_cap * sizeof *ls->msg);
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct batched *r = &l->rec[i];
		ls->msg[i] = (rd_kafka_message_t){
		    .payload = lane_at(l, r->value, r->voff, r->vlen), .len = r->vlen,
		    .key = lane_at(l, r->key, r->koff, r->klen), .key_len = r->klen,
		    ._private = (void *)(uintptr_t)(r->sendno << 1 | 1)};
	}
	return ls->msg;
}

/* An emptied lane keeps its memory for the next records on one partition; over many, only
 * lanes that hold records keep any (else each would keep the most it ever held). */
static void
lane_release(struct lanes *ls, struct lane *l)
{
	if (ls->count <= 1) {
		ss_buf_reset(&l->bytes);
		return;
	}
	ss_buf_free(&l->bytes);
	free(l->rec);
	l->rec = NULL;
	l->cap = 0;
}

/* Hand the lane to librdkafka in order. After a record meets a full queue, so does every
 * later one of the call (rd_kafka_produce_batch stops there): those are sent again, in
 * order, once delivery reports made room. */
static void
lane_hand(struct producer *pr, int32_t idx)
{
	struct lanes *ls = &pr->lanes;
	struct lane *l = &ls->lane[idx];
	int32_t partition = ls->count > 0 ? idx : RD_KAFKA_PARTITION_UA;
	rd_kafka_message_t *m;
	size_t i = 0, from;

	if (l->n == 0)
		return;
	m = lane_messages(ls, l);
	while (i < l->n) {
		from = i;
		(void)rd_kafka_produce_batch(pr->rkt, partition, RD_KAFKA_MSG_F_COPY, m + from,
					     (int)(l->n - from));
		for (; i < l->n && m[i].err != RD_KAFKA_RESP_ERR__QUEUE_FULL; i++) {
			if (m[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
				l->handed++;
				l->handed_bytes += m[i].len + m[i].key_len;
				continue;
			}
			send_failed(pr, l->rec[i].line, m[i].err);
			inflight_done(&pr->fl, l->rec[i].sendno);
		}
		if (i < l->n)
			rd_kafka_poll(pr->rk, 100);
	}
	ls->held -= l->n;
	ls->held_bytes -= l->bytes.len;
	l->n = 0;
	lane_release(ls, l);
	if (idx == ls->sticky)
		lanes_pick_sticky(ls);
}

/* A lane that makes a request: handed over once less than two requests' worth of its
 * partition is outstanding (handed over, not yet answered), so that behind the request
 * in flight librdkafka holds a whole one, sent as the answer comes. Counted in records
 * and bytes, not hand-overs: a request carries less than a lane (librdkafka counts
 * batch.size with each record's largest framing, 36 bytes), and the rest of a lane goes
 * with the next one. With one request's worth as the bound, that rest kept every lane
 * of ~200-byte records waiting for the answer, and after each answer librdkafka waited
 * for the main thread to hand the next lane over (1M wide records, six alternating
 * rounds: medians 0.99 -> 0.90 s, kcat -P 0.86 s; in another set 0.90 -> 0.78 s, kcat
 * -P 0.78 s; the seed's shape within the spread, 0.42-0.59 s against 0.42-0.58 s). */
static void
lane_hand_full(struct producer *pr, int32_t idx)
{
	struct lanes *ls = &pr->lanes;
	struct lane *l = &ls->lane[idx];

	while (ls->count > 0 &&
	       (l->handed >= 2 * ls->full || l->handed_bytes >= 2 * ls->full_bytes) &&
	       rd_kafka_outq_len(pr->rk) > 0)
		rd_kafka_poll(pr->rk, 100);
	lane_hand(pr, idx);
}

/* The input paused: lanes whose partition has nothing in flight are sent now. */
static void
lanes_hand_idle(struct producer *pr)
{
	struct lanes *ls = &pr->lanes;

	for (int32_t i = 0; ls->held > 0 && i < lanes_len(ls); i++)
		if (lane_idle(ls, &ls->lane[i]))
			lane_hand(pr, i);
}

static void
lanes_hand_all(struct producer *pr)
{
	struct lanes *ls = &pr->lanes;

	for (int32_t i = 0; ls->held > 0 && i < lanes_len(ls); i++)
		lane_hand(pr, i);
}

static void
lanes_hand_old(struct producer *pr)
{
	struct lanes *ls = &pr->lanes;
	int64_t now;

	if (ls->held == 0)
		return;
	now = ss_time_mono();
	for (int32_t i = 0; i < lanes_len(ls); i++)
		if (ls->lane[i].n > 0 && now - ls->lane[i].since > LANE_AGE_NS &&
		    lane_idle(ls, &ls->lane[i]))
			lane_hand(pr, i);
}

/* Too much held over many partitions: the fullest lane goes. */
static void
lanes_hand_largest(struct producer *pr)
{
	struct lanes *ls = &pr->lanes;
	int32_t best = 0;

	for (int32_t i = 1; i < ls->count; i++)
		if (ls->lane[i].bytes.len > ls->lane[best].bytes.len)
			best = i;
	lane_hand(pr, best);
}

static int32_t
lane_of(struct producer *pr, const struct record *r)
{
	if (pr->lanes.count == 0)
		return 0;
	if (r->key == NULL)
		return pr->lanes.sticky;
	return rd_kafka_msg_partitioner_murmur2(pr->rkt, r->key, r->klen, pr->lanes.count, NULL,
						NULL);
}

/* A plain record joins its partition's lane, in flight from now on (its send number
 * taken). */
static void
lane_add(struct producer *pr, const struct record *r, uint64_t lineno)
{
	struct lanes *ls = &pr->lanes;
	int32_t idx = lane_of(pr, r);
	struct lane *l = &ls->lane[idx];
	struct batched *e;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->rec = ss_xrealloc(l->rec, l->cap * sizeof *l->rec);
	}
	if (l->n == 0)
		l->since = ss_time_mono();
	e = &l->rec[l->n++];
	*e = (struct batched){.line = lineno, .sendno = pr->fl.first + pr->fl.n,
			      .key = r->key != NULL, .value = r->value != NULL,
			      .koff = l->bytes.len, .klen = r->klen};
	ss_buf_add(&l->bytes, r->key, r->klen);
	e->voff = l->bytes.len;
	e->vlen = r->vlen;
	ss_buf_add(&l->bytes, r->value, r->vlen);
	ls->held++;
	ls->held_bytes += r->klen + r->vlen;
	inflight_push(&pr->fl, lineno);
	if (l->n >= ls->full || l->bytes.len >= ls->full_bytes)
		lane_hand_full(pr, idx);
	else if (ls->held > LANES_HELD_MAX || ls->held_bytes > LANES_BYTES_MAX)
		lanes_hand_largest(pr);
	tick(pr);
}

/* Hand a record to librdkafka: a plain one through its lane; one with headers or a
 * timestamp (which rd_kafka_produce_batch cannot carry) alone, after every lane (so each
 * partition keeps the input's order); and one with a partition: librdkafka 2.0.2's batch
 * loses a record whose partition does not exist (never reported, never freed), which
 * would leave the run waiting for it. */
static void
send_record(struct producer *pr, struct record *r, uint64_t lineno)
{
	void *opaque;
	rd_kafka_resp_err_t err;

	await_brokers(pr);
	if (r->headers == NULL && r->ts_ms == 0 && r->partition == RD_KAFKA_PARTITION_UA) {
		lane_add(pr, r, lineno);
		return;
	}
	lanes_hand_all(pr);
	opaque = (void *)(uintptr_t)((pr->fl.first + pr->fl.n) << 1); /* low bit 0: no lane's */
	while ((err = rd_kafka_producev(pr->rk, RD_KAFKA_V_RKT(pr->rkt),
					RD_KAFKA_V_PARTITION(r->partition),
					RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					RD_KAFKA_V_VALUE((void *)r->value, r->vlen),
					RD_KAFKA_V_KEY(r->key, r->klen), RD_KAFKA_V_TIMESTAMP(r->ts_ms),
					RD_KAFKA_V_HEADERS(r->headers), RD_KAFKA_V_OPAQUE(opaque),
					RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		rd_kafka_poll(pr->rk, 100);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		send_failed(pr, lineno, err);
		return;
	}
	r->headers = NULL; /* librdkafka owns them now */
	inflight_push(&pr->fl, lineno);
	tick(pr);
}

static void
reject(struct producer *pr, const char *line, size_t len, const char *why)
{
	/* under "fail", every line before this one is delivered before the run stops */
	if (pr->o->onerror.mode == SS_ONERROR_FAIL) {
		flush_all(pr);
		report_acks(pr, true);
	}
	ss_errpolicy_reject(&pr->o->onerror, pr->o->in_name, ss_reader_lineno(pr->in), line, len, why);
}

static void
handle_line(struct producer *pr, const char *line, size_t len)
{
	struct record r;
	const char *why = NULL;
	ss_rec rec;

	if (pr->acks != NULL && !pr->joined) {
		ss_acks_join(pr->acks);
		pr->joined = true;
	}
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (ss_ndjson_blank(line, len))
		return;
	size_t nmembers = SIZE_MAX;
	if (!pr->o->raw &&
	    !ss_jscan_document_members(line, line + len, pr->members, SS_JMEMBERS_NOTED, &nmembers, &why)) {
		reject(pr, line, len, why != NULL ? why : "invalid JSON");
		return;
	}
	ss_rec_init(&rec, line, len);
	if (!pr->o->raw)
		ss_rec_set_members(&rec, pr->members, nmembers);
	if (!build_record(pr, &rec, &r, &why)) {
		ss_rec_done(&rec);
		reject(pr, line, len, why != NULL ? why : "bad record");
		return;
	}
	if (pr->dry != NULL)
		print_dry(pr, &r);
	else
		send_record(pr, &r, ss_reader_lineno(pr->in));
	if (r.headers != NULL)
		rd_kafka_headers_destroy(r.headers);
	ss_rec_done(&rec);
}

/* Read lines as they come; while none is ready, serve delivery reports. After SIGINT or
 * SIGTERM, lines already written to us are still sent (for up to a second), so what the
 * writer handed over before the signal is not lost. */
static void
read_input(struct producer *pr)
{
	struct pollfd pfd = {.fd = pr->o->in_fd, .events = POLLIN};
	const char *line;
	size_t len;
	int64_t deadline = 0;
	int rc;

	for (;;) {
		if (ss_proc_signal() && deadline == 0)
			deadline = ss_time_mono() + 1000000000;
		if (deadline != 0 && ss_time_mono() > deadline)
			break;
		rc = ss_reader_try_next(pr->in, &line, &len);
		if (rc == 1) {
			handle_line(pr, line, len);
			continue;
		}
		if (rc == 0 || deadline != 0)
			break;
		if (pr->dry != NULL) {
			ss_writer_flush(pr->dry);
		} else {
			lanes_hand_idle(pr);
			rd_kafka_poll(pr->rk, 0);
		}
		report_acks(pr, false);
		idle_wait(pr, &pfd);
	}
}

/* partitioner: Kafka's Java producer puts a keyed record in toPositive(murmur2(key)) %
 * partitions; librdkafka's own default hashes with CRC32, so topics it writes are not
 * co-partitioned with those Java services write. The lanes partition as murmur2_random
 * does (Java's hash; records without a key spread as librdkafka's sticky partitioner
 * does). -X partitioner=... still wins, and then librdkafka partitions.
 * queue.buffering.max.messages stays librdkafka's (and kcat's) 100,000: a larger queue only
 * lets the reader run ahead of a slower broker, into memory that must be faulted in. */
static const char *const producer_defaults[] = {
	"partitioner", "murmur2_random",
	"enable.idempotence", "true",
	"batch.num.messages", "10000",
	NULL,
};

/* An integer property as librdkafka took it (the user's or its default). */
static size_t
conf_size(rd_kafka_conf_t *conf, const char *prop)
{
	char v[64];
	size_t n = sizeof v;

	if (rd_kafka_conf_get(conf, prop, v, &n) != RD_KAFKA_CONF_OK)
		ss_diag_die(SS_EXIT_USAGE, "librdkafka has no %s", prop);
	return (size_t)strtoull(v, NULL, 10);
}

static void
connect_producer(struct producer *pr)
{
	struct ss_produce_opts *o = pr->o;
	rd_kafka_conf_t *conf = ss_kafka_conf(&o->k, producer_defaults);
	char ms[32];

	if (!ss_kopts_has(&o->k, "message.timeout.ms") && !ss_kopts_has(&o->k, "delivery.timeout.ms")) {
		snprintf(ms, sizeof ms, "%lld", (long long)o->k.timeout_ms);
		ss_kafka_conf_set(conf, "message.timeout.ms", ms);
	}
	pr->own_partitions = !ss_kopts_has(&o->k, "partitioner");
	if (pr->own_partitions && !ss_kopts_has(&o->k, "linger.ms") &&
	    !ss_kopts_has(&o->k, "queue.buffering.max.ms"))
		ss_kafka_conf_set(conf, "linger.ms", LINGER_MS);
	pr->lanes.full = conf_size(conf, "batch.num.messages");
	pr->lanes.full_bytes = conf_size(conf, "batch.size");
	rd_kafka_conf_set_opaque(conf, pr);
	rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
	pr->rk = ss_kafka_new(RD_KAFKA_PRODUCER, conf);
	pr->rkt = rd_kafka_topic_new(pr->rk, o->topic, NULL);
	pr->connect_by = ss_time_mono_ms() + o->k.timeout_ms;
}

/* With a registry, the subject's schema id is settled now: TOPIC-key or TOPIC-value. */
static ss_avro *
open_codec(const struct ss_produce_opts *o, bool avro, const char *schema, const char *what)
{
	char subject[512];
	struct ss_avro_opts ao = {.schema_file = schema, .registry = o->registry, .subject = subject,
				  .what = what, .timeout_ms = o->k.timeout_ms};

	snprintf(subject, sizeof subject, "%s-%s", o->topic, what);
	return avro ? ss_avro_open(&ao) : NULL;
}

static void
open_codecs(struct producer *pr)
{
	pr->key.avro = open_codec(pr->o, pr->o->key_avro, pr->o->key_schema, "key");
	pr->value.avro = open_codec(pr->o, pr->o->value_avro, pr->o->value_schema, "value");
}

int
ss_produce_run(struct ss_produce_opts *o)
{
	struct producer pr = {.o = o, .ack_limit = UINT64_MAX};
	int status;

	ss_proc_catch();
	field_init(&pr.key, o->key, "--key", ".key", o->envelope);
	field_init(&pr.value, o->value, "--value", ".value", o->envelope);
	field_init(&pr.headers, o->headers, "--headers", ".headers", o->envelope);
	field_init(&pr.partition, o->partition, "--partition", NULL, o->envelope);
	field_init(&pr.timestamp, o->timestamp, "--timestamp", ".timestamp", o->envelope);
	open_codecs(&pr);
	pr.in = ss_reader_new(o->in_fd, o->in_name, false);
	if (o->acks != NULL)
		pr.acks = ss_acks_open(o->acks);
	if (o->dry_run)
		pr.dry = ss_writer_new(1, "stdout");
	else
		connect_producer(&pr);
	read_input(&pr);
	flush_all(&pr);
	report_acks(&pr, true);
	if (pr.dry != NULL) {
		ss_writer_free(pr.dry);
	} else {
		rd_kafka_topic_destroy(pr.rkt);
		rd_kafka_destroy(pr.rk);
	}
	ss_acks_close(pr.acks);
	free(pr.fl.line);
	free(pr.fl.done);
	lanes_free(&pr.lanes);
	if (pr.failed > MAX_REPORTED)
		ss_diag_warn("%llu records not delivered in all", (unsigned long long)pr.failed);
	status = ss_proc_status(pr.failed > 0 ? pr.fail_status : 0);
	ss_reader_free(pr.in);
	field_free(&pr.key);
	field_free(&pr.value);
	field_free(&pr.headers);
	field_free(&pr.partition);
	field_free(&pr.timestamp);
	ss_buf_free(&pr.line);
	return status;
}
