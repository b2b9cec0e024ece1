/* The --state file: the join's memory mirrored into SQLite (lib/db/store.c's file, with
 * tables of our own), written in the same batched transaction as the applied envelope
 * offsets, so a restart after kill -9 neither applies a right record twice nor loses a
 * held left record. Loaded back into memory at start (the retained history is small):
 * the engine pulls the rows (asof_state_rows_open, asof_state_row_next) and applies each
 * itself; spilled and closed records go back as plain rows (struct asof_row). This file
 * calls up to no engine file, and writes no field of the join. */
#include <stdlib.h>
#include <string.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "db/statefile.h"
#include "db/store.h"

enum stmt {
	RIGHT_PUT, RIGHT_BEFORE, RIGHT_AFTER, RIGHT_DEL, HELD_PUT, HELD_DEL, META_PUT, REV_GET, REV_PUT, UNSPILL_P, UNSPILL_SINCE, UNSPILL_ID,
	SPILL_MIN, PART_PUT, LPART_PUT, PRUNED_PUT, OUTBOX_PUT, OUTBOX_TRIM, CLOSED_PUT, CLOSED_RANGE,
	CLOSED_PRUNE, RUN_PUT, RUN_AT, RUN_NEXT, RUN_DEL, STMT_N
};

static const char *const stmt_sql[STMT_N] = {
	/* of two records with the same key and time the one that ranks higher stays */
	[RIGHT_PUT] = "INSERT INTO asof_right(key, t, seq, rec) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(key, t)"
		      " DO UPDATE SET seq = excluded.seq, rec = excluded.rec WHERE excluded.seq >= asof_right.seq",
	[RIGHT_BEFORE] = "SELECT t, seq, rec FROM asof_right WHERE key = ?1 AND t <= ?2 ORDER BY t DESC LIMIT 1",
	[RIGHT_AFTER] = "SELECT t, seq, rec FROM asof_right WHERE key = ?1 AND t >= ?2 ORDER BY t LIMIT 1",
	[RIGHT_DEL] = "DELETE FROM asof_right WHERE key = ?1 AND t = ?2",
	[HELD_PUT] = "INSERT OR REPLACE INTO asof_held(id, key, t, p, match, revision, line, rec, spilled, since)"
		     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[HELD_DEL] = "DELETE FROM asof_held WHERE id = ?1",
	[META_PUT] = "INSERT OR REPLACE INTO asof_meta(name, value) VALUES (?1, ?2)",
	[REV_GET] = "SELECT revision FROM asof_revision WHERE topic = ?1 AND partition = ?2 AND offset = ?3",
	[REV_PUT] = "INSERT OR REPLACE INTO asof_revision(topic, partition, offset, revision)"
		    " VALUES (?1, ?2, ?3, ?4)",
	[UNSPILL_P] = "SELECT id, key, t, p, match, revision, line, rec FROM asof_held"
		      " WHERE spilled = 1 AND p <= ?1 ORDER BY p, id LIMIT ?2",
	[UNSPILL_SINCE] = "SELECT id, key, t, p, match, revision, line, rec FROM asof_held"
			  " WHERE spilled = 1 AND since <= ?1 ORDER BY since LIMIT ?2",
	/* --order left: one partition's, back in arrival order, with the clock they arrived by */
	[UNSPILL_ID] = "SELECT id, key, t, p, match, revision, line, rec, since FROM asof_held"
		       " WHERE spilled = 1 AND match = ?3 AND id >= ?1 ORDER BY id LIMIT ?2",
	[SPILL_MIN] = "SELECT min(t) FROM asof_held WHERE spilled = 1",
	[PART_PUT] = "INSERT OR REPLACE INTO asof_partition(topic, partition, maxt) VALUES (?1, ?2, ?3)",
	[PRUNED_PUT] = "INSERT OR IGNORE INTO asof_pruned(key) VALUES (?1)",
	[LPART_PUT] = "INSERT OR REPLACE INTO asof_left_partition(topic, partition, maxt) VALUES (?1, ?2, ?3)",
	[OUTBOX_PUT] = "INSERT INTO asof_outbox(line) VALUES (?1)",
	[OUTBOX_TRIM] = "DELETE FROM asof_outbox WHERE id <= ?1",
	[CLOSED_PUT] = "INSERT OR REPLACE INTO asof_closed(key, t, rec, match, revision, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[CLOSED_RANGE] = "SELECT t, rec, match, revision, line FROM asof_closed WHERE key = ?1 AND t BETWEEN ?2 AND ?3",
	[CLOSED_PRUNE] = "DELETE FROM asof_closed WHERE key = ?1 AND t < ?2",
	[RUN_PUT] = "INSERT INTO asof_right_run(key, t, last, recs) VALUES (?1, ?2, ?3, ?4)",
	[RUN_AT] = "SELECT rowid, last, recs FROM asof_right_run WHERE key = ?1 AND t <= ?2 ORDER BY t DESC LIMIT 1",
	[RUN_NEXT] = "SELECT recs FROM asof_right_run WHERE key = ?1 AND t > ?2 ORDER BY t LIMIT 1",
	[RUN_DEL] = "DELETE FROM asof_right_run WHERE rowid = ?1",
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS asof_right(key BLOB NOT NULL, t INTEGER NOT NULL,"
	" seq INTEGER NOT NULL, rec TEXT NOT NULL, PRIMARY KEY(key, t)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_held(id INTEGER PRIMARY KEY, key BLOB NOT NULL,"
	" t INTEGER NOT NULL, p INTEGER NOT NULL, match INTEGER NOT NULL, revision INTEGER NOT NULL,"
	" line INTEGER NOT NULL, rec TEXT NOT NULL, spilled INTEGER NOT NULL DEFAULT 0,"
	" since INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS asof_held_spilled ON asof_held(spilled, p, id);"
	"CREATE INDEX IF NOT EXISTS asof_held_since ON asof_held(spilled, since);"
	"CREATE INDEX IF NOT EXISTS asof_held_t ON asof_held(spilled, t);"
	"CREATE INDEX IF NOT EXISTS asof_held_queue ON asof_held(match, id) WHERE spilled = 1;"
	"CREATE TABLE IF NOT EXISTS asof_meta(name TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_revision(topic TEXT NOT NULL, partition INTEGER NOT NULL,"
	" offset INTEGER NOT NULL, revision INTEGER NOT NULL,"
	" PRIMARY KEY(topic, partition, offset)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_partition(topic TEXT NOT NULL, partition INTEGER NOT NULL,"
	" maxt INTEGER NOT NULL, PRIMARY KEY(topic, partition)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_pruned(key BLOB PRIMARY KEY) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_left_partition(topic TEXT NOT NULL, partition INTEGER NOT NULL,"
	" maxt INTEGER NOT NULL, PRIMARY KEY(topic, partition)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS asof_outbox(id INTEGER PRIMARY KEY, line TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS asof_closed(key BLOB NOT NULL, t INTEGER NOT NULL, rec TEXT NOT NULL,"
	" match INTEGER NOT NULL, revision INTEGER NOT NULL, line INTEGER NOT NULL,"
	" PRIMARY KEY(key, t, rec)) WITHOUT ROWID;";

/* A temporary store (a join's spill, never reopened) keeps the right history it is
 * given in runs instead of asof_right: a run is a row of one key's records, t first to
 * last (unique t, each in the RUN_HEAD layout of run_add), at most RUN_BYTES of them
 * unless it holds one record only. A key's runs never overlap in time, so the run at or
 * before t holds the answer at or before t, and the one after it the next. An eviction
 * appends a key's records newer than any it stored before (asof_match.c evict): one row
 * for dozens of records, appended in rowid order, against a B-tree insert of each record
 * into the middle of asof_right (its seek, its page split). Through pipes, medians of
 * two: 1M + 1M wide records with --select 3.43 -> 1.95 s, the seed's shape 1.39 -> 0.84 s. */
static const char schema_runs[] =
	"CREATE TABLE asof_right_run(key BLOB NOT NULL, t INTEGER NOT NULL, last INTEGER NOT NULL,"
	" recs BLOB NOT NULL);"
	"CREATE UNIQUE INDEX asof_right_run_k ON asof_right_run(key, t);";

enum { RUN_HEAD = 20, RUN_BYTES = 16 << 10 };

struct asof_state {
	ss_store *store;
	sqlite3 *db;
	const char *path; /* the store's */
	sqlite3_stmt *st[STMT_N];
	bool runs;  /* the right history in runs (a temporary store) */
	ss_buf run; /* a run being written or rewritten */
};

static sqlite3_stmt *
stmt(struct asof_state *s, enum stmt which)
{
	if (s->st[which] == NULL)
		s->st[which] = ss_statefile_prepare(s->db, s->path, stmt_sql[which], "prepare");
	sqlite3_reset(s->st[which]);
	sqlite3_clear_bindings(s->st[which]);
	return s->st[which];
}

/* Run a write statement inside the open batch. */
static void
write_step(struct asof_state *s, sqlite3_stmt *st)
{
	ss_store_begin(s->store);
	ss_statefile_done(st, s->path, "write");
}

struct asof_state *
asof_state_open(const char *path)
{
	struct asof_state *s = calloc(1, sizeof *s);

	if (s == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	s->store = ss_store_open(path, 0, SS_STATE_ASOF);
	s->db = ss_store_db(s->store);
	s->path = ss_store_path(s->store);
	ss_statefile_exec(s->db, s->path, schema, "schema");
	s->runs = *path == '\0';
	if (s->runs)
		ss_statefile_exec(s->db, s->path, schema_runs, "schema");
	return s;
}

void
asof_state_close(struct asof_state *s)
{
	for (int i = 0; i < STMT_N; i++)
		sqlite3_finalize(s->st[i]);
	ss_store_close(s->store);
	ss_buf_free(&s->run);
	free(s);
}

void
asof_state_commit(struct asof_state *s)
{
	ss_store_commit(s->store);
}

bool
asof_state_seen(struct asof_state *s, const struct ss_envelope *env)
{
	return ss_store_offset_is_applied(s->store, env);
}

void
asof_state_applied(struct asof_state *s, const struct ss_envelope *env)
{
	ss_store_offset_set(s->store, env->topic, env->partition, env->offset);
}

/* ---- the right history in runs (a temporary store) ---- */

/* A record in a run: t, seq (8 bytes each), its length (4), its bytes. */
static void
run_add(ss_buf *b, const struct asof_right *r)
{
	char head[RUN_HEAD];

	memcpy(head, &r->t, 8);
	memcpy(head + 8, &r->seq, 8);
	memcpy(head + 16, &r->len, 4);
	ss_buf_add(b, head, RUN_HEAD);
	ss_buf_add(b, r->raw, r->len);
}

/* The record at *p of a run ending at end into r (its raw pointing into the run), *p past
 * it; false at the end. */
static bool
run_next(const char **p, const char *end, struct asof_right *r)
{
	if (end - *p < RUN_HEAD)
		return false;
	*r = (struct asof_right){0};
	memcpy(&r->t, *p, 8);
	memcpy(&r->seq, *p + 8, 8);
	memcpy(&r->len, *p + 16, 4);
	r->raw = (char *)*p + RUN_HEAD;
	*p += RUN_HEAD + r->len;
	return true;
}

/* Records r[0..n) of k, sorted by t, as runs after (or between) those k has. Each one's
 * bytes are asked for two records ahead of their copy: records going to disk are the
 * history's oldest, long out of the cache (run_add's copy was a third of an eviction's
 * samples, perf, live join of the wide shape). */
static void
runs_put(struct asof_state *s, const struct asof_key *k, const struct asof_right *r, size_t n)
{
	for (size_t i = 0; i < n && i < 2; i++)
		asof_right_prefetch(&r[i]);
	for (size_t i = 0; i < n;) {
		size_t from = i;
		ss_buf_reset(&s->run);
		do {
			if (i + 2 < n)
				asof_right_prefetch(&r[i + 2]);
			run_add(&s->run, &r[i++]);
		} while (i < n && s->run.len + RUN_HEAD + r[i].len <= RUN_BYTES);
		sqlite3_stmt *st = stmt(s, RUN_PUT);
		sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, r[from].t);
		sqlite3_bind_int64(st, 3, r[i - 1].t);
		sqlite3_bind_blob(st, 4, s->run.data, (int)s->run.len, SQLITE_STATIC);
		write_step(s, st);
	}
}

/* One record into k's runs (late: older than what the history keeps in memory): into
 * the run at or before its time, rewritten (and split if it grew past RUN_BYTES), or a
 * run of its own when none holds its time. Of two with the same time the one that ranks
 * higher stays, as in asof_right. */
static void
run_put_one(struct asof_state *s, const struct asof_key *k, const struct asof_right *r)
{
	sqlite3_stmt *st = stmt(s, RUN_AT);
	ss_buf old = {0};
	int64_t rowid = 0;

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->t);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) >= r->t) {
		rowid = sqlite3_column_int64(st, 0);
		ss_buf_add(&old, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
	}
	sqlite3_reset(st);
	size_t n = 0, cap = 8;
	struct asof_right *v = ss_xmalloc(cap * sizeof *v), x;
	bool placed = false;
	for (const char *p = old.data; old.len > 0 && run_next(&p, old.data + old.len, &x);) {
		if (n + 2 > cap)
			v = ss_xrealloc(v, (cap *= 2) * sizeof *v);
		if (!placed && x.t >= r->t) {
			placed = true;
			v[n++] = x.t == r->t && x.seq > r->seq ? x : *r;
			if (x.t == r->t)
				continue;
		}
		v[n++] = x;
	}
	if (!placed)
		v[n++] = *r;
	if (rowid != 0) {
		st = stmt(s, RUN_DEL);
		sqlite3_bind_int64(st, 1, rowid);
		write_step(s, st);
	}
	runs_put(s, k, v, n);
	free(v);
	ss_buf_free(&old);
}

