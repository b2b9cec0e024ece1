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
 * session and max.poll.interval.ms are served however long the reader stalls. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kafka/avro.h"
#include "kafka/consume.h"
#include "base/diag.h"
#include "stream/wfile.h"
#include "stream/feed.h"
#include "base/jscan.h"
#include "stream/outq.h"
#include "base/proc.h"
#include "db/seeks.h"
#include "base/sstime.h"
#include "db/store.h"

#define HIGH_WATER (8u << 20)
#define LOW_WATER (1u << 20)
#define FLUSH_AT (64u << 10)
#define COMMIT_EVERY_MS 1000
#define SEEKS_EVERY_MS 200
#define PROGRESS_EVERY_MS 250
#define BATCH 1000
#define READER_WAIT_MS 500
#define SINK_WAIT_MS 10000
#define SINK_POLL_MS 50

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

bool
ss_consume_parse_offset(struct ss_consume_opts *o, const char *arg)
{
	char *copy, *item, *save = NULL, *colon, *end;
	bool ok = true;

	if (strchr(arg, ':') == NULL || arg[0] == '@') {
		o->start_given = true;
		return ss_kafka_offset_parse(arg, &o->start.offset, &o->start.time_ms);
	}
	copy = ss_xstrdup(arg);
	for (item = strtok_r(copy, ",", &save); ok && item != NULL; item = strtok_r(NULL, ",", &save)) {
		struct ss_part_start ps = {0};
		long v;
		colon = strchr(item, ':');
		v = colon != NULL ? strtol(item, &end, 10) : -1;
		ok = colon != NULL && end == colon && v >= 0 && v <= INT32_MAX &&
		    ss_kafka_offset_parse(colon + 1, &ps.start.offset, &ps.start.time_ms);
		ps.partition = (int32_t)v;
		o->pstarts = ss_xrealloc(o->pstarts, (size_t)(o->npstarts + 1) * sizeof *o->pstarts);
		o->pstarts[o->npstarts++] = ps;
	}
	free(copy);
	return ok;
}

static void
add_partition(struct ss_consume_opts *o, int32_t p)
{
	o->partitions = ss_xrealloc(o->partitions, (size_t)(o->npartitions + 1) * sizeof *o->partitions);
	o->partitions[o->npartitions++] = p;
}

bool
ss_consume_parse_partitions(struct ss_consume_opts *o, const char *arg)
{
	const char *p = arg;
	char *end;
	long lo, hi;

	do {
		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return false;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi - lo > 100000)
				return false;
		}
		for (long i = lo; i <= hi; i++)
			add_partition(o, (int32_t)i);
		p = end + 1;
	} while (*end == ',');
	return *end == '\0';
}

/* Partitions and topics */

static struct topic *
find_topic(struct consumer *c, const char *name)
{
	for (int i = 0; i < c->ntopics; i++)
		if (strcmp(c->topics[i].name, name) == 0)
			return &c->topics[i];
	return NULL;
}

static struct part *
get_part(struct topic *t, int32_t id)
{
	if (id < 0)
		return NULL;
	if (id >= t->nparts) {
		t->parts = ss_xrealloc(t->parts, (size_t)(id + 1) * sizeof *t->parts);
		for (int i = t->nparts; i <= id; i++)
			t->parts[i] = (struct part){.id = i, .end = -1, .next = -1, .written = -1,
						    .committable = -1, .committed = -1};
		t->nparts = id + 1;
	}
	return &t->parts[id];
}

static struct part *
lookup(struct consumer *c, const char *topic, int32_t id)
{
	struct topic *t = find_topic(c, topic);

	return t != NULL ? get_part(t, id) : NULL;
}

static void
die_kafka(rd_kafka_resp_err_t err, const char *what)
{
	ss_diag_die(ss_kafka_exit_code(err), "%s: %s", what, rd_kafka_err2str(err));
}

