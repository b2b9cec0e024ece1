/* kafka_meta: metadata and offsets asked of the brokers, with bounded waits. */
#include <librdkafka/rdkafka.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "base/diag.h"
#include "kafka/kafka.h"
#include "base/sstime.h"

#define ANNOUNCE_MS 250 /* a wait for the brokers longer than this is said on a terminal */

rd_kafka_topic_partition_list_t *
ss_kafka_offsets_at(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *l, int64_t ts, int timeout_ms,
		    rd_kafka_resp_err_t *err)
{
	rd_kafka_topic_partition_list_t *q = rd_kafka_topic_partition_list_copy(l);

	*err = RD_KAFKA_RESP_ERR_NO_ERROR;
	if (q->cnt == 0)
		return q;
	for (int i = 0; i < q->cnt; i++)
		q->elems[i].offset = ts;
	*err = rd_kafka_offsets_for_times(rk, q, timeout_ms);
	return q;
}

const rd_kafka_metadata_t *
ss_kafka_metadata_try(rd_kafka_t *rk, const char *topic, int wait_ms, rd_kafka_resp_err_t *err)
{
	const rd_kafka_metadata_t *md = NULL;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);

	*err = rd_kafka_metadata(rk, 0, rkt, &md, wait_ms);
	rd_kafka_topic_destroy(rkt);
	return *err == RD_KAFKA_RESP_ERR_NO_ERROR ? md : NULL;
}

noreturn void
ss_kafka_die_unreachable(const struct ss_kopts *o, rd_kafka_resp_err_t err)
{
	const char *last = ss_kafka_last_error();

	if (ss_kafka_auth_failed())
		ss_kafka_die_auth();
	ss_diag_die(ss_kafka_exit_code(err) == SS_EXIT_TEMPFAIL ? SS_EXIT_TEMPFAIL : SS_EXIT_DATA,
		    "cannot reach brokers %s within %.3gs: %s%s%s", ss_kopts_brokers(o),
		    o->timeout_ms / 1000.0, rd_kafka_err2str(err), *last ? ": " : "", last);
}

/* A person at a terminal is told what a wait that lasts is for, and the line is taken
 * back once the brokers answer; a script (stderr not a terminal) is told nothing. */
static bool
announce_wait(const struct ss_kopts *o)
{
	if (!isatty(2))
		return false;
	fprintf(stderr, "%s: connecting to %s \u2026 (up to %.3gs)", ss_diag_tool(),
		ss_kopts_brokers(o), o->timeout_ms / 1000.0);
	return true;
}

const rd_kafka_metadata_t *
ss_kafka_metadata(rd_kafka_t *rk, const struct ss_kopts *o, const char *topic)
{
	int64_t deadline = ss_time_mono_ms() + o->timeout_ms, slice, t0;
	const rd_kafka_metadata_t *md;
	rd_kafka_resp_err_t err;
	bool said = false;

	for (;;) {
		t0 = ss_time_mono_ms();
		slice = deadline - t0 < ANNOUNCE_MS ? deadline - t0 : ANNOUNCE_MS;
		if ((md = ss_kafka_metadata_try(rk, topic, (int)slice, &err)) != NULL)
			break;
		if (ss_kafka_auth_failed())
			ss_kafka_die_auth();
		if (ss_time_mono_ms() < t0 + slice) /* failed early: no busy loop */
			(void)poll(NULL, 0, (int)(t0 + slice - ss_time_mono_ms()));
		if (ss_time_mono_ms() >= deadline)
			break;
		if (!said)
			said = announce_wait(o);
	}
	if (said)
		fputs(md != NULL ? "\r\033[K" : "\n", stderr);
	if (md == NULL)
		ss_kafka_die_unreachable(o, err);
	return md;
}

const rd_kafka_metadata_t *
ss_kafka_metadata_all(rd_kafka_t *rk, const struct ss_kopts *o)
{
	const rd_kafka_metadata_t *md = NULL;
	rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, (int)o->timeout_ms);

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ss_kafka_die_unreachable(o, err);
	return md;
}