/* k's record latest at or before t, or earliest at or after t, from its runs. */
static bool
run_near(struct asof_state *s, const struct asof_key *k, int64_t t, bool before, struct asof_right *out)
{
	sqlite3_stmt *st = stmt(s, RUN_AT);
	struct asof_right x, best = {0};
	bool found = false;

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, t);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *p = sqlite3_column_blob(st, 2), *end = p + sqlite3_column_bytes(st, 2);
		while (!(found && !before) && run_next(&p, end, &x) && !(before && x.t > t))
			if (before || x.t >= t) {
				best = x;
				found = true;
			}
	}
	if (!found && !before) {
		sqlite3_reset(st);
		st = stmt(s, RUN_NEXT);
		sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, t);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *p = sqlite3_column_blob(st, 0);
			found = run_next(&p, p + sqlite3_column_bytes(st, 0), &best);
		}
	}
	if (found) {
		free(out->raw);
		*out = best;
		out->raw = ss_xmalloc(best.len + 1);
		memcpy(out->raw, best.raw, best.len);
	}
	sqlite3_reset(st);
	return found;
}

/* ---- the right history, one row a record (a state file) ---- */

void
asof_state_right_put(struct asof_state *s, const struct asof_key *k, const struct asof_right *r)
{
	if (s->runs) {
		run_put_one(s, k, r);
		return;
	}
	sqlite3_stmt *st = stmt(s, RIGHT_PUT);

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->t);
	sqlite3_bind_int64(st, 3, (int64_t)r->seq);
	sqlite3_bind_text(st, 4, r->raw, (int)r->len, SQLITE_STATIC);
	write_step(s, st);
}

