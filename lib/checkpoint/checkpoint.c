/* checkpoint: see checkpoint.h for the tables and the ownership rules. */
#include <errno.h>
#include <fcntl.h>
#include <jv.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_parts.h"
#include "base/diag.h"
#include "db/offsets.h"
#include "db/seeks.h"
#include "db/statefile.h"
#include "base/sstime.h"

/* ---- the state file ---- */

/* Episodes are kept for a day after they end, the span of status's timeline (ns; no
 * suffix, so that it reads the same in SQL). */
#define HISTORY_NS 86400000000000
#define STR_(x) #x
#define STR(x) STR_(x)

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS ss_checkpoint("
    " name TEXT PRIMARY KEY, marker INTEGER, down_marker INTEGER,"
    " episode_start INTEGER, episode_end INTEGER);"
    "CREATE TABLE IF NOT EXISTS ss_checkpoint_dependency("
    " checkpoint TEXT NOT NULL, name TEXT NOT NULL, marker INTEGER, since INTEGER,"
    " threshold INTEGER, down INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(checkpoint, name));"
    "CREATE TABLE IF NOT EXISTS ss_checkpoint_offset("
    " checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,"
    " offset INTEGER NOT NULL, saved INTEGER, PRIMARY KEY(checkpoint, topic, partition));"
    /* events committed with the state change they announce, deleted once delivered:
     * a crash in between delivers them again instead of never */
    "CREATE TABLE IF NOT EXISTS ss_checkpoint_event("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, checkpoint TEXT NOT NULL, kind TEXT NOT NULL,"
    " dependency TEXT, json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS ss_checkpoint_dependency_partition("
    " checkpoint TEXT NOT NULL, name TEXT NOT NULL, topic TEXT NOT NULL,"
    " partition INTEGER NOT NULL, marker INTEGER NOT NULL, seen INTEGER NOT NULL,"
    " idle INTEGER NOT NULL, PRIMARY KEY(checkpoint, name, topic, partition));"
    /* the episodes of each dependency, for status's timeline: ended NULL while open */
    "CREATE TABLE IF NOT EXISTS ss_checkpoint_episode("
    " checkpoint TEXT NOT NULL, dependency TEXT NOT NULL, began INTEGER NOT NULL,"
    " ended INTEGER);";

/* Columns added after the first version: a state file written by an earlier one gains
 * them when a heartbeat or pulse opens it (status reads any). The state of a partition
 * (checkpoint_parts.h) and the partitions a heartbeat waits for came with the writers
 * that tell their partitions (lib/stream/feed.h); NULL in them reads as before. */
static const struct { const char *table, *column, *type; } added_columns[] = {
	{ "ss_checkpoint_offset", "marker", "INTEGER" },
	{ "ss_checkpoint_offset", "seen", "INTEGER" },
	{ "ss_checkpoint_offset", "idle", "INTEGER" },
	{ "ss_checkpoint_offset", "state", "INTEGER" },
	{ "ss_checkpoint_dependency_partition", "state", "INTEGER" },
	{ "ss_checkpoint_dependency", "waiting", "INTEGER" },
};

/* The statefile helpers with the path they name: NULL, the file's full name as SQLite
 * has it (the handles keep no path). */
static void
db_exec(sqlite3 *db, const char *sql, const char *what)
{
	ss_statefile_exec(db, NULL, sql, what);
}

static sqlite3_stmt *
db_prep(sqlite3 *db, const char *sql)
{
	return ss_statefile_prepare(db, NULL, sql, "prepare");
}

static void
db_done(sqlite3_stmt *st)
{
	ss_statefile_done(st, NULL, "write");
}

/* IMMEDIATE: take the write lock up front. A read transaction that later wants to
 * write fails at once (SQLITE_BUSY_SNAPSHOT, no busy wait) when the other process
 * committed in between, and heartbeat and pulse commit all the time. */
static void
db_begin(sqlite3 *db)
{
	db_exec(db, "BEGIN IMMEDIATE", "begin");
}

static void
db_commit(sqlite3 *db)
{
	db_exec(db, "COMMIT", "commit");
}

static bool
has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st = db_prep(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
	bool yes;

	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* Inside the transaction that creates the tables: two processes opening an old file
 * at once take turns, and the second finds the columns there. */
static void
db_migrate(sqlite3 *db)
{
	char sql[256];
	size_t i;

	for (i = 0; i < sizeof added_columns / sizeof *added_columns; i++) {
		if (has_column(db, added_columns[i].table, added_columns[i].column))
			continue;
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s",
		    added_columns[i].table, added_columns[i].column, added_columns[i].type);
		db_exec(db, sql, "add column");
	}
}

static sqlite3 *
db_open(const char *path, bool readonly)
{
	sqlite3 *db = ss_statefile_open(path, readonly);

	ss_statefile_check(db, path, SS_STATE_CHECKPOINT);
	if (readonly)
		return db;
	ss_statefile_wal(db, NULL);
	db_begin(db);
	db_exec(db, schema_sql, "create tables");
	ss_seeks_create(db, NULL);
	ss_offsets_create(db, NULL);
	db_migrate(db);
	ss_statefile_mark(db, path, SS_STATE_CHECKPOINT);
	db_commit(db);
	return db;
}

static void
text_bind(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Wall-clock time for episode start and end, to the millisecond: enough for people. */
static int64_t
wall_now(void)
{
	return ss_time_now() / 1000000 * 1000000;
}

/* ---- JSON pieces for events and status ---- */

static jv
time_jv(int64_t ns)
{
	char buf[64];

	ss_time_format(ns, buf, sizeof buf);
	return jv_string(buf);
}

static jv
column_time_jv(sqlite3_stmt *st, int col)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return jv_null();
	return time_jv(sqlite3_column_int64(st, col));
}

static jv
seconds_jv(int64_t ns)
{
	return jv_number((double)ns / 1e9);
}

static jv
set(jv o, const char *k, jv v)
{
	return jv_object_set(o, jv_string(k), v);
}

/* Append {"topic":..,"partition":..,"offset":..} to the array *arg. */
static void
offset_append(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	jv *a = arg;
	jv o = set(jv_object(), "topic", jv_string(topic));

	o = set(o, "partition", jv_number(partition));
	*a = jv_array_append(*a, set(o, "offset", jv_number(offset)));
}

/* [{"topic":..,"partition":..,"offset":..}] from a statement yielding those columns. */
static jv
offsets_jv(sqlite3 *db, const char *sql, const char *checkpoint)
{
	sqlite3_stmt *st = db_prep(db, sql);
	jv a = jv_array();

	text_bind(st, 1, checkpoint);
	while (ss_statefile_step(st, NULL, "read offsets") == SQLITE_ROW)
		offset_append((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
		    sqlite3_column_int64(st, 2), &a);
	sqlite3_finalize(st);
	return a;
}

static const char sql_offsets_now[] = "SELECT topic, partition, offset FROM"
    " ss_checkpoint_offset WHERE checkpoint = ?1 ORDER BY topic, partition";
static const char sql_offsets_saved[] = "SELECT topic, partition, saved FROM"
    " ss_checkpoint_offset WHERE checkpoint = ?1 AND saved IS NOT NULL ORDER BY topic, partition";

/* ---- partitions, kept in memory between commits (checkpoint_parts.h) ---- */

static void
bind_named(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i)
		sqlite3_bind_int64(st, i, v);
}

/* Binds whichever of :topic :partition :offset :marker :seen :state the statement has;
 * seen as wall-clock time, for other processes and for people; marker and state NULL
 * for none and for a partition heard from without a writer that tells. */
static void
part_bind(sqlite3_stmt *st, const struct ckpart *p, int state, int64_t mono, int64_t wall)
{
	int i = sqlite3_bind_parameter_index(st, ":state");

	sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":topic"), p->env.topic, -1,
	    SQLITE_STATIC);
	bind_named(st, ":partition", p->env.partition);
	bind_named(st, ":offset", p->env.offset);
	bind_named(st, ":seen", (wall - (mono - p->wm.seen)) / 1000000 * 1000000);
	if (p->wm.maxt != SS_PARTWM_NONE)
		bind_named(st, ":marker", p->wm.maxt);
	else if (sqlite3_bind_parameter_index(st, ":marker"))
		sqlite3_bind_null(st, sqlite3_bind_parameter_index(st, ":marker"));
	if (i && state == SS_PARTWM_HEARD)
		sqlite3_bind_null(st, i);
	else if (i)
		sqlite3_bind_int(st, i, state);
}

