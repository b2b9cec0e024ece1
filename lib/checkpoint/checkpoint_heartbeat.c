/* checkpoint_heartbeat: a dependency's marker and its partitions, written for the
 * pulse to read (ss_checkpoint_hb_*). */
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_impl.h"
#include "base/diag.h"
#include "db/statefile.h"

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


/* The partitions it knows count as heard from now, as after any restart: one a
 * heartbeat reads again must not have turned idle while the heartbeat was away. */
static void
hb_touch(ss_checkpoint_hb *h)
{
	sqlite3_stmt *st = ck_prep(h->db, "UPDATE ss_checkpoint_dependency_partition"
	    " SET seen = ?3 WHERE checkpoint = ?1 AND name = ?2");

	ck_text_bind(st, 1, h->checkpoint);
	ck_text_bind(st, 2, h->dependency);
	sqlite3_bind_int64(st, 3, ck_wall_now());
	ck_done(st);
	sqlite3_finalize(st);
}

/* The partitions of earlier runs, with their markers: one that this run's writer lists
 * holds the heartbeat at its marker until it delivers more, one it does not list is
 * done (see checkpoint_parts.h). */
static void
hb_load(ss_checkpoint_hb *h)
{
	sqlite3_stmt *st = ck_prep(h->db, "SELECT topic, partition, marker, state FROM"
	    " ss_checkpoint_dependency_partition WHERE checkpoint = ?1 AND name = ?2");
	int rc;

	ck_text_bind(st, 1, h->checkpoint);
	ck_text_bind(st, 2, h->dependency);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ckpart *p = ckparts_get(&h->ps, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int(st, 1));

		p->wm.maxt = sqlite3_column_int64(st, 2);
		p->written = ck_column_state(st, 3);
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(h->db, NULL, rc, "read partitions");
	sqlite3_finalize(st);
}

static void
hb_prepare(ss_checkpoint_hb *h, int64_t idle)
{
	/* max of both, ignoring a NULL: a heartbeat never goes back in time */
	h->beat = ck_prep(h->db, "INSERT INTO ss_checkpoint_dependency(checkpoint, name, marker)"
	    " VALUES(?1, ?2, ?3) ON CONFLICT(checkpoint, name) DO UPDATE SET marker ="
	    " max(coalesce(marker, excluded.marker), coalesce(excluded.marker, marker))");
	h->waiting = ck_prep(h->db, "UPDATE ss_checkpoint_dependency SET waiting = ?3"
	    " WHERE checkpoint = ?1 AND name = ?2");
	ss_offsets_init(&h->offsets, h->db, NULL);
	/* a partition's marker never goes back either */
	h->parts = ck_prep(h->db, "INSERT INTO ss_checkpoint_dependency_partition(checkpoint,"
	    " name, topic, partition, marker, seen, idle, state) VALUES(:checkpoint, :name,"
	    " :topic, :partition, :marker, :seen, :idle, :state) ON CONFLICT(checkpoint, name,"
	    " topic, partition) DO UPDATE SET marker = max(marker, excluded.marker),"
	    " seen = excluded.seen, idle = excluded.idle, state = excluded.state");
	ck_text_bind(h->beat, 1, h->checkpoint);
	ck_text_bind(h->beat, 2, h->dependency);
	ck_text_bind(h->waiting, 1, h->checkpoint);
	ck_text_bind(h->waiting, 2, h->dependency);
	ck_named_text(h->parts, ":checkpoint", h->checkpoint);
	ck_named_text(h->parts, ":name", h->dependency);
	ck_bind_named(h->parts, ":idle", idle);
}

ss_checkpoint_hb *
ss_checkpoint_hb_open(const char *db_path, const char *checkpoint, const char *dependency,
    const struct ss_checkpoint_parts *parts)
{
	ss_checkpoint_hb *h = ss_xmalloc(sizeof *h);

	memset(h, 0, sizeof *h);
	h->db = ck_open(db_path, false);
	h->checkpoint = ss_xstrdup(checkpoint);
	h->dependency = ss_xstrdup(dependency);
	h->waiting_written = -1;
	ckparts_init(&h->ps, parts->idle, parts->expect);
	hb_prepare(h, parts->idle);
	/* the row exists from the start, so status lists the dependency at once */
	ck_begin(h->db);
	ck_done(h->beat);
	hb_touch(h);
	hb_load(h);
	ck_commit(h->db);
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
	ck_begin(h->db);
	if (h->dirty) {
		sqlite3_bind_int64(h->beat, 3, h->marker);
		ck_done(h->beat);
	}
	if (waiting != h->waiting_written) {
		sqlite3_bind_int(h->waiting, 3, waiting);
		ck_done(h->waiting);
	}
	ck_parts_write(&h->ps, &h->offsets, h->parts, true);
	ck_commit(h->db);
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
