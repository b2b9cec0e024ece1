/* avro: Avro payloads <-> JSON (see avro.h). The binary side is Apache Avro C's generic
 * values (avro_value_read / avro_value_write); this file only walks a value and its
 * schema to write its JSON, or to fill it from a JSON value that jansson parsed (jansson
 * keeps 64-bit integers exact, which libjq's doubles would not).
 *
 * Hostile bytes: Avro C allocates what a length prefix says before it reads the bytes.
 * While a record is decoded, an allocator limit refuses any single allocation larger
 * than the record could need, so a bad length is an error, not an out-of-memory. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/avro_impl.h"
#include "base/diag.h"
#include "base/jscan.h"

#define MAX_DEPTH 1000

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

static bool
schema_new(ss_avro *a, const char *json, size_t len, int32_t id, struct ss_avro_schema **out)
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

static void
schema_free(struct ss_avro_schema *s)
{
	if (s == NULL)
		return;
	avro_value_decref(&s->value);
	avro_value_iface_decref(s->iface);
	avro_schema_decref(s->schema);
	free(s);
}

/* ---- Avro value -> JSON ---- */

static void
put_double(ss_buf *b, double d, int min_digits, int max_digits, bool as_float)
{
	char num[40];

	if (isnan(d)) {
		ss_buf_adds(b, "\"NaN\"");
		return;
	}
	if (isinf(d)) {
		ss_buf_adds(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	/* the shortest that reads back as the same number */
	for (int prec = min_digits; prec <= max_digits; prec++) {
		snprintf(num, sizeof num, "%.*g", prec, d);
		if (as_float ? strtof(num, NULL) == (float)d : strtod(num, NULL) == d)
			break;
	}
	ss_buf_adds(b, num);
	if (strpbrk(num, ".eE") == NULL)
		ss_buf_adds(b, ".0"); /* a double stays a double in JSON readers that care */
}

/* bytes as Avro's JSON encoding writes them: one code point U+0000..U+00FF per byte */
static void
put_latin1(ss_avro *a, ss_buf *b, const unsigned char *p, size_t n)
{
	ss_buf_reset(&a->scratch);
	for (size_t i = 0; i < n; i++) {
		if (p[i] < 0x80) {
			ss_buf_addc(&a->scratch, (char)p[i]);
		} else {
			ss_buf_addc(&a->scratch, (char)(0xc0 | (p[i] >> 6)));
			ss_buf_addc(&a->scratch, (char)(0x80 | (p[i] & 0x3f)));
		}
	}
	ss_jscan_quote(b, a->scratch.data, a->scratch.len);
}

static void
put_int(ss_buf *b, long long v)
{
	char num[24];

	snprintf(num, sizeof num, "%lld", v);
	ss_buf_adds(b, num);
}

/* The name a union branch goes by in JSON: a named type's full name, else its type. */
static const char *
branch_name(avro_schema_t s, char *buf, size_t size)
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

static int put_value(ss_avro *a, avro_value_t *v, ss_buf *b, int depth);

static int
put_string(ss_avro *a, avro_value_t *v, ss_buf *b)
{
	const char *s;
	size_t size;

	if (avro_value_get_string(v, &s, &size) != 0)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
	if (size > 0)
		size--; /* Avro C counts the NUL it adds */
	if (!ss_jscan_quote(b, s, size))
		return ss_avro_fail(a, SS_EXIT_DATA, "a string is not UTF-8");
	return 0;
}

static int
put_record(ss_avro *a, avro_value_t *v, ss_buf *b, int depth)
{
	size_t n;
	avro_value_t child;
	const char *name;
	int rc;

	avro_value_get_size(v, &n);
	ss_buf_addc(b, '{');
	for (size_t i = 0; i < n; i++) {
		avro_value_get_by_index(v, i, &child, &name);
		if (name == NULL) /* a record's field name */
			name = avro_schema_record_field_name(avro_value_get_schema(v), (int)i);
		if (i > 0)
			ss_buf_addc(b, ',');
		ss_jscan_quote(b, name, strlen(name));
		ss_buf_addc(b, ':');
		if ((rc = put_value(a, &child, b, depth + 1)) != 0)
			return rc;
	}
	ss_buf_addc(b, '}');
	return 0;
}

static int
put_array(ss_avro *a, avro_value_t *v, ss_buf *b, int depth)
{
	size_t n;
	avro_value_t child;
	int rc;

	avro_value_get_size(v, &n);
	ss_buf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		avro_value_get_by_index(v, i, &child, NULL);
		if (i > 0)
			ss_buf_addc(b, ',');
		if ((rc = put_value(a, &child, b, depth + 1)) != 0)
			return rc;
	}
	ss_buf_addc(b, ']');
	return 0;
}

static int
put_union(ss_avro *a, avro_value_t *v, ss_buf *b, int depth)
{
	avro_value_t branch;
	char buf[512];
	const char *name;
	int rc;

	avro_value_get_current_branch(v, &branch);
	if (avro_value_get_type(&branch) == AVRO_NULL) {
		ss_buf_adds(b, "null");
		return 0;
	}
	name = branch_name(avro_value_get_schema(&branch), buf, sizeof buf);
	ss_buf_addc(b, '{');
	ss_jscan_quote(b, name, strlen(name));
	ss_buf_addc(b, ':');
	if ((rc = put_value(a, &branch, b, depth + 1)) != 0)
		return rc;
	ss_buf_addc(b, '}');
	return 0;
}

static int
put_bytes(ss_avro *a, avro_value_t *v, ss_buf *b, bool fixed)
{
	const void *p;
	size_t n;

	if (fixed)
		avro_value_get_fixed(v, &p, &n);
	else
		avro_value_get_bytes(v, &p, &n);
	put_latin1(a, b, p, n);
	return 0;
}

static int
put_scalar(ss_avro *a, avro_value_t *v, ss_buf *b)
{
	int32_t i;
	int64_t l;
	float f;
	double d;
	int bv, e;

	switch (avro_value_get_type(v)) {
	case AVRO_INT32:
		avro_value_get_int(v, &i);
		put_int(b, i);
		return 0;
	case AVRO_INT64:
		avro_value_get_long(v, &l);
		put_int(b, l);
		return 0;
	case AVRO_FLOAT:
		avro_value_get_float(v, &f);
		put_double(b, f, 6, 9, true);
		return 0;
	case AVRO_DOUBLE:
		avro_value_get_double(v, &d);
		put_double(b, d, 15, 17, false);
		return 0;
	case AVRO_BOOLEAN:
		avro_value_get_boolean(v, &bv);
		ss_buf_adds(b, bv ? "true" : "false");
		return 0;
	case AVRO_NULL:
		ss_buf_adds(b, "null");
		return 0;
	case AVRO_ENUM: {
		avro_value_get_enum(v, &e);
		const char *sym = avro_schema_enum_get(avro_value_get_schema(v), e);
		if (sym == NULL)
			return ss_avro_fail(a, SS_EXIT_DATA, "enum index %d out of range", e);
		ss_jscan_quote(b, sym, strlen(sym));
		return 0;
	}
	default:
		return ss_avro_fail(a, SS_EXIT_DATA, "unsupported Avro type %d", avro_value_get_type(v));
	}
}

static int
put_value(ss_avro *a, avro_value_t *v, ss_buf *b, int depth)
{
	if (depth > MAX_DEPTH)
		return ss_avro_fail(a, SS_EXIT_DATA, "nested deeper than %d", MAX_DEPTH);
	switch (avro_value_get_type(v)) {
	case AVRO_STRING:
		return put_string(a, v, b);
	case AVRO_BYTES:
		return put_bytes(a, v, b, false);
	case AVRO_FIXED:
		return put_bytes(a, v, b, true);
	case AVRO_RECORD:
	case AVRO_MAP:
		return put_record(a, v, b, depth);
	case AVRO_ARRAY:
		return put_array(a, v, b, depth);
	case AVRO_UNION:
		return put_union(a, v, b, depth);
	default:
		return put_scalar(a, v, b);
	}
}

/* A value a failed read left behind is not reused: Avro C's arrays keep their old size
 * with no memory after a refused allocation (and lose that memory: a leak of Avro C's,
 * bounded by the allocation limit per bad record). */
static void
renew_value(struct ss_avro_schema *s)
{
	avro_value_decref(&s->value);
	if (avro_generic_value_new(s->iface, &s->value) != 0)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
}

/* Read [p, p+len) as one value of s and append its JSON. */
static int
decode_with(ss_avro *a, struct ss_avro_schema *s, const char *p, size_t len, ss_buf *out)
{
	size_t mark = out->len;
	int rc;

	avro_value_reset(&s->value);
	avro_reader_memory_set_source(a->reader, p, (int64_t)len);
	alloc_limit = 16 * len + (1u << 20);
	rc = avro_value_read(a->reader, &s->value);
	alloc_limit = SIZE_MAX;
	if (rc != 0) {
		ss_avro_fail(a, SS_EXIT_DATA, "%s: not Avro of the schema: %s", a->what, avro_strerror());
		renew_value(s);
		return SS_EXIT_DATA;
	}
	char extra;
	if (avro_read(a->reader, &extra, 1) == 0) /* avro_reader_is_eof answers for files only */
		return ss_avro_fail(a, SS_EXIT_DATA, "%s: not Avro of the schema: bytes left after the value",
				    a->what);
	if ((rc = put_value(a, &s->value, out, 0)) != 0)
		out->len = mark;
	return rc;
}

static struct ss_avro_schema *
cached(ss_avro *a, int32_t id)
{
	for (size_t i = 0; i < a->ncache; i++)
		if (a->cache[i]->id == id)
			return a->cache[i];
	return NULL;
}

/* The writer schema of registry id, fetched and built at most once. */
static int
registry_schema(ss_avro *a, int32_t id, struct ss_avro_schema **out)
{
	char *text;
	int rc;
	bool ok;

	if ((*out = cached(a, id)) != NULL)
		return 0;
	if ((rc = ss_avro_registry_schema_text(a, id, &text)) != 0)
		return rc;
	ok = schema_new(a, text, strlen(text), id, out);
	free(text);
	if (!ok)
		return SS_EXIT_DATA;
	if (a->ncache == a->capcache) {
		a->capcache = a->capcache ? 2 * a->capcache : 8;
		a->cache = ss_xrealloc(a->cache, a->capcache * sizeof *a->cache);
	}
	a->cache[a->ncache++] = *out;
	return 0;
}

int
ss_avro_decode(ss_avro *a, const void *p, size_t len, ss_buf *out, const char **why)
{
	const unsigned char *u = p;
	struct ss_avro_schema *s = a->fixed;
	int rc;

	*why = a->why;
	if (a->registry == NULL)
		return decode_with(a, s, p, len, out);
	if (len < 5 || u[0] != 0)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s: not in the schema registry's wire format "
				    "(no zero byte and schema id)", a->what);
	int32_t id = (int32_t)((uint32_t)u[1] << 24 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 8 | u[4]);
	if ((rc = registry_schema(a, id, &s)) != 0)
		return rc;
	return decode_with(a, s, (const char *)u + 5, len - 5, out);
}

