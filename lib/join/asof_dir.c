/* --state-dir: the join of co-partitioned topics, one partition-join per partition
 * number P, exactly as if one `ss-asof --state DIR/partition-P.db` ran per P on the
 * records of left partition P and right partition P. Each file holds all of its
 * partition-join's state, with the applied offsets of both topics' partition P, so the
 * ownership of a partition can move between processes on one host: a process holds
 * DIR/partition-P.lock (flock) while P is open, releases P once both inputs have been
 * silent on it for --idle (an instance took it over in a group rebalance), and reopens
 * it on its next record. A killed owner's locks go with it. The file is named after the
 * partition number, not a topic: a right record may open it before any left record.
 * The router (asof_router.c) routes records here; this file calls the engine only. */
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

#define LOCK_RETRY_NS (100 * INT64_C(1000000))
#define LOCK_WAIT_NS (10 * INT64_C(1000000000))

struct asof_slot {
	int32_t partition;
	asof_join *j;   /* the open partition-join, or NULL (released) */
	char *path;   /* DIR/partition-P.db, the state file */
	int lock;     /* descriptor holding the flock while open, else -1 */
	int64_t seen; /* monotonic time of its last record */
	bool held;    /* released with held records in its file */
};

struct asof_dir {
	char *path;
	struct asof_slot *v;
	size_t n, cap, last;
	struct asof_ctx *cx;            /* the run's (the router's) */
	const struct ss_asof_opts *o;   /* the router's, each partition-join's */
	bool right_eof;                 /* the right input ended */
	struct asof_counters released;  /* of the partition-joins released so far */
};

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
release(struct asof_dir *d, struct asof_slot *s)
{
	asof_join *j = s->j;
	struct asof_counters c;
	size_t held;

	asof_join_idle(j); /* results out before the state that says they are */
	s->held = asof_join_holds(j);
	asof_join_totals(j, &c, &held);
	asof_counters_add(&d->released, &c);
	asof_join_free(j);
	s->j = NULL;
	close(s->lock);
	s->lock = -1;
}

/* Release the partitions silent on both inputs for --idle: their new owner may be
 * waiting for them. */
static void
release_idle(struct asof_dir *d, int64_t now)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j && now - d->v[i].seen >= d->o->idle)
			release(d, &d->v[i]);
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
lock_slot(struct asof_dir *d, struct asof_slot *s, bool wait)
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
	asof_dir_commit(d);
	/* its owner releases it after --idle without records, and needs a moment more */
	int64_t bound = 2 * d->o->idle + LOCK_WAIT_NS;
	int64_t deadline = ss_time_mono() + bound;
	for (;;) {
		nanosleep(&(struct timespec){.tv_nsec = LOCK_RETRY_NS}, NULL);
		int64_t now = ss_time_mono();
		release_idle(d, now);
		if (try_lock(fd, path))
			return fd;
		if (now >= deadline)
			ss_diag_die(SS_EXIT_TEMPFAIL, "%s: still held by another process after %" PRId64 "s",
				    s->path, bound / 1000000000);
	}
}

/* The partition-join of s, its state loaded: the router's options, the run's cx. */
static asof_join *
partition_join(struct asof_dir *d, const struct asof_slot *s)
{
	return asof_join_new(d->cx, d->o, s->path, s->partition, d->right_eof);
}

/* Open partition s: lock it, then load its state. */
static void
slot_open(struct asof_dir *d, struct asof_slot *s)
{
	s->lock = lock_slot(d, s, true);
	s->j = partition_join(d, s);
	s->held = false;
}

/* Results an earlier run kept undelivered go out at start, not when their partition
 * next has a record: it may have none for long. A partition another process holds is
 * that one's to write again. Opened, a partition is released after --idle as usual. */
static void
resend(struct asof_dir *d)
{
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
		d->cx->had_history = true; /* an earlier run's right records may be there */
		if (s->j != NULL || !asof_state_keeps_results(s->path) || (s->lock = lock_slot(d, s, false)) < 0)
			continue;
		s->j = partition_join(d, s);
		s->seen = ss_time_mono();
	}
	closedir(dh);
}

