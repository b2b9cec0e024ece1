/* consume_start: where each assigned partition starts (--offsets-from, --from, -o, the group). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "kafka/consume_impl.h"
#include "db/store.h"

/* Two files may hold the same topic-partition (an old single file next to the
 * partition files): the largest offset is what was applied last. */
static void
add_stored(const char *topic, int32_t partition, int64_t offset, void *arg)
{
	struct consumer *c = arg;

	for (size_t i = 0; i < c->nstored; i++)
		if (c->stored[i].partition == partition && strcmp(c->stored[i].topic, topic) == 0) {
			if (offset > c->stored[i].offset)
				c->stored[i].offset = offset;
			return;
		}
	c->stored = ss_xrealloc(c->stored, (c->nstored + 1) * sizeof *c->stored);
	c->stored[c->nstored++] = (struct stored){ss_xstrdup(topic), partition, offset};
}

void
cons_clear_stored(struct consumer *c)
{
	for (size_t i = 0; i < c->nstored; i++)
		free(c->stored[i].topic);
	c->nstored = 0;
}

static void
load_file(struct consumer *c, const char *path)
{
	ss_store *s = ss_store_open(path, SS_STORE_READONLY, SS_STATE_ANY);

	ss_store_offsets_each(s, add_stored, c);
	ss_store_close(s);
}

static bool
is_db_name(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".db") == 0;
}

/* Every *.db file of a directory: ss-cache and ss-asof --state-dir keep one per partition. */
static void
load_dir(struct consumer *c, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];

	if (d == NULL)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!is_db_name(de->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (access(path, F_OK) == 0)
			load_file(c, path);
	}
	closedir(d);
}

/* --offsets-from, read again at every assignment: another member's sink may have applied
 * more since the last read. */
void
cons_load_stored(struct consumer *c)
{
	const char *path = c->o->offsets_from;
	struct stat st;

	cons_clear_stored(c);
	if (stat(path, &st) != 0)
		return; /* no state yet: nothing applied, start per -o */
	if (S_ISDIR(st.st_mode))
		load_dir(c, path);
	else
		load_file(c, path);
}

bool
cons_stored_offset(const struct consumer *c, const char *topic, int32_t partition, int64_t *offset)
{
	for (size_t i = 0; i < c->nstored; i++)
		if (c->stored[i].partition == partition && strcmp(c->stored[i].topic, topic) == 0) {
			*offset = c->stored[i].offset;
			return true;
		}
	return false;
}

/* The position the options ask for on one partition (before resolving). */
static struct ss_start
wanted_start(const struct consumer *c, const char *topic, int32_t partition)
{
	const struct ss_consume_opts *o = c->o;
	struct ss_start s = o->start;
	int64_t applied;

	if (o->offsets_from != NULL && cons_stored_offset(c, topic, partition, &applied))
		return (struct ss_start){.offset = applied + 1};
	if (o->from_set)
		return (struct ss_start){.offset = SS_OFFSET_TIME, .time_ms = o->from_ms};
	for (int i = 0; i < o->npstarts; i++)
		if (o->pstarts[i].partition == partition)
			return o->pstarts[i].start;
	/* with --offsets-from the state is the truth: what it does not know was not applied */
	if (!o->start_given && o->group != NULL && o->offsets_from == NULL)
		s.offset = RD_KAFKA_OFFSET_STORED;
	return s;
}

