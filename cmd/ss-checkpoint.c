/* ss-checkpoint: Slipstream's Checkpoint and Dependency as pass-through filters that
 * share their bookkeeping in a SQLite file (the logic is in lib/checkpoint/). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "base/cli.h"
#include "base/diag.h"
#include "base/proc.h"
#include "base/help.h"
#include "base/sstime.h"
#include "stream/ndjson.h"

static const char usage[] =
	"usage: ss-checkpoint DB heartbeat CHECKPOINT DEPENDENCY [--ts EXPR] [--ts-unit UNIT]\n"
	"                     [--idle DURATION] [--partitions N] [--on-error POLICY]\n"
	"       ss-checkpoint DB pulse CHECKPOINT --dependency NAME[=THRESHOLD]...\n"
	"                     [--threshold DURATION] [--ts EXPR] [--ts-unit UNIT]\n"
	"                     [--idle DURATION] [--partitions N] [--events FILE]\n"
	"                     [--on-downtime CMD] [--on-recovery CMD] [--on-error POLICY]\n"
	"       ss-checkpoint DB status [CHECKPOINT] [--json]\n"
	"       ss-checkpoint -h\n";

static const struct ss_help_opt options[] = {
	{"--dependency NAME[=THRESH]", "a dependency; repeat for several"},
	{"--threshold DURATION", "threshold of dependencies given without one (10m)"},
	{"--ts EXPR", "event time of a record (jq)"},
	{"--ts-unit UNIT", "unit of numeric event times: s, ms, us, ns"},
	{"--idle DURATION", "a caught-up partition silent this long stops holding"},
	{"--partitions N", "partitions to wait for when the writer does not say"},
	{"--events FILE", "append events to FILE instead of stderr"},
	{"--on-downtime CMD", "run CMD when a downtime starts"},
	{"--on-recovery CMD", "run CMD when it ends"},
	{"--on-error POLICY", "a bad record: fail (default), skip, dead-letter=FILE"},
	{"--json", "status: JSON lines instead of a table"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

/* Options heartbeat and pulse share; true if c was one of them. */
static bool
flow_option(int c, struct ss_checkpoint_filter *o)
{
	switch (c) {
	case 't':
		o->ts = optarg;
		return true;
	case 'i':
		o->parts.idle = ss_cli_duration(usage, "--idle", optarg, true);
		return true;
	case 'P':
		o->parts.expect = (int)ss_cli_count(usage, "--partitions", optarg, 0, INT_MAX);
		return true;
	case 'u':
		o->unit = ss_cli_tsunit(usage, "--ts-unit", optarg);
		return true;
	case 'e':
		if (!ss_errpolicy_parse(&o->onerror, optarg))
			ss_cli_bad_value(usage, "--on-error", optarg, "fail, skip or dead-letter=FILE");
		return true;
	case 'h':
		ss_help(usage, options);
		exit(SS_EXIT_OK);
	}
	return false;
}

