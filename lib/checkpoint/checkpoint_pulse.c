/* checkpoint_pulse: the dependent stream's side: its marker against the dependencies'
 * heartbeats, downtime episodes, recovery with seek requests, events
 * (ss_checkpoint_pulse_*). */
#include <stdlib.h>
#include <string.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_impl.h"
#include "base/diag.h"
#include "db/seeks.h"
#include "db/statefile.h"
#include "base/sstime.h"

static const char sql_offsets_saved[] = "SELECT topic, partition, saved FROM"
    " ss_checkpoint_offset WHERE checkpoint = ?1 AND saved IS NOT NULL ORDER BY topic, partition";

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
	sqlite3_stmt *st_marker, *st_since, *st_ckoff, *st_heartbeats, *st_dep_parts;
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

/* Read the heartbeats the other process wrote. With load, also what pulse itself
 * keeps there (since, down), once at open. */
static void
deps_read(ss_checkpoint_pulse *p, bool load)
{
	sqlite3_stmt *st = p->st_heartbeats;
	int64_t now = ss_time_now();
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pdep *d = dep_find(p, (const char *)sqlite3_column_text(st, 0));

		if (!d)
			continue;
		if (ck_dep_heartbeat(st, p->st_dep_parts, now, &d->marker))
			d->heard = true;
		d->waiting = sqlite3_column_int(st, 5) > 0;
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
	sqlite3_stmt *st = ck_prep(p->db, "INSERT INTO ss_checkpoint_event(checkpoint, kind,"
	    " dependency, json) VALUES(?1, ?2, ?3, ?4)");
	jv text = jv_dump_string(ev, 0);

	ck_text_bind(st, 1, p->checkpoint);
	ck_text_bind(st, 2, kind);
	ck_text_bind(st, 3, dependency);
	ck_text_bind(st, 4, jv_string_value(text));
	ck_done(st);
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
	sqlite3_stmt *st = ck_prep(p->db, "SELECT seq, kind, dependency, json FROM"
	    " ss_checkpoint_event WHERE checkpoint = ?1 ORDER BY seq LIMIT 1");
	sqlite3_stmt *del = ck_prep(p->db, "DELETE FROM ss_checkpoint_event WHERE seq = ?1");
	int rc;

	ck_text_bind(st, 1, p->checkpoint);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(st, 0);
		char *kind = column_dup(st, 1), *dep = column_dup(st, 2), *json = column_dup(st, 3);

		sqlite3_reset(st);
		p->on_event(kind, dep, json, p->arg);
		sqlite3_bind_int64(del, 1, seq);
		ck_done(del);
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
	jv e = ck_set(jv_object(), "event", jv_string("downtime"));

	e = ck_set(e, "checkpoint", jv_string(p->checkpoint));
	e = ck_set(e, "dependency", jv_string(d->name));
	e = ck_set(e, "dependent_marker", ck_time_jv(p->marker));
	e = ck_set(e, "dependency_marker", d->heard ? ck_time_jv(d->marker) : jv_null());
	e = ck_set(e, "lag", ck_seconds_jv(p->marker - dep_heartbeat(d)));
	e = ck_set(e, "threshold", ck_seconds_jv(d->threshold));
	e = ck_set(e, "offsets", ck_offsets_jv(p->db, sql_offsets_saved, p->checkpoint));
	return ck_set(e, "time", ck_time_jv(now));
}

static jv
recovery_jv(ss_checkpoint_pulse *p, int64_t now)
{
	jv e = ck_set(jv_object(), "event", jv_string("recovery"));
	jv deps = jv_array();
	int i;

	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (d->down)
			deps = jv_array_append(deps, ck_set(ck_set(jv_object(), "dependency",
			    jv_string(d->name)), "dependency_marker", ck_time_jv(d->marker)));
	}
	e = ck_set(e, "checkpoint", jv_string(p->checkpoint));
	e = ck_set(e, "dependencies", deps);
	e = ck_set(e, "dependent_marker", ck_time_jv(p->down_marker));
	e = ck_set(e, "seek", ck_offsets_jv(p->db, sql_offsets_saved, p->checkpoint));
	e = ck_set(e, "downtime", ck_seconds_jv(now - p->episode_start));
	return ck_set(e, "time", ck_time_jv(now));
}

