/* statefile: opening a SQLite state file, and what kind of state it is.
 * Every tool that keeps state opens its file here, so that a wrong path fails the same
 * way everywhere: with the path and the reason, exit 1 for what a retry cannot fix (a
 * directory, a missing parent directory, no permission, not a database, another tool's
 * state, a newer format), 75 only for what may pass (busy, locked, out of descriptors).
 *
 * Kinds. Each kind of state file carries its tool's tag in the SQLite header (PRAGMA
 * application_id) and its format version (PRAGMA user_version). Files of earlier
 * versions carry neither (version 0): their kind is read from their tables, and they
 * are marked when opened for writing. A file with a newer version than this build knows
 * is refused.
 *
 * Read-only opens never need write access: a file that can be written is opened
 * read-write all the same (only such a connection can roll back a hot journal a killed
 * writer left), else read-only, else, when no write-ahead log is pending, as immutable
 * (a read-only directory, where the -shm file cannot be made). A hot journal that needs
 * write access to roll back is said as such. The caller owns the connection.
 *
 * The layer of every state module: each runs its statements through the helpers here,
 * switches its file to WAL here, and exits here on any SQLite failure, so that one
 * message form (path: what: reason) and one rule for the exit status hold everywhere.
 * The tables belong to their modules: ss_kv to lib/db/store.h, ss_offsets to
 * lib/db/offsets.h, ss_seek_request to lib/db/seeks.h, ss_checkpoint* to lib/checkpoint/checkpoint.h,
 * ss_acks to lib/db/acks.h, asof_* to lib/join/asof_state.c. */
#ifndef SS_STATEFILE_H
#define SS_STATEFILE_H
#include <sqlite3.h>
#include <stdbool.h>

enum ss_state_kind {
	SS_STATE_ANY,        /* whatever kind: no check, no mark (--offsets-from) */
	SS_STATE_CACHE,      /* ss-cache */
	SS_STATE_CHECKPOINT, /* ss-checkpoint */
	SS_STATE_ASOF,       /* ss-asof --state */
	SS_STATE_ACKS,       /* ss-asof/ss-produce --acks */
	SS_STATE__N,
};

/* Open path: for reading (no write ever, the file must exist) or for writing (created
 * when missing). Exits with the path and the reason when it cannot. "" is a temporary
 * database (no checks). */
sqlite3 *ss_statefile_open(const char *path, bool readonly);
/* Check that db (opened from path) is a state of kind, or a file with nothing in it;
 * exits 1 saying what it is otherwise. Call before creating tables. */
void ss_statefile_check(sqlite3 *db, const char *path, enum ss_state_kind kind);
/* Mark db as a state of kind in the current format; call after creating its tables,
 * on a connection that writes. */
void ss_statefile_mark(sqlite3 *db, const char *path, enum ss_state_kind kind);
/* The same with a version of the format (at most the newest this build knows): for a kind
 * whose files keep an earlier layout. */
void ss_statefile_mark_version(sqlite3 *db, const char *path, enum ss_state_kind kind, int version);
/* Exit for a failed SQLite call on db: "path: what: reason", 75 when it may pass. path
 * NULL: the name SQLite has for db's file (its full path). Every module's SQLite failure
 * exits here; db counts as failed from then on (ss_statefile_failed). */
_Noreturn void ss_statefile_die(sqlite3 *db, const char *path, int rc, const char *what);
/* The exit status for a SQLite result code (with the OS error behind it). */
int ss_statefile_exit_code(int rc, int sys_errno);
/* Did ss_statefile_die exit for db? SQLite may have rolled back its open transaction
 * then: the exit handlers must not commit what is left of it. */
bool ss_statefile_failed(const sqlite3 *db);

/* Switch db to WAL (one writer, many readers) with synchronous=NORMAL, as every state
 * file is. The switch needs a moment alone with a new file, which the busy handler does
 * not always wait for: two processes starting on it at once take turns here (5 s). */
void ss_statefile_wal(sqlite3 *db, const char *path);

/* Statements on db (path as for ss_statefile_die); each exits through ss_statefile_die,
 * saying what, when SQLite fails. The caller finalizes what it prepared. */
void ss_statefile_exec(sqlite3 *db, const char *path, const char *sql, const char *what);
sqlite3_stmt *ss_statefile_prepare(sqlite3 *db, const char *path, const char *sql,
				   const char *what);
/* Step st: SQLITE_ROW or SQLITE_DONE. */
int ss_statefile_step(sqlite3_stmt *st, const char *path, const char *what);
/* Run st, which returns no rows, and reset it for the next use. */
void ss_statefile_done(sqlite3_stmt *st, const char *path, const char *what);
#endif