/* ---- JSON -> Avro value ---- */

static int fill(ss_avro *a, avro_value_t *v, json_t *j, int depth);

static int
mismatch(ss_avro *a, avro_value_t *v, const char *expected)
{
	char buf[512];
	const char *at = a->path.len > 0 ? ss_buf_cstr(&a->path) : ".";

	if (expected == NULL)
		expected = branch_name(avro_value_get_schema(v), buf, sizeof buf);
	return ss_avro_fail(a, SS_EXIT_DATA, "%s %s: expected %s", a->what, at, expected);
}

/* Bytes from Avro's JSON form (code points up to U+00FF) or {"base64":"..."}. */
static bool
json_bytes(ss_avro *a, json_t *j)
{
	const unsigned char *s;
	size_t n;

	ss_buf_reset(&a->scratch);
	if (json_is_object(j) && json_object_size(j) == 1 && json_is_string(json_object_get(j, "base64"))) {
		json_t *b64 = json_object_get(j, "base64");
		return ss_buf_unbase64(&a->scratch, json_string_value(b64), json_string_length(b64));
	}
	if (!json_is_string(j))
		return false;
	s = (const unsigned char *)json_string_value(j);
	n = json_string_length(j);
	for (size_t i = 0; i < n; i++) {
		if (s[i] < 0x80) {
			ss_buf_addc(&a->scratch, (char)s[i]);
		} else if ((s[i] == 0xc2 || s[i] == 0xc3) && i + 1 < n) {
			ss_buf_addc(&a->scratch, (char)(((s[i] & 0x03) << 6) | (s[i + 1] & 0x3f)));
			i++;
		} else {
			return false; /* a code point above U+00FF */
		}
	}
	return true;
}

