/* checkpoint_status: each checkpoint as NDJSON or as a table, with the timeline of the
 * last day for a terminal (ss_checkpoint_status). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_impl.h"
#include "base/diag.h"
#include "db/seeks.h"
#include "db/statefile.h"
#include "base/sstime.h"

static const char sql_offsets_now[] = "SELECT topic, partition, offset FROM"
    " ss_checkpoint_offset WHERE checkpoint = ?1 ORDER BY topic, partition";

static jv
part_state_jv(sqlite3_stmt *st, int col)
{
	static const char *const names[] = { "reading", "caught-up", "done", "revoked" };
	int state = ck_column_state(st, col);

	return state >= 0 && state <= 3 ? jv_string(names[state]) : jv_null();
}

/* The markers of a stream's partitions: [{"topic","partition","marker","seen","idle",
 * "state"}], idle as of now; state as checkpoint_parts.h, null without a writer that
 * told (or in a file from before). */
static jv
parts_jv(sqlite3 *db, const char *sql, const char *checkpoint, const char *dependency,
    int64_t now)
{
	sqlite3_stmt *st = ck_prep(db, sql);
	jv a = jv_array();
	struct ck_row r;
	int rc;

	ck_text_bind(st, 1, checkpoint);
	if (dependency)
		ck_text_bind(st, 2, dependency);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		jv o = ck_set(jv_object(), "topic",
		    jv_string((const char *)sqlite3_column_text(st, 0)));

		ck_row_read(st, 2, &r);
		o = ck_set(o, "partition", jv_number(sqlite3_column_int(st, 1)));
		o = ck_set(o, "marker", ck_column_time_jv(st, 2));
		o = ck_set(o, "seen", ck_column_time_jv(st, 3));
		o = ck_set(o, "idle", jv_bool(ss_partwm_idle(&r.rule, &r.wm, r.state, now)));
		a = jv_array_append(a, ck_set(o, "state", part_state_jv(st, 5)));
	}
	if (rc != SQLITE_DONE)
		ss_statefile_die(db, NULL, rc, "read partitions");
	sqlite3_finalize(st);
	return a;
}

/* The partition rows of table (for parts_jv and ck_row_read); states: it has the
 * state column. */
static void
parts_sql(char *buf, size_t size, const char *table, bool states, const char *where)
{
	snprintf(buf, size, "SELECT topic, partition, marker, seen, idle, %s FROM %s WHERE"
	    " checkpoint = ?1 AND %s ORDER BY topic, partition", states ? "state" : "NULL",
	    table, where);
}

/* What a state file written before partitions, or before their states, lacks (status
 * opens it read-only). */
struct status_ctx {
	sqlite3 *db;
	bool dep_parts, parts, dep_states, states, episodes;
	int64_t now;
	int cells; /* of each dependency's timeline on a terminal; 0: none */
};

static jv
status_dep_parts_jv(const struct status_ctx *c, const char *checkpoint, const char *name)
{
	char sql[512];

	if (!c->dep_parts)
		return jv_array();
	parts_sql(sql, sizeof sql, "ss_checkpoint_dependency_partition", c->dep_states,
	    "name = ?2");
	return parts_jv(c->db, sql, checkpoint, name, c->now);
}

