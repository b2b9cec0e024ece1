/* Feeding the join. A right input that is a regular file is complete, so it is read
 * before any left record is answered: without a state, indexed whole (asof_index.c),
 * or, when both files are in event-time order, merged with the left in constant memory;
 * with a state, applied whole first. Streams are read as data arrives, with poll(),
 * never blocking on one side while the other has data, and what their writers tell
 * beside them (lib/stream/feed.h) is taken in. One input carrying both sides is read in its
 * own order, or, a file, right records first (at the end, with --acks, the router waits
 * for the deliverer: ss_asof_await_delivery). SIGINT and SIGTERM end a run between records (ss_proc_exit_if_signalled):
 * the exit flushes the results and commits the state (the exit handler), held records
 * stay held; 128+N. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/proc.h"

enum { BATCH = 256 }; /* lines taken from one side before looking at the other */

/* Was a good record read or parsed? A bad one that ends the run (--on-error fail) ends
 * it here: the held records go out before it is reported (asof_fail exits). */
static bool
got(ss_asof *j, enum asof_got g)
{
	if (g == ASOF_GOT_FATAL)
		asof_fail(j);
	return g == ASOF_GOT_RECORD;
}

static bool
regular(ss_reader *r)
{
	struct stat st;

	return fstat(ss_reader_fd(r), &st) == 0 && S_ISREG(st.st_mode);
}

static void
stop_ahead(ss_asof *j)
{
	asof_ahead_stop(j->lahead);
	asof_ahead_stop(j->rahead);
	j->lahead = j->rahead = NULL;
	if (j->one)
		j->one->retired = NULL; /* (records pruned from now on are freed at once) */
	asof_retired_clear(&j->retired);
	free(j->retired.v);
	j->retired = (struct asof_retired){0};
}

/* A left record is about to be answered: exit 1 if the right input had no record (every
 * answer would be null) unless --allow-empty-right. */
static void
check_right_empty(ss_asof *j)
{
	if (j->cx->right_empty && !j->o.allow_empty_right)
		ss_diag_die(SS_EXIT_DATA, "%s: ended without a record: every left record would be joined with "
			    "null (did its consumer fail? --allow-empty-right accepts it)", j->cx->rname);
}

/* With --state-dir: the partitions the right input's writer read to their end have
 * their held records finished, also those of partitions with no record in this run. */
static void
finish_ended_partitions(ss_asof *j)
{
	size_t n;
	const struct ss_feed_part *fp = ss_feed_parts(j->cx->rfeed, &n);

	for (size_t i = 0; j->dir && i < n; i++)
		if (fp[i].state == SS_FEED_ENDED && (j->o.right_topic == NULL || strcmp(fp[i].topic, j->o.right_topic) == 0))
			asof_partition_ended(j, fp[i].partition);
}

/* The end of the right input: with nothing in it, no left record may be answered. */
static void
right_ended(ss_asof *j)
{
	struct asof_counters c;
	size_t held;

	asof_totals(j, &c, &held);
	j->cx->right_empty = c.right == 0 && c.replayed == 0 && c.late == 0 && !j->cx->had_history;
	if (held > 0)
		check_right_empty(j);
	finish_ended_partitions(j);
	asof_right_end(j);
}

/* An input's writer that tells how it ended (ss-consume) and failed: its end is not the
 * end of its stream. Exit 75 (the exit handler commits the state). */
static void
writer_check(ss_feed_in *feed, const char *name, const char *consequence)
{
	int status;

	ss_feed_refresh(feed, true);
	if (ss_feed_state(feed, &status) != SS_FEED_FAILED)
		return;
	if (status == 0)
		ss_diag_die(SS_EXIT_TEMPFAIL, "%s: its writer was killed before it finished: %s", name, consequence);
	ss_diag_die(SS_EXIT_TEMPFAIL, "%s: its writer failed (exit %d): %s", name, status, consequence);
}

/* Are the first max lines of a file (all of it: max 0) in event-time order? Times only:
 * bad lines are left for the real pass to report. */
