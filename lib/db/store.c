#include "db/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/diag.h"
#include "stream/envelope.h"
#include "base/keyenc.h"
#include "db/offsets.h"
#include "base/sstime.h"
#include "db/statefile.h"

enum stmt { ST_PUT, ST_GET, ST_DEL, ST_COUNT, ST_PUT_ROWS, ST__N };

/* Rows of one statement when a batch's held-back puts are applied (ST_PUT_ROWS): each
 * run of a statement opens its table's and indexes' cursors, halts and resets, about a
 * third of what a put of one row costs; VALUES of PUT_ROWS rows pay it once for them,
 * and SQLite applies the rows in order, a later row of a key replacing an earlier one,
 * as separate statements do. */
#define PUT_ROWS 128

static const char *const stmt_sql[ST__N] = {
	[ST_PUT] = "INSERT OR REPLACE INTO ss_kv(k, key, value, t) VALUES (?1, ?2, ?3, ?4)",
	[ST_GET] = "SELECT value FROM ss_kv WHERE k = ?1",
	[ST_DEL] = "DELETE FROM ss_kv WHERE k = ?1",
	[ST_COUNT] = "SELECT count(*) FROM ss_kv",
};

/* The layout of new files (format 2): a rowid table in arrival order and a unique index
 * on the key's encoding. Rows of a few hundred bytes then append to the table, and only
 * the small index entries land all over the key space: a batch dirties far fewer pages
 * than in format 1's WITHOUT ROWID table keyed by k, which files made by earlier versions
 * keep (every statement here works on both). */
static const char schema_kv[] =
	"CREATE TABLE ss_kv(k BLOB NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, t INTEGER);"
	"CREATE UNIQUE INDEX ss_kv_k ON ss_kv(k);";

/* The page size of a new cache file (an existing file keeps its own: the pragma only
 * takes before the first write, and SQLite reads any size). A put writes every page
 * twice (WAL, then checkpoint) through one system call each, and rewrites each page of
 * the key index it touches once a batch: at 64 KiB the calls are a sixteenth of 4 KiB's
 * and the index is two levels deep. 1M wide records: 6.7 s at 4 KiB, 6.0 s at 32 KiB,
 * 4.7 s at 64 KiB. The cost: an empty file takes about 400 KB (6 pages). */
#define CACHE_PAGE_SIZE "65536"

static const char schema_t[] = "CREATE INDEX IF NOT EXISTS ss_kv_t ON ss_kv(t) WHERE t IS NOT NULL";

/* A put held back until the batch commits (ss_store_defer_puts): its enc, key text and
 * value lie in the arena at off, one after another. */
struct deferred {
	uint64_t head, head2; /* enc's bytes 0-7 and 8-15, big-endian, zero past its end:
				 most comparisons end here, without reading the arena (a key
				 of a string and a number, as [.station, .ts], is 8 bytes and
				 more before the number) */
	size_t off;
	uint32_t enclen, klen, vlen, seq;
	bool has_t;
	int64_t t;
};

struct ss_store {
	sqlite3 *db;
	char *path;
	bool readonly, in_txn, track_time;
	int unit;
	int pending; /* writes in the open transaction */
	sqlite3_stmt *st[ST__N];
	ss_buf kbuf;
	struct ss_offsets offsets;
	struct applied *applied; /* memory of ss_offsets for the partitions seen */
	size_t napplied;
	bool defer;              /* hold puts back to apply them in key order at commit */
	ss_buf arena;
	struct deferred *deferred;
	size_t ndeferred, capdeferred;
};

struct applied {
	char topic[256];
	int32_t partition;
	int64_t offset;
	bool dirty; /* newer than ss_offsets: written at commit, inside the transaction */
};

static void
exec_sql(ss_store *s, const char *sql)
{
	ss_statefile_exec(s->db, s->path, sql, sql);
}

/* ST_PUT of PUT_ROWS rows: parameters 4i+1 .. 4i+4 for row i. */
static void
put_rows_sql(ss_buf *sql)
{
	ss_buf_adds(sql, "INSERT OR REPLACE INTO ss_kv(k, key, value, t) VALUES ");
	for (int i = 0; i < PUT_ROWS; i++)
		ss_buf_adds(sql, i ? ",(?,?,?,?)" : "(?,?,?,?)");
}

