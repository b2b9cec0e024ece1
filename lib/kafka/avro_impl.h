/* avro_impl: what the files of the avro module (avro.c: open, free, schemas; avro_decode.c
 * and avro_encode.c: the codec's two directions; avro_registry.c: the schema registry
 * client) share inside lib/kafka/; nothing outside lib/kafka/avro*.c includes it. The
 * decoder and encoder call avro.c and the registry client, avro.c calls the registry
 * client, never the other way: the client deals in schema texts and ids, avro.c builds
 * the schemas, the codec caches a consumer's. */
#ifndef SS_AVRO_IMPL_H
#define SS_AVRO_IMPL_H
/* the parts of Avro C used, header by header */
#include <avro/allocation.h>
#include <avro/basics.h>
#include <avro/errors.h>
#include <avro/generic.h>
#include <avro/io.h>
#include <avro/schema.h>
#include <avro/value.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "kafka/avro.h"

/* One writer schema, with a value of it that is reset and reused for every record. */
struct ss_avro_schema {
	int32_t id; /* the registry's id, or -1 for a schema file */
	avro_schema_t schema;
	avro_value_iface_t *iface;
	avro_value_t value;
};

struct ss_avro {
	const char *what;
	char *registry;                /* base URL without a trailing '/', or NULL */
	int64_t timeout_ms;
	CURL *curl;
	struct ss_avro_schema *fixed;  /* the schema file's, or the producer's registered one */
	struct ss_avro_schema **cache; /* a consumer's schemas fetched by registry id */
	size_t ncache, capcache;
	int32_t *unknown;              /* ids the registry did not know (asked once each) */
	size_t nunknown;
	avro_reader_t reader;
	avro_writer_t writer;
	char *enc;                     /* the encoded value */
	size_t enc_cap;
	ss_buf scratch, path, http;
	char why[512];
};

/* Set a->why (printf style) and return status. Here, not in a .c file, so that the
 * registry client (the lower half) and the codec both use it without calling each other. */
static inline int __attribute__((format(printf, 3, 4)))
ss_avro_fail(ss_avro *a, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof a->why, fmt, ap);
	va_end(ap);
	return status;
}

/* Nesting of a value, in either direction. */
#define SS_AVRO_MAX_DEPTH 1000

/* avro.c: a schema from its JSON text, with id (-1 for a schema file); false with a->why. */
bool ss_avro_schema_new(ss_avro *a, const char *json, size_t len, int32_t id, struct ss_avro_schema **out);
void ss_avro_schema_free(struct ss_avro_schema *s);
/* avro.c: the name a union branch goes by in JSON: a named type's full name, else its
 * type (in buf when it is made up). */
const char *ss_avro_branch_name(avro_schema_t s, char *buf, size_t size);
/* avro.c: the largest single allocation Avro C may make (SIZE_MAX: no limit), set while
 * a record is decoded. */
void ss_avro_limit_alloc(size_t limit);

/* Registry: the schema text of id (malloc'd into *text); an id the registry did not
 * know is asked once. 0, or a status with a->why. */
int ss_avro_registry_schema_text(ss_avro *a, int32_t id, char **text);
/* Registry: register (schema_json non-NULL) or look up the latest version of subject;
 * sets *id and, for a look-up, *schema_text (malloc'd). 0, or a status with a->why. */
int ss_avro_registry_subject(ss_avro *a, const char *subject, const char *schema_json,
			     int32_t *id, char **schema_text);
void ss_avro_registry_close(ss_avro *a);
#endif