void
asof_state_right_evicted(struct asof_state *s, const struct asof_key *k, const struct asof_right *r, size_t n)
{
	if (s->runs) {
		runs_put(s, k, r, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		asof_state_right_put(s, k, &r[i]);
}

bool
asof_state_right_near(struct asof_state *s, const struct asof_key *k, int64_t t, bool before,
		      struct asof_right *out)
{
	if (s->runs)
		return run_near(s, k, t, before, out);
	sqlite3_stmt *st = stmt(s, before ? RIGHT_BEFORE : RIGHT_AFTER);
	bool found = false;

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, t);
	if (sqlite3_step(st) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(st, 2);
		free(out->raw);
		*out = (struct asof_right){.t = sqlite3_column_int64(st, 0), .seq = (uint64_t)sqlite3_column_int64(st, 1),
					   .len = (uint32_t)len, .raw = ss_xmalloc(len + 1)};
		memcpy(out->raw, sqlite3_column_text(st, 2), len);
		found = true;
	}
	sqlite3_reset(st);
	return found;
}

void
asof_state_right_del(struct asof_state *s, const struct asof_key *k, const struct asof_right *r)
{
	sqlite3_stmt *st = stmt(s, RIGHT_DEL);

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->t);
	write_step(s, st);
}

void
asof_state_pruned(struct asof_state *s, const struct asof_key *k)
{
	sqlite3_stmt *st = stmt(s, PRUNED_PUT);

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	write_step(s, st);
}

