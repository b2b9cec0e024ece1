/* outq: output drained without blocking (see outq.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "stream/outq.h"

struct ss_outq {
	ss_buf buf;
	size_t head;      /* buf.data[0, head) is written */
	uint64_t written; /* bytes written since the start */
	int fd;
	int saved_flags;
	bool nonblock;
	bool own_fd;      /* fd is our private reopening of the caller's pipe */
	char *name;
};

/* O_NONBLOCK is a flag of the open file description, which a pipe's writer usually
 * shares: with `2>&1 |` stderr, and a parent shell's later commands. Reopening the pipe
 * through /proc gives this queue a description of its own, so the flag stays private.
 * Returns -1 where that is impossible (sockets, no /proc). */
static int
reopen_private(int fd)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
}

ss_outq *
ss_outq_new(int fd, const char *name)
{
	ss_outq *q = ss_xmalloc(sizeof *q);
	struct stat st;
	int own;

	memset(q, 0, sizeof *q);
	q->fd = fd;
	q->name = ss_xstrdup(name);
	q->saved_flags = fcntl(fd, F_GETFL);
	/* Only pipes and sockets: a terminal or file is shared with others, who would see
	 * EAGAIN, and a file never blocks for long anyway. */
	if (q->saved_flags == -1 || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return q;
	if (S_ISFIFO(st.st_mode) && (own = reopen_private(fd)) != -1) {
		q->fd = own;
		q->own_fd = q->nonblock = true;
		return q;
	}
	q->nonblock = fcntl(fd, F_SETFL, q->saved_flags | O_NONBLOCK) == 0;
	return q;
}

void
ss_outq_free(ss_outq *q)
{
	if (q == NULL)
		return;
	if (q->own_fd)
		close(q->fd);
	else if (q->nonblock)
		fcntl(q->fd, F_SETFL, q->saved_flags);
	ss_buf_free(&q->buf);
	free(q->name);
	free(q);
}

ss_buf *
ss_outq_buf(ss_outq *q)
{
	return &q->buf;
}

uint64_t
ss_outq_written(const ss_outq *q)
{
	return q->written;
}

size_t
ss_outq_pending(const ss_outq *q)
{
	return q->buf.len - q->head;
}

bool
ss_outq_nonblocking(const ss_outq *q)
{
	return q->nonblock;
}

bool
ss_outq_reader_gone(const ss_outq *q)
{
	struct pollfd pfd = {.fd = q->fd, .events = 0};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP)) != 0;
}

/* Move the unwritten tail to the front once the written part dominates the buffer. */
static void
compact(ss_outq *q)
{
	size_t rest = q->buf.len - q->head;

	if (rest == 0) {
		q->buf.len = q->head = 0;
	} else if (q->head > 65536 && q->head > rest) {
		memmove(q->buf.data, q->buf.data + q->head, rest);
		q->buf.len = rest;
		q->head = 0;
	}
}

int
ss_outq_drain(ss_outq *q)
{
	ssize_t n;

	while (q->head < q->buf.len) {
		n = write(q->fd, q->buf.data + q->head, q->buf.len - q->head);
		if (n > 0) {
			q->head += (size_t)n;
			q->written += (uint64_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else if (n < 0 && errno == EPIPE) {
			return EPIPE;
		} else {
			ss_diag_die(SS_EXIT_DATA, "write error on %s: %s", q->name,
				    n < 0 ? strerror(errno) : "short write");
		}
	}
	compact(q);
	return 0;
}

int
ss_outq_drain_all(ss_outq *q)
{
	struct pollfd pfd = {.fd = q->fd, .events = POLLOUT};
	int rc;

	while ((rc = ss_outq_drain(q)) == 0 && ss_outq_pending(q) > 0)
		(void)poll(&pfd, 1, 1000);
	return rc;
}
