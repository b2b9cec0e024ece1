/* --state-dir: the join of co-partitioned topics, one partition-join per partition
 * number P, exactly as if one `ss-asof --state DIR/partition-P.db` ran per P on the
 * records of left partition P and right partition P. Each file holds all of its
 * partition-join's state, with the applied offsets of both topics' partition P, so the
 * ownership of a partition can move between processes on one host: a process holds
 * DIR/partition-P.lock (flock) while P is open, releases P once both inputs have been
 * silent on it for --idle (an instance took it over in a group rebalance), and reopens
 * it on its next record. A killed owner's locks go with it. The file is named after the
 * partition number, not a topic: a right record may open it before any left record.
 * Here too is the router: the join's entry points (asof_left, asof_right, asof_tick ...)
 * go to the one join, or to the partition-joins; and the public handle of asof.h
 * (ss_asof_new, ss_asof_free, ss_asof_summary), which opens what the joins of the run
 * share (struct asof_ctx: it owns it, and frees it after them) and the one join or the
 * directory. The router calls the engine (asof.c, asof_held.c), never the other way. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "stream/wfile.h"
#include "db/store.h"
#include "base/proj.h"

#define LOCK_RETRY_NS (100 * INT64_C(1000000))
#define LOCK_WAIT_NS (10 * INT64_C(1000000000))

struct asof_slot {
	int32_t partition;
	ss_asof *j;   /* the open partition-join, or NULL (released) */
	char *path;   /* DIR/partition-P.db, the state file */
	int lock;     /* descriptor holding the flock while open, else -1 */
	int64_t seen; /* monotonic time of its last record */
	bool held;    /* released with held records in its file */
};

struct asof_dir {
	char *path;
	struct asof_slot *v;
	size_t n, cap, last;
};

struct asof_dir *
asof_dir_open(const char *path)
{
	struct asof_dir *d = ss_xmalloc(sizeof *d);

	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, strerror(errno));
	*d = (struct asof_dir){.path = ss_xstrdup(path)};
	return d;
}

static struct asof_slot *
slot_get(struct asof_dir *d, int32_t partition)
{
	if (d->last < d->n && d->v[d->last].partition == partition)
		return &d->v[d->last];
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].partition == partition)
			return &d->v[d->last = i];
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 16;
		d->v = ss_xrealloc(d->v, d->cap * sizeof *d->v);
	}
	struct asof_slot *s = &d->v[d->last = d->n++];
	char path[4096];
	snprintf(path, sizeof path, "%s/partition-%" PRId32 ".db", d->path, partition);
	*s = (struct asof_slot){.partition = partition, .path = ss_xstrdup(path), .lock = -1};
	return s;
}

/* Commit a partition-join, free its memory and drop its lock. */
static void
release(ss_asof *top, struct asof_slot *s)
{
	ss_asof *j = s->j;

	asof_join_idle(j); /* results out before the state that says they are */
	s->held = j->heap.n > 0 || j->spilled > 0;
	asof_counters_add(&top->n, &j->n);
	asof_join_free(j);
	s->j = NULL;
	close(s->lock);
	s->lock = -1;
}

/* Release the partitions silent on both inputs for --idle: their new owner may be
 * waiting for them. */
static void
release_idle(ss_asof *top, int64_t now)
{
	struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j && now - d->v[i].seen >= top->o.idle)
			release(top, &d->v[i]);
}

static bool
try_lock(int fd, const char *path)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return true;
	if (errno != EWOULDBLOCK && errno != EINTR)
		ss_diag_die(SS_EXIT_DATA, "%s: lock: %s", path, strerror(errno));
	return false;
}

/* Lock partition s; if another process holds it, wait for it to be released (wait) or
 * give up (returns -1). Waiting releases our own idle partitions meanwhile, so two
 * processes that swapped partitions do not wait for each other. */