void
asof_state_held_put(struct asof_state *s, const struct asof_held *h, bool spilled)
{
	sqlite3_stmt *st = stmt(s, HELD_PUT);

	sqlite3_bind_int64(st, 1, (int64_t)h->id);
	sqlite3_bind_blob(st, 2, h->key->enc, (int)h->key->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, h->t);
	sqlite3_bind_int64(st, 4, h->p);
	sqlite3_bind_int64(st, 5, (int64_t)h->match);
	sqlite3_bind_int64(st, 6, h->revision);
	sqlite3_bind_int64(st, 7, (int64_t)h->line);
	sqlite3_bind_text(st, 8, h->raw, (int)h->len, SQLITE_STATIC);
	sqlite3_bind_int(st, 9, spilled);
	sqlite3_bind_int64(st, 10, h->since);
	write_step(s, st);
}

void
asof_state_held_del(struct asof_state *s, const struct asof_held *h)
{
	sqlite3_stmt *st = stmt(s, HELD_DEL);

	sqlite3_bind_int64(st, 1, (int64_t)h->id);
	write_step(s, st);
}

void
asof_state_meta(struct asof_state *s, const char *name, int64_t v)
{
	sqlite3_stmt *st = stmt(s, META_PUT);

	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, v);
	write_step(s, st);
}

