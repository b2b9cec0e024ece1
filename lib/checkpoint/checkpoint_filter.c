/* checkpoint_filter: ss-checkpoint's heartbeat and pulse as pass-through filters: records
 * in, the same records out, committed as they go (ss_checkpoint_run_heartbeat, _pulse). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "base/diag.h"
#include "base/expr.h"
#include "base/jscan.h"
#include "base/proc.h"
#include "base/sstime.h"
#include "stream/envelope.h"
#include "stream/feed.h"
#include "stream/ndjson.h"
#include "stream/partwm.h"
#include "stream/tpindex.h"
#include "stream/wfile.h"

/* Commit at least this often while records stream in without a pause, so the other
 * process sees heartbeats and markers promptly; a pause in the input commits at once. */
#define COMMIT_EVERY_NS (50 * 1000000LL)
/* How often a paused pulse looks at the heartbeats. */
#define POLL_MS 150
/* How long a filter waiting for input sleeps before it looks at the time (a partition
 * turns idle) and at what the input's writer says. */
#define WAIT_MS 100

/* What heartbeat and pulse share: records in, the same records out, their event time,
 * and the partitions of the input: what its writer says of them (lib/stream/feed.h), told on
 * to the reader of the output, who reads the same records. */
struct flow {
	ss_reader *in;
	ss_writer *out;
	ss_expr *ts;
	enum ss_tsunit unit;
	struct ss_errpolicy *onerror;
	int64_t committed; /* monotonic time of the last commit */
	void (*commit)(void *);
	void (*parts)(void *, const struct ss_feed_part *, size_t);
	bool (*tick)(void *); /* between records; true when the pulse just paused */
	void *arg;
	ss_feed_in *feed;          /* the input's writer, when the input is a pipe */
	struct ss_feed_part *file; /* the partitions of a regular file, read beforehand */
	size_t nfile;
	struct ss_tpindex fileindex; /* where each is in file */
	bool started, told, blind_told;
	int expect;        /* --partitions */
	const char *blind; /* what a writer that does not tell costs, for the message */
	/* the last good record's top-level members, noted while it was validated: its time
	 * and envelope are found among them, not by validating it again */
	struct ss_jmember members[SS_JMEMBERS_NOTED];
	size_t nmembers;
};

/* What the reader of the output is told; here for the exit on an error. */
static ss_feed_out *relay;

static void
relay_die(int code)
{
	ss_feed_end(relay, code);
	relay = NULL;
}

static void
flow_commit(void *arg)
{
	struct flow *f = arg;

	ss_writer_flush(f->out); /* records first: state never runs ahead of the output */
	f->commit(f->arg);
	f->committed = ss_time_mono();
}

static void
flow_maybe_commit(struct flow *f)
{
	if (ss_time_mono() - f->committed >= COMMIT_EVERY_NS)
		flow_commit(f);
}

/* What the input's writer says of its partitions, to the library and to our reader,
 * when it said more (now: look at once; all: whether it said more or not). */
static void
flow_parts(struct flow *f, bool now, bool all)
{
	const struct ss_feed_part *parts = f->file;
	size_t n = f->nfile;

	if (f->feed != NULL && ss_feed_refresh(f->feed, now))
		all = true;
	if (all) {
		if (f->feed != NULL)
			parts = ss_feed_parts(f->feed, &n);
		f->told = n > 0;
		ss_feed_relay(relay, parts, n);
		f->parts(f->arg, parts, n);
	}
	ss_feed_flush(relay, now);
}

/* Without a writer that tells, the partitions are those heard from: never silently. */
static void
flow_blind(struct flow *f)
{
	if (f->told || f->expect > 0 || f->blind_told)
		return;
	f->blind_told = true;
	ss_diag_warn("%s: its records carry Kafka partitions, but nothing says which partitions it "
	    "has (its writer is not ss-consume on this host): the marker is the lowest over the "
	    "partitions heard from, and a backlog read one partition after another can %s; "
	    "--partitions N waits for N", ss_reader_name(f->in), f->blind);
}

/* A record was read, to be passed on: the first one makes us look at what its writer
 * says before our reader sees it, so that our reader knows the partitions from its
 * first record on. env: the record's envelope, or NULL. */
static void
flow_record(struct flow *f, const struct ss_envelope *env)
{
	flow_parts(f, !f->started, !f->started);
	f->started = true;
	if (env != NULL)
		flow_blind(f);
}

/* A bad record: everything before it is passed on and committed, then the policy
 * decides (fail exits 1 naming the line; skip and dead-letter go on). */