static int
lock_slot(ss_asof *top, struct asof_slot *s, bool wait)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof path, "%.*s.lock", (int)strlen(s->path) - 3, s->path);
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, ss_wfile_strerror(errno));
	if (try_lock(fd, path))
		return fd;
	if (!wait) {
		close(fd);
		return -1;
	}
	ss_diag_warn("waiting for %s, held by another process", s->path);
	asof_idle(top);
	/* its owner releases it after --idle without records, and needs a moment more */
	int64_t bound = 2 * top->o.idle + LOCK_WAIT_NS;
	int64_t deadline = ss_time_mono() + bound;
	for (;;) {
		nanosleep(&(struct timespec){.tv_nsec = LOCK_RETRY_NS}, NULL);
		int64_t now = ss_time_mono();
		release_idle(top, now);
		if (try_lock(fd, path))
			return fd;
		if (now >= deadline)
			ss_diag_die(SS_EXIT_TEMPFAIL, "%s: still held by another process after %" PRId64 "s",
				    s->path, bound / 1000000000);
	}
}

/* The partition-join of s, its state loaded: the top's options, the run's cx. */
static ss_asof *
partition_join(ss_asof *top, const struct asof_slot *s)
{
	return asof_join_new(top->cx, &top->o, s->path, s->partition, top->right_eof);
}

/* Open partition s: lock it, then load its state. */
static void
slot_open(ss_asof *top, struct asof_slot *s)
{
	s->lock = lock_slot(top, s, true);
	s->j = partition_join(top, s);
	s->held = false;
}

/* Results an earlier run kept undelivered go out at start, not when their partition
 * next has a record: it may have none for long. A partition another process holds is
 * that one's to write again. Opened, a partition is released after --idle as usual. */
void
asof_dir_resend(ss_asof *top)
{
	struct asof_dir *d = top->dir;
	DIR *dh = opendir(d->path);
	struct dirent *e;
	int32_t p;
	char name[64];

	if (dh == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", d->path, strerror(errno));
	while ((e = readdir(dh)) != NULL) {
		if (sscanf(e->d_name, "partition-%" SCNd32 ".db", &p) != 1)
			continue;
		snprintf(name, sizeof name, "partition-%" PRId32 ".db", p);
		if (strcmp(name, e->d_name) != 0)
			continue; /* its -wal, its -shm */
		struct asof_slot *s = slot_get(d, p);
		top->cx->had_history = true; /* an earlier run's right records may be there */
		if (s->j != NULL || !asof_state_keeps_results(s->path) || (s->lock = lock_slot(top, s, false)) < 0)
			continue;
		s->j = partition_join(top, s);
		s->seen = ss_time_mono();
	}
	closedir(dh);
}

static ss_asof *
route(ss_asof *top, const struct asof_in *in)
{
	struct asof_slot *s = slot_get(top->dir, in->env.partition);

	if (s->j == NULL)
		slot_open(top, s);
	s->seen = ss_time_mono();
	return s->j;
}

/* The right input ended: every partition-join finishes its held records, also those
 * released meanwhile, unless another process owns them now (theirs to finish). */
static void
asof_dir_right_end(ss_asof *top)
{
	struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++) {
		struct asof_slot *s = &d->v[i];
		if (s->j) {
			asof_join_right_end(s->j);
		} else if (s->held && (s->lock = lock_slot(top, s, false)) >= 0) {
			s->j = partition_join(top, s); /* finishes them as it loads */
			s->held = false;
		}
	}
}

static void
asof_dir_tick(ss_asof *top)
{
	struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j)
			asof_join_tick(d->v[i].j);
	if (!top->right_eof) /* at the end, held records are finished, not released */
		release_idle(top, ss_time_mono());
}

