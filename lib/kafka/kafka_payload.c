/* kafka_payload: the envelope's key, value and header forms, to JSON and back. */
#include <librdkafka/rdkafka.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/jscan.h"
#include "kafka/kafka.h"

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
 * reader trims) or holding a line break (an envelope is one line); not when nested so
 * deep that, a level down in the envelope, jq (and so ss) would refuse the envelope.
 * Then they are written as a string or in base64 form, which are exact. */
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
	return ss_jscan_member_document(s, end, NULL) && !is_base64_form(s, end, &b64, &b64end);
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
