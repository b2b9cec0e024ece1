/* statefile: opening a state file and knowing its kind (see statefile.h). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/diag.h"
#include "stream/wfile.h"
#include "db/statefile.h"
#include "base/sstime.h"

#define KIND_NONE SS_STATE_ANY     /* a file with nothing of ss in it (new, or empty) */
#define KIND_FOREIGN SS_STATE__N   /* some other application's database */

/* The tags are four letters, "ssCA" ...: a hex dump of the header shows whose file it
 * is. Versions: 1 is the first marked format; 0 an unmarked file of an earlier ss. The
 * newest version a kind knows is here; ss-cache 2 is its rowid layout (lib/db/store.c),
 * whose files keep 1 while they have the first layout. */
static const struct {
	int id, version;
	const char *name;
} kinds[SS_STATE__N] = {
	[SS_STATE_ANY] = {0, 0, "ss state"},
	[SS_STATE_CACHE] = {0x73734341, 2, "ss-cache state"},
	[SS_STATE_CHECKPOINT] = {0x73734350, 1, "ss-checkpoint state"},
	[SS_STATE_ASOF] = {0x7373414a, 1, "ss-asof state"},
	[SS_STATE_ACKS] = {0x73734141, 1, "ss --acks file"},
};

int
ss_statefile_exit_code(int rc, int sys_errno)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
	case SQLITE_PROTOCOL:
		return SS_EXIT_TEMPFAIL;
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
		return sys_errno == EMFILE || sys_errno == ENFILE || sys_errno == ENOMEM ||
		       sys_errno == EAGAIN || sys_errno == EINTR ? SS_EXIT_TEMPFAIL : SS_EXIT_DATA;
	default:
		return SS_EXIT_DATA;
	}
}

static const sqlite3 *failed; /* the connection ss_statefile_die exits for */

bool
ss_statefile_failed(const sqlite3 *db)
{
	return db != NULL && db == failed;
}

_Noreturn void
ss_statefile_die(sqlite3 *db, const char *path, int rc, const char *what)
{
	int err = db != NULL ? sqlite3_system_errno(db) : 0;

	if (path == NULL) {
		path = db != NULL ? sqlite3_db_filename(db, "main") : NULL;
		path = path != NULL && *path != '\0' ? path : "?";
	}
	failed = db;
	ss_diag_die(ss_statefile_exit_code(rc, err), "%s: %s: %s%s%s%s", path, what,
		    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc), err ? " (" : "",
		    err ? strerror(err) : "", err ? ")" : "");
}

/* ---- opening ---- */

/* What can be said before SQLite tries: a directory, a parent directory that is missing
 * or cannot be written. */
static void
precheck(const char *path, bool readonly)
{
	struct stat st;
	char *copy, *dir;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			ss_diag_die(SS_EXIT_DATA, "%s: is a directory, not a state file", path);
		return;
	}
	if (errno != ENOENT || readonly)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, strerror(errno));
	copy = ss_xstrdup(path);
	dir = dirname(copy);
	if (stat(dir, &st) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot create: directory %s: %s", path, dir,
			    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		ss_diag_die(SS_EXIT_DATA, "%s: cannot create: %s is not a directory", path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: cannot create: directory %s: %s", path, dir,
			    strerror(errno));
	free(copy);
}

/* Open and read the schema (which is where "not a database" or a missing -shm shows).
 * NULL with *rc, *sys and why (the message) on failure. */
static sqlite3 *
try_open(const char *name, int flags, int *rc, int *sys, ss_buf *why)
{
	sqlite3 *db = NULL;

	*rc = sqlite3_open_v2(name, &db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
	if (*rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 5000);
		*rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	}
	if (*rc == SQLITE_OK)
		return db;
	*sys = db != NULL ? sqlite3_system_errno(db) : 0;
	ss_buf_reset(why);
	ss_buf_adds(why, db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(*rc));
	sqlite3_close(db);
	return NULL;
}

