#include "stream/ndjson.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/diag.h"
#include "stream/wfile.h"
#include "base/jscan.h"
#include "base/proc.h"

/* ---- --on-error ---- */

bool
ss_errpolicy_parse(struct ss_errpolicy *pol, const char *arg)
{
	memset(pol, 0, sizeof *pol);
	if (strcmp(arg, "fail") == 0)
		pol->mode = SS_ONERROR_FAIL;
	else if (strcmp(arg, "skip") == 0)
		pol->mode = SS_ONERROR_SKIP;
	else if (strncmp(arg, "dead-letter=", 12) == 0 && arg[12]) {
		pol->mode = SS_ONERROR_DEADLETTER;
		pol->deadletter_path = ss_xstrdup(arg + 12);
		pol->deadletter = ss_wfile_append(pol->deadletter_path);
		if (pol->deadletter == NULL)
			ss_diag_die(SS_EXIT_DATA, "%s: %s", pol->deadletter_path, ss_wfile_strerror(errno));
	} else
		return false;
	return true;
}

void
ss_errpolicy_close(struct ss_errpolicy *pol)
{
	if (pol->deadletter && fclose(pol->deadletter) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", pol->deadletter_path, strerror(errno));
	pol->deadletter = NULL;
	free(pol->deadletter_path);
	pol->deadletter_path = NULL;
}

static void
write_deadletter(struct ss_errpolicy *pol, const char *source, uint64_t line,
		 const char *raw, size_t len, const char *reason)
{
	ss_buf b = {0};

	ss_buf_adds(&b, "{\"source\":");
	ss_jscan_quote(&b, source, strlen(source));
	char num[32];
	snprintf(num, sizeof num, ",\"line\":%llu,\"reason\":", (unsigned long long)line);
	ss_buf_adds(&b, num);
	ss_jscan_quote(&b, reason, strlen(reason));
	ss_buf_adds(&b, ",\"raw\":");
	if (!ss_jscan_quote(&b, raw, len)) {
		/* not UTF-8: keep the exact bytes as well */
		ss_buf_adds(&b, ",\"raw_base64\":\"");
		ss_buf_base64(&b, raw, len);
		ss_buf_addc(&b, '"');
	}
	ss_buf_adds(&b, "}\n");
	if (fwrite(b.data, 1, b.len, pol->deadletter) != b.len || fflush(pol->deadletter) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", pol->deadletter_path, strerror(errno));
	ss_buf_free(&b);
}

void
ss_errpolicy_reject(struct ss_errpolicy *pol, const char *source, uint64_t line,
		    const char *raw, size_t len, const char *reason)
{
	switch (pol->mode) {
	case SS_ONERROR_FAIL:
		ss_diag_die(SS_EXIT_DATA, "%s:%llu: %s", source, (unsigned long long)line, reason);
	case SS_ONERROR_SKIP:
		ss_diag_warn("%s:%llu: %s (skipped)", source, (unsigned long long)line, reason);
		break;
	case SS_ONERROR_DEADLETTER:
		write_deadletter(pol, source, line, raw, len, reason);
		break;
	}
}

/* ---- reader ---- */

struct ss_reader {
	int fd;
	bool own_fd, eof;
	char *name;
	char *buf;
	size_t cap, start, end; /* unread bytes are buf[start, end) */
	size_t scanned;         /* buf[start, start+scanned) has no '\n' */
	uint64_t base;          /* input offset of buf[0] */
	uint64_t line_off;      /* input offset of the line last returned */
	uint64_t lineno;
	void (*idle)(void *);
	void *idle_arg;
};

ss_reader *
ss_reader_new(int fd, const char *name, bool own_fd)
{
	ss_reader *r = calloc(1, sizeof *r);

	if (r == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	r->fd = fd;
	r->own_fd = own_fd;
	r->name = ss_xstrdup(name);
	r->cap = 256 * 1024;
	r->buf = ss_xmalloc(r->cap);
	return r;
}

ss_reader *
ss_reader_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return ss_reader_new(0, "<stdin>", false);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, strerror(errno));
	return ss_reader_new(fd, path, true);
}

void
ss_reader_free(ss_reader *r)
{
	if (r == NULL)
		return;
	if (r->own_fd)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r);
}

void
ss_reader_set_idle(ss_reader *r, void (*idle)(void *), void *arg)
{
	r->idle = idle;
	r->idle_arg = arg;
}

int
ss_reader_fd(const ss_reader *r)
{
	return r->fd;
}

uint64_t
ss_reader_lineno(const ss_reader *r)
{
	return r->lineno;
}

