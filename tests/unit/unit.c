/* Unit tests of lib/ on its own: run by tests/lib.bats. Each CHECK prints the failing
 * expression with its line; the last line is the plain "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/buf.h"
#include "stream/envelope.h"
#include "base/expr.h"
#include "stream/feed.h"
#include "base/jscan.h"
#include "base/keyenc.h"
#include "stream/partwm.h"
#include "base/proj.h"
#include "base/sstime.h"
#include "kafka/kafka.h"

static int passed, failed;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (cond)                                                             \
			passed++;                                                     \
		else {                                                                \
			failed++;                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                     \
	} while (0)

static int64_t
t(const char *s)
{
	int64_t ns = -1;

	if (!ss_time_parse_text(s, strlen(s), &ns))
		return -1;
	return ns;
}

/* Whole-number times of every length, where the parser takes eight digits at once: each
 * its exact value; with a fraction or an exponent where those eight would be, the same
 * value by the other path; a digit after 0x2F or before 0x3A, rejected with them. */
static void
test_time_numbers(void)
{
	static const char digits[] = "9081726354908172";
	char s[40];
	int64_t ns, want = 0;
	const char *why;

	for (size_t n = 1; n <= 16; n++) {
		want = want * 10 + (digits[n - 1] - '0');
		memcpy(s, digits, n);
		CHECK(ss_time_from_raw(s, n, SS_TS_NS, &ns, &why) && ns == want);
		s[0] = '-';
		memcpy(s + 1, digits, n);
		CHECK(ss_time_from_raw(s, n + 1, SS_TS_NS, &ns, &why) && ns == -want);
		snprintf(s, sizeof s, "%.*s.0", (int)n, digits);
		CHECK(ss_time_from_raw(s, n + 2, SS_TS_NS, &ns, &why) && ns == want);
		snprintf(s, sizeof s, "%.*se1", (int)n, digits);
		CHECK(n > 15 || (ss_time_from_raw(s, n + 2, SS_TS_NS, &ns, &why) && ns == want * 10));
	}
	CHECK(ss_time_from_raw("1234567.5", 9, SS_TS_NS, &ns, &why) && ns == 1234568);
	CHECK(ss_time_from_raw("12345678.5", 10, SS_TS_NS, &ns, &why) && ns == 12345679);
	/* ':' and '/', the bytes beside the digits, are not taken for digits: the fast path
	 * declines, and strtod reads the number up to them (the line was validated before
	 * in a run, so such text never reaches it there) */
	CHECK(ss_time_from_raw_nojq("1234:678", 8, SS_TS_NS, &ns, &why) == 1 && ns == 1234);
	CHECK(ss_time_from_raw_nojq("1234/678", 8, SS_TS_NS, &ns, &why) == 1 && ns == 1234);
	/* past eight digits the last eight are read again: such a byte anywhere in them is
	 * not a digit either (strtod reads up to it) */
	for (size_t n = 9; n <= 15; n++)
		for (size_t k = 1; k < n; k++)
			for (const char *c = ":/"; *c; c++) {
				memcpy(s, digits, n);
				s[k] = *c;
				want = 0;
				for (size_t i = 0; i < k; i++)
					want = want * 10 + (digits[i] - '0');
				CHECK(ss_time_from_raw_nojq(s, n, SS_TS_NS, &ns, &why) == 1 && ns == want);
			}
}

static void
test_time(void)
{
	const int64_t base = 1672567200LL * 1000000000; /* 2023-01-01T10:00:00Z */
	CHECK(t("2023-01-01T10:00:00Z") == base);
	CHECK(t("2023-01-01 10:00:00") == base);
	CHECK(t("2023-01-01t10:00:00z") == base);
	CHECK(t("2023-01-01T12:00:00+02:00") == base);
	CHECK(t("2023-01-01T09:30:00-0030") == base);
	CHECK(t("2023-01-01T10:00") == base);
	CHECK(t("2023-01-01T10:00:00.25Z") == base + 250000000);
	CHECK(t("2023-01-01T10:00:00.123456789Z") == base + 123456789);
	CHECK(t("2023-01-01") == base - 36000LL * 1000000000);
	CHECK(t("1970-01-01T00:00:00Z") == 0);
	CHECK(t("1969-12-31T23:59:59Z") == -1000000000LL);
	CHECK(t("2024-02-29T00:00:00Z") > 0);
	CHECK(t("2023-02-29T00:00:00Z") == -1);
	CHECK(t("2023-13-01T00:00:00Z") == -1);
	CHECK(t("2023-01-01T25:00:00Z") == -1);
	CHECK(t("2023-01-01T10:00:00Q") == -1);
	CHECK(t("yesterday") == -1);
	CHECK(t("") == -1);

	int64_t ns;
	const char *why;
	CHECK(ss_time_from_raw("1672567200", 10, SS_TS_S, &ns, &why) && ns == base);
	CHECK(ss_time_from_raw("1672567200000", 13, SS_TS_MS, &ns, &why) && ns == base);
	CHECK(ss_time_from_raw("1672567200.5", 12, SS_TS_S, &ns, &why) && ns == base + 500000000);
	CHECK(ss_time_from_raw("\"2023-01-01T10:00:00Z\"", 22, SS_TS_S, &ns, &why) && ns == base);
	CHECK(!ss_time_from_raw("true", 4, SS_TS_S, &ns, &why));
	CHECK(!ss_time_from_raw("null", 4, SS_TS_S, &ns, &why) && strstr(why, "null"));
	CHECK(!ss_time_from_raw("1e300", 5, SS_TS_S, &ns, &why) && strstr(why, "range"));
	CHECK(!ss_time_from_raw("\"12\"", 4, SS_TS_S, &ns, &why));
	CHECK(ss_time_from_raw("\"2023-01-01T10:00:00\\u005a\"", 27, SS_TS_S, &ns, &why) && ns == base);

	char buf[64];
	ss_time_format(base, buf, sizeof buf);
	CHECK(strcmp(buf, "2023-01-01T10:00:00Z") == 0);
	ss_time_format(base + 250000000, buf, sizeof buf);
	CHECK(strcmp(buf, "2023-01-01T10:00:00.25Z") == 0);
	ss_time_format(-1, buf, sizeof buf);
	CHECK(strcmp(buf, "1969-12-31T23:59:59.999999999Z") == 0);

	CHECK(ss_time_parse_arg("2023-01-01T10:00:00Z", &ns) && ns == base);
	CHECK(ss_time_parse_arg("1672567200", &ns) && ns == base);
	CHECK(ss_time_parse_arg("-1h", &ns) && llabs(ns - (ss_time_now() - 3600000000000LL)) < 1000000000LL);
	CHECK(!ss_time_parse_arg("soon", &ns));
}