static bool
json_to_real(json_t *j, double *d)
{
	const char *s;

	if (json_is_number(j)) {
		*d = json_number_value(j);
		return true;
	}
	if (!json_is_string(j))
		return false;
	s = json_string_value(j);
	if (strcmp(s, "NaN") == 0)
		*d = NAN;
	else if (strcmp(s, "Infinity") == 0)
		*d = INFINITY;
	else if (strcmp(s, "-Infinity") == 0)
		*d = -INFINITY;
	else
		return false;
	return true;
}

static bool
json_to_integer(json_t *j, long long lo, long long hi, long long *out)
{
	double d = json_is_real(j) ? json_real_value(j) : 0.5;

	if (json_is_integer(j))
		*out = json_integer_value(j);
	else if (d == floor(d) && fabs(d) < 9.2e18)
		*out = (long long)d; /* 3.0 */
	else
		return false;
	return *out >= lo && *out <= hi;
}

static size_t
path_push(ss_avro *a, const char *key, long index)
{
	size_t mark = a->path.len;
	char num[32];

	if (key != NULL) {
		ss_buf_addc(&a->path, '.');
		ss_buf_adds(&a->path, key);
	} else {
		snprintf(num, sizeof num, "[%ld]", index);
		ss_buf_adds(&a->path, num);
	}
	return mark;
}

