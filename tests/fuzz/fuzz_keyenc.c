/* Key encoding against jq's order. Input: two JSON values separated by '\n'.
 * Properties: memcmp of the encodings has the sign of jv_cmp (jq's sort order); equal
 * values encode equally; the raw fast path (ss_keyenc_raw) gives the bytes of the jv
 * path (ss_keyenc_jv); a prefix encoding is a prefix of the full one. */
#include <jv.h>

#include "fuzz.h"
#include "base/jscan.h"
#include "base/keyenc.h"

static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

/* Parse a valid JSON value and check its raw encoding; jv_invalid() if not valid. */
static jv
value(const char *p, size_t n, ss_buf *enc)
{
	if (!ss_jscan_document(p, p + n, NULL))
		return jv_invalid();
	jv v = jv_parse_sized(p, (int)n);
	if (!jv_is_valid(v))
		return v;
	ss_buf raw = {0};
	ss_keyenc_jv(enc, v);
	/* raw spans come without surrounding whitespace */
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (!ss_keyenc_raw(&raw, p, n))
		fuzz_fail("raw encoding refuses a valid value: %.*s", (int)n, p);
	if (raw.len != enc->len || memcmp(raw.data, enc->data, raw.len) != 0)
		fuzz_fail("raw and jv encodings differ: %.*s", (int)n, p);
	ss_buf_free(&raw);
	ss_buf pfx = {0};
	ss_keyenc_prefix(&pfx, v);
	if (pfx.len > enc->len || memcmp(pfx.data, enc->data, pfx.len) != 0)
		fuzz_fail("prefix encoding is not a prefix: %.*s", (int)n, p);
	ss_buf_free(&pfx);
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b;
	size_t blen;
	char *a = fuzz_split(data, size, &b, &blen);
	ss_buf ea = {0}, eb = {0};
	jv va = value(a, strlen(a), &ea);
	jv vb = value(b, blen, &eb);

	if (jv_is_valid(va) && jv_is_valid(vb)) {
		size_t n = ea.len < eb.len ? ea.len : eb.len;
		int m = memcmp(ea.data, eb.data, n);
		if (m == 0)
			m = (ea.len > eb.len) - (ea.len < eb.len);
		int want = sign(jv_cmp(jv_copy(va), jv_copy(vb)));
		if (sign(m) != want)
			fuzz_fail("order %d, jq says %d: %s vs %.*s", sign(m), want, a, (int)blen, b);
	}
	jv_free(va);
	jv_free(vb);
	ss_buf_free(&ea);
	ss_buf_free(&eb);
	free(a);
	return 0;
}
