/* seeks: the table ss_seek_request (see seeks.h). */
#include <string.h>

#include "db/seeks.h"
#include "db/statefile.h"

void
ss_seeks_create(sqlite3 *db, const char *path)
{
	ss_statefile_exec(db, path, "CREATE TABLE IF NOT EXISTS ss_seek_request("
			  " checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,"
			  " offset INTEGER NOT NULL, PRIMARY KEY(checkpoint, topic, partition))",
			  "create tables");
}

void
ss_seeks_put(sqlite3 *db, const char *path, const char *checkpoint, const char *topic,
	     int32_t partition, int64_t offset)
{
	sqlite3_stmt *st = ss_statefile_prepare(db, path, "INSERT OR REPLACE INTO"
						" ss_seek_request(checkpoint, topic, partition, offset)"
						" VALUES(?1, ?2, ?3, ?4)", "prepare");

	sqlite3_bind_text(st, 1, checkpoint, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, partition);
	sqlite3_bind_int64(st, 4, offset);
	ss_statefile_done(st, path, "write");
	sqlite3_finalize(st);
}

void
ss_seeks_each(sqlite3 *db, const char *path, const char *checkpoint,
	      void (*cb)(const char *, int32_t, int64_t, void *), void *arg)
{
	sqlite3_stmt *st = ss_statefile_prepare(db, path, "SELECT topic, partition, offset FROM"
						" ss_seek_request WHERE checkpoint = ?1"
						" ORDER BY topic, partition", "prepare");

	sqlite3_bind_text(st, 1, checkpoint, -1, SQLITE_STATIC);
	while (ss_statefile_step(st, path, "read offsets") == SQLITE_ROW)
		cb((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
		   sqlite3_column_int64(st, 2), arg);
	sqlite3_finalize(st);
}

/* ---- taking them (ss-consume): a failure is an answer, not an exit ---- */

/* Collect one checkpoint's requests, call cb for each, delete them; the caller holds
 * the write lock, so nobody adds a request between the read and the delete. */
static int
take_locked(sqlite3 *db, const char *checkpoint,
	    void (*cb)(const char *, int32_t, int64_t, void *), void *arg)
{
	sqlite3_stmt *sel = NULL, *del = NULL;
	int n = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT topic, partition, offset FROM ss_seek_request"
			       " WHERE checkpoint = ?1 ORDER BY topic, partition", -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "DELETE FROM ss_seek_request WHERE checkpoint = ?1",
			       -1, &del, NULL) != SQLITE_OK) {
		n = -1;
		goto out;
	}
	sqlite3_bind_text(sel, 1, checkpoint, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		cb((const char *)sqlite3_column_text(sel, 0), sqlite3_column_int(sel, 1),
		   sqlite3_column_int64(sel, 2), arg);
		n++;
	}
	sqlite3_bind_text(del, 1, checkpoint, -1, SQLITE_STATIC);
	if (rc != SQLITE_DONE || sqlite3_step(del) != SQLITE_DONE)
		n = -1;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	return n;
}

/* Is there anything to take? A plain read, so the common answer (no) takes no lock. */
static int
pending(sqlite3 *db, const char *checkpoint)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM ss_seek_request WHERE checkpoint = ?1"
			       " LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return strstr(sqlite3_errmsg(db), "no such table") ? 0 : -1;
	sqlite3_bind_text(st, 1, checkpoint, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int
ss_seeks_take(const char *db_path, const char *checkpoint,
	      void (*cb)(const char *topic, int32_t partition, int64_t offset, void *arg), void *arg)
{
	sqlite3 *db = NULL;
	int n;

	/* No CREATE: a state file that does not exist yet has no requests. */
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	sqlite3_busy_timeout(db, 5000);
	n = pending(db, checkpoint);
	if (n > 0) {
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			n = -1;
		else if ((n = take_locked(db, checkpoint, cb, arg)) < 0 ||
			 sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			n = -1;
		}
	}
	sqlite3_close(db);
	return n;
}