void
asof_state_part(struct asof_state *s, bool left, const char *topic, int32_t partition, int64_t maxt)
{
	sqlite3_stmt *st = stmt(s, left ? LPART_PUT : PART_PUT);

	sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, partition);
	sqlite3_bind_int64(st, 3, maxt);
	write_step(s, st);
}

void
asof_state_closed_put(struct asof_state *s, const struct asof_held *h)
{
	sqlite3_stmt *st = stmt(s, CLOSED_PUT);

	sqlite3_bind_blob(st, 1, h->key->enc, (int)h->key->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->t);
	sqlite3_bind_text(st, 3, h->raw, (int)h->len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)h->match);
	sqlite3_bind_int64(st, 5, h->revision);
	sqlite3_bind_int64(st, 6, (int64_t)h->line);
	write_step(s, st);
}

void
asof_state_closed_prune(struct asof_state *s, const struct asof_key *k, int64_t cutoff)
{
	sqlite3_stmt *st = stmt(s, CLOSED_PRUNE);

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, cutoff);
	write_step(s, st);
}

/* A row's key and record into its bytes. */
static void
row_bytes(struct asof_row *r, const void *key, size_t keylen, const void *rec, size_t len)
{
	r->keylen = keylen;
	r->len = len;
	r->bytes = ss_xmalloc(keylen + len + 1);
	if (keylen > 0)
		memcpy(r->bytes, key, keylen);
	if (len > 0)
		memcpy(r->bytes + keylen, rec, len);
}

