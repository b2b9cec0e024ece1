/* The feed file beside a pipe (see feed.h). Its format, one fact per line:
 *
 *	ss-feed 1
 *	writer NAME PID FD
 *	state running|finished|failed STATUS
 *	part TOPIC PARTITION LAST behind|caught-up|ended|revoked
 *
 * Kafka topic names are [A-Za-z0-9._-]: nothing to quote. A reader believes a file
 * whose writer is alive and holds this very pipe open (/proc/PID/fd/FD), or one that
 * is final and was written after the reader started: a file left by a writer long gone
 * of a pipe whose inode number came round again is ignored. */
#include "stream/feed.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "stream/wfile.h"
#include "base/sstime.h"

#define WRITE_EVERY_NS (100 * INT64_C(1000000))
#define READ_EVERY_NS (50 * INT64_C(1000000))
#define STALE_AFTER_S (24 * 3600) /* files of dead writers nobody read are swept then */

static const char *const pstate_names[] = {"behind", "caught-up", "ended", "revoked"};
static const char *const state_names[] = {"running", "finished", "failed"};

struct parts {
	struct ss_feed_part *v;
	size_t n, cap;
};

struct ss_feed_out {
	char path[4096];
	char writer[32];
	int fd;
	struct parts parts;
	bool dirty;
	int64_t written; /* monotonic time of the last write */
};

struct ss_feed_in {
	char path[4096];
	dev_t dev;
	ino_t ino;
	time_t started;    /* wall clock: a final file older than this is not ours */
	int64_t read_at;   /* monotonic time of the last look */
	struct timespec mtime;
	off_t size;
	ino_t file; /* each rewrite is a new file: a change shows even within a clock tick */
	bool known;
	long pid;          /* the writer believed, once believed */
	enum ss_feed_state state;
	int status;
	struct parts parts;
};

static const char *
feed_dir(char *buf, size_t size)
{
	const char *env = getenv("SS_FEED_DIR");
	struct stat st;

	if (env != NULL && *env != '\0')
		snprintf(buf, size, "%s", env);
	else if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		snprintf(buf, size, "/dev/shm/ss-feed-%lu", (unsigned long)getuid());
	else
		snprintf(buf, size, "%s/ss-feed-%lu", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (unsigned long)getuid());
	return buf;
}

/* The file of the pipe or FIFO fd; false for anything else. */
static bool
feed_path(int fd, char *path, size_t size, struct stat *st)
{
	char dir[4000];

	if (fstat(fd, st) != 0 || !S_ISFIFO(st->st_mode))
		return false;
	snprintf(path, size, "%s/%llx-%llx", feed_dir(dir, sizeof dir), (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	return true;
}

static struct ss_feed_part *
parts_get(struct parts *ps, const char *topic, int32_t partition)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].partition == partition && strcmp(ps->v[i].topic, topic) == 0)
			return &ps->v[i];
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->v = ss_xrealloc(ps->v, ps->cap * sizeof *ps->v);
	}
	struct ss_feed_part *p = &ps->v[ps->n++];
	*p = (struct ss_feed_part){.partition = partition, .last = -1};
	snprintf(p->topic, sizeof p->topic, "%s", topic);
	return p;
}

/* ---- the writer ---- */

/* Remove the files of writers that died long ago without a reader taking their file. */
static void
sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[4400];
		struct stat st;
		long pid = 0;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || now - st.st_mtime < STALE_AFTER_S)
			continue;
		FILE *f = fopen(path, "r");
		if (f != NULL) {
			char w[64];
			if (fscanf(f, "ss-feed 1 writer %63s %ld", w, &pid) != 2)
				pid = 0;
			fclose(f);
		}
		if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
			unlink(path);
	}
	closedir(d);
}

static void
write_file(ss_feed_out *f, enum ss_feed_state state, int status)
{
	char tmp[4200];
	FILE *o;

	if ((o = ss_wfile_tmp(f->path, tmp, sizeof tmp)) == NULL)
		return; /* the data flows anyway; the reader then knows less */
	fprintf(o, "ss-feed 1\nwriter %s %ld %d\nstate %s %d\n", f->writer, (long)getpid(), f->fd,
		state_names[state], status);
	for (size_t i = 0; i < f->parts.n; i++) {
		const struct ss_feed_part *p = &f->parts.v[i];
		fprintf(o, "part %s %d %lld %s\n", p->topic, p->partition, (long long)p->last, pstate_names[p->state]);
	}
	if (fclose(o) != 0 || rename(tmp, f->path) != 0)
		unlink(tmp);
	f->dirty = false;
	f->written = ss_time_mono();
}

ss_feed_out *
ss_feed_publish(int fd, const char *writer)
{
	struct stat st;
	char dir[4000];
	ss_feed_out *f = calloc(1, sizeof *f);

	if (f == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	if (!feed_path(fd, f->path, sizeof f->path, &st)) {
		free(f);
		return NULL;
	}
	feed_dir(dir, sizeof dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		free(f);
		return NULL;
	}
	sweep(dir);
	snprintf(f->writer, sizeof f->writer, "%s", writer);
	f->fd = fd;
	write_file(f, SS_FEED_RUNNING, 0); /* before the first record: the reader can rely on it */
	return f;
}

void
ss_feed_set(ss_feed_out *f, const char *topic, int32_t partition, int64_t last, enum ss_feed_pstate state)
{
	if (f == NULL)
		return;
	size_t n = f->parts.n;
	struct ss_feed_part *p = parts_get(&f->parts, topic, partition);
	if (f->parts.n != n || p->last != last || p->state != state) {
		p->last = last;
		p->state = state;
		f->dirty = true;
	}
}

void
ss_feed_relay(ss_feed_out *f, const struct ss_feed_part *parts, size_t n)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		ss_feed_set(f, parts[i].topic, parts[i].partition, parts[i].last, parts[i].state);
}

