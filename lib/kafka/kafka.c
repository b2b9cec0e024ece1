/* kafka: options, configuration, errors, payload forms and the mock cluster shared by the
 * Kafka tools (see kafka.h). */
#include <ctype.h>
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/diag.h"
#include "base/jscan.h"
#include "kafka/kafka.h"
#include "base/sstime.h"

#define DEFAULT_TIMEOUT_MS 30000
#define ANNOUNCE_MS 250 /* a wait for the brokers longer than this is said on a terminal */

void
ss_kopts_init(struct ss_kopts *o)
{
	memset(o, 0, sizeof *o);
	o->timeout_ms = DEFAULT_TIMEOUT_MS;
}

void
ss_kopts_free(struct ss_kopts *o)
{
	for (size_t i = 0; i < o->nprops; i++)
		free(o->props[i]);
	free(o->props);
	o->props = NULL;
	o->nprops = 0;
}

static void
add_prop(struct ss_kopts *o, const char *arg)
{
	o->props = ss_xrealloc(o->props, (o->nprops + 1) * sizeof *o->props);
	o->props[o->nprops++] = ss_xstrdup(arg);
}

bool
ss_kafka_prop_secret(const char *prop)
{
	return strstr(prop, "password") != NULL || strstr(prop, "secret") != NULL ||
	       strcmp(prop, "ssl.key.pem") == 0 || strcmp(prop, "sasl.oauthbearer.config") == 0;
}

/* The name of the property in "prop=val" (static storage, for messages). */
static const char *
prop_name(const char *kv)
{
	static char name[128];
	size_t n = strcspn(kv, "=");

	snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), kv);
	return name;
}

