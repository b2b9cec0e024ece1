/* Kafka payloads and headers between ss-consume and ss-produce: envelopes are exact.
 * Input: any bytes, taken as a message payload, and split into lines as a list of headers
 * (NAME=VALUE, a line without '=' a header without value).
 * Properties: ss_kafka_put_payload gives valid JSON (for jscan and libjq) in every
 * format, and ss_kafka_payload_bytes turns it back into exactly the same bytes; in auto
 * format, JSON that stands for itself (one line, no whitespace around it, not a string,
 * not null, not the base64 form) is embedded as it is; the json format reports exactly
 * the payloads that are not JSON. ss_kafka_put_headers gives valid JSON that
 * ss_kafka_headers_from_json reads back as the same headers, in order; a JSON object or
 * array taken as headers survives the same round trip. */
#include <jv.h>

#include "base/buf.h"
#include "fuzz.h"
#include "base/jscan.h"
#include "kafka/kafka.h"

static void
valid_json(const ss_buf *b, const char *what)
{
	jv v = jv_parse_sized(b->data, (int)b->len);

	if (!ss_jscan_document(b->data, b->data + b->len, NULL) || !jv_is_valid(v))
		fuzz_fail("%s: not valid JSON: %.*s", what, (int)b->len, b->data);
	jv_free(v);
}

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The payload is JSON that the envelope should show as itself. */
static bool
stands_for_itself(const char *p, size_t size)
{
	if (size == 0 || is_ws(p[0]) || is_ws(p[size - 1]) || p[0] == '"' ||
	    memchr(p, '\n', size) || memchr(p, '\r', size) || (size == 4 && !memcmp(p, "null", 4)) ||
	    !ss_jscan_document(p, p + size, NULL))
		return false;
	jv v = jv_parse_sized(p, (int)size);
	bool b64 = jv_get_kind(v) == JV_KIND_OBJECT && jv_object_length(jv_copy(v)) == 1 &&
		   jv_get_kind(jv_object_get(jv_copy(v), jv_string("base64"))) == JV_KIND_STRING;
	jv_free(v);
	return !b64;
}

static void
check_payload(const char *p, size_t size)
{
	bool json = ss_jscan_document(p, p + size, NULL);

	for (int f = SS_KFMT_AUTO; f <= SS_KFMT_BASE64; f++) {
		ss_buf b = {0}, scratch = {0};
		const char *out, *why;
		size_t outlen;
		bool isnull;

		bool ok = ss_kafka_put_payload(&b, p, size, f);
		valid_json(&b, "payload");
		if (f == SS_KFMT_JSON && ok != json)
			fuzz_fail("json format: reported %d for a payload that is%s JSON", ok, json ? "" : " not");
		if (!ss_kafka_payload_bytes(b.data, b.len, &scratch, &out, &outlen, &isnull, &why))
			fuzz_fail("format %d: payload_bytes refuses its own output: %s", f, why);
		if (isnull || outlen != size || memcmp(out, p, size) != 0)
			fuzz_fail("format %d: %zu bytes came back as %zu other bytes: %.*s", f, size, outlen,
				  (int)b.len, b.data);
		if (f == SS_KFMT_AUTO && stands_for_itself(p, size) &&
		    (b.len != size || memcmp(b.data, p, size) != 0))
			fuzz_fail("auto: JSON not embedded as itself: %.*s", (int)b.len, b.data);
		ss_buf_free(&b);
		ss_buf_free(&scratch);
	}
}

/* Are the two header lists the same, in order? */
static bool
same_headers(rd_kafka_headers_t *a, rd_kafka_headers_t *b)
{
	size_t n = a != NULL ? rd_kafka_header_cnt(a) : 0;
	const char *an, *bn;
	const void *av, *bv;
	size_t as, bs;

	if (n != (b != NULL ? rd_kafka_header_cnt(b) : 0))
		return false;
	for (size_t i = 0; i < n; i++) {
		rd_kafka_header_get_all(a, i, &an, &av, &as);
		rd_kafka_header_get_all(b, i, &bn, &bv, &bs);
		if (strcmp(an, bn) != 0 || (av == NULL) != (bv == NULL) ||
		    (av != NULL && (as != bs || memcmp(av, bv, as) != 0)))
			return false;
	}
	return true;
}

/* put_headers then headers_from_json gives the same list. */
static void
check_headers(rd_kafka_headers_t *h)
{
	ss_buf b = {0};
	rd_kafka_headers_t *back = NULL;
	const char *why = NULL;

	ss_kafka_put_headers(&b, h);
	valid_json(&b, "headers");
	if (!ss_kafka_headers_from_json(b.data, b.len, &back, &why))
		fuzz_fail("headers_from_json refuses put_headers' output: %s: %.*s", why, (int)b.len, b.data);
	if (!same_headers(h, back))
		fuzz_fail("headers changed in their JSON form: %.*s", (int)b.len, b.data);
	if (back != NULL)
		rd_kafka_headers_destroy(back);
	ss_buf_free(&b);
}

/* Headers from lines NAME=VALUE (no '=': no value); NULs dropped from names, which
 * librdkafka keeps as C strings. */
static rd_kafka_headers_t *
headers_of_lines(const char *p, size_t size)
{
	rd_kafka_headers_t *h = rd_kafka_headers_new(8);
	const char *end = p + size;
	char name[256];

	for (int i = 0; p < end && i < 64; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		const char *eq = memchr(p, '=', (size_t)(e - p)), *ne = eq ? eq : e;
		size_t n = 0;
		for (const char *c = p; c < ne && n < sizeof name; c++)
			if (*c != '\0')
				name[n++] = *c;
		rd_kafka_header_add(h, name, (ssize_t)n, eq ? eq + 1 : NULL, eq ? (ssize_t)(e - eq - 1) : 0);
		p = nl ? nl + 1 : end;
	}
	return h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *vs = p, *ve;
	rd_kafka_headers_t *h;
	const char *why;

	check_payload(p, size);
	h = headers_of_lines(p, size);
	check_headers(h);
	rd_kafka_headers_destroy(h);
	if (!ss_jscan_document(p, p + size, NULL))
		return 0;
	while (is_ws(*vs))
		vs++;
	ve = ss_jscan_value(vs, p + size, NULL);
	if ((*vs == '{' || *vs == '[') && ss_kafka_headers_from_json(vs, (size_t)(ve - vs), &h, &why) && h) {
		check_headers(h);
		rd_kafka_headers_destroy(h);
	}
	return 0;
}
