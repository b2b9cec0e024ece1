/* The router: the public handle of asof.h (ss_asof_new, ss_asof_end, ss_asof_summary)
 * and the join's entry points for the run (asof_run.c). It opens what the joins of the
 * run share (struct asof_ctx: it owns it, and closes it after them), and the one join or
 * the directory of partition-joins (asof_dir.c, --state-dir); each record goes to the
 * one join, or to the partition-join of its partition. At the end, with --acks, it
 * waits for the deliverer. It calls the engine (asof.c, asof_held.c), never the other
 * way. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/proj.h"
#include "stream/wfile.h"

/* ---- the join's entry points: the one join, or the partition-join of a record's
 * partition ---- */

static asof_join *
route(ss_asof *j, const struct asof_in *in)
{
	return j->one ? j->one : asof_dir_route(j->dir, in->env.partition);
}

void
asof_left(ss_asof *j, const struct asof_in *in)
{
	asof_join_left(route(j, in), in);
}

void
asof_right(ss_asof *j, struct asof_in *in)
{
	asof_join_right(route(j, in), in);
	in->hist = NULL;
}

void
asof_right_end(ss_asof *j)
{
	j->right_eof = true;
	if (j->one)
		asof_join_right_end(j->one);
	else
		asof_dir_right_end(j->dir);
}

/* What the right input's writer tells is read here, for the join and its partitions. */
void
asof_tick(ss_asof *j)
{
	if (ss_feed_refresh(j->cx->rfeed, false))
		j->cx->feed_gen++;
	if (j->one)
		asof_join_tick(j->one);
	else
		asof_dir_tick(j->dir);
}

int
asof_poll_timeout(const ss_asof *j)
{
	return j->one ? asof_join_timeout(j->one) : asof_dir_timeout(j->dir);
}

/* Once the left input ended, no right record can change a result but those of left
 * records still held (defer) or open (revise), and, in revise, a late one, which
 * revises results already final: a live revise run reads the right input to its end,
 * and so does one with --late-file, which is to get every late record. (Before, both
 * ended when no result was open, and a late record still in the pipe was never read:
 * its result's last revision was not the exact answer, or the late file missed it.) */
bool
asof_done(const ss_asof *j)
{
	if (!j->left_eof)
		return false;
	return j->right_eof || (!j->right_to_end && !(j->one ? asof_join_holds(j->one) : asof_dir_holds(j->dir)));
}

bool
asof_applied(ss_asof *j, const struct ss_envelope *env)
{
	return j->one ? asof_join_applied(j->one, env) : asof_dir_applied(j->dir, env);
}

void
asof_partition_ended(ss_asof *j, int32_t partition)
{
	if (j->dir)
		asof_dir_ended(j->dir, partition);
}

/* A bad record ends the run (asof_parse said ASOF_GOT_FATAL): the one join's held
 * records go out first (partition-joins keep theirs in their state files), then the
 * record is reported, which exits. */
void
asof_fail(ss_asof *j)
{
	if (j->one)
		asof_join_finish_held(j->one);
	asof_parse_fail(j);
}

void
asof_idle(ss_asof *j)
{
	if (j->one) {
		asof_join_idle(j->one);
		return;
	}
	asof_ctx_flush(j->cx); /* as a join's idle does, if none is open */
	asof_dir_commit(j->dir);
}

/* The counters of the whole run, and the records still held. */
void
asof_totals(const ss_asof *j, struct asof_counters *c, size_t *held)
{
	if (j->one)
		asof_join_totals(j->one, c, held);
	else
		asof_dir_count(j->dir, c, held);
}

/* ---- the public handle (asof.h): the one join, or the router over a directory ---- */

static ss_asof *atexit_join; /* commits and reports when a data error exits */

static void
exit_handler(void)
{
	if (atexit_join == NULL)
		return;
	ss_asof *j = atexit_join;
	struct asof_counters c;
	size_t held;

	atexit_join = NULL;
	/* the threads parsing ahead stop first (a signal, or a data error, ends the run) */
	asof_ahead_stop(j->lahead);
	asof_ahead_stop(j->rahead);
	j->lahead = j->rahead = NULL;
	/* an exit in the middle of a --select leaves libjq's stack to tear down; first, as
	 * a closed output ends the process inside asof_idle (EPIPE) */
	if (j->cx->select)
		jq_teardown(&j->cx->select);
	asof_idle(j);
	asof_totals(j, &c, &held);
	if (c.late || c.expired || c.early || c.replayed || held)
		ss_asof_summary(j);
}

/* Right records kept trimmed to their known values (struct asof_trim) where nothing can
 * read the rest of them: --select reads only those of right records and cannot fail on
 * a left record that has a time (--on needs an object), and no --state keeps them for a
 * later run, which may ask for other values. */
static void
trim_right(struct asof_ctx *cx, const struct ss_asof_opts *opts)
{
	if (opts->state || opts->state_dir || cx->nknown[0] == 0 || !ss_expr_needs_object(cx->lon) ||
	    !ss_proj_known_suffice(cx->proj, "right", "left"))
		return;
	for (int i = 0; i < cx->nknown[0]; i++) {
		size_t len;
		const char *key = ss_jpath_key(cx->known[0][i], 0, &len);
		cx->trim.at[i] = cx->trim.keys.len;
		if (!ss_jscan_quote(&cx->trim.keys, key, len)) { /* (not UTF-8: not its own text) */
			ss_buf_free(&cx->trim.keys);
			return;
		}
		ss_buf_addc(&cx->trim.keys, ':');
	}
	cx->trim.at[cx->nknown[0]] = cx->trim.keys.len;
	cx->trim.n = cx->nknown[0];
}