static sqlite3_stmt *
stmt(ss_store *s, enum stmt which)
{
	if (s->st[which] == NULL && which == ST_PUT_ROWS) {
		ss_buf sql = {0};
		put_rows_sql(&sql);
		s->st[which] = ss_statefile_prepare(s->db, s->path, ss_buf_cstr(&sql), "prepare");
		ss_buf_free(&sql);
	} else if (s->st[which] == NULL)
		s->st[which] = ss_statefile_prepare(s->db, s->path, stmt_sql[which], "prepare");
	sqlite3_reset(s->st[which]);
	return s->st[which];
}

static bool
has_object(ss_store *s, const char *type, const char *name)
{
	sqlite3_stmt *st = ss_statefile_prepare(s->db, s->path, "SELECT 1 FROM sqlite_master"
						" WHERE type = ?1 AND name = ?2", "read schema");
	int rc;

	sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	rc = ss_statefile_step(st, s->path, "read schema");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW;
}

/* Create what is missing, new files in format 2; true when ss_kv has that layout. The
 * write lock only when ss_kv is missing (and looked for again under it: another writer
 * may have just made it). A new file is marked with its kind in the same transaction:
 * marked after it, a kill in between left ss_kv alone and unmarked, which reads as an
 * ss-cache state, and an ss-asof state then refused to open (CI's crash suite). */
static bool
create_schema(ss_store *s, enum ss_state_kind kind)
{
	if (!has_object(s, "table", "ss_kv")) {
		exec_sql(s, "BEGIN IMMEDIATE");
		if (!has_object(s, "table", "ss_kv")) {
			exec_sql(s, schema_kv);
			ss_statefile_mark(s->db, s->path, kind);
		}
		exec_sql(s, "COMMIT");
	}
	exec_sql(s, schema_t);
	ss_offsets_create(s->db, s->path);
	return has_object(s, "index", "ss_kv_k");
}

