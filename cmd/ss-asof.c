/* ss-asof: the as-of ("nearby") join of two NDJSON streams. See ss-asof(1). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "join/asof.h"
#include "base/cli.h"
#include "base/diag.h"
#include "base/proc.h"
#include "base/help.h"
#include "stream/ndjson.h"
#include "stream/partwm.h"
#include "base/sstime.h"

static const char usage[] =
	"usage: ss-asof [--on EXPR | --left-on EXPR --right-on EXPR]\n"
	"               [--by EXPR | --left-by EXPR --right-by EXPR]\n"
	"               [--direction backward|forward|nearest] [--strict] [--tolerance DURATION]\n"
	"               [--inner] [--emit eager|defer|revise] [--order release|left]\n"
	"               [--grace DURATION]\n"
	"               [--max-delay DURATION] [--idle DURATION]\n"
	"               [--right-partitions N] [--right-end finish|exit] [--right-end-file FILE]\n"
	"               [--allow-empty-right]\n"
	"               [--retain DURATION] [--select EXPR]\n"
	"               [--state DB | --state-dir DIR] [--acks FILE] [--late-file FILE]\n"
	"               [--on-error fail|skip|dead-letter=FILE]\n"
	"               [--ts-unit s|ms|us|ns] [--progress | --no-progress] LEFT RIGHT\n"
	"       ss-asof --left-topic TOPIC --right-topic TOPIC [option ...] INPUT\n";

/* The run ss_asof_end left to the exit, reachable for LeakSanitizer and valgrind
 * (volatile: nothing reads it, and the compiler would drop the store). */
static ss_asof *volatile ended;

static const struct ss_help_opt options[] = {
	{"--on EXPR", "event time of both sides (jq): a number or RFC 3339"},
	{"--left-on, --right-on EXPR", "event time per side"},
	{"--by EXPR", "equality key of both sides (jq), any JSON value"},
	{"--left-by, --right-by EXPR", "key per side"},
	{"--direction DIR", "backward (default, at or before), forward, nearest"},
	{"--strict", "a right record at exactly the left time does not match"},
	{"--tolerance DURATION", "match only a right record at most that far away"},
	{"--inner", "drop left records without a match (not right: null)"},
	{"--emit MODE", "late right records: defer (default), eager, revise"},
	{"--order release|left", "defer: results as final (default), or in left order"},
	{"--grace DURATION", "how far out of order the right stream may run (0)"},
	{"--max-delay DURATION", "defer: write a held record after this wall-clock delay"},
	{"--idle DURATION", "a caught-up silent right partition stops holding (30s)"},
	{"--right-partitions N", "right partitions to wait for (writer does not say)"},
	{"--right-end finish|exit", "right input ended early: answer held records, or keep"},
	{"--right-end-file FILE", "bounded runs: the right side's end, told in FILE"},
	{"--allow-empty-right", "a right input without records is not an error (exit 1)"},
	{"--retain DURATION", "bound the right history; results it touches: \"expired\""},
	{"--select EXPR", "reshape each output object (jq)"},
	{"--state DB", "state in DB: a restart continues, skips replays"},
	{"--state-dir DIR", "one state file per partition (consumer groups)"},
	{"--acks FILE", "keep results until ss-produce --acks FILE has them"},
	{"--left-topic, --right-topic T", "one INPUT of both topics, split by topic"},
	{"--late-file FILE", "append late right records to FILE"},
	{"--on-error POLICY", "a bad record: fail (default), skip, dead-letter=FILE"},
	{"--ts-unit s|ms|us|ns", "unit of numeric event times (default s)"},
	{"--progress", "a live line on stderr, even off a terminal, over pipes"},
	{"--no-progress", "none (default: a line on a terminal, over two files)"},
	{"-h, --help", "this help"},
	{NULL, NULL},
};

enum {
	OPT_ON = 256, OPT_LEFT_ON, OPT_RIGHT_ON, OPT_BY, OPT_LEFT_BY, OPT_RIGHT_BY, OPT_DIRECTION,
	OPT_STRICT, OPT_TOLERANCE, OPT_INNER, OPT_EMIT, OPT_GRACE, OPT_SELECT, OPT_STATE, OPT_STATE_DIR,
	OPT_RETAIN, OPT_MAX_DELAY, OPT_IDLE, OPT_RIGHT_PARTITIONS, OPT_LATE_FILE, OPT_ON_ERROR, OPT_TS_UNIT, OPT_LEFT_TOPIC, OPT_RIGHT_TOPIC, OPT_RIGHT_END,
	OPT_ACKS, OPT_RIGHT_END_FILE, OPT_ALLOW_EMPTY_RIGHT, OPT_PROGRESS, OPT_NO_PROGRESS,
	OPT_ORDER,
};