static void
flow_reject(struct flow *f, const char *line, size_t len, const char *why)
{
	flow_commit(f);
	ss_errpolicy_reject(f->onerror, ss_reader_name(f->in), ss_reader_lineno(f->in), line,
	    len, why);
}

/* The record's event time, or false with the reason in why. */
static bool
record_time(struct flow *f, const char *line, size_t len, int64_t *ts, char *why, size_t size)
{
	const char *raw, *w = NULL;
	char msg[256];
	size_t rlen;
	ss_rec rec;
	bool ok;

	ss_rec_init(&rec, line, len);
	ss_rec_set_members(&rec, f->members, f->nmembers);
	if (ss_expr_raw(f->ts, &rec, &raw, &rlen)) {
		ok = ss_time_from_raw(raw, rlen, f->unit, ts, &w);
	} else {
		jv v = ss_expr_eval(f->ts, &rec);

		if (!jv_is_valid(v)) {
			ok = false;
			w = ss_expr_errmsg(v, msg, sizeof msg);
		} else {
			ok = ss_time_from_jv(jv_copy(v), f->unit, ts, &w);
			jv_free(v);
		}
	}
	ss_rec_done(&rec);
	if (!ok)
		snprintf(why, size, "--ts %s: %s", ss_expr_text(f->ts), w ? w : "not a time");
	return ok;
}

/* Nothing to read now: commit, look at the time and at what the writer says, and wait
 * a little for input. */
static void
flow_wait(struct flow *f)
{
	struct pollfd pfd = { .fd = ss_reader_fd(f->in), .events = POLLIN };

	flow_commit(f);
	flow_parts(f, false, false);
	if (f->tick != NULL && f->tick(f->arg)) {
		flow_commit(f); /* the pulse paused: the caller waits for the recovery */
		return;
	}
	if (poll(&pfd, 1, WAIT_MS) < 0 && errno != EINTR)
		ss_diag_die(SS_EXIT_DATA, "poll: %s", strerror(errno));
}

/* Next good record and its time: 1; 0 at the end of input; -1 when none is there yet
 * (flow_wait has waited a little). */
static int
flow_next(struct flow *f, const char **line, size_t *len, int64_t *ts)
{
	const char *why;
	char msg[512];
	int rc;

	while ((rc = ss_reader_try_next(f->in, line, len)) == 1) {
		if (ss_ndjson_blank(*line, *len))
			continue;
		if (!ss_jscan_document_members(*line, *line + *len, f->members, SS_JMEMBERS_NOTED, &f->nmembers, &why))
			flow_reject(f, *line, *len, why);
		else if (!record_time(f, *line, *len, ts, msg, sizeof msg))
			flow_reject(f, *line, *len, msg);
		else
			return 1;
	}
	if (rc < 0)
		flow_wait(f);
	return rc;
}

static void
flow_pass(struct flow *f, const char *line, size_t len)
{
	ss_writer_write(f->out, line, len);
	ss_writer_putc(f->out, '\n');
}

static bool
is_file_part(const void *owner, size_t at, const char *topic, int32_t partition)
{
	const struct ss_feed_part *p = &((const struct flow *)owner)->file[at];

	return p->partition == partition && strcmp(p->topic, topic) == 0;
}

static struct ss_feed_part *
file_part(struct flow *f, const struct ss_envelope *env, size_t *cap)
{
	size_t at = ss_tpindex_find(&f->fileindex, env->topic, env->partition, is_file_part, f);

	if (at != SIZE_MAX)
		return &f->file[at];
	if (f->nfile == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		f->file = ss_xrealloc(f->file, *cap * sizeof *f->file);
	}
	f->file[f->nfile] = (struct ss_feed_part){ .partition = env->partition,
	    .state = SS_FEED_ENDED };
	snprintf(f->file[f->nfile].topic, sizeof f->file[f->nfile].topic, "%s", env->topic);
	ss_tpindex_add(&f->fileindex, env->topic, env->partition, f->nfile);
	return &f->file[f->nfile++];
}

/* A regular file is all there: its partitions are those of its records, each ended as
 * of its last record in the file, as a writer that tells would say. Bad lines are left
 * for the real pass to report. */