static void
test_duration(void)
{
	int64_t d;
	CHECK(ss_duration_parse("250ms", &d) && d == 250000000);
	CHECK(ss_duration_parse("90s", &d) && d == 90000000000LL);
	CHECK(ss_duration_parse("10m", &d) && d == 600000000000LL);
	CHECK(ss_duration_parse("1h", &d) && d == 3600000000000LL);
	CHECK(ss_duration_parse("7d", &d) && d == 7 * 86400000000000LL);
	CHECK(ss_duration_parse("1.5h", &d) && d == 5400000000000LL);
	CHECK(ss_duration_parse("1h30m", &d) && d == 5400000000000LL);
	CHECK(ss_duration_parse("0", &d) && d == 0);
	CHECK(ss_duration_parse("500us", &d) && d == 500000);
	CHECK(ss_duration_parse("10ns", &d) && d == 10);
	CHECK(!ss_duration_parse("10", &d));
	CHECK(!ss_duration_parse("1y", &d));
	CHECK(!ss_duration_parse("-1h", &d));
	CHECK(!ss_duration_parse("", &d));
	CHECK(!ss_duration_parse("h", &d));
	enum ss_tsunit u;
	CHECK(ss_tsunit_parse("ms", &u) && u == SS_TS_MS);
	CHECK(!ss_tsunit_parse("min", &u));
}

static bool
valid(const char *s)
{
	return ss_jscan_document(s, s + strlen(s), NULL);
}

static void
test_jscan(void)
{
	CHECK(valid("{}"));
	CHECK(valid(" [1, 2.5e-3, -0, \"a\\u00e9\\n\", true, false, null, {\"a\": []}] "));
	CHECK(valid("\"🌞\""));
	CHECK(valid("0"));
	CHECK(!valid(""));
	CHECK(!valid("{"));
	CHECK(!valid("[1,]"));
	CHECK(!valid("{\"a\" 1}"));
	CHECK(!valid("{\"a\":1,}"));
	CHECK(!valid("01"));
	CHECK(!valid("1."));
	CHECK(!valid("-"));
	CHECK(!valid("+1"));
	CHECK(!valid("tru"));
	CHECK(!valid("nulls"));
	CHECK(!valid("1 2"));
	CHECK(!valid("\"\\x\""));
	CHECK(!valid("\"\\u12g4\""));
	CHECK(!valid("\"a\tb\""));
	CHECK(!valid("\"\xff\""));
	CHECK(!valid("\"\xc0\xaf\"")); /* overlong */
	CHECK(!valid("\"\xed\xa0\x80\"")); /* surrogate */
	CHECK(!valid("\"abc"));
	CHECK(ss_jscan_document("\"a\0b\"", "\"a\0b\"" + 5, NULL) == false);

	char deep[600];
	memset(deep, '[', 300);
	memset(deep + 300, ']', 300);
	const char *why = NULL;
	CHECK(!ss_jscan_document(deep, deep + 600, &why) && strcmp(why, "nesting too deep") == 0);
	CHECK(ss_jscan_document(deep + 50, deep + 550, NULL));
	CHECK(ss_jscan_utf8("é🌞", "é🌞" + strlen("é🌞")));

	/* a string literal's characters: escapes, a surrogate pair, a lone low half */
	static const char lit[] = "\"a\\\"\\n\\u00e9\\ud83c\\udf1e\\udc00\"";
	ss_buf u = {0};
	ss_jscan_unescape(&u, lit, lit + strlen(lit));
	CHECK(strcmp(ss_buf_cstr(&u), "a\"\né🌞\xef\xbf\xbd") == 0);
	ss_buf_free(&u);
}

static const char *
find(const char *path, const char *doc)
{
	static char out[4096];
	struct ss_jpath *p = ss_jpath_parse(path);
	const char *vs, *ve;
	bool type_error;

	if (p == NULL)
		return "NOTAPATH";
	if (!ss_jpath_find(p, doc, doc + strlen(doc), &vs, &ve, &type_error))
		snprintf(out, sizeof out, "%s", type_error ? "TYPEERROR" : "MISSING");
	else
		snprintf(out, sizeof out, "%.*s", (int)(ve - vs), vs);
	ss_jpath_free(p);
	return out;
}

/* ss_jpath_look, the quick look at a line not validated yet: "MISSING" when it finds nothing. */
static const char *
look(const char *path, const char *doc)
{
	size_t len = strlen(doc);
	static char out[4096];
	struct ss_jpath *p = ss_jpath_parse(path);
	const char *vs, *ve;

	if (!ss_jpath_look(p, doc, doc + len, &vs, &ve))
		snprintf(out, sizeof out, "MISSING");
	else
		snprintf(out, sizeof out, "%.*s", (int)(ve - vs), vs);
	ss_jpath_free(p);
	return out;
}

