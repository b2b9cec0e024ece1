/* ss-produce: NDJSON lines on stdin to a Kafka topic. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cli.h"
#include "base/diag.h"
#include "base/proc.h"
#include "base/help.h"
#include "kafka/produce.h"

static const char usage[] =
    "usage: ss-produce [--envelope] [--raw] [--dry-run] [-b brokers] [--key expr] [--value expr]\n"
    "                  [--headers expr] [--partition expr] [--timestamp expr] [--ts-unit unit]\n"
    "                  [--key-format avro] [--value-format avro] [--key-schema file]\n"
    "                  [--value-schema file] [--schema-registry url]\n"
    "                  [--on-error policy] [--timeout duration] [--acks file] [-X prop=val]...\n"
    "                  [-F file]... topic\n";

static const struct ss_help_opt options[] = {
	{"-b, --brokers BROKERS", "bootstrap brokers, host:port[,host:port...]"},
	{"--key EXPR", "the key (jq)"},
	{"--value EXPR", "the value (default: the whole line)"},
	{"--headers EXPR", "the headers: an object, or an array of [name, value]"},
	{"--partition EXPR", "the partition (default: murmur2 of the key, as Java's)"},
	{"--timestamp EXPR", "the timestamp: RFC 3339 or a number (--ts-unit)"},
	{"--ts-unit UNIT", "unit of numeric timestamps: s, ms, us, ns"},
	{"--envelope", "take key, value, headers, timestamp from envelopes"},
	{"--raw", "send lines as they are, unchecked"},
	{"--dry-run", "print the records that would be sent"},
	{"--on-error POLICY", "a bad line: fail (default), skip, dead-letter=FILE"},
	{"--key-format FMT", "keys sent as: json (default), avro"},
	{"--value-format FMT", "values sent as: json (default), avro"},
	{"--key-schema FILE", "the Avro schema of keys (plain Avro binary)"},
	{"--value-schema FILE", "the Avro schema of values (plain Avro binary)"},
	{"--schema-registry URL", "Avro in the registry's wire format, registered at URL"},
	{"--timeout DURATION", "how long the brokers may be unreachable (exit 75)"},
	{"--acks FILE", "report the lines the brokers acknowledged to FILE"},
	{"-X PROP=VAL", "a librdkafka property"},
	{"-F FILE", "read librdkafka properties from FILE"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

enum {
	OPT_KEY = 256, OPT_VALUE, OPT_HEADERS, OPT_PARTITION, OPT_TIMESTAMP, OPT_TS_UNIT,
	OPT_ENVELOPE, OPT_RAW, OPT_DRY_RUN, OPT_ON_ERROR, OPT_ACKS,
	OPT_KEY_FORMAT, OPT_VALUE_FORMAT, OPT_KEY_SCHEMA, OPT_VALUE_SCHEMA, OPT_SCHEMA_REGISTRY,
};

static const struct option longopts[] = {
	{"brokers", required_argument, NULL, 'b'},
	{"key", required_argument, NULL, OPT_KEY},
	{"value", required_argument, NULL, OPT_VALUE},
	{"headers", required_argument, NULL, OPT_HEADERS},
	{"partition", required_argument, NULL, OPT_PARTITION},
	{"timestamp", required_argument, NULL, OPT_TIMESTAMP},
	{"ts-unit", required_argument, NULL, OPT_TS_UNIT},
	{"envelope", no_argument, NULL, OPT_ENVELOPE},
	{"raw", no_argument, NULL, OPT_RAW},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"on-error", required_argument, NULL, OPT_ON_ERROR},
	{"timeout", required_argument, NULL, SS_KOPT_TIMEOUT},
	{"acks", required_argument, NULL, OPT_ACKS},
	{"key-format", required_argument, NULL, OPT_KEY_FORMAT},
	{"value-format", required_argument, NULL, OPT_VALUE_FORMAT},
	{"key-schema", required_argument, NULL, OPT_KEY_SCHEMA},
	{"value-schema", required_argument, NULL, OPT_VALUE_SCHEMA},
	{"schema-registry", required_argument, NULL, OPT_SCHEMA_REGISTRY},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* --key-format/--value-format avro: a schema file, the registry's latest schema of the
 * subject, or a schema file registered under the subject. */
static void
check_avro(bool avro, const char *schema, const char *registry, const char *what)
{
	if (!avro && schema != NULL)
		ss_diag_usage_error(usage, "--%s-schema needs --%s-format avro", what, what);
	if (avro && schema == NULL && registry == NULL)
		ss_diag_usage_error(usage, "--%s-format avro needs --%s-schema or --schema-registry", what, what);
}

int
main(int argc, char **argv)
{
	static const char *const formats[] = {"json", "avro", NULL};
	static const char optstring[] = "h" SS_KOPTS_SHORT;
	struct ss_produce_opts o;
	int ch;

	ss_proc_init("ss-produce");
	ss_produce_opts_init(&o);
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_VALUE:
			o.value = optarg;
			break;
		case OPT_HEADERS:
			o.headers = optarg;
			break;
		case OPT_PARTITION:
			o.partition = optarg;
			break;
		case OPT_TIMESTAMP:
			o.timestamp = optarg;
			break;
		case OPT_TS_UNIT:
			o.ts_unit = ss_cli_tsunit(usage, "--ts-unit", optarg);
			break;
		case OPT_ENVELOPE:
			o.envelope = true;
			break;
		case OPT_RAW:
			o.raw = true;
			break;
		case OPT_DRY_RUN:
			o.dry_run = true;
			break;
		case OPT_ON_ERROR:
			if (!ss_errpolicy_parse(&o.onerror, optarg))
				ss_cli_bad_value(usage, "--on-error", optarg, "fail, skip or dead-letter=FILE");
			break;
		case OPT_ACKS:
			o.acks = optarg;
			break;
		case OPT_KEY_FORMAT:
		case OPT_VALUE_FORMAT:
			*(ch == OPT_KEY_FORMAT ? &o.key_avro : &o.value_avro) =
			    ss_cli_choice(usage, ch == OPT_KEY_FORMAT ? "--key-format" : "--value-format", optarg,
					  formats) == 1;
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
		case 'h':
			ss_help(usage, options);
			return 0;
		default:
			if (!ss_kopts_getopt(&o.k, ch, optarg, usage))
				ss_diag_bad_option(usage, argv, optstring, NULL);
		}
	}
	ss_kopts_default_file(&o.k);
	if (argc - optind != 1)
		ss_diag_usage_error(usage, argc == optind ? "no topic given" : "one topic only");
	if (o.raw && (o.envelope || o.key || o.value || o.headers || o.partition || o.timestamp))
		ss_diag_usage_error(usage, "--raw sends lines as they are: no expressions, no --envelope");
	check_avro(o.key_avro, o.key_schema, o.registry, "key");
	check_avro(o.value_avro, o.value_schema, o.registry, "value");
	if (o.raw && (o.key_avro || o.value_avro))
		ss_diag_usage_error(usage, "--raw sends lines as they are: no avro");
	o.topic = argv[optind];
	int status = ss_produce_run(&o);
	ss_errpolicy_close(&o.onerror);
	ss_kopts_free(&o.k);
	return status;
}