void
ss_reader_rewind(ss_reader *r)
{
	if (lseek(r->fd, 0, SEEK_SET) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: seek: %s", r->name, strerror(errno));
	r->eof = false;
	r->start = r->end = r->scanned = 0;
	r->base = r->line_off = r->lineno = 0;
}

uint64_t
ss_reader_offset(const ss_reader *r)
{
	return r->line_off;
}

const char *
ss_reader_name(const ss_reader *r)
{
	return r->name;
}

/* Return the next complete line already in the buffer, if any. */
static int
take_line(ss_reader *r, const char **line, size_t *len)
{
	char *s = r->buf + r->start;
	char *nl = memchr(s + r->scanned, '\n', r->end - r->start - r->scanned);

	if (nl == NULL) {
		r->scanned = r->end - r->start;
		if (!r->eof || r->start == r->end)
			return 0;
		nl = r->buf + r->end; /* last line without '\n' */
	}
	*line = s;
	*len = (size_t)(nl - s);
	r->line_off = r->base + r->start;
	if (*len > 0 && s[*len - 1] == '\r')
		(*len)--; /* CRLF line ends */
	r->start = nl < r->buf + r->end ? (size_t)(nl - r->buf) + 1 : r->end;
	r->scanned = 0;
	r->lineno++;
	return 1;
}

/* Make room after end: move unread bytes to the front, or grow. */
static void
make_room(ss_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->base += r->start;
		r->start = 0;
	}
	if (r->cap - r->end < 64 * 1024) {
		r->cap *= 2;
		r->buf = ss_xrealloc(r->buf, r->cap);
	}
}

/* One read(2); returns bytes read, 0 at end of input, -1 when it would block or a
 * signal caught (lib/base/proc.h) cut it short. */
static ssize_t
fill(ss_reader *r)
{
	make_room(r);
	for (;;) {
		ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n >= 0) {
			r->end += (size_t)n;
			if (n == 0)
				r->eof = true;
			return n;
		}
		if (errno == EINTR && !ss_proc_signal())
			continue;
		if (errno == EINTR || errno == EAGAIN)
			return -1;
		ss_diag_die(SS_EXIT_DATA, "%s: read: %s", r->name, strerror(errno));
	}
}

static bool
readable_now(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) > 0;
}

int
ss_reader_next(ss_reader *r, const char **line, size_t *len)
{
	for (;;) {
		if (take_line(r, line, len))
			return 1;
		if (r->eof)
			return 0;
		if (r->idle && !readable_now(r->fd))
			r->idle(r->idle_arg);
		if (fill(r) < 0 && ss_proc_signal())
			return -1;
	}
}

int
ss_reader_try_next(ss_reader *r, const char **line, size_t *len)
{
	for (;;) {
		if (take_line(r, line, len))
			return 1;
		if (r->eof)
			return 0;
		if (!readable_now(r->fd))
			return -1;
		if (fill(r) < 0)
			return -1;
	}
}

bool
ss_ndjson_next_line(const char **cursor, const char *end, const char **line, size_t *len)
{
	const char *p = *cursor;

	if (p >= end)
		return false;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *stop = nl ? nl : end;
	*line = p;
	*len = (size_t)(stop - p);
	if (*len > 0 && p[*len - 1] == '\r')
		(*len)--; /* CRLF line ends */
	*cursor = nl ? nl + 1 : end;
	return true;
}

bool
ss_ndjson_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/* ---- writer ---- */

/* 256 KiB: a quarter of the hand-overs (and the writer's wake-ups) of 64 KiB */
#define WBUF (256 * 1024)

/* A writer's thread (ss_writer_async): it writes the buffers the writer hands it, one
 * at a time, while the caller fills the other; a failed write is kept for the caller
 * to report at its next hand-over or flush. */
struct wthread {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *pending; /* handed over, not yet written */
	size_t pending_len;
	char *spare;   /* written: the caller's next buffer */
	int err;       /* errno of the failed write, kept */
	bool stop;
};

struct ss_writer {
	int fd;
	char *name;
	size_t len;
	char *buf;            /* WBUF bytes being filled */
	struct wthread *thr;  /* or NULL: writes are the caller's */
	bool failed;          /* a write failed: reported */
	ss_buf scratch;       /* for escaping strings */
};

ss_writer *
ss_writer_new(int fd, const char *name)
{
	ss_writer *w = ss_xmalloc(sizeof *w);

	/* A closed pipe is reported as EPIPE and ends the tool quietly in flush(), after
	 * atexit handlers have committed state; the default SIGPIPE would skip them. */
	ss_proc_ignore_pipe();
	w->fd = fd;
	w->name = ss_xstrdup(name);
	w->len = 0;
	w->buf = ss_xmalloc(WBUF);
	w->thr = NULL;
	w->failed = false;
	w->scratch = (ss_buf){0};
	return w;
}