static const struct option longopts[] = {
	{"on", required_argument, NULL, OPT_ON},
	{"left-on", required_argument, NULL, OPT_LEFT_ON},
	{"right-on", required_argument, NULL, OPT_RIGHT_ON},
	{"by", required_argument, NULL, OPT_BY},
	{"left-by", required_argument, NULL, OPT_LEFT_BY},
	{"right-by", required_argument, NULL, OPT_RIGHT_BY},
	{"direction", required_argument, NULL, OPT_DIRECTION},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"tolerance", required_argument, NULL, OPT_TOLERANCE},
	{"inner", no_argument, NULL, OPT_INNER},
	{"emit", required_argument, NULL, OPT_EMIT},
	{"order", required_argument, NULL, OPT_ORDER},
	{"grace", required_argument, NULL, OPT_GRACE},
	{"select", required_argument, NULL, OPT_SELECT},
	{"state", required_argument, NULL, OPT_STATE},
	{"state-dir", required_argument, NULL, OPT_STATE_DIR},
	{"retain", required_argument, NULL, OPT_RETAIN},
	{"max-delay", required_argument, NULL, OPT_MAX_DELAY},
	{"idle", required_argument, NULL, OPT_IDLE},
	{"right-partitions", required_argument, NULL, OPT_RIGHT_PARTITIONS},
	{"late-file", required_argument, NULL, OPT_LATE_FILE},
	{"acks", required_argument, NULL, OPT_ACKS},
	{"right-end-file", required_argument, NULL, OPT_RIGHT_END_FILE},
	{"right-end", required_argument, NULL, OPT_RIGHT_END},
	{"allow-empty-right", no_argument, NULL, OPT_ALLOW_EMPTY_RIGHT},
	{"left-topic", required_argument, NULL, OPT_LEFT_TOPIC},
	{"right-topic", required_argument, NULL, OPT_RIGHT_TOPIC},
	{"on-error", required_argument, NULL, OPT_ON_ERROR},
	{"ts-unit", required_argument, NULL, OPT_TS_UNIT},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* LEFT and RIGHT, or one INPUT of both topics with --left-topic and --right-topic. */
static void
check_inputs(const struct ss_asof_opts *o, int n, char **inputs)
{
	if (!o->left_topic != !o->right_topic)
		ss_diag_usage_error(usage, "--left-topic and --right-topic go together");
	if (o->left_topic && strcmp(o->left_topic, o->right_topic) == 0)
		ss_diag_usage_error(usage, "--left-topic and --right-topic must differ");
	if (o->left_topic && n != 1)
		ss_diag_usage_error(usage, "expected one INPUT with --left-topic and --right-topic");
	if (o->left_topic)
		return;
	if (n != 2)
		ss_diag_usage_error(usage, "expected LEFT and RIGHT inputs");
	if (strcmp(inputs[0], "-") == 0 && strcmp(inputs[1], "-") == 0)
		ss_diag_usage_error(usage, "stdin ('-') can be only one of the inputs");
}

