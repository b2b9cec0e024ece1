#include "cache/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/buf.h"
#include "base/diag.h"
#include "stream/envelope.h"
#include "base/expr.h"
#include "base/jscan.h"
#include "base/proc.h"
#include "db/statedir.h"
#include "db/store.h"

/* The state: one DB file, or a directory of one file per topic-partition. */
struct ss_cache {
	const char *db;
	ss_statedir *dir;
	ss_store *single;
};

ss_cache *
ss_cache_new(const char *db)
{
	ss_cache *c = ss_xmalloc(sizeof *c);

	*c = (ss_cache){.db = db};
	return c;
}

ss_cache *
ss_cache_new_dir(const char *dir, bool writes)
{
	ss_cache *c = ss_cache_new(dir);

	c->dir = ss_statedir_open(dir, writes ? 0 : SS_STORE_READONLY);
	return c;
}

static void
state_open(ss_cache *c, int flags)
{
	if (c->dir == NULL)
		c->single = ss_store_open(c->db, flags, SS_STATE_CACHE);
	else if (flags & SS_STORE_READONLY)
		ss_statedir_open_all(c->dir);
}

static size_t
state_count(ss_cache *c)
{
	return c->single ? 1 : ss_statedir_count(c->dir);
}

static ss_store *
state_at(ss_cache *c, size_t i)
{
	return c->single ? c->single : ss_statedir_at(c->dir, i);
}

static void
state_close(ss_cache *c)
{
	ss_store_close(c->single);
	ss_statedir_close(c->dir);
	c->single = NULL;
	c->dir = NULL;
}

void
ss_cache_free(ss_cache *c)
{
	state_close(c);
	free(c);
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
	ss_cache *state;
	struct ss_cache_put_opts o;
	bool open;
	ss_reader *in;
	ss_writer *out;
	ss_expr *key, *value;
	ss_buf pending;                   /* --tee output of the batch, written out before its commit */
	bool passing_on;                  /* writing it out: do not commit if that fails */
	int pending_records;
	size_t pending_bytes;             /* held back by the stores for the batch */
	int64_t batch_start;              /* monotonic ns of the batch's first record */
	uint64_t stored, replays, rejected;
	ss_buf keyenc, keytext, valtext;
};

/* Apply retention and commit the batch. Its --tee output is written out (to the pipe,
 * where a kill of this process cannot take it back) before the commit: once the records
 * count as applied a restart never reads them again, so output still in our buffer at a
 * kill would be lost downstream. A kill between the write and the commit replays the
 * batch instead, so --tee is at-least-once, like Kafka delivery. */
