/* kafka: what ss-consume, ss-produce and ss-mock-broker share on top of librdkafka.
 * - Options: brokers (-b, else bootstrap.servers from the properties, else $SS_BROKERS,
 *   else localhost:9092), -X prop=val and -F FILE (prop=val lines) collected in order
 *   into a struct ss_kopts the caller owns; they are applied after the tool's defaults,
 *   so a user setting always wins. Without -F, the default configuration file
 *   ($SS_CONFIG, else ~/.config/ss/kafka.conf) comes first. Secrets (sasl.password ...)
 *   given with -X are warned about (ps shows them) and never echoed in messages.
 * - Errors: librdkafka error codes mapped to exit codes (75 when a broker is unavailable).
 * - Payloads: the envelope's key/value/header forms (auto|json|string|base64 and the
 *   {"base64":"..."} form for bytes that are not text) in both directions.
 * - Offsets: parsing of -o specs (beginning|end|stored|N|-N|@TIME).
 * - The mock cluster behind ss-mock-broker.
 * Buffers (ss_buf) are owned by the caller; a conf returned here is owned by the caller
 * until ss_kafka_new, which takes it. */
#ifndef SS_KAFKA_H
#define SS_KAFKA_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include "base/buf.h"
#include "kafka/kcat.h"

struct ss_kopts {
	const char *brokers; /* -b, or NULL for $SS_BROKERS / localhost:9092 */
	char **props;        /* "prop=val" strings in command-line order (owned) */
	size_t nprops;
	size_t ndefault;     /* the first ndefault props came from the default file */
	size_t nfiles;       /* -F files read */
	int64_t timeout_ms;  /* --timeout: how long a broker may be unreachable */
};
void ss_kopts_init(struct ss_kopts *o);
void ss_kopts_free(struct ss_kopts *o);
/* -b BROKERS; usage error if it names none ("", ","). */
void ss_kopts_set_brokers(struct ss_kopts *o, const char *arg, const char *usage);
/* -X prop=val: checked for the '=' now (usage error otherwise), applied later. */
void ss_kopts_add_prop(struct ss_kopts *o, const char *arg, const char *usage);
/* -F FILE: read prop=val lines now (blank lines and # comments skipped); exit 2 on errors. */
void ss_kopts_add_file(struct ss_kopts *o, const char *path);
/* After the options: without -F, read the default configuration file ($SS_CONFIG if
 * set, none if it is set but empty, else $XDG_CONFIG_HOME/ss/kafka.conf or
 * ~/.config/ss/kafka.conf when it exists) in front of the -X properties. Exit 2 on a
 * file that cannot be read or a line that is not prop=val. */
void ss_kopts_default_file(struct ss_kopts *o);
/* Does a property hold a secret (a password, a private key, an OAuth secret)? */
bool ss_kafka_prop_secret(const char *prop);
/* --timeout DURATION; usage error if not a positive duration. */
void ss_kopts_set_timeout(struct ss_kopts *o, const char *arg, const char *usage);

/* The options every Kafka tool takes, handled in one place: -b, -X, -F, --timeout (its
 * long option returns SS_KOPT_TIMEOUT) and kcat's letters (answered with the ss way to
 * say them, exit 2). getopt's list has SS_KOPTS_SHORT; a tool's switch hands what it
 * does not know to ss_kopts_getopt, which is false when ch is none of these. */
#define SS_KOPTS_SHORT "b:X:F:" SS_KCAT_OPTS
enum { SS_KOPT_TIMEOUT = 0x1000 };
bool ss_kopts_getopt(struct ss_kopts *o, int ch, const char *arg, const char *usage);
const char *ss_kopts_brokers(const struct ss_kopts *o);

/* A configuration: bootstrap servers, the given defaults (NULL-terminated pairs of
 * property and value), then the user's properties. Exits 2 on an invalid property. The
 * handle logs librdkafka messages on stderr with the tool prefix, keeps the last error
 * for ss_kafka_last_error, and drops connection-failure noise (reported by the tool). */
rd_kafka_conf_t *ss_kafka_conf(const struct ss_kopts *o, const char *const *defaults);
/* Set one property; exit 2 with the reason if librdkafka rejects it. */
void ss_kafka_conf_set(rd_kafka_conf_t *conf, const char *prop, const char *val);
/* Does the user's -X/-F list set prop? */
bool ss_kopts_has(const struct ss_kopts *o, const char *prop);
rd_kafka_t *ss_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf);
/* The last error librdkafka reported for any handle ("" if none). */
const char *ss_kafka_last_error(void);
/* When (ss_time_mono) librdkafka last reported every broker down, 0 if not since the
 * last clear. librdkafka says nothing when they come back: probe, then clear. */
int64_t ss_kafka_all_down_since(void);
void ss_kafka_clear_all_down(void);

/* Topic metadata with a bounded wait. Exits 75 with "cannot reach brokers ..." when no
 * broker answers within timeout_ms; a wait longer than a moment is said at once on
 * stderr when it is a terminal ("connecting to B ..."), and the line taken back when the
 * brokers answer. Returns the metadata (rd_kafka_metadata_destroy it). */