#define FLOW_OPTIONS \
	{"ts", required_argument, NULL, 't'}, {"ts-unit", required_argument, NULL, 'u'}, \
	{"on-error", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'}, \
	{"idle", required_argument, NULL, 'i'}, {"partitions", required_argument, NULL, 'P'}

/* ---- heartbeat ---- */

static int
cmd_heartbeat(const char *db, int argc, char **argv)
{
	static const struct option opts[] = { FLOW_OPTIONS, {NULL, 0, NULL, 0} };
	struct ss_checkpoint_filter o;
	int c;

	ss_checkpoint_filter_init(&o);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if (!flow_option(c, &o))
			ss_diag_bad_option(usage, argv, "h", "heartbeat");
	if (argc - optind != 2)
		ss_diag_usage_error(usage, "heartbeat: want CHECKPOINT and DEPENDENCY");
	return ss_checkpoint_run_heartbeat(db, argv[optind], argv[optind + 1], &o);
}

/* ---- pulse ---- */

/* "weather=30m": a name with its own threshold; "weather": the --threshold default.
 * The name is a copy (argv stays as ps shows it); the caller frees it. */
static void
dep_parse(struct ss_checkpoint_dep *d, const char *arg)
{
	char *name = ss_xstrdup(arg), *eq = strrchr(name, '=');

	d->name = name;
	d->threshold = -1;
	if (eq) {
		*eq = '\0';
		if (!ss_duration_parse(eq + 1, &d->threshold) || d->threshold < 0)
			ss_cli_bad_value(usage, "--dependency", arg,
			    "NAME or NAME=DURATION, a duration such as " SS_CLI_DURATIONS);
	}
	if (!*name)
		ss_diag_usage_error(usage, "--dependency: empty name");
}

/* What pulse is asked to do, from its command line. */
struct pulse_opts {
	struct ss_checkpoint_filter filter;
	struct ss_checkpoint_events events;
	struct ss_checkpoint_dep *deps;
	int ndeps;
	const char *checkpoint;
};

static void
pulse_options(int argc, char **argv, struct pulse_opts *o)
{
	static const struct option opts[] = {
		FLOW_OPTIONS,
		{"dependency", required_argument, NULL, 'd'},
		{"threshold", required_argument, NULL, 'T'},
		{"events", required_argument, NULL, 'E'},
		{"on-downtime", required_argument, NULL, 'D'},
		{"on-recovery", required_argument, NULL, 'R'},
		{NULL, 0, NULL, 0} };
	int64_t threshold = 10 * 60 * 1000000000LL;
	int c, i;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (flow_option(c, &o->filter))
			continue;
		switch (c) {
		case 'd': dep_parse(&o->deps[o->ndeps++], optarg); break;
		case 'T':
			threshold = ss_cli_duration(usage, "--threshold", optarg, false);
			break;
		case 'E': o->events.file = optarg; break;
		case 'D': o->events.on_downtime = optarg; break;
		case 'R': o->events.on_recovery = optarg; break;
		default: ss_diag_bad_option(usage, argv, "h", "pulse");
		}
	}
	if (argc - optind != 1)
		ss_diag_usage_error(usage, "pulse: want one CHECKPOINT");
	if (o->ndeps == 0)
		ss_diag_usage_error(usage, "pulse: no --dependency given");
	for (i = 0; i < o->ndeps; i++) {
		if (o->deps[i].threshold < 0)
			o->deps[i].threshold = threshold;
		for (c = 0; c < i; c++)
			if (strcmp(o->deps[c].name, o->deps[i].name) == 0)
				ss_diag_usage_error(usage, "--dependency %s given twice", o->deps[i].name);
	}
	o->checkpoint = argv[optind];
}

static int
cmd_pulse(const char *db, int argc, char **argv)
{
	struct pulse_opts o = { .deps = ss_xmalloc(argc * sizeof *o.deps) };
	int i, rc;

	ss_checkpoint_filter_init(&o.filter);
	pulse_options(argc, argv, &o);
	rc = ss_checkpoint_run_pulse(db, o.checkpoint, o.deps, o.ndeps, &o.filter, &o.events);
	for (i = 0; i < o.ndeps; i++)
		free((char *)o.deps[i].name);
	free(o.deps);
	return rc;
}

/* ---- status ---- */

static int
cmd_status(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0} };
	const char *checkpoint = NULL;
	bool json = false;
	int c, n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", "status");
		}
	}
	if (argc - optind > 1)
		ss_diag_usage_error(usage, "status: unexpected argument: %s", argv[optind + 1]);
	if (argc - optind == 1)
		checkpoint = argv[optind];
	/* a person at a terminal also gets each dependency's last day */
	n = ss_checkpoint_status(db, checkpoint, json, !json && isatty(1) ? ss_checkpoint_terminal_width() : 0,
	    stdout);
	if (fflush(stdout) == EOF)
		ss_diag_die(SS_EXIT_DATA, "<stdout>: %s", strerror(errno));
	if (checkpoint && n == 0)
		ss_diag_die(SS_EXIT_DATA, "%s: no checkpoint %s", db, checkpoint);
	return SS_EXIT_OK;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(const char *db, int argc, char **argv);
	} cmds[] = { {"heartbeat", cmd_heartbeat}, {"pulse", cmd_pulse}, {"status", cmd_status} };
	size_t i;

	ss_proc_init("ss-checkpoint");
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		ss_help(usage, options);
		return SS_EXIT_OK;
	}
	if (argc < 3)
		ss_diag_usage_error(usage, argc < 2 ? "no DB given" : "no command given");
	for (i = 0; i < sizeof cmds / sizeof *cmds; i++)
		if (strcmp(argv[2], cmds[i].name) == 0)
			/* getopt_long sees "COMMAND ARGS...": argv[0] is the command's name */
			return cmds[i].run(argv[1], argc - 2, argv + 2);
	ss_diag_usage_error(usage, "unknown command: %s", argv[2]);
}