/* The dirty partitions: ss_offsets for those with a record since the last write, and
 * their rows (rows): heartbeat's need a marker, pulse's an offset. */
static void
parts_write(struct ckparts *s, struct ss_offsets *offsets, sqlite3_stmt *rows, bool need_marker)
{
	int64_t mono, wall;
	size_t i;

	if (!s->dirty)
		return;
	mono = ckparts_now();
	wall = ss_time_now();
	for (i = 0; i < s->n; i++) {
		struct ckpart *p = &s->v[i];
		int state = ckpart_state(s, p);

		if (!p->dirty)
			continue;
		if (p->moved)
			ss_offsets_put(offsets, p->env.topic, p->env.partition, p->env.offset);
		if (need_marker ? p->wm.maxt != SS_PARTWM_NONE : p->env.offset >= 0) {
			part_bind(rows, p, state, mono, wall);
			db_done(rows);
		}
		p->written = state; /* a partition with no row yet gets one with its first record */
		p->dirty = p->moved = false;
	}
	s->dirty = false;
}

/* A state column as read back: NULL is a partition heard from (no writer that told). */
static int
column_state(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? SS_PARTWM_HEARD :
	    sqlite3_column_int(st, col);
}

/* ---- heartbeat ---- */

struct ss_checkpoint_hb {
	sqlite3 *db;
	sqlite3_stmt *beat, *parts, *waiting;
	struct ss_offsets offsets;
	char *checkpoint, *dependency;
	int64_t marker;
	bool have, dirty;
	bool synced;         /* told at least once what the input's writer says */
	int waiting_written; /* -1 before the first write */
	struct ckparts ps;
};

static void
named_text(sqlite3_stmt *st, const char *name, const char *s)
{
	text_bind(st, sqlite3_bind_parameter_index(st, name), s);
}

/* The partitions it knows count as heard from now, as after any restart: one a
 * heartbeat reads again must not have turned idle while the heartbeat was away. */
static void
hb_touch(ss_checkpoint_hb *h)
{
	sqlite3_stmt *st = db_prep(h->db, "UPDATE ss_checkpoint_dependency_partition"
	    " SET seen = ?3 WHERE checkpoint = ?1 AND name = ?2");

	text_bind(st, 1, h->checkpoint);
	text_bind(st, 2, h->dependency);
	sqlite3_bind_int64(st, 3, wall_now());
	db_done(st);
	sqlite3_finalize(st);
}

/* The partitions of earlier runs, with their markers: one that this run's writer lists
 * holds the heartbeat at its marker until it delivers more, one it does not list is
 * done (see checkpoint_parts.h). */
static void
hb_load(ss_checkpoint_hb *h)
{
	sqlite3_stmt *st = db_prep(h->db, "SELECT topic, partition, marker, state FROM"
	    " ss_checkpoint_dependency_partition WHERE checkpoint = ?1 AND name = ?2");
	int rc;

	text_bind(st, 1, h->checkpoint);
	text_bind(st, 2, h->dependency);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ckpart *p = ckparts_get(&h->ps, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int(st, 1));

		p->wm.maxt = sqlite3_column_int64(st, 2);
		p->written = column_state(st, 3);
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(h->db, NULL, rc, "read partitions");
	sqlite3_finalize(st);
}

static void
hb_prepare(ss_checkpoint_hb *h, int64_t idle)
{
	/* max of both, ignoring a NULL: a heartbeat never goes back in time */
	h->beat = db_prep(h->db, "INSERT INTO ss_checkpoint_dependency(checkpoint, name, marker)"
	    " VALUES(?1, ?2, ?3) ON CONFLICT(checkpoint, name) DO UPDATE SET marker ="
	    " max(coalesce(marker, excluded.marker), coalesce(excluded.marker, marker))");
	h->waiting = db_prep(h->db, "UPDATE ss_checkpoint_dependency SET waiting = ?3"
	    " WHERE checkpoint = ?1 AND name = ?2");
	ss_offsets_init(&h->offsets, h->db, NULL);
	/* a partition's marker never goes back either */
	h->parts = db_prep(h->db, "INSERT INTO ss_checkpoint_dependency_partition(checkpoint,"
	    " name, topic, partition, marker, seen, idle, state) VALUES(:checkpoint, :name,"
	    " :topic, :partition, :marker, :seen, :idle, :state) ON CONFLICT(checkpoint, name,"
	    " topic, partition) DO UPDATE SET marker = max(marker, excluded.marker),"
	    " seen = excluded.seen, idle = excluded.idle, state = excluded.state");
	text_bind(h->beat, 1, h->checkpoint);
	text_bind(h->beat, 2, h->dependency);
	text_bind(h->waiting, 1, h->checkpoint);
	text_bind(h->waiting, 2, h->dependency);
	named_text(h->parts, ":checkpoint", h->checkpoint);
	named_text(h->parts, ":name", h->dependency);
	bind_named(h->parts, ":idle", idle);
}

ss_checkpoint_hb *
ss_checkpoint_hb_open(const char *db_path, const char *checkpoint, const char *dependency,
    const struct ss_checkpoint_parts *parts)
{
	ss_checkpoint_hb *h = ss_xmalloc(sizeof *h);

	memset(h, 0, sizeof *h);
	h->db = db_open(db_path, false);
	h->checkpoint = ss_xstrdup(checkpoint);
	h->dependency = ss_xstrdup(dependency);
	h->waiting_written = -1;
	ckparts_init(&h->ps, parts->idle, parts->expect);
	hb_prepare(h, parts->idle);
	/* the row exists from the start, so status lists the dependency at once */
	db_begin(h->db);
	db_done(h->beat);
	hb_touch(h);
	hb_load(h);
	db_commit(h->db);
	return h;
}

void
ss_checkpoint_hb_parts(ss_checkpoint_hb *h, const struct ss_feed_part *parts, size_t n)
{
	ckparts_feed(&h->ps, parts, n);
	h->synced = true;
}

void
ss_checkpoint_hb_beat(ss_checkpoint_hb *h, int64_t ts, const struct ss_envelope *env)
{
	if (!h->have || ts > h->marker) {
		h->marker = ts;
		h->have = h->dirty = true;
	}
	if (env)
		ckparts_note(&h->ps, env, ts, ckparts_now());
}

/* How many partitions the heartbeat waits for (the pulse makes no decision on it
 * meanwhile); it changes with time too, so every commit looks. Nothing is said of the
 * rows until the writer was heard from: a restart alone changes nothing. */