static void
flow_scan(struct flow *f)
{
	struct stat st;
	struct ss_envelope env;
	const char *line;
	size_t len, cap = 0;
	off_t at = lseek(0, 0, SEEK_CUR);
	ss_reader *r;

	if (fstat(0, &st) != 0 || !S_ISREG(st.st_mode) || at < 0)
		return;
	r = ss_reader_new(0, "<stdin>", false);
	while (ss_reader_next(r, &line, &len) == 1)
		if (ss_envelope_get(line, len, &env))
			file_part(f, &env, &cap)->last = env.offset;
	ss_reader_free(r);
	if (lseek(0, at, SEEK_SET) != at)
		ss_diag_die(SS_EXIT_DATA, "<stdin>: seek: %s", strerror(errno));
}

/* Before the state file is opened: a bad expression leaves no file behind. Our reader
 * hears of us before our first record. SIGINT and SIGTERM stop the flow between
 * records (flow_stopped). */
static void
flow_init(struct flow *f, const char *ts, enum ss_tsunit unit)
{
	ss_proc_catch();
	f->ts = ss_expr_compile(ts, "--ts");
	f->unit = unit;
	flow_scan(f);
	f->in = ss_reader_open("-");
	f->out = ss_writer_new(1, "<stdout>");
	f->feed = ss_feed_find(0);
	relay = ss_feed_publish(1, "ss-checkpoint");
	ss_diag_on_die(relay_die);
}

static void
flow_start(struct flow *f, void (*commit)(void *), void *arg)
{
	f->commit = commit;
	f->arg = arg;
	f->committed = ss_time_mono();
	if (f->nfile > 0)
		flow_parts(f, true, true);
}

/* The end of the input: what its writer says last (every partition ended, when it
 * finished), to the library and to our reader. */
static void
flow_last(struct flow *f)
{
	flow_parts(f, true, true);
}

/* A signal came: the records passed so far are committed, no more are read. */
static bool
flow_stopped(void)
{
	return ss_proc_signal() != 0;
}

/* Commit, and tell our reader how the input ended: as its writer did (a writer that
 * failed, that failure), or finished when nothing says; after a signal, 128+N. */
static void
flow_end(struct flow *f)
{
	int status = 0;

	flow_commit(f);
	if (flow_stopped()) {
		status = ss_proc_status(0);
	} else if (ss_feed_state(f->feed, &status) == SS_FEED_FAILED) {
		if (status == 0)
			ss_diag_warn("%s: its writer was killed before it finished", ss_reader_name(f->in));
		else
			ss_diag_warn("%s: its writer failed (exit %d)", ss_reader_name(f->in), status);
		status = status ? status : SS_EXIT_TEMPFAIL;
	} else {
		status = 0;
	}
	ss_diag_on_die(NULL);
	ss_feed_end(relay, status);
	relay = NULL;
	ss_feed_close(f->feed, !flow_stopped()); /* read to its end unless stopped */
	f->feed = NULL;
}

static void
flow_free(struct flow *f)
{
	ss_writer_free(f->out);
	ss_reader_free(f->in);
	ss_expr_free(f->ts);
	ss_errpolicy_close(f->onerror);
	free(f->file);
	ss_tpindex_free(&f->fileindex);
}

void
ss_checkpoint_filter_init(struct ss_checkpoint_filter *o)
{
	*o = (struct ss_checkpoint_filter){ .ts = ".timestamp", .unit = SS_TS_S,
	    .parts = { .idle = SS_DEFAULT_IDLE } };
	ss_errpolicy_parse(&o->onerror, "fail");
}

/* ---- heartbeat ---- */

static void
hb_commit(void *hb)
{
	ss_checkpoint_hb_commit(hb);
}

static void
hb_parts(void *hb, const struct ss_feed_part *parts, size_t n)
{
	ss_checkpoint_hb_parts(hb, parts, n);
}

/* Each record passed on, then beaten. */
static void
hb_run(struct flow *f, ss_checkpoint_hb *hb)
{
	struct ss_envelope env;
	const char *line;
	int64_t t;
	size_t len;
	int rc;

	while (!flow_stopped() && (rc = flow_next(f, &line, &len, &t)) != 0) {
		if (rc < 0)
			continue;
		bool has_env = ss_envelope_get_members(line, len, f->members, f->nmembers, &env);
		flow_record(f, has_env ? &env : NULL);
		flow_pass(f, line, len);
		ss_checkpoint_hb_beat(hb, t, has_env ? &env : NULL);
		flow_maybe_commit(f);
	}
	if (!flow_stopped())
		flow_last(f);
}

