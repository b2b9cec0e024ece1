/* offsets: the table ss_offsets (see offsets.h). */
#include <string.h>

#include "db/offsets.h"
#include "db/statefile.h"

void
ss_offsets_create(sqlite3 *db, const char *path)
{
	ss_statefile_exec(db, path, "CREATE TABLE IF NOT EXISTS ss_offsets(topic TEXT NOT NULL,"
			  " partition INTEGER NOT NULL, offset INTEGER NOT NULL,"
			  " PRIMARY KEY(topic, partition)) WITHOUT ROWID", "create ss_offsets");
}

void
ss_offsets_init(struct ss_offsets *o, sqlite3 *db, const char *path)
{
	*o = (struct ss_offsets){.db = db, .path = path};
}

void
ss_offsets_free(struct ss_offsets *o)
{
	sqlite3_finalize(o->get);
	sqlite3_finalize(o->put);
	o->get = o->put = NULL;
}

int64_t
ss_offsets_get(struct ss_offsets *o, const char *topic, int32_t partition)
{
	int64_t v = -1;

	if (o->get == NULL)
		o->get = ss_statefile_prepare(o->db, o->path, "SELECT offset FROM ss_offsets"
					      " WHERE topic = ?1 AND partition = ?2", "read offsets");
	sqlite3_bind_text(o->get, 1, topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(o->get, 2, partition);
	if (ss_statefile_step(o->get, o->path, "read offsets") == SQLITE_ROW &&
	    sqlite3_column_type(o->get, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(o->get, 0);
	sqlite3_reset(o->get);
	return v;
}

void
ss_offsets_put(struct ss_offsets *o, const char *topic, int32_t partition, int64_t offset)
{
	if (o->put == NULL)
		o->put = ss_statefile_prepare(o->db, o->path, "INSERT OR REPLACE INTO"
					      " ss_offsets(topic, partition, offset) VALUES (?1, ?2, ?3)",
					      "write offsets");
	sqlite3_bind_text(o->put, 1, topic, -1, SQLITE_STATIC);
	sqlite3_bind_int(o->put, 2, partition);
	sqlite3_bind_int64(o->put, 3, offset);
	ss_statefile_done(o->put, o->path, "write offsets");
}

void
ss_offsets_each(sqlite3 *db, const char *path,
		void (*cb)(const char *topic, int32_t partition, int64_t offset, void *arg), void *arg)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "SELECT topic, partition, offset FROM ss_offsets"
				    " ORDER BY topic, partition", -1, &st, NULL);

	if (rc != SQLITE_OK && strstr(sqlite3_errmsg(db), "no such table"))
		return;
	if (rc != SQLITE_OK)
		ss_statefile_die(db, path, rc, "read offsets");
	while (ss_statefile_step(st, path, "read offsets") == SQLITE_ROW)
		cb((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
		   sqlite3_column_int64(st, 2), arg);
	sqlite3_finalize(st);
}
