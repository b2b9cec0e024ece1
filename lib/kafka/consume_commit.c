/* consume_commit: marks of what reached the output, and the group commits they allow. */
#include <stdlib.h>

#include "base/diag.h"
#include "kafka/consume_impl.h"
#include "stream/outq.h"

static void
retire_marks(struct consumer *c)
{
	uint64_t written = ss_outq_written(c->out);

	while (c->mlen > 0 && c->marks[c->mhead].pos <= written) {
		struct mark *m = &c->marks[c->mhead];
		m->part->committable = m->next;
		c->mhead = (c->mhead + 1) % c->mcap;
		c->mlen--;
	}
}

void
cons_push_mark(struct consumer *c, struct part *p, int64_t next)
{
	if (c->mlen == c->mcap) {
		size_t ncap = c->mcap ? c->mcap * 2 : 4096;
		struct mark *n = ss_xmalloc(ncap * sizeof *n);
		for (size_t i = 0; i < c->mlen; i++)
			n[i] = c->marks[(c->mhead + i) % c->mcap];
		free(c->marks);
		c->marks = n;
		c->mcap = ncap;
		c->mhead = 0;
	}
	c->marks[(c->mhead + c->mlen++) % c->mcap] = (struct mark){ss_outq_written(c->out) +
	    ss_outq_pending(c->out), p, next};
}

/* Commit what reached the output; only partitions still assigned (a revoke commits
 * before it clears them). */
void
cons_commit(struct consumer *c, bool sync)
{
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_resp_err_t err;

	if (c->o->group == NULL)
		return;
	retire_marks(c);
	l = rd_kafka_topic_partition_list_new(8);
	for (int i = 0; i < c->ntopics; i++)
		for (int j = 0; j < c->topics[i].nparts; j++) {
			struct part *p = &c->topics[i].parts[j];
			if (p->assigned && p->committable > p->committed)
				rd_kafka_topic_partition_list_add(l, c->topics[i].name, p->id)->offset = p->committable;
		}
	if (l->cnt > 0) {
		err = rd_kafka_commit(c->rk, l, !sync);
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !sync) {
			for (int i = 0; i < l->cnt; i++)
				cons_lookup(c, l->elems[i].topic, l->elems[i].partition)->committed = l->elems[i].offset;
		} else {
			ss_diag_warn("commit failed: %s", rd_kafka_err2str(err));
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
}