static void
test_jpath_look(void)
{
	static const char *const valid[][2] = {
		{".t", "{\"s\":\"a\\\"}b]\",\"t\":2}"},
		{".t", "{\"a\":[\"]}\",{\"x\":\"}\"},[[]]],\"t\" : -1.5e3 }"},
		{".a.b[1].c", "{\"a\": {\"b\": [10, {\"c\": \"x\"}]}, \"t\": true}"},
		{".a.b[1]", "{\"a\": {\"b\": [10, {\"c\": \"x\"}]}}"},
		{".k", "{\"k\":1,\"k\":{\"z\":null}}"},
		{".t", "{\"t\":\"2023-01-01T00:00:00Z\"}"},
		{".n.x", "{\"n\":null}"},
		{".zz", "{\"a\":1}"},
		/* after the member found, a later duplicate written with an escape, or text
		 * with escapes that only looks like one (key_may_follow steps over escapes) */
		{".ts", "{\"ts\":1,\"x\":\"a \\\"ts\\\": 9\\n\",\"t\\u0073\":2}"},
		{".ts", "{\"ts\":1,\"x\":\"a\\\"b\",\"\\u0074s\":3}"},
		{".ts", "{\"ts\":1,\"x\":\"a\\\\\",\"ts\":4}"},
		{".ts", "{\"ts\":1,\"x\":\"\\\"ts\\\":5 \\\\\",\"y\":\"\\t\"}"},
		{".ts", "{\"ts\":1,\"x\":\"\\\"\\n\",\"ts\\u0078\":6,\"tsx\":7}"},
		{".ts", "{\"ts\":1,\"x\":{\"ts\":8},\"t\\\"\":9}"},
	};
	for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
		char want[256];
		snprintf(want, sizeof want, "%s", find(valid[i][0], valid[i][1]));
		if (strcmp(want, "TYPEERROR") == 0)
			snprintf(want, sizeof want, "MISSING");
		CHECK(strcmp(look(valid[i][0], valid[i][1]), want) == 0);
	}
	/* a later duplicate, a decoy or an escape at every offset of a line's last bytes
	 * (key_may_follow takes them 16 at a time, the last ones by a load ending at the
	 * line's end), past more than one load; numbers of every length (their digits
	 * skipped 8 at a time) */
	static const char *const tails[] = {",\"ts\":2}", ",\"tz\":2}", ",\"t\\u0073\":2}", "}", ",\"y\":\"\\\"ts\"}"};
	for (int pad = 0; pad < 80; pad++)
		for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
			char doc[160], want[256];
			snprintf(doc, sizeof doc, "{\"ts\":1,\"x\":\"%.*s\"%s", pad,
				 "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij",
				 tails[t]);
			snprintf(want, sizeof want, "%s", find(".ts", doc));
			CHECK(strcmp(look(".ts", doc), want) == 0);
			snprintf(doc, sizeof doc, "{\"a\":1,\"ts\":-%.*s.5e3,\"b\":%.*s}", pad % 40 + 1,
				 "1234567890123456789012345678901234567890", pad % 20 + 1, "98765432109876543210");
			snprintf(want, sizeof want, "%s", find(".ts", doc));
			CHECK(strcmp(look(".ts", doc), want) == 0);
			snprintf(want, sizeof want, "%s", find(".b", doc));
			CHECK(strcmp(look(".b", doc), want) == 0);
		}
	/* invalid lines: what their structure says, or nothing; never past their end */
	const char *bad_utf8 = "{\"t\":1,\"x\":\"\xff\"}";
	CHECK(strcmp(find(".t", bad_utf8), "MISSING") == 0);
	CHECK(strcmp(look(".t", bad_utf8), "1") == 0);
	CHECK(strcmp(look(".x", "{\"t\":1,\"x\":\"abc"), "MISSING") == 0);
	CHECK(strcmp(look(".x", "{\"x\":[1,[2]"), "MISSING") == 0);
	CHECK(strcmp(look(".x", "{\"x\":\"a\\"), "MISSING") == 0);
	CHECK(strcmp(look(".x", "{\"x\":tru"), "MISSING") == 0);
	CHECK(strcmp(look(".x", "{\"x\":tru}"), "tru") == 0);
}

/* A random value for test_jpath_look_nested: keys from a few, so that members repeat
 * at every depth, some written with an escape; text that holds a key's name. */
static void
nested_value(char *b, size_t cap, size_t *n, int depth)
{
	static const char *const keys[] = {"\"a\"", "\"b\"", "\"ab\"", "\"\\u0061\"", "\"c\""};
	static const char *const scalars[] = {"1", "-2.5e1", "null", "true", "\"x\"", "\"\\\"a\\\":1\"",
					      "\"a b c d e f g h i j k l m n o p q r s t u v w x\""};
	int r = depth > 3 ? rand() % 3 : rand() % 5;

	if (r < 3) {
		*n += (size_t)snprintf(b + *n, cap - *n, "%s", scalars[rand() % 7]);
		return;
	}
	int members = rand() % 5;
	*n += (size_t)snprintf(b + *n, cap - *n, "%c", r == 3 ? '{' : '[');
	for (int i = 0; i < members && *n < cap - 512; i++) {
		if (i > 0)
			*n += (size_t)snprintf(b + *n, cap - *n, ",");
		if (r == 3)
			*n += (size_t)snprintf(b + *n, cap - *n, "%s:", keys[rand() % 5]);
		nested_value(b, cap, n, depth + 1);
	}
	*n += (size_t)snprintf(b + *n, cap - *n, "%c", r == 3 ? '}' : ']');
}

/* A look along paths of several steps (look_first in jpath.c: into the first member of
 * each key, then no later one of any) finds what the scan finds, in random documents
 * whose members repeat at every depth; and so does the lookup from noted members. */
static void
test_jpath_look_nested(void)
{
	static const char *const paths[] = {".a.b", ".a.a", ".b.ab", ".a[1]", ".a[0].b", ".ab.a.b",
					    ".a.b.c", ".c[1].a", ".b.a[0]", ".a"};
	srand(41);
	for (int round = 0; round < 4000; round++) {
		char doc[4096];
		size_t n = 0;
		do {
			n = 0;
			nested_value(doc, sizeof doc, &n, 0);
		} while (doc[0] != '{');
		for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
			char want[4096];
			const char *vs, *ve;
			bool type_error;
			snprintf(want, sizeof want, "%s", find(paths[i], doc));
			if (strcmp(want, "TYPEERROR") == 0)
				snprintf(want, sizeof want, "MISSING");
			CHECK(strcmp(look(paths[i], doc), want) == 0);
			struct ss_jpath *p = ss_jpath_parse(paths[i]);
			struct ss_jmember m[8];
			size_t nm;
			CHECK(ss_jscan_document_members(doc, doc + n, m, 8, &nm, NULL));
			bool found = ss_jpath_find_in(p, doc, doc + n, m, nm, &vs, &ve, &type_error);
			CHECK(found ? strlen(want) == (size_t)(ve - vs) && memcmp(want, vs, (size_t)(ve - vs)) == 0
				    : strcmp(want, "MISSING") == 0);
			ss_jpath_free(p);
		}
	}
}

