/* consume_opts: ss-consume's -o, -p and --checkpoint, and which options go together. */
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

bool
ss_consume_parse_checkpoint(struct ss_consume_opts *o, const char *arg)
{
	const char *colon = strrchr(arg, ':');

	if (colon == NULL || colon == arg || colon[1] == '\0')
		return false;
	free(o->checkpoint_db);
	o->checkpoint_db = ss_xstrdup(arg);
	o->checkpoint_db[colon - arg] = '\0';
	o->checkpoint_name = colon + 1;
	return true;
}

/* --key-format/--value-format avro: a schema file or the registry, one of them. */
static void
check_avro(const char *usage, enum ss_kfmt fmt, const char *schema, const char *registry, const char *what)
{
	if (fmt != SS_KFMT_AVRO && schema != NULL)
		ss_diag_usage_error(usage, "--%s-schema needs --%s-format avro", what, what);
	if (fmt == SS_KFMT_AVRO && schema == NULL && registry == NULL)
		ss_diag_usage_error(usage, "--%s-format avro needs --%s-schema or --schema-registry", what, what);
	if (fmt == SS_KFMT_AVRO && schema != NULL && registry != NULL)
		ss_diag_usage_error(usage, "--%s-schema or --schema-registry, not both: records written for "
					   "the registry carry their schema id", what);
}

void
ss_consume_opts_check(const struct ss_consume_opts *o, const char *usage)
{
	check_avro(usage, o->key_fmt, o->key_schema, o->registry, "key");
	check_avro(usage, o->value_fmt, o->value_schema, o->registry, "value");
	if (o->registry != NULL && o->key_fmt != SS_KFMT_AVRO && o->value_fmt != SS_KFMT_AVRO)
		ss_diag_usage_error(usage, "--schema-registry needs --key-format or --value-format avro");
	if (o->group == NULL && o->start_given && o->start.offset == RD_KAFKA_OFFSET_STORED)
		ss_diag_usage_error(usage, "-o stored needs a group (-G)");
	if (o->group != NULL && (o->npartitions > 0 || o->npstarts > 0))
		ss_diag_usage_error(usage, "-p and -o P:OFFSET assign partitions statically: not with -G");
	if (o->end_file != NULL && !o->exit_at_end && o->count < 0 && !o->until_set)
		ss_diag_usage_error(usage, "--end-file needs an end: -e, -c or --until");
}
