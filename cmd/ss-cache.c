/* ss-cache: ordered key/value state in a SQLite file (Slipstream's Cache). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "diag.h"
#include "envelope.h"
#include "expr.h"
#include "keyenc.h"
#include "ndjson.h"
#include "sstime.h"
#include "store.h"

static const char usage[] =
	"usage: ss-cache DB put [--key EXPR] [--value EXPR] [--tee] [--retain-count N]\n"
	"                [--retain-age DURATION] [--ts-unit UNIT] [--on-error POLICY]\n"
	"       ss-cache DB get KEY...\n"
	"       ss-cache DB del KEY...\n"
	"       ss-cache DB scan [--from KEY] [--to KEY] [--prefix KEY] [--backwards]\n"
	"                [--limit N] [--keys | --values]\n"
	"       ss-cache DB stats\n"
	"       ss-cache -h\n";

#define BATCH 10000

/* ---- put ---- */

struct put {
	ss_store *store;
	ss_reader *in;
	ss_writer *out;
	ss_expr *key, *value;
	struct ss_errpolicy onerror;
	bool tee;
	int64_t retain_count, retain_age; /* 0: keep everything */
	ss_buf pending;                   /* --tee output held until its records are committed */
	int pending_records;
	uint64_t stored, replays, rejected;
	ss_buf keyenc, keytext;
};

static struct put P; /* one per process; the atexit handler needs it */

/* Commit the batch, apply retention, then release the --tee output of what is now durable. */
static void
commit(struct put *p)
{
	if (p->retain_count > 0)
		ss_store_retain_count(p->store, p->retain_count);
	if (p->retain_age > 0)
		ss_store_retain_age(p->store, p->retain_age);
	ss_store_commit(p->store);
	if (p->tee && p->pending.len) {
		ss_writer_write(p->out, p->pending.data, p->pending.len);
		ss_buf_reset(&p->pending);
	}
	p->pending_records = 0;
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
	if (P.store == NULL)
		return;
	idle(&P);
	ss_store_close(P.store);
	P.store = NULL;
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
	if (has_env && ss_store_offset_is_applied(p->store, &env)) {
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
	jv vtext = jv_invalid();
	if (p->value) {
		jv v = ss_expr_eval(p->value, &rec);
		if (!jv_is_valid(v)) {
			char msg[512], m[256];
			snprintf(msg, sizeof msg, "--value %s: %s", ss_expr_text(p->value), ss_expr_errmsg(v, m, sizeof m));
			jv_free(v);
			ss_rec_done(&rec);
			reject(p, line, len, msg);
			return;
		}
		vtext = jv_dump_string(v, 0);
		value = jv_string_value(vtext);
		vlen = strlen(value);
	}
	ss_store_put_enc(p->store, p->keyenc.data, p->keyenc.len, p->keytext.data, p->keytext.len, value, vlen);
	jv_free(vtext);
	ss_rec_done(&rec);
	if (has_env)
		ss_store_offset_set(p->store, env.topic, env.partition, env.offset);
	p->stored++;
	if (p->tee) {
		ss_buf_add(&p->pending, line, len);
		ss_buf_addc(&p->pending, '\n');
	}
	if (++p->pending_records >= BATCH || p->pending.len > (1 << 20))
		commit(p);
}

static int
cmd_put(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},  {"value", required_argument, NULL, 'v'},
		{"tee", no_argument, NULL, 't'},        {"retain-count", required_argument, NULL, 'c'},
		{"retain-age", required_argument, NULL, 'a'}, {"ts-unit", required_argument, NULL, 'u'},
		{"on-error", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *key = ".key", *value = NULL, *unit_arg = NULL;
	enum ss_tsunit unit = SS_TS_S;
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
			if (!ss_tsunit_parse(optarg, &unit))
				ss_diag_usage_error(usage, "--ts-unit: want s, ms, us or ns: %s", optarg);
			break;
		case 'e':
			if (!ss_errpolicy_parse(&p->onerror, optarg))
				ss_diag_usage_error(usage, "--on-error: want fail, skip or dead-letter=FILE: %s", optarg);
			break;
		case 'h': fputs(usage, stdout); return SS_EXIT_OK;
		default: ss_diag_usage_error(usage, "put: bad option");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "put: unexpected argument: %s", argv[optind]);
	if (unit_arg && !p->retain_age)
		ss_diag_usage_error(usage, "--ts-unit only matters with --retain-age");
	p->key = ss_expr_compile(key, "--key");
	p->value = value ? ss_expr_compile(value, "--value") : NULL;
	p->store = ss_store_open(db, 0);
	if (p->retain_age)
		ss_store_track_time(p->store, unit);
	p->in = ss_reader_open("-");
	if (p->tee)
		p->out = ss_writer_new(1, "<stdout>");
	ss_reader_set_idle(p->in, idle, p);
	atexit(finish);

	const char *line;
	size_t len;
	while (ss_reader_next(p->in, &line, &len))
		if (!ss_ndjson_blank(line, len))
			put_record(p, line, len);
	finish();
	ss_reader_free(p->in);
	ss_expr_free(p->key);
	ss_expr_free(p->value);
	ss_buf_free(&p->pending);
	ss_buf_free(&p->keyenc);
	ss_buf_free(&p->keytext);
	return SS_EXIT_OK;
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
			fputs(usage, stdout);
			exit(SS_EXIT_OK);
		}
	}
	if (argc == 0)
		ss_diag_usage_error(usage, "%s: no KEY given", cmd);
}