static jv
status_deps_jv(const struct status_ctx *c, const char *checkpoint, sqlite3_stmt *ck)
{
	sqlite3_stmt *st = ck_prep(c->db, c->dep_states ? ck_sql_deps : ck_sql_deps_v1);
	sqlite3_stmt *parts = !c->dep_parts ? NULL : ck_prep(c->db, c->dep_states ?
	    ck_sql_dep_parts : ck_sql_dep_parts_v2);
	bool have_marker = ck && sqlite3_column_type(ck, 0) != SQLITE_NULL;
	jv a = jv_array();

	ck_text_bind(st, 1, checkpoint);
	if (parts)
		ck_text_bind(parts, 1, checkpoint);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int waiting = sqlite3_column_int(st, 5);
		int64_t marker, hb = sqlite3_column_int64(st, 2);
		/* none while it waits for partitions: its marker is not known */
		bool known = !waiting && ck_dep_heartbeat(st, parts, c->now, &marker);
		/* lag against the stand-in when no heartbeat came yet, as pulse counts it */
		bool lags = known || (!waiting && sqlite3_column_type(st, 2) != SQLITE_NULL);
		jv d = ck_set(jv_object(), "dependency", jv_string(name));

		if (known)
			hb = marker;
		d = ck_set(d, "state", jv_string(sqlite3_column_int(st, 3) ? "down" : "up"));
		d = ck_set(d, "marker", known ? ck_time_jv(marker) : jv_null());
		d = ck_set(d, "threshold", sqlite3_column_type(st, 4) == SQLITE_NULL ? jv_null() :
		    ck_seconds_jv(sqlite3_column_int64(st, 4)));
		d = ck_set(d, "lag", have_marker && lags ? ck_seconds_jv(sqlite3_column_int64(ck, 0) -
		    hb) : jv_null());
		d = ck_set(d, "waiting", jv_number(waiting));
		d = ck_set(d, "partitions", status_dep_parts_jv(c, checkpoint, name));
		a = jv_array_append(a, d);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(parts);
	return a;
}

/* The dependent stream's partitions (those with a marker). */
static jv
status_parts_jv(const struct status_ctx *c, const char *checkpoint)
{
	char sql[512];

	if (!c->parts)
		return jv_array();
	parts_sql(sql, sizeof sql, "ss_checkpoint_offset", c->states, "marker IS NOT NULL");
	return parts_jv(c->db, sql, checkpoint, NULL, c->now);
}

static jv
status_jv(const struct status_ctx *c, const char *checkpoint)
{
	sqlite3_stmt *ck = ck_prep(c->db, "SELECT marker, down_marker, episode_start,"
	    " episode_end FROM ss_checkpoint WHERE name = ?1");
	jv s = ck_set(jv_object(), "checkpoint", jv_string(checkpoint)), seeks;
	bool row;

	ck_text_bind(ck, 1, checkpoint);
	row = sqlite3_step(ck) == SQLITE_ROW;
	s = ck_set(s, "state", jv_string(row && sqlite3_column_type(ck, 1) != SQLITE_NULL ?
	    "down" : "up"));
	s = ck_set(s, "marker", row ? ck_column_time_jv(ck, 0) : jv_null());
	s = ck_set(s, "partitions", status_parts_jv(c, checkpoint));
	s = ck_set(s, "offsets", ck_offsets_jv(c->db, sql_offsets_now, checkpoint));
	s = ck_set(s, "dependencies", status_deps_jv(c, checkpoint, row ? ck : NULL));
	s = ck_set(s, "down_marker", row ? ck_column_time_jv(ck, 1) : jv_null());
	s = ck_set(s, "episode_start", row ? ck_column_time_jv(ck, 2) : jv_null());
	s = ck_set(s, "episode_end", row ? ck_column_time_jv(ck, 3) : jv_null());
	seeks = jv_array();
	ss_seeks_each(c->db, NULL, checkpoint, ck_offset_append, &seeks);
	s = ck_set(s, "seek_pending", seeks);
	sqlite3_finalize(ck);
	return s;
}

/* 5400 -> "1h30m", 0.25 -> "250ms", -1800 -> "-30m" */
static void
duration_format(double secs, char *buf, size_t size)
{
	static const struct { const char *unit; int64_t ms; } units[] = {
		{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 },
	};
	int64_t ms = (int64_t)(secs * 1000 + (secs < 0 ? -0.5 : 0.5));
	size_t i, n = 0;

	if (ms < 0) {
		n += snprintf(buf + n, size - n, "-");
		ms = -ms;
	}
	if (ms == 0)
		snprintf(buf + n, size - n, "0s");
	for (i = 0; i < sizeof units / sizeof *units && ms > 0 && n < size; i++) {
		if (ms < units[i].ms)
			continue;
		n += snprintf(buf + n, size - n, "%lld%s", (long long)(ms / units[i].ms),
		    units[i].unit);
		ms %= units[i].ms;
	}
}

