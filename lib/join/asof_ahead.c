/* Parsing an input ahead, on threads of its own (asof_run.c). Over two files the
 * join spends most of its time splitting lines, validating them and finding --on and
 * --by in them; producer threads do that for the records ahead while the main thread
 * joins: one at a time reads the file's next chunk (pread: the reader's offset is not
 * touched) and splits it into lines as ss_reader splits them (a batch, queued at once,
 * in the file's order), then parses it apart from the others, marking each line good
 * (valid JSON, its time and key read by the raw-path fast path, with them) or not. The
 * main thread takes the batches in order, each once parsed, where it would have read
 * and parsed lines itself. A regular file has two threads (PARSERS): with one per
 * file, the files' threads and the joining thread sharing two cores, one thread's file
 * was often ahead with its queue full while the other's was behind, and a core idle
 * (perf sched, wide projection at 1M: 255 ms idle over 0.49 s; 84 ms with two). A line
 * not marked good (blank, invalid, a field missing, a value only libjq can read) is
 * parsed again by the main thread with asof_parse, so that every diagnostic and
 * --on-error action happens as without the threads, in order; they never report, exit
 * or call libjq. Only for plain paths (no libjq); SS_THREADS=0 turns it off.
 *
 * A live join (asof_ahead_live: pipes, the README's pipeline) has its inputs parsed
 * ahead the same way, envelopes too, a pipe by one thread. There the main thread must
 * not wait for a record that has not come: the thread says when it has nothing to
 * parse until its input has more (starved), and the main thread then goes on with the
 * other input, or idles and polls a pipe the thread writes to when it hands over a
 * batch (wake). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/keyenc.h"
#include "base/proc.h"

enum {
	CHUNK = 128 << 10, /* bytes read at a time: one batch (SS_THREADS_CHUNK, for tests) */
	QUEUE = 3,       /* batches read ahead of the main thread (parsed or being parsed):
			    a thread waiting for room is woken as one is taken */
	PARSERS = 2,     /* threads parsing a regular file's batches (a pipe: one) */
};

struct ahead_rec {
	uint64_t off;  /* of the line in the file */
	uint64_t line;
	int64_t t;
	size_t at, len;   /* the line in the batch's buffer */
	size_t kat, klen; /* its encoded key in the batch's keys */
	uint64_t khash;   /* ... and its hash in the join's key map (asof_key_hash) */
	bool ok;
	bool has_env;     /* live: it has an envelope, in the batch's env[] at its index */
	struct asof_known known; /* --select's values in it */
	char *hist; /* with copy: the buffer the history keeps it in, until taken */
	size_t hist_len; /* ... and its bytes there (asof_hist_copy) */
};

struct ahead_batch {
	char *buf;
	size_t cap, used;
	struct ahead_rec *rec;
	size_t n, rcap;
	ss_buf keys;
	struct ss_envelope *env; /* live: the records' envelopes (has_env), by index */
	size_t envcap;
	bool last; /* the input ends after this batch */
	int err;   /* ... because of this read error, or 0 */
	bool parsed; /* its lines are parsed: the main thread may take it */
	struct asof_retired retired; /* history buffers the join is done with, to free */
	struct ahead_batch *next;
};

