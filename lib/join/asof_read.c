/* Reading a regular file's records, parsed ahead on a thread (asof_ahead.c) or here
 * (asof_parse.c), for the input loop (asof_run.c) and the index (asof_index.c); and the
 * live line, which counts what was read of both files. */
#include "join/asof_impl.h"

/* Next good record of a regular file into in; ASOF_GOT_NONE at its end, ASOF_GOT_FATAL
 * at a bad one that ends the run (the caller's to finish). Parsed ahead on a thread
 * when one was started for the side (asof_ahead.c). */
enum asof_got
asof_next_record(ss_asof *j, ss_reader *r, bool left, struct asof_in *in)
{
	struct asof_ahead *a = left ? j->lahead : j->rahead;
	const char *line;
	size_t len;

	if (a != NULL)
		return asof_ahead_next(j, a, left, in);
	while (ss_reader_next(r, &line, &len) == 1) {
		enum asof_got got = asof_parse(j, left, line, len, ss_reader_lineno(r), in);
		if (got != ASOF_GOT_NONE)
			return got;
	}
	return ASOF_GOT_NONE;
}

uint64_t
asof_record_offset(const ss_asof *j, const ss_reader *r, bool left)
{
	const struct asof_ahead *a = left ? j->lahead : j->rahead;

	return a != NULL ? asof_ahead_offset(a) : ss_reader_offset(r);
}

void
asof_progress(ss_asof *j)
{
	int64_t done = 0;

	if (j->progress == NULL)
		return;
	if (j->in_size > 0)
		done = (int64_t)(asof_record_offset(j, j->lrd, true) + asof_record_offset(j, j->rrd, false));
	ss_progress_update(j->progress, (int64_t)j->nread, done, j->in_size);
}