static void
test_jpath(void)
{
	const char *doc = "{\"a\": {\"b\": [10, {\"c\": \"x\"}]}, \"d e\": 1, \"a\\u0062\": 2, \"n\": null}";
	CHECK(strcmp(find(".a.b[0]", doc), "10") == 0);
	CHECK(strcmp(find(".a.b[1].c", doc), "\"x\"") == 0);
	CHECK(strcmp(find(".a.b[1]", doc), "{\"c\": \"x\"}") == 0);
	CHECK(strcmp(find(".\"d e\"", doc), "1") == 0);
	CHECK(strcmp(find(".[\"d e\"]", doc), "1") == 0);
	CHECK(strcmp(find(".ab", doc), "2") == 0);
	CHECK(strcmp(find(".zz", doc), "MISSING") == 0);
	CHECK(strcmp(find(".a.b[5]", doc), "MISSING") == 0);
	CHECK(strcmp(find(".n.x", doc), "MISSING") == 0);
	CHECK(strcmp(find(".a.b.c", doc), "TYPEERROR") == 0);
	CHECK(strcmp(find(".a[0]", doc), "TYPEERROR") == 0);
	CHECK(strcmp(find(".", "[1, 2] "), "[1, 2]") == 0);
	CHECK(strcmp(find(".k", "{\"k\":1,\"k\":2}"), "2") == 0); /* jq keeps the last duplicate */
	/* keys over 16 bytes, the same first letters, one written with an escape */
	const char *longkeys = "{\"abcdefghijklmnopq\":1,\"abcdefghijklmnopqr\":2,\"abcdefghijklmnop\\u0071\":3,"
			       "\"abcdefghijklmnopqrst\":4}";
	CHECK(strcmp(find(".abcdefghijklmnopq", longkeys), "3") == 0);
	CHECK(strcmp(find(".abcdefghijklmnopqr", longkeys), "2") == 0);
	CHECK(strcmp(find(".abcdefghijklmnopqrs", longkeys), "MISSING") == 0);
	CHECK(strcmp(find(".abcdefghijklmnopqrst", longkeys), "4") == 0);
	CHECK(strcmp(find(".a | .b", doc), "NOTAPATH") == 0);
	CHECK(strcmp(find(".a[-1]", doc), "NOTAPATH") == 0);
	CHECK(strcmp(find("length", doc), "NOTAPATH") == 0);
}

/* Does libjq parse the text? */
static bool
jq_parses(const char *text, size_t len)
{
	jv v = jv_parse_sized(text, (int)len);
	bool ok = jv_is_valid(v);

	jv_free(v);
	return ok;
}

/* Nesting near jq's depth limit, arrays and objects mixed at random (an object level
 * weighs two in jq's parser): ss refuses exactly what libjq refuses, whole documents,
 * documents that are objects (their members noted) and texts to be a member's value. */
static void
test_jscan_depth(void)
{
	ss_buf doc = {0}, wrapped = {0};

	srand(14);
	for (int round = 0; round < 400; round++) {
		char open[300];
		int n = 100 + rand() % 200;
		ss_buf_reset(&doc);
		for (int i = 0; i < n; i++) {
			open[i] = rand() % 100 < (round % 4) * 25 ? '{' : '[';
			ss_buf_adds(&doc, open[i] == '{' ? "{\"k\":" : "[");
		}
		ss_buf_adds(&doc, "1");
		for (int i = n; i-- > 0;)
			ss_buf_addc(&doc, open[i] == '{' ? '}' : ']');
		struct ss_jmember m[4];
		size_t nm;
		bool want = jq_parses(doc.data, doc.len);
		CHECK(ss_jscan_document(doc.data, doc.data + doc.len, NULL) == want);
		CHECK(ss_jscan_document_members(doc.data, doc.data + doc.len, m, 4, &nm, NULL) == want);
		ss_buf_reset(&wrapped);
		ss_buf_adds(&wrapped, "{\"value\":");
		ss_buf_add(&wrapped, doc.data, doc.len);
		ss_buf_addc(&wrapped, '}');
		CHECK(ss_jscan_member_document(doc.data, doc.data + doc.len, NULL) ==
		      jq_parses(wrapped.data, wrapped.len));
	}
	ss_buf_free(&doc);
	ss_buf_free(&wrapped);
}

/* ss_jpath_find_in answers as ss_jpath_find on a validated document, its members noted
 * or not (more than the 1 or 8 asked for: each path is then looked at over the
 * document): the value found, or missing, or a type error. */
static void
test_jpath_find_in(void)
{
	static const char *const docs[] = {
		"{\"a\": {\"b\": [10, {\"c\": \"x\"}]}, \"d e\": 1, \"a\\u0062\": 2, \"n\": null}",
		"{\"k\":1,\"x\":[1,{\"k\":3}],\"k\":{\"z\":null}}",
		"{\"ts\":1,\"x\":\"a \\\"ts\\\": 9\\n\",\"t\\u0073\":2}",
		"{\"ts\":1,\"x\":{\"ts\":8},\"t\\\"\":9, \"a\" : [ {\"b\" : -1.5e3} ] }",
		"{}", "[{\"a\":1},[2]]", "-0.5e1", "\"ts\"", "null",
		/* 64 bytes and more: the validator's blocks find the keys' escapes (a noted key
		 * without one is compared by its bytes) */
		"{\"text\":\"a long enough string to fill the first block of the document\",\"ts\":1,"
		"\"t\\u0073\":2,\"ab\":3,\"a\\u0062\":4,\"m\":{\"kk\":0,\"k\":1,\"\\u006b\":5,\"x\":6}}",
		"{\"m\":{\"\\u006b\":5,\"k\":1},\"t\\u0073\":2,\"ts\":7,\"tz\":8,\"text\":\"and a long string "
		"after them, past the first 64-byte block\",\"a\\u0062\":4,\"ab\":3}",
	};
	static const char *const paths[] = {
		".", ".a", ".a.b[1].c", ".a.b", ".a[0].b", ".ab", ".\"d e\"", ".n.x", ".k", ".k.z",
		".ts", ".x.ts", ".x[1].k", ".[0].a", ".[1][0]", ".zz", ".a.b.c", ".m.k", ".m.x", ".tz",
	};
	for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
		const char *doc = docs[d], *end = doc + strlen(doc);
		for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
			struct ss_jpath *p = ss_jpath_parse(paths[i]);
			const char *ws = NULL, *we = NULL;
			bool want_type, want = ss_jpath_find(p, doc, end, &ws, &we, &want_type);
			for (size_t max = 1; max <= 64; max *= 8) { /* 1, 8, 64 */
				struct ss_jmember m[64];
				const char *vs = NULL, *ve = NULL;
				bool type_error;
				size_t nm;

				CHECK(ss_jscan_document_members(doc, end, m, max, &nm, NULL));
				CHECK(ss_jpath_find_in(p, doc, end, m, nm, &vs, &ve, &type_error) == want);
				CHECK(want ? vs == ws && ve == we : type_error == want_type);
			}
			ss_jpath_free(p);
		}
	}
}