static int
min_timeout(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int
asof_dir_timeout(const ss_asof *top)
{
	const struct asof_dir *d = top->dir;
	int64_t now = ss_time_mono();
	int t = -1;

	for (size_t i = 0; i < d->n; i++) {
		const struct asof_slot *s = &d->v[i];
		if (s->j == NULL)
			continue;
		t = min_timeout(t, asof_join_timeout(s->j));
		if (!top->right_eof) {
			int64_t left = s->seen + top->o.idle - now;
			t = min_timeout(t, left <= 0 ? 0 : (int)(left / 1000000 + 1));
		}
	}
	return t;
}

static bool
asof_dir_done(const ss_asof *top)
{
	const struct asof_dir *d = top->dir;

	if (!top->left_eof)
		return false;
	if (top->right_eof)
		return true;
	for (size_t i = 0; i < d->n; i++) {
		const struct asof_slot *s = &d->v[i];
		if (s->held || (s->j && (s->j->heap.n > 0 || s->j->spilled > 0)))
			return false;
	}
	return true;
}

void
asof_dir_commit(ss_asof *top)
{
	struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j)
			asof_join_idle(d->v[i].j);
}

void
asof_dir_ended(ss_asof *top, int32_t partition)
{
	struct asof_slot *s = slot_get(top->dir, partition);

	if (s->j == NULL && access(s->path, F_OK) == 0)
		s->held = true; /* perhaps: opening it finishes what it holds */
}

/* The partition's open join knows; a released or foreign partition's file says. */
static bool
asof_dir_applied(ss_asof *top, const struct ss_envelope *env)
{
	struct asof_slot *s = slot_get(top->dir, env->partition);
	ss_store *st;
	bool applied;

	if (s->j != NULL)
		return asof_state_seen(s->j->st, env);
	if (access(s->path, F_OK) != 0)
		return false;
	st = ss_store_open(s->path, SS_STORE_READONLY, SS_STATE_ASOF);
	applied = ss_store_offset_is_applied(st, env);
	ss_store_close(st);
	return applied;
}

void
asof_dir_count(const ss_asof *top, struct asof_counters *sum, size_t *held)
{
	const struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++) {
		const ss_asof *j = d->v[i].j;
		if (j == NULL)
			continue;
		asof_counters_add(sum, &j->n);
		*held += j->heap.n + (size_t)j->spilled + (size_t)j->waiting;
	}
}

void
asof_dir_free(ss_asof *top)
{
	struct asof_dir *d = top->dir;

	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i].j)
			release(top, &d->v[i]);
		free(d->v[i].path);
	}
	free(d->v);
	free(d->path);
	free(d);
	top->dir = NULL;
}

/* ---- the router: the one join, or the partition-join of a record's partition ---- */

void
asof_left(ss_asof *j, const struct asof_in *in)
{
	asof_join_left(j->dir ? route(j, in) : j, in);
}

void
asof_right(ss_asof *j, const struct asof_in *in)
{
	asof_join_right(j->dir ? route(j, in) : j, in);
}

void
asof_right_end(ss_asof *j)
{
	if (j->dir == NULL) {
		asof_join_right_end(j);
		return;
	}
	j->right_eof = true;
	asof_dir_right_end(j);
}

/* What the right input's writer tells is read here, for the join and its partitions. */
void
asof_tick(ss_asof *j)
{
	if (ss_feed_refresh(j->cx->rfeed, false))
		j->cx->feed_gen++;
	if (j->dir)
		asof_dir_tick(j);
	else
		asof_join_tick(j);
}

int
asof_poll_timeout(const ss_asof *j)
{
	return j->dir ? asof_dir_timeout(j) : asof_join_timeout(j);
}

bool
asof_done(const ss_asof *j)
{
	return j->dir ? asof_dir_done(j) : asof_join_done(j);
}

bool
asof_applied(ss_asof *j, const struct ss_envelope *env)
{
	return j->dir ? asof_dir_applied(j, env) : asof_join_applied(j, env);
}

/* A bad record ends the run (asof_parse said ASOF_GOT_FATAL): the one join's held
 * records go out first (partition-joins keep theirs in their state files), then the
 * record is reported, which exits. */