int
ss_checkpoint_run_heartbeat(const char *db_path, const char *checkpoint,
    const char *dependency, struct ss_checkpoint_filter *o)
{
	struct flow f = { .parts = hb_parts, .onerror = &o->onerror, .expect = o->parts.expect,
	    .blind = "make the dependency look fresher than it is" };
	ss_checkpoint_hb *hb;

	flow_init(&f, o->ts, o->unit);
	hb = ss_checkpoint_hb_open(db_path, checkpoint, dependency, &o->parts);
	flow_start(&f, hb_commit, hb);
	hb_run(&f, hb);
	flow_end(&f);
	ss_checkpoint_hb_close(hb);
	flow_free(&f);
	return ss_proc_status(SS_EXIT_OK);
}

/* ---- pulse ---- */

struct pulse {
	const char *checkpoint, *on_downtime, *on_recovery;
	FILE *events;
	const char *events_name;
};

static void
pulse_event(const char *kind, const char *dependency, const char *json, void *arg)
{
	struct pulse *pl = arg;
	const char *cmd = strcmp(kind, "downtime") == 0 ? pl->on_downtime : pl->on_recovery;
	int rc;

	if (fprintf(pl->events, "%s\n", json) < 0 || fflush(pl->events) == EOF)
		ss_diag_warn("%s: %s", pl->events_name, strerror(errno));
	if (cmd && (rc = ss_checkpoint_run_hook(cmd, kind, pl->checkpoint, dependency, json)))
		ss_diag_warn("--on-%s: exit status %d", kind, rc);
}

static void
pulse_commit(void *p)
{
	ss_checkpoint_pulse_commit(p);
}

static void
pulse_parts(void *p, const struct ss_feed_part *parts, size_t n)
{
	ss_checkpoint_pulse_parts(p, parts, n);
}

static bool
pulse_tick(void *p)
{
	return ss_checkpoint_pulse_tick(p);
}

/* Paused: read nothing, so the pipe fills and the producer upstream waits; the records
 * behind the pause pass after recovery, in order. Our reader still hears what the
 * input's writer says meanwhile. */
static void
pulse_wait(struct flow *f, ss_checkpoint_pulse *p)
{
	while (!flow_stopped() && ss_checkpoint_pulse_paused(p) && !ss_checkpoint_pulse_poll(p)) {
		flow_parts(f, false, false);
		ss_time_sleep_ms(POLL_MS);
	}
}

static void
pulse_run(struct flow *f, ss_checkpoint_pulse *p)
{
	struct ss_envelope env;
	const char *line;
	size_t len;
	int64_t t;
	int rc;

	for (;;) {
		pulse_wait(f, p);
		if (flow_stopped() || (rc = flow_next(f, &line, &len, &t)) == 0)
			break;
		if (rc < 0)
			continue;
		bool has_env = ss_envelope_get_members(line, len, f->members, f->nmembers, &env);
		flow_record(f, has_env ? &env : NULL);
		flow_pass(f, line, len);
		if (ss_checkpoint_pulse_record(p, t, has_env ? &env : NULL))
			flow_commit(f); /* the record that tripped it goes out, then we pause */
		else
			flow_maybe_commit(f);
	}
	if (flow_stopped())
		return;
	/* all the input's writer says at its end: every partition ended, when it finished,
	 * so the stream is as far as its last record; a downtime then pauses as any other */
	flow_last(f);
	if (ss_checkpoint_pulse_tick(p)) {
		flow_commit(f);
		pulse_wait(f, p);
	}
}

int
ss_checkpoint_run_pulse(const char *db_path, const char *checkpoint,
    const struct ss_checkpoint_dep *deps, int ndeps, struct ss_checkpoint_filter *o,
    const struct ss_checkpoint_events *ev)
{
	struct pulse pl = { .checkpoint = checkpoint, .on_downtime = ev->on_downtime,
	    .on_recovery = ev->on_recovery, .events = stderr, .events_name = "<stderr>" };
	struct flow f = { .parts = pulse_parts, .tick = pulse_tick, .onerror = &o->onerror,
	    .expect = o->parts.expect, .blind = "raise a downtime that never happened" };
	ss_checkpoint_pulse *p;

	if (ev->file && !(pl.events = ss_wfile_append(pl.events_name = ev->file)))
		ss_diag_die(SS_EXIT_DATA, "%s: %s", ev->file, ss_wfile_strerror(errno));
	flow_init(&f, o->ts, o->unit);
	p = ss_checkpoint_pulse_open(db_path, checkpoint, deps, ndeps, &o->parts, pulse_event, &pl);
	flow_start(&f, pulse_commit, p);
	pulse_run(&f, p);
	flow_end(&f);
	ss_checkpoint_pulse_close(p);
	flow_free(&f);
	if (ev->file)
		fclose(pl.events);
	return ss_proc_status(SS_EXIT_OK);
}