struct asof_ahead {
	pthread_t th[PARSERS];
	int nth;
	pthread_mutex_t mu;
	pthread_cond_t ready, room;
	struct ahead_batch *head, *tail, *spare; /* the queue, and batches to reuse */
	size_t queued; /* batches in the queue, parsed or being parsed */
	size_t reserved; /* room taken by threads about to claim a batch (reserve_room) */
	bool stop;
	/* the threads': one at a time reads and splits the next batch (under claim) */
	pthread_mutex_t claim;
	uint64_t pos, lines; /* the file offset read next, the lines so far */
	char *carry;         /* the unfinished line at the end of the last batch */
	size_t ncarry, carrycap;
	bool claimed_all;    /* the input's last batch is claimed */
	int fd;
	size_t chunk;
	ss_expr *on, *by;
	enum ss_tsunit unit;
	const struct ss_jpath *const *known; /* --select's paths found here (asof_ctx) */
	int nknown;
	bool copy; /* each good record copied for the history (asof_ahead_start) */
	const struct asof_trim *trim; /* ... as asof_hist_copy trims it */
	bool live; /* (asof_ahead_live) starved told, the main thread woken */
	bool env;  /* envelopes read: a live join's input (a batch reads none) */
	bool pipe; /* not a regular file: read(), not pread(); polled before each read */
	int stop_fd[2]; /* pipe: written to stop the thread waiting for input */
	int wake_fd[2]; /* live: written when a batch is handed over while want_wake */
	bool starved;   /* live: the thread waits for input, every batch handed over */
	bool want_wake; /* live: the main thread found nothing and polls wake_fd */
	bool woken;     /* live: wake_fd written since the main thread last emptied it */
	/* the main thread's, on cache lines of their own (the struct's size is a multiple
	 * of them): read for every record, they shared one with fields the threads write
	 * (wide projection, perf: a fifth of asof_ahead_next's samples at the load of cur) */
	_Alignas(64) const char *name;
	struct ahead_batch *cur;
	size_t next;      /* the next record of cur */
	uint64_t off;     /* the offset of the line last returned */
	uint64_t line;    /* the number of the line last taken (returned or not) */
	bool ended;
};

/* Bytes read at a time: CHUNK, or SS_THREADS_CHUNK (tests make it tiny). */
static size_t
chunk_size(void)
{
	const char *env = getenv("SS_THREADS_CHUNK");

	return env != NULL && atol(env) > 0 ? (size_t)atol(env) : CHUNK;
}

static struct ahead_batch *
batch_get(struct asof_ahead *a)
{
	ss_proc_lock(&a->mu);
	struct ahead_batch *b = a->spare;
	if (b != NULL)
		a->spare = b->next;
	ss_proc_unlock(&a->mu);
	if (b == NULL) {
		b = ss_xmalloc(sizeof *b);
		*b = (struct ahead_batch){0};
	}
	b->used = b->n = 0;
	b->last = b->parsed = false;
	b->err = 0;
	b->next = NULL;
	ss_buf_reset(&b->keys);
	return b;
}

static void
batch_free(struct ahead_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->rec[i].hist); /* (NULL once taken) */
	asof_retired_clear(&b->retired);
	free(b->retired.v);
	free(b->buf);
	free(b->rec);
	free(b->env);
	ss_buf_free(&b->keys);
	free(b);
}

static void
batch_list_free(struct ahead_batch *b)
{
	for (struct ahead_batch *next; b != NULL; b = next) {
		next = b->next;
		batch_free(b);
	}
}

static void
room_for(struct ahead_batch *b, size_t need)
{
	if (b->cap >= need)
		return;
	size_t cap = b->cap ? b->cap : need;
	while (cap < need)
		cap *= 2;
	b->buf = ss_xrealloc(b->buf, cap);
	b->cap = cap;
}

/* A good right record copied as the history keeps it (asof_hist_copy), after one of
 * the buffers the join handed back is freed: one freed for each one taken, glibc's
 * per-thread cache (7 chunks of a size) serves most of both, as it cannot when hundreds
 * come at once. free() reads the chunk's header and writes its first bytes, long out
 * of the cache: asked for a few records early. */
static char *
copy_for_history(struct asof_retired *done, const char *raw, size_t *len, const struct asof_known *known,
		 const struct asof_trim *trim)
{
	if (done->n > 4) {
		uintptr_t chunk = (uintptr_t)done->v[done->n - 5];
		__builtin_prefetch((const void *)(chunk - sizeof(size_t)), 1);
		__builtin_prefetch((const void *)chunk, 1);
	}
	if (done->n > 0)
		free(done->v[--done->n]);
	return asof_hist_copy(raw, len, known, trim);
}

/* Parse one line as asof_parse would, without reporting anything: good, with its time
 * and key, or not (the main thread parses it again). */
