/* consume: Kafka records to envelopes on stdout (see consume.h).
 *
 * Offsets. Every partition's start is resolved to an absolute offset before it is
 * assigned (from --offsets-from, --from, -o or the group's committed offset), so the
 * next expected offset is always known: a record below it (a re-fetch after a pause) is
 * dropped, and -e can tell at once that an empty partition is done.
 *
 * State handed over (-G with --offsets-from). The stored offsets are read again at every
 * assignment: a partition taken over from another member starts after what that member's
 * sink applied. A revoke waits (bounded) until this member's sink has applied everything
 * written for the revoked partitions, so that the new owner reads final offsets.
 *
 * Commits (-G). A record's offset becomes committable only when the output queue has
 * written the record's last byte: a FIFO of marks (output position, partition, offset)
 * is retired as the queue drains. Commits go out every second, on a revoke, and at exit.
 *
 * Backpressure. The output queue never blocks on a pipe. While it holds more than
 * HIGH_WATER bytes, every partition is paused and the loop keeps polling, so the group
 * session and max.poll.interval.ms are served however long the reader stalls.
 *
 * This file: setup, the main loop, checkpoint seeks, the live line. consume_start.c:
 * start positions; consume_commit.c: commits; consume_out.c: envelopes, backpressure;
 * consume_group.c: rebalances and hand-over; consume_parts.c: topics and partitions. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka/avro.h"
#include "base/diag.h"
#include "kafka/consume_impl.h"
#include "stream/wfile.h"
#include "base/jscan.h"
#include "stream/outq.h"
#include "base/proc.h"
#include "db/seeks.h"
#include "base/sstime.h"

#define FLUSH_AT (64u << 10)
#define COMMIT_EVERY_MS 1000
#define SEEKS_EVERY_MS 200
#define PROGRESS_EVERY_MS 250
#define BATCH 1000

static ss_feed_out *dying_feed; /* told how the run failed when it dies (ss_diag_die) */

static void
end_feed_on_die(int code)
{
	ss_feed_end(dying_feed, code);
	dying_feed = NULL;
}

void
ss_consume_opts_init(struct ss_consume_opts *o)
{
	memset(o, 0, sizeof *o);
	ss_kopts_init(&o->k);
	o->start.offset = RD_KAFKA_OFFSET_BEGINNING;
	o->count = -1;
	o->out_fd = 1;
}

/* Checkpoint seek requests: ss-checkpoint pulse writes them, we take (delete) them.
 * They are collected first and acted on after the transaction, which stays short. */
struct seek {
	char *topic;
	int32_t partition;
	int64_t offset;
};
struct seeks {
	struct seek *v;
	size_t n;
};

static void
collect_seek(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	struct seeks *s = arg;

	s->v = ss_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	s->v[s->n++] = (struct seek){ss_xstrdup(topic), partition, offset};
}

static void
seek_to(struct consumer *c, const char *topic, int32_t partition, int64_t offset)
{
	struct topic *t = cons_find_topic(c, topic);
	struct part *p = t != NULL ? cons_get_part(t, partition) : NULL;
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_error_t *error;

	if (p == NULL || !p->assigned) {
		ss_diag_warn("checkpoint: seek %s [%d] to %lld: partition not assigned here", topic,
			     partition, (long long)offset);
		return;
	}
	p->done = p->end >= 0 && offset >= p->end;
	cons_set_paused(c, t->name, p, p->done || c->bp_paused);
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, partition)->offset = offset;
	error = rd_kafka_seek_partitions(c->rk, l, (int)c->o->k.timeout_ms);
	if (error != NULL) {
		ss_diag_warn("checkpoint: seek %s [%d]: %s", topic, partition, rd_kafka_error_string(error));
		rd_kafka_error_destroy(error);
	} else {
		p->next = offset;
	}
	rd_kafka_topic_partition_list_destroy(l);
	cons_check_finished(c);
}

static void
apply_seeks(struct consumer *c)
{
	struct seeks s = {0};

	(void)ss_seeks_take(c->o->checkpoint_db, c->o->checkpoint_name, collect_seek, &s);
	for (size_t i = 0; i < s.n; i++) {
		seek_to(c, s.v[i].topic, s.v[i].partition, s.v[i].offset);
		free(s.v[i].topic);
	}
	free(s.v);
}

/* The live line: records, rate and, with -e, the share of the offsets up to the
 * snapshot read and the time left; else the lag behind the high watermarks. */
