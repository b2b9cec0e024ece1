/* avro_decode: an Avro payload (a schema file's, or framed for the registry) to JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/avro_impl.h"
#include "base/diag.h"
#include "base/jscan.h"

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
	name = ss_avro_branch_name(avro_value_get_schema(&branch), buf, sizeof buf);
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
	if (depth > SS_AVRO_MAX_DEPTH)
		return ss_avro_fail(a, SS_EXIT_DATA, "nested deeper than %d", SS_AVRO_MAX_DEPTH);
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
	ss_avro_limit_alloc(16 * len + (1u << 20));
	rc = avro_value_read(a->reader, &s->value);
	ss_avro_limit_alloc(SIZE_MAX);
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
	ok = ss_avro_schema_new(a, text, strlen(text), id, out);
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