static int
fill_record(ss_avro *a, avro_value_t *v, json_t *j, int depth)
{
	avro_schema_t s = avro_value_get_schema(v);
	size_t n = avro_schema_record_size(s), mark;
	const char *key;
	json_t *member;
	avro_value_t child;
	int rc;

	if (!json_is_object(j))
		return mismatch(a, v, "an object (a record)");
	json_object_foreach(j, key, member) {
		if (avro_schema_record_field_get_index(s, key) < 0) {
			mark = path_push(a, key, 0);
			rc = ss_avro_fail(a, SS_EXIT_DATA, "%s %s: no such field in record %s", a->what,
					  ss_buf_cstr(&a->path), avro_schema_name(s));
			a->path.len = mark;
			return rc;
		}
	}
	for (size_t i = 0; i < n; i++) {
		key = avro_schema_record_field_name(s, (int)i);
		avro_value_get_by_index(v, i, &child, NULL);
		mark = path_push(a, key, 0);
		member = json_object_get(j, key);
		rc = member == NULL ? ss_avro_fail(a, SS_EXIT_DATA, "%s %s: missing field", a->what,
						   ss_buf_cstr(&a->path)) :
				      fill(a, &child, member, depth + 1);
		if (rc != 0)
			return rc;
		a->path.len = mark;
	}
	return 0;
}

