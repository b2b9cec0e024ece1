/* consume_parts: the consumer's topics and partitions, their pause and end state. */
#include <string.h>

#include "base/diag.h"
#include "kafka/consume_impl.h"

struct topic *
cons_find_topic(struct consumer *c, const char *name)
{
	for (int i = 0; i < c->ntopics; i++)
		if (strcmp(c->topics[i].name, name) == 0)
			return &c->topics[i];
	return NULL;
}

struct part *
cons_get_part(struct topic *t, int32_t id)
{
	if (id < 0)
		return NULL;
	if (id >= t->nparts) {
		t->parts = ss_xrealloc(t->parts, (size_t)(id + 1) * sizeof *t->parts);
		for (int i = t->nparts; i <= id; i++)
			t->parts[i] = (struct part){.id = i, .end = -1, .next = -1, .written = -1,
						    .committable = -1, .committed = -1};
		t->nparts = id + 1;
	}
	return &t->parts[id];
}

struct part *
cons_lookup(struct consumer *c, const char *topic, int32_t id)
{
	struct topic *t = cons_find_topic(c, topic);

	return t != NULL ? cons_get_part(t, id) : NULL;
}

void
cons_die_kafka(rd_kafka_resp_err_t err, const char *what)
{
	ss_diag_die(ss_kafka_exit_code(err), "%s: %s", what, rd_kafka_err2str(err));
}

/* Pause or resume one partition in librdkafka. */
void
cons_set_paused(struct consumer *c, const char *topic, struct part *p, bool pause)
{
	rd_kafka_topic_partition_list_t *l;

	if (p->paused == pause)
		return;
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, p->id);
	if (pause)
		rd_kafka_pause_partitions(c->rk, l);
	else
		rd_kafka_resume_partitions(c->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	p->paused = pause;
}

void
cons_check_finished(struct consumer *c)
{
	if (!c->assigned_once || (!c->o->exit_at_end && !c->o->until_set))
		return;
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (p->assigned && !p->done)
				return;
		}
	c->finished = true;
}

/* Tell the reader where partition p stands, as of the last record written of it. */
void
cons_feed_part(struct consumer *c, const struct topic *t, const struct part *p, enum ss_feed_pstate state)
{
	ss_feed_set(c->feed, t->name, p->id, p->written, state);
}

void
cons_mark_done(struct consumer *c, struct topic *t, struct part *p)
{
	cons_feed_part(c, t, p, SS_FEED_ENDED);
	p->done = true;
	cons_set_paused(c, t->name, p, true);
	cons_check_finished(c);
}
