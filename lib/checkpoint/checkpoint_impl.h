/* checkpoint_impl: what the files of lib/checkpoint/ share (the state file, its SQL
 * helpers, the JSON pieces of events and status, the partitions' rows); private to
 * this folder. Statements and jv values follow SQLite's and libjq's rules: the caller
 * finalizes what ck_prep returns, and ck_set consumes o and v. */
#ifndef SS_CHECKPOINT_IMPL_H
#define SS_CHECKPOINT_IMPL_H
#include <jv.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "checkpoint/checkpoint_parts.h"
#include "db/offsets.h"

/* Episodes are kept for a day after they end, the span of status's timeline (ns; no
 * suffix, so that it reads the same in SQL). */
#define HISTORY_NS 86400000000000
#define STR_(x) #x
#define STR(x) STR_(x)

/* The state file: opened read-only as it is, or for writing with its tables created
 * and migrated; exits through lib/db/statefile.h on an error. */
sqlite3 *ck_open(const char *path, bool readonly);
bool ck_has_column(sqlite3 *db, const char *table, const char *column);
void ck_exec(sqlite3 *db, const char *sql, const char *what);
sqlite3_stmt *ck_prep(sqlite3 *db, const char *sql);
/* Steps a write to its end and resets it. */
void ck_done(sqlite3_stmt *st);
void ck_begin(sqlite3 *db);
void ck_commit(sqlite3 *db);
void ck_text_bind(sqlite3_stmt *st, int i, const char *s);
void ck_named_text(sqlite3_stmt *st, const char *name, const char *s);
void ck_bind_named(sqlite3_stmt *st, const char *name, int64_t v);
int64_t ck_wall_now(void);

/* JSON pieces. */
jv ck_time_jv(int64_t ns);
jv ck_column_time_jv(sqlite3_stmt *st, int col);
jv ck_seconds_jv(int64_t ns);
jv ck_set(jv o, const char *k, jv v);
void ck_offset_append(const char *topic, int32_t partition, int64_t offset, void *arg);
jv ck_offsets_jv(sqlite3 *db, const char *sql, const char *checkpoint);

/* The partitions' rows. */
void ck_parts_write(struct ckparts *s, struct ss_offsets *offsets, sqlite3_stmt *rows,
    bool need_marker);
int ck_column_state(sqlite3_stmt *st, int col);

/* A partition row a heartbeat or pulse wrote, as lib/stream/partwm.h reads it: from
 * column col on, its marker, seen (wall clock), idle and state; the rule is the
 * checkpoint's (ckparts_rule) with the row's --idle. */
struct ck_row {
	struct ss_partwm_part wm;
	struct ss_partwm_rule rule;
	enum ss_partwm_state state;
};
void ck_row_read(sqlite3_stmt *st, int col, struct ck_row *r);

/* The dependencies' heartbeats, for pulse and status, as the file's version has them:
 * the dependencies' rows (ck_sql_deps: with the waiting column and partitions with
 * states; else ck_sql_deps_v1) and their partitions' (ck_sql_dep_parts, or _v2 without
 * states), ?1 the checkpoint. */
extern const char ck_sql_deps[], ck_sql_deps_v1[], ck_sql_dep_parts[], ck_sql_dep_parts_v2[];
/* The heartbeat of the dependency in the row dep into *hb, as of now (wall clock): the
 * lowest marker of its partitions (rows of parts, NULL for a file without) that hold
 * it (checkpoint_parts.h), else its largest event time; false when it sent none. */
bool ck_dep_heartbeat(sqlite3_stmt *dep, sqlite3_stmt *parts, int64_t now, int64_t *hb);
#endif