ss_store *
ss_store_open(const char *path, int flags, enum ss_state_kind kind)
{
	ss_store *s = calloc(1, sizeof *s);

	if (s == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	s->path = ss_xstrdup(path);
	s->readonly = flags & SS_STORE_READONLY;
	s->db = ss_statefile_open(path, s->readonly);
	ss_offsets_init(&s->offsets, s->db, s->path);
	ss_statefile_check(s->db, path, kind);
	if (!s->readonly) {
		/* and a join's spill: it writes each key's evicted records after those it
		 * wrote before, a page a key per eviction; 1M + 1M wide records through
		 * pipes: 4.98 s at 4 KiB, 3.89 s at 64 KiB (medians of 3) */
		if (kind == SS_STATE_CACHE || *path == '\0')
			exec_sql(s, "PRAGMA page_size=" CACHE_PAGE_SIZE);
		/* a temporary store (a join's spill) is private and gone at close, and nothing
		 * rolls it back (an error ends the run): a journal would only double its writes */
		if (*path == '\0')
			exec_sql(s, "PRAGMA journal_mode=OFF");
		else
			ss_statefile_wal(s->db, s->path);
		exec_sql(s, "PRAGMA cache_size=-16384");
		bool rowid = create_schema(s, kind);
		if (kind == SS_STATE_CACHE)
			ss_statefile_mark_version(s->db, path, kind, rowid ? 2 : 1);
		else
			ss_statefile_mark(s->db, path, kind);
	}
	return s;
}

void
ss_store_close(ss_store *s)
{
	if (s == NULL)
		return;
	ss_store_commit(s);
	for (int i = 0; i < ST__N; i++)
		sqlite3_finalize(s->st[i]);
	ss_offsets_free(&s->offsets);
	int rc = sqlite3_close(s->db);
	if (rc != SQLITE_OK)
		ss_diag_warn("%s: close: %s", s->path, sqlite3_errstr(rc));
	ss_buf_free(&s->kbuf);
	ss_buf_free(&s->arena);
	free(s->deferred);
	free(s->applied);
	free(s->path);
	free(s);
}

sqlite3 *
ss_store_db(ss_store *s)
{
	return s->db;
}

const char *
ss_store_path(const ss_store *s)
{
	return s->path;
}

static void write_dirty_offsets(ss_store *s);
static void apply_deferred(ss_store *s);

static void
begin(ss_store *s)
{
	if (!s->in_txn) {
		exec_sql(s, "BEGIN IMMEDIATE");
		s->in_txn = true;
		s->pending = 0;
	}
}

void
ss_store_begin(ss_store *s)
{
	begin(s);
	s->pending++;
}

void
ss_store_commit(ss_store *s)
{
	if (!s->in_txn)
		return;
	/* After a SQLite failure on the connection (ours, or a module's writing its own
	 * tables) SQLite may have rolled the batch back (SQLITE_FULL, IOERR ...): the exit
	 * handlers must not commit what is left of it, above all not its offsets alone, in
	 * autocommit, which would mark the lost records applied. Closing without commit
	 * rolls back. */
	if (ss_statefile_failed(s->db)) {
		s->in_txn = false;
		s->ndeferred = 0;
		return;
	}
	apply_deferred(s);
	write_dirty_offsets(s);
	exec_sql(s, "COMMIT");
	s->in_txn = false;
	s->pending = 0;
}

/* The event time of a key for retention, or false. */
static bool
key_time(ss_store *s, jv key, int64_t *ns)
{
	const char *why;

	if (jv_get_kind(key) == JV_KIND_ARRAY) {
		int n = jv_array_length(jv_copy(key));
		if (n == 0)
			return false;
		jv last = jv_array_get(jv_copy(key), n - 1);
		bool ok = ss_time_from_jv(last, (enum ss_tsunit)s->unit, ns, &why);
		jv_free(last);
		return ok;
	}
	return ss_time_from_jv(key, (enum ss_tsunit)s->unit, ns, &why);
}

/* Bind a put's row to the parameters from `at` on: k, key, value, t. */
static void
bind_put(sqlite3_stmt *st, int at, const char *enc, size_t enclen, const char *key_json,
	 size_t klen, const char *value, size_t vlen, const int64_t *t)
{
	sqlite3_bind_blob(st, at, enc, (int)enclen, SQLITE_STATIC);
	sqlite3_bind_text(st, at + 1, key_json, (int)klen, SQLITE_STATIC);
	sqlite3_bind_text(st, at + 2, value, (int)vlen, SQLITE_STATIC);
	if (t)
		sqlite3_bind_int64(st, at + 3, *t);
	else
		sqlite3_bind_null(st, at + 3);
}

static void
put(ss_store *s, const char *enc, size_t enclen, const char *key_json, size_t klen,
    const char *value, size_t vlen, const int64_t *t)
{
	begin(s);
	sqlite3_stmt *st = stmt(s, ST_PUT);
	bind_put(st, 1, enc, enclen, key_json, klen, value, vlen, t);
	ss_statefile_done(st, s->path, "put");
	s->pending++;
}

/* ---- deferred puts ---- */

bool
ss_store_defer_puts(ss_store *s)
{
	bool was = s->defer;

	s->defer = true;
	return !was;
}

static uint64_t
enc_head(const char *enc, size_t len, size_t from)
{
	uint64_t h = 0;

	for (size_t i = from; i < from + 8; i++)
		h = h << 8 | (i < len ? (unsigned char)enc[i] : 0);
	return h;
}

static void
defer_put(ss_store *s, const char *enc, size_t enclen, const char *key_json, size_t klen,
	  const char *value, size_t vlen, const int64_t *t)
{
	begin(s); /* the write lock now, as an immediate put would take it */
	if (s->ndeferred == s->capdeferred) {
		s->capdeferred = s->capdeferred ? 2 * s->capdeferred : 1024;
		s->deferred = ss_xrealloc(s->deferred, s->capdeferred * sizeof *s->deferred);
	}
	struct deferred *d = &s->deferred[s->ndeferred];
	*d = (struct deferred){enc_head(enc, enclen, 0), enc_head(enc, enclen, 8), s->arena.len,
			       (uint32_t)enclen, (uint32_t)klen, (uint32_t)vlen, (uint32_t)s->ndeferred,
			       t != NULL, t ? *t : 0};
	s->ndeferred++;
	ss_buf_add(&s->arena, enc, enclen);
	ss_buf_add(&s->arena, key_json, klen);
	ss_buf_add(&s->arena, value, vlen);
	s->pending++;
}

static const char *cmp_arena; /* for qsort, which takes no argument */

/* Key order, and arrival order among equal keys: the last put of a key wins, as applied
 * one by one. */
static int
cmp_deferred(const void *a, const void *b)
{
	const struct deferred *x = a, *y = b;

	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	if (x->head2 != y->head2)
		return x->head2 < y->head2 ? -1 : 1;
	size_t n = x->enclen < y->enclen ? x->enclen : y->enclen;
	int c = n > 16 ? memcmp(cmp_arena + x->off + 16, cmp_arena + y->off + 16, n - 16) : 0;
	if (c == 0)
		c = (x->enclen > y->enclen) - (x->enclen < y->enclen);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Read the bytes of the PUT_ROWS puts from d on before the statement copies them, one
 * after another, into its records. In key order they lie all over the arena, a cache
 * miss or more each; read here, independent of each other, the misses overlap. (Loads,
 * not prefetches: this machine drops prefetches that miss, asof_hist.c says.) */
static void
touch_rows(const ss_store *s, const struct deferred *d)
{
	for (int i = 0; i < PUT_ROWS; i++, d++) {
		const char *p = s->arena.data + d->off;
		size_t n = (size_t)d->enclen + d->klen + d->vlen;
		for (size_t at = 0; at < n; at += 64)
			(void)*(volatile const char *)(p + at);
		if (n > 0) /* the line of its last byte */
			(void)*(volatile const char *)(p + n - 1);
	}
}

/* The PUT_ROWS held-back puts from d on, in one statement. */
static void
put_rows(ss_store *s, const struct deferred *d)
{
	sqlite3_stmt *st = stmt(s, ST_PUT_ROWS);

	touch_rows(s, d);
	for (int i = 0; i < PUT_ROWS; i++, d++) {
		const char *enc = s->arena.data + d->off;
		bind_put(st, 4 * i + 1, enc, d->enclen, enc + d->enclen, d->klen, enc + d->enclen + d->klen,
			 d->vlen, d->has_t ? &d->t : NULL);
	}
	ss_statefile_done(st, s->path, "put");
}

/* Apply the held-back puts in key order: one sweep through the index per batch. */
static void
apply_deferred(ss_store *s)
{
	if (s->ndeferred == 0)
		return;
	cmp_arena = s->arena.data;
	qsort(s->deferred, s->ndeferred, sizeof *s->deferred, cmp_deferred);
	int pending = s->pending;
	size_t i = 0;
	for (; s->ndeferred - i >= PUT_ROWS; i += PUT_ROWS)
		put_rows(s, &s->deferred[i]);
	for (; i < s->ndeferred; i++) {
		const struct deferred *d = &s->deferred[i];
		const char *enc = s->arena.data + d->off;
		put(s, enc, d->enclen, enc + d->enclen, d->klen, enc + d->enclen + d->klen, d->vlen,
		    d->has_t ? &d->t : NULL);
	}
	s->pending = pending;
	s->ndeferred = 0;
	ss_buf_reset(&s->arena);
	if (s->arena.cap > (4 << 20)) {
		/* large batches' memory goes back: one of many partitions' stores keeps none */
		ss_buf_free(&s->arena);
		free(s->deferred);
		s->deferred = NULL;
		s->capdeferred = 0;
	}
}

static void
store_put(ss_store *s, const char *enc, size_t enclen, const char *key_json, size_t klen,
	  const char *value, size_t vlen, const int64_t *t)
{
	if (s->defer && enclen <= UINT32_MAX && klen <= UINT32_MAX && vlen <= UINT32_MAX)
		defer_put(s, enc, enclen, key_json, klen, value, vlen, t);
	else {
		apply_deferred(s);
		put(s, enc, enclen, key_json, klen, value, vlen, t);
	}
}

void
ss_store_put_enc(ss_store *s, const char *enc, size_t enclen, const char *key_json, size_t klen,
		 const char *value, size_t vlen)
{
	int64_t t;

	if (s->track_time) {
		jv key = jv_parse_sized(key_json, (int)klen);
		bool has = key_time(s, key, &t);
		jv_free(key);
		store_put(s, enc, enclen, key_json, klen, value, vlen, has ? &t : NULL);
	} else
		store_put(s, enc, enclen, key_json, klen, value, vlen, NULL);
}

static sqlite3_stmt *
bind_key(ss_store *s, enum stmt which, jv key)
{
	apply_deferred(s);
	sqlite3_stmt *st = stmt(s, which);

	ss_buf_reset(&s->kbuf);
	ss_keyenc_jv(&s->kbuf, key);
	sqlite3_bind_blob(st, 1, s->kbuf.data, (int)s->kbuf.len, SQLITE_STATIC);
	return st;
}

char *
ss_store_get(ss_store *s, jv key)
{
	sqlite3_stmt *st = bind_key(s, ST_GET, key);
	char *out = NULL;

	if (ss_statefile_step(st, s->path, "get") == SQLITE_ROW)
		out = ss_xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return out;
}

bool
ss_store_del(ss_store *s, jv key)
{
	begin(s);
	sqlite3_stmt *st = bind_key(s, ST_DEL, key);
	ss_statefile_done(st, s->path, "del");
	s->pending++;
	return sqlite3_changes(s->db) > 0;
}

int64_t
ss_store_count(ss_store *s)
{
	apply_deferred(s);
	sqlite3_stmt *st = stmt(s, ST_COUNT);
	int64_t n = 0;

	if (ss_statefile_step(st, s->path, "query") == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return n;
}

/* ---- scans ---- */

struct ss_cursor {
	ss_store *store;
	sqlite3_stmt *st;
	ss_buf lo, hi;
};

/* The smallest byte string greater than every string that starts with p: p "+ 1". */
static bool
prefix_successor(ss_buf *b)
{
	while (b->len > 0) {
		unsigned char c = (unsigned char)b->data[b->len - 1];
		if (c < 0xFF) {
			b->data[b->len - 1] = (char)(c + 1);
			return true;
		}
		b->len--;
	}
	return false;
}

ss_cursor *
ss_store_scan(ss_store *s, jv from, jv to, jv prefix, bool backwards)
{
	ss_cursor *c = calloc(1, sizeof *c);
	ss_buf sql = {0}, pfx = {0}, pfx_end = {0}, from_enc = {0}, to_enc = {0};
	bool has_pfx_end = false;

	if (c == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	apply_deferred(s);
	c->store = s;
	ss_buf_adds(&sql, "SELECT key, value, k FROM ss_kv WHERE 1");
	if (jv_is_valid(from)) {
		ss_keyenc_jv(&from_enc, from);
		ss_buf_adds(&sql, backwards ? " AND k <= ?1" : " AND k >= ?1");
	}
	if (jv_is_valid(to)) {
		ss_keyenc_jv(&to_enc, to);
		ss_buf_adds(&sql, backwards ? " AND k >= ?2" : " AND k <= ?2");
	}
	if (jv_is_valid(prefix)) {
		ss_keyenc_prefix(&pfx, prefix);
		ss_buf_add(&pfx_end, pfx.data, pfx.len);
		has_pfx_end = prefix_successor(&pfx_end);
		ss_buf_adds(&sql, has_pfx_end ? " AND k >= ?3 AND k < ?4" : " AND k >= ?3");
	}
	ss_buf_adds(&sql, backwards ? " ORDER BY k DESC" : " ORDER BY k");
	c->st = ss_statefile_prepare(s->db, s->path, ss_buf_cstr(&sql), "scan");
	sqlite3_bind_blob(c->st, 1, from_enc.data, (int)from_enc.len, SQLITE_TRANSIENT);
	sqlite3_bind_blob(c->st, 2, to_enc.data, (int)to_enc.len, SQLITE_TRANSIENT);
	sqlite3_bind_blob(c->st, 3, pfx.data, (int)pfx.len, SQLITE_TRANSIENT);
	if (has_pfx_end)
		sqlite3_bind_blob(c->st, 4, pfx_end.data, (int)pfx_end.len, SQLITE_TRANSIENT);
	ss_buf_free(&sql);
	ss_buf_free(&pfx);
	ss_buf_free(&pfx_end);
	ss_buf_free(&from_enc);
	ss_buf_free(&to_enc);
	return c;
}

int
ss_cursor_next(ss_cursor *c, const char **key, const char **value)
{
	if (ss_statefile_step(c->st, c->store->path, "scan") == SQLITE_DONE)
		return 0;
	*key = (const char *)sqlite3_column_text(c->st, 0);
	*value = (const char *)sqlite3_column_text(c->st, 1);
	return 1;
}

const void *
ss_cursor_enc(ss_cursor *c, size_t *len)
{
	*len = (size_t)sqlite3_column_bytes(c->st, 2);
	return sqlite3_column_blob(c->st, 2);
}

void
ss_cursor_free(ss_cursor *c)
{
	if (c == NULL)
		return;
	sqlite3_finalize(c->st);
	free(c);
}

/* ---- retention ---- */

static int64_t
exec_changes(ss_store *s, const char *sql, int64_t arg)
{
	sqlite3_stmt *st = ss_statefile_prepare(s->db, s->path, sql, "retain");

	begin(s);
	apply_deferred(s);
	sqlite3_bind_int64(st, 1, arg);
	ss_statefile_done(st, s->path, "retain");
	sqlite3_finalize(st);
	return sqlite3_changes(s->db);
}

int64_t
ss_store_retain_count(ss_store *s, int64_t n)
{
	if (n <= 0)
		return exec_changes(s, "DELETE FROM ss_kv WHERE ?1 = ?1", 0);
	return exec_changes(s, "DELETE FROM ss_kv WHERE k < "
			       "(SELECT k FROM ss_kv ORDER BY k DESC LIMIT 1 OFFSET ?1 - 1)", n);
}

void
ss_store_track_time(ss_store *s, int unit)
{
	s->track_time = true;
	s->unit = unit;
}

int64_t
ss_store_retain_age(ss_store *s, int64_t age_ns)
{
	return exec_changes(s, "DELETE FROM ss_kv WHERE t IS NOT NULL AND t < "
			       "(SELECT max(t) FROM ss_kv WHERE t IS NOT NULL) - ?1", age_ns);
}

/* ---- applied offsets ---- */

static struct applied *applied_find(ss_store *s, const char *topic, int32_t partition);

int64_t
ss_store_offset_get(ss_store *s, const char *topic, int32_t partition)
{
	struct applied *a = applied_find(s, topic, partition);

	return a ? a->offset : ss_offsets_get(&s->offsets, topic, partition);
}

static struct applied *
applied_find(ss_store *s, const char *topic, int32_t partition)
{
	for (size_t i = 0; i < s->napplied; i++)
		if (s->applied[i].partition == partition && strcmp(s->applied[i].topic, topic) == 0)
			return &s->applied[i];
	return NULL;
}

static struct applied *
applied_add(ss_store *s, const char *topic, int32_t partition, int64_t offset)
{
	s->applied = ss_xrealloc(s->applied, (s->napplied + 1) * sizeof *s->applied);
	struct applied *a = &s->applied[s->napplied++];
	snprintf(a->topic, sizeof a->topic, "%s", topic);
	a->partition = partition;
	a->offset = offset;
	a->dirty = false;
	return a;
}

bool
ss_store_offset_is_applied(ss_store *s, const struct ss_envelope *env)
{
	struct applied *a = applied_find(s, env->topic, env->partition);

	if (a == NULL)
		a = applied_add(s, env->topic, env->partition, ss_store_offset_get(s, env->topic, env->partition));
	return env->offset <= a->offset;
}

void
ss_store_offset_set(ss_store *s, const char *topic, int32_t partition, int64_t offset)
{
	struct applied *a = applied_find(s, topic, partition);

	if (a == NULL)
		a = applied_add(s, topic, partition, offset);
	a->offset = offset;
	a->dirty = true;
	begin(s);
}

static void
write_dirty_offsets(ss_store *s)
{
	for (size_t i = 0; i < s->napplied; i++) {
		struct applied *a = &s->applied[i];
		if (!a->dirty)
			continue;
		ss_offsets_put(&s->offsets, a->topic, a->partition, a->offset);
		a->dirty = false;
	}
}

void
ss_store_offsets_each(ss_store *s, void (*cb)(const char *, int32_t, int64_t, void *), void *arg)
{
	ss_offsets_each(s->db, s->path, cb, arg);
}