static void
parse(struct asof_ahead *a, struct ahead_batch *b, struct ahead_rec *r)
{
	const char *raw = b->buf + r->at, *p, *why;
	struct ss_jmember m[SS_JMEMBERS_NOTED];
	size_t nm, n;
	ss_rec rec;

	r->ok = false;
	r->has_env = false;
	r->known.n = 0;
	r->hist = NULL;
	if (ss_ndjson_blank(raw, r->len) || !ss_jscan_document_members(raw, raw + r->len, m, SS_JMEMBERS_NOTED, &nm, &why))
		return;
	if (a->env)
		r->has_env = ss_envelope_get_members(raw, r->len, m, nm, &b->env[r - b->rec]);
	ss_rec_init(&rec, raw, r->len);
	ss_rec_set_members(&rec, m, nm);
	/* (the _nojq variants: jv is libjq's, and libjq is the main thread's) */
	if (!ss_expr_raw(a->on, &rec, &p, &n) || ss_time_from_raw_nojq(p, n, a->unit, &r->t, &why) != 1)
		return;
	r->kat = b->keys.len;
	if (a->by != NULL && ss_expr_key_nojq(a->by, &rec, &b->keys) != 1)
		return;
	r->klen = b->keys.len - r->kat;
	r->khash = asof_key_hash(b->keys.data + r->kat, r->klen);
	if (a->nknown > 0)
		asof_find_known(a->known, a->nknown, raw, r->len, m, nm, &r->known);
	r->ok = true;
	if (a->copy) {
		r->hist_len = r->len;
		r->hist = copy_for_history(&b->retired, raw, &r->hist_len, &r->known, a->trim);
	}
}

static void
add_line(struct ahead_batch *b, size_t at, size_t len, uint64_t off, uint64_t line)
{
	if (b->n == b->rcap) {
		b->rcap = b->rcap ? 2 * b->rcap : 4096;
		b->rec = ss_xrealloc(b->rec, b->rcap * sizeof *b->rec);
	}
	if (len > 0 && b->buf[at + len - 1] == '\r')
		len--; /* CRLF line ends */
	struct ahead_rec *r = &b->rec[b->n++];
	/* (field by field: the rest is parse's to set, and zeroing all of it costs) */
	r->off = off;
	r->line = line;
	r->at = at;
	r->len = len;
}

/* Under the lock: the main thread, polling wake_fd, is told there is more. */
static void
wake(struct asof_ahead *a)
{
	if (!a->want_wake)
		return;
	a->want_wake = false;
	a->woken = true;
	char c = 1;
	ssize_t k = write(a->wake_fd[1], &c, 1); /* (full: a byte is there already) */
	(void)k;
}

/* Live: the thread waits for input (starved) or has some again. */
static void
starve(struct asof_ahead *a, bool starved)
{
	ss_proc_lock(&a->mu);
	a->starved = starved;
	if (starved) {
		pthread_cond_signal(&a->ready); /* the main thread may wait for a batch */
		wake(a);
	}
	ss_proc_unlock(&a->mu);
}

enum { READ_STOPPED = -2 };

/* Read more of the input at pos: a pipe is polled first, and while it has nothing the
 * thread is starved, until it has or the main thread stops it (READ_STOPPED). */
static ssize_t
read_more(struct asof_ahead *a, char *buf, size_t n, uint64_t pos)
{
	if (!a->pipe)
		return pread(a->fd, buf, n, (off_t)pos);
	struct pollfd p[2] = {{.fd = a->fd, .events = POLLIN}, {.fd = a->stop_fd[0], .events = POLLIN}};
	if (poll(p, 1, 0) == 0) {
		if (a->live)
			starve(a, true);
		int rc;
		while ((rc = poll(p, 2, -1)) < 0 && errno == EINTR)
			;
		if (a->live)
			starve(a, false);
		if (rc < 0)
			return -1;
		if (p[1].revents != 0)
			return READ_STOPPED;
	}
	return read(a->fd, buf, n);
}

/* Take room in the queue for the batch the thread is about to claim, waiting for it
 * without holding claim. Waiting under claim, one thread slept on claim behind another
 * that slept for room, and each batch taken woke both in turn (wide projection at 1M:
 * ~8,600 thread switches, ~6,300 this way; 1-3% less CPU in medians of 40 and 60
 * alternating runs). False when the main thread asked the threads to stop. */
static bool
reserve_room(struct asof_ahead *a)
{
	ss_proc_lock(&a->mu);
	while (a->queued + a->reserved >= QUEUE && !a->stop)
		ss_proc_wait(&a->room, &a->mu);
	bool stop = a->stop;
	if (!stop)
		a->reserved++;
	ss_proc_unlock(&a->mu);
	return !stop;
}

