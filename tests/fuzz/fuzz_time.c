/* Time and duration parsing. Input: text.
 * Properties: no crash on any bytes; a time that parses formats (ss_time_format) to text
 * that parses back to the same instant; any instant in range round-trips through the
 * format; the raw fast path (ss_time_from_raw) agrees with the jv path (ss_time_from_jv)
 * on every valid JSON value, in every unit. */
#include <jv.h>

#include "fuzz.h"
#include "base/jscan.h"
#include "base/sstime.h"

/* int64 nanoseconds reach 1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z */
static void
round_trip(int64_t ns)
{
	char buf[64];
	int64_t back;

	ss_time_format(ns, buf, sizeof buf);
	if (!ss_time_parse_text(buf, strlen(buf), &back))
		fuzz_fail("formatted time does not parse: %lld -> %s", (long long)ns, buf);
	if (back != ns)
		fuzz_fail("round trip: %lld -> %s -> %lld", (long long)ns, buf, (long long)back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	int64_t ns, ns2, d;
	const char *why, *why2;

	memcpy(s, data, size);
	s[size] = '\0';
	if (ss_time_parse_text((const char *)data, size, &ns))
		round_trip(ns);
	if (ss_duration_parse(s, &d) && d < 0)
		fuzz_fail("negative duration from %s", s);
	if (size == 8) {
		memcpy(&ns, data, 8);
		round_trip(ns);
	}
	if (ss_jscan_document((const char *)data, (const char *)data + size, NULL)) {
		/* the raw span of the value, as tools pass it: no surrounding whitespace */
		const char *vs = (const char *)data, *ve;
		while (*vs == ' ' || *vs == '\t' || *vs == '\n' || *vs == '\r')
			vs++;
		ve = ss_jscan_value(vs, (const char *)data + size, NULL);
		jv v = jv_parse_sized(vs, (int)(ve - vs));
		if (jv_is_valid(v))
			for (int u = SS_TS_S; u <= SS_TS_NS; u++) {
				bool a = ss_time_from_raw(vs, (size_t)(ve - vs), u, &ns, &why);
				bool b = ss_time_from_jv(v, u, &ns2, &why2);
				if (a != b || (a && ns != ns2))
					fuzz_fail("raw %d/%lld vs jv %d/%lld on %s", a, (long long)ns, b, (long long)ns2, s);
			}
		jv_free(v);
	}
	free(s);
	return 0;
}