static void
progress(struct consumer *c, int64_t now)
{
	int64_t lag = 0, lo, hi, done = 0, total = 0;
	char note[48];

	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (!p->assigned)
				continue;
			if (p->end >= 0 && p->end > p->start) {
				total += p->end - p->start;
				done += (p->next < p->end ? p->next : p->end) - p->start;
			} else if (rd_kafka_get_watermark_offsets(c->rk, c->topics[i].name, p->id, &lo, &hi) ==
				   RD_KAFKA_RESP_ERR_NO_ERROR && hi > p->next)
				lag += hi - p->next;
		}
	snprintf(note, sizeof note, "lag %lld", (long long)lag);
	ss_progress_note(c->progress, c->o->exit_at_end ? NULL : note);
	ss_progress_update(c->progress, c->nrecords, done, c->o->exit_at_end ? total : 0);
	c->next_progress = now + PROGRESS_EVERY_MS;
}


/* Every broker reported down for longer than --timeout: one last metadata request
 * decides between carrying on and giving up (75), rather than waiting forever. */
static void
check_brokers(struct consumer *c, int64_t now)
{
	int64_t since = ss_kafka_all_down_since();
	const rd_kafka_metadata_t *md;
	rd_kafka_resp_err_t err;

	if (since == 0 || now - since / 1000000 < c->o->k.timeout_ms)
		return;
	err = rd_kafka_metadata(c->rk, 0, NULL, &md, 2000);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		rd_kafka_metadata_destroy(md);
		ss_kafka_clear_all_down();
		return;
	}
	cons_drain_all(c);
	ss_diag_die(SS_EXIT_TEMPFAIL, "lost the brokers %s for %.3gs: %s", ss_kopts_brokers(&c->o->k),
		    c->o->k.timeout_ms / 1000.0, ss_kafka_last_error());
}

/* What runs whenever the input pauses and at least every FLUSH_AT bytes of output. */
static void
housekeeping(struct consumer *c)
{
	int64_t now = ss_time_mono_ms();

	/* a reader gone while nothing flows: no write would ever tell */
	if (ss_outq_reader_gone(c->out)) {
		cons_closed_output(c);
		return;
	}
	cons_drain(c);
	cons_flow_control(c);
	if (now >= c->next_commit) {
		cons_commit(c, false);
		c->next_commit = now + COMMIT_EVERY_MS;
	}
	if (c->o->checkpoint_db != NULL && now >= c->next_seeks) {
		apply_seeks(c);
		c->next_seeks = now + SEEKS_EVERY_MS;
	}
	if (c->progress != NULL && now >= c->next_progress)
		progress(c, now);
	check_brokers(c, now);
	ss_feed_flush(c->feed, false);
}

/* Setup */

static const char *const consumer_defaults[] = {
	"enable.auto.commit", "false",
	"enable.auto.offset.store", "false",
	"enable.partition.eof", "true",
	"auto.offset.reset", "earliest",
	"fetch.wait.max.ms", "100",
	"queued.min.messages", "1000000",
	"queued.max.messages.kbytes", "16384",
	NULL,
};

static void
add_topic(struct consumer *c, const char *name)
{
	struct topic *t;

	c->topics = ss_xrealloc(c->topics, (size_t)(c->ntopics + 1) * sizeof *c->topics);
	t = &c->topics[c->ntopics++];
	memset(t, 0, sizeof *t);
	t->name = ss_xstrdup(name);
	ss_buf_adds(&t->prefix, "{\"topic\":");
	ss_jscan_quote(&t->prefix, name, strlen(name));
	ss_buf_adds(&t->prefix, ",\"partition\":");
}

/* Metadata for each topic: its partitions (a missing topic is an error unless a group
 * waits for it). */
static void
discover(struct consumer *c)
{
	for (int i = 0; i < c->ntopics; i++) {
		struct topic *t = &c->topics[i];
		const rd_kafka_metadata_t *md = ss_kafka_metadata(c->rk, &c->o->k, t->name);
		const rd_kafka_metadata_topic_t *mt = md->topic_cnt > 0 ? &md->topics[0] : NULL;
		if (mt == NULL || mt->err != RD_KAFKA_RESP_ERR_NO_ERROR || mt->partition_cnt == 0) {
			if (c->o->group == NULL || c->o->exit_at_end)
				ss_diag_die(mt != NULL ? ss_kafka_exit_code(mt->err) : SS_EXIT_DATA,
					    "topic %s: %s", t->name, mt != NULL && mt->err ?
					    rd_kafka_err2str(mt->err) : "no partitions");
		} else {
			cons_get_part(t, mt->partition_cnt - 1);
		}
		rd_kafka_metadata_destroy(md);
	}
}

