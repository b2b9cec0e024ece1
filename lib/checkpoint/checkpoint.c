/* checkpoint: the state file (schema, migration, open), its SQL helpers, the JSON
 * pieces of events and status, and the partitions' rows; see checkpoint.h for the
 * tables and the ownership rules. */
#include <stdio.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_impl.h"
#include "db/seeks.h"
#include "db/statefile.h"
#include "base/sstime.h"

/* ---- the state file ---- */

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
void
ck_exec(sqlite3 *db, const char *sql, const char *what)
{
	ss_statefile_exec(db, NULL, sql, what);
}

sqlite3_stmt *
ck_prep(sqlite3 *db, const char *sql)
{
	return ss_statefile_prepare(db, NULL, sql, "prepare");
}

void
ck_done(sqlite3_stmt *st)
{
	ss_statefile_done(st, NULL, "write");
}

/* IMMEDIATE: take the write lock up front. A read transaction that later wants to
 * write fails at once (SQLITE_BUSY_SNAPSHOT, no busy wait) when the other process
 * committed in between, and heartbeat and pulse commit all the time. */
void
ck_begin(sqlite3 *db)
{
	ck_exec(db, "BEGIN IMMEDIATE", "begin");
}

void
ck_commit(sqlite3 *db)
{
	ck_exec(db, "COMMIT", "commit");
}

bool
ck_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st = ck_prep(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
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
		if (ck_has_column(db, added_columns[i].table, added_columns[i].column))
			continue;
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s",
		    added_columns[i].table, added_columns[i].column, added_columns[i].type);
		ck_exec(db, sql, "add column");
	}
}

sqlite3 *
ck_open(const char *path, bool readonly)
{
	sqlite3 *db = ss_statefile_open(path, readonly);

	ss_statefile_check(db, path, SS_STATE_CHECKPOINT);
	if (readonly)
		return db;
	ss_statefile_wal(db, NULL);
	ck_begin(db);
	ck_exec(db, schema_sql, "create tables");
	ss_seeks_create(db, NULL);
	ss_offsets_create(db, NULL);
	db_migrate(db);
	ss_statefile_mark(db, path, SS_STATE_CHECKPOINT);
	ck_commit(db);
	return db;
}

void
ck_text_bind(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Wall-clock time for episode start and end, to the millisecond: enough for people. */
int64_t
ck_wall_now(void)
{
	return ss_time_now() / 1000000 * 1000000;
}

/* ---- JSON pieces for events and status ---- */

jv
ck_time_jv(int64_t ns)
{
	char buf[64];

	ss_time_format(ns, buf, sizeof buf);
	return jv_string(buf);
}

jv
ck_column_time_jv(sqlite3_stmt *st, int col)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return jv_null();
	return ck_time_jv(sqlite3_column_int64(st, col));
}

jv
ck_seconds_jv(int64_t ns)
{
	return jv_number((double)ns / 1e9);
}

jv
ck_set(jv o, const char *k, jv v)
{
	return jv_object_set(o, jv_string(k), v);
}

/* Append {"topic":..,"partition":..,"offset":..} to the array *arg. */
void
ck_offset_append(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	jv *a = arg;
	jv o = ck_set(jv_object(), "topic", jv_string(topic));

	o = ck_set(o, "partition", jv_number(partition));
	*a = jv_array_append(*a, ck_set(o, "offset", jv_number(offset)));
}

/* [{"topic":..,"partition":..,"offset":..}] from a statement yielding those columns. */
jv
ck_offsets_jv(sqlite3 *db, const char *sql, const char *checkpoint)
{
	sqlite3_stmt *st = ck_prep(db, sql);
	jv a = jv_array();

	ck_text_bind(st, 1, checkpoint);
	while (ss_statefile_step(st, NULL, "read offsets") == SQLITE_ROW)
		ck_offset_append((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
		    sqlite3_column_int64(st, 2), &a);
	sqlite3_finalize(st);
	return a;
}


/* ---- partitions, kept in memory between commits (checkpoint_parts.h) ---- */

void
ck_bind_named(sqlite3_stmt *st, const char *name, int64_t v)
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
	ck_bind_named(st, ":partition", p->env.partition);
	ck_bind_named(st, ":offset", p->env.offset);
	ck_bind_named(st, ":seen", (wall - (mono - p->wm.seen)) / 1000000 * 1000000);
	if (p->wm.maxt != SS_PARTWM_NONE)
		ck_bind_named(st, ":marker", p->wm.maxt);
	else if (sqlite3_bind_parameter_index(st, ":marker"))
		sqlite3_bind_null(st, sqlite3_bind_parameter_index(st, ":marker"));
	if (i && state == SS_PARTWM_HEARD)
		sqlite3_bind_null(st, i);
	else if (i)
		sqlite3_bind_int(st, i, state);
}

