/* ss-checkpoint: Slipstream's Checkpoint and Dependency as pass-through filters that
 * share their bookkeeping in a SQLite file (the logic is in lib/checkpoint.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "diag.h"
#include "envelope.h"
#include "expr.h"
#include "ndjson.h"
#include "sstime.h"

static const char usage[] =
	"usage: ss-checkpoint DB heartbeat CHECKPOINT DEPENDENCY [--ts EXPR] [--ts-unit UNIT]\n"
	"                     [--idle DURATION] [--on-error POLICY]\n"
	"       ss-checkpoint DB pulse CHECKPOINT --dependency NAME[=THRESHOLD]...\n"
	"                     [--threshold DURATION] [--ts EXPR] [--ts-unit UNIT]\n"
	"                     [--idle DURATION] [--partitions N] [--events FILE]\n"
	"                     [--on-downtime CMD] [--on-recovery CMD] [--on-error POLICY]\n"
	"       ss-checkpoint DB status [CHECKPOINT] [--json]\n"
	"       ss-checkpoint -h\n";

/* Commit at least this often while records stream in without a pause, so the other
 * process sees heartbeats and markers promptly; a pause in the input commits at once. */
#define COMMIT_EVERY_NS (50 * 1000000LL)
/* How often a paused pulse looks at the heartbeats. */
#define POLL_MS 150
/* --idle: 30s, a few Kafka session timeouts, as ss-asof */
#define DEFAULT_IDLE (30 * 1000000000LL)

/* What heartbeat and pulse share: records in, the same records out, their event time. */
struct flow {
	ss_reader *in;
	ss_writer *out;
	ss_expr *ts;
	enum ss_tsunit unit;
	struct ss_errpolicy onerror;
	int64_t committed; /* monotonic time of the last commit */
	void (*commit)(void *);
	void *arg;
};

static void
flow_commit(void *arg)
{
	struct flow *f = arg;

	ss_writer_flush(f->out); /* records first: state never runs ahead of the output */
	f->commit(f->arg);
	f->committed = ss_time_mono();
}

static void
flow_maybe_commit(struct flow *f)
{
	if (ss_time_mono() - f->committed >= COMMIT_EVERY_NS)
		flow_commit(f);
}

/* A bad record: everything before it is passed on and committed, then the policy
 * decides (fail exits 1 naming the line; skip and dead-letter go on). */
static void
flow_reject(struct flow *f, const char *line, size_t len, const char *why)
{
	flow_commit(f);
	ss_errpolicy_reject(&f->onerror, ss_reader_name(f->in), ss_reader_lineno(f->in), line,
	    len, why);
}

/* The record's event time, or false with the reason in why. */
static bool
record_time(struct flow *f, const char *line, size_t len, int64_t *ts, char *why, size_t size)
{
	const char *raw, *w = NULL;
	char msg[256];
	size_t rlen;
	ss_rec rec;
	bool ok;

	ss_rec_init(&rec, line, len);
	if (ss_expr_raw(f->ts, &rec, &raw, &rlen)) {
		ok = ss_time_from_raw(raw, rlen, f->unit, ts, &w);
	} else {
		jv v = ss_expr_eval(f->ts, &rec);

		if (!jv_is_valid(v)) {
			ok = false;
			w = ss_expr_errmsg(v, msg, sizeof msg);
		} else {
			ok = ss_time_from_jv(jv_copy(v), f->unit, ts, &w);
			jv_free(v);
		}
	}
	ss_rec_done(&rec);
	if (!ok)
		snprintf(why, size, "--ts %s: %s", ss_expr_text(f->ts), w ? w : "not a time");
	return ok;
}

/* Next good record and its time; false at the end of input. */
static bool
flow_next(struct flow *f, const char **line, size_t *len, int64_t *ts)
{
	const char *why;
	char msg[512];

	while (ss_reader_next(f->in, line, len)) {
		if (ss_ndjson_blank(*line, *len))
			continue;
		if (!ss_ndjson_valid(*line, *len, &why))
			flow_reject(f, *line, *len, why);
		else if (!record_time(f, *line, *len, ts, msg, sizeof msg))
			flow_reject(f, *line, *len, msg);
		else
			return true;
	}
	return false;
}

static void
flow_pass(struct flow *f, const char *line, size_t len)
{
	ss_writer_write(f->out, line, len);
	ss_writer_putc(f->out, '\n');
}