/* Pause or resume one partition in librdkafka. */
static void
set_paused(struct consumer *c, const char *topic, struct part *p, bool pause)
{
	rd_kafka_topic_partition_list_t *l;

	if (p->paused == pause)
		return;
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, p->id);
	if (pause)
		rd_kafka_pause_partitions(c->rk, l);
	else
		rd_kafka_resume_partitions(c->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	p->paused = pause;
}

static void
check_finished(struct consumer *c)
{
	if (!c->assigned_once || (!c->o->exit_at_end && !c->o->until_set))
		return;
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (p->assigned && !p->done)
				return;
		}
	c->finished = true;
}

/* Tell the reader where partition p stands, as of the last record written of it. */
static void
feed_part(struct consumer *c, const struct topic *t, const struct part *p, enum ss_feed_pstate state)
{
	ss_feed_set(c->feed, t->name, p->id, p->written, state);
}

static void
mark_done(struct consumer *c, struct topic *t, struct part *p)
{
	feed_part(c, t, p, SS_FEED_ENDED);
	p->done = true;
	set_paused(c, t->name, p, true);
	check_finished(c);
}

/* Start positions */

/* Two files may hold the same topic-partition (an old single file next to the
 * partition files): the largest offset is what was applied last. */
static void
add_stored(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	struct consumer *c = arg;

	for (size_t i = 0; i < c->nstored; i++)
		if (c->stored[i].partition == partition && strcmp(c->stored[i].topic, topic) == 0) {
			if (offset > c->stored[i].offset)
				c->stored[i].offset = offset;
			return;
		}
	c->stored = ss_xrealloc(c->stored, (c->nstored + 1) * sizeof *c->stored);
	c->stored[c->nstored++] = (struct stored){ss_xstrdup(topic), partition, offset};
}

static void
clear_stored(struct consumer *c)
{
	for (size_t i = 0; i < c->nstored; i++)
		free(c->stored[i].topic);
	c->nstored = 0;
}

static void
load_file(struct consumer *c, const char *path)
{
	ss_store *s = ss_store_open(path, SS_STORE_READONLY, SS_STATE_ANY);

	ss_store_offsets_each(s, add_stored, c);
	ss_store_close(s);
}

static bool
is_db_name(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".db") == 0;
}

/* Every *.db file of a directory: ss-cache and ss-asof --state-dir keep one per partition. */
static void
load_dir(struct consumer *c, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];

	if (d == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!is_db_name(de->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (access(path, F_OK) == 0)
			load_file(c, path);
	}
	closedir(d);
}

/* --offsets-from, read again at every assignment: another member's sink may have applied
 * more since the last read. */
static void
load_stored(struct consumer *c)
{
	const char *path = c->o->offsets_from;
	struct stat st;

	clear_stored(c);
	if (stat(path, &st) != 0)
		return; /* no state yet: nothing applied, start per -o */
	if (S_ISDIR(st.st_mode))
		load_dir(c, path);
	else
		load_file(c, path);
}

static bool
stored_offset(const struct consumer *c, const char *topic, int32_t partition, int64_t *offset)
{
	for (size_t i = 0; i < c->nstored; i++)
		if (c->stored[i].partition == partition && strcmp(c->stored[i].topic, topic) == 0) {
			*offset = c->stored[i].offset;
			return true;
		}
	return false;
}

/* The position the options ask for on one partition (before resolving). */
static struct ss_start
wanted_start(const struct consumer *c, const char *topic, int32_t partition)
{
	const struct ss_consume_opts *o = c->o;
	struct ss_start s = o->start;
	int64_t applied;

	if (o->offsets_from != NULL && stored_offset(c, topic, partition, &applied))
		return (struct ss_start){.offset = applied + 1};
	if (o->from_set)
		return (struct ss_start){.offset = SS_OFFSET_TIME, .time_ms = o->from_ms};
	for (int i = 0; i < o->npstarts; i++)
		if (o->pstarts[i].partition == partition)
			return o->pstarts[i].start;
	/* with --offsets-from the state is the truth: what it does not know was not applied */
	if (!o->start_given && o->group != NULL && o->offsets_from == NULL)
		s.offset = RD_KAFKA_OFFSET_STORED;
	return s;
}