int
main(int argc, char **argv)
{
	static const char *const directions[] = {"backward", "forward", "nearest", NULL};
	static const char *const emits[] = {"eager", "defer", "revise", NULL};
	static const char *const right_ends[] = {"finish", "exit", NULL};
	static const char *const orders[] = {"release", "left", NULL};
	struct ss_errpolicy onerror = {.mode = SS_ONERROR_FAIL};
	struct ss_asof_opts o = {.tolerance = -1, .max_delay = -1, .idle = SS_DEFAULT_IDLE, .emit = SS_ASOF_DEFER, .retain = -1,
				 .onerror = &onerror, .unit = SS_TS_S};
	const char *on = NULL, *by = NULL;
	int c;

	ss_proc_init("ss-asof");
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ON: on = optarg; break;
		case OPT_LEFT_ON: o.left_on = optarg; break;
		case OPT_RIGHT_ON: o.right_on = optarg; break;
		case OPT_BY: by = optarg; break;
		case OPT_LEFT_BY: o.left_by = optarg; break;
		case OPT_RIGHT_BY: o.right_by = optarg; break;
		case OPT_DIRECTION: o.direction = ss_cli_choice(usage, "--direction", optarg, directions); break;
		case OPT_STRICT: o.strict = true; break;
		case OPT_TOLERANCE: o.tolerance = ss_cli_duration(usage, "--tolerance", optarg, false); break;
		case OPT_INNER: o.inner = true; break;
		case OPT_EMIT: o.emit = ss_cli_choice(usage, "--emit", optarg, emits); break;
		case OPT_ORDER: o.order_left = ss_cli_choice(usage, "--order", optarg, orders) == 1; break;
		case OPT_GRACE: o.grace = ss_cli_duration(usage, "--grace", optarg, false); break;
		case OPT_SELECT: o.select = optarg; break;
		case OPT_STATE: o.state = optarg; break;
		case OPT_STATE_DIR: o.state_dir = optarg; break;
		case OPT_RETAIN: o.retain = ss_cli_duration(usage, "--retain", optarg, false); break;
		case OPT_MAX_DELAY: o.max_delay = ss_cli_duration(usage, "--max-delay", optarg, false); break;
		case OPT_IDLE: o.idle = ss_cli_duration(usage, "--idle", optarg, false); break;
		case OPT_RIGHT_PARTITIONS: o.right_partitions = (int)ss_cli_count(usage, "--right-partitions", optarg, 0, 1000000); break;
		case OPT_RIGHT_END: o.right_end_exit = ss_cli_choice(usage, "--right-end", optarg, right_ends) == 1; break;
		case OPT_LATE_FILE: o.late_file = optarg; break;
		case OPT_ACKS: o.acks = optarg; break;
		case OPT_RIGHT_END_FILE: o.right_end_file = optarg; break;
		case OPT_ALLOW_EMPTY_RIGHT: o.allow_empty_right = true; break;
		case OPT_LEFT_TOPIC: o.left_topic = optarg; break;
		case OPT_RIGHT_TOPIC: o.right_topic = optarg; break;
		case OPT_ON_ERROR:
			if (!ss_errpolicy_parse(&onerror, optarg))
				ss_cli_bad_value(usage, "--on-error", optarg, "fail, skip or dead-letter=FILE");
			break;
		case OPT_TS_UNIT:
			o.unit = ss_cli_tsunit(usage, "--ts-unit", optarg);
			break;
		case OPT_PROGRESS: o.progress = SS_PROGRESS_ON; break;
		case OPT_NO_PROGRESS: o.progress = SS_PROGRESS_OFF; break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", NULL);
		}
	}
	check_inputs(&o, argc - optind, argv + optind);
	if (on && (o.left_on || o.right_on))
		ss_diag_usage_error(usage, "--on excludes --left-on and --right-on");
	if (by && (o.left_by || o.right_by))
		ss_diag_usage_error(usage, "--by excludes --left-by and --right-by");
	if (on)
		o.left_on = o.right_on = on;
	if (by)
		o.left_by = o.right_by = by;
	if (!o.left_on || !o.right_on)
		ss_diag_usage_error(usage, "the event time is required: --on, or --left-on and --right-on");
	if (!o.left_by != !o.right_by)
		ss_diag_usage_error(usage, "--left-by and --right-by go together");
	if (o.state && o.state_dir)
		ss_diag_usage_error(usage, "--state excludes --state-dir");
	if (!o.state && !o.state_dir) {
		if (o.acks)
			ss_diag_usage_error(usage, "--acks needs --state or --state-dir to keep results in");
		if (o.right_end_exit)
			ss_diag_usage_error(usage, "--right-end exit needs --state or --state-dir to keep held records in");
		if (o.right_end_file)
			ss_diag_usage_error(usage, "--right-end-file needs --state or --state-dir to keep held records in");
	}
	if (o.max_delay >= 0 && o.emit != SS_ASOF_DEFER)
		ss_diag_usage_error(usage, "--max-delay applies to --emit defer only");

	ss_writer *out = ss_writer_new(STDOUT_FILENO, "stdout");
	if (ss_proc_threads())
		ss_writer_async(out); /* the kernel's copy of the output off the joining thread */
	ss_asof *j = ss_asof_new(&o, out);
	int rc = o.left_topic ? ss_asof_run_one(j, argv[optind]) : ss_asof_run(j, argv[optind], argv[optind + 1]);
	if (o.acks) {
		/* its reader reports the last lines delivered once it sees the end of them */
		ss_writer_flush(out);
		if (close(STDOUT_FILENO) != 0)
			ss_diag_die(SS_EXIT_DATA, "stdout: %s", strerror(errno));
		ss_asof_await_delivery(j);
	}
	/* its memory is left to the exit: with a million keys, freeing them and their
	 * records one by one took a third of the run (bench/keys.sh) */
	ss_asof_end(j);
	ended = j;
	ss_writer_free(out);
	ss_errpolicy_close(&onerror);
	return rc;
}