static bool
in_order(ss_asof *j, ss_reader *rd, bool left, uint64_t max)
{
	const char *line;
	size_t len;
	int64_t t, prev = INT64_MIN;
	bool sorted = true;

	while (sorted && (max == 0 || ss_reader_lineno(rd) < max) && ss_reader_next(rd, &line, &len) == 1) {
		if (!asof_peek_time(j, left, line, len, &t))
			continue;
		sorted = t >= prev;
		prev = t;
	}
	ss_reader_rewind(rd);
	return sorted;
}

/* A merge needs the right file in order (checked whole) and the left in order (a
 * left record out of order turns the merge into an index at once); a left file that is
 * out of order from its start is not worth checking the right for. */
static bool
mergeable(ss_asof *j, ss_reader *l, ss_reader *r)
{
	bool sorted;

	if (!in_order(j, l, true, 1024))
		return false;
	return asof_ahead_in_order(j, r, false, &sorted) ? sorted : in_order(j, r, false, 0);
}

/* The left input ended: if its writer failed, the run goes on with what came (those
 * answers are exact) and exits 75 at its end. */
static void
left_ended(ss_asof *j)
{
	int status;

	j->left_eof = true;
	ss_feed_refresh(j->cx->lfeed, true);
	if (ss_feed_state(j->cx->lfeed, &status) == SS_FEED_FAILED)
		j->cx->left_failed = status ? status : -1;
}

enum { ANSWER_BATCH = 32 }; /* left records whose lookups overlap in memory */

struct left_batch {
	struct asof_in in[ANSWER_BATCH];
	ss_buf raw; /* their lines: the reader may move its buffer between them */
	size_t n;
};

/* The matched right records lie anywhere in the right file: ask for their bytes all
 * at once, so that the cache misses of a batch overlap instead of each stalling its copy
 * into the output. */
static void
prefetch_matches(const struct asof_right *const *match, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (match[i] != NULL)
			asof_right_prefetch(match[i]);
}

/* Answer the left records of a batch from the index, in order. */
static void
answer_batch(ss_asof *j, struct left_batch *b)
{
	struct asof_right buf[ANSWER_BATCH][2];
	const struct asof_right *match[ANSWER_BATCH];
	size_t off = 0;

	for (size_t i = 0; i < b->n; i++) {
		b->in[i].raw = b->raw.data + off;
		off += b->in[i].len;
	}
	asof_index_match_batch(j->index, &j->o, b->in, b->n, buf, match);
	prefetch_matches(match, b->n);
	for (size_t i = 0; i < b->n; i++)
		asof_join_answer(j->one, &b->in[i], match[i]);
	b->n = 0;
	ss_buf_reset(&b->raw);
}

/* The left record just parsed into the batch's next slot joins it (its line copied:
 * the reader may move its buffer); a full batch is answered. */
static void
batch_take(ss_asof *j, struct left_batch *b, const char *line, size_t len)
{
	check_right_empty(j);
	ss_buf_add(&b->raw, line, len);
	if (++b->n == ANSWER_BATCH)
		answer_batch(j, b);
}

/* got() for the records of a batch: a bad one that ends the run ends it after the
 * records before it are answered (--on-error fail passes on everything before it). */
static bool
batch_got(ss_asof *j, struct left_batch *b, enum asof_got g)
{
	if (g == ASOF_GOT_FATAL)
		answer_batch(j, b);
	return got(j, g);
}

/* The rest of the left input, each record answered at once from the index (in
 * batches while records are ready, so that their lookups overlap). */