static bool
hb_restate(ss_checkpoint_hb *h, int *waiting)
{
	if (!h->synced) {
		*waiting = h->waiting_written;
		return h->ps.dirty;
	}
	*waiting = ckparts_waiting(&h->ps, ckparts_now());
	return ckparts_restate(&h->ps) || *waiting != h->waiting_written;
}

void
ss_checkpoint_hb_commit(ss_checkpoint_hb *h)
{
	int waiting;
	bool parts = hb_restate(h, &waiting);

	if (!h->dirty && !parts)
		return;
	db_begin(h->db);
	if (h->dirty) {
		sqlite3_bind_int64(h->beat, 3, h->marker);
		db_done(h->beat);
	}
	if (waiting != h->waiting_written) {
		sqlite3_bind_int(h->waiting, 3, waiting);
		db_done(h->waiting);
	}
	parts_write(&h->ps, &h->offsets, h->parts, true);
	db_commit(h->db);
	h->dirty = false;
	h->waiting_written = waiting;
}

void
ss_checkpoint_hb_close(ss_checkpoint_hb *h)
{
	ss_checkpoint_hb_commit(h);
	sqlite3_finalize(h->beat);
	sqlite3_finalize(h->waiting);
	ss_offsets_free(&h->offsets);
	sqlite3_finalize(h->parts);
	sqlite3_close(h->db);
	ckparts_free(&h->ps);
	free(h->checkpoint);
	free(h->dependency);
	free(h);
}

/* ---- pulse ---- */

struct pdep {
	char *name;
	int64_t threshold;
	int64_t marker; /* its heartbeat, when heard */
	int64_t since;  /* the dependent marker when first counted, when counted */
	bool heard, counted, since_dirty, down;
	bool waiting;   /* its heartbeat waits for partitions: no decision on it */
};

struct ss_checkpoint_pulse {
	sqlite3 *db;
	char *checkpoint;
	struct pdep *deps;
	int ndeps;
	int64_t marker;   /* the dependent marker (checkpoint_parts.h), when have_marker */
	int64_t top;      /* the max event time of all records, when have_top */
	int64_t first;    /* the lowest event time read in this run, when have_first */
	int64_t down_marker, episode_start;
	bool have_marker, have_top, have_first, marker_dirty, paused, starting;
	bool synced;      /* told at least once what the input's writer says */
	struct ckparts ps;
	ss_checkpoint_event_fn *on_event;
	void *arg;
	sqlite3_stmt *st_marker, *st_since, *st_ckoff, *st_heartbeats;
	struct ss_offsets offsets;
};

/* A dependency that never sent a heartbeat counts from the first dependent record
 * (Slipstream does the same), so a silent dependency goes down after its threshold. */
static int64_t
dep_heartbeat(const struct pdep *d)
{
	return d->heard ? d->marker : d->since;
}

static bool
dep_late(const ss_checkpoint_pulse *p, const struct pdep *d)
{
	return p->have_marker && !d->waiting && (d->heard || d->counted) &&
	    p->marker - dep_heartbeat(d) > d->threshold;
}

static bool
any_late(const ss_checkpoint_pulse *p)
{
	int i;

	for (i = 0; i < p->ndeps; i++)
		if (dep_late(p, &p->deps[i]))
			return true;
	return false;
}

static struct pdep *
dep_find(ss_checkpoint_pulse *p, const char *name)
{
	int i;

	for (i = 0; i < p->ndeps; i++)
		if (strcmp(p->deps[i].name, name) == 0)
			return &p->deps[i];
	return NULL;
}

/* A dependency's heartbeat, of the partition rows its heartbeat wrote (see
 * checkpoint_parts.h): the lowest marker of those that hold it (column 4), else its
 * largest event time (column 1); unknown while it waits for partitions (column 6).
 * Status shares it, also on the files of earlier versions: without the state and
 * waiting columns (a partition holds while heard from within --idle), or without
 * partitions at all. */
static const char sql_dep_heartbeat[] = "SELECT d.name, d.marker, d.since, d.down,"
    " (SELECT min(p.marker) FROM ss_checkpoint_dependency_partition p"
    " WHERE p.checkpoint = d.checkpoint AND p.name = d.name AND (p.state = 0 OR"
    " (coalesce(p.state, 1) IN (1, 3) AND p.seen + p.idle > ?2))),"
    " d.threshold, coalesce(d.waiting, 0) FROM ss_checkpoint_dependency d"
    " WHERE d.checkpoint = ?1 ORDER BY d.name";
static const char sql_dep_heartbeat_v2[] = "SELECT d.name, d.marker, d.since, d.down,"
    " (SELECT min(p.marker) FROM ss_checkpoint_dependency_partition p"
    " WHERE p.checkpoint = d.checkpoint AND p.name = d.name AND p.seen + p.idle > ?2),"
    " d.threshold, 0 FROM ss_checkpoint_dependency d WHERE d.checkpoint = ?1 ORDER BY d.name";
static const char sql_dep_heartbeat_v1[] = "SELECT d.name, d.marker, d.since, d.down,"
    " NULL, d.threshold, 0 FROM ss_checkpoint_dependency d WHERE d.checkpoint = ?1"
    " ORDER BY d.name";

static int
dep_heartbeat_column(sqlite3_stmt *st)
{
	return sqlite3_column_type(st, 4) != SQLITE_NULL ? 4 :
	    sqlite3_column_type(st, 1) != SQLITE_NULL ? 1 : -1;
}

/* Read the heartbeats the other process wrote. With load, also what pulse itself
 * keeps there (since, down), once at open. */
static void
deps_read(ss_checkpoint_pulse *p, bool load)
{
	sqlite3_stmt *st = p->st_heartbeats;
	int rc, col;

	sqlite3_bind_int64(st, 2, ss_time_now());
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pdep *d = dep_find(p, (const char *)sqlite3_column_text(st, 0));

		if (!d)
			continue;
		if ((col = dep_heartbeat_column(st)) != -1) {
			d->marker = sqlite3_column_int64(st, col);
			d->heard = true;
		}
		d->waiting = sqlite3_column_int(st, 6) > 0;
		if (load && sqlite3_column_type(st, 2) != SQLITE_NULL) {
			d->since = sqlite3_column_int64(st, 2);
			d->counted = true;
		}
		if (load)
			d->down = sqlite3_column_int(st, 3) != 0;
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(p->db, NULL, rc, "read heartbeats");
	sqlite3_reset(st);
}

static void
event_add(ss_checkpoint_pulse *p, const char *kind, const char *dependency, jv ev)
{
	sqlite3_stmt *st = db_prep(p->db, "INSERT INTO ss_checkpoint_event(checkpoint, kind,"
	    " dependency, json) VALUES(?1, ?2, ?3, ?4)");
	jv text = jv_dump_string(ev, 0);

	text_bind(st, 1, p->checkpoint);
	text_bind(st, 2, kind);
	text_bind(st, 3, dependency);
	text_bind(st, 4, jv_string_value(text));
	db_done(st);
	sqlite3_finalize(st);
	jv_free(text);
}

static char *
column_dup(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s ? ss_xstrdup(s) : NULL;
}

/* Hand the committed events to the caller, oldest first, deleting each after it was
 * delivered. One at a time and outside any transaction: a hook may take its time. */