/* The dirty partitions: ss_offsets for those with a record since the last write, and
 * their rows (rows): heartbeat's need a marker, pulse's an offset. */
void
ck_parts_write(struct ckparts *s, struct ss_offsets *offsets, sqlite3_stmt *rows, bool need_marker)
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
			ck_done(rows);
		}
		p->written = state; /* a partition with no row yet gets one with its first record */
		p->dirty = p->moved = false;
	}
	s->dirty = false;
}

/* A state column as read back: NULL is a partition heard from (no writer that told). */
int
ck_column_state(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? SS_PARTWM_HEARD :
	    sqlite3_column_int(st, col);
}

void
ck_named_text(sqlite3_stmt *st, const char *name, const char *s)
{
	ck_text_bind(st, sqlite3_bind_parameter_index(st, name), s);
}

/* ---- the rows of partitions another process wrote, as partwm reads them ---- */

void
ck_row_read(sqlite3_stmt *st, int col, struct ck_row *r)
{
	bool timed = sqlite3_column_type(st, col + 1) != SQLITE_NULL &&
	    sqlite3_column_type(st, col + 2) != SQLITE_NULL;

	r->wm = (struct ss_partwm_part){ .maxt = sqlite3_column_type(st, col) == SQLITE_NULL ?
	    SS_PARTWM_NONE : sqlite3_column_int64(st, col), .pos = -1, .feed_last = -1,
	    .feed = -1 };
	/* without seen or idle it never turns idle (as SQL's NULL comparison had it) */
	r->wm.seen = timed ? sqlite3_column_int64(st, col + 1) : 0;
	r->state = ck_column_state(st, col + 3);
	/* a value no version writes holds nothing, as the SQL before read it */
	if (r->state < SS_PARTWM_HEARD || r->state > SS_PARTWM_REVOKED)
		r->state = SS_PARTWM_DONE;
	r->rule = ckparts_rule(timed ? sqlite3_column_int64(st, col + 2) : INT64_MAX,
	    r->state != SS_PARTWM_HEARD);
}

/* The dependencies' rows (name, marker, since, down, threshold, waiting) and their
 * partitions' (marker, seen, idle, state), also of the files of earlier versions:
 * without the state and waiting columns (a partition heard from holds while heard
 * from within --idle), or without partitions at all. */
const char ck_sql_deps[] = "SELECT name, marker, since, down, threshold,"
    " coalesce(waiting, 0) FROM ss_checkpoint_dependency WHERE checkpoint = ?1 ORDER BY name";
const char ck_sql_deps_v1[] = "SELECT name, marker, since, down, threshold, 0"
    " FROM ss_checkpoint_dependency WHERE checkpoint = ?1 ORDER BY name";
const char ck_sql_dep_parts[] = "SELECT marker, seen, idle, state FROM"
    " ss_checkpoint_dependency_partition WHERE checkpoint = ?1 AND name = ?2";
const char ck_sql_dep_parts_v2[] = "SELECT marker, seen, idle, NULL FROM"
    " ss_checkpoint_dependency_partition WHERE checkpoint = ?1 AND name = ?2";

/* The heartbeat's partitions' rows are folded here, not in the heartbeat: they turn
 * idle by the clock, also while it writes nothing. */
bool
ck_dep_heartbeat(sqlite3_stmt *dep, sqlite3_stmt *parts, int64_t now, int64_t *hb)
{
	struct ss_partwm_low l = SS_PARTWM_LOW_INIT;
	struct ck_row r;

	if (parts) {
		sqlite3_bind_text(parts, 2, (const char *)sqlite3_column_text(dep, 0), -1,
		    SQLITE_TRANSIENT);
		while (ss_statefile_step(parts, NULL, "read partitions") == SQLITE_ROW) {
			ck_row_read(parts, 0, &r);
			ss_partwm_low_add_state(&l, &r.rule, &r.wm, r.state, now);
		}
		sqlite3_reset(parts);
	}
	/* none holds it (or a heartbeat without envelopes): its largest event time */
	if (l.held > 0)
		*hb = l.lo;
	else if (sqlite3_column_type(dep, 1) != SQLITE_NULL)
		*hb = sqlite3_column_int64(dep, 1);
	return l.held > 0 || sqlite3_column_type(dep, 1) != SQLITE_NULL;
}