static const char *
field_text(jv o, const char *k, char *buf, size_t size)
{
	jv v = jv_object_get(jv_copy(o), jv_string(k));

	if (jv_get_kind(v) == JV_KIND_STRING)
		snprintf(buf, size, "%s", jv_string_value(v));
	else if (jv_get_kind(v) == JV_KIND_NUMBER)
		duration_format(jv_number_value(v), buf, size);
	else
		snprintf(buf, size, "-");
	jv_free(v);
	return buf;
}

/* One line per partition of o's "partitions", under the dependent marker or under a
 * dependency's line (in its columns). */
static void
parts_table(jv o, bool dependency, FILE *out)
{
	jv parts = jv_object_get(jv_copy(o), jv_string("partitions"));
	char name[300], m[64];
	int i, n = jv_array_length(jv_copy(parts));

	for (i = 0; i < n; i++) {
		jv pt = jv_array_get(jv_copy(parts), i);
		jv num = jv_object_get(jv_copy(pt), jv_string("partition"));
		jv idle = jv_object_get(jv_copy(pt), jv_string("idle"));
		char state[32];
		/* what holds the marker no more: idle, or done (checkpoint_parts.h) */
		const char *note = jv_get_kind(idle) == JV_KIND_TRUE ? "idle" :
		    strcmp(field_text(pt, "state", state, sizeof state), "done") == 0 ? "done" : "";

		snprintf(name, sizeof name, "%s[%.0f]", field_text(pt, "topic", m, sizeof m),
		    jv_number_value(num));
		field_text(pt, "marker", m, sizeof m);
		if (dependency)
			fprintf(out, "    %-14s %-5s %s\n", name, note, m);
		else
			fprintf(out, "    %-14s  %s%s%s%s\n", name, m, *note ? " (" : "", note,
			    *note ? ")" : "");
		jv_free(num);
		jv_free(idle);
		jv_free(pt);
	}
	jv_free(parts);
}

/* A dependency whose heartbeat waits for partitions has no marker: say why. */
static void
waiting_table(jv dep, FILE *out)
{
	jv w = jv_object_get(jv_copy(dep), jv_string("waiting"));

	if (jv_get_kind(w) == JV_KIND_NUMBER && jv_number_value(w) > 0)
		fprintf(out, "    (its heartbeat waits for %.0f partition%s)\n", jv_number_value(w),
		    jv_number_value(w) == 1 ? "" : "s");
	jv_free(w);
}

/* ---- status on a terminal: a timeline of each dependency's last day ---- */

#define TIMELINE_INDENT 4
/* room kept right of the timeline for "  1h30m behind" */
#define TIMELINE_NOTE 16

/* The most cells of a day's timeline (30 min, 1 h or 2 h each) that fit in width
 * columns with the note, else the coarsest alone; 0 when not even that fits. */
static int
timeline_cells(int width)
{
	static const int cells[] = { 48, 24, 12 };
	size_t i;

	for (i = 0; i < sizeof cells / sizeof *cells; i++)
		if (TIMELINE_INDENT + cells[i] + TIMELINE_NOTE <= width)
			return cells[i];
	return TIMELINE_INDENT + cells[i - 1] <= width ? cells[i - 1] : 0;
}

/* Episodes of a dependency that end after `from` (open ones end now). A file from
 * before the episodes table knows only the one in progress. */
static sqlite3_stmt *
episodes_query(const struct status_ctx *c, const char *checkpoint, const char *dependency,
    int64_t from)
{
	sqlite3_stmt *st = ck_prep(c->db, c->episodes ?
	    "SELECT began, coalesce(ended, ?3) FROM ss_checkpoint_episode WHERE checkpoint = ?1"
	    " AND dependency = ?2 AND coalesce(ended, ?3) > ?4" :
	    "SELECT k.episode_start, ?3 FROM ss_checkpoint k JOIN ss_checkpoint_dependency d"
	    " ON d.checkpoint = k.name WHERE k.name = ?1 AND d.name = ?2 AND d.down"
	    " AND k.episode_start IS NOT NULL AND ?3 > ?4");

	ck_text_bind(st, 1, checkpoint);
	ck_text_bind(st, 2, dependency);
	sqlite3_bind_int64(st, 3, c->now);
	sqlite3_bind_int64(st, 4, from);
	return st;
}

