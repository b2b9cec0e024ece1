/* ss-cache: ordered key/value state in a SQLite file (Slipstream's Cache). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "base/cli.h"
#include "base/diag.h"
#include "base/proc.h"
#include "base/help.h"

static const char usage[] =
	"usage: ss-cache DB put [--key EXPR] [--value EXPR] [--tee] [--retain-count N]\n"
	"                [--retain-age DURATION] [--ts-unit UNIT] [--on-error POLICY]\n"
	"                [--progress | --no-progress]\n"
	"       ss-cache DB get [--json] KEY...\n"
	"       ss-cache DB del KEY...\n"
	"       ss-cache DB scan [--from KEY] [--to KEY] [--prefix KEY] [--backwards]\n"
	"                [--limit N] [--keys | --values]\n"
	"       ss-cache DB stats\n"
	"       ss-cache --state-dir DIR put | get | del | scan | stats ...\n"
	"       ss-cache -h\n";

static const struct ss_help_opt options[] = {
	{NULL, "put: records on stdin into DB"},
	{"--key EXPR", "the key (jq; default .key)"},
	{"--value EXPR", "the value (default: the whole record, byte for byte)"},
	{"--tee", "pass each record on to stdout once committed"},
	{"--retain-count N", "keep only the last N entries"},
	{"--retain-age DURATION", "drop entries whose time key is older than this"},
	{"--ts-unit UNIT", "unit of numeric times for --retain-age: s, ms, us, ns"},
	{"--on-error POLICY", "a bad record: fail (default), skip, dead-letter=FILE"},
	{"--progress", "a live line on stderr, even when it is not a terminal"},
	{"--no-progress", "no live line, even on a terminal"},
	{NULL, "get, del: KEY... are JSON values (quote strings: '\"s17\"')"},
	{"--json", "get: {\"key\":K,\"value\":V} or {\"key\":K,\"missing\":true}"},
	{NULL, "scan: in key order"},
	{"--from KEY, --to KEY", "inclusive bounds"},
	{"--prefix KEY", "only keys that extend this array or string"},
	{"--backwards", "from the last key down"},
	{"--limit N", "stop after N entries"},
	{"--keys, --values", "print only the keys, or only the values"},
	{NULL, "any command:"},
	{"--state-dir DIR", "one state file per topic-partition in DIR, not DB"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

static int
cmd_put(ss_cache *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},  {"value", required_argument, NULL, 'v'},
		{"tee", no_argument, NULL, 't'},        {"retain-count", required_argument, NULL, 'c'},
		{"retain-age", required_argument, NULL, 'a'}, {"ts-unit", required_argument, NULL, 'u'},
		{"on-error", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
		{"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0}};
	struct ss_cache_put_opts o = {.key = ".key", .progress = SS_PROGRESS_AUTO};
	const char *unit_arg = NULL;
	int ch;

	ss_errpolicy_parse(&o.onerror, "fail");
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'k': o.key = optarg; break;
		case 'v': o.value = optarg; break;
		case 't': o.tee = true; break;
		case 'c':
			o.retain_count = ss_cli_count(usage, "--retain-count", optarg, 1, INT64_MAX);
			break;
		case 'a':
			o.retain_age = ss_cli_duration(usage, "--retain-age", optarg, true);
			break;
		case 'u':
			unit_arg = optarg;
			o.unit = ss_cli_tsunit(usage, "--ts-unit", optarg);
			break;
		case 'e':
			if (!ss_errpolicy_parse(&o.onerror, optarg))
				ss_cli_bad_value(usage, "--on-error", optarg, "fail, skip or dead-letter=FILE");
			break;
		case 'P': o.progress = SS_PROGRESS_ON; break;
		case 'N': o.progress = SS_PROGRESS_OFF; break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", "put");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "put: unexpected argument: %s", argv[optind]);
	if (unit_arg && !o.retain_age)
		ss_diag_usage_error(usage, "--ts-unit only matters with --retain-age");
	return ss_cache_put(c, &o);
}

/* ---- get, del ---- */