/* Inside the transaction that also stores the record which tripped it. */
static void
episode_begin(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *ck = ck_prep(p->db, "UPDATE ss_checkpoint SET down_marker = ?2,"
	    " episode_start = ?3, episode_end = NULL WHERE name = ?1");
	sqlite3_stmt *save = ck_prep(p->db, "UPDATE ss_checkpoint_offset SET saved = offset"
	    " WHERE checkpoint = ?1");
	sqlite3_stmt *down = ck_prep(p->db, "UPDATE ss_checkpoint_dependency SET down = 1"
	    " WHERE checkpoint = ?1 AND name = ?2");
	sqlite3_stmt *hist = ck_prep(p->db, "INSERT INTO ss_checkpoint_episode(checkpoint,"
	    " dependency, began) VALUES(?1, ?2, ?3)");
	int64_t now = ck_wall_now();
	int i;

	p->episode_start = now;
	ck_text_bind(hist, 1, p->checkpoint);
	sqlite3_bind_int64(hist, 3, now);
	ck_text_bind(ck, 1, p->checkpoint);
	sqlite3_bind_int64(ck, 2, p->down_marker);
	sqlite3_bind_int64(ck, 3, now);
	ck_done(ck);
	ck_text_bind(save, 1, p->checkpoint);
	ck_done(save);
	ck_text_bind(down, 1, p->checkpoint);
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (!d->down)
			continue;
		ck_text_bind(down, 2, d->name);
		ck_done(down);
		ck_text_bind(hist, 2, d->name);
		ck_done(hist);
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
	sqlite3_stmt *st = ck_prep(p->db, "SELECT topic, partition, saved FROM"
	    " ss_checkpoint_offset WHERE checkpoint = ?1 AND saved IS NOT NULL");

	ck_text_bind(st, 1, p->checkpoint);
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
	int64_t now = ck_wall_now();
	size_t i;
	int j;

	ck_begin(p->db);
	event_add(p, "recovery", NULL, recovery_jv(p, now));
	seeks_request(p);
	for (i = 0; i < sizeof sql / sizeof *sql; i++) {
		sqlite3_stmt *st = ck_prep(p->db, sql[i]);

		ck_text_bind(st, 1, p->checkpoint);
		if (sqlite3_bind_parameter_count(st) == 2)
			sqlite3_bind_int64(st, 2, now);
		ck_done(st);
		sqlite3_finalize(st);
	}
	ck_commit(p->db);
	for (j = 0; j < p->ndeps; j++)
		p->deps[j].down = false;
	p->paused = false;
}

/* The partitions' markers, each counting as heard from now (a restart is no silence
 * of the stream). Rows from a version without markers give none. */
static void
parts_load(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = ck_prep(p->db, "SELECT topic, partition, offset, marker, state FROM"
	    " ss_checkpoint_offset WHERE checkpoint = ?1");
	int rc;

	ck_text_bind(st, 1, p->checkpoint);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ckpart *pt = ckparts_get(&p->ps, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int(st, 1));

		pt->env.offset = sqlite3_column_int64(st, 2);
		pt->written = ck_column_state(st, 4);
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
	sqlite3_stmt *st = ck_prep(p->db, "INSERT INTO ss_checkpoint_episode(checkpoint,"
	    " dependency, began) SELECT ?1, name, ?2 FROM ss_checkpoint_dependency"
	    " WHERE checkpoint = ?1 AND down = 1 AND NOT EXISTS (SELECT 1 FROM"
	    " ss_checkpoint_episode WHERE checkpoint = ?1 AND ended IS NULL)");

	ck_text_bind(st, 1, p->checkpoint);
	sqlite3_bind_int64(st, 2, p->episode_start);
	ck_done(st);
	sqlite3_finalize(st);
}