static void
commit(struct put *p)
{
	if (p->o.tee && p->pending.len) {
		/* taken out first: a closed pipe exits from the write, and the exit handler
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
	for (size_t i = 0; i < state_count(p->state); i++) {
		ss_store *s = state_at(p->state, i);
		if (p->o.retain_count > 0)
			ss_store_retain_count(s, p->o.retain_count);
		if (p->o.retain_age > 0)
			ss_store_retain_age(s, p->o.retain_age);
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

/* At the end, and on every exit before it, including a failing record under --on-error
 * fail: everything before the bad record is committed and passed on. */
static void
finish(struct put *p)
{
	if (!p->open)
		return;
	/* The batch's --tee output did not get out (a closed pipe, a write error): leave the
	 * batch uncommitted, so a restart reads it again and passes it on. Committing it would
	 * lose it downstream, e.g. when the ss-produce after us is killed. */
	if (p->passing_on)
		return;
	idle(p);
	state_close(p->state);
	p->open = false;
	ss_writer_free(p->out);
	p->out = NULL;
	ss_errpolicy_close(&p->o.onerror);
	if (p->replays || p->rejected)
		ss_diag_warn("%llu stored, %llu skipped as replays, %llu rejected",
			     (unsigned long long)p->stored, (unsigned long long)p->replays,
			     (unsigned long long)p->rejected);
}

static void
at_exit(int status, void *arg)
{
	struct put *p = arg;

	(void)status;
	finish(p);
	ss_reader_free(p->in);
	ss_expr_free(p->key);
	ss_expr_free(p->value);
	ss_buf_free(&p->pending);
	ss_buf_free(&p->keyenc);
	ss_buf_free(&p->keytext);
	ss_buf_free(&p->valtext);
	free(p);
}

static void
reject(struct put *p, const char *line, size_t len, const char *why)
{
	p->rejected++;
	ss_errpolicy_reject(&p->o.onerror, ss_reader_name(p->in), ss_reader_lineno(p->in), line, len, why);
}

/* Reject a record whose parse is done with. */
static void
reject_parsed(struct put *p, ss_rec *rec, const char *line, size_t len, const char *why)
{
	ss_rec_done(rec);
	reject(p, line, len, why);
}

/* Encode the record's key; false (rejected) when it has none usable. */
static bool
record_key(struct put *p, const char *line, size_t len, ss_rec *rec)
{
	char msg[600], err[512];
	const char *raw;
	size_t rlen;

	ss_buf_reset(&p->keyenc);
	ss_buf_reset(&p->keytext);
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
	reject_parsed(p, rec, line, len, msg);
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

/* Puts applied in key order at each commit, through a small page cache; with
 * --retain-age, the times of keys tracked. */
static void
writer_setup(struct put *p, ss_store *store)
{
	char sql[64];

	if (p->o.retain_age)
		ss_store_track_time(store, p->o.unit);
	if (!ss_store_defer_puts(store))
		return;
	snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", CACHE_KIB);
	sqlite3_exec(ss_store_db(store), sql, NULL, NULL, NULL); /* a hint: failing is harmless */
}

/* The store of the record, NULL (rejected) under a state directory when it has no
 * envelope. */
static ss_store *
record_store(struct put *p, const char *line, size_t len, const struct ss_envelope *env)
{
	if (p->state->single)
		return p->state->single;
	if (env == NULL) {
		reject(p, line, len, "--state-dir: record has no envelope (topic, partition, offset)");
		return NULL;
	}
	ss_store *store = ss_statedir_store(p->state->dir, env->topic, env->partition);
	writer_setup(p, store);
	return store;
}

/* The value to store: the record, or --value of it; false (rejected) when that fails. */
static bool
record_value(struct put *p, const char *line, size_t len, ss_rec *rec, const char **value, size_t *vlen)
{
	char msg[512], m[256];

	*value = line;
	*vlen = len;
	if (p->value == NULL)
		return true;
	ss_buf_reset(&p->valtext);
	if (ss_expr_json(p->value, rec, &p->valtext, m, sizeof m) < 0) {
		snprintf(msg, sizeof msg, "--value %s: %s", ss_expr_text(p->value), m);
		reject_parsed(p, rec, line, len, msg);
		return false;
	}
	*value = p->valtext.data;
	*vlen = p->valtext.len;
	return true;
}

/* Hold the record's --tee output back until its batch is committed. */
static void
pass_on(struct put *p, const char *line, size_t len)
{
	ss_buf_add(&p->pending, line, len);
	ss_buf_addc(&p->pending, '\n');
}

static void
put_record(struct put *p, const char *line, size_t len)
{
	struct ss_envelope env;
	struct ss_jmember members[SS_JMEMBERS_NOTED];
	const char *why, *value;
	size_t vlen, nmembers;
	ss_rec rec;

	/* the members noted: a key path starts at its member instead of validating the
	 * record again on its way there (twice for a pair of paths) */
	if (!ss_jscan_document_members(line, line + len, members, SS_JMEMBERS_NOTED, &nmembers, &why)) {
		reject(p, line, len, why);
		return;
	}
	bool has_env = ss_envelope_get_members(line, len, members, nmembers, &env);
	ss_store *store = record_store(p, line, len, has_env ? &env : NULL);
	if (store == NULL)
		return;
	if (has_env && ss_store_offset_is_applied(store, &env)) {
		p->replays++;
		return;
	}
	ss_rec_init(&rec, line, len);
	ss_rec_set_members(&rec, members, nmembers);
	if (!record_key(p, line, len, &rec) || !record_value(p, line, len, &rec, &value, &vlen))
		return;
	ss_store_put_enc(store, p->keyenc.data, p->keyenc.len, p->keytext.data, p->keytext.len, value, vlen);
	p->pending_bytes += p->keyenc.len + p->keytext.len + vlen + 48;
	ss_rec_done(&rec);
	if (has_env)
		ss_store_offset_set(store, env.topic, env.partition, env.offset);
	p->stored++;
	if (p->o.tee)
		pass_on(p, line, len);
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

int
ss_cache_put(ss_cache *c, struct ss_cache_put_opts *o)
{
	struct put *p = ss_xmalloc(sizeof *p);

	*p = (struct put){.state = c, .o = *o};
	p->key = ss_expr_compile(o->key, "--key");
	p->value = o->value ? ss_expr_compile(o->value, "--value") : NULL;
	state_open(c, 0);
	p->open = true;
	if (c->single)
		writer_setup(p, c->single);
	p->in = ss_reader_open("-");
	if (o->tee)
		p->out = ss_writer_new(1, "<stdout>");
	ss_reader_set_idle(p->in, idle, p);
	on_exit(at_exit, p);
	ss_proc_catch(); /* a signal stops at a record: what came before is committed */

	read_all(p, ss_progress_new(o->progress, o->tee ? 1 : -1));
	finish(p);
	return ss_proc_status(SS_EXIT_OK);
}

/* ---- get, del ---- */

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
get_one(ss_cache *c, jv k, bool json, ss_writer *out)
{
	bool found = false;

	for (size_t i = 0; i < state_count(c); i++) {
		char *v = ss_store_get(state_at(c, i), k);
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

int
ss_cache_get(ss_cache *c, jv keys, char *const *names, bool json)
{
	state_open(c, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	int missing = 0, n = jv_array_length(jv_copy(keys));

	for (int i = 0; i < n; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		if (!get_one(c, k, json, out)) {
			ss_diag_warn("%s: no such key", names[i]);
			missing++;
		}
		jv_free(k);
	}
	jv_free(keys);
	ss_writer_free(out);
	state_close(c);
	return missing ? SS_EXIT_DATA : SS_EXIT_OK;
}

int
ss_cache_del(ss_cache *c, jv keys)
{
	int n = jv_array_length(jv_copy(keys));

	state_open(c, 0);
	if (c->dir)
		ss_statedir_open_all(c->dir);
	for (int i = 0; i < n; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		for (size_t j = 0; j < state_count(c); j++)
			ss_store_del(state_at(c, j), k);
		jv_free(k);
	}
	jv_free(keys);
	state_close(c);
	return SS_EXIT_OK;
}

/* ---- scan ---- */

static void
print_row(ss_writer *out, enum ss_cache_show show, const char *key, const char *value)
{
	switch (show) {
	case SS_CACHE_KEYS:
		ss_writer_puts(out, key);
		break;
	case SS_CACHE_VALUES:
		ss_writer_puts(out, value);
		break;
	case SS_CACHE_BOTH:
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
scan_merged(ss_cache *c, const struct ss_cache_scan_opts *o, ss_writer *out)
{
	size_t n = state_count(c);
	ss_cursor **cur = ss_xmalloc(n * sizeof *cur);
	bool *rows = ss_xmalloc(n * sizeof *rows);
	const char **keys = ss_xmalloc(n * sizeof *keys), **values = ss_xmalloc(n * sizeof *values);

	for (size_t i = 0; i < n; i++) {
		cur[i] = ss_store_scan(state_at(c, i), o->from, o->to, o->prefix, o->backwards);
		rows[i] = ss_cursor_next(cur[i], &keys[i], &values[i]);
	}
	for (long long shown = 0; o->limit < 0 || shown < o->limit; shown++) {
		int i = next_cursor(cur, rows, n, o->backwards);
		if (i < 0)
			break;
		print_row(out, o->show, keys[i], values[i]);
		rows[i] = ss_cursor_next(cur[i], &keys[i], &values[i]);
	}
	for (size_t i = 0; i < n; i++)
		ss_cursor_free(cur[i]);
	free(cur);
	free(rows);
	free(keys);
	free(values);
}

int
ss_cache_scan(ss_cache *c, struct ss_cache_scan_opts *o)
{
	state_open(c, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	scan_merged(c, o, out);
	ss_writer_free(out);
	state_close(c);
	jv_free(o->from);
	jv_free(o->to);
	jv_free(o->prefix);
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

int
ss_cache_stats(ss_cache *c)
{
	state_open(c, SS_STORE_READONLY);
	ss_writer *out = ss_writer_new(1, "<stdout>");
	char wal[4096], num[128];
	struct offsets_out o = {out, 0};
	long long keys = 0, bytes = 0;

	for (size_t i = 0; i < state_count(c); i++) {
		const char *path = ss_store_path(state_at(c, i));
		snprintf(wal, sizeof wal, "%s-wal", path);
		keys += ss_store_count(state_at(c, i));
		bytes += file_size(path) + file_size(wal);
	}
	ss_writer_puts(out, "{\"path\":");
	ss_writer_json_string(out, c->db, strlen(c->db));
	snprintf(num, sizeof num, ",\"keys\":%lld,\"bytes\":%lld,\"offsets\":[", keys, bytes);
	ss_writer_puts(out, num);
	for (size_t i = 0; i < state_count(c); i++)
		ss_store_offsets_each(state_at(c, i), print_offset, &o);
	ss_writer_puts(out, "]}\n");
	ss_writer_free(out);
	state_close(c);
	return SS_EXIT_OK;
}