void
ss_kopts_add_prop(struct ss_kopts *o, const char *arg, const char *usage)
{
	const char *eq = strchr(arg, '=');

	if (eq == NULL || eq == arg)
		ss_diag_usage_error(usage, "-X %s: expected property=value", arg);
	if (ss_kafka_prop_secret(prop_name(arg)))
		ss_diag_warn("warning: -X %s=... puts a secret on the command line, where ps shows it "
			     "to every user; put it in a file only you can read: $SS_CONFIG, "
			     "~/.config/ss/kafka.conf or -F FILE",
			     prop_name(arg));
	add_prop(o, arg);
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Append the prop=val lines of path (blank lines and # comments skipped); exit 2 on
 * errors, naming how the file was found (what). A file others can read that holds a
 * secret is warned about. */
static void
read_file(struct ss_kopts *o, FILE *f, const char *path, const char *what)
{
	char *line = NULL, *s, *eq;
	size_t cap = 0;
	unsigned long lineno = 0;
	const char *secret = NULL;
	struct stat st;

	while (getline(&line, &cap, f) != -1) {
		lineno++;
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL || eq == s)
			ss_diag_die(SS_EXIT_USAGE, "%s:%lu: expected property=value (%s)", path, lineno, what);
		*eq = '\0';
		/* "prop = val" is common in properties files: drop the blanks around '='. */
		char *prop = trim(s), *val = trim(eq + 1);
		size_t n = strlen(prop) + strlen(val) + 2;
		char *kv = ss_xmalloc(n);
		snprintf(kv, n, "%s=%s", prop, val);
		add_prop(o, kv);
		free(kv);
		if (secret == NULL && ss_kafka_prop_secret(prop))
			secret = prop_name(prop);
	}
	free(line);
	if (secret != NULL && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		ss_diag_warn("warning: %s holds %s and others can read it: chmod 600 %s", path, secret,
			     path);
	fclose(f);
}

void
ss_kopts_add_file(struct ss_kopts *o, const char *path)
{
	FILE *f = fopen(path, "r");

	if (f == NULL)
		ss_diag_die(SS_EXIT_USAGE, "-F %s: %s", path, strerror(errno));
	/* -F replaces the default file (as kcat's -F replaces $KCAT_CONFIG): its settings,
	 * credentials above all, are not meant for the cluster the file names. */
	if (o->ndefault > 0) {
		for (size_t i = 0; i < o->ndefault; i++)
			free(o->props[i]);
		memmove(o->props, o->props + o->ndefault, (o->nprops - o->ndefault) * sizeof *o->props);
		o->nprops -= o->ndefault;
		o->ndefault = 0;
	}
	o->nfiles++;
	read_file(o, f, path, "-F");
}

void
ss_kopts_default_file(struct ss_kopts *o)
{
	const char *env = getenv("SS_CONFIG"), *base, *what;
	char path[4096];
	FILE *f;
	size_t nuser = o->nprops;

	if (o->nfiles > 0 || o->ndefault > 0 || (env != NULL && *env == '\0'))
		return;
	if (env != NULL) {
		snprintf(path, sizeof path, "%s", env);
		what = "$SS_CONFIG";
	} else if ((base = getenv("XDG_CONFIG_HOME")) != NULL && *base == '/') {
		snprintf(path, sizeof path, "%s/ss/kafka.conf", base);
		what = "the default configuration file";
	} else if ((base = getenv("HOME")) != NULL && *base != '\0') {
		snprintf(path, sizeof path, "%s/.config/ss/kafka.conf", base);
		what = "the default configuration file";
	} else {
		return;
	}
	if ((f = fopen(path, "r")) == NULL) {
		if (env == NULL && errno == ENOENT)
			return;
		ss_diag_die(SS_EXIT_USAGE, "%s %s: %s", what, path, strerror(errno));
	}
	read_file(o, f, path, what);
	/* Its properties go first: a -X on the command line overrides them. */
	size_t nfile = o->nprops - nuser;
	char **tmp = ss_xmalloc((nfile ? nfile : 1) * sizeof *tmp);
	memcpy(tmp, o->props + nuser, nfile * sizeof *tmp);
	memmove(o->props + nfile, o->props, nuser * sizeof *o->props);
	memcpy(o->props, tmp, nfile * sizeof *tmp);
	free(tmp);
	o->ndefault = nfile;
}

void
ss_kopts_set_timeout(struct ss_kopts *o, const char *arg, const char *usage)
{
	int64_t ns = ss_cli_duration(usage, "--timeout", arg, true);

	o->timeout_ms = ns / 1000000 > 0 ? ns / 1000000 : 1;
}

void
ss_kopts_set_brokers(struct ss_kopts *o, const char *arg, const char *usage)
{
	if (arg[strspn(arg, " \t,")] == '\0')
		ss_diag_usage_error(usage, "-b '%s': no brokers (expected host:port,...)", arg);
	o->brokers = arg;
}

static bool
is_bootstrap(const char *kv)
{
	return strncmp(kv, "bootstrap.servers=", 18) == 0 || strncmp(kv, "metadata.broker.list=", 21) == 0;
}

const char *
ss_kopts_brokers(const struct ss_kopts *o)
{
	const char *env;

	if (o->brokers != NULL)
		return o->brokers;
	for (size_t i = o->nprops; i-- > 0;)
		if (is_bootstrap(o->props[i]))
			return strchr(o->props[i], '=') + 1;
	env = getenv("SS_BROKERS");
	return env != NULL && *env != '\0' ? env : "localhost:9092";
}

bool
ss_kopts_has(const struct ss_kopts *o, const char *prop)
{
	size_t n = strlen(prop);

	for (size_t i = 0; i < o->nprops; i++)
		if (strncmp(o->props[i], prop, n) == 0 && o->props[i][n] == '=')
			return true;
	return false;
}

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

static bool
is_auth_failure(const char *msg)
{
	return strstr(msg, "SASL authentication error") != NULL ||
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
		if (is_auth_failure(buf))
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
	if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION || err == RD_KAFKA_RESP_ERR__SSL ||
	    is_auth_failure(reason)) {
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
ss_kafka_conf_set(rd_kafka_conf_t *conf, const char *prop, const char *val)
{
	char err[512];

	if (rd_kafka_conf_set(conf, prop, val, err, sizeof err) != RD_KAFKA_CONF_OK)
		ss_diag_die(SS_EXIT_USAGE, "%s=%s: %s", prop,
			    ss_kafka_prop_secret(prop) ? "(secret not shown)" : val, err);
}

rd_kafka_conf_t *
ss_kafka_conf(const struct ss_kopts *o, const char *const *defaults)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();

	ss_kafka_conf_set(conf, "bootstrap.servers", ss_kopts_brokers(o));
	ss_kafka_conf_set(conf, "log.connection.close", "false");
	for (; defaults != NULL && defaults[0] != NULL; defaults += 2)
		ss_kafka_conf_set(conf, defaults[0], defaults[1]);
	for (size_t i = 0; i < o->nprops; i++) {
		if (is_bootstrap(o->props[i])) /* in ss_kopts_brokers: -b wins over them */
			continue;
		char *kv = ss_xstrdup(o->props[i]), *eq = strchr(kv, '=');
		*eq = '\0';
		ss_kafka_conf_set(conf, kv, eq + 1);
		free(kv);
	}
	log_debug = ss_kopts_has(o, "debug");
	rd_kafka_conf_set_log_cb(conf, log_cb);
	rd_kafka_conf_set_error_cb(conf, error_cb);
	return conf;
}

rd_kafka_t *
ss_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);

	if (rk == NULL)
		ss_diag_die(SS_EXIT_USAGE, "%s", err);
	return rk;
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

bool
ss_kfmt_parse(const char *s, enum ss_kfmt *fmt)
{
	static const char *const names[] = {"auto", "json", "string", "base64", "avro"};

	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0) {
			*fmt = (enum ss_kfmt)i;
			return true;
		}
	return false;
}