static void
pulse_load(ss_checkpoint_pulse *p)
{
	sqlite3_stmt *st = ck_prep(p->db, "SELECT marker, down_marker, episode_start FROM"
	    " ss_checkpoint WHERE name = ?1");

	ck_text_bind(st, 1, p->checkpoint);
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
	sqlite3_stmt *ck = ck_prep(p->db, "INSERT OR IGNORE INTO ss_checkpoint(name)"
	    " VALUES(?1)");
	sqlite3_stmt *dep = ck_prep(p->db, "INSERT INTO ss_checkpoint_dependency(checkpoint,"
	    " name, threshold) VALUES(?1, ?2, ?3) ON CONFLICT(checkpoint, name) DO UPDATE"
	    " SET threshold = excluded.threshold");
	int i;

	ck_begin(p->db);
	ck_text_bind(ck, 1, p->checkpoint);
	ck_done(ck);
	ck_text_bind(dep, 1, p->checkpoint);
	for (i = 0; i < p->ndeps; i++) {
		ck_text_bind(dep, 2, p->deps[i].name);
		sqlite3_bind_int64(dep, 3, p->deps[i].threshold);
		ck_done(dep);
	}
	ck_commit(p->db);
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
	p->db = ck_open(db_path, false);
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
	p->st_marker = ck_prep(p->db, "UPDATE ss_checkpoint SET marker = ?2 WHERE name = ?1");
	p->st_since = ck_prep(p->db, "UPDATE ss_checkpoint_dependency SET since = ?3"
	    " WHERE checkpoint = ?1 AND name = ?2 AND since IS NULL");
	p->st_ckoff = ck_prep(p->db, "INSERT INTO ss_checkpoint_offset(checkpoint, topic,"
	    " partition, offset, marker, seen, idle, state) VALUES(:checkpoint, :topic,"
	    " :partition, :offset, :marker, :seen, :idle, :state) ON CONFLICT(checkpoint, topic,"
	    " partition) DO UPDATE SET offset = excluded.offset, marker = coalesce("
	    "excluded.marker, marker), seen = excluded.seen, idle = excluded.idle,"
	    " state = excluded.state");
	ss_offsets_init(&p->offsets, p->db, NULL);
	p->st_heartbeats = ck_prep(p->db, ck_sql_deps);
	p->st_dep_parts = ck_prep(p->db, ck_sql_dep_parts);
	ck_text_bind(p->st_marker, 1, p->checkpoint);
	ck_text_bind(p->st_since, 1, p->checkpoint);
	ck_named_text(p->st_ckoff, ":checkpoint", p->checkpoint);
	ck_bind_named(p->st_ckoff, ":idle", parts->idle);
	ck_text_bind(p->st_heartbeats, 1, p->checkpoint);
	ck_text_bind(p->st_dep_parts, 1, p->checkpoint);
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
	ck_begin(p->db);
	if (p->marker_dirty && p->have_marker)
		sqlite3_bind_int64(p->st_marker, 2, p->marker);
	else if (p->marker_dirty)
		sqlite3_bind_null(p->st_marker, 2);
	if (p->marker_dirty)
		ck_done(p->st_marker);
	for (i = 0; i < p->ndeps; i++) {
		struct pdep *d = &p->deps[i];

		if (!d->since_dirty)
			continue;
		ck_text_bind(p->st_since, 2, d->name);
		sqlite3_bind_int64(p->st_since, 3, d->since);
		ck_done(p->st_since);
		d->since_dirty = false;
	}
	ck_parts_write(&p->ps, &p->offsets, p->st_ckoff, false);
	if (starting)
		episode_begin(p);
	deps_read(p, false);
	ck_commit(p->db);
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
	sqlite3_finalize(p->st_dep_parts);
	sqlite3_close(p->db);
	for (i = 0; i < p->ndeps; i++)
		free(p->deps[i].name);
	free(p->deps);
	ckparts_free(&p->ps);
	free(p->checkpoint);
	free(p);
}