/* The room reserved goes unused: there was nothing more to claim. */
static void
unreserve_room(struct asof_ahead *a)
{
	ss_proc_lock(&a->mu);
	a->reserved--;
	pthread_cond_signal(&a->room);
	ss_proc_unlock(&a->mu);
}

/* Under claim: read into b (after the line carried over) until it holds a whole line
 * (0) or the input ends (1: b->err says whether by a read error); -1 when stopped. */
static int
read_batch(struct asof_ahead *a, struct ahead_batch *b)
{
	room_for(b, a->ncarry + a->chunk);
	if (a->ncarry)
		memcpy(b->buf, a->carry, a->ncarry);
	b->used = a->ncarry;
	for (;;) {
		room_for(b, b->used + a->chunk);
		ssize_t k = read_more(a, b->buf + b->used, a->chunk, a->pos);
		if (k == READ_STOPPED)
			return -1;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			b->err = k < 0 ? errno : 0;
			return 1;
		}
		b->used += (size_t)k;
		a->pos += (uint64_t)k;
		if (memchr(b->buf + b->used - (size_t)k, '\n', (size_t)k) != NULL)
			return 0;
	}
}

/* Under claim: b's lines (from base, its first byte's file offset), numbered on; the
 * unfinished last one carried over to the next batch, unless the input ended. */
static void
split_lines(struct asof_ahead *a, struct ahead_batch *b, uint64_t base, bool eof)
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(b->buf + start, '\n', b->used - start)) != NULL) {
		add_line(b, start, (size_t)(nl - b->buf) - start, base + start, ++a->lines);
		start = (size_t)(nl - b->buf) + 1;
	}
	a->ncarry = b->used - start;
	if (eof && a->ncarry > 0 && b->err == 0) {
		add_line(b, start, a->ncarry, base + start, ++a->lines); /* a last line without '\n' */
		a->ncarry = 0;
	}
	if (a->ncarry > a->carrycap) {
		a->carrycap = a->ncarry;
		a->carry = ss_xrealloc(a->carry, a->carrycap);
	}
	if (a->ncarry)
		memcpy(a->carry, b->buf + start, a->ncarry);
}

/* Under claim, with room reserved: the input's next batch, read and split into lines,
 * joins the queue (not parsed yet) in the input's order. NULL when the main thread
 * stopped the threads. */
static struct ahead_batch *
claim(struct asof_ahead *a)
{
	struct ahead_batch *b = batch_get(a);
	uint64_t base = a->pos - a->ncarry; /* file offset of b->buf[0] */
	int eof = read_batch(a, b);

	if (eof < 0) {
		batch_free(b);
		return NULL;
	}
	split_lines(a, b, base, eof == 1);
	if (a->env && b->envcap < b->n) {
		b->envcap = b->rcap;
		b->env = ss_xrealloc(b->env, b->envcap * sizeof *b->env);
	}
	b->last = a->claimed_all = eof == 1;
	ss_proc_lock(&a->mu);
	if (a->tail)
		a->tail->next = b;
	else
		a->head = b;
	a->tail = b;
	a->queued++;
	a->reserved--;
	ss_proc_unlock(&a->mu);
	return b;
}

/* The batch is parsed: the main thread may take it. */
static void
hand_over(struct asof_ahead *a, struct ahead_batch *b)
{
	ss_proc_lock(&a->mu);
	b->parsed = true;
	pthread_cond_signal(&a->ready);
	wake(a);
	ss_proc_unlock(&a->mu);
}

/* A file's parsing threads run as batch work (ss_proc_thread_batch). They sleep for
 * room in the queue after each batch, and the main thread, taking one, wakes them: on
 * the main thread's core (no other idle), a woken thread preempted it, and each batch
 * cost the join a switch and the cache it had (wide projection at 1M: ~6,300 switches,
 * ~3,200 this way; 0.83-0.91x wall in medians of 14-16 alternating runs, 0.94x whole
 * records; 0.94x with a CPU hog in another session). A CPU-bound process in the join's
 * own session (autogroup) now gets its fair share where the threads' wake-ups took
 * part of it: 1.09-1.22x there. A live join's thread keeps its turn: a record that
 * comes is to be answered now. */