void
ss_kafka_put_int(ss_buf *b, int64_t v)
{
	char tmp[24], *e = tmp + sizeof tmp, *p = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	ss_buf_add(b, p, (size_t)(e - p));
}

/* In valid JSON [p,end): is it exactly {"base64": STRING}? Sets the string's span. */
static bool
is_base64_form(const char *p, const char *end, const char **s, const char **send)
{
	static const char key[] = "\"base64\"";

	p = ss_jscan_skip_ws(p, end);
	if (p == end || *p != '{')
		return false;
	p = ss_jscan_skip_ws(p + 1, end);
	if ((size_t)(end - p) < sizeof key - 1 || memcmp(p, key, sizeof key - 1) != 0)
		return false;
	p = ss_jscan_skip_ws(p + sizeof key - 1, end);
	if (p == end || *p != ':')
		return false;
	p = ss_jscan_skip_ws(p + 1, end);
	if (p == end || *p != '"')
		return false;
	*s = p;
	*send = ss_jscan_value(p, end, NULL);
	if (*send == NULL)
		return false;
	p = ss_jscan_skip_ws(*send, end);
	return p < end && *p == '}' && ss_jscan_skip_ws(p + 1, end) == end;
}

/* Can the bytes [s, end) stand in an envelope as their own JSON text and be read back
 * (ss_kafka_payload_bytes) as exactly these bytes? Not when they are not JSON, or are a
 * JSON string (a string stands for its characters), the null literal (a tombstone) or
 * the base64 form (its decoded bytes); not when surrounded by whitespace (which the
 * reader trims) or holding a line break (an envelope is one line). Then they are written
 * as a string or in base64 form, which are exact. */
static bool
embeddable(const char *s, const char *end)
{
	const char *b64, *b64end;
	size_t len = (size_t)(end - s);

	if (len == 0 || ss_jscan_is_ws(s[0]) || ss_jscan_is_ws(end[-1]) || s[0] == '"')
		return false;
	if (memchr(s, '\n', len) != NULL || memchr(s, '\r', len) != NULL)
		return false;
	if (len == 4 && memcmp(s, "null", 4) == 0)
		return false;
	return ss_jscan_document(s, end, NULL) && !is_base64_form(s, end, &b64, &b64end);
}

static void
put_base64_form(ss_buf *b, const void *p, size_t len)
{
	ss_buf_adds(b, "{\"base64\":\"");
	ss_buf_base64(b, p, len);
	ss_buf_adds(b, "\"}");
}

/* Text as a string, anything else in base64 form: both read back exactly. */
static void
put_string_or_base64(ss_buf *b, const char *s, size_t len)
{
	if (ss_jscan_utf8(s, s + len))
		ss_jscan_quote(b, s, len);
	else
		put_base64_form(b, s, len);
}

