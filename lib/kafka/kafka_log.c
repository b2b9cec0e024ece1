/* kafka_log: librdkafka's log and error callbacks, the errors they keep (last, auth,
 * all brokers down), and errors to exit codes. */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "base/diag.h"
#include "kafka/kafka.h"
#include "kafka/kafka_impl.h"
#include "base/sstime.h"

/* The last error of any handle, for the message when brokers cannot be reached. Log and
 * error callbacks run on librdkafka's threads. */
static pthread_mutex_t last_error_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[512];

static void
set_last_error(const char *msg)
{
	pthread_mutex_lock(&last_error_lock);
	snprintf(last_error, sizeof last_error, "%s", msg);
	pthread_mutex_unlock(&last_error_lock);
}

const char *
ss_kafka_last_error(void)
{
	static char copy[sizeof last_error];

	pthread_mutex_lock(&last_error_lock);
	memcpy(copy, last_error, sizeof copy);
	pthread_mutex_unlock(&last_error_lock);
	return copy;
}

/* An authentication failure (a password the broker refused, a certificate this side
 * does not trust, or one the broker does not) is said once and ends the run with 77:
 * librdkafka retries it forever as if the broker were down. Set from librdkafka's
 * threads, read by the thread that waits. */
static char auth_error[512];
static bool auth_failed;

/* librdkafka says "SASL authentication error: SaslAuthenticateRequest failed: ERROR" also
 * where the request itself failed, the broker never answering it (its connection dropped
 * or timed out: CI, "Local: Broker transport failure (after 0ms in state DOWN)" on a
 * group coordinator's connection, ended a consumer with 77 on a SCRAM broker that had
 * logged it in). That is no verdict on the credentials: the connection is retried as any
 * other, and a broker that stays away ends the run with 75. */
bool
ss_kafka_is_auth_failure(rd_kafka_resp_err_t err, const char *msg)
{
	if (strstr(msg, "SaslAuthenticateRequest failed: ") != NULL)
		return false;
	return err == RD_KAFKA_RESP_ERR__AUTHENTICATION || err == RD_KAFKA_RESP_ERR__SSL ||
	       strstr(msg, "SASL authentication error") != NULL ||
	       strstr(msg, "SSL handshake failed") != NULL ||
	       strstr(msg, "certificate verify failed") != NULL ||
	       strstr(msg, "Authentication failed") != NULL;
}

static void
set_auth_error(const char *msg)
{
	pthread_mutex_lock(&last_error_lock);
	if (!auth_failed)
		snprintf(auth_error, sizeof auth_error, "%s", msg);
	auth_failed = true;
	pthread_mutex_unlock(&last_error_lock);
}

/* Connection failures repeat every retry; the tools report an unreachable broker once,
 * with the last of them, so they are kept rather than printed. */
static bool log_debug; /* -X debug=...: the user asked for librdkafka's debug log */

static void
log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	if (log_debug && level > LOG_ERR) {
		fprintf(stderr, "%s: librdkafka: %s: %s\n", ss_diag_tool(), fac, buf);
		return;
	}
	/* the run is ending with its one line; a fatal error is said by error_cb */
	if (ss_diag_dying() || strcmp(fac, "FATAL") == 0)
		return;
	if (strcmp(fac, "FAIL") == 0) {
		set_last_error(buf);
		if (ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR_NO_ERROR, buf))
			set_auth_error(buf);
		return;
	}
	/* Warnings are mostly retries that succeed (a coordinator still loading); keep the
	 * ones about the user's configuration and the poll interval. */
	if (level <= LOG_ERR || strcmp(fac, "CONFWARN") == 0 || strcmp(fac, "MAXPOLL") == 0)
		fprintf(stderr, "%s: librdkafka: %s: %s\n", ss_diag_tool(), fac, buf);
}

static int64_t all_down_since; /* error_cb runs in the thread that polls */

int64_t
ss_kafka_all_down_since(void)
{
	return all_down_since;
}

void
ss_kafka_clear_all_down(void)
{
	all_down_since = 0;
}

static void
error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	(void)opaque;
	set_last_error(reason);
	if (ss_kafka_is_auth_failure(err, reason)) {
		set_auth_error(reason);
		ss_kafka_die_auth();
	}
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && all_down_since == 0)
		all_down_since = ss_time_mono();
	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		char why[512];
		rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, why, sizeof why);
		ss_diag_die(ss_kafka_exit_code(orig), "fatal Kafka error: %s", why);
	}
}

void
ss_kafka_conf_log(rd_kafka_conf_t *conf, bool debug)
{
	log_debug = debug;
	rd_kafka_conf_set_log_cb(conf, log_cb);
	rd_kafka_conf_set_error_cb(conf, error_cb);
}

int
ss_kafka_exit_code(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR__TRANSPORT:
	case RD_KAFKA_RESP_ERR__RESOLVE:
	case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
	case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
	case RD_KAFKA_RESP_ERR__TIMED_OUT:
	case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
	case RD_KAFKA_RESP_ERR__WAIT_COORD:
	case RD_KAFKA_RESP_ERR__ISR_INSUFF:
	case RD_KAFKA_RESP_ERR__QUEUE_FULL:
	case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
	case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
	case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
	case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
	case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
	case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
	case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
	case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
	case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
	case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
	case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
		return SS_EXIT_TEMPFAIL;
	case RD_KAFKA_RESP_ERR__AUTHENTICATION:
	case RD_KAFKA_RESP_ERR__SSL:
	case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
	case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
	case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
	case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_DELEGATION_TOKEN_AUTHORIZATION_FAILED:
		return SS_EXIT_NOPERM;
	default:
		return SS_EXIT_DATA;
	}
}

bool
ss_kafka_auth_failed(void)
{
	bool r;

	pthread_mutex_lock(&last_error_lock);
	r = auth_failed;
	pthread_mutex_unlock(&last_error_lock);
	return r;
}

noreturn void
ss_kafka_die_auth(void)
{
	char msg[sizeof auth_error], hint[256] = "";
	const char *p;

	pthread_mutex_lock(&last_error_lock);
	memcpy(msg, auth_error, sizeof msg);
	pthread_mutex_unlock(&last_error_lock);
	/* librdkafka's message: "[thrd:...]: sasl_ssl://h:p/bootstrap: reason (after ...)":
	 * keep the broker and the reason. */
	p = strstr(msg, "]: ");
	p = p != NULL ? p + 3 : msg;
	if (strstr(p, "SCRAM") != NULL && rd_kafka_version() < 0x020601ff)
		snprintf(hint, sizeof hint, " (if the password is right: Kafka 4 brokers need librdkafka "
			 "2.6.1 or later for SCRAM, this is %s)", rd_kafka_version_str());
	else if (strstr(p, "certificate") != NULL && strstr(p, "ssl.ca.location") == NULL)
		snprintf(hint, sizeof hint, " (ssl.ca.location names the CA that signed the brokers' "
			 "certificates)");
	ss_diag_die(SS_EXIT_NOPERM, "not permitted: %s%s", p, hint);
}