static int
cmd_get(const char *db, int argc, char **argv)
{
	no_options(--argc, ++argv, "get");
	jv keys = parse_key_args(argc, argv, "get");
	ss_store *s = ss_store_open(db, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	int missing = 0;

	for (int i = 0; i < argc; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		char *v = ss_store_get(s, k);
		if (v) {
			ss_writer_puts(out, v);
			ss_writer_putc(out, '\n');
			free(v);
		} else {
			ss_diag_warn("%s: no such key", argv[i]);
			missing++;
		}
		jv_free(k);
	}
	jv_free(keys);
	ss_writer_free(out);
	ss_store_close(s);
	return missing ? SS_EXIT_DATA : SS_EXIT_OK;
}

static int
cmd_del(const char *db, int argc, char **argv)
{
	no_options(--argc, ++argv, "del");
	jv keys = parse_key_args(argc, argv, "del");
	ss_store *s = ss_store_open(db, 0);

	for (int i = 0; i < argc; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		ss_store_del(s, k);
		jv_free(k);
	}
	jv_free(keys);
	ss_store_close(s);
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

static int
cmd_scan(const char *db, int argc, char **argv)
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
		case 'h': fputs(usage, stdout); return SS_EXIT_OK;
		default: ss_diag_usage_error(usage, "scan: bad option");
		}
	}
	if (optind != argc)
		ss_diag_usage_error(usage, "scan: unexpected argument: %s", argv[optind]);
	ss_store *s = ss_store_open(db, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	ss_cursor *cur = ss_store_scan(s, from, to, prefix, backwards);
	const char *k, *v;
	for (long long n = 0; (limit < 0 || n < limit) && ss_cursor_next(cur, &k, &v); n++)
		print_row(out, show, k, v);
	ss_cursor_free(cur);
	ss_writer_free(out);
	ss_store_close(s);
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
cmd_stats(const char *db, int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return SS_EXIT_OK;
	}
	if (argc > 1)
		ss_diag_usage_error(usage, "stats: unexpected argument: %s", argv[1]);
	ss_store *s = ss_store_open(db, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	char wal[4096], num[128];
	struct offsets_out o = {out, 0};

	snprintf(wal, sizeof wal, "%s-wal", db);
	ss_writer_puts(out, "{\"path\":");
	ss_writer_json_string(out, db, strlen(db));
	snprintf(num, sizeof num, ",\"keys\":%lld,\"bytes\":%lld,\"offsets\":[", (long long)ss_store_count(s),
		 (long long)(file_size(db) + file_size(wal)));
	ss_writer_puts(out, num);
	ss_store_offsets_each(s, print_offset, &o);
	ss_writer_puts(out, "]}\n");
	ss_writer_free(out);
	ss_store_close(s);
	return SS_EXIT_OK;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(const char *db, int argc, char **argv);
	} cmds[] = {{"put", cmd_put}, {"get", cmd_get}, {"del", cmd_del}, {"scan", cmd_scan}, {"stats", cmd_stats}};

	ss_diag_init("ss-cache");
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return SS_EXIT_OK;
	}
	if (argc < 3)
		ss_diag_usage_error(usage, argc < 2 ? "no DB given" : "no command given");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[2], cmds[i].name) == 0) {
			/* getopt_long sees "CMD OPTIONS...": argv[0] is the command's name */
			return cmds[i].run(argv[1], argc - 2, argv + 2);
		}
	ss_diag_usage_error(usage, "unknown command: %s", argv[2]);
}