bool
ss_kafka_put_payload(ss_buf *b, const void *p, size_t len, enum ss_kfmt fmt)
{
	const char *s = p, *end;

	if (p == NULL) {
		ss_buf_adds(b, "null");
		return true;
	}
	end = s + len; /* not before: NULL + 0 is undefined (UBSan stops on tombstones) */
	switch (fmt) {
	case SS_KFMT_AUTO:
	case SS_KFMT_JSON:
		if (embeddable(s, end)) {
			ss_buf_add(b, s, len);
			return true;
		}
		put_string_or_base64(b, s, len);
		return fmt != SS_KFMT_JSON || ss_jscan_document(s, end, NULL);
	case SS_KFMT_STRING:
		put_string_or_base64(b, s, len);
		return true;
	case SS_KFMT_BASE64:
	case SS_KFMT_AVRO:
		put_base64_form(b, s, len);
		return true;
	}
	return true;
}

/* Can the headers be written as an object, {"name": value or [values], ...}? Only when
 * that keeps them exact: every name is UTF-8, and the headers of each name are adjacent
 * (a, a, b is {"a":[..],"b":..}; a, b, a would lose its order). */
static bool
headers_as_object(rd_kafka_headers_t *hdrs, size_t n)
{
	const char *name, *prev = NULL, *other;
	const void *val;
	size_t size;

	for (size_t i = 0; i < n; prev = name, i++) {
		rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
		if (!ss_jscan_utf8(name, name + strlen(name)))
			return false;
		if (prev == NULL || strcmp(name, prev) == 0)
			continue;
		for (size_t j = 0; j + 1 < i; j++) { /* a new run: its name seen before? */
			rd_kafka_header_get_all(hdrs, j, &other, &val, &size);
			if (strcmp(name, other) == 0)
				return false;
		}
	}
	return true;
}

/* A header value: a string if UTF-8, null if NULL, else the base64 form. */
static void
put_header_value(ss_buf *b, const void *val, size_t size)
{
	ss_kafka_put_payload(b, val, size, SS_KFMT_STRING);
}

/* {"name": value, ...}; the n headers of a run of one name, n > 1, as an array. */
static void
put_header_object(ss_buf *b, rd_kafka_headers_t *hdrs, size_t n)
{
	const char *name, *next;
	const void *val;
	size_t size, run;

	ss_buf_addc(b, '{');
	for (size_t i = 0; i < n; i += run) {
		rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
		for (run = 1; i + run < n; run++) {
			rd_kafka_header_get_all(hdrs, i + run, &next, &val, &size);
			if (strcmp(name, next) != 0)
				break;
		}
		if (i > 0)
			ss_buf_addc(b, ',');
		ss_jscan_quote(b, name, strlen(name));
		ss_buf_addc(b, ':');
		if (run > 1)
			ss_buf_addc(b, '[');
		for (size_t k = 0; k < run; k++) {
			rd_kafka_header_get_all(hdrs, i + k, &name, &val, &size);
			if (k > 0)
				ss_buf_addc(b, ',');
			put_header_value(b, val, size);
		}
		if (run > 1)
			ss_buf_addc(b, ']');
	}
	ss_buf_addc(b, '}');
}

/* [[name, value], ...] in order; a name that is not UTF-8 in base64 form. */
static void
put_header_list(ss_buf *b, rd_kafka_headers_t *hdrs, size_t n)
{
	const char *name;
	const void *val;
	size_t size;

	ss_buf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
		ss_buf_adds(b, i > 0 ? ",[" : "[");
		put_header_value(b, name, strlen(name));
		ss_buf_addc(b, ',');
		put_header_value(b, val, size);
		ss_buf_addc(b, ']');
	}
	ss_buf_addc(b, ']');
}

void
ss_kafka_put_headers(ss_buf *b, rd_kafka_headers_t *hdrs)
{
	size_t n = hdrs != NULL ? rd_kafka_header_cnt(hdrs) : 0;

	if (headers_as_object(hdrs, n))
		put_header_object(b, hdrs, n);
	else
		put_header_list(b, hdrs, n);
}