/* The offsets of l's partitions at ts (ss_kafka_offsets_at); any error ends the run. */
static rd_kafka_topic_partition_list_t *
list_offsets(struct consumer *c, const rd_kafka_topic_partition_list_t *l, int64_t ts)
{
	rd_kafka_resp_err_t err;
	rd_kafka_topic_partition_list_t *q = ss_kafka_offsets_at(c->rk, l, ts, (int)c->o->k.timeout_ms, &err);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		die_kafka(err, "cannot list offsets");
	for (int i = 0; i < q->cnt; i++)
		if (q->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
			ss_diag_die(ss_kafka_exit_code(q->elems[i].err), "%s [%d]: cannot list offsets: %s",
				    q->elems[i].topic, q->elems[i].partition, rd_kafka_err2str(q->elems[i].err));
	return q;
}

static bool
reset_to_latest(struct consumer *c)
{
	char val[64];
	size_t n = sizeof val;

	if (rd_kafka_conf_get(rd_kafka_conf(c->rk), "auto.offset.reset", val, &n) != RD_KAFKA_CONF_OK)
		return false;
	return strcmp(val, "latest") == 0 || strcmp(val, "largest") == 0 || strcmp(val, "end") == 0;
}

/* One partition's start as an absolute offset, from its low and high watermarks, the
 * group's committed offset and the offset found for a time (-1: none). */
static int64_t
start_offset(struct consumer *c, struct ss_start s, int64_t low, int64_t high, int64_t committed,
	     int64_t for_time)
{
	int64_t at;

	if (s.offset == RD_KAFKA_OFFSET_BEGINNING)
		at = low;
	else if (s.offset == RD_KAFKA_OFFSET_END)
		at = high;
	else if (s.offset == RD_KAFKA_OFFSET_STORED)
		at = committed >= 0 ? committed : reset_to_latest(c) ? high : low;
	else if (s.offset == SS_OFFSET_TIME)
		at = for_time >= 0 ? for_time : high; /* no record at or after the time */
	else if (s.offset <= RD_KAFKA_OFFSET_TAIL_BASE)
		at = high - (RD_KAFKA_OFFSET_TAIL_BASE - s.offset);
	else
		at = s.offset;
	return at < low ? low : at; /* the data before is gone (retention) */
}

/* Resolve every start in l to an absolute offset and set the partitions' state; the -e
 * snapshot is the high watermark now unless snapshot_ends took it earlier. */
static void
resolve_starts(struct consumer *c, rd_kafka_topic_partition_list_t *l)
{
	rd_kafka_topic_partition_list_t *lo, *hi, *times = NULL, *committed = NULL;

	if (l->cnt == 0)
		return;
	if (c->o->offsets_from != NULL)
		load_stored(c);
	lo = list_offsets(c, l, RD_KAFKA_OFFSET_BEGINNING);
	hi = list_offsets(c, l, RD_KAFKA_OFFSET_END);
	for (int i = 0; i < l->cnt; i++) {
		struct ss_start s = wanted_start(c, l->elems[i].topic, l->elems[i].partition);
		if (s.offset == SS_OFFSET_TIME && times == NULL) {
			/* one request for all: partitions without a time ask for their end */
			times = rd_kafka_topic_partition_list_copy(l);
			for (int j = 0; j < times->cnt; j++) {
				struct ss_start sj = wanted_start(c, times->elems[j].topic, times->elems[j].partition);
				times->elems[j].offset = sj.offset == SS_OFFSET_TIME ? sj.time_ms : RD_KAFKA_OFFSET_END;
			}
			rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(c->rk, times, (int)c->o->k.timeout_ms);
			if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
				die_kafka(err, "cannot find offsets for times");
		}
		if (s.offset == RD_KAFKA_OFFSET_STORED && committed == NULL) {
			committed = rd_kafka_topic_partition_list_copy(l);
			rd_kafka_resp_err_t err = rd_kafka_committed(c->rk, committed, (int)c->o->k.timeout_ms);
			if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
				die_kafka(err, "cannot fetch committed offsets");
		}
	}
	for (int i = 0; i < l->cnt; i++) {
		rd_kafka_topic_partition_t *e = &l->elems[i];
		struct ss_start s = wanted_start(c, e->topic, e->partition);
		int64_t low = lo->elems[i].offset, high = hi->elems[i].offset;
		struct part *p = lookup(c, e->topic, e->partition);
		int64_t at = start_offset(c, s, low, high, committed != NULL ? committed->elems[i].offset : -1,
					  times != NULL ? times->elems[i].offset : -1);

		e->offset = at;
		p->assigned = true;
		p->start = p->next = p->committable = at;
		p->committed = -1;
		p->paused = false;
		p->done = false;
		if (c->o->exit_at_end && p->end < 0)
			p->end = high;
	}
	rd_kafka_topic_partition_list_destroy(lo);
	rd_kafka_topic_partition_list_destroy(hi);
	if (times != NULL)
		rd_kafka_topic_partition_list_destroy(times);
	if (committed != NULL)
		rd_kafka_topic_partition_list_destroy(committed);
}

/* After an assignment: pause what is done or held back. */
static void
settle_assignment(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	for (int i = 0; i < l->cnt; i++) {
		struct topic *t = find_topic(c, l->elems[i].topic);
		struct part *p = get_part(t, l->elems[i].partition);
		if (p->end >= 0 && p->next >= p->end) {
			mark_done(c, t, p);
			continue;
		}
		feed_part(c, t, p, SS_FEED_BEHIND);
		if (c->bp_paused)
			set_paused(c, t->name, p, true);
	}
	ss_feed_flush(c->feed, true);
	c->assigned_once = true;
	check_finished(c);
}

/* Commits */

static void
retire_marks(struct consumer *c)
{
	uint64_t written = ss_outq_written(c->out);

	while (c->mlen > 0 && c->marks[c->mhead].pos <= written) {
		struct mark *m = &c->marks[c->mhead];
		m->part->committable = m->next;
		c->mhead = (c->mhead + 1) % c->mcap;
		c->mlen--;
	}
}

static void
push_mark(struct consumer *c, struct part *p, int64_t next)
{
	if (c->mlen == c->mcap) {
		size_t ncap = c->mcap ? c->mcap * 2 : 4096;
		struct mark *n = ss_xmalloc(ncap * sizeof *n);
		for (size_t i = 0; i < c->mlen; i++)
			n[i] = c->marks[(c->mhead + i) % c->mcap];
		free(c->marks);
		c->marks = n;
		c->mcap = ncap;
		c->mhead = 0;
	}
	c->marks[(c->mhead + c->mlen++) % c->mcap] = (struct mark){ss_outq_written(c->out) +
	    ss_outq_pending(c->out), p, next};
}

/* Commit what reached the output; only partitions still assigned (a revoke commits
 * before it clears them). */
static void
commit(struct consumer *c, bool sync)
{
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_resp_err_t err;

	if (c->o->group == NULL)
		return;
	retire_marks(c);
	l = rd_kafka_topic_partition_list_new(8);
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (p->assigned && p->committable > p->committed)
				rd_kafka_topic_partition_list_add(l, c->topics[i].name, p->id)->offset = p->committable;
		}
	if (l->cnt > 0) {
		err = rd_kafka_commit(c->rk, l, !sync);
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !sync) {
			for (int i = 0; i < l->cnt; i++)
				lookup(c, l->elems[i].topic, l->elems[i].partition)->committed = l->elems[i].offset;
		} else {
			ss_diag_warn("commit failed: %s", rd_kafka_err2str(err));
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
}

/* Output */

static void
closed_output(struct consumer *c)
{
	c->status = SS_EXIT_PIPE;
	c->finished = true;
}

static void
drain(struct consumer *c)
{
	if (ss_outq_drain(c->out) == EPIPE)
		closed_output(c);
}

static void
drain_all(struct consumer *c)
{
	if (ss_outq_drain_all(c->out) == EPIPE)
		closed_output(c);
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
		drain(c);
	}
	return ss_outq_pending(c->out);
}