static void
events_deliver(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = db_prep(p->db, "SELECT seq, kind, dependency, json FROM"
	    " ss_checkpoint_event WHERE checkpoint = ?1 ORDER BY seq LIMIT 1");
	sqlite3_stmt *del = db_prep(p->db, "DELETE FROM ss_checkpoint_event WHERE seq = ?1");
	int rc;

	text_bind(st, 1, p->checkpoint);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(st, 0);
		char *kind = column_dup(st, 1), *dep = column_dup(st, 2), *json = column_dup(st, 3);

		sqlite3_reset(st);
		p->on_event(kind, dep, json, p->arg);
		sqlite3_bind_int64(del, 1, seq);
		db_done(del);
		free(kind);
		free(dep);
		free(json);
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(p->db, NULL, rc, "read events");
	sqlite3_finalize(st);
	sqlite3_finalize(del);
}

static jv
downtime_jv(ss_checkpoint_pulse *p, const struct pdep *d, int64_t now)
{
	jv e = set(jv_object(), "event", jv_string("downtime"));

	e = set(e, "checkpoint", jv_string(p->checkpoint));
	e = set(e, "dependency", jv_string(d->name));
	e = set(e, "dependent_marker", time_jv(p->marker));
	e = set(e, "dependency_marker", d->heard ? time_jv(d->marker) : jv_null());
	e = set(e, "lag", seconds_jv(p->marker - dep_heartbeat(d)));
	e = set(e, "threshold", seconds_jv(d->threshold));
	e = set(e, "offsets", offsets_jv(p->db, sql_offsets_saved, p->checkpoint));
	return set(e, "time", time_jv(now));
}

static jv
recovery_jv(ss_checkpoint_pulse *p, int64_t now)
{
	jv e = set(jv_object(), "event", jv_string("recovery"));
	jv deps = jv_array();
	int i;

	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (d->down)
			deps = jv_array_append(deps, set(set(jv_object(), "dependency",
			    jv_string(d->name)), "dependency_marker", time_jv(d->marker)));
	}
	e = set(e, "checkpoint", jv_string(p->checkpoint));
	e = set(e, "dependencies", deps);
	e = set(e, "dependent_marker", time_jv(p->down_marker));
	e = set(e, "seek", offsets_jv(p->db, sql_offsets_saved, p->checkpoint));
	e = set(e, "downtime", seconds_jv(now - p->episode_start));
	return set(e, "time", time_jv(now));
}

/* Inside the transaction that also stores the record which tripped it. */
static void
episode_begin(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *ck = db_prep(p->db, "UPDATE ss_checkpoint SET down_marker = ?2,"
	    " episode_start = ?3, episode_end = NULL WHERE name = ?1");
	sqlite3_stmt *save = db_prep(p->db, "UPDATE ss_checkpoint_offset SET saved = offset"
	    " WHERE checkpoint = ?1");
	sqlite3_stmt *down = db_prep(p->db, "UPDATE ss_checkpoint_dependency SET down = 1"
	    " WHERE checkpoint = ?1 AND name = ?2");
	sqlite3_stmt *hist = db_prep(p->db, "INSERT INTO ss_checkpoint_episode(checkpoint,"
	    " dependency, began) VALUES(?1, ?2, ?3)");
	int64_t now = wall_now();
	int i;

	p->episode_start = now;
	text_bind(hist, 1, p->checkpoint);
	sqlite3_bind_int64(hist, 3, now);
	text_bind(ck, 1, p->checkpoint);
	sqlite3_bind_int64(ck, 2, p->down_marker);
	sqlite3_bind_int64(ck, 3, now);
	db_done(ck);
	text_bind(save, 1, p->checkpoint);
	db_done(save);
	text_bind(down, 1, p->checkpoint);
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (!d->down)
			continue;
		text_bind(down, 2, d->name);
		db_done(down);
		text_bind(hist, 2, d->name);
		db_done(hist);
		event_add(p, "downtime", d->name, downtime_jv(p, d, now));
	}
	sqlite3_finalize(ck);
	sqlite3_finalize(save);
	sqlite3_finalize(down);
	sqlite3_finalize(hist);
}

/* The offsets remembered at downtime become seek requests (the first offset to
 * re-read: the record that tripped the downtime went out with a stale join). */
