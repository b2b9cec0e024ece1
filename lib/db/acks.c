/* acks: delivery receipts in a one-row SQLite file (see acks.h). */
#include <stdbool.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "db/acks.h"
#include "base/diag.h"
#include "db/statefile.h"

struct ss_acks {
	char *path;
	sqlite3 *db;
	int64_t run;     /* the token of the run started or joined, 0 before */
	uint64_t reported;
	bool warned;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS ss_acks(id INTEGER PRIMARY KEY CHECK (id = 1),"
	" run INTEGER NOT NULL, delivered INTEGER NOT NULL);";

static void
warn_once(ss_acks *a, const char *what)
{
	if (a->warned)
		return;
	a->warned = true;
	ss_diag_warn("%s: %s: %s", a->path, what, sqlite3_errmsg(a->db));
}

ss_acks *
ss_acks_open(const char *path)
{
	ss_acks *a = ss_xmalloc(sizeof *a);

	*a = (struct ss_acks){.path = ss_xstrdup(path)};
	a->db = ss_statefile_open(path, false);
	ss_statefile_check(a->db, path, SS_STATE_ACKS);
	ss_statefile_wal(a->db, path); /* both ends open the file at once: they take turns */
	ss_statefile_exec(a->db, path, schema, "schema");
	ss_statefile_mark(a->db, path, SS_STATE_ACKS);
	return a;
}

void
ss_acks_close(ss_acks *a)
{
	if (a == NULL)
		return;
	sqlite3_close(a->db);
	free(a->path);
	free(a);
}

const char *
ss_acks_path(const ss_acks *a)
{
	return a->path;
}

/* Run one statement binding ?1 = run, ?2 = n; SQLITE_DONE or SQLITE_ROW on success, and
 * *out the first column of a row. */
static int
exec1(ss_acks *a, const char *sql, int64_t n, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, a->run);
	sqlite3_bind_int64(st, 2, n);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && out != NULL)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

void
ss_acks_start(ss_acks *a)
{
	int rc;

	/* a token no earlier run had: random, and never 0 */
	do
		sqlite3_randomness(sizeof a->run, &a->run);
	while (a->run == 0);
	rc = exec1(a, "INSERT OR REPLACE INTO ss_acks(id, run, delivered) VALUES (1, ?1, ?2)", 0, NULL);
	if (rc != SQLITE_DONE)
		ss_statefile_die(a->db, a->path, rc, "start a run");
	a->reported = 0;
}

uint64_t
ss_acks_delivered(ss_acks *a)
{
	int64_t n = 0;
	int rc = exec1(a, "SELECT delivered FROM ss_acks WHERE id = 1 AND run = ?1", 0, &n);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		warn_once(a, "cannot read the delivered count");
	return rc == SQLITE_ROW && n > 0 ? (uint64_t)n : 0;
}

void
ss_acks_join(ss_acks *a)
{
	int rc = exec1(a, "SELECT run FROM ss_acks WHERE id = 1", 0, &a->run);

	if (rc == SQLITE_DONE)
		ss_acks_start(a); /* no writer started one: count for whoever reads the file */
	else if (rc != SQLITE_ROW)
		ss_statefile_die(a->db, a->path, rc, "join the writer's run");
}

void
ss_acks_report(ss_acks *a, uint64_t n)
{
	int rc;

	if (n <= a->reported)
		return;
	rc = exec1(a, "UPDATE ss_acks SET delivered = ?2 WHERE id = 1 AND run = ?1 AND delivered < ?2",
		   (int64_t)n, NULL);
	if (rc != SQLITE_DONE)
		warn_once(a, "cannot record delivered lines");
	else
		a->reported = n;
}
