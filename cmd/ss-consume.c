/* ss-consume: Kafka topics to NDJSON envelopes on stdout. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kafka/consume.h"
#include "kafka/consume_opts.h"
#include "base/cli.h"
#include "base/diag.h"
#include "base/proc.h"
#include "base/help.h"
#include "kafka/inspect.h"
#include "kafka/kcat.h"

static const char usage[] =
    "usage: ss-consume [-e] [-b brokers] [-G group] [-p partitions] [-o offset] [-c count]\n"
    "                  [--from time] [--until time] [--offsets-from path] [--checkpoint db:name]\n"
    "                  [--end-file file] [--key-format fmt] [--value-format fmt]\n"
    "                  [--key-schema file] [--value-schema file] [--schema-registry url]\n"
    "                  [--on-error policy] [--timeout duration] [--progress | --no-progress]\n"
    "                  [-X prop=val]... [-F file]... topic...\n"
    "       ss-consume -L [-b brokers] [--timeout duration] [-X prop=val]... [-F file]... [topic...]\n"
    "       ss-consume -G group --lag [-b brokers] [--timeout duration] [-X prop=val]... [-F file]...\n"
    "                  [topic...]\n"
    "       ss-consume --offsets-at time [-b brokers] [--timeout duration] [-X prop=val]...\n"
    "                  [-F file]... [topic...]\n"
    "       ss-consume -h\n";

static const struct ss_help_opt options[] = {
	{"-b, --brokers BROKERS", "bootstrap brokers, host:port[,host:port...]"},
	{"-G, --group GROUP", "consume as a member of this consumer group"},
	{"-p, --partitions LIST", "only these partitions (0,2-3)"},
	{"-o, --offset OFFSET", "start: beginning, end, stored, N, -N (last N), @TIME"},
	{"-e, --exit", "exit at the end offsets of when the run started"},
	{"-c, --count N", "exit after N records"},
	{"--from TIME", "start each partition at its first record >= TIME"},
	{"--until TIME", "stop each partition before its first record > TIME"},
	{"--offsets-from PATH", "resume after what the state file or directory applied"},
	{"--checkpoint DB:NAME", "seek and pause as ss-checkpoint asks"},
	{"--end-file FILE", "remove FILE when every partition reached its end"},
	{"--key-format FMT", "keys as: auto, json, string, base64, avro"},
	{"--value-format FMT", "values as: auto, json, string, base64, avro"},
	{"--key-schema FILE", "the Avro schema of keys (plain Avro binary)"},
	{"--value-schema FILE", "the Avro schema of values (plain Avro binary)"},
	{"--schema-registry URL", "Avro in the registry's wire format, schemas from URL"},
	{"--on-error POLICY", "undecodable records: fail, skip, dead-letter=FILE"},
	{"--timeout DURATION", "how long the brokers may take to answer at start"},
	{"--progress", "a live line on stderr, even off a terminal, without -e"},
	{"--no-progress", "none (default: a line with -e on a terminal)"},
	{"-X PROP=VAL", "a librdkafka property"},
	{"-F FILE", "read librdkafka properties from FILE"},
	{"-L, --list", "the cluster's brokers and topics"},
	{"--lag", "with -G: per partition committed, high, lag, owner"},
	{"--offsets-at TIME", "each partition's offset for TIME"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

enum {
	OPT_FROM = 256, OPT_UNTIL, OPT_OFFSETS_FROM, OPT_CHECKPOINT, OPT_KEY_FORMAT,
	OPT_VALUE_FORMAT, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_END_FILE, OPT_LAG, OPT_OFFSETS_AT,
	OPT_KEY_SCHEMA, OPT_VALUE_SCHEMA, OPT_SCHEMA_REGISTRY, OPT_ON_ERROR,
};

/* The questions about the cluster (-L, --lag, --offsets-at) instead of a read. */
enum mode { READ, LIST, LAG, OFFSETS_AT };