/* file:PATH?immutable=1, with the characters a URI gives meaning escaped. */
static void
immutable_uri(ss_buf *b, const char *path)
{
	ss_buf_adds(b, path[0] == '/' ? "file://" : "file:");
	for (const char *p = path; *p; p++) {
		char esc[4];
		if (*p == '%' || *p == '?' || *p == '#') {
			snprintf(esc, sizeof esc, "%%%02X", (unsigned char)*p);
			ss_buf_adds(b, esc);
		} else {
			ss_buf_add(b, p, 1);
		}
	}
	ss_buf_adds(b, "?immutable=1");
}

/* Does path+suffix exist with something in it? */
static bool
side_file(const char *path, const char *suffix)
{
	char name[4096];
	struct stat st;

	snprintf(name, sizeof name, "%s%s", path, suffix);
	return stat(name, &st) == 0 && st.st_size > 0;
}

static bool
busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

static sqlite3 *
open_readonly(const char *path)
{
	ss_buf why = {0}, uri = {0};
	int rc = SQLITE_OK, sys;
	sqlite3 *db = NULL;

	if (access(path, W_OK) == 0)
		db = try_open(path, SQLITE_OPEN_READWRITE, &rc, &sys, &why);
	if (db == NULL && !busy(rc))
		db = try_open(path, SQLITE_OPEN_READONLY, &rc, &sys, &why);
	if (db == NULL && busy(rc)) /* a writer at work: not a case for the fallbacks */
		ss_diag_die(SS_EXIT_TEMPFAIL, "%s: cannot read: %s", path, ss_buf_cstr(&why));
	if (db == NULL && side_file(path, "-journal"))
		ss_diag_die(SS_EXIT_DATA, "%s: a writer that died left a hot journal (%s-journal) that "
			    "only a process allowed to write the file can roll back: run its writer, "
			    "or read it as a user who may write it", path, path);
	if (db == NULL && !side_file(path, "-wal")) {
		/* a read-only directory, where the -shm cannot be made: nothing can write there */
		immutable_uri(&uri, path);
		db = try_open(ss_buf_cstr(&uri), SQLITE_OPEN_READONLY, &rc, &sys, &why);
	}
	if (db == NULL)
		ss_diag_die(ss_statefile_exit_code(rc, sys), "%s: cannot read: %s%s%s%s", path, ss_buf_cstr(&why),
			    sys ? " (" : "", sys ? strerror(sys) : "", sys ? ")" : "");
	ss_buf_free(&why);
	ss_buf_free(&uri);
	return db;
}

sqlite3 *
ss_statefile_open(const char *path, bool readonly)
{
	ss_buf why = {0};
	sqlite3 *db;
	int rc, sys;

	const char *link_why;

	if (*path != '\0')
		precheck(path, readonly);
	if (readonly)
		return open_readonly(path);
	if (*path != '\0' && !ss_wfile_refuse_links(path, &link_why))
		ss_diag_die(SS_EXIT_DATA, "%s: %s", path, link_why);
	db = try_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &rc, &sys, &why);
	if (db == NULL)
		ss_diag_die(ss_statefile_exit_code(rc, sys), "%s: cannot open: %s%s%s%s", path, ss_buf_cstr(&why),
			    sys ? " (" : "", sys ? strerror(sys) : "", sys ? ")" : "");
	ss_buf_free(&why);
	return db;
}

/* ---- kinds ---- */

static int
pragma_int(sqlite3 *db, const char *path, const char *sql)
{
	sqlite3_stmt *st = ss_statefile_prepare(db, path, sql, sql);
	int v = 0;

	if (ss_statefile_step(st, path, sql) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The kind an unmarked file's tables say (an earlier ss wrote no mark); *other names a
 * table that is none of ss's (malloc'd) for a foreign file. */
static int
kind_from_tables(sqlite3 *db, const char *path, char **other)
{
	sqlite3_stmt *st = ss_statefile_prepare(db, path, "SELECT name FROM sqlite_master"
						" WHERE type = 'table'", "read tables");
	int kind = KIND_NONE;

	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		int k = strncmp(t, "ss_checkpoint", 13) == 0 || strcmp(t, "ss_seek_request") == 0 ?
			SS_STATE_CHECKPOINT : strncmp(t, "asof_", 5) == 0 ? SS_STATE_ASOF :
			strcmp(t, "ss_acks") == 0 ? SS_STATE_ACKS : strcmp(t, "ss_kv") == 0 ?
			SS_STATE_CACHE : strcmp(t, "ss_offsets") == 0 || strncmp(t, "sqlite_", 7) == 0 ?
			KIND_NONE : KIND_FOREIGN;
		if (k == KIND_FOREIGN && *other == NULL)
			*other = ss_xstrdup(t);
		/* an ss-asof state holds a cache's tables too */
		if (k != KIND_NONE && k != KIND_FOREIGN && (kind == KIND_NONE || kind == SS_STATE_CACHE))
			kind = k;
	}
	sqlite3_finalize(st);
	return kind == KIND_NONE && *other != NULL ? KIND_FOREIGN : kind;
}