size_t
asof_state_closed_get(struct asof_state *s, const struct asof_key *k, int64_t lo, int64_t hi,
		      struct asof_row **rows)
{
	sqlite3_stmt *st = stmt(s, CLOSED_RANGE);
	struct asof_row *v = NULL;
	size_t n = 0;

	sqlite3_bind_blob(st, 1, k->enc, (int)k->enclen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = ss_xrealloc(v, (n + 1) * sizeof *v);
		v[n] = (struct asof_row){
			.t = sqlite3_column_int64(st, 0),
			.match = (uint64_t)sqlite3_column_int64(st, 2),
			.revision = (uint32_t)sqlite3_column_int64(st, 3),
			.line = (uint64_t)sqlite3_column_int64(st, 4),
		};
		row_bytes(&v[n++], k->enc, k->enclen, sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1));
	}
	sqlite3_reset(st);
	*rows = v;
	return n;
}

int64_t
asof_state_revision_get(struct asof_state *s, const struct ss_envelope *env)
{
	sqlite3_stmt *st = stmt(s, REV_GET);
	int64_t rev = -1;

	sqlite3_bind_text(st, 1, env->topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, env->partition);
	sqlite3_bind_int64(st, 3, env->offset);
	if (sqlite3_step(st) == SQLITE_ROW)
		rev = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rev;
}

void
asof_state_revision_set(struct asof_state *s, const struct ss_envelope *env, int64_t rev)
{
	sqlite3_stmt *st = stmt(s, REV_PUT);

	sqlite3_bind_text(st, 1, env->topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, env->partition);
	sqlite3_bind_int64(st, 3, env->offset);
	sqlite3_bind_int64(st, 4, rev);
	write_step(s, st);
}

/* ---- the outbox (--acks) ---- */

int64_t
asof_state_outbox_put(struct asof_state *s, const char *line, size_t len)
{
	sqlite3_stmt *st = stmt(s, OUTBOX_PUT);

	sqlite3_bind_text(st, 1, line, (int)len, SQLITE_STATIC);
	write_step(s, st);
	return sqlite3_last_insert_rowid(s->db);
}

void
asof_state_outbox_trim(struct asof_state *s, int64_t row)
{
	sqlite3_stmt *st = stmt(s, OUTBOX_TRIM);

	sqlite3_bind_int64(st, 1, row);
	write_step(s, st);
}

/* A look from outside (no handle, no schema made): has the file outbox rows? */
bool
asof_state_keeps_results(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	bool kept = false;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT 1 FROM asof_outbox LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		kept = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return kept;
}

/* ---- loading ---- */

static sqlite3_stmt *
query(struct asof_state *s, const char *sql)
{
	return ss_statefile_prepare(s->db, s->path, sql, "load");
}

/* The load's stages, in the order their rows come: asof_state_row_next reads each to
 * its end before the next. */
enum load_stage { LOAD_META, LOAD_RPART, LOAD_LPART, LOAD_HISTORY, LOAD_PRUNED, LOAD_HELD, LOAD_DONE };

struct asof_state_rows {
	struct asof_state *s;
	enum load_stage stage;
	sqlite3_stmt *st; /* the stage's query, NULL until its first row is read */
};

struct asof_state_rows *
asof_state_rows_open(struct asof_state *s)
{
	struct asof_state_rows *it = ss_xmalloc(sizeof *it);

	*it = (struct asof_state_rows){.s = s, .stage = LOAD_META};
	return it;
}

/* The query of a stage. Held records wait on disk (spilled) until there is room in
 * memory for them: marked so before they are counted. */