static void
seeks_request(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = db_prep(p->db, "SELECT topic, partition, saved FROM"
	    " ss_checkpoint_offset WHERE checkpoint = ?1 AND saved IS NOT NULL");

	text_bind(st, 1, p->checkpoint);
	while (ss_statefile_step(st, NULL, "read offsets") == SQLITE_ROW)
		ss_seeks_put(p->db, NULL, p->checkpoint, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int(st, 1), sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
}

static void
episode_end(ss_checkpoint_pulse *p)
{
	static const char *const sql[] = {
		"UPDATE ss_checkpoint_offset SET saved = NULL WHERE checkpoint = ?1",
		"UPDATE ss_checkpoint_dependency SET down = 0 WHERE checkpoint = ?1",
		"UPDATE ss_checkpoint SET down_marker = NULL, episode_end = ?2 WHERE name = ?1",
		"UPDATE ss_checkpoint_episode SET ended = ?2 WHERE checkpoint = ?1"
		" AND ended IS NULL",
		/* status draws the last day: older episodes go */
		"DELETE FROM ss_checkpoint_episode WHERE checkpoint = ?1 AND ended < ?2 - "
		STR(HISTORY_NS),
	};
	int64_t now = wall_now();
	size_t i;
	int j;

	db_begin(p->db);
	event_add(p, "recovery", NULL, recovery_jv(p, now));
	seeks_request(p);
	for (i = 0; i < sizeof sql / sizeof *sql; i++) {
		sqlite3_stmt *st = db_prep(p->db, sql[i]);

		text_bind(st, 1, p->checkpoint);
		if (sqlite3_bind_parameter_count(st) == 2)
			sqlite3_bind_int64(st, 2, now);
		db_done(st);
		sqlite3_finalize(st);
	}
	db_commit(p->db);
	for (j = 0; j < p->ndeps; j++)
		p->deps[j].down = false;
	p->paused = false;
}

/* The partitions' markers, each counting as heard from now (a restart is no silence
 * of the stream). Rows from a version without markers give none. */
static void
parts_load(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = db_prep(p->db, "SELECT topic, partition, offset, marker, state FROM"
	    " ss_checkpoint_offset WHERE checkpoint = ?1");
	int rc;

	text_bind(st, 1, p->checkpoint);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ckpart *pt = ckparts_get(&p->ps, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int(st, 1));

		pt->env.offset = sqlite3_column_int64(st, 2);
		pt->written = column_state(st, 4);
		if (sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		pt->wm.maxt = sqlite3_column_int64(st, 3);
		if (!p->have_top || pt->wm.maxt > p->top)
			p->top = pt->wm.maxt;
		p->have_top = true;
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(p->db, NULL, rc, "read partitions");
	sqlite3_finalize(st);
	if (p->ps.n > 0)
		p->have_marker = ckparts_low(&p->ps, ckparts_now(), p->have_top ? &p->top : NULL,
		    &p->marker);
}

/* An episode in progress in a file from before the episodes table: it has no row yet
 * (its dependencies are those marked down). */
static void
episode_resume(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = db_prep(p->db, "INSERT INTO ss_checkpoint_episode(checkpoint,"
	    " dependency, began) SELECT ?1, name, ?2 FROM ss_checkpoint_dependency"
	    " WHERE checkpoint = ?1 AND down = 1 AND NOT EXISTS (SELECT 1 FROM"
	    " ss_checkpoint_episode WHERE checkpoint = ?1 AND ended IS NULL)");

	text_bind(st, 1, p->checkpoint);
	sqlite3_bind_int64(st, 2, p->episode_start);
	db_done(st);
	sqlite3_finalize(st);
}

static void
pulse_load(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = db_prep(p->db, "SELECT marker, down_marker, episode_start FROM"
	    " ss_checkpoint WHERE name = ?1");

	text_bind(st, 1, p->checkpoint);
	if (sqlite3_step(st) == SQLITE_ROW) {
		p->have_marker = p->have_top = sqlite3_column_type(st, 0) != SQLITE_NULL;
		p->marker = p->top = sqlite3_column_int64(st, 0);
		p->paused = sqlite3_column_type(st, 1) != SQLITE_NULL;
		p->down_marker = sqlite3_column_int64(st, 1);
		p->episode_start = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	parts_load(p);
	deps_read(p, true);
	if (p->paused)
		episode_resume(p);
}

/* Register the checkpoint and the dependencies' thresholds (for status). */
static void
pulse_register(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *ck = db_prep(p->db, "INSERT OR IGNORE INTO ss_checkpoint(name)"
	    " VALUES(?1)");
	sqlite3_stmt *dep = db_prep(p->db, "INSERT INTO ss_checkpoint_dependency(checkpoint,"
	    " name, threshold) VALUES(?1, ?2, ?3) ON CONFLICT(checkpoint, name) DO UPDATE"
	    " SET threshold = excluded.threshold");
	int i;

	db_begin(p->db);
	text_bind(ck, 1, p->checkpoint);
	db_done(ck);
	text_bind(dep, 1, p->checkpoint);
	for (i = 0; i < p->ndeps; i++) {
		text_bind(dep, 2, p->deps[i].name);
		sqlite3_bind_int64(dep, 3, p->deps[i].threshold);
		db_done(dep);
	}
	db_commit(p->db);
	sqlite3_finalize(ck);
	sqlite3_finalize(dep);
}

ss_checkpoint_pulse *
ss_checkpoint_pulse_open(const char *db_path, const char *checkpoint,
    const struct ss_checkpoint_dep *deps, int ndeps, const struct ss_checkpoint_parts *parts,
    ss_checkpoint_event_fn *on_event, void *arg)
{
	ss_checkpoint_pulse *p = ss_xmalloc(sizeof *p);
	int i;

	memset(p, 0, sizeof *p);
	p->db = db_open(db_path, false);
	p->checkpoint = ss_xstrdup(checkpoint);
	ckparts_init(&p->ps, parts->idle, parts->expect);
	p->deps = ss_xmalloc(ndeps * sizeof *p->deps);
	memset(p->deps, 0, ndeps * sizeof *p->deps);
	for (i = 0; i < ndeps; i++) {
		p->deps[i].name = ss_xstrdup(deps[i].name);
		p->deps[i].threshold = deps[i].threshold;
	}
	p->ndeps = ndeps;
	p->on_event = on_event;
	p->arg = arg;
	p->st_marker = db_prep(p->db, "UPDATE ss_checkpoint SET marker = ?2 WHERE name = ?1");
	p->st_since = db_prep(p->db, "UPDATE ss_checkpoint_dependency SET since = ?3"
	    " WHERE checkpoint = ?1 AND name = ?2 AND since IS NULL");
	p->st_ckoff = db_prep(p->db, "INSERT INTO ss_checkpoint_offset(checkpoint, topic,"
	    " partition, offset, marker, seen, idle, state) VALUES(:checkpoint, :topic,"
	    " :partition, :offset, :marker, :seen, :idle, :state) ON CONFLICT(checkpoint, topic,"
	    " partition) DO UPDATE SET offset = excluded.offset, marker = coalesce("
	    "excluded.marker, marker), seen = excluded.seen, idle = excluded.idle,"
	    " state = excluded.state");
	ss_offsets_init(&p->offsets, p->db, NULL);
	p->st_heartbeats = db_prep(p->db, sql_dep_heartbeat);
	text_bind(p->st_marker, 1, p->checkpoint);
	text_bind(p->st_since, 1, p->checkpoint);
	named_text(p->st_ckoff, ":checkpoint", p->checkpoint);
	bind_named(p->st_ckoff, ":idle", parts->idle);
	text_bind(p->st_heartbeats, 1, p->checkpoint);
	pulse_register(p);
	pulse_load(p);
	events_deliver(p);
	return p;
}

/* The dependent marker of what was read (checkpoint_parts.h); unknown while a
 * partition that holds it has delivered nothing. */
static void
marker_update(ss_checkpoint_pulse *p)
{
	int64_t m = p->top;
	bool known = p->have_top;

	if (p->ps.n > 0) /* else the hot path of one ordered stream: its largest time */
		known = ckparts_low(&p->ps, ckparts_now(), p->have_top ? &p->top : NULL, &m);
	if (known != p->have_marker || (known && m != p->marker)) {
		p->marker = m;
		p->have_marker = known;
		p->marker_dirty = true;
	}
}

/* A dependency never heard from counts from the start of the dependent stream: its
 * lowest event time, once its marker is known (partitions read one after another all
 * began before then). */
static void
deps_count(ss_checkpoint_pulse *p)
{
	int i;

	if (!p->have_marker)
		return;
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (d->heard || d->counted)
			continue;
		d->since = p->have_first && p->first < p->marker ? p->first : p->marker;
		d->counted = d->since_dirty = true;
	}
}

/* Does a downtime start now? Not while paused, not before the marker is known and,
 * without a writer that tells, not before --partitions were heard from. */
static bool
episode_check(ss_checkpoint_pulse *p)
{
	int i;

	deps_count(p);
	if (p->paused || !any_late(p) || ckparts_waiting(&p->ps, ckparts_now()) > 0)
		return false;
	/* the cached heartbeats can only be older than the stored ones: look again */
	deps_read(p, false);
	if (!any_late(p))
		return false;
	for (i = 0; i < p->ndeps; i++)
		p->deps[i].down = dep_late(p, &p->deps[i]);
	p->down_marker = p->marker;
	p->paused = p->starting = true;
	return true;
}

void
ss_checkpoint_pulse_parts(ss_checkpoint_pulse *p, const struct ss_feed_part *parts, size_t n)
{
	ckparts_feed(&p->ps, parts, n);
	p->synced = true;
}

bool
ss_checkpoint_pulse_record(ss_checkpoint_pulse *p, int64_t ts, const struct ss_envelope *env)
{
	if (!p->have_top || ts > p->top)
		p->top = ts;
	if (!p->have_first || ts < p->first)
		p->first = ts;
	p->have_top = p->have_first = true;
	if (env)
		ckparts_note(&p->ps, env, ts, ckparts_now());
	marker_update(p);
	return episode_check(p);
}

bool
ss_checkpoint_pulse_tick(ss_checkpoint_pulse *p)
{
	if (!p->synced)
		return false; /* restored partitions alone decide nothing */
	marker_update(p);
	return episode_check(p);
}

void
ss_checkpoint_pulse_commit(ss_checkpoint_pulse *p)
{
	bool starting = p->starting, parts = p->synced ? ckparts_restate(&p->ps) : p->ps.dirty;
	bool dirty = p->marker_dirty || parts || starting;
	int i;

	for (i = 0; i < p->ndeps; i++)
		dirty = dirty || p->deps[i].since_dirty;
	/* a commit is also the moment to catch up with the heartbeats */
	if (!dirty) {
		deps_read(p, false);
		return;
	}
	db_begin(p->db);
	if (p->marker_dirty && p->have_marker)
		sqlite3_bind_int64(p->st_marker, 2, p->marker);
	else if (p->marker_dirty)
		sqlite3_bind_null(p->st_marker, 2);
	if (p->marker_dirty)
		db_done(p->st_marker);
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (!d->since_dirty)
			continue;
		text_bind(p->st_since, 2, d->name);
		sqlite3_bind_int64(p->st_since, 3, d->since);
		db_done(p->st_since);
		d->since_dirty = false;
	}
	parts_write(&p->ps, &p->offsets, p->st_ckoff, false);
	if (starting)
		episode_begin(p);
	deps_read(p, false);
	db_commit(p->db);
	p->marker_dirty = p->starting = false;
	if (starting)
		events_deliver(p);
}

bool
ss_checkpoint_pulse_paused(const ss_checkpoint_pulse *p)
{
	return p->paused;
}

bool
ss_checkpoint_pulse_poll(ss_checkpoint_pulse *p)
{
	int i;

	if (!p->paused)
		return true;
	deps_read(p, false);
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (d->down && (d->waiting || dep_heartbeat(d) <= p->down_marker))
			return false; /* not known to have passed it */
	}
	episode_end(p);
	events_deliver(p);
	return true;
}

