/* ss-cache: ordered key/value state in a SQLite file (Slipstream's Cache). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "diag.h"
#include "help.h"
#include "proc.h"
#include "progress.h"
#include "envelope.h"
#include "expr.h"
#include "keyenc.h"
#include "ndjson.h"
#include "sstime.h"
#include "statedir.h"
#include "store.h"

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

/* The state: one DB file, or a directory of one file per topic-partition. */
struct state {
	const char *db;
	ss_statedir *dir;
	ss_store *single;
};

static void
state_open(struct state *st, int flags)
{
	if (st->dir == NULL)
		st->single = ss_store_open(st->db, flags, SS_STATE_CACHE);
	else if (flags & SS_STORE_READONLY)
		ss_statedir_open_all(st->dir);
}

static size_t
state_count(struct state *st)
{
	return st->single ? 1 : ss_statedir_count(st->dir);
}

static ss_store *
state_at(struct state *st, size_t i)
{
	return st->single ? st->single : ss_statedir_at(st->dir, i);
}

static void
state_close(struct state *st)
{
	ss_store_close(st->single);
	ss_statedir_close(st->dir);
	st->single = NULL;
	st->dir = NULL;
}

/* A batch is committed at BATCH_RECORDS records or BATCH_BYTES held back, whichever comes
 * first, and whenever the input pauses. Its puts are applied in key order at the commit
 * (ss_store_defer_puts), so each commit rewrites each page of the key index it touches
 * once: the fewer and larger the batches, the fewer times a page is written to the WAL
 * (and checkpointed) per record. A sweep needs few pages cached, so the page cache is
 * small (CACHE_KIB a file): memory is about BATCH_BYTES + CACHE_KIB a file + 5 MB. */
#define BATCH_RECORDS 200000
#define BATCH_BYTES (32 << 20)
#define CACHE_KIB 4096
/* ... and at the latest BATCH_NS after it began (looked at every 1024 records), so a
 * slow but never pausing input still shows up to readers within about a second. */
#define BATCH_NS 1000000000LL

/* ---- put ---- */

struct put {
	struct state state;
	bool open;
	ss_reader *in;
	ss_writer *out;
	ss_expr *key, *value;
	struct ss_errpolicy onerror;
	bool tee;
	int64_t retain_count, retain_age; /* 0: keep everything */
	enum ss_tsunit unit;
	ss_buf pending;                   /* --tee output of the batch, written out before its commit */
	bool passing_on;                  /* writing it out: do not commit if that fails */
	int pending_records;
	size_t pending_bytes;             /* held back by the stores for the batch */
	int64_t batch_start;              /* monotonic ns of the batch's first record */
	uint64_t stored, replays, rejected;
	ss_buf keyenc, keytext, valtext;
};

static struct put P; /* one per process; the atexit handler needs it */

/* Apply retention and commit the batch. Its --tee output is written out (to the pipe,
 * where a kill of this process cannot take it back) before the commit: once the records
 * count as applied a restart never reads them again, so output still in our buffer at a
 * kill would be lost downstream. A kill between the write and the commit replays the
 * batch instead, so --tee is at-least-once, like Kafka delivery. */
static void
commit(struct put *p)
{
	if (p->tee && p->pending.len) {
		/* taken out first: a closed pipe exits from the write, and the atexit handler
		 * comes back here to commit */
		ss_buf out = p->pending;
		p->pending = (ss_buf){0};
		p->passing_on = true;
		ss_writer_write(p->out, out.data, out.len);
		ss_writer_flush(p->out);
		p->passing_on = false;
		p->pending = out;
		ss_buf_reset(&p->pending);
	}
	for (size_t i = 0; i < state_count(&p->state); i++) {
		ss_store *s = state_at(&p->state, i);
		if (p->retain_count > 0)
			ss_store_retain_count(s, p->retain_count);
		if (p->retain_age > 0)
			ss_store_retain_age(s, p->retain_age);
		ss_store_commit(s);
	}
	p->pending_records = 0;
	p->pending_bytes = 0;
}

static void
idle(void *arg)
{
	struct put *p = arg;

	commit(p);
	if (p->out)
		ss_writer_flush(p->out);
}

/* Runs on every exit, including a failing record under --on-error fail: everything before
 * the bad record is committed and passed on. */