/* Before the state file is opened: a bad expression leaves no file behind. */
static void
flow_init(struct flow *f, const char *ts, enum ss_tsunit unit)
{
	f->ts = ss_expr_compile(ts, "--ts");
	f->unit = unit;
	f->in = ss_reader_open("-");
	f->out = ss_writer_new(1, "<stdout>");
}

static void
flow_start(struct flow *f, void (*commit)(void *), void *arg)
{
	f->commit = commit;
	f->arg = arg;
	f->committed = ss_time_mono();
	ss_reader_set_idle(f->in, flow_commit, f);
}

static void
flow_free(struct flow *f)
{
	ss_writer_free(f->out);
	ss_reader_free(f->in);
	ss_expr_free(f->ts);
	ss_errpolicy_close(&f->onerror);
}

/* Options heartbeat and pulse share; true if c was one of them. */
static bool
flow_option(int c, const char **ts, enum ss_tsunit *unit, int64_t *idle,
    struct ss_errpolicy *onerror)
{
	switch (c) {
	case 't':
		*ts = optarg;
		return true;
	case 'i':
		if (!ss_duration_parse(optarg, idle) || *idle <= 0)
			ss_diag_usage_error(usage, "--idle: not a positive duration: %s", optarg);
		return true;
	case 'u':
		if (!ss_tsunit_parse(optarg, unit))
			ss_diag_usage_error(usage, "--ts-unit: want s, ms, us or ns: %s", optarg);
		return true;
	case 'e':
		if (!ss_errpolicy_parse(onerror, optarg))
			ss_diag_usage_error(usage, "--on-error: want fail, skip or dead-letter=FILE: %s",
			    optarg);
		return true;
	case 'h':
		fputs(usage, stdout);
		exit(SS_EXIT_OK);
	}
	return false;
}

#define FLOW_OPTIONS \
	{"ts", required_argument, NULL, 't'}, {"ts-unit", required_argument, NULL, 'u'}, \
	{"on-error", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'}, \
	{"idle", required_argument, NULL, 'i'}

/* ---- heartbeat ---- */

static void
hb_commit(void *hb)
{
	ss_checkpoint_hb_commit(hb);
}

static int
cmd_heartbeat(const char *db, int argc, char **argv)
{
	static const struct option opts[] = { FLOW_OPTIONS, {NULL, 0, NULL, 0} };
	const char *ts = ".timestamp", *line;
	enum ss_tsunit unit = SS_TS_S;
	struct flow f = {0};
	struct ss_envelope env;
	ss_checkpoint_hb *hb;
	int64_t t, idle = DEFAULT_IDLE;
	size_t len;
	int c;

	ss_errpolicy_parse(&f.onerror, "fail");
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if (!flow_option(c, &ts, &unit, &idle, &f.onerror))
			ss_diag_usage_error(usage, "heartbeat: bad option");
	if (argc - optind != 2)
		ss_diag_usage_error(usage, "heartbeat: want CHECKPOINT and DEPENDENCY");
	flow_init(&f, ts, unit);
	hb = ss_checkpoint_hb_open(db, argv[optind], argv[optind + 1], idle);
	flow_start(&f, hb_commit, hb);
	while (flow_next(&f, &line, &len, &t)) {
		flow_pass(&f, line, len);
		ss_checkpoint_hb_beat(hb, t, ss_envelope_get(line, len, &env) ? &env : NULL);
		flow_maybe_commit(&f);
	}
	flow_commit(&f);
	ss_checkpoint_hb_close(hb);
	flow_free(&f);
	return SS_EXIT_OK;
}

/* ---- pulse ---- */

struct pulse {
	const char *checkpoint, *on_downtime, *on_recovery;
	FILE *events;
	const char *events_name;
};

static void
pulse_event(const char *kind, const char *dependency, const char *json, void *arg)
{
	struct pulse *pl = arg;
	const char *cmd = strcmp(kind, "downtime") == 0 ? pl->on_downtime : pl->on_recovery;
	int rc;

	if (fprintf(pl->events, "%s\n", json) < 0 || fflush(pl->events) == EOF)
		ss_diag_warn("%s: %s", pl->events_name, strerror(errno));
	if (cmd && (rc = ss_checkpoint_run_hook(cmd, kind, pl->checkpoint, dependency, json)))
		ss_diag_warn("--on-%s: exit status %d", kind, rc);
}

static void
pulse_commit(void *p)
{
	ss_checkpoint_pulse_commit(p);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

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
			ss_diag_usage_error(usage, "--dependency %s: not a duration: %s", name, eq + 1);
	}
	if (!*name)
		ss_diag_usage_error(usage, "--dependency: empty name");
}