static bool
wanted_partition(const struct ss_consume_opts *o, int32_t id)
{
	if (o->npartitions == 0 && o->npstarts == 0)
		return true;
	for (int i = 0; i < o->npartitions; i++)
		if (o->partitions[i] == id)
			return true;
	for (int i = 0; o->npartitions == 0 && i < o->npstarts; i++)
		if (o->pstarts[i].partition == id)
			return true;
	return false;
}

static void
assign_static(struct consumer *c)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
	rd_kafka_resp_err_t err;

	for (int i = 0; i < c->ntopics; i++) {
		struct topic *t = &c->topics[i];
		for (int j = 0; j < c->o->npartitions; j++)
			if (c->o->partitions[j] >= t->nparts)
				ss_diag_die(SS_EXIT_DATA, "topic %s has no partition %d", t->name,
					    c->o->partitions[j]);
		for (int j = 0; j < t->nparts; j++)
			if (wanted_partition(c->o, j))
				rd_kafka_topic_partition_list_add(l, t->name, j);
	}
	cons_resolve_starts(c, l);
	if ((err = rd_kafka_assign(c->rk, l)) != RD_KAFKA_RESP_ERR_NO_ERROR)
		cons_die_kafka(err, "cannot assign partitions");
	cons_settle_assignment(c, l);
	rd_kafka_topic_partition_list_destroy(l);
}

/* -e with a group: the end offsets of every partition as this run starts. */
static void
snapshot_ends(struct consumer *c)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16), *hi;

	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++)
			rd_kafka_topic_partition_list_add(l, c->topics[i].name, j);
	if (l->cnt > 0) {
		hi = cons_list_offsets(c, l, RD_KAFKA_OFFSET_END);
		for (int i = 0; i < hi->cnt; i++)
			cons_lookup(c, hi->elems[i].topic, hi->elems[i].partition)->end = hi->elems[i].offset;
		rd_kafka_topic_partition_list_destroy(hi);
	}
	rd_kafka_topic_partition_list_destroy(l);
}

static void
subscribe(struct consumer *c)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(c->ntopics);
	rd_kafka_resp_err_t err;

	for (int i = 0; i < c->ntopics; i++)
		rd_kafka_topic_partition_list_add(l, c->topics[i].name, RD_KAFKA_PARTITION_UA);
	if ((err = rd_kafka_subscribe(c->rk, l)) != RD_KAFKA_RESP_ERR_NO_ERROR)
		cons_die_kafka(err, "cannot subscribe");
	rd_kafka_topic_partition_list_destroy(l);
}

static rd_kafka_t *
new_consumer(struct consumer *c)
{
	const struct ss_consume_opts *o = c->o;
	rd_kafka_conf_t *conf = ss_kafka_conf(&o->k, consumer_defaults);
	rd_kafka_t *rk;

	/* librdkafka's consumer API needs a group id even for a static assignment; nothing
	 * joins or commits without -G. */
	ss_kafka_conf_set(conf, "group.id", o->group != NULL ? o->group : "ss-consume");
	if (o->group != NULL) {
		rd_kafka_conf_set_opaque(conf, c);
		rd_kafka_conf_set_rebalance_cb(conf, cons_rebalance_cb);
	}
	rk = ss_kafka_new(RD_KAFKA_CONSUMER, conf);
	rd_kafka_poll_set_consumer(rk);
	return rk;
}

/* The main loop: take records in batches without waiting while they flow; when none is
 * ready, write the output out and do the periodic work, then wait (briefly when output is
 * pending). Batches from the consumer queue serve rebalances and count as polls for
 * max.poll.interval.ms, like rd_kafka_consumer_poll, at a fraction of its cost per record. */
static void
loop(struct consumer *c)
{
	rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(c->rk);
	rd_kafka_message_t *batch[BATCH];
	struct pollfd pfd = {.fd = c->o->out_fd, .events = POLLOUT};
	ssize_t n;

	while (!c->finished && !ss_proc_signal()) {
		n = rd_kafka_consume_batch_queue(q, 0, batch, BATCH);
		if (n <= 0) {
			housekeeping(c);
			if (c->finished)
				break;
			if (ss_outq_pending(c->out) > 0 && ss_outq_nonblocking(c->out)) {
				(void)poll(&pfd, 1, 10);
				n = rd_kafka_consume_batch_queue(q, 0, batch, BATCH);
			} else {
				/* one record: a batch call waits until the batch is full or the
				 * time is up, which would hold back a trickle */
				n = rd_kafka_consume_batch_queue(q, 100, batch, 1);
			}
		}
		for (ssize_t i = 0; i < n; i++) {
			if (!c->finished)
				cons_handle_message(c, batch[i]);
			rd_kafka_message_destroy(batch[i]);
		}
		if (ss_outq_pending(c->out) >= FLUSH_AT)
			housekeeping(c);
	}
	rd_kafka_queue_destroy(q);
}

