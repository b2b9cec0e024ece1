/* avro_encode: a JSON value (Avro's JSON encoding, or bytes in base64 form) to an Avro payload. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/avro_impl.h"
#include "base/diag.h"
#include "base/jscan.h"

static int fill(ss_avro *a, avro_value_t *v, json_t *j, int depth);

static int
mismatch(ss_avro *a, avro_value_t *v, const char *expected)
{
	char buf[512];
	const char *at = a->path.len > 0 ? ss_buf_cstr(&a->path) : ".";

	if (expected == NULL)
		expected = ss_avro_branch_name(avro_value_get_schema(v), buf, sizeof buf);
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
		if (is_null ? json_is_null(j) : key != NULL && strcmp(key, ss_avro_branch_name(bs, buf, sizeof buf)) == 0) {
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
	if (depth > SS_AVRO_MAX_DEPTH)
		return ss_avro_fail(a, SS_EXIT_DATA, "nested deeper than %d", SS_AVRO_MAX_DEPTH);
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
