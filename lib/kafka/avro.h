/* avro: Avro payloads <-> JSON for ss-consume and ss-produce (--key-format avro,
 * --value-format avro), over Apache Avro C (libavro) for the binary encoding, jansson for
 * the JSON read back, and libcurl for the Confluent-compatible schema registry.
 *
 * The JSON of a value is Avro's own JSON encoding (the Avro specification's, as kcat and
 * the registry's console consumer print it): records are objects in schema field order,
 * enums their symbol, maps objects, arrays arrays; a union is null for its null branch
 * and {"BRANCH": value} otherwise (BRANCH the type's name, a named type's full name);
 * bytes and fixed are strings of the code points U+0000..U+00FF, one per byte; float and
 * double NaN and infinities are the strings "NaN", "Infinity", "-Infinity". Encoding takes
 * the same JSON back (bytes and fixed also as {"base64":"..."}), so a decode-encode round
 * trip gives the same bytes.
 *
 * Two sources of schemas: a schema file (plain Avro binary, no framing), or a schema
 * registry (the wire format: a zero byte, the schema id as 4 big-endian bytes, the Avro
 * binary). A consumer's schemas are fetched once per id (GET /schemas/ids/ID) and kept;
 * a producer gets its id once, when opened: with a schema file it registers the schema
 * under the subject (POST /subjects/SUBJECT/versions, which gives the existing id when
 * the schema is already there), without one it takes the subject's latest version.
 *
 * Ownership: an ss_avro is the caller's (ss_avro_free); it owns its schemas, its HTTP
 * handle and its scratch memory. Output buffers are the caller's; ss_avro_decode and
 * ss_avro_encode append to them. A *why string points into the ss_avro and stays valid
 * until its next call. Statuses are the ss(7) exit codes: 0, SS_EXIT_DATA for a record
 * that cannot be decoded or encoded (bad bytes, JSON that does not fit the schema, an id
 * the registry does not know), SS_EXIT_TEMPFAIL when the registry cannot be reached or
 * answers with a server error. */
#ifndef SS_AVRO_H
#define SS_AVRO_H
#include <stddef.h>
#include <stdint.h>
#include "base/buf.h"

typedef struct ss_avro ss_avro;

struct ss_avro_opts {
	const char *schema_file; /* --value-schema/--key-schema FILE, or NULL */
	const char *registry;    /* --schema-registry URL, or NULL */
	const char *subject;     /* TOPIC-value or TOPIC-key: for a producer with a registry */
	const char *what;        /* "value" or "key", for messages */
	int64_t timeout_ms;      /* for each request to the registry */
};

/* A codec. Needs a schema file, a registry, or both. A schema file that cannot be read
 * or is not an Avro schema is a usage error (exit 2). With a registry and a subject (a
 * producer) the schema id is obtained now: exit 75 when the registry cannot be reached,
 * 1 when it refuses. */
ss_avro *ss_avro_open(const struct ss_avro_opts *o);
void ss_avro_free(ss_avro *a);
/* Append the JSON of the Avro payload [p, p+len) to out. On failure out is unchanged. */
int ss_avro_decode(ss_avro *a, const void *p, size_t len, ss_buf *out, const char **why);
/* Append the Avro payload (framed for the registry when there is one) of the JSON value
 * [json, json+len) to out. On failure out is unchanged. */
int ss_avro_encode(ss_avro *a, const char *json, size_t len, ss_buf *out, const char **why);
#endif