static void *
produce(void *arg)
{
	struct asof_ahead *a = arg;

	if (!a->live)
		ss_proc_thread_batch();
	for (;;) {
		if (!reserve_room(a))
			break;
		ss_proc_lock(&a->claim);
		struct ahead_batch *b = a->claimed_all ? NULL : claim(a);
		ss_proc_unlock(&a->claim);
		if (b == NULL) {
			unreserve_room(a);
			break;
		}
		for (size_t i = 0; i < b->n; i++)
			parse(a, b, &b->rec[i]);
		asof_retired_clear(&b->retired); /* the rest (see parse) */
		hand_over(a, b);
	}
	return NULL;
}

/* A regular file whose reader reads it from its start (a file given as standard input
 * may be open further in: the reader reads from there, and so is left to it). */
static bool
at_start(ss_reader *r, struct stat *st)
{
	return fstat(ss_reader_fd(r), st) == 0 && S_ISREG(st->st_mode) && lseek(ss_reader_fd(r), 0, SEEK_CUR) == 0;
}

/* Can a thread parse this side's records? Its --on is a plain path and its --by a path
 * or an array of them (no libjq on the thread), and its reader has not read anything
 * yet. */
static bool
parsable_ahead(ss_asof *j, ss_reader *r, bool left)
{
	ss_expr *on = left ? j->cx->lon : j->cx->ron, *by = left ? j->cx->lby : j->cx->rby;

	return ss_proc_threads() && ss_reader_lineno(r) == 0 && ss_reader_offset(r) == 0 &&
	       ss_expr_is_path(on) && (by == NULL || ss_expr_is_paths(by));
}

static void
close_pipe(int fd[2])
{
	if (fd[0] >= 0) {
		close(fd[0]);
		close(fd[1]);
	}
	fd[0] = fd[1] = -1;
}

static void
ahead_free(struct asof_ahead *a)
{
	batch_list_free(a->head);
	batch_list_free(a->spare);
	if (a->cur)
		batch_free(a->cur);
	close_pipe(a->stop_fd);
	close_pipe(a->wake_fd);
	free(a->carry);
	pthread_mutex_destroy(&a->claim);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->ready);
	pthread_cond_destroy(&a->room);
	free(a);
}

static struct asof_ahead *
start(ss_asof *j, ss_reader *r, bool left, bool copy, bool live, bool pipe)
{
	struct asof_ahead *a = aligned_alloc(_Alignof(struct asof_ahead), sizeof *a); /* (see name) */
	if (a == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	*a = (struct asof_ahead){.fd = ss_reader_fd(r), .on = left ? j->cx->lon : j->cx->ron,
				 .by = left ? j->cx->lby : j->cx->rby, .unit = j->o.unit,
				 .name = ss_reader_name(r), .chunk = chunk_size(), .copy = copy,
				 .live = live, .env = live && !j->batch, .pipe = pipe,
				 .stop_fd = {-1, -1}, .wake_fd = {-1, -1}};
	a->known = j->cx->known[left];
	a->nknown = j->cx->nknown[left];
	a->trim = &j->cx->trim;
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->claim, NULL);
	pthread_cond_init(&a->ready, NULL);
	pthread_cond_init(&a->room, NULL);
	/* (pipes never block: a full one holds a byte already, an empty one is done with) */
	if ((pipe && pipe2(a->stop_fd, O_NONBLOCK | O_CLOEXEC) != 0) ||
	    (live && pipe2(a->wake_fd, O_NONBLOCK | O_CLOEXEC) != 0) ||
	    ss_proc_thread(&a->th[0], produce, a) != 0) {
		ahead_free(a);
		return NULL; /* parsed on the main thread, as without threads */
	}
	a->nth = 1;
	while (!pipe && a->nth < PARSERS && ss_proc_thread(&a->th[a->nth], produce, a) == 0)
		a->nth++;
	return a;
}

struct asof_ahead *
asof_ahead_start(ss_asof *j, ss_reader *r, bool left, bool copy)
{
	struct stat st;

	if (!j->batch || !parsable_ahead(j, r, left) || !at_start(r, &st))
		return NULL;
	return start(j, r, left, copy, false, false);
}