static const struct option longopts[] = {
	{"brokers", required_argument, NULL, 'b'},
	{"group", required_argument, NULL, 'G'},
	{"partitions", required_argument, NULL, 'p'},
	{"offset", required_argument, NULL, 'o'},
	{"exit", no_argument, NULL, 'e'},
	{"count", required_argument, NULL, 'c'},
	{"from", required_argument, NULL, OPT_FROM},
	{"until", required_argument, NULL, OPT_UNTIL},
	{"offsets-from", required_argument, NULL, OPT_OFFSETS_FROM},
	{"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
	{"end-file", required_argument, NULL, OPT_END_FILE},
	{"key-format", required_argument, NULL, OPT_KEY_FORMAT},
	{"value-format", required_argument, NULL, OPT_VALUE_FORMAT},
	{"key-schema", required_argument, NULL, OPT_KEY_SCHEMA},
	{"value-schema", required_argument, NULL, OPT_VALUE_SCHEMA},
	{"schema-registry", required_argument, NULL, OPT_SCHEMA_REGISTRY},
	{"on-error", required_argument, NULL, OPT_ON_ERROR},
	{"timeout", required_argument, NULL, SS_KOPT_TIMEOUT},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	{"list", no_argument, NULL, 'L'},
	{"lag", no_argument, NULL, OPT_LAG},
	{"offsets-at", required_argument, NULL, OPT_OFFSETS_AT},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void
set_mode(enum mode *mode, enum mode m)
{
	if (*mode != READ && *mode != m)
		ss_diag_usage_error(usage, "-L, --lag and --offsets-at: one at a time");
	*mode = m;
}

/* -L, --lag, --offsets-at: options that only a read takes are usage errors. */
static int
inspect(const struct ss_consume_opts *o, enum mode mode, int64_t at_ms, char **topics, int ntopics)
{
	struct ss_inspect_opts io = {.k = &o->k, .topics = topics, .ntopics = ntopics,
				     .group = o->group, .time_ms = at_ms, .table = isatty(1)};

	if (o->exit_at_end || o->count >= 0 || o->start_given || o->npstarts > 0 || o->npartitions > 0 ||
	    o->from_set || o->until_set || o->offsets_from != NULL || o->checkpoint_db != NULL ||
	    o->end_file != NULL || o->progress != SS_PROGRESS_AUTO || o->key_schema != NULL ||
	    o->value_schema != NULL || o->registry != NULL)
		ss_diag_usage_error(usage, "-L, --lag and --offsets-at read no records: "
					   "no -e, -c, -o, -p, --from, --until, --offsets-from, --checkpoint, "
					   "--end-file, --progress or Avro options");
	if (mode == LAG && o->group == NULL)
		ss_diag_usage_error(usage, "--lag needs a group (-G)");
	if (mode != LAG && o->group != NULL)
		ss_diag_usage_error(usage, "-G with -L or --offsets-at: did you mean --lag?");
	if (mode == LIST)
		return ss_inspect_list(&io);
	return mode == LAG ? ss_inspect_lag(&io) : ss_inspect_offsets_at(&io);
}

int
main(int argc, char **argv)
{
	static const char optstring[] = "G:p:o:ec:Lh" SS_KOPTS_SHORT;
	struct ss_consume_opts o;
	enum mode mode = READ;
	int64_t at_ms = 0;
	int ch;

	ss_proc_init("ss-consume");
	ss_consume_opts_init(&o);
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (ch) {
		case 'G':
			o.group = optarg;
			break;
		case 'p':
			if (!ss_consume_parse_partitions(&o, optarg))
				ss_diag_usage_error(usage, "-p %s: expected partitions such as 0,2,4-7", optarg);
			break;
		case 'o':
			ss_kcat_offset(usage, optarg);
			if (!ss_consume_parse_offset(&o, optarg))
				ss_diag_usage_error(usage, "-o %s: expected beginning, end, stored, N, -N, "
						    "@TIME or P:OFFSET,...", optarg);
			break;
		case 'e':
			o.exit_at_end = true;
			break;
		case 'c':
			o.count = ss_cli_count(usage, "-c", optarg, 0, INT64_MAX);
			break;
		case OPT_FROM:
			o.from_set = true;
			o.from_ms = ss_cli_time(usage, "--from", optarg) / 1000000;
			break;
		case OPT_UNTIL:
			o.until_set = true;
			o.until_ms = ss_cli_time(usage, "--until", optarg) / 1000000;
			break;
		case OPT_OFFSETS_FROM:
			o.offsets_from = optarg;
			break;
		case OPT_CHECKPOINT:
			if (!ss_consume_parse_checkpoint(&o, optarg))
				ss_cli_bad_value(usage, "--checkpoint", optarg, "DB:NAME");
			break;
		case OPT_END_FILE:
			o.end_file = optarg;
			break;
		case OPT_KEY_FORMAT:
		case OPT_VALUE_FORMAT:
			if (!ss_kfmt_parse(optarg, ch == OPT_KEY_FORMAT ? &o.key_fmt : &o.value_fmt))
				ss_cli_bad_value(usage, ch == OPT_KEY_FORMAT ? "--key-format" : "--value-format",
						 optarg, "auto, json, string, base64 or avro");
			break;
		case OPT_KEY_SCHEMA:
			o.key_schema = optarg;
			break;
		case OPT_VALUE_SCHEMA:
			o.value_schema = optarg;
			break;
		case OPT_SCHEMA_REGISTRY:
			o.registry = optarg;
			break;
		case OPT_ON_ERROR:
			if (!ss_errpolicy_parse(&o.onerror, optarg))
				ss_cli_bad_value(usage, "--on-error", optarg, "fail, skip or dead-letter=FILE");
			break;
		case OPT_NO_PROGRESS:
			o.progress = SS_PROGRESS_OFF;
			break;
		case OPT_PROGRESS:
			o.progress = SS_PROGRESS_ON;
			break;
		case 'L':
			set_mode(&mode, LIST);
			break;
		case OPT_LAG:
			set_mode(&mode, LAG);
			break;
		case OPT_OFFSETS_AT:
			set_mode(&mode, OFFSETS_AT);
			at_ms = ss_cli_time(usage, "--offsets-at", optarg[0] == '@' ? optarg + 1 : optarg) / 1000000;
			break;
		case 'h':
			ss_help(usage, options);
			return 0;
		default:
			if (!ss_kopts_getopt(&o.k, ch, optarg, usage))
				ss_diag_bad_option(usage, argv, optstring, NULL);
		}
	}
	ss_kopts_default_file(&o.k);
	if (mode != READ) {
		int status = inspect(&o, mode, at_ms, argv + optind, argc - optind);
		ss_kopts_free(&o.k);
		return status;
	}
	if (optind == argc)
		ss_diag_usage_error(usage, "no topic given");
	ss_consume_opts_check(&o, usage);
	o.topics = argv + optind;
	o.ntopics = argc - optind;
	int status = ss_consume_run(&o);
	ss_kopts_free(&o.k);
	free(o.partitions);
	free(o.pstarts);
	free(o.checkpoint_db);
	ss_errpolicy_close(&o.onerror);
	return status;
}