static int
cmd_pulse(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		FLOW_OPTIONS,
		{"dependency", required_argument, NULL, 'd'},
		{"threshold", required_argument, NULL, 'T'},
		{"events", required_argument, NULL, 'E'},
		{"on-downtime", required_argument, NULL, 'D'},
		{"on-recovery", required_argument, NULL, 'R'},
		{"partitions", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0} };
	const char *ts = ".timestamp", *line, *events = NULL;
	enum ss_tsunit unit = SS_TS_S;
	struct ss_checkpoint_dep *deps = ss_xmalloc(argc * sizeof *deps);
	int64_t threshold = 10 * 60 * 1000000000LL, t;
	struct ss_checkpoint_parts parts = { .idle = DEFAULT_IDLE };
	char *end;
	long n;
	struct pulse pl = {0};
	struct flow f = {0};
	struct ss_envelope env;
	ss_checkpoint_pulse *p;
	int c, ndeps = 0, i;
	size_t len;

	ss_errpolicy_parse(&f.onerror, "fail");
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (flow_option(c, &ts, &unit, &parts.idle, &f.onerror))
			continue;
		switch (c) {
		case 'd': dep_parse(&deps[ndeps++], optarg); break;
		case 'T':
			if (!ss_duration_parse(optarg, &threshold) || threshold < 0)
				ss_diag_usage_error(usage, "--threshold: not a duration: %s", optarg);
			break;
		case 'P':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 0 || n > INT_MAX)
				ss_diag_usage_error(usage, "--partitions: not a count: %s", optarg);
			parts.expect = (int)n;
			break;
		case 'E': events = optarg; break;
		case 'D': pl.on_downtime = optarg; break;
		case 'R': pl.on_recovery = optarg; break;
		default: ss_diag_usage_error(usage, "pulse: bad option");
		}
	}
	if (argc - optind != 1)
		ss_diag_usage_error(usage, "pulse: want one CHECKPOINT");
	if (ndeps == 0)
		ss_diag_usage_error(usage, "pulse: no --dependency given");
	for (i = 0; i < ndeps; i++) {
		if (deps[i].threshold < 0)
			deps[i].threshold = threshold;
		for (c = 0; c < i; c++)
			if (strcmp(deps[c].name, deps[i].name) == 0)
				ss_diag_usage_error(usage, "--dependency %s given twice", deps[i].name);
	}
	pl.checkpoint = argv[optind];
	pl.events = stderr;
	pl.events_name = "<stderr>";
	if (events && !(pl.events = fopen(pl.events_name = events, "a")))
		ss_diag_die(SS_EXIT_DATA, "%s: %s", events, strerror(errno));
	flow_init(&f, ts, unit);
	p = ss_checkpoint_pulse_open(db, pl.checkpoint, deps, ndeps, &parts, pulse_event, &pl);
	flow_start(&f, pulse_commit, p);
	for (;;) {
		/* Paused: read nothing, so the pipe fills and the producer upstream waits;
		 * the records behind the pause pass after recovery, in order. */
		while (ss_checkpoint_pulse_paused(p) && !ss_checkpoint_pulse_poll(p))
			sleep_ms(POLL_MS);
		if (!flow_next(&f, &line, &len, &t))
			break;
		flow_pass(&f, line, len);
		if (ss_checkpoint_pulse_record(p, t, ss_envelope_get(line, len, &env) ? &env : NULL))
			flow_commit(&f); /* the record that tripped it goes out, then we pause */
		else
			flow_maybe_commit(&f);
	}
	flow_commit(&f);
	ss_checkpoint_pulse_close(p);
	flow_free(&f);
	if (events)
		fclose(pl.events);
	for (i = 0; i < ndeps; i++)
		free((char *)deps[i].name);
	free(deps);
	return SS_EXIT_OK;
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
		case 'h': fputs(usage, stdout); return SS_EXIT_OK;
		default: ss_diag_usage_error(usage, "status: bad option");
		}
	}
	if (argc - optind > 1)
		ss_diag_usage_error(usage, "status: unexpected argument: %s", argv[optind + 1]);
	if (argc - optind == 1)
		checkpoint = argv[optind];
	n = ss_checkpoint_status(db, checkpoint, json, stdout);
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

	ss_diag_init("ss-checkpoint");
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
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