struct asof_ahead *
asof_ahead_live(ss_asof *j, ss_reader *r, bool left)
{
	struct stat st;

	if (!parsable_ahead(j, r, left) || fstat(ss_reader_fd(r), &st) != 0)
		return NULL;
	if (S_ISREG(st.st_mode) && lseek(ss_reader_fd(r), 0, SEEK_CUR) != 0)
		return NULL; /* (see at_start) */
	/* the one join's right records copied for its history on the thread, as a merge's */
	bool copy = !left && j->one != NULL;
	struct asof_ahead *a = start(j, r, left, copy, true, !S_ISREG(st.st_mode));
	if (a != NULL && copy)
		j->one->retired = &j->retired;
	return a;
}

int
asof_ahead_wake_fd(const struct asof_ahead *a)
{
	return a->wake_fd[0];
}

void
asof_ahead_stop(struct asof_ahead *a)
{
	if (a == NULL)
		return;
	for (int i = 0; i < a->nth; i++)
		if (pthread_equal(pthread_self(), a->th[i]))
			return; /* (a thread itself exits only when out of memory) */
	ss_proc_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->room);
	if (a->stop_fd[1] >= 0) {
		char c = 1;
		ssize_t k = write(a->stop_fd[1], &c, 1); /* (a thread waiting for input) */
		(void)k;
	}
	ss_proc_unlock(&a->mu);
	for (int i = 0; i < a->nth; i++)
		pthread_join(a->th[i], NULL);
	ahead_free(a);
}

/* Under mu, before the queue is looked at: the main thread's last request to be woken
 * (want_wake) is taken back, and the wake pipe emptied if a thread wrote to it. Where
 * none did, the pipe is empty and is not read (a read a batch, failing, was half of a
 * live join's read calls, strace). */
static void
drain_wake(struct asof_ahead *a)
{
	char buf[64];

	a->want_wake = false;
	while (a->woken && read(a->wake_fd[0], buf, sizeof buf) > 0)
		;
	a->woken = false;
}

/* The main thread is done with cur: it is reused, and takes the buffers in done (if
 * any) to the thread to free; the next batch, waited for. False (cur NULL) when the
 * thread of a live join is starved: nothing comes until its input has more, and the
 * main thread is woken through wake_fd when it has. */
static bool
advance(struct asof_ahead *a, struct asof_retired *done)
{
	if (a->cur && done) {
		struct asof_retired empty = a->cur->retired; /* (emptied once parsed: produce) */
		a->cur->retired = *done;
		*done = empty;
	}
	ss_proc_lock(&a->mu);
	drain_wake(a);
	if (a->cur) {
		a->cur->next = a->spare;
		a->spare = a->cur;
		a->cur = NULL;
	}
	while ((a->head == NULL || !a->head->parsed) && !a->starved)
		ss_proc_wait(&a->ready, &a->mu);
	if (a->head == NULL || !a->head->parsed) {
		a->want_wake = true;
		ss_proc_unlock(&a->mu);
		return false;
	}
	a->cur = a->head;
	a->head = a->cur->next;
	if (a->head == NULL)
		a->tail = NULL;
	a->queued--;
	pthread_cond_signal(&a->room);
	ss_proc_unlock(&a->mu);
	a->next = 0;
	return true;
}

/* The key map is out of the cache for most records (10,000 keys and their histories):
 * the records to come of this batch have their lookups started stage by stage, so that
 * their cache misses overlap instead of each stalling the join in turn. Distances in
 * records of this input; the join takes the other's in between. A stage is taken for
 * AHEAD_GROUP records at once, every AHEAD_GROUP records: the key stage is a load (see
 * asof_key_prefetch_stage), and a group's loads, independent of each other, wait for
 * memory together rather than one after another (wide shape, perf: the main thread's
 * wait there 30% -> 20% of its samples). The entries themselves are asked for
 * ENTRY_AHEAD records early, past the farthest stage (5 groups): at 24, the stages' reads
 * of their keys' hashes were a third of asof_ahead_next's samples. */
enum { AHEAD_GROUP = 8, ENTRY_AHEAD = 6 * AHEAD_GROUP };

