/* checkpoint: see checkpoint.h for the tables and the ownership rules. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "diag.h"

/* Collect one checkpoint's requests, call cb for each, delete them; the caller holds
 * the write lock, so nobody adds a request between the read and the delete. */
static int
seeks_take_locked(sqlite3 *db, const char *checkpoint,
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
seeks_pending(sqlite3 *db, const char *checkpoint)
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
ss_checkpoint_take_seeks(const char *db_path, const char *checkpoint,
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
	n = seeks_pending(db, checkpoint);
	if (n > 0) {
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			n = -1;
		else if ((n = seeks_take_locked(db, checkpoint, cb, arg)) < 0 ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			n = -1;
		}
	}
	sqlite3_close(db);
	return n;
}