void
ss_checkpoint_pulse_close(ss_checkpoint_pulse *p)
{
	int i;

	ss_checkpoint_pulse_commit(p);
	sqlite3_finalize(p->st_marker);
	sqlite3_finalize(p->st_since);
	sqlite3_finalize(p->st_ckoff);
	ss_offsets_free(&p->offsets);
	sqlite3_finalize(p->st_heartbeats);
	sqlite3_close(p->db);
	for (i = 0; i < p->ndeps; i++)
		free(p->deps[i].name);
	free(p->deps);
	ckparts_free(&p->ps);
	free(p->checkpoint);
	free(p);
}

/* ---- status ---- */

static jv
part_state_jv(sqlite3_stmt *st, int col)
{
	static const char *const names[] = { "reading", "caught-up", "done", "revoked" };
	int state = column_state(st, col);

	return state >= 0 && state <= 3 ? jv_string(names[state]) : jv_null();
}

/* The markers of a stream's partitions: [{"topic","partition","marker","seen","idle",
 * "state"}], idle as of now; state as checkpoint_parts.h, null without a writer that
 * told (or in a file from before). */
static jv
parts_jv(sqlite3 *db, const char *sql, const char *checkpoint, const char *dependency,
    int64_t now)
{
	sqlite3_stmt *st = db_prep(db, sql);
	jv a = jv_array();
	int rc;

	text_bind(st, 1, checkpoint);
	if (dependency)
		text_bind(st, 2, dependency);
	sqlite3_bind_int64(st, 3, now);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		jv o = set(jv_object(), "topic",
		    jv_string((const char *)sqlite3_column_text(st, 0)));

		o = set(o, "partition", jv_number(sqlite3_column_int(st, 1)));
		o = set(o, "marker", column_time_jv(st, 2));
		o = set(o, "seen", column_time_jv(st, 3));
		o = set(o, "idle", jv_bool(sqlite3_column_int(st, 4)));
		a = jv_array_append(a, set(o, "state", part_state_jv(st, 5)));
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(db, NULL, rc, "read partitions");
	sqlite3_finalize(st);
	return a;
}

/* The partition rows of table; states: it has the state column. A partition is idle
 * when silent for --idle and its state lets it turn idle (checkpoint_parts.h). */
static void
parts_sql(char *buf, size_t size, const char *table, bool states, const char *where)
{
	snprintf(buf, size, "SELECT topic, partition, marker, seen, %s FROM %s WHERE"
	    " checkpoint = ?1 AND %s ORDER BY topic, partition", states ?
	    "coalesce(state, 1) IN (1, 3) AND seen + idle <= ?3, state" :
	    "seen + idle <= ?3, NULL",
	    table, where);
}

/* What a state file written before partitions, or before their states, lacks (status
 * opens it read-only). */
struct status_ctx {
	sqlite3 *db;
	bool dep_parts, parts, dep_states, states, episodes;
	int64_t now;
	int cells; /* of each dependency's timeline on a terminal; 0: none */
};

static jv
status_dep_parts_jv(const struct status_ctx *c, const char *checkpoint, const char *name)
{
	char sql[512];

	if (!c->dep_parts)
		return jv_array();
	parts_sql(sql, sizeof sql, "ss_checkpoint_dependency_partition", c->dep_states,
	    "name = ?2");
	return parts_jv(c->db, sql, checkpoint, name, c->now);
}

static jv
status_deps_jv(const struct status_ctx *c, const char *checkpoint, sqlite3_stmt *ck)
{
	sqlite3_stmt *st = db_prep(c->db, !c->dep_parts ? sql_dep_heartbeat_v1 :
	    c->dep_states ? sql_dep_heartbeat : sql_dep_heartbeat_v2);
	bool have_marker = ck && sqlite3_column_type(ck, 0) != SQLITE_NULL;
	jv a = jv_array();

	text_bind(st, 1, checkpoint);
	if (c->dep_parts)
		sqlite3_bind_int64(st, 2, c->now);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int waiting = sqlite3_column_int(st, 6);
		/* lag against the stand-in when no heartbeat came yet, as pulse counts it;
		 * none while it waits for partitions: its marker is not known */
		int col = waiting ? -1 : dep_heartbeat_column(st), hb = col != -1 ? col :
		    !waiting && sqlite3_column_type(st, 2) != SQLITE_NULL ? 2 : -1;
		jv d = set(jv_object(), "dependency", jv_string(name));

		d = set(d, "state", jv_string(sqlite3_column_int(st, 3) ? "down" : "up"));
		d = set(d, "marker", col != -1 ? column_time_jv(st, col) : jv_null());
		d = set(d, "threshold", sqlite3_column_type(st, 5) == SQLITE_NULL ? jv_null() :
		    seconds_jv(sqlite3_column_int64(st, 5)));
		d = set(d, "lag", have_marker && hb != -1 ? seconds_jv(sqlite3_column_int64(ck, 0) -
		    sqlite3_column_int64(st, hb)) : jv_null());
		d = set(d, "waiting", jv_number(waiting));
		d = set(d, "partitions", status_dep_parts_jv(c, checkpoint, name));
		a = jv_array_append(a, d);
	}
	sqlite3_finalize(st);
	return a;
}

/* The dependent stream's partitions (those with a marker). */
static jv
status_parts_jv(const struct status_ctx *c, const char *checkpoint)
{
	char sql[512];

	if (!c->parts)
		return jv_array();
	parts_sql(sql, sizeof sql, "ss_checkpoint_offset", c->states, "marker IS NOT NULL");
	return parts_jv(c->db, sql, checkpoint, NULL, c->now);
}