/* 0, or the errno of a write that failed. */
static int
write_fd(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pf = {.fd = fd, .events = POLLOUT};
				poll(&pf, 1, -1);
				continue;
			}
			return errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* On the caller's thread: a closed pipe ends the tool as SIGPIPE would, another error
 * with a message, each after the exit handlers. They flush, and so come back here (the
 * write fails again, or the thread's error is kept): ss_diag_exit then ends at once,
 * before anything is committed, and the message is not said twice. */
static void
report(ss_writer *w, int err)
{
	bool again = w->failed;

	w->failed = true;
	if (err == EPIPE)
		ss_diag_exit(SS_EXIT_PIPE);
	if (again)
		ss_diag_exit(SS_EXIT_DATA);
	ss_diag_die(SS_EXIT_DATA, "%s: write: %s", w->name, strerror(err));
}

static void
write_all(ss_writer *w, const char *p, size_t n)
{
	int err = write_fd(w->fd, p, n);

	if (err != 0)
		report(w, err);
}

static void *
wt_main(void *arg)
{
	ss_writer *w = arg;
	struct wthread *t = w->thr;

	ss_proc_lock(&t->mu);
	for (;;) {
		while (t->pending == NULL && !t->stop)
			ss_proc_wait(&t->cv, &t->mu);
		if (t->pending == NULL)
			break;
		char *p = t->pending;
		size_t n = t->pending_len;
		ss_proc_unlock(&t->mu);
		int err = t->err ? 0 : write_fd(w->fd, p, n); /* nothing after a failed write */
		ss_proc_lock(&t->mu);
		if (err != 0)
			t->err = err;
		t->spare = p;
		t->pending = NULL;
		pthread_cond_broadcast(&t->cv);
	}
	ss_proc_unlock(&t->mu);
	return NULL;
}

/* Wait until the thread has written what it was handed; report a failed write. */
static void
wt_drain(ss_writer *w)
{
	struct wthread *t = w->thr;

	ss_proc_lock(&t->mu);
	while (t->pending != NULL)
		ss_proc_wait(&t->cv, &t->mu);
	int err = t->err;
	ss_proc_unlock(&t->mu);
	if (err != 0)
		report(w, err);
}

/* Hand the buffer filled to the thread and take the one it has written. */
static void
wt_hand_over(ss_writer *w)
{
	struct wthread *t = w->thr;

	wt_drain(w);
	ss_proc_lock(&t->mu);
	t->pending = w->buf;
	t->pending_len = w->len;
	w->buf = t->spare;
	t->spare = NULL;
	pthread_cond_broadcast(&t->cv);
	ss_proc_unlock(&t->mu);
	w->len = 0;
}

void
ss_writer_async(ss_writer *w)
{
	struct wthread *t = ss_xmalloc(sizeof *t);

	*t = (struct wthread){.spare = ss_xmalloc(WBUF)};
	if (pthread_mutex_init(&t->mu, NULL) != 0 || pthread_cond_init(&t->cv, NULL) != 0)
		abort();
	w->thr = t;
	if (ss_proc_thread(&t->th, wt_main, w) != 0) { /* writes stay the caller's */
		w->thr = NULL;
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t->spare);
		free(t);
	}
}

/* Stop the thread once it has written everything (ss_writer_free). */
static void
wt_stop(ss_writer *w)
{
	struct wthread *t = w->thr;

	ss_proc_lock(&t->mu);
	t->stop = true;
	pthread_cond_broadcast(&t->cv);
	ss_proc_unlock(&t->mu);
	pthread_join(t->th, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t->spare);
	free(t);
	w->thr = NULL;
}

void
ss_writer_flush(ss_writer *w)
{
	if (w->thr == NULL) {
		write_all(w, w->buf, w->len);
		w->len = 0;
		return;
	}
	if (w->len > 0)
		wt_hand_over(w);
	wt_drain(w);
}

/* The buffer is full: written now, or handed to the thread. */
static void
buffer_full(ss_writer *w)
{
	if (w->thr != NULL)
		wt_hand_over(w);
	else
		ss_writer_flush(w);
}

void
ss_writer_write(ss_writer *w, const char *p, size_t n)
{
	if (n > WBUF) { /* longer than a buffer: straight out, after all before it */
		ss_writer_flush(w);
		write_all(w, p, n);
		return;
	}
	if (w->len + n > WBUF)
		buffer_full(w);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void
ss_writer_reserve(ss_writer *w, size_t n)
{
	if (w->len + n > WBUF)
		buffer_full(w);
}

void
ss_writer_puts(ss_writer *w, const char *s)
{
	ss_writer_write(w, s, strlen(s));
}

void
ss_writer_putc(ss_writer *w, char c)
{
	if (w->len == WBUF)
		buffer_full(w);
	w->buf[w->len++] = c;
}

void
ss_writer_json_string(ss_writer *w, const char *s, size_t len)
{
	ss_buf_reset(&w->scratch);
	ss_jscan_quote(&w->scratch, s, len);
	ss_writer_write(w, w->scratch.data, w->scratch.len);
}

void
ss_writer_free(ss_writer *w)
{
	if (w == NULL)
		return;
	ss_writer_flush(w);
	if (w->thr != NULL)
		wt_stop(w);
	free(w->buf);
	ss_buf_free(&w->scratch);
	free(w->name);
	free(w);
}