struct asof_dir *
asof_dir_open(const char *path, struct asof_ctx *cx, const struct ss_asof_opts *o)
{
	struct asof_dir *d = ss_xmalloc(sizeof *d);

	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, strerror(errno));
	*d = (struct asof_dir){.path = ss_xstrdup(path), .cx = cx, .o = o};
	resend(d);
	return d;
}

asof_join *
asof_dir_route(struct asof_dir *d, int32_t partition)
{
	struct asof_slot *s = slot_get(d, partition);

	if (s->j == NULL)
		slot_open(d, s);
	s->seen = ss_time_mono();
	return s->j;
}

/* The right input ended: every partition-join finishes its held records, also those
 * released meanwhile, unless another process owns them now (theirs to finish). */
void
asof_dir_right_end(struct asof_dir *d)
{
	d->right_eof = true;
	for (size_t i = 0; i < d->n; i++) {
		struct asof_slot *s = &d->v[i];
		if (s->j) {
			asof_join_right_end(s->j);
		} else if (s->held && (s->lock = lock_slot(d, s, false)) >= 0) {
			s->j = partition_join(d, s); /* finishes them as it loads */
			s->held = false;
		}
	}
}

void
asof_dir_tick(struct asof_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j)
			asof_join_tick(d->v[i].j);
	if (!d->right_eof) /* at the end, held records are finished, not released */
		release_idle(d, ss_time_mono());
}

static int
min_timeout(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

int
asof_dir_timeout(const struct asof_dir *d)
{
	int64_t now = ss_time_mono();
	int t = -1;

	for (size_t i = 0; i < d->n; i++) {
		const struct asof_slot *s = &d->v[i];
		if (s->j == NULL)
			continue;
		t = min_timeout(t, asof_join_timeout(s->j));
		if (!d->right_eof) {
			int64_t left = s->seen + d->o->idle - now;
			t = min_timeout(t, left <= 0 ? 0 : (int)(left / 1000000 + 1));
		}
	}
	return t;
}

bool
asof_dir_holds(const struct asof_dir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct asof_slot *s = &d->v[i];
		if (s->held || (s->j && asof_join_holds(s->j)))
			return true;
	}
	return false;
}

void
asof_dir_commit(struct asof_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].j)
			asof_join_idle(d->v[i].j);
}

void
asof_dir_ended(struct asof_dir *d, int32_t partition)
{
	struct asof_slot *s = slot_get(d, partition);

	if (s->j == NULL && access(s->path, F_OK) == 0)
		s->held = true; /* perhaps: opening it finishes what it holds */
}

/* The partition's open join knows; a released or foreign partition's file says. */
bool
asof_dir_applied(struct asof_dir *d, const struct ss_envelope *env)
{
	struct asof_slot *s = slot_get(d, env->partition);
	ss_store *st;
	bool applied;

	if (s->j != NULL)
		return asof_join_applied(s->j, env);
	if (access(s->path, F_OK) != 0)
		return false;
	st = ss_store_open(s->path, SS_STORE_READONLY, SS_STATE_ASOF);
	applied = ss_store_offset_is_applied(st, env);
	ss_store_close(st);
	return applied;
}

void
asof_dir_count(const struct asof_dir *d, struct asof_counters *c, size_t *held)
{
	*c = d->released;
	*held = 0;
	for (size_t i = 0; i < d->n; i++) {
		struct asof_counters jc;
		size_t jheld;
		if (d->v[i].j == NULL)
			continue;
		asof_join_totals(d->v[i].j, &jc, &jheld);
		asof_counters_add(c, &jc);
		*held += jheld;
	}
}

void
asof_dir_free(struct asof_dir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i].j)
			release(d, &d->v[i]);
		free(d->v[i].path);
	}
	free(d->v);
	free(d->path);
	free(d);
}