static jv
status_jv(const struct status_ctx *c, const char *checkpoint)
{
	sqlite3_stmt *ck = db_prep(c->db, "SELECT marker, down_marker, episode_start,"
	    " episode_end FROM ss_checkpoint WHERE name = ?1");
	jv s = set(jv_object(), "checkpoint", jv_string(checkpoint)), seeks;
	bool row;

	text_bind(ck, 1, checkpoint);
	row = sqlite3_step(ck) == SQLITE_ROW;
	s = set(s, "state", jv_string(row && sqlite3_column_type(ck, 1) != SQLITE_NULL ?
	    "down" : "up"));
	s = set(s, "marker", row ? column_time_jv(ck, 0) : jv_null());
	s = set(s, "partitions", status_parts_jv(c, checkpoint));
	s = set(s, "offsets", offsets_jv(c->db, sql_offsets_now, checkpoint));
	s = set(s, "dependencies", status_deps_jv(c, checkpoint, row ? ck : NULL));
	s = set(s, "down_marker", row ? column_time_jv(ck, 1) : jv_null());
	s = set(s, "episode_start", row ? column_time_jv(ck, 2) : jv_null());
	s = set(s, "episode_end", row ? column_time_jv(ck, 3) : jv_null());
	seeks = jv_array();
	ss_seeks_each(c->db, NULL, checkpoint, offset_append, &seeks);
	s = set(s, "seek_pending", seeks);
	sqlite3_finalize(ck);
	return s;
}

/* 5400 -> "1h30m", 0.25 -> "250ms", -1800 -> "-30m" */
static void
duration_format(double secs, char *buf, size_t size)
{
	static const struct { const char *unit; int64_t ms; } units[] = {
		{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 },
	};
	int64_t ms = (int64_t)(secs * 1000 + (secs < 0 ? -0.5 : 0.5));
	size_t i, n = 0;

	if (ms < 0) {
		n += snprintf(buf + n, size - n, "-");
		ms = -ms;
	}
	if (ms == 0)
		snprintf(buf + n, size - n, "0s");
	for (i = 0; i < sizeof units / sizeof *units && ms > 0 && n < size; i++) {
		if (ms < units[i].ms)
			continue;
		n += snprintf(buf + n, size - n, "%lld%s", (long long)(ms / units[i].ms),
		    units[i].unit);
		ms %= units[i].ms;
	}
}

static const char *
field_text(jv o, const char *k, char *buf, size_t size)
{
	jv v = jv_object_get(jv_copy(o), jv_string(k));

	if (jv_get_kind(v) == JV_KIND_STRING)
		snprintf(buf, size, "%s", jv_string_value(v));
	else if (jv_get_kind(v) == JV_KIND_NUMBER)
		duration_format(jv_number_value(v), buf, size);
	else
		snprintf(buf, size, "-");
	jv_free(v);
	return buf;
}

/* One line per partition of o's "partitions", under the dependent marker or under a
 * dependency's line (in its columns). */
static void
parts_table(jv o, bool dependency, FILE *out)
{
	jv parts = jv_object_get(jv_copy(o), jv_string("partitions"));
	char name[300], m[64];
	int i, n = jv_array_length(jv_copy(parts));

	for (i = 0; i < n; i++) {
		jv pt = jv_array_get(jv_copy(parts), i);
		jv num = jv_object_get(jv_copy(pt), jv_string("partition"));
		jv idle = jv_object_get(jv_copy(pt), jv_string("idle"));
		char state[32];
		/* what holds the marker no more: idle, or done (checkpoint_parts.h) */
		const char *note = jv_get_kind(idle) == JV_KIND_TRUE ? "idle" :
		    strcmp(field_text(pt, "state", state, sizeof state), "done") == 0 ? "done" : "";

		snprintf(name, sizeof name, "%s[%.0f]", field_text(pt, "topic", m, sizeof m),
		    jv_number_value(num));
		field_text(pt, "marker", m, sizeof m);
		if (dependency)
			fprintf(out, "    %-14s %-5s %s\n", name, note, m);
		else
			fprintf(out, "    %-14s  %s%s%s%s\n", name, m, *note ? " (" : "", note,
			    *note ? ")" : "");
		jv_free(num);
		jv_free(idle);
		jv_free(pt);
	}
	jv_free(parts);
}

/* A dependency whose heartbeat waits for partitions has no marker: say why. */
static void
waiting_table(jv dep, FILE *out)
{
	jv w = jv_object_get(jv_copy(dep), jv_string("waiting"));

	if (jv_get_kind(w) == JV_KIND_NUMBER && jv_number_value(w) > 0)
		fprintf(out, "    (its heartbeat waits for %.0f partition%s)\n", jv_number_value(w),
		    jv_number_value(w) == 1 ? "" : "s");
	jv_free(w);
}

/* ---- status on a terminal: a timeline of each dependency's last day ---- */

#define TIMELINE_INDENT 4
/* room kept right of the timeline for "  1h30m behind" */
#define TIMELINE_NOTE 16

/* The most cells of a day's timeline (30 min, 1 h or 2 h each) that fit in width
 * columns with the note, else the coarsest alone; 0 when not even that fits. */
static int
timeline_cells(int width)
{
	static const int cells[] = { 48, 24, 12 };
	size_t i;

	for (i = 0; i < sizeof cells / sizeof *cells; i++)
		if (TIMELINE_INDENT + cells[i] + TIMELINE_NOTE <= width)
			return cells[i];
	return TIMELINE_INDENT + cells[i - 1] <= width ? cells[i - 1] : 0;
}

/* Episodes of a dependency that end after `from` (open ones end now). A file from
 * before the episodes table knows only the one in progress. */
static sqlite3_stmt *
episodes_query(const struct status_ctx *c, const char *checkpoint, const char *dependency,
    int64_t from)
{
	sqlite3_stmt *st = db_prep(c->db, c->episodes ?
	    "SELECT began, coalesce(ended, ?3) FROM ss_checkpoint_episode WHERE checkpoint = ?1"
	    " AND dependency = ?2 AND coalesce(ended, ?3) > ?4" :
	    "SELECT k.episode_start, ?3 FROM ss_checkpoint k JOIN ss_checkpoint_dependency d"
	    " ON d.checkpoint = k.name WHERE k.name = ?1 AND d.name = ?2 AND d.down"
	    " AND k.episode_start IS NOT NULL AND ?3 > ?4");

	text_bind(st, 1, checkpoint);
	text_bind(st, 2, dependency);
	sqlite3_bind_int64(st, 3, c->now);
	sqlite3_bind_int64(st, 4, from);
	return st;
}

/* down[i]: ns of cell i (of c->cells over the day before now) the dependency was down */
static void
timeline_fill(const struct status_ctx *c, const char *checkpoint, const char *dependency,
    int64_t *down)
{
	int64_t from = c->now - HISTORY_NS, cell = HISTORY_NS / c->cells;
	sqlite3_stmt *st = episodes_query(c, checkpoint, dependency, from);
	int i;

	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t b = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		for (i = 0; i < c->cells; i++) {
			int64_t lo = from + i * cell, hi = lo + cell;
			int64_t start = b > lo ? b : lo, end = e < hi ? e : hi;

			if (end > start)
				down[i] += end - start;
		}
	}
	sqlite3_finalize(st);
}

/* Down the whole cell, part of it, or up. */
static const char *
cell_glyph(int64_t down, int64_t cell)
{
	return down >= cell ? "\u2588" : down > 0 ? "\u2584" : "\u2581";
}

/* "  45m behind" from the dependency's lag; nothing when not known. */
static void
behind_note(jv dep, char *buf, size_t size)
{
	jv lag = jv_object_get(jv_copy(dep), jv_string("lag"));
	char d[48];

	buf[0] = '\0';
	if (jv_get_kind(lag) == JV_KIND_NUMBER && jv_number_value(lag) > 0) {
		duration_format(jv_number_value(lag), d, sizeof d);
		snprintf(buf, size, "  %s behind", d);
	} else if (jv_get_kind(lag) == JV_KIND_NUMBER) {
		snprintf(buf, size, "  not behind");
	}
	jv_free(lag);
}