static void
prefetch_ahead(const ss_asof *j, const struct ahead_batch *b, size_t next, bool left)
{
	static const struct {
		size_t dist;
		enum asof_ahead_stage stage;
	} plan[] = {{4 * AHEAD_GROUP, ASOF_AHEAD_SLOT},
		    {3 * AHEAD_GROUP, ASOF_AHEAD_KEY},
		    {2 * AHEAD_GROUP, ASOF_AHEAD_HIST},
		    {AHEAD_GROUP, ASOF_AHEAD_BYTES}};

	/* the batch was written on another core: its entries and lines are read from
	 * there, a miss each unless asked for early */
	if (next + ENTRY_AHEAD < b->n) { /* an entry spans two or three cache lines */
		const char *e = (const char *)&b->rec[next + ENTRY_AHEAD];
		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
		__builtin_prefetch(e + sizeof *b->rec - 1);
	}
	if (next + 4 < b->n)
		for (size_t at = 0; at < b->rec[next + 4].len && at < 256; at += 64)
			__builtin_prefetch(b->buf + b->rec[next + 4].at + at);
	if (j->one == NULL || next % AHEAD_GROUP != 0 || asof_join_keys_cached(j->one))
		return;
	for (size_t s = 0; s < sizeof plan / sizeof plan[0]; s++) {
		if (plan[s].stage == ASOF_AHEAD_BYTES && !left)
			continue; /* only a left record copies its match */
		for (size_t i = next + plan[s].dist; i < next + plan[s].dist + AHEAD_GROUP && i < b->n; i++)
			if (b->rec[i].ok)
				asof_join_prefetch_stage(j->one, b->rec[i].khash, plan[s].stage);
	}
}

enum asof_got
asof_ahead_next(ss_asof *j, struct asof_ahead *a, bool left, struct asof_in *in)
{
	for (;;) {
		if (a->cur == NULL || a->next == a->cur->n) {
			if (a->ended)
				return ASOF_GOT_NONE;
			if (a->cur != NULL && a->cur->last) {
				if (a->cur->err != 0)
					ss_diag_die(SS_EXIT_DATA, "%s: read: %s", a->name, strerror(a->cur->err));
				a->ended = true;
				return ASOF_GOT_NONE;
			}
			if (!advance(a, a->copy ? &j->retired : NULL))
				return ASOF_GOT_WAIT;
			continue;
		}
		struct ahead_rec *r = &a->cur->rec[a->next++];
		const char *raw = a->cur->buf + r->at;
		prefetch_ahead(j, a->cur, a->next, left);
		a->off = r->off;
		a->line = r->line;
		if (!r->ok || (j->dir != NULL && !r->has_env)) { /* (the latter rejected there) */
			enum asof_got got = asof_parse(j, left, raw, r->len, r->line, in);
			if (got != ASOF_GOT_NONE)
				return got;
			continue;
		}
		in->raw = raw;
		in->len = r->len;
		in->line = r->line;
		in->t = r->t;
		/* (asof_parse.c parse_valid: a batch reads no envelopes, nor a bare left input) */
		in->has_env = r->has_env && !(left && j->left_bare);
		if (in->has_env)
			in->env = a->cur->env[r - a->cur->rec];
		ss_buf_reset(&in->key);
		if (r->klen > 0)
			ss_buf_add(&in->key, a->cur->keys.data + r->kat, r->klen);
		in->khash = r->khash;
		in->known.n = r->known.n;
		if (r->known.n > 0)
			in->known = r->known;
		in->hist = r->hist; /* the caller's now */
		in->hist_len = r->hist_len;
		r->hist = NULL;
		asof_parsed(j, left, in);
		return ASOF_GOT_RECORD;
	}
}

uint64_t
asof_ahead_offset(const struct asof_ahead *a)
{
	return a->off;
}

uint64_t
asof_ahead_lineno(const struct asof_ahead *a)
{
	return a->line;
}

/* ---- is a file in time order? ---- */

/* One part of the file, checked as in_order (asof_run.c) checks the whole: the times of
 * its lines that have one, in order? unknown: a line whose time only libjq could tell
 * (the raw path did not find it), or a read error: the caller checks the file itself.
 * Each on cache lines of its own: the two sit side by side on the caller's stack, and
 * where one's `any` and `last` (written every line) shared a line with the other's `on`
 * and `unit` (read every line), order_line took ~100 samples instead of ~8 (perf at
 * 2 kHz, the wide join at 1M: ~50 ms of CPU before the join starts). Whether they
 * shared one depended on where the stack starts, which ASLR draws: half the runs. */
