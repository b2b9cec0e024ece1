/* consume_group: group rebalances, and handing partitions over once the sink applied them. */
#include <poll.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diag.h"
#include "kafka/consume_impl.h"
#include "base/sstime.h"

#define SINK_WAIT_MS 10000
#define SINK_POLL_MS 50

/* True when the sink's state records as applied every record written for the
 * partitions of l in this assignment. */
static bool
sink_caught_up(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	int64_t applied;

	cons_load_stored(c);
	for (int i = 0; i < l->cnt; i++) {
		struct part *p = cons_lookup(c, l->elems[i].topic, l->elems[i].partition);
		if (p == NULL || !p->assigned || p->next <= p->start)
			continue;
		if (!cons_stored_offset(c, l->elems[i].topic, l->elems[i].partition, &applied) ||
		    applied < p->next - 1)
			return false;
	}
	return true;
}

/* A sink runs alongside only at the other end of a pipe or socket, and is gone once
 * that end is closed. */
static bool
sink_alive(const struct consumer *c)
{
	struct pollfd pfd = {.fd = c->o->out_fd, .events = POLLOUT};
	struct stat st;

	if (c->status == SS_EXIT_PIPE || fstat(c->o->out_fd, &st) != 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return poll(&pfd, 1, 0) >= 0 && !(pfd.revents & (POLLERR | POLLHUP | POLLNVAL));
}

/* Before revoked partitions go to another member, which starts after the offsets the
 * state records: wait until the sink has applied what was written for them (it commits
 * as soon as its input pauses), so the new owner neither misses nor repeats a record.
 * Bounded: a sink may reject the last record, write another state than --offsets-from
 * reads, or wait itself (ss-asof for a partition lock; it skips what was applied when
 * it gets it). */
static void
await_sink(struct consumer *c, const rd_kafka_topic_partition_list_t *l)
{
	int64_t until = ss_time_mono_ms() + SINK_WAIT_MS;

	while (!sink_caught_up(c, l) && sink_alive(c)) {
		if (ss_time_mono_ms() >= until) {
			ss_diag_warn("rebalance: after %ds, the state still lacks records written for the "
				     "revoked partitions; handing them over", SINK_WAIT_MS / 1000);
			return;
		}
		(void)poll(NULL, 0, SINK_POLL_MS);
	}
}

/* Group rebalances: resolve starts on assignment; on revocation write out everything and
 * commit it before the partitions go to another member. */
void
cons_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *l, void *opaque)
{
	struct consumer *c = opaque;
	bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
	rd_kafka_error_t *error = NULL;

	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		for (int i = 0; i < l->cnt; i++)
			if (cons_find_topic(c, l->elems[i].topic) == NULL)
				ss_diag_die(SS_EXIT_DATA, "assigned a topic not asked for: %s", l->elems[i].topic);
		cons_resolve_starts(c, l);
		if (cooperative)
			error = rd_kafka_incremental_assign(rk, l);
		else
			rd_kafka_assign(rk, l);
		cons_settle_assignment(c, l);
	} else {
		cons_drain_all(c);
		if (!rd_kafka_assignment_lost(rk)) {
			cons_commit(c, true);
			if (c->o->offsets_from != NULL)
				await_sink(c, l);
		}
		for (int i = 0; i < l->cnt; i++) {
			struct part *p = cons_lookup(c, l->elems[i].topic, l->elems[i].partition);
			if (p == NULL)
				continue;
			p->assigned = p->paused = false;
			cons_feed_part(c, cons_find_topic(c, l->elems[i].topic), p, SS_FEED_REVOKED);
		}
		ss_feed_flush(c->feed, true);
		if (cooperative)
			error = rd_kafka_incremental_unassign(rk, l);
		else
			rd_kafka_assign(rk, NULL);
		if (!cooperative)
			c->assigned_once = false;
	}
	if (error != NULL) {
		ss_diag_warn("rebalance: %s", rd_kafka_error_string(error));
		rd_kafka_error_destroy(error);
	}
}
