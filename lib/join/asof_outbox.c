/* --acks: the results a commit covers are not lost with a killed deliverer. Every result
 * line goes into the state's outbox in the batch of the state change that made it, and
 * stays there until the deliverer's acks file (lib/db/acks.h) counts it delivered; a new
 * run writes what the outbox kept again, before anything else. Lines are numbered per
 * run across all partition-joins of a --state-dir, as the deliverer counts them; each
 * join remembers which of its outbox rows went out as which line. At least once: a
 * result delivered but not yet counted as such is written again after a crash. */
#include <inttypes.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"

/* Results undelivered before the run says so on stderr: is the deliverer reporting? */
#define BACKLOG_WARN 1000000

static void
outbox_push(struct asof_outbox *o, uint64_t line, int64_t row)
{
	if (o->head > 0 && o->head + o->n == o->cap) {
		memmove(o->v, o->v + o->head, o->n * sizeof *o->v);
		o->head = 0;
	}
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 1024;
		o->v = ss_xrealloc(o->v, o->cap * sizeof *o->v);
	}
	o->v[o->head + o->n++] = (struct asof_sent){.line = line, .row = row};
}

/* Write a line of j's; with --acks, keep it in the outbox as row (0: put it there). */
static void
write_line(asof_join *j, const char *line, size_t len, int64_t row)
{
	ss_writer_write(j->cx->out, line, len);
	ss_writer_putc(j->cx->out, '\n');
	if (j->cx->acks == NULL)
		return;
	if (row == 0)
		row = asof_state_outbox_put(j->st, line, len);
	outbox_push(&j->outbox, ++j->cx->lines_out, row);
	if (j->cx->lines_out - j->cx->delivered >= BACKLOG_WARN && !j->cx->backlog_warned) {
		j->cx->backlog_warned = true;
		ss_diag_warn("%" PRIu64 " results not yet delivered by %s: does the reader of this "
			     "output report to it (ss-produce --acks)?",
			     j->cx->lines_out - j->cx->delivered, ss_acks_path(j->cx->acks));
	}
}

void
asof_out(asof_join *j, const char *line, size_t len)
{
	write_line(j, line, len, 0);
}

void
asof_outbox_resend(asof_join *j)
{
	struct asof_state_kept *it = asof_state_kept_open(j->st);
	const char *line;
	size_t len, n = 0;
	int64_t row;

	while (asof_state_kept_next(it, &line, &len, &row)) {
		write_line(j, line, len, row);
		n++;
	}
	asof_state_kept_close(it);
	if (n == 0)
		return;
	ss_diag_warn("%s: %zu results of an earlier run not known to be delivered: written again",
		     j->o.state, n);
	if (j->cx->acks == NULL) /* nobody will say they are delivered: handed over */
		asof_state_outbox_trim(j->st, INT64_MAX);
}

void
asof_outbox_trim(asof_join *j)
{
	struct asof_outbox *o = &j->outbox;
	uint64_t delivered = j->cx->delivered;
	int64_t row = 0;

	while (o->n > 0 && o->v[o->head].line <= delivered) {
		row = o->v[o->head].row;
		o->head++;
		o->n--;
	}
	if (o->n == 0)
		o->head = 0;
	if (row != 0)
		asof_state_outbox_trim(j->st, row);
}