/* The bytes of a string literal: the span itself when it has no escapes. */
static void
string_bytes(const char *s, const char *send, ss_buf *scratch, const char **out, size_t *outlen)
{
	if (memchr(s, '\\', (size_t)(send - s)) == NULL) {
		*out = s + 1;
		*outlen = (size_t)(send - s) - 2;
		return;
	}
	ss_buf_reset(scratch);
	ss_jscan_unescape(scratch, s, send);
	*out = scratch->data != NULL ? scratch->data : "";
	*outlen = scratch->len;
}

bool
ss_kafka_payload_bytes(const char *p, size_t len, ss_buf *scratch, const char **out,
		       size_t *outlen, bool *isnull, const char **why)
{
	const char *end = p + len, *s, *send;

	p = ss_jscan_skip_ws(p, end);
	while (end > p && ss_jscan_is_ws(end[-1]))
		end--;
	*isnull = false;
	if (end - p == 4 && memcmp(p, "null", 4) == 0) {
		*isnull = true;
		*out = NULL;
		*outlen = 0;
		return true;
	}
	if (p < end && *p == '"') {
		string_bytes(p, end, scratch, out, outlen);
		return true;
	}
	if (is_base64_form(p, end, &s, &send)) {
		ss_buf tmp = {0};
		const char *b64;
		size_t b64len;
		string_bytes(s, send, &tmp, &b64, &b64len);
		ss_buf_reset(scratch);
		bool ok = ss_buf_unbase64(scratch, b64, b64len);
		ss_buf_free(&tmp);
		if (!ok) {
			*why = "invalid base64 in {\"base64\":...}";
			return false;
		}
		*out = scratch->data != NULL ? scratch->data : "";
		*outlen = scratch->len;
		return true;
	}
	*out = p;
	*outlen = (size_t)(end - p);
	return true;
}

/* One header value (raw JSON) added under name; arrays add one header per element. */
static bool
add_header(rd_kafka_headers_t *h, const char *name, size_t nlen, const char *p, const char *end,
	   const char **why)
{
	ss_buf scratch = {0};
	const char *val;
	size_t vlen;
	bool isnull, ok = true;

	p = ss_jscan_skip_ws(p, end);
	if (*p == '[') {
		p = ss_jscan_skip_ws(p + 1, end);
		while (ok && *p != ']') {
			const char *e = ss_jscan_value(p, end, NULL);
			ok = add_header(h, name, nlen, p, e, why);
			p = ss_jscan_skip_ws(e, end);
			if (*p == ',')
				p = ss_jscan_skip_ws(p + 1, end);
		}
		return ok;
	}
	if ((ok = ss_kafka_payload_bytes(p, (size_t)(end - p), &scratch, &val, &vlen, &isnull, why)))
		rd_kafka_header_add(h, name, (ssize_t)nlen, isnull ? NULL : val, isnull ? 0 : (ssize_t)vlen);
	ss_buf_free(&scratch);
	return ok;
}

/* Add the headers of one name, the bytes [name, name + nlen), from a raw JSON value. */
static bool
add_named(rd_kafka_headers_t *h, const char *name, size_t nlen, const char *v, const char *vend,
	  const char **why)
{
	/* rd_kafka_header_add copies the name up to nlen; a NUL-terminated copy keeps it safe */
	char *nm = ss_xmalloc(nlen + 1);
	bool ok;

	memcpy(nm, name, nlen);
	nm[nlen] = '\0';
	ok = add_header(h, nm, nlen, v, vend, why);
	free(nm);
	return ok;
}

/* {"name": value or [values], ...}, p at '{'. */
static bool
headers_object(rd_kafka_headers_t *h, const char *p, const char *end, const char **why)
{
	const char *k, *kend, *v, *vend, *name;
	ss_buf kscratch = {0};
	size_t nlen;
	bool ok = true;

	p = ss_jscan_skip_ws(p + 1, end);
	while (ok && p < end && *p == '"') {
		k = p;
		kend = ss_jscan_value(k, end, NULL);
		p = ss_jscan_skip_ws(kend, end);
		v = ss_jscan_skip_ws(p + 1, end); /* after ':' */
		vend = ss_jscan_value(v, end, NULL);
		string_bytes(k, kend, &kscratch, &name, &nlen);
		ok = add_named(h, name, nlen, v, vend, why);
		p = ss_jscan_skip_ws(vend, end);
		if (p < end && *p == ',')
			p = ss_jscan_skip_ws(p + 1, end);
	}
	ss_buf_free(&kscratch);
	return ok;
}

