/* outq: an output queue that drains into a file descriptor without blocking.
 * Why not ss_writer: a consumer must keep serving its Kafka group while its reader is
 * stalled, so it cannot sit in a blocking write(2). On a pipe the queue writes through
 * a private non-blocking reopening of it (so stderr sharing the pipe keeps blocking); on
 * a socket it puts the descriptor in O_NONBLOCK mode (restored by ss_outq_free); either
 * way it writes what fits; on
 * anything else (file, terminal) writes block as usual. Positions are byte counts since
 * the start, so a caller can tell which records have fully reached the descriptor.
 * The queue owns its buffer, not the descriptor. */
#ifndef SS_OUTQ_H
#define SS_OUTQ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/buf.h"

typedef struct ss_outq ss_outq;
ss_outq *ss_outq_new(int fd, const char *name);
/* Restores the descriptor's flags; does not flush (call ss_outq_drain_all first). */
void ss_outq_free(ss_outq *q);
/* The buffer to append to; appended bytes are queued. Do not remove bytes from it. */
ss_buf *ss_outq_buf(ss_outq *q);
/* Bytes written to the descriptor since the start. */
uint64_t ss_outq_written(const ss_outq *q);
size_t ss_outq_pending(const ss_outq *q);
/* Write what the descriptor takes now. Returns 0, or EPIPE when the reader is gone;
 * exits 1 with a message on any other write error. */
int ss_outq_drain(ss_outq *q);
/* Write everything, waiting for the descriptor; 0 or EPIPE as above. */
int ss_outq_drain_all(ss_outq *q);
/* Is the reader gone (the read end of a pipe closed, a socket hung up)? Asked without
 * writing (poll(2) reports POLLERR or POLLHUP), so an idle writer notices it too. */
bool ss_outq_reader_gone(const ss_outq *q);
/* Can writes on this queue block (a pipe or socket, written without blocking)? */
bool ss_outq_nonblocking(const ss_outq *q);
#endif