static sqlite3_stmt *
stage_query(struct asof_state *s, enum load_stage stage)
{
	sqlite3_stmt *st;

	switch (stage) {
	case LOAD_META:
		return query(s, "SELECT name, value FROM asof_meta");
	case LOAD_RPART:
		return query(s, "SELECT topic, partition, maxt FROM asof_partition");
	case LOAD_LPART:
		return query(s, "SELECT topic, partition, maxt FROM asof_left_partition");
	case LOAD_HISTORY:
		return query(s, "SELECT key, t, seq, rec FROM asof_right ORDER BY key, t");
	case LOAD_PRUNED:
		/* a left record older than a pruned history is expired, not unmatched */
		return query(s, "SELECT key FROM asof_pruned");
	case LOAD_HELD:
		st = query(s, "UPDATE asof_held SET spilled = 1, since = ?1");
		/* --max-delay counts from this start: the old clock means nothing now */
		sqlite3_bind_int64(st, 1, ss_time_mono());
		ss_store_begin(s->store);
		ss_statefile_done(st, s->path, "load");
		sqlite3_finalize(st);
		return query(s, "SELECT count(*), min(t) FROM asof_held");
	case LOAD_DONE:
		break;
	}
	return NULL;
}

/* The row st is on, of the stage, into *row. */
static void
stage_row(sqlite3_stmt *st, enum load_stage stage, struct asof_state_row *row)
{
	const void *key;
	size_t len;

	switch (stage) {
	case LOAD_META:
		*row = (struct asof_state_row){.kind = ASOF_ROW_META};
		row->meta.name = (const char *)sqlite3_column_text(st, 0);
		row->meta.value = sqlite3_column_int64(st, 1);
		break;
	case LOAD_RPART:
	case LOAD_LPART:
		*row = (struct asof_state_row){.kind = ASOF_ROW_PART};
		row->part.left = stage == LOAD_LPART;
		row->part.topic = (const char *)sqlite3_column_text(st, 0);
		row->part.partition = sqlite3_column_int(st, 1);
		row->part.maxt = sqlite3_column_int64(st, 2);
		break;
	case LOAD_HISTORY:
		*row = (struct asof_state_row){.kind = ASOF_ROW_HISTORY};
		key = sqlite3_column_blob(st, 0);
		row->history.key = key ? key : "";
		row->history.keylen = (size_t)sqlite3_column_bytes(st, 0);
		row->history.t = sqlite3_column_int64(st, 1);
		row->history.seq = (uint64_t)sqlite3_column_int64(st, 2);
		len = (size_t)sqlite3_column_bytes(st, 3);
		row->history.raw = ss_xmalloc(len + 1);
		memcpy(row->history.raw, sqlite3_column_text(st, 3), len);
		row->history.len = len;
		break;
	case LOAD_PRUNED:
		*row = (struct asof_state_row){.kind = ASOF_ROW_PRUNED};
		key = sqlite3_column_blob(st, 0);
		row->pruned.key = key ? key : "";
		row->pruned.keylen = (size_t)sqlite3_column_bytes(st, 0);
		break;
	case LOAD_HELD:
		*row = (struct asof_state_row){.kind = ASOF_ROW_HELD};
		row->held.spilled = (uint64_t)sqlite3_column_int64(st, 0);
		row->held.min_t = sqlite3_column_int64(st, 1);
		break;
	case LOAD_DONE:
		break;
	}
}

bool
asof_state_row_next(struct asof_state_rows *it, struct asof_state_row *row)
{
	for (; it->stage < LOAD_DONE; it->stage++) {
		if (it->st == NULL)
			it->st = stage_query(it->s, it->stage);
		if (sqlite3_step(it->st) == SQLITE_ROW) {
			stage_row(it->st, it->stage, row);
			return true;
		}
		sqlite3_finalize(it->st);
		it->st = NULL;
	}
	return false;
}

void
asof_state_rows_close(struct asof_state_rows *it)
{
	if (it == NULL)
		return;
	sqlite3_finalize(it->st);
	free(it);
}

/* Take up to limit spilled records by the query which: UNSPILL_P, p <= max_p, in
 * release order; UNSPILL_SINCE, arrived at or before max_p; UNSPILL_ID, of queue match
 * with id >= max_p, in arrival order. Their rows are deleted before they are handed
 * back: whoever gets them may spill them again. */
