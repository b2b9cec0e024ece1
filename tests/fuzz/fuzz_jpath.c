/* Plain-path finding against jq. Input: a path expression, '\n', a JSON document.
 * Properties: when ss_jpath_parse takes the expression as a plain path and the document is
 * valid, ss_jpath_find agrees with jq running the same expression: the same value (found),
 * null (not found), or an error (type_error). Compiled expressions are cached, since
 * compiling jq's builtins costs far more than a run. */
#include <jq.h>
#include <jv.h>

#include "fuzz.h"
#include "base/jscan.h"

#define NCACHE 256

static struct {
	char *text;
	jq_state *jq;
} cache[NCACHE];

static void
ignore_error(void *data, jv msg)
{
	(void)data;
	jv_free(msg);
}

static jq_state *
compiled(const char *text)
{
	unsigned h = 5381;
	for (const char *p = text; *p; p++)
		h = h * 33 + (unsigned char)*p;
	h %= NCACHE;
	if (cache[h].text && strcmp(cache[h].text, text) == 0)
		return cache[h].jq;
	if (cache[h].text) {
		free(cache[h].text);
		jq_teardown(&cache[h].jq);
	}
	cache[h].text = strdup(text);
	cache[h].jq = jq_init();
	jq_set_error_cb(cache[h].jq, ignore_error, NULL);
	/* ss_expr_compile leaves plain paths to jpath and compiles them with libjq only when
	 * a record needs it: jpath must take no path that jq refuses */
	if (!jq_compile(cache[h].jq, text))
		fuzz_fail("jpath takes a path jq refuses: %s", text);
	return cache[h].jq;
}

/* The lookup from noted members (ss-asof's one pass) finds what the scan finds. */
static void
check_from_members(const struct ss_jpath *path, const char *expr, const char *doc, size_t len,
		   bool found, const char *vs, const char *ve, bool type_error)
{
	struct ss_jmember m[8];
	const char *vs2 = NULL, *ve2 = NULL;
	size_t n;
	bool type_error2;

	if (!ss_jscan_document_members(doc, doc + len, m, 8, &n, NULL))
		fuzz_fail("members scan refuses a valid document");
	bool found2 = ss_jpath_find_in(path, doc, doc + len, m, n, &vs2, &ve2, &type_error2);
	if (found2 != found || type_error2 != type_error || (found && (vs2 != vs || ve2 != ve)))
		fuzz_fail("%s: from the members %s, from a scan %s", expr,
			  found2 ? "found" : type_error2 ? "type error" : "missing",
			  found ? "found" : type_error ? "type error" : "missing");
}

/* The quick look (ss_jpath_look, values skipped unchecked) finds on a valid document
 * what the validating scan finds. */
static void
check_look(const struct ss_jpath *path, const char *expr, const char *doc, size_t len,
	   bool found, const char *vs, const char *ve)
{
	const char *vs2 = NULL, *ve2 = NULL;
	bool found2 = ss_jpath_look(path, doc, doc + len, &vs2, &ve2);

	if (found2 != found || (found && (vs2 != vs || ve2 != ve)))
		fuzz_fail("%s: a look %s %.*s, the scan %s", expr, found2 ? "found" : "missed",
			  found2 ? (int)(ve2 - vs2) : 0, found2 ? vs2 : "", found ? "found" : "missed");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *doc, *vs, *ve;
	size_t len;
	bool type_error;
	char *expr = fuzz_split(data, size, &doc, &len);
	struct ss_jpath *path = ss_jpath_parse(expr);

	if (path == NULL || !ss_jscan_document(doc, doc + len, NULL) || len > 100000) {
		if (path && ss_jpath_look(path, doc, doc + len, &vs, &ve) && (vs < doc || ve > doc + len || vs > ve))
			fuzz_fail("a look at an invalid document: span outside it");
		if (path)
			ss_jpath_free(path);
		free(expr);
		return 0;
	}
	bool found = ss_jpath_find(path, doc, doc + len, &vs, &ve, &type_error);
	if (found && (vs < doc || ve > doc + len || vs >= ve))
		fuzz_fail("span outside the document");
	check_from_members(path, expr, doc, len, found, vs, ve, type_error);
	check_look(path, expr, doc, len, found, vs, ve);
	jv in = jv_parse_sized(doc, (int)len);
	if (jv_is_valid(in)) { /* jq refuses deep or lenient input that jscan accepts */
		jq_state *jq = compiled(expr);
		jq_start(jq, in, 0);
		jv want = jq_next(jq);
		if (found) {
			jv got = jv_parse_sized(vs, (int)(ve - vs));
			if (!jv_is_valid(want) || !jv_equal(jv_copy(got), jv_copy(want)))
				fuzz_fail("%s: found %.*s, jq says otherwise", expr, (int)(ve - vs), vs);
			jv_free(got);
		} else if (type_error && jv_is_valid(want))
			fuzz_fail("%s: type error, jq gives a value", expr);
		else if (!type_error && !(jv_get_kind(want) == JV_KIND_NULL))
			fuzz_fail("%s: missing, jq gives non-null or an error", expr);
		/* drain a value's stream (jq asserts if run on after its end) */
		if (jv_is_valid(want))
			for (jv more; jv_is_valid(more = jq_next(jq));)
				jv_free(more);
		jv_free(want);
	} else
		jv_free(in);
	ss_jpath_free(path);
	free(expr);
	return 0;
}
