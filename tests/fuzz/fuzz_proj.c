/* Projections on raw bytes against jq. Input: an expression, '\n', a JSON document, and
 * optionally '\n' and a second document. With one document the projection runs on it;
 * with two (L and R) on the object {"left":L,"right":R} given by its members, as ss-asof
 * runs --select. Properties, when ss_proj_compile takes the expression, jq compiles it
 * and both documents are valid: a result is byte for byte what jq -c prints for its one
 * output, and no result (a type error) is an error in jq too. */
#include <jq.h>
#include <jv.h>

#include "base/buf.h"
#include "fuzz.h"
#include "base/jscan.h"
#include "base/proj.h"

static void
ignore_error(void *data, jv msg)
{
	(void)data;
	jv_free(msg);
}

static jq_state *jq;
static char *compiled;

/* libjq keeps a run's stack through a pointer to its end, which leak checkers take for
 * memory lost: the last state is torn down at exit */
static void
teardown(void)
{
	jq_teardown(&jq);
	free(compiled);
}

/* jq's first output of expr on input (consumed), and whether it had exactly one. */
static jv
jq_run(const char *expr, jv input, bool *one)
{
	static bool registered;

	if (!registered)
		registered = atexit(teardown) == 0;
	if (compiled == NULL || strcmp(compiled, expr) != 0) {
		free(compiled);
		compiled = NULL;
		jq_teardown(&jq);
		jq = jq_init();
		jq_set_error_cb(jq, ignore_error, NULL);
		/* ss-asof compiles --select in libjq only when a result needs it: proj.h must
		 * take no expression jq refuses */
		if (!jq_compile(jq, expr))
			fuzz_fail("proj takes an expression jq refuses: %s", expr);
		compiled = strdup(expr);
	}
	jq_start(jq, input, 0);
	jv first = jq_next(jq);
	*one = jv_is_valid(first);
	if (*one)
		for (jv more; jv_is_valid(more = jq_next(jq));) {
			jv_free(more);
			*one = false;
		}
	return first;
}

static bool
valid(const char *p, size_t n)
{
	if (n > 100000 || !ss_jscan_document(p, p + n, NULL))
		return false;
	jv v = jv_parse_sized(p, (int)n); /* jq refuses deep input jscan accepts */
	bool ok = jv_is_valid(v);
	jv_free(v);
	return ok;
}

/* The values of a member's known paths, found as ss-asof's parsing threads find them
 * (lib/join/asof_ahead.c find_known): among the members noted while validating it; NULL
 * where they find none. */
static const struct ss_proj_span *
find_known(const ss_proj *p, const struct ss_proj_member *mb, struct ss_proj_span *s)
{
	struct ss_jmember m[16];
	size_t nm;
	const char *why, *vs, *ve;
	bool type_error;

	if (ss_proj_known(p, mb->name, 0) == NULL ||
	    !ss_jscan_document_members(mb->raw, mb->raw + mb->len, m, 16, &nm, &why) || nm == SIZE_MAX)
		return NULL;
	for (int i = 0; i < SS_PROJ_KNOWN && ss_proj_known(p, mb->name, i) != NULL; i++)
		s[i] = ss_jpath_find_in(ss_proj_known(p, mb->name, i), mb->raw, mb->raw + mb->len, m, nm, &vs, &ve,
					&type_error)
			       ? (struct ss_proj_span){vs, (size_t)(ve - vs)}
			       : (struct ss_proj_span){NULL, 0};
	return s;
}

/* A root marked validated (ss-asof's: paths skipped by structure) gives the same, and so
 * does one whose members come with their known values. */
static void
check_validated(const char *expr, const ss_proj *p, const struct ss_proj_root *root, bool got,
		const ss_buf *out)
{
	struct ss_proj_root v = *root;
	struct ss_proj_member m[2];
	struct ss_proj_span known[2][SS_PROJ_KNOWN];
	ss_buf out2 = {0};

	v.validated = true;
	if (root->nmembers == 2) { /* {"left":L,"right":R} */
		for (int i = 0; i < 2; i++) {
			m[i] = root->members[i];
			m[i].known = find_known(p, &m[i], known[i]);
		}
		v.members = m;
	}
	bool got2 = ss_proj_eval(p, &v, &out2);
	if (got2 != got || (got && (out2.len != out->len || memcmp(out2.data, out->data, out->len) != 0)))
		fuzz_fail("%s: marked validated, %s %.*s", expr, got2 ? "gives" : "fails", (int)out2.len,
			  out2.data ? out2.data : "");
	ss_buf_free(&out2);
}

static void
check(const char *expr, const ss_proj *p, const struct ss_proj_root *root, jv input)
{
	ss_buf out = {0};
	bool one, got = ss_proj_eval(p, root, &out);
	jv want = jq_run(expr, input, &one);

	check_validated(expr, p, root, got, &out);

	if (!jv_is_valid(want) && !jv_invalid_has_msg(jv_copy(want)) && !one) {
		jv_free(want); /* jq refused the expression or gave nothing */
		ss_buf_free(&out);
		return;
	}
	if (got) {
		if (!one)
			fuzz_fail("%s: a result where jq gives an error or several", expr);
		jv s = jv_dump_string(jv_copy(want), 0);
		if ((size_t)jv_string_length_bytes(jv_copy(s)) != out.len || memcmp(jv_string_value(s), out.data, out.len))
			fuzz_fail("%s: %.*s, jq prints %s", expr, (int)out.len, out.data, jv_string_value(s));
		jv_free(s);
	} else if (jv_is_valid(want))
		fuzz_fail("%s: no result where jq gives one", expr);
	jv_free(want);
	ss_buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *docs, *second;
	size_t len, len2;
	char *expr = fuzz_split(data, size, &docs, &len);
	char *first = fuzz_split((const uint8_t *)docs, len, &second, &len2);
	const char *nl = memchr(docs, '\n', len);
	size_t len1 = nl ? (size_t)(nl - docs) : len;
	ss_proj *p = ss_proj_compile(expr);

	if (p && strlen(first) == len1 && valid(first, len1)) {
		if (len2 == 0) {
			struct ss_proj_root root = {first, len1, NULL, 0, false};
			check(expr, p, &root, jv_parse_sized(first, (int)len1));
		} else if (valid(second, len2)) {
			struct ss_proj_member m[2] = {{"left", first, len1, NULL}, {"right", second, len2, NULL}};
			struct ss_proj_root root = {NULL, 0, m, 2, false};
			jv in = jv_object_set(jv_object_set(jv_object(), jv_string("left"), jv_parse_sized(first, (int)len1)),
					      jv_string("right"), jv_parse_sized(second, (int)len2));
			check(expr, p, &root, in);
		}
	}
	ss_proj_free(p);
	free(first);
	free(expr);
	return 0;
}