static size_t
unspill(struct asof_state *s, enum stmt which, int64_t max_p, int64_t match, size_t limit, struct asof_row **rows)
{
	bool by_id = which == UNSPILL_ID;
	sqlite3_stmt *st = stmt(s, which);
	struct asof_row *v = ss_xmalloc(limit * sizeof *v);
	size_t n = 0;

	sqlite3_bind_int64(st, 1, max_p);
	sqlite3_bind_int64(st, 2, (int64_t)limit);
	if (by_id)
		sqlite3_bind_int64(st, 3, match);
	while (n < limit && sqlite3_step(st) == SQLITE_ROW) {
		const void *key = sqlite3_column_blob(st, 1);
		v[n] = (struct asof_row){
			.id = (uint64_t)sqlite3_column_int64(st, 0),
			.t = sqlite3_column_int64(st, 2),
			.p = sqlite3_column_int64(st, 3),
			.match = (uint64_t)sqlite3_column_int64(st, 4),
			.revision = (uint32_t)sqlite3_column_int64(st, 5),
			.line = (uint64_t)sqlite3_column_int64(st, 6),
			.since = by_id ? sqlite3_column_int64(st, 8) : ss_time_mono(),
		};
		row_bytes(&v[n++], key ? key : "", (size_t)sqlite3_column_bytes(st, 1), sqlite3_column_text(st, 7),
			  (size_t)sqlite3_column_bytes(st, 7));
	}
	sqlite3_reset(st);
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *del = stmt(s, HELD_DEL);
		sqlite3_bind_int64(del, 1, (int64_t)v[i].id);
		write_step(s, del);
	}
	*rows = v;
	return n;
}

size_t
asof_state_unspill(struct asof_state *s, enum asof_unspill by, int64_t max_p, size_t limit, struct asof_row **rows)
{
	return unspill(s, by == ASOF_UNSPILL_SINCE ? UNSPILL_SINCE : UNSPILL_P, max_p, 0, limit, rows);
}

size_t
asof_state_unspill_queue(struct asof_state *s, int64_t match, int64_t from, size_t limit, struct asof_row **rows)
{
	return unspill(s, UNSPILL_ID, from, match, limit, rows);
}

size_t
asof_state_queues(struct asof_state *s, struct asof_queue_count **counts)
{
	size_t n = 0, cap = 0;

	/* the queue of each, from its envelope as asof_parse reads it (a run without
	 * --order left kept something else in match) */
	sqlite3_stmt *st = query(s, "UPDATE asof_held SET match = CASE WHEN json_valid(rec)"
				 " AND json_type(rec, '$.topic') = 'text' AND json_type(rec, '$.partition') = 'integer'"
				 " AND json_type(rec, '$.offset') = 'integer' THEN json_extract(rec, '$.partition') + 1"
				 " ELSE 0 END");

	ss_statefile_done(st, s->path, "load");
	sqlite3_finalize(st);
	st = query(s, "SELECT match, count(*) FROM asof_held WHERE spilled = 1 GROUP BY match");
	*counts = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			*counts = ss_xrealloc(*counts, cap * sizeof **counts);
		}
		(*counts)[n++] = (struct asof_queue_count){sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1)};
	}
	sqlite3_finalize(st);
	return n;
}

int64_t
asof_state_spill_min(struct asof_state *s)
{
	sqlite3_stmt *st = stmt(s, SPILL_MIN);
	int64_t t = ASOF_NONE;

	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		t = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return t;
}

struct asof_state_kept {
	sqlite3_stmt *st;
};

struct asof_state_kept *
asof_state_kept_open(struct asof_state *s)
{
	struct asof_state_kept *it = ss_xmalloc(sizeof *it);

	it->st = query(s, "SELECT id, line FROM asof_outbox ORDER BY id");
	return it;
}

bool
asof_state_kept_next(struct asof_state_kept *it, const char **line, size_t *len, int64_t *row)
{
	if (sqlite3_step(it->st) != SQLITE_ROW)
		return false;
	*line = (const char *)sqlite3_column_text(it->st, 1);
	*len = (size_t)sqlite3_column_bytes(it->st, 1);
	*row = sqlite3_column_int64(it->st, 0);
	return true;
}

void
asof_state_kept_close(struct asof_state_kept *it)
{
	sqlite3_finalize(it->st);
	free(it);
}