/* One [name, value] element [p, end) of the list form; the name a string or in base64
 * form (names that are not UTF-8). */
static bool
header_pair(rd_kafka_headers_t *h, const char *p, const char *end, ss_buf *scratch,
	    const char **why)
{
	const char *n, *nend, *v, *vend, *name, *b64, *b64end;
	size_t nlen;
	bool isnull;

	p = ss_jscan_skip_ws(p, end);
	if (*p != '[' || *(n = ss_jscan_skip_ws(p + 1, end)) == ']')
		goto bad;
	nend = ss_jscan_value(n, end, NULL);
	p = ss_jscan_skip_ws(nend, end);
	if (*p != ',')
		goto bad;
	v = ss_jscan_skip_ws(p + 1, end);
	vend = ss_jscan_value(v, end, NULL);
	if (*ss_jscan_skip_ws(vend, end) != ']')
		goto bad;
	if (*n != '"' && !is_base64_form(n, nend, &b64, &b64end)) {
		*why = "a header name must be a string or {\"base64\":...}";
		return false;
	}
	if (!ss_kafka_payload_bytes(n, (size_t)(nend - n), scratch, &name, &nlen, &isnull, why))
		return false;
	return add_named(h, name, nlen, v, vend, why);
bad:
	*why = "an array of headers must hold [name, value] pairs";
	return false;
}

/* [[name, value], ...], p at '['. */
static bool
headers_list(rd_kafka_headers_t *h, const char *p, const char *end, const char **why)
{
	ss_buf scratch = {0};
	const char *e;
	bool ok = true;

	p = ss_jscan_skip_ws(p + 1, end);
	while (ok && p < end && *p != ']') {
		e = ss_jscan_value(p, end, NULL);
		ok = header_pair(h, p, e, &scratch, why);
		p = ss_jscan_skip_ws(e, end);
		if (p < end && *p == ',')
			p = ss_jscan_skip_ws(p + 1, end);
	}
	ss_buf_free(&scratch);
	return ok;
}

bool
ss_kafka_headers_from_json(const char *p, size_t len, rd_kafka_headers_t **out, const char **why)
{
	const char *end = p + len;
	bool ok;

	*out = NULL;
	p = ss_jscan_skip_ws(p, end);
	if (end - p >= 4 && memcmp(p, "null", 4) == 0)
		return true;
	if (p == end || (*p != '{' && *p != '[')) {
		*why = "headers must be an object or an array of [name, value] pairs";
		return false;
	}
	*out = rd_kafka_headers_new(8);
	ok = *p == '{' ? headers_object(*out, p, end, why) : headers_list(*out, p, end, why);
	if (!ok) {
		rd_kafka_headers_destroy(*out);
		*out = NULL;
	}
	return ok;
}

bool
ss_kafka_offset_parse(const char *s, int64_t *offset, int64_t *time_ms)
{
	char *end;
	long long v;
	int64_t ns;

	if (strcmp(s, "beginning") == 0)
		*offset = RD_KAFKA_OFFSET_BEGINNING;
	else if (strcmp(s, "end") == 0)
		*offset = RD_KAFKA_OFFSET_END;
	else if (strcmp(s, "stored") == 0)
		*offset = RD_KAFKA_OFFSET_STORED;
	else if (*s == '@') {
		if (!ss_time_parse_arg(s + 1, &ns))
			return false;
		*time_ms = ns / 1000000;
		*offset = SS_OFFSET_TIME;
	} else {
		errno = 0;
		v = strtoll(s, &end, 10);
		if (*s == '\0' || *end != '\0' || errno != 0 || (*s == '-' && v == 0))
			return false;
		*offset = v >= 0 ? v : RD_KAFKA_OFFSET_TAIL(-v);
	}
	return true;
}

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