/* down[i]: ns of cell i (of c->cells over the day before now) the dependency was down */
static void
timeline_fill(const struct status_ctx *c, const char *checkpoint, const char *dependency,
    int64_t *down)
{
	int64_t from = c->now - HISTORY_NS, cell = HISTORY_NS / c->cells;
	sqlite3_stmt *st = episodes_query(c, checkpoint, dependency, from);
	int i;

	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t b = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		for (i = 0; i < c->cells; i++) {
			int64_t lo = from + i * cell, hi = lo + cell;
			int64_t start = b > lo ? b : lo, end = e < hi ? e : hi;

			if (end > start)
				down[i] += end - start;
		}
	}
	sqlite3_finalize(st);
}

/* Down the whole cell, part of it, or up. */
static const char *
cell_glyph(int64_t down, int64_t cell)
{
	return down >= cell ? "\u2588" : down > 0 ? "\u2584" : "\u2581";
}

/* "  45m behind" from the dependency's lag; nothing when not known. */
static void
behind_note(jv dep, char *buf, size_t size)
{
	jv lag = jv_object_get(jv_copy(dep), jv_string("lag"));
	char d[48];

	buf[0] = '\0';
	if (jv_get_kind(lag) == JV_KIND_NUMBER && jv_number_value(lag) > 0) {
		duration_format(jv_number_value(lag), d, sizeof d);
		snprintf(buf, size, "  %s behind", d);
	} else if (jv_get_kind(lag) == JV_KIND_NUMBER) {
		snprintf(buf, size, "  not behind");
	}
	jv_free(lag);
}

/* The dependency's last day, one cell per column, oldest left, and how far behind it
 * is; the note only when it fits the terminal. */
static void
timeline_row(const struct status_ctx *c, jv s, jv dep, int width, FILE *out)
{
	jv checkpoint = jv_object_get(jv_copy(s), jv_string("checkpoint"));
	jv name = jv_object_get(jv_copy(dep), jv_string("dependency"));
	int64_t *down = ss_xmalloc(c->cells * sizeof *down);
	char note[64];
	int i;

	memset(down, 0, c->cells * sizeof *down);
	timeline_fill(c, jv_string_value(checkpoint), jv_string_value(name), down);
	behind_note(dep, note, sizeof note);
	fprintf(out, "%*s", TIMELINE_INDENT, "");
	for (i = 0; i < c->cells; i++)
		fputs(cell_glyph(down[i], HISTORY_NS / c->cells), out);
	fprintf(out, "%s\n", TIMELINE_INDENT + c->cells + (int)strlen(note) <= width ? note : "");
	free(down);
	jv_free(checkpoint);
	jv_free(name);
}

/* Under the timelines: "24h ago" from the left edge, "12h ago" from the middle (when
 * there is room), "now" up to the right edge. */
static void
timeline_axis(const struct status_ctx *c, FILE *out)
{
	char axis[64];
	int n = c->cells;

	memset(axis, ' ', n);
	axis[n] = '\0';
	memcpy(axis, "24h ago", 7);
	if (n >= 24)
		memcpy(axis + n / 2, "12h ago", 7);
	memcpy(axis + n - 3, "now", 3);
	fprintf(out, "%*s%s\n", TIMELINE_INDENT, "", axis);
}