static int
kind_of_id(int id)
{
	for (int k = 1; k < SS_STATE__N; k++)
		if (kinds[k].id == id)
			return k;
	return KIND_FOREIGN;
}

void
ss_statefile_check(sqlite3 *db, const char *path, enum ss_state_kind kind)
{
	int id, version, found;
	char *other = NULL;

	if (kind == SS_STATE_ANY || *path == '\0')
		return;
	id = pragma_int(db, path, "PRAGMA application_id");
	version = pragma_int(db, path, "PRAGMA user_version");
	found = id != 0 ? kind_of_id(id) : kind_from_tables(db, path, &other);
	if (found == KIND_FOREIGN && id != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: a database of another application (application_id "
			    "0x%08x), not an %s", path, (unsigned)id, kinds[kind].name);
	if (found == KIND_FOREIGN)
		ss_diag_die(SS_EXIT_DATA, "%s: a database with tables of its own (%s), not an %s",
			    path, other, kinds[kind].name);
	free(other);
	if (found != KIND_NONE && found != (int)kind)
		ss_diag_die(SS_EXIT_DATA, "%s is an %s, not an %s", path, kinds[found].name,
			    kinds[kind].name);
	if (id != 0 && version > kinds[kind].version)
		ss_diag_die(SS_EXIT_DATA, "%s: an %s of format version %d, newer than this %.*s "
			    "knows (%d): use the ss that wrote it", path, kinds[kind].name, version,
			    (int)strcspn(kinds[kind].name, " "), kinds[kind].name, kinds[kind].version);
}

void
ss_statefile_mark(sqlite3 *db, const char *path, enum ss_state_kind kind)
{
	ss_statefile_mark_version(db, path, kind, kinds[kind].version);
}

void
ss_statefile_mark_version(sqlite3 *db, const char *path, enum ss_state_kind kind, int version)
{
	char sql[128];

	if (kind == SS_STATE_ANY || *path == '\0' ||
	    (pragma_int(db, path, "PRAGMA application_id") == kinds[kind].id &&
	     pragma_int(db, path, "PRAGMA user_version") == version))
		return;
	snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
		 kinds[kind].id, version);
	ss_statefile_exec(db, path, sql, "mark the kind of state");
}

/* ---- statements ---- */

void
ss_statefile_exec(sqlite3 *db, const char *path, const char *sql, const char *what)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		ss_statefile_die(db, path, rc, what);
}

sqlite3_stmt *
ss_statefile_prepare(sqlite3 *db, const char *path, const char *sql, const char *what)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		ss_statefile_die(db, path, rc, what);
	return st;
}

int
ss_statefile_step(sqlite3_stmt *st, const char *path, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ss_statefile_die(sqlite3_db_handle(st), path, rc, what);
	return rc;
}

void
ss_statefile_done(sqlite3_stmt *st, const char *path, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		ss_statefile_die(sqlite3_db_handle(st), path, rc, what);
	sqlite3_reset(st);
}

void
ss_statefile_wal(sqlite3 *db, const char *path)
{
	for (int i = 0;; i++) {
		int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			break;
		if (!busy(rc) || i == 50)
			ss_statefile_die(db, path, rc, "journal_mode=WAL");
		ss_time_sleep_ms(100);
	}
	ss_statefile_exec(db, path, "PRAGMA synchronous=NORMAL", "synchronous=NORMAL");
}