/* The dependency's last day, one cell per column, oldest left, and how far behind it
 * is; the note only when it fits the terminal. */
static void
timeline_row(const struct status_ctx *c, jv s, jv dep, int width, FILE *out)
{
	jv checkpoint = jv_object_get(jv_copy(s), jv_string("checkpoint"));
	jv name = jv_object_get(jv_copy(dep), jv_string("dependency"));
	int64_t *down = ss_xmalloc(c->cells * sizeof *down);
	char note[64];
	int i;

	memset(down, 0, c->cells * sizeof *down);
	timeline_fill(c, jv_string_value(checkpoint), jv_string_value(name), down);
	behind_note(dep, note, sizeof note);
	fprintf(out, "%*s", TIMELINE_INDENT, "");
	for (i = 0; i < c->cells; i++)
		fputs(cell_glyph(down[i], HISTORY_NS / c->cells), out);
	fprintf(out, "%s\n", TIMELINE_INDENT + c->cells + (int)strlen(note) <= width ? note : "");
	free(down);
	jv_free(checkpoint);
	jv_free(name);
}

/* Under the timelines: "24h ago" from the left edge, "12h ago" from the middle (when
 * there is room), "now" up to the right edge. */
static void
timeline_axis(const struct status_ctx *c, FILE *out)
{
	char axis[64];
	int n = c->cells;

	memset(axis, ' ', n);
	axis[n] = '\0';
	memcpy(axis, "24h ago", 7);
	if (n >= 24)
		memcpy(axis + n / 2, "12h ago", 7);
	memcpy(axis + n - 3, "now", 3);
	fprintf(out, "%*s%s\n", TIMELINE_INDENT, "", axis);
}

static void
status_table(const struct status_ctx *ctx, jv s, int width, FILE *out)
{
	char a[64], b[64], c[64], d[64], e[64];
	jv offs = jv_object_get(jv_copy(s), jv_string("offsets"));
	jv deps = jv_object_get(jv_copy(s), jv_string("dependencies"));
	int i, n;

	fprintf(out, "checkpoint %s: %s\n", field_text(s, "checkpoint", a, sizeof a),
	    field_text(s, "state", b, sizeof b));
	fprintf(out, "  dependent marker  %s\n", field_text(s, "marker", a, sizeof a));
	parts_table(s, false, out);
	fprintf(out, "  offsets          ");
	n = jv_array_length(jv_copy(offs));
	for (i = 0; i < n; i++) {
		jv o = jv_array_get(jv_copy(offs), i);
		jv part = jv_object_get(jv_copy(o), jv_string("partition"));
		jv off = jv_object_get(jv_copy(o), jv_string("offset"));

		fprintf(out, " %s[%.0f]=%.0f", field_text(o, "topic", a, sizeof a),
		    jv_number_value(part), jv_number_value(off));
		jv_free(part);
		jv_free(off);
		jv_free(o);
	}
	fprintf(out, "%s\n", n ? "" : " -");
	if (strcmp(field_text(s, "down_marker", a, sizeof a), "-") != 0)
		fprintf(out, "  down at marker    %s\n", a);
	fprintf(out, "  last episode      %s .. %s\n",
	    field_text(s, "episode_start", a, sizeof a), field_text(s, "episode_end", b, sizeof b));
	fprintf(out, "  %-16s %-5s %-24s %-9s %s\n", "DEPENDENCY", "STATE", "MARKER", "THRESHOLD",
	    "LAG");
	n = jv_array_length(jv_copy(deps));
	for (i = 0; i < n; i++) {
		jv o = jv_array_get(jv_copy(deps), i);

		fprintf(out, "  %-16s %-5s %-24s %-9s %s\n",
		    field_text(o, "dependency", a, sizeof a), field_text(o, "state", b, sizeof b),
		    field_text(o, "marker", c, sizeof c), field_text(o, "threshold", d, sizeof d),
		    field_text(o, "lag", e, sizeof e));
		if (ctx->cells > 0)
			timeline_row(ctx, s, o, width, out);
		parts_table(o, true, out);
		waiting_table(o, out);
		jv_free(o);
	}
	if (ctx->cells > 0 && n > 0)
		timeline_axis(ctx, out);
	jv_free(offs);
	jv_free(deps);
}

static bool
has_tables(sqlite3 *db)
{
	sqlite3_stmt *st = db_prep(db, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
	    " AND name = 'ss_checkpoint_dependency'");
	bool yes = sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	return yes;
}

int
ss_checkpoint_status(const char *db_path, const char *checkpoint, bool json, int width,
    FILE *out)
{
	struct status_ctx c;
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = 0;

	if (access(db_path, F_OK) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", db_path, strerror(errno));
	db = db_open(db_path, true);
	/* one snapshot for the whole report, while heartbeat and pulse write on */
	db_exec(db, "BEGIN", "begin");
	if (!has_tables(db))
		goto out;
	c = (struct status_ctx){ .db = db, .now = ss_time_now(),
	    .dep_parts = has_column(db, "ss_checkpoint_dependency_partition", "marker"),
	    .parts = has_column(db, "ss_checkpoint_offset", "marker"),
	    .dep_states = has_column(db, "ss_checkpoint_dependency", "waiting") &&
	        has_column(db, "ss_checkpoint_dependency_partition", "state"),
	    .states = has_column(db, "ss_checkpoint_offset", "state"),
	    .episodes = has_column(db, "ss_checkpoint_episode", "began"),
	    .cells = json ? 0 : timeline_cells(width) };
	st = db_prep(db, "SELECT name FROM ss_checkpoint UNION SELECT checkpoint FROM"
	    " ss_checkpoint_dependency ORDER BY 1");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		jv s;

		if (checkpoint && strcmp(name, checkpoint) != 0)
			continue;
		s = status_jv(&c, name);
		if (json) {
			jv text = jv_dump_string(s, 0);

			fprintf(out, "%s\n", jv_string_value(text));
			jv_free(text);
		} else {
			fprintf(out, "%s", n ? "\n" : "");
			status_table(&c, s, width, out);
			jv_free(s);
		}
		n++;
	}
	sqlite3_finalize(st);
out:
	db_exec(db, "COMMIT", "end");
	sqlite3_close(db);
	return n;
}

/* ---- hooks ---- */

int
ss_checkpoint_run_hook(const char *cmd, const char *kind, const char *checkpoint,
    const char *dependency, const char *json)
{
	pid_t pid;
	int status, fd;

	fflush(NULL);
	if ((pid = fork()) == -1) {
		ss_diag_warn("--on-%s: fork: %s", kind, strerror(errno));
		return SS_EXIT_NOEXEC;
	}
	if (pid == 0) {
		setenv("SS_EVENT", json, 1);
		setenv("SS_CHECKPOINT", checkpoint, 1);
		if (dependency)
			setenv("SS_DEPENDENCY", dependency, 1);
		else
			unsetenv("SS_DEPENDENCY");
		/* stdout carries the records: the hook talks to stderr */
		if ((fd = open("/dev/null", O_RDONLY)) != -1)
			dup2(fd, 0);
		dup2(2, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(SS_EXIT_NOEXEC);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return SS_EXIT_NOEXEC;
	return WIFEXITED(status) ? WEXITSTATUS(status) : ss_exit_signal(WTERMSIG(status));
}