void
ss_feed_flush(ss_feed_out *f, bool now)
{
	if (f != NULL && f->dirty && (now || ss_time_mono() - f->written >= WRITE_EVERY_NS))
		write_file(f, SS_FEED_RUNNING, 0);
}

void
ss_feed_end(ss_feed_out *f, int status)
{
	if (f == NULL)
		return;
	write_file(f, status == 0 ? SS_FEED_FINISHED : SS_FEED_FAILED, status);
	free(f->parts.v);
	free(f);
}

/* ---- the reader ---- */

ss_feed_in *
ss_feed_find(int fd)
{
	struct stat st;
	ss_feed_in *f = calloc(1, sizeof *f);

	if (f == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	if (!feed_path(fd, f->path, sizeof f->path, &st)) {
		free(f);
		return NULL;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->started = time(NULL);
	f->read_at = ss_time_mono() - READ_EVERY_NS; /* the first look is not held back */
	return f;
}

/* Does process pid hold this pipe open as fd? */
static bool
holds_pipe(const ss_feed_in *f, long pid, int fd)
{
	char proc[64];
	struct stat st;

	snprintf(proc, sizeof proc, "/proc/%ld/fd/%d", pid, fd);
	return stat(proc, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

static bool
parse_line(ss_feed_in *f, const char *line, long *pid, int *fd)
{
	char w[64], s[32], topic[256];
	int partition, status;
	long long last;

	if (sscanf(line, "writer %63s %ld %d", w, pid, fd) == 3)
		return true;
	if (sscanf(line, "state %31s %d", s, &status) == 2) {
		for (int i = 0; i < 3; i++)
			if (strcmp(s, state_names[i]) == 0)
				f->state = (enum ss_feed_state)i;
		f->status = status;
		return true;
	}
	if (sscanf(line, "part %255s %d %lld %31s", topic, &partition, &last, s) == 4) {
		struct ss_feed_part *p = parts_get(&f->parts, topic, partition);
		p->last = last;
		for (int i = 0; i < 4; i++)
			if (strcmp(s, pstate_names[i]) == 0)
				p->state = (enum ss_feed_pstate)i;
		return true;
	}
	return strncmp(line, "ss-feed 1", 9) == 0;
}

/* Read the file. False when it must be read again: its writer was running when it
 * wrote it but holds the pipe no more, and has written the file again since (it ended
 * between our read and our look at it: the new file says how). */
static bool
read_file(ss_feed_in *f)
{
	FILE *in = fopen(f->path, "r");
	char line[512];
	long pid = 0;
	int fd = -1;
	bool ok = in != NULL;
	struct stat st, now;

	if (in == NULL || fstat(fileno(in), &st) != 0) {
		if (in != NULL)
			fclose(in);
		return true;
	}
	f->file = st.st_ino; /* the version read, also if it was replaced since our stat */
	f->mtime = st.st_mtim;
	f->size = st.st_size;
	f->parts.n = 0;
	while (ok && fgets(line, sizeof line, in) != NULL)
		ok = parse_line(f, line, &pid, &fd);
	fclose(in);
	if (!ok || pid <= 0)
		return true;
	if (f->state == SS_FEED_RUNNING ? holds_pipe(f, pid, fd)
					: pid == f->pid || st.st_mtime + 1 >= f->started) {
		f->known = true;
		f->pid = pid;
		return true;
	}
	return f->state != SS_FEED_RUNNING || stat(f->path, &now) != 0 || now.st_ino == st.st_ino;
}

bool
ss_feed_refresh(ss_feed_in *f, bool now)
{
	int64_t mono = ss_time_mono();
	struct stat st;

	if (f == NULL || (!now && mono - f->read_at < READ_EVERY_NS))
		return false;
	f->read_at = mono;
	if (stat(f->path, &st) != 0)
		return false;
	if (st.st_ino == f->file && st.st_mtim.tv_sec == f->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == f->mtime.tv_nsec && st.st_size == f->size)
		return false;
	for (int tries = 0; tries < 3 && !read_file(f); tries++)
		;
	return f->known;
}

bool
ss_feed_known(const ss_feed_in *f)
{
	return f != NULL && f->known;
}

const struct ss_feed_part *
ss_feed_parts(const ss_feed_in *f, size_t *n)
{
	*n = f != NULL && f->known ? f->parts.n : 0;
	return *n ? f->parts.v : NULL;
}

enum ss_feed_state
ss_feed_state(const ss_feed_in *f, int *status)
{
	if (f == NULL || !f->known)
		return SS_FEED_RUNNING;
	if (f->state == SS_FEED_RUNNING) {
		/* a writer says how it ended before its end closes the pipe: one that did not
		 * was killed (it may not even be reaped yet: no use asking the kernel) */
		*status = 0;
		return SS_FEED_FAILED;
	}
	*status = f->status;
	return f->state;
}

void
ss_feed_close(ss_feed_in *f, bool consumed)
{
	if (f == NULL)
		return;
	if (consumed && f->known)
		unlink(f->path);
	free(f->parts.v);
	free(f);
}
