/* Kafka payloads between ss-consume and ss-produce. Input: any bytes, taken as a message
 * payload. Properties: ss_kafka_put_payload gives valid JSON (for jscan and libjq) in
 * every format; ss_kafka_payload_bytes turns it back into the same bytes (base64 and
 * string formats always; auto unless the payload is itself a JSON string, whose
 * characters are what a string stands for, and but for whitespace around a JSON payload,
 * which is not kept, and line breaks between its tokens, which become spaces); a JSON object taken as headers survives
 * ss_kafka_headers_from_json and ss_kafka_put_headers as valid JSON. */
#include <jv.h>

#include "buf.h"
#include "fuzz.h"
#include "jscan.h"
#include "kafka.h"

static void
valid_json(const ss_buf *b, const char *what)
{
	jv v = jv_parse_sized(b->data, (int)b->len);

	if (!ss_jscan_document(b->data, b->data + b->len, NULL) || !jv_is_valid(v))
		fuzz_fail("%s: not valid JSON: %.*s", what, (int)b->len, b->data);
	jv_free(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *vs = p, *ve = p + size;
	bool json = ss_jscan_document(p, p + size, NULL), json_string = false;

	if (json) {
		while (*vs == ' ' || *vs == '\t' || *vs == '\n' || *vs == '\r')
			vs++;
		ve = ss_jscan_value(vs, p + size, NULL);
		json_string = *vs == '"';
	}
	for (int f = SS_KFMT_AUTO; f <= SS_KFMT_BASE64; f++) {
		ss_buf b = {0}, scratch = {0};
		const char *out, *why;
		size_t outlen;
		bool isnull;

		ss_kafka_put_payload(&b, p, size, f);
		valid_json(&b, "payload");
		if (!ss_kafka_payload_bytes(b.data, b.len, &scratch, &out, &outlen, &isnull, &why))
			fuzz_fail("format %d: payload_bytes refuses its own output: %s", f, why);
		bool text = f == SS_KFMT_AUTO || f == SS_KFMT_JSON;
		bool same = !isnull && outlen == size && memcmp(out, p, size) == 0;
		if (!same && text && json && !json_string) {
			/* or the JSON text itself: trimmed, line breaks as spaces */
			size_t wlen = (size_t)(ve - vs);
			char *want = malloc(wlen + 1);
			memcpy(want, vs, wlen);
			for (size_t i = 0; i < wlen; i++)
				if (want[i] == '\r' || want[i] == '\n')
					want[i] = ' ';
			same = !isnull && outlen == wlen && memcmp(out, want, wlen) == 0;
			free(want);
		}
		if (!same && !(text && json_string))
			fuzz_fail("format %d: %zu bytes came back as %zu other bytes", f, size, outlen);
		ss_buf_free(&b);
		ss_buf_free(&scratch);
	}
	if (json && *vs == '{') {
		rd_kafka_headers_t *h = NULL;
		const char *why;
		if (ss_kafka_headers_from_json(vs, (size_t)(ve - vs), &h, &why) && h) {
			ss_buf b = {0};
			ss_kafka_put_headers(&b, h);
			valid_json(&b, "headers");
			ss_buf_free(&b);
			rd_kafka_headers_destroy(h);
		}
	}
	return 0;
}