/* keyenc order equals jv_cmp on random values */
static jv
random_value(int depth)
{
	int r = rand() % (depth > 2 ? 6 : 8);
	switch (r) {
	case 0: return jv_null();
	case 1: return rand() % 2 ? jv_true() : jv_false();
	case 2: return jv_number((rand() % 2001 - 1000) / (double)(1 + rand() % 4));
	case 3: return jv_number(ldexp(rand() % 1000 - 500, rand() % 200 - 100));
	case 4: case 5: {
		char s[5];
		int n = rand() % 4;
		for (int i = 0; i < n; i++)
			s[i] = "a\001bZ~"[rand() % 5];
		return jv_string_sized(s, n);
	}
	case 6: {
		jv a = jv_array();
		for (int i = rand() % 3; i > 0; i--)
			a = jv_array_append(a, random_value(depth + 1));
		return a;
	}
	default: {
		jv o = jv_object();
		for (int i = rand() % 3; i > 0; i--)
			o = jv_object_set(o, jv_string(rand() % 2 ? "a" : "b"), random_value(depth + 1));
		return o;
	}
	}
}

static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

static void
test_keyenc(void)
{
	int agree = 0, total = 2000;
	srand(42);
	for (int i = 0; i < total; i++) {
		jv a = random_value(0), b = random_value(0);
		ss_buf ea = {0}, eb = {0};
		ss_keyenc_jv(&ea, a);
		ss_keyenc_jv(&eb, b);
		size_t n = ea.len < eb.len ? ea.len : eb.len;
		int c = memcmp(ea.data, eb.data, n);
		if (c == 0)
			c = (ea.len > eb.len) - (ea.len < eb.len);
		int want = sign(jv_cmp(jv_copy(a), jv_copy(b)));
		if (sign(c) == want)
			agree++;
		else {
			jv sa = jv_dump_string(a, 0), sb = jv_dump_string(b, 0);
			fprintf(stderr, "keyenc order: %s vs %s: got %d want %d\n", jv_string_value(sa),
				jv_string_value(sb), sign(c), want);
			jv_free(sa);
			jv_free(sb);
			a = jv_null();
			b = jv_null();
		}
		jv_free(a);
		jv_free(b);
		ss_buf_free(&ea);
		ss_buf_free(&eb);
	}
	CHECK(agree == total);

	/* the raw fast path encodes like the jv path */
	const char *raws[] = {"1672531200", "-0.5", "\"s1\"", "null", "true", "[\"s1\", 3]", "{\"b\":1,\"a\":2}", "1e2"};
	for (size_t i = 0; i < sizeof raws / sizeof raws[0]; i++) {
		ss_buf e1 = {0}, e2 = {0};
		jv v = jv_parse(raws[i]);
		ss_keyenc_jv(&e1, v);
		CHECK(ss_keyenc_raw(&e2, raws[i], strlen(raws[i])));
		CHECK(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
		jv_free(v);
		ss_buf_free(&e1);
		ss_buf_free(&e2);
	}
}

/* A string key read from the raw bytes encodes as libjq's string: a NUL (escaped in the
 * encoding) or a backslash (an escape: libjq's to read) at every place, every length
 * the raw path reads eight, four or one byte at a time. */
static void
test_keyenc_strings(void)
{
	for (size_t n = 0; n <= 24; n++)
		for (size_t at = 0; at <= n; at++) /* (at n: neither) */
			for (int bslash = 0; bslash < 2; bslash++) {
				char s[32], raw[40];
				size_t k = 0;
				for (size_t i = 0; i < n; i++)
					s[i] = (char)('a' + i % 26);
				if (at < n)
					s[at] = bslash ? '\\' : '\0';
				raw[k++] = '"';
				for (size_t i = 0; i < n; i++) {
					if (s[i] == '\\')
						raw[k++] = '\\';
					raw[k++] = s[i];
				}
				raw[k++] = '"';
				ss_buf e1 = {0}, e2 = {0};
				ss_keyenc_jv(&e1, jv_string_sized(s, (int)n));
				CHECK(ss_keyenc_raw(&e2, raw, k));
				CHECK(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
				CHECK(ss_keyenc_raw_nojq(&e2, raw, k) == (at < n && bslash ? -1 : 1));
				ss_buf_free(&e1);
				ss_buf_free(&e2);
			}
}

static void
test_buf(void)
{
	ss_buf b = {0};
	ss_buf_base64(&b, "bad\xff", 4);
	CHECK(strcmp(ss_buf_cstr(&b), "YmFk/w==") == 0);
	ss_buf d = {0};
	CHECK(ss_buf_unbase64(&d, b.data, b.len) && d.len == 4 && memcmp(d.data, "bad\xff", 4) == 0);
	CHECK(!ss_buf_unbase64(&d, "a*b", 3));
	ss_buf_reset(&b);
	CHECK(!ss_jscan_quote(&b, "a\"\n\x01\xff", 5));
	CHECK(strcmp(ss_buf_cstr(&b), "\"a\\\"\\n\\u0001\\ufffd\"") == 0);
	ss_buf_free(&b);
	ss_buf_free(&d);
}

static void
test_envelope(void)
{
	struct ss_envelope env;
	const char *e1 = "{\"topic\":\"weather\",\"partition\":3,\"offset\":42,\"value\":{\"partition\":9}}";
	CHECK(ss_envelope_get(e1, strlen(e1), &env) && strcmp(env.topic, "weather") == 0 &&
	      env.partition == 3 && env.offset == 42);
	const char *e2 = "{\"topic\":\"w\",\"partition\":-1,\"offset\":1}";
	CHECK(!ss_envelope_get(e2, strlen(e2), &env));
	const char *e3 = "{\"value\":{\"topic\":\"w\",\"partition\":1,\"offset\":1}}";
	CHECK(!ss_envelope_get(e3, strlen(e3), &env));
	const char *e4 = "[1]";
	CHECK(!ss_envelope_get(e4, strlen(e4), &env));
}

/* ss_envelope_get_members answers as ss_envelope_get, its members noted or not (more
 * than the 2 or 16 asked for), whatever escapes and decoys the keys and values have. */
static void
check_envelope_members(const char *doc, bool want)
{
	struct ss_envelope a = {0}, b = {0};
	struct ss_jmember m[16];
	size_t n = strlen(doc), nm;
	bool got = ss_envelope_get(doc, n, &a);

	CHECK(got == want);
	for (size_t max = 2; max <= 16; max += 14) {
		CHECK(ss_jscan_document_members(doc, doc + n, m, max, &nm, NULL));
		CHECK(ss_envelope_get_members(doc, n, m, nm, &b) == got);
		CHECK(!got || (strcmp(a.topic, b.topic) == 0 && a.partition == b.partition && a.offset == b.offset));
	}
}

static void
test_envelope_members(void)
{
	check_envelope_members("{\"topic\":\"w\",\"partition\":3,\"offset\":42}", true);
	check_envelope_members("{\"value\":1,\"offset\":4,\"topic\":\"w\",\"partition\":0}", true);
	check_envelope_members("{\"topic\":\"w\",\"partition\":-1,\"offset\":1}", false);
	check_envelope_members("{\"value\":{\"topic\":\"w\",\"partition\":1,\"offset\":1}}", false);
	check_envelope_members("{\"a\":\"\\\"partition\\\"\",\"topic\":\"w\",\"offset\":1}", false);
	check_envelope_members("{\"parti\\ton\":1,\"topic\":\"w\",\"offset\":1}", false);
	/* an escaped top-level key: an envelope only where "partition" is also written
	 * plainly somewhere (ss_envelope_get's search), as before */
	check_envelope_members("{\"topic\":\"w\",\"p\\u0061rtition\":1,\"offset\":2}", false);
	check_envelope_members("{\"topic\":\"w\",\"p\\u0061rtition\":1,\"offset\":2,\"v\":{\"partition\":0}}",
			       true);
	check_envelope_members("{\"a\":1,\"b\":2,\"c\":3,\"topic\":\"w\",\"partition\":7,\"offset\":9}", true);
	check_envelope_members("{}", false);
	check_envelope_members("[{\"partition\":1}]", false);
	check_envelope_members("\"partition\"", false);
}

static void
test_expr(void)
{
	ss_expr *e = ss_expr_compile("[.station, .timestamp]", "--key");
	ss_rec r;
	ss_buf enc = {0}, text = {0};
	char err[256];
	const char *doc = "{\"station\":\"s1\",\"timestamp\":5}";
	ss_rec_init(&r, doc, strlen(doc));
	CHECK(ss_expr_key(e, &r, &enc, &text, err, sizeof err) == 1);
	CHECK(strcmp(ss_buf_cstr(&text), "[\"s1\",5]") == 0);
	jv v = ss_expr_eval(e, &r);
	ss_buf enc2 = {0};
	ss_keyenc_jv(&enc2, v);
	CHECK(enc.len == enc2.len && memcmp(enc.data, enc2.data, enc.len) == 0);
	jv_free(v);
	ss_rec_done(&r);
	ss_expr_free(e);

	e = ss_expr_compile(".a.b", "--on");
	const char *doc2 = "{\"a\":5}";
	ss_rec_init(&r, doc2, strlen(doc2));
	ss_buf_reset(&text);
	CHECK(ss_expr_key(e, &r, NULL, &text, err, sizeof err) == -1 && strstr(err, "Cannot index number"));
	ss_rec_done(&r);
	ss_expr_free(e);
	ss_buf_free(&enc);
	ss_buf_free(&enc2);
	ss_buf_free(&text);
}

/* Are enc's bytes the key encoding of v (consumed)? */
static bool
enc_of(const ss_buf *enc, jv v)
{
	ss_buf want = {0};
	ss_keyenc_jv(&want, v);
	jv_free(v);
	bool same = want.len == enc->len && memcmp(want.data, enc->data, enc->len) == 0;
	ss_buf_free(&want);
	return same;
}

/* The fast paths of one expression on one document against libjq's run of it: the value
 * (ss_expr_eval), the raw bytes (ss_expr_raw), the key (ss_expr_key, ss_expr_key_nojq). */
static void
check_expr_fast(const char *text, const char *doc)
{
	ss_expr *e = ss_expr_compile(text, "--by");
	ss_rec r;
	ss_buf enc = {0};
	const char *raw;
	size_t len;
	char err[256];

	ss_rec_init(&r, doc, strlen(doc));
	int failed0 = failed;
	jv want = ss_expr_eval_jv(e, jv_parse(doc)); /* libjq, whatever the expression */
	bool error = !jv_is_valid(want);
	jv got = ss_expr_eval(e, &r);
	CHECK(error ? !jv_is_valid(got) : jv_equal(jv_copy(want), jv_copy(got)));
	jv_free(got);
	if (ss_expr_raw(e, &r, &raw, &len))
		CHECK(!error && jv_equal(jv_copy(want), jv_parse_sized(raw, (int)len)));
	else
		CHECK(error || !ss_expr_is_path(e) || ss_expr_absent(e, &r));
	int rc = ss_expr_key(e, &r, &enc, NULL, err, sizeof err);
	CHECK(error ? rc == -1 : (rc == (jv_get_kind(want) != JV_KIND_NULL) && enc_of(&enc, jv_copy(want))));
	ss_buf_reset(&enc);
	if (ss_expr_key_nojq(e, &r, &enc) == 1)
		CHECK(!error && !ss_expr_absent(e, &r) && enc_of(&enc, jv_copy(want)));
	else
		CHECK(enc.len == 0);
	if (failed != failed0)
		fprintf(stderr, "  (%s on %s)\n", text, doc);
	jv_free(want);
	ss_buf_free(&enc);
	ss_rec_done(&r);
	ss_expr_free(e);
}

/* PATH // LITERAL and arrays of paths, on raw bytes as libjq runs them. */
static void
test_expr_fast(void)
{
	static const char *const exprs[] = {
		".a // null", ".a // 1.0", ".a.b // \"x\"", ".b // \"\\u0061\"", ".a // -0", ". // 1",
		".a[0] // false", " .a  //  true ", ".a // .b", ".\"x//y\" // 1", ".a // \"http://x\"",
		".a // 1e400", "[.a, .b]", "[.a.b, .a]", ".a", ".a.b",
	};
	static const char *const docs[] = {
		"{\"a\":\"s\"}", "{\"a\":false}", "{\"a\":null,\"b\":null}", "{\"a\":{\"b\":0}}", "{}",
		"{\"a\":[null]}", "{\"a\":[3]}", "{\"a\":1e2,\"b\":\"\\u00e9\"}", "[1]", "\"str\"", "null",
		"{\"x//y\":false,\"a\":true}", "{\"a\":{\"b\":false},\"a\":{\"b\":[0]}}", "{\"a\":0,\"b\":-0.0}",
	};
	for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++)
		for (size_t k = 0; k < sizeof docs / sizeof *docs; k++)
			check_expr_fast(exprs[i], docs[k]);
}

/* The result of a projection on doc (on {"left":doc,"right":right} when right is given). */
static const char *
project(const char *expr, const char *doc, const char *right)
{
	static ss_buf out;
	ss_proj *p = ss_proj_compile(expr);
	struct ss_proj_member m[2] = {{"left", doc, strlen(doc), NULL}, {"right", right, right ? strlen(right) : 0, NULL}};
	struct ss_proj_root root = {doc, strlen(doc), right ? m : NULL, 2, false};

	ss_buf_reset(&out);
	if (p == NULL)
		return "(not a projection)";
	bool ok = ss_proj_eval(p, &root, &out);
	ss_proj_free(p);
	return ok ? ss_buf_cstr(&out) : "(error)";
}

static void
test_proj(void)
{
	const char *doc = "{\"a\":1.0,\"s\":\"x\\/y\",\"o\":{\"k\" : [7, 12345678901234567890]},\"a\":2}";
	CHECK(strcmp(project("[.a, .s, .o, .o.k[1], .none.x]", doc, NULL), "[2,\"x/y\",{\"k\":[7,12345678901234567000]},12345678901234567000,null]") == 0);
	CHECK(strcmp(project("{a, \"b c\": -0, d: [1.50, \"\", true]}", doc, NULL), "{\"a\":2,\"b c\":-0,\"d\":[1.5,\"\",true]}") == 0);
	CHECK(strcmp(project("{l: .left.a, r: .right}", "{\"a\":\"\\u007F\"}", "[1]"), "{\"l\":\"\\u007f\",\"r\":[1]}") == 0);
	CHECK(strcmp(project(".", "{\"a\":1}", "null"), "{\"left\":{\"a\":1},\"right\":null}") == 0);
	CHECK(strcmp(project(".s.x", doc, NULL), "(error)") == 0);
	CHECK(strcmp(project(".[0]", "{}", "null"), "(error)") == 0);
	const char *refused[] = {".a | .b", "{a: 1, a: 2}", "\"\\(.a)\"", ".[-1]", "$x", "[.a,]", ".a .b", "length", "{(.a): 1}", "-.a"};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		CHECK(strcmp(project(refused[i], "{}", NULL), "(not a projection)") == 0);
}

/* Does --select read right records only through values one key deep (and never fail
 * on an object)? */
static bool
suffice(const char *expr)
{
	ss_proj *p = ss_proj_compile(expr);
	bool yes = p != NULL && ss_proj_known_suffice(p, "right", "left");

	ss_proj_free(p);
	return yes;
}

static void
test_proj_known_suffice(void)
{
	const char *yes[] = {"[.left.aid, .right.wid]", "{w: .right.wid, l: .left, r: .revision}", "[1, \"x\", null]",
			     ".right[\"é\"]", "[.right.\"x y\", .left.a, .right.b, .right.c, .right.d]"};
	const char *no[] = {".", ".right", "{right}", ".right.a.b", ".right[0]", ".left.a.b", ".revision.x", ".[0]",
			    "[.right.a, .right.b, .right.c, .right.d, .right.e]"}; /* a fifth key: not known */
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		CHECK(suffice(yes[i]));
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		CHECK(!suffice(no[i]));
}

static void
test_progress(void)
{
	char b[160];

	ss_progress_format(b, sizeof b, 500, 0, 0, 2000);
	CHECK(strcmp(b, "500 records, 250/s") == 0);
	ss_progress_format(b, sizeof b, 1000, 250, 1000, 10000);
	CHECK(strcmp(b, "1000 records, 100/s, 25%, 30s left") == 0);
	ss_progress_format(b, sizeof b, 10, 1, 100, 10000);
	CHECK(strcmp(b, "10 records, 1/s, 1%, 16m30s left") == 0);
	ss_progress_format(b, sizeof b, 10, 1, 1000, 10000);
	CHECK(strcmp(b, "10 records, 1/s, 0%, 2h46m left") == 0);
	ss_progress_format(b, sizeof b, 7, 0, 100, 1000);
	CHECK(strcmp(b, "7 records, 7/s, 0%") == 0); /* nothing done: no time left yet */
	ss_progress_format(b, sizeof b, 7, 120, 100, 1000);
	CHECK(strcmp(b, "7 records, 7/s, 100%, 0s left") == 0);
	CHECK(ss_progress_new(SS_PROGRESS_OFF, -1) == NULL);
}

static void
test_partwm(void)
{
	struct ss_partwm_rule ck = { .idle = 10, .told = true, .heard_idles = true, .revoked_idles = true };
	struct ss_partwm_rule join = { .idle = 10, .told = true, .unlisted_reads = true };
	struct ss_partwm_part reading = { .maxt = 10, .seen = 95, .pos = 3, .feed = SS_FEED_BEHIND, .feed_last = 3 };
	struct ss_partwm_part silent = { .maxt = 5, .seen = 0, .pos = 7, .feed = SS_FEED_CAUGHT_UP, .feed_last = 7 };
	struct ss_partwm_part fresh = { .maxt = SS_PARTWM_NONE, .seen = 100, .pos = -1, .feed = SS_FEED_BEHIND, .feed_last = -1 };
	struct ss_partwm_part ended = { .maxt = 1, .seen = 99, .pos = 4, .feed = SS_FEED_ENDED, .feed_last = 4 };
	struct ss_partwm_part revoked = { .maxt = 2, .seen = 0, .pos = 4, .feed = SS_FEED_REVOKED, .feed_last = 4 };
	struct ss_partwm_part unlisted = { .maxt = 3, .seen = 0, .pos = -1, .feed = -1, .feed_last = -1 };
	struct ss_partwm_low l = SS_PARTWM_LOW_INIT;

	CHECK(ss_partwm_state(&ck, &ended) == SS_PARTWM_DONE);
	ended.pos = 3; /* the writer's word is about a record not read yet */
	CHECK(ss_partwm_state(&ck, &ended) == SS_PARTWM_READING);
	ended.pos = 4;
	CHECK(ss_partwm_state(&ck, &revoked) == SS_PARTWM_REVOKED);
	CHECK(ss_partwm_state(&ck, &unlisted) == SS_PARTWM_DONE);
	CHECK(ss_partwm_state(&join, &unlisted) == SS_PARTWM_READING);
	ck.told = false;
	CHECK(ss_partwm_state(&ck, &reading) == SS_PARTWM_HEARD);
	CHECK(ss_partwm_state(&ck, &ended) == SS_PARTWM_DONE); /* said before it stopped telling */
	ck.told = true;

	ss_partwm_low_add(&l, &ck, &reading, 100);
	ss_partwm_low_add(&l, &ck, &silent, 100);
	ss_partwm_low_add(&l, &ck, &fresh, 100);
	ss_partwm_low_add(&l, &ck, &ended, 100);
	ss_partwm_low_add(&l, &ck, &revoked, 100);
	CHECK(l.lo == 10 && l.held == 1 && l.timeless == 1 && l.idle_hi == 5 && l.idle_next == INT64_MAX);
	l = SS_PARTWM_LOW_INIT;
	silent.seen = 95;
	ss_partwm_low_add(&l, &join, &silent, 100);
	ss_partwm_low_add(&l, &join, &revoked, 100); /* a join waits for a revoked one */
	CHECK(l.lo == 2 && l.held == 2 && l.idle_hi == SS_PARTWM_NONE && l.idle_next == 105);

	/* a state judged elsewhere (a checkpoint's rows): the feed behind it is not read */
	l = SS_PARTWM_LOW_INIT;
	ss_partwm_low_add_state(&l, &ck, &unlisted, SS_PARTWM_READING, 100);
	ss_partwm_low_add_state(&l, &ck, &revoked, SS_PARTWM_HEARD, 100);
	ss_partwm_low_add_state(&l, &ck, &reading, SS_PARTWM_DONE, 100);
	CHECK(l.lo == 3 && l.held == 1 && l.idle_hi == 2);
	CHECK(ss_partwm_idle(&ck, &revoked, SS_PARTWM_HEARD, 100));
	CHECK(!ss_partwm_idle(&ck, &revoked, SS_PARTWM_READING, 100));
	CHECK(!ss_partwm_idle(&join, &revoked, SS_PARTWM_REVOKED, 100));
	CHECK(!ss_partwm_idle(&ck, &silent, SS_PARTWM_CAUGHT_UP, 104)); /* silent for 9 of 10 */
	CHECK(ss_partwm_idle(&ck, &silent, SS_PARTWM_CAUGHT_UP, 105));
}

/* librdkafka's errors that refuse this side (exit 77), and the one that only looks so:
 * a SaslAuthenticateRequest that failed before the broker answered it. */
static void
test_kafka_auth(void)
{
	static const char refused[] = "sasl_ssl://127.0.0.1:9094/1: SASL authentication error: "
				      "Authentication failed during authentication due to invalid "
				      "credentials with SASL mechanism SCRAM-SHA-512 (after 3ms in state AUTH_REQ)";
	static const char untrusted[] = "ssl://127.0.0.1:9094/bootstrap: SSL handshake failed: "
					"error:0A000086:SSL routines::certificate verify failed";
	static const char dropped[] = "GroupCoordinator: SASL authentication error: SaslAuthenticateRequest "
				      "failed: Local: Broker transport failure (after 0ms in state DOWN)";

	CHECK(ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR__AUTHENTICATION, refused));
	CHECK(ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR_NO_ERROR, refused));
	CHECK(ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR__SSL, untrusted));
	CHECK(ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR_NO_ERROR, untrusted));
	CHECK(ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR__AUTHENTICATION, "Invalid username or password"));
	CHECK(!ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR__TRANSPORT, dropped));
	CHECK(!ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR_NO_ERROR, dropped));
	CHECK(!ss_kafka_is_auth_failure(RD_KAFKA_RESP_ERR__TRANSPORT,
					"127.0.0.1:9094/bootstrap: Connect to ipv4#127.0.0.1:9094 failed: "
					"Connection refused (after 0ms in state CONNECT)"));
}

int
main(void)
{
	test_time();
	test_time_numbers();
	test_duration();
	test_jscan();
	test_jpath();
	test_jpath_find_in();
	test_jscan_depth();
	test_jpath_look();
	test_jpath_look_nested();
	test_keyenc();
	test_keyenc_strings();
	test_buf();
	test_envelope();
	test_envelope_members();
	test_expr();
	test_expr_fast();
	test_proj();
	test_proj_known_suffice();
	test_progress();
	test_partwm();
	test_kafka_auth();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