static void
finish(void)
{
	if (!P.open)
		return;
	/* The batch's --tee output did not get out (a closed pipe, a write error): leave the
	 * batch uncommitted, so a restart reads it again and passes it on. Committing it would
	 * lose it downstream, e.g. when the ss-produce after us is killed. */
	if (P.passing_on)
		return;
	idle(&P);
	state_close(&P.state);
	P.open = false;
	ss_writer_free(P.out);
	P.out = NULL;
	ss_errpolicy_close(&P.onerror);
	if (P.replays || P.rejected)
		ss_diag_warn("%llu stored, %llu skipped as replays, %llu rejected",
			     (unsigned long long)P.stored, (unsigned long long)P.replays,
			     (unsigned long long)P.rejected);
}

static void
reject(struct put *p, const char *line, size_t len, const char *why)
{
	p->rejected++;
	ss_errpolicy_reject(&p->onerror, ss_reader_name(p->in), ss_reader_lineno(p->in), line, len, why);
}

/* Encode the record's key; false (with *why) when it has none usable. */
static bool
record_key(struct put *p, ss_rec *rec, const char **why)
{
	static char msg[600];
	char err[512];

	ss_buf_reset(&p->keyenc);
	ss_buf_reset(&p->keytext);
	const char *raw;
	size_t rlen;

	switch (ss_expr_key(p->key, rec, &p->keyenc, &p->keytext, err, sizeof err)) {
	case 1:
		return true;
	case 0:
		/* null is a key like any other, but a path that is not there is a mistake */
		if (!ss_expr_is_path(p->key) || ss_expr_raw(p->key, rec, &raw, &rlen))
			return true;
		snprintf(msg, sizeof msg, "--key %s: no such field", ss_expr_text(p->key));
		break;
	default:
		snprintf(msg, sizeof msg, "--key %s: %s", ss_expr_text(p->key), err);
	}
	*why = msg;
	return false;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Count the record just put; true when the batch is to be committed. */
static bool
batch_full(struct put *p)
{
	if (p->pending_records++ == 0)
		p->batch_start = now_ns();
	if (p->pending_records >= BATCH_RECORDS || p->pending_bytes >= BATCH_BYTES || p->pending.len > (1 << 20))
		return true;
	return p->pending_records % 1024 == 0 && now_ns() - p->batch_start >= BATCH_NS;
}

/* Puts applied in key order at each commit, through a small page cache. */
static void
writer_setup(ss_store *store)
{
	char sql[64];

	if (!ss_store_defer_puts(store))
		return;
	snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", CACHE_KIB);
	sqlite3_exec(ss_store_db(store), sql, NULL, NULL, NULL); /* a hint: failing is harmless */
}

static void
put_record(struct put *p, const char *line, size_t len)
{
	struct ss_envelope env;
	const char *why;
	ss_rec rec;

	if (!ss_ndjson_valid(line, len, &why)) {
		reject(p, line, len, why);
		return;
	}
	bool has_env = ss_envelope_get(line, len, &env);
	ss_store *store = p->state.single;
	if (store == NULL) {
		if (!has_env) {
			reject(p, line, len, "--state-dir: record has no envelope (topic, partition, offset)");
			return;
		}
		store = ss_statedir_store(p->state.dir, env.topic, env.partition);
		writer_setup(store);
		if (p->retain_age)
			ss_store_track_time(store, p->unit);
	}
	if (has_env && ss_store_offset_is_applied(store, &env)) {
		p->replays++;
		return;
	}
	ss_rec_init(&rec, line, len);
	if (!record_key(p, &rec, &why)) {
		ss_rec_done(&rec);
		reject(p, line, len, why);
		return;
	}
	const char *value = line;
	size_t vlen = len;
	if (p->value) {
		char msg[512], m[256];
		ss_buf_reset(&p->valtext);
		if (ss_expr_json(p->value, &rec, &p->valtext, m, sizeof m) < 0) {
			snprintf(msg, sizeof msg, "--value %s: %s", ss_expr_text(p->value), m);
			ss_rec_done(&rec);
			reject(p, line, len, msg);
			return;
		}
		value = p->valtext.data;
		vlen = p->valtext.len;
	}
	ss_store_put_enc(store, p->keyenc.data, p->keyenc.len, p->keytext.data, p->keytext.len, value, vlen);
	p->pending_bytes += p->keyenc.len + p->keytext.len + vlen + 48;
	ss_rec_done(&rec);
	if (has_env)
		ss_store_offset_set(store, env.topic, env.partition, env.offset);
	p->stored++;
	if (p->tee) {
		ss_buf_add(&p->pending, line, len);
		ss_buf_addc(&p->pending, '\n');
	}
	if (batch_full(p))
		commit(p);
}

/* Every record of stdin into the store, or those before SIGINT or SIGTERM; the live
 * line counts them and, for a regular file, the bytes read of its size. */
static void
read_all(struct put *p, ss_progress *progress)
{
	int64_t size = ss_progress_file_size(ss_reader_fd(p->in)), nrecords = 0;
	const char *line;
	size_t len;

	while (!ss_proc_signal() && ss_reader_next(p->in, &line, &len) == 1) {
		if (!ss_ndjson_blank(line, len))
			put_record(p, line, len);
		ss_progress_update(progress, ++nrecords, (int64_t)(ss_reader_offset(p->in) + len), size);
	}
	ss_progress_end(progress);
}

static int
cmd_put(struct state *state, int argc, char **argv)
{
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},  {"value", required_argument, NULL, 'v'},
		{"tee", no_argument, NULL, 't'},        {"retain-count", required_argument, NULL, 'c'},
		{"retain-age", required_argument, NULL, 'a'}, {"ts-unit", required_argument, NULL, 'u'},
		{"on-error", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
		{"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0}};
	const char *key = ".key", *value = NULL, *unit_arg = NULL;
	enum ss_progress_mode progress = SS_PROGRESS_AUTO;
	struct put *p = &P;
	int c;
	char *end;

	ss_errpolicy_parse(&p->onerror, "fail");
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'v': value = optarg; break;
		case 't': p->tee = true; break;
		case 'c':
			p->retain_count = strtoll(optarg, &end, 10);
			if (*end || p->retain_count <= 0)
				ss_diag_usage_error(usage, "--retain-count: not a positive number: %s", optarg);
			break;
		case 'a':
			if (!ss_duration_parse(optarg, &p->retain_age) || p->retain_age <= 0)
				ss_diag_usage_error(usage, "--retain-age: not a duration: %s", optarg);
			break;
		case 'u':
			unit_arg = optarg;
			if (!ss_tsunit_parse(optarg, &p->unit))
				ss_diag_usage_error(usage, "--ts-unit: want s, ms, us or ns: %s", optarg);
			break;
		case 'e':
			if (!ss_errpolicy_parse(&p->onerror, optarg))
				ss_diag_usage_error(usage, "--on-error: want fail, skip or dead-letter=FILE: %s", optarg);
			break;
		case 'P': progress = SS_PROGRESS_ON; break;
		case 'N': progress = SS_PROGRESS_OFF; break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", "put");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "put: unexpected argument: %s", argv[optind]);
	if (unit_arg && !p->retain_age)
		ss_diag_usage_error(usage, "--ts-unit only matters with --retain-age");
	p->key = ss_expr_compile(key, "--key");
	p->value = value ? ss_expr_compile(value, "--value") : NULL;
	p->state = *state;
	state_open(&p->state, 0);
	p->open = true;
	if (p->state.single)
		writer_setup(p->state.single);
	if (p->retain_age && p->state.single)
		ss_store_track_time(p->state.single, p->unit);
	p->in = ss_reader_open("-");
	if (p->tee)
		p->out = ss_writer_new(1, "<stdout>");
	ss_reader_set_idle(p->in, idle, p);
	atexit(finish);
	ss_proc_catch(); /* a signal stops at a record: what came before is committed */

	read_all(p, ss_progress_new(progress, p->tee ? 1 : -1));
	finish();
	ss_reader_free(p->in);
	ss_expr_free(p->key);
	ss_expr_free(p->value);
	ss_buf_free(&p->pending);
	ss_buf_free(&p->keyenc);
	ss_buf_free(&p->keytext);
	ss_buf_free(&p->valtext);
	return ss_proc_status(SS_EXIT_OK);
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

/* Every KEY argument, checked before the store is touched. */
static jv
parse_key_args(int argc, char **argv, const char *what)
{
	jv keys = jv_array();

	for (int i = 0; i < argc; i++)
		keys = jv_array_append(keys, parse_key_arg(argv[i], what));
	return keys;
}

/* For commands without options: argv[0] is the command, the rest are KEYs. */
static void
no_options(int argc, char **argv, const char *cmd)
{
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			ss_help(usage, options);
			exit(SS_EXIT_OK);
		}
	}
	if (argc == 0)
		ss_diag_usage_error(usage, "%s: no KEY given", cmd);
}

/* get --json: one line per key and value, {"key":K,"value":V}, or {"key":K,"missing":true}. */
static void
put_paired(ss_writer *out, jv k, const char *v)
{
	jv text = jv_dump_string(jv_copy(k), 0);

	ss_writer_puts(out, "{\"key\":");
	ss_writer_puts(out, jv_string_value(text));
	ss_writer_puts(out, v ? ",\"value\":" : ",\"missing\":true");
	if (v)
		ss_writer_puts(out, v);
	ss_writer_puts(out, "}\n");
	jv_free(text);
}

/* Print the key's value from every store that has it (paired with the key under
 * --json, and a "missing" line when none has); false when none has. */
static bool
get_one(struct state *st, jv k, bool json, ss_writer *out)
{
	bool found = false;

	for (size_t i = 0; i < state_count(st); i++) {
		char *v = ss_store_get(state_at(st, i), k);
		if (v && json)
			put_paired(out, k, v);
		else if (v) {
			ss_writer_puts(out, v);
			ss_writer_putc(out, '\n');
		}
		found |= v != NULL;
		free(v);
	}
	if (!found && json)
		put_paired(out, k, NULL);
	return found;
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
cmd_get(struct state *st, int argc, char **argv)
{
	argc--, argv++;
	bool json = take_json_flag(&argc, argv);
	no_options(argc, argv, "get");
	jv keys = parse_key_args(argc, argv, "get");
	state_open(st, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	int missing = 0;

	for (int i = 0; i < argc; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		if (!get_one(st, k, json, out)) {
			ss_diag_warn("%s: no such key", argv[i]);
			missing++;
		}
		jv_free(k);
	}
	jv_free(keys);
	ss_writer_free(out);
	state_close(st);
	return missing ? SS_EXIT_DATA : SS_EXIT_OK;
}

static int
cmd_del(struct state *st, int argc, char **argv)
{
	no_options(--argc, ++argv, "del");
	jv keys = parse_key_args(argc, argv, "del");
	state_open(st, 0);
	if (st->dir)
		ss_statedir_open_all(st->dir);

	for (int i = 0; i < argc; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		for (size_t j = 0; j < state_count(st); j++)
			ss_store_del(state_at(st, j), k);
		jv_free(k);
	}
	jv_free(keys);
	state_close(st);
	return SS_EXIT_OK;
}

/* ---- scan ---- */

enum show { SHOW_BOTH, SHOW_KEYS, SHOW_VALUES };

static void
print_row(ss_writer *out, enum show show, const char *key, const char *value)
{
	switch (show) {
	case SHOW_KEYS:
		ss_writer_puts(out, key);
		break;
	case SHOW_VALUES:
		ss_writer_puts(out, value);
		break;
	case SHOW_BOTH:
		ss_writer_puts(out, "{\"key\":");
		ss_writer_puts(out, key);
		ss_writer_puts(out, ",\"value\":");
		ss_writer_puts(out, value);
		ss_writer_putc(out, '}');
	}
	ss_writer_putc(out, '\n');
}

/* Index of the cursor whose current row comes next (smallest key, or largest backwards),
 * or -1 when all are done. rows[i] is false for a finished cursor. */
static int
next_cursor(ss_cursor **cur, const bool *rows, size_t n, bool backwards)
{
	int best = -1;
	const void *be = NULL;
	size_t blen = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len;
		if (!rows[i])
			continue;
		const void *e = ss_cursor_enc(cur[i], &len);
		if (best >= 0) {
			int c = memcmp(e, be, len < blen ? len : blen);
			if (c == 0)
				c = (len > blen) - (len < blen);
			if (backwards ? c <= 0 : c >= 0)
				continue;
		}
		best = (int)i;
		be = e;
		blen = len;
	}
	return best;
}

static void
scan_merged(struct state *st, jv from, jv to, jv prefix, bool backwards, long long limit,
	    enum show show, ss_writer *out)
{
	size_t n = state_count(st);
	ss_cursor **cur = ss_xmalloc(n * sizeof *cur);
	bool *rows = ss_xmalloc(n * sizeof *rows);
	const char **keys = ss_xmalloc(n * sizeof *keys), **values = ss_xmalloc(n * sizeof *values);

	for (size_t i = 0; i < n; i++) {
		cur[i] = ss_store_scan(state_at(st, i), from, to, prefix, backwards);
		rows[i] = ss_cursor_next(cur[i], &keys[i], &values[i]);
	}
	for (long long shown = 0; limit < 0 || shown < limit; shown++) {
		int i = next_cursor(cur, rows, n, backwards);
		if (i < 0)
			break;
		print_row(out, show, keys[i], values[i]);
		rows[i] = ss_cursor_next(cur[i], &keys[i], &values[i]);
	}
	for (size_t i = 0; i < n; i++)
		ss_cursor_free(cur[i]);
	free(cur);
	free(rows);
	free(keys);
	free(values);
}

static int
cmd_scan(struct state *st, int argc, char **argv)
{
	static const struct option opts[] = {
		{"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
		{"prefix", required_argument, NULL, 'p'}, {"backwards", no_argument, NULL, 'b'},
		{"limit", required_argument, NULL, 'l'}, {"keys", no_argument, NULL, 'K'},
		{"values", no_argument, NULL, 'V'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	jv from = jv_invalid(), to = jv_invalid(), prefix = jv_invalid();
	bool backwards = false;
	long long limit = -1;
	enum show show = SHOW_BOTH;
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': jv_free(from); from = parse_key_arg(optarg, "--from"); break;
		case 't': jv_free(to); to = parse_key_arg(optarg, "--to"); break;
		case 'p': jv_free(prefix); prefix = parse_key_arg(optarg, "--prefix"); break;
		case 'b': backwards = true; break;
		case 'l':
			limit = strtoll(optarg, &end, 10);
			if (*end || limit < 0)
				ss_diag_usage_error(usage, "--limit: not a number: %s", optarg);
			break;
		case 'K':
		case 'V':
			if (show != SHOW_BOTH)
				ss_diag_usage_error(usage, "--keys and --values exclude each other");
			show = c == 'K' ? SHOW_KEYS : SHOW_VALUES;
			break;
		case 'h': ss_help(usage, options); return SS_EXIT_OK;
		default: ss_diag_bad_option(usage, argv, "h", "scan");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "scan: unexpected argument: %s", argv[optind]);
	state_open(st, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	scan_merged(st, from, to, prefix, backwards, limit, show, out);
	ss_writer_free(out);
	state_close(st);
	jv_free(from);
	jv_free(to);
	jv_free(prefix);
	return SS_EXIT_OK;
}

/* ---- stats ---- */

struct offsets_out {
	ss_writer *out;
	int n;
};

static void
print_offset(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	struct offsets_out *o = arg;
	char num[64];

	ss_writer_puts(o->out, o->n++ ? ",{\"topic\":" : "{\"topic\":");
	ss_writer_json_string(o->out, topic, strlen(topic));
	snprintf(num, sizeof num, ",\"partition\":%d,\"offset\":%lld}", partition, (long long)offset);
	ss_writer_puts(o->out, num);
}

static off_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

static int
cmd_stats(struct state *st, int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		ss_help(usage, options);
		return SS_EXIT_OK;
	}
	if (argc > 1)
		ss_diag_usage_error(usage, "stats: unexpected argument: %s", argv[1]);
	state_open(st, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	char wal[4096], num[128];
	struct offsets_out o = {out, 0};
	long long keys = 0, bytes = 0;

	for (size_t i = 0; i < state_count(st); i++) {
		const char *path = ss_store_path(state_at(st, i));
		snprintf(wal, sizeof wal, "%s-wal", path);
		keys += ss_store_count(state_at(st, i));
		bytes += file_size(path) + file_size(wal);
	}
	ss_writer_puts(out, "{\"path\":");
	ss_writer_json_string(out, st->db, strlen(st->db));
	snprintf(num, sizeof num, ",\"keys\":%lld,\"bytes\":%lld,\"offsets\":[", keys, bytes);
	ss_writer_puts(out, num);
	for (size_t i = 0; i < state_count(st); i++)
		ss_store_offsets_each(state_at(st, i), print_offset, &o);
	ss_writer_puts(out, "]}\n");
	ss_writer_free(out);
	state_close(st);
	return SS_EXIT_OK;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(struct state *st, int argc, char **argv);
	} cmds[] = {{"put", cmd_put}, {"get", cmd_get}, {"del", cmd_del}, {"scan", cmd_scan}, {"stats", cmd_stats}};

	ss_diag_init("ss-cache");
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		ss_help(usage, options);
		return SS_EXIT_OK;
	}
	struct state st = {0};
	if (argc >= 2 && strcmp(argv[1], "--state-dir") == 0) {
		if (argc < 3)
			ss_diag_usage_error(usage, "--state-dir: no DIR given");
		bool writes = argc > 3 && (strcmp(argv[3], "put") == 0 || strcmp(argv[3], "del") == 0);
		st.dir = ss_statedir_open(argv[2], writes ? 0 : SS_STORE_READONLY);
		st.db = argv[2];
		argc--, argv++;
	} else if (argc >= 2)
		st.db = argv[1];
	if (argc < 3)
		ss_diag_usage_error(usage, argc < 2 ? "no DB given" : "no command given");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[2], cmds[i].name) == 0) {
			/* getopt_long sees "CMD OPTIONS...": argv[0] is the command's name */
			return cmds[i].run(&st, argc - 2, argv + 2);
		}
	ss_diag_usage_error(usage, "unknown command: %s", argv[2]);
}