/* Pause every partition while the output holds too much even after a short wait (a
 * stalled reader), resume once it drained. */
static void
flow_control(struct consumer *c)
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
			set_paused(c, c->topics[i].name, p, pause);
			if (pause) /* paused, it may fall behind its log unseen */
				feed_part(c, &c->topics[i], p, SS_FEED_BEHIND);
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
		c->last_topic = find_topic(c, rd_kafka_topic_name(rkt));
		c->last_rkt = rkt;
	}
	return c->last_topic;
}

static void
handle_error(struct consumer *c, const rd_kafka_message_t *m)
{
	struct topic *t = m->rkt != NULL ? topic_of(c, m->rkt) : NULL;
	struct part *p = t != NULL ? get_part(t, m->partition) : NULL;

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (p != NULL && p->assigned && p->end >= 0 && m->offset >= p->end)
			mark_done(c, t, p);
		else if (p != NULL && p->assigned && !p->done && !c->bp_paused)
			feed_part(c, t, p, SS_FEED_CAUGHT_UP);
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

static void
handle_message(struct consumer *c, const rd_kafka_message_t *m)
{
	struct topic *t;
	struct part *p;

	if (m->err) {
		handle_error(c, m);
		return;
	}
	t = topic_of(c, m->rkt);
	p = t != NULL ? get_part(t, m->partition) : NULL;
	if (p == NULL || !p->assigned || p->done || m->offset < p->next)
		return; /* stale, finished, or fetched again after a pause */
	if (p->end >= 0 && m->offset >= p->end) {
		mark_done(c, t, p);
		return;
	}
	if (c->o->until_set && rd_kafka_message_timestamp(m, NULL) > c->o->until_ms) {
		mark_done(c, t, p);
		return;
	}
	const char *why = NULL;
	int rc = put_envelope(c, t, m, &why);
	if (rc != 0 && !bad_record(c, t, m, rc, why))
		return;
	p->next = m->offset + 1;
	p->written = m->offset;
	if (c->o->group != NULL)
		push_mark(c, p, p->next);
	c->nrecords++;
	if (p->end >= 0 && p->next >= p->end)
		mark_done(c, t, p);
	if (c->o->count >= 0 && c->nrecords >= c->o->count)
		c->finished = true;
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
	struct topic *t = find_topic(c, topic);
	struct part *p = t != NULL ? get_part(t, partition) : NULL;
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_error_t *error;

	if (p == NULL || !p->assigned) {
		ss_diag_warn("checkpoint: seek %s [%d] to %lld: partition not assigned here", topic,
			     partition, (long long)offset);
		return;
	}
	p->done = p->end >= 0 && offset >= p->end;
	set_paused(c, t->name, p, p->done || c->bp_paused);
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
	check_finished(c);
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
	drain_all(c);
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
		closed_output(c);
		return;
	}
	drain(c);
	flow_control(c);
	if (now >= c->next_commit) {
		commit(c, false);
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

/* Handing partitions over (--offsets-from) */

/* True when the sink's state records as applied every record written for the
 * partitions of l in this assignment. */
static bool
sink_caught_up(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	int64_t applied;

	load_stored(c);
	for (int i = 0; i < l->cnt; i++) {
		struct part *p = lookup(c, l->elems[i].topic, l->elems[i].partition);
		if (p == NULL || !p->assigned || p->next <= p->start)
			continue;
		if (!stored_offset(c, l->elems[i].topic, l->elems[i].partition, &applied) ||
		    applied < p->next - 1)
			return false;
	}
	return true;
}

/* A sink runs alongside only at the other end of a pipe or socket, and is gone once
 * that end is closed. */
static bool
sink_alive(const struct consumer *c)
{
	struct pollfd pfd = {.fd = c->o->out_fd, .events = POLLOUT};
	struct stat st;

	if (c->status == SS_EXIT_PIPE || fstat(c->o->out_fd, &st) != 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return poll(&pfd, 1, 0) >= 0 && !(pfd.revents & (POLLERR | POLLHUP | POLLNVAL));
}

/* Before revoked partitions go to another member, which starts after the offsets the
 * state records: wait until the sink has applied what was written for them (it commits
 * as soon as its input pauses), so the new owner neither misses nor repeats a record.
 * Bounded: a sink may reject the last record, write another state than --offsets-from
 * reads, or wait itself (ss-asof for a partition lock; it skips what was applied when
 * it gets it). */
static void
await_sink(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	int64_t until = ss_time_mono_ms() + SINK_WAIT_MS;

	while (!sink_caught_up(c, l) && sink_alive(c)) {
		if (ss_time_mono_ms() >= until) {
			ss_diag_warn("rebalance: after %ds, the state still lacks records written for the "
				     "revoked partitions; handing them over", SINK_WAIT_MS / 1000);
			return;
		}
		(void)poll(NULL, 0, SINK_POLL_MS);
	}
}

/* Group rebalances: resolve starts on assignment; on revocation write out everything and
 * commit it before the partitions go to another member. */
static void
rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *l, void *opaque)
{
	struct consumer *c = opaque;
	bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
	rd_kafka_error_t *error = NULL;

	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		for (int i = 0; i < l->cnt; i++)
			if (find_topic(c, l->elems[i].topic) == NULL)
				ss_diag_die(SS_EXIT_DATA, "assigned a topic not asked for: %s", l->elems[i].topic);
		resolve_starts(c, l);
		if (cooperative)
			error = rd_kafka_incremental_assign(rk, l);
		else
			rd_kafka_assign(rk, l);
		settle_assignment(c, l);
	} else {
		drain_all(c);
		if (!rd_kafka_assignment_lost(rk)) {
			commit(c, true);
			if (c->o->offsets_from != NULL)
				await_sink(c, l);
		}
		for (int i = 0; i < l->cnt; i++) {
			struct part *p = lookup(c, l->elems[i].topic, l->elems[i].partition);
			if (p == NULL)
				continue;
			p->assigned = p->paused = false;
			feed_part(c, find_topic(c, l->elems[i].topic), p, SS_FEED_REVOKED);
		}
		ss_feed_flush(c->feed, true);
		if (cooperative)
			error = rd_kafka_incremental_unassign(rk, l);
		else
			rd_kafka_assign(rk, NULL);
		if (!cooperative)
			c->assigned_once = false;
	}
	if (error != NULL) {
		ss_diag_warn("rebalance: %s", rd_kafka_error_string(error));
		rd_kafka_error_destroy(error);
	}
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
			get_part(t, mt->partition_cnt - 1);
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
	resolve_starts(c, l);
	if ((err = rd_kafka_assign(c->rk, l)) != RD_KAFKA_RESP_ERR_NO_ERROR)
		die_kafka(err, "cannot assign partitions");
	settle_assignment(c, l);
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
		hi = list_offsets(c, l, RD_KAFKA_OFFSET_END);
		for (int i = 0; i < hi->cnt; i++)
			lookup(c, hi->elems[i].topic, hi->elems[i].partition)->end = hi->elems[i].offset;
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
		die_kafka(err, "cannot subscribe");
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
		rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
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
				handle_message(c, batch[i]);
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
	clear_stored(c);
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
		if (find_topic(&c, o->topics[i]) == NULL)
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
		drain_all(&c);
	commit(&c, true);
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