static jv
parse_key_arg(const char *arg, const char *what)
{
	jv k = jv_parse(arg);

	if (!jv_is_valid(k)) {
		jv_free(k);
		ss_diag_usage_error(usage, "%s: not a JSON value: %s (quote strings: '\"%s\"')", what, arg, arg);
	}
	return k;
}

/* For commands without options: argv[0] is the command, the rest are KEYs, each
 * checked before the store is touched. */
static jv
key_args(int argc, char **argv, const char *cmd)
{
	jv keys = jv_array();

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			ss_help(usage, options);
	}
	if (argc == 0)
		ss_diag_usage_error(usage, "%s: no KEY given", cmd);
	for (int i = 0; i < argc; i++)
		keys = jv_array_append(keys, parse_key_arg(argv[i], cmd));
	return keys;
}

/* Take --json out of get's arguments (no KEY is spelled so: it is not JSON). */
static bool
take_json_flag(int *argc, char **argv)
{
	bool json = false;
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	return json;
}

static int
cmd_get(ss_cache *c, int argc, char **argv)
{
	argc--, argv++;
	bool json = take_json_flag(&argc, argv);
	return ss_cache_get(c, key_args(argc, argv, "get"), argv, json);
}

static int
cmd_del(ss_cache *c, int argc, char **argv)
{
	return ss_cache_del(c, key_args(argc - 1, argv + 1, "del"));
}

/* ---- scan, stats ---- */

static int
cmd_scan(ss_cache *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
		{"prefix", required_argument, NULL, 'p'}, {"backwards", no_argument, NULL, 'b'},
		{"limit", required_argument, NULL, 'l'}, {"keys", no_argument, NULL, 'K'},
		{"values", no_argument, NULL, 'V'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct ss_cache_scan_opts o = {.from = jv_invalid(), .to = jv_invalid(), .prefix = jv_invalid(), .limit = -1};
	int ch;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': jv_free(o.from); o.from = parse_key_arg(optarg, "--from"); break;
		case 't': jv_free(o.to); o.to = parse_key_arg(optarg, "--to"); break;
		case 'p': jv_free(o.prefix); o.prefix = parse_key_arg(optarg, "--prefix"); break;
		case 'b': o.backwards = true; break;
		case 'l':
			o.limit = ss_cli_count(usage, "--limit", optarg, 0, INT64_MAX);
			break;
		case 'K':
		case 'V':
			if (o.show != SS_CACHE_BOTH)
				ss_diag_usage_error(usage, "--keys and --values exclude each other");
			o.show = ch == 'K' ? SS_CACHE_KEYS : SS_CACHE_VALUES;
			break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", "scan");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "scan: unexpected argument: %s", argv[optind]);
	return ss_cache_scan(c, &o);
}

static int
cmd_stats(ss_cache *c, int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		ss_help(usage, options);
	if (argc > 1)
		ss_diag_usage_error(usage, "stats: unexpected argument: %s", argv[1]);
	return ss_cache_stats(c);
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(ss_cache *c, int argc, char **argv);
	} cmds[] = {{"put", cmd_put}, {"get", cmd_get}, {"del", cmd_del}, {"scan", cmd_scan}, {"stats", cmd_stats}};
	ss_cache *c = NULL;

	ss_proc_init("ss-cache");
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		ss_help(usage, options);
	if (argc >= 2 && strcmp(argv[1], "--state-dir") == 0) {
		if (argc < 3)
			ss_diag_usage_error(usage, "--state-dir: no DIR given");
		bool writes = argc > 3 && (strcmp(argv[3], "put") == 0 || strcmp(argv[3], "del") == 0);
		c = ss_cache_new_dir(argv[2], writes);
		argc--, argv++;
	} else if (argc >= 2)
		c = ss_cache_new(argv[1]);
	if (argc < 3)
		ss_diag_usage_error(usage, argc < 2 ? "no DB given" : "no command given");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[2], cmds[i].name) == 0) {
			/* getopt_long sees "CMD OPTIONS...": argv[0] is the command's name */
			int status = cmds[i].run(c, argc - 2, argv + 2);
			ss_cache_free(c);
			return status;
		}
	ss_diag_usage_error(usage, "unknown command: %s", argv[2]);
}
