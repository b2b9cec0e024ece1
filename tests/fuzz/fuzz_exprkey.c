/* jq expression results of every type through ss_expr_key and ss_expr_eval.
 * Input: one byte choosing an expression from the table, then a JSON document.
 * Properties: the key's return code, keyenc bytes and JSON text agree with what jq's own
 * result gives (ss_expr_eval_jv on the parsed document): fast paths (plain paths, tuples
 * of them, a path // a literal, over raw bytes) and the jq route give the same key;
 * ss_expr_key_nojq, where it answers, the same encoding; ss_expr_eval agrees too;
 * turning the result into a time never crashes. Each input is run through the
 * expression its byte picks from exprs and, the same way, from alts (a second table, so
 * that the corpus keeps the expressions it was made for). */
#include <jv.h>
#include <math.h>

#include "base/buf.h"
#include "base/expr.h"
#include "fuzz.h"
#include "base/jscan.h"
#include "base/keyenc.h"
#include "base/sstime.h"

static const char *const exprs[] = {
	".", ".a", ".a.b", ".[0]", ".a[1]", ".\"x y\"", ".[\"a\"]", "[.a, .b]", "[.a, .b.c, .[0]]",
	".a | tostring", ".a | length", "keys", ".a + .b", "{x: .a}", "empty", "error(\"boom\")",
	".a | tonumber", ".a | fromdate", "null", "true", "false", "nan", "infinite", "-infinite",
	"[.[]?]", ".a[1:]", ".a | type", ".a // \"d\"", "[.a, .a]", ".a | tojson", "-.a",
	".a | ascii_downcase", "[.b, .a] | sort", "{(.a|tostring): .b}", ".a.b.c.d", ".[1][0]",
};
/* PATH // LITERAL (read on the raw bytes), and forms that look like it but are not */
static const char *const alts[] = {
	".a // null", ".a.b // 0", ".a // false", ".[0] // true", ".a // 1.5e3", ".a // \"\\u00e9\"",
	". // 7", ".a // -0", ".a // 1e400", ".\"x//y\" // 2", ".a // \"//\"", ".a // .b",
	"[.a, .b.c] // null", ".a.b[1] // \"z\"",
};
#define NEXPR (sizeof exprs / sizeof exprs[0])
#define NALT (sizeof alts / sizeof alts[0])
static ss_expr *compiled[NEXPR], *compiled_alts[NALT];

static bool
has_nan(jv v)
{
	bool r = false;

	switch (jv_get_kind(v)) {
	case JV_KIND_NUMBER:
		r = isnan(jv_number_value(v)) || isinf(jv_number_value(v));
		break;
	case JV_KIND_ARRAY:
		jv_array_foreach(v, i, x) {
			r |= has_nan(x);
		}
		break;
	case JV_KIND_OBJECT:
		jv_object_foreach(v, k, x) {
			r |= has_nan(x);
			jv_free(k);
		}
		break;
	default:
		break;
	}
	jv_free(v);
	return r;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < NEXPR; i++)
		compiled[i] = ss_expr_compile(exprs[i], "fuzz");
	for (size_t i = 0; i < NALT; i++)
		compiled_alts[i] = ss_expr_compile(alts[i], "fuzz");
	return 0;
}

/* The properties for the expression e (its text: name) on the valid document doc. */
static void
check(ss_expr *e, const char *name, const char *doc, size_t len)
{
	jv in = jv_parse_sized(doc, (int)len);
	if (!jv_is_valid(in)) {
		jv_free(in);
		return;
	}
	jv want = ss_expr_eval_jv(e, in);

	ss_rec rec;
	ss_buf enc = {0}, text = {0}, wenc = {0};
	char err[256];
	ss_rec_init(&rec, doc, len);
	int rc = ss_expr_key(e, &rec, &enc, &text, err, sizeof err);
	if (!jv_is_valid(want)) {
		if (rc != -1)
			fuzz_fail("%s: key %d, jq gives an error", name, rc);
	} else {
		ss_keyenc_jv(&wenc, want);
		if (rc != (jv_get_kind(want) != JV_KIND_NULL))
			fuzz_fail("%s: key returns %d", name, rc);
		if (enc.len != wenc.len || memcmp(enc.data, wenc.data, enc.len) != 0)
			fuzz_fail("%s: key encoding differs from jq's result", name);
		jv t = jv_parse_sized(text.data, (int)text.len);
		if (!has_nan(jv_copy(want)) && !jv_equal(t, jv_copy(want)))
			fuzz_fail("%s: key text %.*s is not jq's result", name, (int)text.len, text.data);
		if (has_nan(jv_copy(want)))
			jv_free(t);
		int64_t ns;
		const char *why;
		ss_time_from_jv(want, SS_TS_MS, &ns, &why);
	}
	/* the parsing threads' encoding: jq's where it gives one */
	ss_buf_reset(&enc);
	if (ss_expr_key_nojq(e, &rec, &enc) == 1 &&
	    (!jv_is_valid(want) || enc.len != wenc.len || memcmp(enc.data, wenc.data, enc.len) != 0))
		fuzz_fail("%s: key_nojq's encoding is not jq's result's", name);
	/* ss_expr_eval (fast path for plain paths) against jq */
	ss_rec_done(&rec);
	ss_rec_init(&rec, doc, len);
	jv got = ss_expr_eval(e, &rec);
	if (jv_is_valid(got) != jv_is_valid(want) ||
	    (jv_is_valid(got) && !has_nan(jv_copy(want)) && !jv_equal(jv_copy(got), jv_copy(want))))
		fuzz_fail("%s: eval differs from jq", name);
	jv_free(got);
	jv_free(want);
	ss_rec_done(&rec);
	ss_buf_free(&enc);
	ss_buf_free(&text);
	ss_buf_free(&wenc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *doc = (const char *)data + 1;
	size_t len = size - 1;

	if (!ss_jscan_document(doc, doc + len, NULL))
		return 0;
	check(compiled[data[0] % NEXPR], exprs[data[0] % NEXPR], doc, len);
	check(compiled_alts[data[0] % NALT], alts[data[0] % NALT], doc, len);
	return 0;
}