void
asof_fail(ss_asof *j)
{
	if (j->dir == NULL)
		asof_join_finish_held(j);
	asof_parse_fail(j);
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

/* --select runs on jq directly: it may yield several values or none (a filter). */
static jq_state *
compile_select(const char *text)
{
	ss_expr_free(ss_expr_compile(text, "--select")); /* reports errors as every tool does */
	jq_state *jq = jq_init();
	if (jq == NULL || !jq_compile(jq, text))
		ss_diag_die(SS_EXIT_EXPR, "--select: cannot compile '%s'", text);
	return jq;
}

/* The context being opened, until a join holds it: a failure on the way ends the
 * process, and LeakSanitizer must find what was built from here (asof.c: opening).
 * Volatile: nothing reads it, and the compiler would drop the stores. */
static struct asof_ctx *volatile opening_cx;

/* What the joins of the run share: the expressions compiled (exit 3 on a bad one), the
 * late file and the acks file opened. */
static struct asof_ctx *
ctx_open(const struct ss_asof_opts *opts, ss_writer *out)
{
	struct asof_ctx *cx = opening_cx = ss_xmalloc(sizeof *cx);

	*cx = (struct asof_ctx){.out = out};
	cx->lon = ss_expr_compile(opts->left_on, opts->left_on == opts->right_on ? "--on" : "--left-on");
	cx->ron = ss_expr_compile(opts->right_on, opts->left_on == opts->right_on ? "--on" : "--right-on");
	if (opts->left_by)
		cx->lby = ss_expr_compile(opts->left_by, opts->left_by == opts->right_by ? "--by" : "--left-by");
	if (opts->right_by)
		cx->rby = ss_expr_compile(opts->right_by, opts->left_by == opts->right_by ? "--by" : "--right-by");
	if (opts->select) {
		cx->select = compile_select(opts->select);
		cx->proj = ss_proj_compile(opts->select);
	}
	if (opts->late_file && (cx->late = ss_wfile_append(opts->late_file)) == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot open: %s", opts->late_file, ss_wfile_strerror(errno));
	if (opts->acks) {
		cx->acks = ss_acks_open(opts->acks);
		ss_acks_start(cx->acks); /* before the first line, resent ones included */
	}
	return cx;
}

/* After the joins: they close their states first. */
static void
ctx_free(struct asof_ctx *cx)
{
	ss_acks_close(cx->acks);
	ss_expr_free(cx->lon);
	ss_expr_free(cx->ron);
	ss_expr_free(cx->lby);
	ss_expr_free(cx->rby);
	if (cx->select)
		jq_teardown(&cx->select);
	ss_proj_free(cx->proj);
	if (cx->late)
		fclose(cx->late);
	free(cx);
}

ss_asof *
ss_asof_new(const struct ss_asof_opts *opts, ss_writer *out)
{
	ss_asof *j = asof_join_open(ctx_open(opts, out), opts);

	opening_cx = NULL;

	if (opts->state_dir) {
		j->dir = asof_dir_open(opts->state_dir);
		asof_dir_resend(j);
	}
	atexit_join = j;
	atexit(exit_handler);
	return j;
}

void
asof_idle(void *arg)
{
	ss_asof *j = arg;

	asof_join_idle(j);
	if (j->dir)
		asof_dir_commit(j);
}

/* The counters of the whole run, and the records still held. */
void
asof_totals(const ss_asof *j, struct asof_counters *c, size_t *held)
{
	asof_join_totals(j, c, held);
	if (j->dir)
		asof_dir_count(j, c, held);
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
ss_asof_free(ss_asof *j)
{
	if (j == NULL)
		return;
	exit_handler();
	atexit_join = NULL;
	if (j->dir)
		asof_dir_free(j);
	struct asof_ctx *cx = j->cx;
	asof_join_free(j);
	ctx_free(cx);
}