static int
fill_map(ss_avro *a, avro_value_t *v, json_t *j, int depth)
{
	const char *key;
	json_t *member;
	avro_value_t child;
	size_t mark;
	int rc;

	if (!json_is_object(j))
		return mismatch(a, v, "an object (a map)");
	json_object_foreach(j, key, member) {
		mark = path_push(a, key, 0);
		if (avro_value_add(v, key, &child, NULL, NULL) != 0)
			return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
		if ((rc = fill(a, &child, member, depth + 1)) != 0)
			return rc;
		a->path.len = mark;
	}
	return 0;
}

static int
fill_array(ss_avro *a, avro_value_t *v, json_t *j, int depth)
{
	size_t i, mark;
	json_t *item;
	avro_value_t child;
	int rc;

	if (!json_is_array(j))
		return mismatch(a, v, "an array");
	json_array_foreach(j, i, item) {
		mark = path_push(a, NULL, (long)i);
		if (avro_value_append(v, &child, NULL) != 0)
			return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
		if ((rc = fill(a, &child, item, depth + 1)) != 0)
			return rc;
		a->path.len = mark;
	}
	return 0;
}

/* A union: null for its null branch, else {"BRANCH": value}. */
static int
fill_union(ss_avro *a, avro_value_t *v, json_t *j, int depth)
{
	avro_schema_t s = avro_value_get_schema(v);
	size_t n = avro_schema_union_size(s);
	avro_value_t branch;
	char buf[512];
	const char *key = NULL;
	json_t *inner = NULL;

	if (json_is_object(j) && json_object_size(j) == 1) {
		void *it = json_object_iter(j);
		key = json_object_iter_key(it);
		inner = json_object_iter_value(it);
	}
	for (size_t i = 0; i < n; i++) {
		avro_schema_t bs = avro_schema_union_branch(s, (int)i);
		bool is_null = is_avro_null(bs);
		if (is_null ? json_is_null(j) : key != NULL && strcmp(key, branch_name(bs, buf, sizeof buf)) == 0) {
			if (avro_value_set_branch(v, (int)i, &branch) != 0)
				return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
			return is_null ? 0 : fill(a, &branch, inner, depth + 1);
		}
	}
	return mismatch(a, v, "a union's {\"TYPE\": value} (or null for its null branch)");
}

static int
fill_bytes(ss_avro *a, avro_value_t *v, json_t *j, bool fixed)
{
	if (!json_bytes(a, j))
		return mismatch(a, v, "a string of code points U+0000..U+00FF or {\"base64\":...}");
	if (!fixed)
		return avro_value_set_bytes(v, a->scratch.data, a->scratch.len) == 0 ? 0 :
		       ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
	if ((int64_t)a->scratch.len != avro_schema_fixed_size(avro_value_get_schema(v)))
		return mismatch(a, v, "bytes of the fixed's size");
	return avro_value_set_fixed(v, a->scratch.data, a->scratch.len) == 0 ? 0 :
	       ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
}

static int
fill_enum(ss_avro *a, avro_value_t *v, json_t *j)
{
	int i;

	if (!json_is_string(j) ||
	    (i = avro_schema_enum_get_by_name(avro_value_get_schema(v), json_string_value(j))) < 0)
		return mismatch(a, v, "a symbol of the enum");
	avro_value_set_enum(v, i);
	return 0;
}

