/* avro: the codec's life (open, free), its schemas and Avro C's allocator (see avro.h).
 * avro_decode.c walks a value and its schema to write its JSON; avro_encode.c fills a
 * value from a JSON value that jansson parsed (jansson keeps 64-bit integers exact, which
 * libjq's doubles would not); both call this file, and Apache Avro C's generic values
 * (avro_value_read / avro_value_write) do the binary side.
 *
 * Hostile bytes: Avro C allocates what a length prefix says before it reads the bytes.
 * While a record is decoded, an allocator limit refuses any single allocation larger
 * than the record could need, so a bad length is an error, not an out-of-memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/avro_impl.h"
#include "base/diag.h"

#ifdef __SANITIZE_ADDRESS__
/* make SANITIZE=1: the memory Avro C's avro_raw_array_ensure_size loses when the
 * allocation limit refuses to grow an array (it overwrites its pointer with NULL). */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:avro_raw_array_ensure_size\n";
}
const char *__lsan_default_options(void);
const char *
__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif

static size_t alloc_limit = SIZE_MAX;

/* The codecs open now, freed at exit when a tool exits in the middle of a run
 * (ss_diag_die): Avro C's values are held through pointers a leak checker does not
 * follow. */
#define MAX_OPEN 8
static ss_avro *open_codecs[MAX_OPEN];

static void
free_open_codecs(void)
{
	for (int i = 0; i < MAX_OPEN; i++)
		ss_avro_free(open_codecs[i]);
}

static void
track(ss_avro *a, ss_avro *with)
{
	for (int i = 0; i < MAX_OPEN; i++)
		if (open_codecs[i] == a) {
			open_codecs[i] = with;
			return;
		}
}

static void *
limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	if (nsize > alloc_limit)
		return NULL;
	return realloc(ptr, nsize);
}
void
ss_avro_limit_alloc(size_t limit)
{
	alloc_limit = limit;
}

bool
ss_avro_schema_new(ss_avro *a, const char *json, size_t len, int32_t id, struct ss_avro_schema **out)
{
	struct ss_avro_schema *s = ss_xmalloc(sizeof *s);

	s->id = id;
	if (avro_schema_from_json_length(json, len, &s->schema) != 0) {
		ss_avro_fail(a, SS_EXIT_DATA, "not an Avro schema: %s", avro_strerror());
		free(s);
		return false;
	}
	s->iface = avro_generic_class_from_schema(s->schema);
	if (s->iface == NULL || avro_generic_value_new(s->iface, &s->value) != 0) {
		ss_avro_fail(a, SS_EXIT_DATA, "Avro schema not usable: %s", avro_strerror());
		if (s->iface != NULL)
			avro_value_iface_decref(s->iface);
		avro_schema_decref(s->schema);
		free(s);
		return false;
	}
	*out = s;
	return true;
}

void
ss_avro_schema_free(struct ss_avro_schema *s)
{
	if (s == NULL)
		return;
	avro_value_decref(&s->value);
	avro_value_iface_decref(s->iface);
	avro_schema_decref(s->schema);
	free(s);
}


/* The name a union branch goes by in JSON: a named type's full name, else its type. */
const char *
ss_avro_branch_name(avro_schema_t s, char *buf, size_t size)
{
	const char *ns;

	if (is_avro_named_type(s)) {
		ns = avro_schema_namespace(s);
		if (ns != NULL && *ns != '\0') {
			snprintf(buf, size, "%s.%s", ns, avro_schema_name(s));
			return buf;
		}
		return avro_schema_name(s);
	}
	return avro_schema_type_name(s);
}

/* ---- open, free ---- */

static char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ss_buf b = {0};
	char chunk[8192];
	size_t n;

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		ss_buf_add(&b, chunk, n);
	fclose(f);
	*len = b.len;
	return ss_buf_cstr(&b);
}

static void
open_schema_file(ss_avro *a, const struct ss_avro_opts *o, char **text, size_t *len)
{
	*text = read_file(o->schema_file, len);
	if (*text == NULL)
		ss_diag_die(SS_EXIT_USAGE, "%s: %s", o->schema_file, strerror(errno));
	if (!ss_avro_schema_new(a, *text, *len, -1, &a->fixed))
		ss_diag_die(SS_EXIT_USAGE, "%s: %s", o->schema_file, a->why);
}

/* A producer with a registry: the subject's id for the schema file, or its latest. */
static void
open_subject(ss_avro *a, const struct ss_avro_opts *o, const char *text)
{
	char *latest = NULL;
	int32_t id;
	int rc = ss_avro_registry_subject(a, o->subject, text, &id, &latest);

	if (rc != 0)
		ss_diag_die(rc, "%s", a->why);
	if (latest != NULL) {
		if (!ss_avro_schema_new(a, latest, strlen(latest), id, &a->fixed))
			ss_diag_die(SS_EXIT_DATA, "subject %s: %s", o->subject, a->why);
		free(latest);
	}
	a->fixed->id = id;
}

ss_avro *
ss_avro_open(const struct ss_avro_opts *o)
{
	ss_avro *a = calloc(1, sizeof *a);
	char *text = NULL;
	size_t len = 0;

	if (a == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	avro_set_allocator(limited_alloc, NULL);
	static bool registered;
	if (!registered)
		registered = atexit(free_open_codecs) == 0;
	track(NULL, a);
	a->what = o->what;
	a->timeout_ms = o->timeout_ms;
	a->reader = avro_reader_memory("", 0);
	a->writer = avro_writer_memory("", 0);
	if (o->registry != NULL) {
		a->registry = ss_xstrdup(o->registry);
		for (size_t n = strlen(a->registry); n > 0 && a->registry[n - 1] == '/'; n--)
			a->registry[n - 1] = '\0';
	}
	if (o->schema_file != NULL)
		open_schema_file(a, o, &text, &len);
	if (a->registry != NULL && o->subject != NULL)
		open_subject(a, o, text);
	free(text);
	return a;
}

void
ss_avro_free(ss_avro *a)
{
	if (a == NULL)
		return;
	track(a, NULL);
	ss_avro_schema_free(a->fixed);
	for (size_t i = 0; i < a->ncache; i++)
		ss_avro_schema_free(a->cache[i]);
	free(a->cache);
	ss_avro_registry_close(a);
	avro_reader_free(a->reader);
	avro_writer_free(a->writer);
	ss_buf_free(&a->scratch);
	ss_buf_free(&a->path);
	ss_buf_free(&a->http);
	free(a->enc);
	free(a->registry);
	free(a);
}
