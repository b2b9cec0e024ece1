/* kafka_mock: the mock cluster (librdkafka's) behind ss-mock-broker. */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "base/diag.h"
#include "kafka/kafka.h"

struct ss_kmock {
	rd_kafka_t *rk;
	rd_kafka_mock_cluster_t *cluster;
};

/* The mock's carrier handle has no brokers of its own: only real errors are news. */
static void
mock_log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	if (level <= LOG_ERR)
		fprintf(stderr, "%s: librdkafka: %s: %s\n", ss_diag_tool(), fac, buf);
}

ss_kmock *
ss_kmock_start(int nbrokers)
{
	ss_kmock *m = ss_xmalloc(sizeof *m);
	rd_kafka_conf_t *conf = rd_kafka_conf_new();

	rd_kafka_conf_set_log_cb(conf, mock_log_cb);
	m->rk = ss_kafka_new(RD_KAFKA_PRODUCER, conf);
	m->cluster = rd_kafka_mock_cluster_new(m->rk, nbrokers);
	if (m->cluster == NULL)
		ss_diag_die(SS_EXIT_TEMPFAIL, "cannot start the mock cluster");
	return m;
}

bool
ss_kmock_topic(ss_kmock *m, const char *spec, const char **why)
{
	char *name = ss_xstrdup(spec), *colon = strchr(name, ':'), *end;
	long parts = 1;
	rd_kafka_resp_err_t err;

	if (colon != NULL) {
		*colon = '\0';
		parts = strtol(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || parts < 1 || parts > 10000) {
			free(name);
			*why = "expected NAME or NAME:PARTITIONS";
			return false;
		}
	}
	err = *name != '\0' ? rd_kafka_mock_topic_create(m->cluster, name, (int)parts, 1) :
	    RD_KAFKA_RESP_ERR__INVALID_ARG;
	free(name);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		*why = rd_kafka_err2str(err);
		return false;
	}
	return true;
}

const char *
ss_kmock_bootstraps(ss_kmock *m)
{
	return rd_kafka_mock_cluster_bootstraps(m->cluster);
}

void
ss_kmock_stop(ss_kmock *m)
{
	rd_kafka_mock_cluster_destroy(m->cluster);
	rd_kafka_destroy(m->rk);
	free(m);
}