const rd_kafka_metadata_t *ss_kafka_metadata(rd_kafka_t *rk, const struct ss_kopts *o,
					     const char *topic);
/* The metadata of every topic (asking for all never creates one, as asking for a name
 * may where brokers auto-create topics). Exits as ss_kafka_metadata does. */
const rd_kafka_metadata_t *ss_kafka_metadata_all(rd_kafka_t *rk, const struct ss_kopts *o);
/* One attempt of at most wait_ms, silent: the metadata, or NULL with *err. */
const rd_kafka_metadata_t *ss_kafka_metadata_try(rd_kafka_t *rk, const char *topic, int wait_ms,
						 rd_kafka_resp_err_t *err);
/* Exit as ss_kafka_metadata does when the brokers did not answer with err in time. */
noreturn void ss_kafka_die_unreachable(const struct ss_kopts *o, rd_kafka_resp_err_t err);
/* Did a broker refuse this side's credentials, or this side the broker's certificate? */
bool ss_kafka_auth_failed(void);
/* Does librdkafka's error (err, or 0 where only its message is known) say so? */
bool ss_kafka_is_auth_failure(rd_kafka_resp_err_t err, const char *msg);
/* Exit 77 with the authentication failure librdkafka reported, and a hint. */
noreturn void ss_kafka_die_auth(void);
/* rd_kafka_offsets_for_times on a copy of l with every offset set to ts (-2: the low
 * watermark, -1: the high watermark, else a time in ms). *err is the call's error; each
 * partition's own is in its element. The copy is the caller's to destroy. */
rd_kafka_topic_partition_list_t *ss_kafka_offsets_at(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *l,
						     int64_t ts, int timeout_ms, rd_kafka_resp_err_t *err);
/* The exit status an error should end the run with: 75 for unavailable brokers and time
 * outs, 77 for authentication and authorization failures, 1 for everything else. */
int ss_kafka_exit_code(rd_kafka_resp_err_t err);

/* Payload forms. */
/* avro: decoded and encoded by the tools with a schema (avro.h); the functions here treat
 * it as base64 (the bytes undecoded). */
enum ss_kfmt { SS_KFMT_AUTO, SS_KFMT_JSON, SS_KFMT_STRING, SS_KFMT_BASE64, SS_KFMT_AVRO };
bool ss_kfmt_parse(const char *s, enum ss_kfmt *fmt);
/* Append bytes as a JSON value that ss_kafka_payload_bytes reads back as exactly these
 * bytes. NULL -> null. auto: the bytes themselves when they are one line of JSON that
 * stands for itself (not a string, not null, not the {"base64":"..."} form, no
 * whitespace around it); else a string of them if UTF-8; else {"base64":"..."}. json:
 * as auto, but returns false when the bytes are not JSON (callers warn). string: a
 * string if UTF-8, else the base64 form. base64: always the base64 form. */
bool ss_kafka_put_payload(ss_buf *b, const void *p, size_t len, enum ss_kfmt fmt);
void ss_kafka_put_int(ss_buf *b, int64_t v);
/* Append the headers, exactly: {"name":value,...} when every name is UTF-8 and the
 * headers of each name are adjacent (a name with several gets an array of their values
 * in order); else [["name",value],...] in order, a name that is not UTF-8 in base64 form.
 * Values: a string if UTF-8, null if NULL, else the base64 form. */
void ss_kafka_put_headers(ss_buf *b, rd_kafka_headers_t *hdrs);

/* The bytes a JSON value stands for (the inverse of ss_kafka_put_payload): a string ->
 * its characters; {"base64":"..."} -> the decoded bytes; null -> NULL (*isnull); any
 * other value -> its JSON text unchanged. [p,p+len) must be one valid JSON value. The
 * bytes are p itself or scratch's data. false with *why on a bad base64 form. */
bool ss_kafka_payload_bytes(const char *p, size_t len, ss_buf *scratch, const char **out,
			    size_t *outlen, bool *isnull, const char **why);
/* Headers from a JSON value (raw, valid), either form ss_kafka_put_headers writes: an
 * object, name -> value (as ss_kafka_payload_bytes reads it; an array gives the name once
 * per element), or an array of [name, value] pairs (the name a string or base64 form).
 * NULL for null; false with *why for anything else. */
bool ss_kafka_headers_from_json(const char *p, size_t len, rd_kafka_headers_t **out,
				const char **why);

/* -o: beginning|end|stored|N|-N (N from the end)|@TIME. Sets *offset to an absolute
 * offset or a librdkafka logical offset; for @TIME sets *time_ms and *offset to
 * SS_OFFSET_TIME. false if not valid. */
#define SS_OFFSET_TIME (-3000000000LL)
bool ss_kafka_offset_parse(const char *s, int64_t *offset, int64_t *time_ms);

/* The mock cluster (librdkafka's) of ss-mock-broker. */
typedef struct ss_kmock ss_kmock;
ss_kmock *ss_kmock_start(int nbrokers);
/* Create "NAME" or "NAME:PARTITIONS"; false with *why if not valid. */
bool ss_kmock_topic(ss_kmock *m, const char *spec, const char **why);
const char *ss_kmock_bootstraps(ss_kmock *m);
void ss_kmock_stop(ss_kmock *m);
#endif