/* --end-file: the read ended where it was asked to (-e, -c, --until), everything
 * written out. A reader cannot tell that from a crash or a broker outage by the end of
 * its pipe, which looks the same; it can by this file: one line per partition read,
 * with the offset of the last record written in this run (null if none). Written under
 * a temporary name and renamed, so it is whole or absent; removed at start. */
static void
write_end_file(struct consumer *c)
{
	char tmp[4200];
	FILE *f;

	if ((f = ss_wfile_tmp(c->o->end_file, tmp, sizeof tmp)) == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot create a file beside it: %s", c->o->end_file,
			    strerror(errno));
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			const struct part *p = &c->topics[i].parts[j];
			if (!p->assigned)
				continue;
			fwrite(c->topics[i].prefix.data, 1, c->topics[i].prefix.len, f);
			if (p->written >= 0)
				fprintf(f, "%" PRId32 ",\"last\":%" PRId64 "}\n", p->id, p->written);
			else
				fprintf(f, "%" PRId32 ",\"last\":null}\n", p->id);
		}
	if (fclose(f) != 0 || rename(tmp, c->o->end_file) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", c->o->end_file, strerror(errno));
}

static void
free_consumer(struct consumer *c)
{
	for (int i = 0; i < c->ntopics; i++) {
		free(c->topics[i].name);
		free(c->topics[i].parts);
		ss_buf_free(&c->topics[i].prefix);
	}
	free(c->topics);
	cons_clear_stored(c);
	free(c->stored);
	free(c->marks);
}

static ss_avro *
open_codec(const struct ss_consume_opts *o, enum ss_kfmt fmt, const char *schema, const char *what)
{
	struct ss_avro_opts ao = {.schema_file = schema, .registry = o->registry, .what = what,
				  .timeout_ms = o->k.timeout_ms};

	return fmt == SS_KFMT_AVRO ? ss_avro_open(&ao) : NULL;
}

static void
open_codecs(struct consumer *c)
{
	c->key_avro = open_codec(c->o, c->o->key_fmt, c->o->key_schema, "key");
	c->value_avro = open_codec(c->o, c->o->value_fmt, c->o->value_schema, "value");
}

int
ss_consume_run(const struct ss_consume_opts *o)
{
	struct consumer c = {.o = o};

	ss_proc_catch();
	ss_proc_ignore_pipe();
	for (int i = 0; i < o->ntopics; i++)
		if (cons_find_topic(&c, o->topics[i]) == NULL)
			add_topic(&c, o->topics[i]);
	if (o->end_file && unlink(o->end_file) != 0 && errno != ENOENT)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", o->end_file, strerror(errno));
	c.out = ss_outq_new(o->out_fd, "stdout");
	c.feed = dying_feed = ss_feed_publish(o->out_fd, "ss-consume");
	ss_diag_on_die(end_feed_on_die);
	open_codecs(&c);
	c.rk = new_consumer(&c);
	discover(&c);
	if (o->group == NULL) {
		assign_static(&c);
	} else {
		if (o->exit_at_end)
			snapshot_ends(&c);
		subscribe(&c);
	}
	if (o->count == 0)
		c.finished = true;
	/* unasked, only for a bounded run (-e): a stream that never ends has no share */
	c.progress = ss_progress_new(o->exit_at_end || o->progress != SS_PROGRESS_AUTO ? o->progress
							: SS_PROGRESS_OFF, o->out_fd);
	loop(&c);
	if (c.status != SS_EXIT_PIPE)
		cons_drain_all(&c);
	cons_commit(&c, true);
	if (o->end_file && c.finished && c.status == 0 && !ss_proc_signal())
		write_end_file(&c);
	ss_progress_end(c.progress);
	rd_kafka_consumer_close(c.rk);
	rd_kafka_destroy(c.rk);
	ss_outq_free(c.out);
	ss_avro_free(c.key_avro);
	ss_avro_free(c.value_avro);
	free_consumer(&c);
	c.status = ss_proc_status(c.status);
	/* finished only when it read all it was asked to (-e, -c, --until) */
	ss_diag_on_die(NULL);
	dying_feed = NULL;
	ss_feed_end(c.feed, c.status == 0 && !c.finished ? SS_EXIT_TEMPFAIL : c.status);
	return c.status;
}