/* The offsets of l's partitions at ts (ss_kafka_offsets_at); any error ends the run. */
rd_kafka_topic_partition_list_t *
cons_list_offsets(struct consumer *c, const rd_kafka_topic_partition_list_t *l, int64_t ts)
{
	rd_kafka_resp_err_t err;
	rd_kafka_topic_partition_list_t *q = ss_kafka_offsets_at(c->rk, l, ts, (int)c->o->k.timeout_ms, &err);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		cons_die_kafka(err, "cannot list offsets");
	for (int i = 0; i < q->cnt; i++)
		if (q->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
			ss_diag_die(ss_kafka_exit_code(q->elems[i].err), "%s [%d]: cannot list offsets: %s",
				    q->elems[i].topic, q->elems[i].partition, rd_kafka_err2str(q->elems[i].err));
	return q;
}

static bool
reset_to_latest(struct consumer *c)
{
	char val[64];
	size_t n = sizeof val;

	if (rd_kafka_conf_get(rd_kafka_conf(c->rk), "auto.offset.reset", val, &n) != RD_KAFKA_CONF_OK)
		return false;
	return strcmp(val, "latest") == 0 || strcmp(val, "largest") == 0 || strcmp(val, "end") == 0;
}

/* One partition's start as an absolute offset, from its low and high watermarks, the
 * group's committed offset and the offset found for a time (-1: none). */
static int64_t
start_offset(struct consumer *c, struct ss_start s, int64_t low, int64_t high, int64_t committed,
	     int64_t for_time)
{
	int64_t at;

	if (s.offset == RD_KAFKA_OFFSET_BEGINNING)
		at = low;
	else if (s.offset == RD_KAFKA_OFFSET_END)
		at = high;
	else if (s.offset == RD_KAFKA_OFFSET_STORED)
		at = committed >= 0 ? committed : reset_to_latest(c) ? high : low;
	else if (s.offset == SS_OFFSET_TIME)
		at = for_time >= 0 ? for_time : high; /* no record at or after the time */
	else if (s.offset <= RD_KAFKA_OFFSET_TAIL_BASE)
		at = high - (RD_KAFKA_OFFSET_TAIL_BASE - s.offset);
	else
		at = s.offset;
	return at < low ? low : at; /* the data before is gone (retention) */
}

/* Resolve every start in l to an absolute offset and set the partitions' state; the -e
 * snapshot is the high watermark now unless snapshot_ends took it earlier. */
void
cons_resolve_starts(struct consumer *c, rd_kafka_topic_partition_list_t *l)
{
	rd_kafka_topic_partition_list_t *lo, *hi, *times = NULL, *committed = NULL;

	if (l->cnt == 0)
		return;
	if (c->o->offsets_from != NULL)
		cons_load_stored(c);
	lo = cons_list_offsets(c, l, RD_KAFKA_OFFSET_BEGINNING);
	hi = cons_list_offsets(c, l, RD_KAFKA_OFFSET_END);
	for (int i = 0; i < l->cnt; i++) {
		struct ss_start s = wanted_start(c, l->elems[i].topic, l->elems[i].partition);
		if (s.offset == SS_OFFSET_TIME && times == NULL) {
			/* one request for all: partitions without a time ask for their end */
			times = rd_kafka_topic_partition_list_copy(l);
			for (int j = 0; j < times->cnt; j++) {
				struct ss_start sj = wanted_start(c, times->elems[j].topic, times->elems[j].partition);
				times->elems[j].offset = sj.offset == SS_OFFSET_TIME ? sj.time_ms : RD_KAFKA_OFFSET_END;
			}
			rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(c->rk, times, (int)c->o->k.timeout_ms);
			if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
				cons_die_kafka(err, "cannot find offsets for times");
		}
		if (s.offset == RD_KAFKA_OFFSET_STORED && committed == NULL) {
			committed = rd_kafka_topic_partition_list_copy(l);
			rd_kafka_resp_err_t err = rd_kafka_committed(c->rk, committed, (int)c->o->k.timeout_ms);
			if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
				cons_die_kafka(err, "cannot fetch committed offsets");
		}
	}
	for (int i = 0; i < l->cnt; i++) {
		rd_kafka_topic_partition_t *e = &l->elems[i];
		struct ss_start s = wanted_start(c, e->topic, e->partition);
		int64_t low = lo->elems[i].offset, high = hi->elems[i].offset;
		struct part *p = cons_lookup(c, e->topic, e->partition);
		int64_t at = start_offset(c, s, low, high, committed != NULL ? committed->elems[i].offset : -1,
					  times != NULL ? times->elems[i].offset : -1);

		e->offset = at;
		p->assigned = true;
		p->start = p->next = p->committable = at;
		p->committed = -1;
		p->paused = false;
		p->done = false;
		if (c->o->exit_at_end && p->end < 0)
			p->end = high;
	}
	rd_kafka_topic_partition_list_destroy(lo);
	rd_kafka_topic_partition_list_destroy(hi);
	if (times != NULL)
		rd_kafka_topic_partition_list_destroy(times);
	if (committed != NULL)
		rd_kafka_topic_partition_list_destroy(committed);
}

/* After an assignment: pause what is done or held back. */
void
cons_settle_assignment(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	for (int i = 0; i < l->cnt; i++) {
		struct topic *t = cons_find_topic(c, l->elems[i].topic);
		struct part *p = cons_get_part(t, l->elems[i].partition);
		if (p->end >= 0 && p->next >= p->end) {
			cons_mark_done(c, t, p);
			continue;
		}
		cons_feed_part(c, t, p, SS_FEED_BEHIND);
		if (c->bp_paused)
			cons_set_paused(c, t->name, p, true);
	}
	ss_feed_flush(c->feed, true);
	c->assigned_once = true;
	cons_check_finished(c);
}