static void
status_table(const struct status_ctx *ctx, jv s, int width, FILE *out)
{
	char a[64], b[64], c[64], d[64], e[64];
	jv offs = jv_object_get(jv_copy(s), jv_string("offsets"));
	jv deps = jv_object_get(jv_copy(s), jv_string("dependencies"));
	int i, n;

	fprintf(out, "checkpoint %s: %s\n", field_text(s, "checkpoint", a, sizeof a),
	    field_text(s, "state", b, sizeof b));
	fprintf(out, "  dependent marker  %s\n", field_text(s, "marker", a, sizeof a));
	parts_table(s, false, out);
	fprintf(out, "  offsets          ");
	n = jv_array_length(jv_copy(offs));
	for (i = 0; i < n; i++) {
		jv o = jv_array_get(jv_copy(offs), i);
		jv part = jv_object_get(jv_copy(o), jv_string("partition"));
		jv off = jv_object_get(jv_copy(o), jv_string("offset"));

		fprintf(out, " %s[%.0f]=%.0f", field_text(o, "topic", a, sizeof a),
		    jv_number_value(part), jv_number_value(off));
		jv_free(part);
		jv_free(off);
		jv_free(o);
	}
	fprintf(out, "%s\n", n ? "" : " -");
	if (strcmp(field_text(s, "down_marker", a, sizeof a), "-") != 0)
		fprintf(out, "  down at marker    %s\n", a);
	fprintf(out, "  last episode      %s .. %s\n",
	    field_text(s, "episode_start", a, sizeof a), field_text(s, "episode_end", b, sizeof b));
	fprintf(out, "  %-16s %-5s %-24s %-9s %s\n", "DEPENDENCY", "STATE", "MARKER", "THRESHOLD",
	    "LAG");
	n = jv_array_length(jv_copy(deps));
	for (i = 0; i < n; i++) {
		jv o = jv_array_get(jv_copy(deps), i);

		fprintf(out, "  %-16s %-5s %-24s %-9s %s\n",
		    field_text(o, "dependency", a, sizeof a), field_text(o, "state", b, sizeof b),
		    field_text(o, "marker", c, sizeof c), field_text(o, "threshold", d, sizeof d),
		    field_text(o, "lag", e, sizeof e));
		if (ctx->cells > 0)
			timeline_row(ctx, s, o, width, out);
		parts_table(o, true, out);
		waiting_table(o, out);
		jv_free(o);
	}
	if (ctx->cells > 0 && n > 0)
		timeline_axis(ctx, out);
	jv_free(offs);
	jv_free(deps);
}

static bool
has_tables(sqlite3 *db)
{
	sqlite3_stmt *st = ck_prep(db, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
	    " AND name = 'ss_checkpoint_dependency'");
	bool yes = sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	return yes;
}

int
ss_checkpoint_status(const char *db_path, const char *checkpoint, bool json, int width,
    FILE *out)
{
	struct status_ctx c;
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = 0;

	if (access(db_path, F_OK) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", db_path, strerror(errno));
	db = ck_open(db_path, true);
	/* one snapshot for the whole report, while heartbeat and pulse write on */
	ck_exec(db, "BEGIN", "begin");
	if (!has_tables(db))
		goto out;
	c = (struct status_ctx){ .db = db, .now = ss_time_now(),
	    .dep_parts = ck_has_column(db, "ss_checkpoint_dependency_partition", "marker"),
	    .parts = ck_has_column(db, "ss_checkpoint_offset", "marker"),
	    .dep_states = ck_has_column(db, "ss_checkpoint_dependency", "waiting") &&
	        ck_has_column(db, "ss_checkpoint_dependency_partition", "state"),
	    .states = ck_has_column(db, "ss_checkpoint_offset", "state"),
	    .episodes = ck_has_column(db, "ss_checkpoint_episode", "began"),
	    .cells = json ? 0 : timeline_cells(width) };
	st = ck_prep(db, "SELECT name FROM ss_checkpoint UNION SELECT checkpoint FROM"
	    " ss_checkpoint_dependency ORDER BY 1");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		jv s;

		if (checkpoint && strcmp(name, checkpoint) != 0)
			continue;
		s = status_jv(&c, name);
		if (json) {
			jv text = jv_dump_string(s, 0);

			fprintf(out, "%s\n", jv_string_value(text));
			jv_free(text);
		} else {
			fprintf(out, "%s", n ? "\n" : "");
			status_table(&c, s, width, out);
			jv_free(s);
		}
		n++;
	}
	sqlite3_finalize(st);
out:
	ck_exec(db, "COMMIT", "end");
	sqlite3_close(db);
	return n;
}

/* The width of the terminal on stdout: $COLUMNS, else what the terminal says, else 80. */
int
ss_checkpoint_terminal_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long n;

	if (env != NULL) {
		errno = 0;
		n = strtol(env, &end, 10);
		if (!errno && end != env && !*end && n > 0 && n <= INT_MAX)
			return (int)n;
	}
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}