struct order_part {
	_Alignas(64) int fd;
	uint64_t from, to;
	size_t chunk;
	ss_expr *on;
	enum ss_tsunit unit;
	atomic_bool *quit; /* the other part found its answer: no need to go on */
	bool any, sorted, unknown;
	int64_t first, last;
};

/* Take a line's time as asof_peek_time does; false when the part is decided. */
static bool
order_line(struct order_part *p, const char *line, size_t len)
{
	const char *v, *why;
	size_t n;
	int64_t t;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (!ss_expr_look(p->on, line, len, &v, &n)) {
		p->unknown = true;
		return false;
	}
	switch (ss_time_from_raw_nojq(v, n, p->unit, &t, &why)) {
	case -1:
		p->unknown = true; /* libjq's to tell */
		return false;
	case 0:
		return true;
	}
	if (p->any && t < p->last) {
		p->sorted = false;
		return false;
	}
	if (!p->any)
		p->first = t;
	p->any = true;
	p->last = t;
	return true;
}

static void *
order_check(void *arg)
{
	struct order_part *p = arg;
	size_t cap = 2 * p->chunk, used = 0;
	char *buf = malloc(cap);
	uint64_t pos = p->from;
	bool go = buf != NULL;

	p->sorted = true;
	p->unknown = buf == NULL;
	while (go && !atomic_load_explicit(p->quit, memory_order_relaxed)) {
		if (cap - used < p->chunk) {
			char *nb = realloc(buf, 2 * cap);
			if (nb == NULL) {
				p->unknown = true;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t want = cap - used;
		if (p->to - pos < want)
			want = (size_t)(p->to - pos);
		ssize_t k = want ? pread(p->fd, buf + used, want, (off_t)pos) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			p->unknown = true;
			break;
		}
		used += (size_t)k;
		pos += (uint64_t)k;
		size_t start = 0;
		char *nl;
		while (go && (nl = memchr(buf + start, '\n', used - start)) != NULL) {
			go = order_line(p, buf + start, (size_t)(nl - buf) - start);
			start = (size_t)(nl - buf) + 1;
		}
		if (go && k == 0) {
			if (used > start)
				go = order_line(p, buf + start, used - start); /* a last line without '\n' */
			break;
		}
		memmove(buf, buf + start, used - start);
		used -= start;
	}
	if (!p->sorted || p->unknown)
		atomic_store(p->quit, true);
	free(buf);
	return NULL;
}

bool
asof_ahead_in_order(ss_asof *j, ss_reader *r, bool left, bool *sorted)
{
	ss_expr *on = left ? j->cx->lon : j->cx->ron;
	size_t csize = chunk_size();
	struct stat st;
	char blk[4096];
	ssize_t k = 0;

	if (!ss_proc_threads() || !ss_expr_is_path(on) || !at_start(r, &st) || (uint64_t)st.st_size < 2 * csize)
		return false;
	/* the second part starts after the first newline from the middle on */
	uint64_t size = (uint64_t)st.st_size, mid = size / 2;
	const char *nl = NULL;
	while (nl == NULL && (k = pread(ss_reader_fd(r), blk, sizeof blk, (off_t)mid)) > 0)
		if ((nl = memchr(blk, '\n', (size_t)k)) == NULL)
			mid += (uint64_t)k;
	if (nl == NULL)
		return false;
	mid += (uint64_t)(nl - blk) + 1;
	if (mid >= size)
		return false;
	atomic_bool quit = false;
	struct order_part part[2] = {
		{.fd = ss_reader_fd(r), .from = 0, .to = mid, .chunk = csize, .on = on, .unit = j->o.unit, .quit = &quit},
		{.fd = ss_reader_fd(r), .from = mid, .to = size, .chunk = csize, .on = on, .unit = j->o.unit, .quit = &quit},
	};
	pthread_t th;
	if (ss_proc_thread(&th, order_check, &part[0]) != 0)
		return false;
	order_check(&part[1]);
	pthread_join(th, NULL);
	if (part[0].unknown || part[1].unknown)
		return false;
	*sorted = part[0].sorted && part[1].sorted &&
		  (!part[0].any || !part[1].any || part[1].first >= part[0].last);
	return true;
}
