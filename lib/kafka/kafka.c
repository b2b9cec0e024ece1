/* kafka: the Kafka tools' options (-b, -X, -F, --timeout, -o) and the configuration and
 * handles made from them (see kafka.h). */
#include <ctype.h>
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/diag.h"
#include "kafka/kafka.h"
#include "kafka/kafka_impl.h"
#include "base/sstime.h"

#define DEFAULT_TIMEOUT_MS 30000

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

bool
ss_kopts_getopt(struct ss_kopts *o, int ch, const char *arg, const char *usage)
{
	switch (ch) {
	case 'b': ss_kopts_set_brokers(o, arg, usage); return true;
	case 'X': ss_kopts_add_prop(o, arg, usage); return true;
	case 'F': ss_kopts_add_file(o, arg); return true;
	case SS_KOPT_TIMEOUT: ss_kopts_set_timeout(o, arg, usage); return true;
	case 't':
	case 'C':
	case 'P':
	case 'K':
	case 'q': ss_kcat_habit(usage, ch, ch == 't' || ch == 'K' ? arg : NULL);
	default: return false;
	}
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
	ss_kafka_conf_log(conf, ss_kopts_has(o, "debug"));
	return conf;
}

/* A run that ends while librdkafka's threads run (an error said from a callback, a
 * signal, with the handle alive) must not run OpenSSL's exit handler: OPENSSL_cleanup
 * frees what a broker thread in a TLS handshake (a reconnect) is using, and the process
 * dies of SIGSEGV after its one line (a wrong password: ~1 ss-produce run in 100; the
 * core showed exit() in OPENSSL_cleanup against CRYPTO_THREAD_write_lock in a broker
 * thread). Registered after each rd_kafka_new (a handle that speaks TLS sets OpenSSL
 * up there, and OpenSSL its handler; one without does not), this runs before it: with
 * threads still running, the process ends here, its output flushed; once every handle
 * is destroyed, the other handlers run as usual. The tools' own work at exit is done
 * before exit() is called (ss_diag_die's hook). */
static void
end_before_libraries(int status, void *arg)
{
	(void)arg;
	if (rd_kafka_thread_cnt() > 0) {
		fflush(NULL);
		_exit(status);
	}
}

rd_kafka_t *
ss_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);

	if (rk == NULL)
		ss_diag_die(SS_EXIT_USAGE, "%s", err);
	(void)on_exit(end_before_libraries, NULL); /* (a process makes a handle or two) */
	return rk;
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

