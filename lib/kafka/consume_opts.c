/* consume_opts: ss-consume's -o and -p, parsed into its options. */
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "kafka/consume_opts.h"

bool
ss_consume_parse_offset(struct ss_consume_opts *o, const char *arg)
{
	char *copy, *item, *save = NULL, *colon, *end;
	bool ok = true;

	if (strchr(arg, ':') == NULL || arg[0] == '@') {
		o->start_given = true;
		return ss_kafka_offset_parse(arg, &o->start.offset, &o->start.time_ms);
	}
	copy = ss_xstrdup(arg);
	for (item = strtok_r(copy, ",", &save); ok && item != NULL; item = strtok_r(NULL, ",", &save)) {
		struct ss_part_start ps = {0};
		long v;
		colon = strchr(item, ':');
		v = colon != NULL ? strtol(item, &end, 10) : -1;
		ok = colon != NULL && end == colon && v >= 0 && v <= INT32_MAX &&
		    ss_kafka_offset_parse(colon + 1, &ps.start.offset, &ps.start.time_ms);
		ps.partition = (int32_t)v;
		o->pstarts = ss_xrealloc(o->pstarts, (size_t)(o->npstarts + 1) * sizeof *o->pstarts);
		o->pstarts[o->npstarts++] = ps;
	}
	free(copy);
	return ok;
}

static void
add_partition(struct ss_consume_opts *o, int32_t p)
{
	o->partitions = ss_xrealloc(o->partitions, (size_t)(o->npartitions + 1) * sizeof *o->partitions);
	o->partitions[o->npartitions++] = p;
}

bool
ss_consume_parse_partitions(struct ss_consume_opts *o, const char *arg)
{
	const char *p = arg;
	char *end;
	long lo, hi;

	do {
		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return false;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi - lo > 100000)
				return false;
		}
		for (long i = lo; i <= hi; i++)
			add_partition(o, (int32_t)i);
		p = end + 1;
	} while (*end == ',');
	return *end == '\0';
}