static int
fill_scalar(ss_avro *a, avro_value_t *v, json_t *j)
{
	long long l;
	double d;

	switch (avro_value_get_type(v)) {
	case AVRO_STRING:
		if (!json_is_string(j))
			return mismatch(a, v, "a string");
		avro_value_set_string_len(v, json_string_value(j), json_string_length(j) + 1);
		return 0;
	case AVRO_INT32:
		if (!json_to_integer(j, INT32_MIN, INT32_MAX, &l))
			return mismatch(a, v, "an int (32 bits)");
		avro_value_set_int(v, (int32_t)l);
		return 0;
	case AVRO_INT64:
		if (!json_to_integer(j, INT64_MIN, INT64_MAX, &l))
			return mismatch(a, v, "a long (64 bits)");
		avro_value_set_long(v, l);
		return 0;
	case AVRO_FLOAT:
	case AVRO_DOUBLE:
		if (!json_to_real(j, &d))
			return mismatch(a, v, "a number");
		if (avro_value_get_type(v) == AVRO_FLOAT)
			avro_value_set_float(v, (float)d);
		else
			avro_value_set_double(v, d);
		return 0;
	case AVRO_BOOLEAN:
		if (!json_is_boolean(j))
			return mismatch(a, v, "true or false");
		avro_value_set_boolean(v, json_is_true(j));
		return 0;
	case AVRO_NULL:
		if (!json_is_null(j))
			return mismatch(a, v, "null");
		avro_value_set_null(v);
		return 0;
	default:
		return ss_avro_fail(a, SS_EXIT_DATA, "unsupported Avro type %d", avro_value_get_type(v));
	}
}

static int
fill(ss_avro *a, avro_value_t *v, json_t *j, int depth)
{
	if (depth > MAX_DEPTH)
		return ss_avro_fail(a, SS_EXIT_DATA, "nested deeper than %d", MAX_DEPTH);
	switch (avro_value_get_type(v)) {
	case AVRO_RECORD:
		return fill_record(a, v, j, depth);
	case AVRO_MAP:
		return fill_map(a, v, j, depth);
	case AVRO_ARRAY:
		return fill_array(a, v, j, depth);
	case AVRO_UNION:
		return fill_union(a, v, j, depth);
	case AVRO_BYTES:
		return fill_bytes(a, v, j, false);
	case AVRO_FIXED:
		return fill_bytes(a, v, j, true);
	case AVRO_ENUM:
		return fill_enum(a, v, j);
	default:
		return fill_scalar(a, v, j);
	}
}

static int
write_value(ss_avro *a, struct ss_avro_schema *s, ss_buf *out)
{
	size_t size;

	if (avro_value_sizeof(&s->value, &size) != 0)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
	if (a->enc_cap < size) {
		a->enc = ss_xrealloc(a->enc, size);
		a->enc_cap = size;
	}
	avro_writer_memory_set_dest(a->writer, a->enc, (int64_t)size);
	if (avro_value_write(a->writer, &s->value) != 0)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s", avro_strerror());
	if (s->id >= 0) {
		unsigned char hdr[5] = {0, (unsigned char)(s->id >> 24), (unsigned char)(s->id >> 16),
					(unsigned char)(s->id >> 8), (unsigned char)s->id};
		ss_buf_add(out, hdr, sizeof hdr);
	}
	ss_buf_add(out, a->enc, size);
	return 0;
}

int
ss_avro_encode(ss_avro *a, const char *json, size_t len, ss_buf *out, const char **why)
{
	struct ss_avro_schema *s = a->fixed;
	json_error_t err;
	json_t *j;
	size_t mark = out->len;
	int rc;

	*why = a->why;
	j = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (j == NULL)
		return ss_avro_fail(a, SS_EXIT_DATA, "%s: %s", a->what, err.text);
	avro_value_reset(&s->value);
	ss_buf_reset(&a->path);
	rc = fill(a, &s->value, j, 0);
	json_decref(j);
	if (rc == 0 && (rc = write_value(a, s, out)) != 0)
		out->len = mark;
	return rc;
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
	if (!schema_new(a, *text, *len, -1, &a->fixed))
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
		if (!schema_new(a, latest, strlen(latest), id, &a->fixed))
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
	schema_free(a->fixed);
	for (size_t i = 0; i < a->ncache; i++)
		schema_free(a->cache[i]);
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