static void
answer_left(ss_asof *j, ss_reader *l)
{
	struct pollfd p = {.fd = ss_reader_fd(l), .events = POLLIN};
	struct left_batch *b = calloc(1, sizeof *b);
	const char *line;
	size_t len;
	int rc;

	if (b == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	if (j->lahead == NULL)
		j->lahead = asof_ahead_start(j, l, true, false);
	if (j->lahead == NULL)
		j->lahead = asof_ahead_live(j, l, true); /* a pipe */
	while (j->lahead != NULL) {
		ss_proc_exit_if_signalled();
		asof_progress(j);
		struct asof_in *in = &b->in[b->n];
		enum asof_got g = asof_ahead_next(j, j->lahead, true, in);
		if (g == ASOF_GOT_WAIT) {
			answer_batch(j, b);
			asof_idle(j); /* a left pipe with nothing ready: results out now */
			p.fd = asof_ahead_wake_fd(j->lahead);
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				ss_diag_die(SS_EXIT_DATA, "poll: %s", strerror(errno));
			continue;
		}
		if (!batch_got(j, b, g))
			break;
		batch_take(j, b, in->raw, in->len);
	}
	while (j->lahead == NULL && (rc = ss_reader_try_next(l, &line, &len)) != 0) {
		ss_proc_exit_if_signalled();
		if (rc < 0) {
			answer_batch(j, b);
			asof_idle(j); /* a left pipe with nothing ready: results out now */
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				ss_diag_die(SS_EXIT_DATA, "poll: %s", strerror(errno));
			continue;
		}
		struct asof_in *in = &b->in[b->n];
		asof_progress(j);
		if (!batch_got(j, b, asof_parse(j, true, line, len, ss_reader_lineno(l), in)))
			continue;
		batch_take(j, b, line, len);
	}
	answer_batch(j, b);
	for (size_t i = 0; i < ANSWER_BATCH; i++)
		ss_buf_free(&b->in[i].key);
	ss_buf_free(&b->raw);
	free(b);
	left_ended(j);
}

/* Index the right file whole, then answer the left. In the middle of a merge, the right
 * lines read so far were reported already; the held records are answered first. */
static void
run_indexed(ss_asof *j, ss_reader *l, ss_reader *r, bool have_left)
{
	j->rquiet = j->rahead ? asof_ahead_lineno(j->rahead) : ss_reader_lineno(r);
	ss_reader_rewind(r);
	free(j->rin.hist); /* a record read, not applied: the index reads it again */
	j->rin.hist = NULL;
	asof_ahead_stop(j->rahead);
	j->rahead = asof_ahead_start(j, r, false, false);
	if ((j->index = asof_index_build(j, r)) == NULL)
		asof_fail(j); /* a bad record in it ends the run */
	asof_ahead_stop(j->rahead);
	j->rahead = NULL;
	j->right_eof = true;
	j->cx->right_empty = asof_index_records(j->index) == 0;
	if (asof_join_holds(j->one) || have_left)
		check_right_empty(j);
	asof_join_indexed(j->one, j->index);
	if (have_left) {
		struct asof_right buf[2];
		asof_join_answer(j->one, &j->lin, asof_index_match(j->index, &j->o, &j->lin, buf));
	}
	answer_left(j, l);
}

/* Both inputs are files: always apply the side whose next record is older (the right
 * one on ties, so a left record sees the right records of its own time). In a batch
 * (the right file known to be in order) a left record behind an earlier one could need
 * right history already dropped: the right file is indexed whole instead. */
static void
run_merged(ss_asof *j, ss_reader *l, ss_reader *r)
{
	bool have_l = false, have_r = false;
	int64_t lmax = INT64_MIN;

	j->lahead = asof_ahead_start(j, l, true, false);
	j->rahead = asof_ahead_start(j, r, false, true);
	if (j->rahead != NULL)
		j->one->retired = &j->retired; /* (a batch has the one join) */

	for (;;) {
		ss_proc_exit_if_signalled();
		asof_progress(j);
		if (!have_l && !j->left_eof && !(have_l = got(j, asof_next_record(j, l, true, &j->lin))))
			j->left_eof = true;
		else if (have_l)
			asof_join_prefetch(j->one, &j->lin);
		if (have_l && j->batch && j->lin.t < lmax) {
			run_indexed(j, l, r, true);
			return;
		}
		if (have_l && j->lin.t > lmax)
			lmax = j->lin.t;
		if (!have_r && !j->right_eof && !(have_r = got(j, asof_next_record(j, r, false, &j->rin))))
			right_ended(j);
		else if (have_r)
			asof_join_prefetch(j->one, &j->rin);
		if (asof_done(j) || (!have_l && !have_r))
			return;
		if (have_r && (!have_l || j->rin.t <= j->lin.t)) {
			asof_right(j, &j->rin);
			have_r = false;
		} else {
			check_right_empty(j);
			/* the right file is in time order: a left record before its next
			 * record is answered now, not held until that one is applied */
			if (j->batch && have_r)
				asof_wm_promise(j->one, j->rin.t);
			asof_left(j, &j->lin);
			have_l = false;
		}
	}
}

/* One line of the --right-end-file, {"topic","partition","last"}: is its last record
 * applied? With --state-dir its partition's held records are finished at the end. */
static bool
end_line_applied(ss_asof *j, const char *line)
{
	jv v = jv_parse(line);
	jv topic = jv_object_get(jv_copy(v), jv_string("topic"));
	jv part = jv_object_get(jv_copy(v), jv_string("partition"));
	jv last = jv_object_get(v, jv_string("last"));
	struct ss_envelope env;
	bool ok = jv_get_kind(topic) == JV_KIND_STRING && jv_get_kind(part) == JV_KIND_NUMBER;

	ok = ok && strlen(jv_string_value(topic)) > 0 && strlen(jv_string_value(topic)) < sizeof env.topic;
	if (ok) {
		strcpy(env.topic, jv_string_value(topic));
		env.partition = (int32_t)jv_number_value(part);
		asof_partition_ended(j, env.partition);
		if (jv_get_kind(last) == JV_KIND_NUMBER) {
			env.offset = (int64_t)jv_number_value(last);
			ok = asof_applied(j, &env);
		}
	}
	jv_free(topic);
	jv_free(part);
	jv_free(last);
	return ok;
}

/* Did the right stream end as --right-end-file says? The file exists, and every record
 * it names as the last its consumer wrote is applied: a file a killed consumer's
 * predecessor left (one removes it at start, and may be killed before) counts only if
 * the join has all that predecessor read. */
static bool
right_end_confirmed(ss_asof *j)
{
	FILE *f = fopen(j->o.right_end_file, "r");
	char buf[1024];
	bool ok = f != NULL;

	while (ok && fgets(buf, sizeof buf, f) != NULL)
		ok = end_line_applied(j, buf);
	if (f != NULL)
		fclose(f);
	return ok;
}

/* A consumer killed, or stopped by a broker outage, closes its pipe just as one that
 * finished does. With --right-end exit the end of the right pipe before the left's, and
 * with --right-end-file an end without that file (which ss-consume --end-file writes
 * when it read all it was asked to), are not taken for the end of the right stream:
 * held records are not answered with what is known, but kept in the state for the next
 * run (exit 75 commits it). */
static void
right_pipe_ended(ss_asof *j)
{
	if (j->o.right_end_exit && !j->left_eof)
		ss_diag_die(SS_EXIT_TEMPFAIL, "%s: ended before %s: held records stay in the state; run again to resume",
			    j->cx->rname, j->cx->lname);
	if (j->o.right_end_file && !right_end_confirmed(j))
		ss_diag_die(SS_EXIT_TEMPFAIL, "%s: ended without %s (its consumer did not finish): held records "
			    "stay in the state; run again to resume", j->cx->rname, j->o.right_end_file);
	writer_check(j->cx->rfeed, j->cx->rname, "held records are not answered");
	right_ended(j);
}

/* A parsed record to its side of the join. */
static void
apply(ss_asof *j, bool left)
{
	if (left) {
		check_right_empty(j);
		asof_left(j, &j->lin);
	} else {
		asof_right(j, &j->rin);
	}
}

/* The next ready line of one side, parsed into *g (ASOF_GOT_NONE for a rejected one): 1,
 * or 0 at its end, -1 when none is ready (as ss_reader_try_next). */
static int
live_next(ss_asof *j, ss_reader *rd, bool left, enum asof_got *g)
{
	struct asof_ahead *a = left ? j->lahead : j->rahead;
	struct asof_in *in = left ? &j->lin : &j->rin;
	const char *line;
	size_t len;

	if (a != NULL) {
		*g = asof_ahead_next(j, a, left, in);
		return *g == ASOF_GOT_WAIT ? -1 : *g == ASOF_GOT_NONE ? 0 : 1;
	}
	int rc = ss_reader_try_next(rd, &line, &len);
	if (rc == 1)
		*g = asof_parse(j, left, line, len, ss_reader_lineno(rd), in);
	return rc;
}

/* The next good record of one side into j->lin or j->rin; false when none is ready, or
 * the side ended (*ended set). */
static bool
take_live(ss_asof *j, ss_reader *rd, bool left, bool *ended)
{
	enum asof_got g = ASOF_GOT_NONE;
	int rc;

	while ((rc = live_next(j, rd, left, &g)) > 0)
		if (got(j, g))
			return true;
	*ended = rc == 0;
	return false;
}

/* Apply the older of the records taken (the right one on ties, so that a left record
 * sees the right records of its own time), or the one there is. */
static void
apply_older(ss_asof *j, bool *have_l, bool *have_r)
{
	if (*have_r && (!*have_l || j->rin.t <= j->lin.t)) {
		apply(j, false);
		*have_r = false;
	} else {
		apply(j, true);
		*have_l = false;
	}
}

/* Apply up to 2 * BATCH ready records, in time order while both sides have one ready:
 * a left record read ahead of the right ones of its time would be held until they
 * come (a deeper release heap, a longer history). A side with nothing ready is not
 * waited for, and the end of a side is taken once every record read is applied. False
 * when neither side has more ready. */
static bool
take_ready(ss_asof *j, ss_reader *l, ss_reader *r)
{
	bool have_l = false, have_r = false, lend = false, rend = false;
	int i;

	for (i = 0; i < 2 * BATCH && !asof_done(j); i++) {
		if (!have_l && !j->left_eof && !lend)
			have_l = take_live(j, l, true, &lend);
		if (!have_r && !j->right_eof && !rend)
			have_r = take_live(j, r, false, &rend);
		if (!have_l && !have_r)
			break;
		apply_older(j, &have_l, &have_r);
	}
	while (have_l || have_r) /* (none kept over a tick, an idle or an end) */
		apply_older(j, &have_l, &have_r);
	if (lend)
		left_ended(j);
	if (rend)
		right_pipe_ended(j);
	return i == 2 * BATCH;
}

/* What to poll for one side's input: its pipe, or the thread parsing it ahead. */
static int
live_fd(const ss_asof *j, ss_reader *rd, bool left)
{
	const struct asof_ahead *a = left ? j->lahead : j->rahead;

	return a != NULL ? asof_ahead_wake_fd(a) : ss_reader_fd(rd);
}

static void
wait_for_input(ss_asof *j, ss_reader *l, ss_reader *r)
{
	struct pollfd p[2];
	nfds_t n = 0;

	if (!j->left_eof)
		p[n++] = (struct pollfd){.fd = live_fd(j, l, true), .events = POLLIN};
	if (!j->right_eof)
		p[n++] = (struct pollfd){.fd = live_fd(j, r, false), .events = POLLIN};
	if (poll(p, n, asof_poll_timeout(j)) < 0 && errno != EINTR)
		ss_diag_die(SS_EXIT_DATA, "poll: %s", strerror(errno));
}

/* A right file with a state: read whole first (it is complete: nothing in it is late),
 * so that every left record, in whatever order, is answered at once and exactly. */
static void
read_right_whole(ss_asof *j, ss_reader *r)
{
	const char *line;
	size_t len;

	j->cx->right_whole = true;
	while (ss_reader_next(r, &line, &len) == 1) {
		ss_proc_exit_if_signalled();
		asof_progress(j);
		if (got(j, asof_parse(j, false, line, len, ss_reader_lineno(r), &j->rin)))
			asof_right(j, &j->rin);
	}
	right_ended(j);
}

/* Both inputs as they come: each parsed ahead on a thread where it can be. */
static void
run_live(ss_asof *j, ss_reader *l, ss_reader *r)
{
	j->right_to_end = j->o.emit == SS_ASOF_REVISE || j->o.late_file != NULL;
	if (!j->left_eof)
		j->lahead = asof_ahead_live(j, l, true);
	if (!j->right_eof)
		j->rahead = asof_ahead_live(j, r, false);
	while (!asof_done(j)) {
		ss_proc_exit_if_signalled();
		bool more = take_ready(j, l, r);
		asof_tick(j);
		asof_progress(j);
		if (more || asof_done(j))
			continue;
		/* nothing ready on either side: results out now, state committed */
		asof_idle(j);
		wait_for_input(j, l, r);
	}
	stop_ahead(j);
}

/* The live line over two files: on a terminal, or when asked (--progress). */
static void
start_progress(ss_asof *j, ss_reader *l, ss_reader *r)
{
	int64_t ls = ss_progress_file_size(ss_reader_fd(l)), rs = ss_progress_file_size(ss_reader_fd(r));
	enum ss_progress_mode mode = j->o.progress;

	j->in_size = ls >= 0 && rs >= 0 ? ls + rs : -1;
	if (mode == SS_PROGRESS_AUTO && j->in_size < 0)
		mode = SS_PROGRESS_OFF; /* a pipe: its writer (ss-consume) shows its own */
	j->progress = ss_progress_new(mode, 1);
}

int
ss_asof_run(ss_asof *j, const char *left, const char *right)
{
	ss_proc_catch();
	ss_reader *l = j->lrd = ss_reader_open(left);
	ss_reader *r = j->rrd = ss_reader_open(right);

	j->cx->lname = ss_reader_name(l);
	j->cx->rname = ss_reader_name(r);
	j->cx->lfeed = ss_feed_find(ss_reader_fd(l));
	start_progress(j, l, r);
	if (regular(r) && j->one && j->o.state == NULL) {
		/* the right input is complete: a batch, every answer exact and final */
		j->batch = true;
		asof_join_batch(j->one);
		if (regular(l) && mergeable(j, l, r))
			run_merged(j, l, r);
		else
			run_indexed(j, l, r, false);
		stop_ahead(j);
		asof_index_free(j->index);
		j->index = NULL;
	} else {
		j->cx->rfeed = ss_feed_find(ss_reader_fd(r));
		if (regular(r))
			read_right_whole(j, r);
		run_live(j, l, r);
	}
	asof_idle(j);
	ss_progress_end(j->progress);
	j->progress = NULL;
	ss_feed_close(j->cx->rfeed, j->right_eof);
	ss_feed_close(j->cx->lfeed, j->left_eof);
	j->cx->rfeed = j->cx->lfeed = NULL;
	j->cx->lname = left;
	j->cx->rname = right;
	ss_reader_free(l);
	ss_reader_free(r);
	j->lrd = j->rrd = NULL;
	if (j->cx->left_failed < 0)
		ss_diag_warn("%s: its writer was killed before it finished: the results are those of the "
			     "records it wrote; run again to resume", left);
	else if (j->cx->left_failed > 0)
		ss_diag_warn("%s: its writer failed (exit %d): the results are those of the records it wrote; "
			     "run again to resume", left, j->cx->left_failed);
	if (j->cx->left_failed)
		return SS_EXIT_TEMPFAIL;
	return SS_EXIT_OK;
}

/* Take up to BATCH ready lines of the one input, each to its side; false when it
 * would block or ended. */
static bool
drain_one(ss_asof *j, ss_reader *rd)
{
	const char *line;
	size_t len;

	for (int i = 0; i < BATCH; i++) {
		int rc = ss_reader_try_next(rd, &line, &len);
		if (rc < 0)
			return false;
		if (rc == 0) {
			j->left_eof = true; /* what its writer says is checked with the right end */
			right_pipe_ended(j);
			return false;
		}
		bool left;
		if (got(j, asof_parse_one(j, line, len, ss_reader_lineno(rd), &left)))
			apply(j, left);
	}
	return true;
}

/* The right records the join has taken so far. */
static uint64_t
right_applied(const ss_asof *j)
{
	struct asof_counters c;
	size_t held;

	asof_totals(j, &c, &held);
	return c.right;
}

/* One input that is a file is complete, as two are: its right records first (nothing
 * in it is late), then its left ones, each answered at once and exactly. Every line is
 * validated (and reported) once, in the first pass, which marks the left ones. A bad
 * line that ends the run (--on-error fail) ends the first pass: without a state, the
 * left records before it are answered from the right ones before it (what a pipe would
 * have known when it came: man ss-asof, --on-error), then it is reported. */
static void
run_one_file(ss_asof *j, ss_reader *rd)
{
	const char *line;
	size_t len;
	bool left;
	uint8_t *is_left = NULL;
	size_t cap = 0;
	uint64_t n, last = UINT64_MAX; /* the lines the second pass answers: before last */
	enum asof_got g = ASOF_GOT_NONE;

	j->cx->right_whole = true;
	while (ss_reader_next(rd, &line, &len) == 1) {
		ss_proc_exit_if_signalled();
		n = ss_reader_lineno(rd);
		if (n / 8 >= cap) {
			size_t ncap = cap ? 2 * cap : 4096;
			is_left = ss_xrealloc(is_left, ncap);
			memset(is_left + cap, 0, ncap - cap);
			cap = ncap;
		}
		if ((g = asof_parse_one(j, line, len, n, &left)) == ASOF_GOT_FATAL) {
			last = n;
			break;
		}
		if (g != ASOF_GOT_RECORD)
			continue;
		if (left)
			is_left[n / 8] |= (uint8_t)(1u << (n % 8));
		else
			asof_right(j, &j->rin);
	}
	/* with no right record to answer from, or a state that keeps the left records for
	 * the restart, only the bad record is to be said */
	if (last != UINT64_MAX && (right_applied(j) == 0 || j->o.state || j->dir))
		asof_fail(j);
	right_ended(j);
	ss_reader_rewind(rd);
	while (ss_reader_next(rd, &line, &len) == 1 && (n = ss_reader_lineno(rd)) < last) {
		ss_proc_exit_if_signalled();
		if (n / 8 < cap && is_left[n / 8] & (1u << (n % 8)) && got(j, asof_parse_one(j, line, len, n, &left)))
			apply(j, true);
	}
	free(is_left);
	if (last != UINT64_MAX)
		asof_fail(j);
	j->left_eof = true;
}

int
ss_asof_run_one(ss_asof *j, const char *input)
{
	ss_proc_catch();
	ss_reader *rd = j->lrd = ss_reader_open(input);
	struct pollfd p = {.fd = ss_reader_fd(rd), .events = POLLIN};

	j->cx->rfeed = ss_feed_find(ss_reader_fd(rd)); /* it tells of both topics */

	j->cx->lname = j->cx->rname = ss_reader_name(rd);
	if (regular(rd))
		run_one_file(j, rd);
	while (!asof_done(j)) {
		ss_proc_exit_if_signalled();
		bool more = drain_one(j, rd);
		asof_tick(j);
		asof_progress(j);
		if (more || asof_done(j))
			continue;
		asof_idle(j);
		if (poll(&p, 1, asof_poll_timeout(j)) < 0 && errno != EINTR)
			ss_diag_die(SS_EXIT_DATA, "poll: %s", strerror(errno));
	}
	asof_idle(j);
	ss_feed_close(j->cx->rfeed, j->right_eof);
	j->cx->rfeed = NULL;
	j->cx->lname = j->cx->rname = input;
	ss_reader_free(rd);
	j->lrd = NULL;
	return SS_EXIT_OK;
}