/* What the joins of the run share: the expressions compiled (exit 3 on a bad one), the
 * late file and the acks file opened. */
static void
ctx_open(ss_asof *j, ss_writer *out)
{
	const struct ss_asof_opts *opts = &j->o;
	struct asof_ctx *cx = j->cx = ss_xmalloc(sizeof *cx);

	*cx = (struct asof_ctx){.out = out};
	cx->lon = ss_expr_compile(opts->left_on, opts->left_on == opts->right_on ? "--on" : "--left-on");
	cx->ron = ss_expr_compile(opts->right_on, opts->left_on == opts->right_on ? "--on" : "--right-on");
	if (opts->left_by)
		cx->lby = ss_expr_compile(opts->left_by, opts->left_by == opts->right_by ? "--by" : "--left-by");
	if (opts->right_by)
		cx->rby = ss_expr_compile(opts->right_by, opts->left_by == opts->right_by ? "--by" : "--right-by");
	if (opts->select) {
		/* libjq's start-up (~30 ms) is paid only by what proj.h cannot evaluate */
		cx->proj = ss_proj_compile(opts->select);
		if (cx->proj == NULL)
			cx->select = asof_select_jq(opts->select);
		for (int left = 0; cx->proj && left < 2; left++)
			while (cx->nknown[left] < SS_PROJ_KNOWN &&
			       (cx->known[left][cx->nknown[left]] =
					ss_proj_known(cx->proj, left ? "left" : "right", cx->nknown[left])) != NULL)
				cx->nknown[left]++;
		trim_right(cx, opts);
	}
	if (opts->late_file && (cx->late = ss_wfile_append(opts->late_file)) == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot open: %s", opts->late_file, ss_wfile_strerror(errno));
	if (opts->acks) {
		cx->acks = ss_acks_open(opts->acks);
		ss_acks_start(cx->acks); /* before the first line, resent ones included */
	}
}

/* After the joins: they close their states first. */
static void
ctx_close(struct asof_ctx *cx)
{
	ss_acks_close(cx->acks);
	if (cx->late)
		fclose(cx->late);
}

/* The run being opened, until it is returned: a failure on the way ends the process,
 * and LeakSanitizer must find what was built from here (asof.c: opening). Volatile:
 * nothing reads it, and the compiler would drop the stores. */
static ss_asof *volatile opening;

ss_asof *
ss_asof_new(const struct ss_asof_opts *opts, ss_writer *out)
{
	ss_asof *j = opening = ss_xmalloc(sizeof *j);

	*j = (ss_asof){.o = *opts};
	ctx_open(j, out);
	if (opts->state_dir)
		j->dir = asof_dir_open(opts->state_dir, j->cx, &j->o);
	else
		j->one = asof_join_open(j->cx, opts);
	opening = NULL;
	atexit_join = j;
	atexit(exit_handler);
	return j;
}

/* At the end: how long the deliverer may report no progress, and how often to look. */
#define AWAIT_STALL_NS (2 * INT64_C(1000000000))
#define AWAIT_POLL_NS (20 * INT64_C(1000000))

void
ss_asof_await_delivery(ss_asof *j)
{
	uint64_t before = j->cx->delivered;
	int64_t moved = ss_time_mono();

	if (j->cx->acks == NULL)
		return;
	while ((j->cx->delivered = ss_acks_delivered(j->cx->acks)) < j->cx->lines_out) {
		int64_t now = ss_time_mono();
		if (j->cx->delivered != before) {
			before = j->cx->delivered;
			moved = now;
		} else if (now - moved >= AWAIT_STALL_NS) {
			ss_diag_warn("%s: %" PRIu64 " results not reported delivered: kept, written again "
				     "by the next run", ss_acks_path(j->cx->acks), j->cx->lines_out - j->cx->delivered);
			break;
		}
		nanosleep(&(struct timespec){.tv_nsec = AWAIT_POLL_NS}, NULL);
	}
	asof_idle(j);
}

void
ss_asof_summary(const ss_asof *j)
{
	struct asof_counters c;
	size_t held;

	asof_totals(j, &c, &held);
	ss_diag_warn("left %" PRIu64 " (emitted %" PRIu64 ", matched %" PRIu64 ", expired %" PRIu64
		     ", not final %" PRIu64 ", replayed %" PRIu64 "), right %" PRIu64 " (late %" PRIu64
		     "), revisions %" PRIu64 ", held %zu",
		     c.left, c.emitted, c.matched, c.expired, c.early, c.replayed, c.right, c.late, c.revisions,
		     held);
}

void
ss_asof_end(ss_asof *j)
{
	exit_handler(); /* (it clears atexit_join: the exit does not run it again) */
	if (j->dir) /* each partition-join committed, unlocked and freed */
		asof_dir_free(j->dir);
	j->dir = NULL;
	if (j->one)
		asof_join_close(j->one);
	ctx_close(j->cx);
}
