/* Envelope extraction. Input: one JSON document (tools validate records first).
 * Properties: when ss_envelope_get says there is an envelope, jq finds the same topic
 * string, partition and offset (offsets past 2^53, which jq holds as the nearest double,
 * compared as doubles); every document jq reads as an envelope with a plain topic and
 * integer partition/offset, rewritten canonically, is recognised. */
#include <jv.h>
#include <math.h>

#include "stream/envelope.h"
#include "fuzz.h"
#include "base/jscan.h"

static bool
integer(jv v, double max, double *out)
{
	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return false;
	double d = jv_number_value(v);
	if (d < 0 || d > max || d != floor(d))
		return false;
	*out = d;
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *raw = (const char *)data;
	struct ss_envelope env;

	if (!ss_jscan_document(raw, raw + size, NULL))
		return 0;
	bool got = ss_envelope_get(raw, size, &env);
	jv doc = jv_parse_sized(raw, (int)size);
	if (!jv_is_valid(doc) || jv_get_kind(doc) != JV_KIND_OBJECT) {
		if (got && jv_is_valid(doc))
			fuzz_fail("envelope in a non-object");
		jv_free(doc);
		return 0;
	}
	jv topic = jv_object_get(jv_copy(doc), jv_string("topic"));
	jv part = jv_object_get(jv_copy(doc), jv_string("partition"));
	jv off = jv_object_get(jv_copy(doc), jv_string("offset"));
	double p, o;
	bool jq_env = jv_get_kind(topic) == JV_KIND_STRING && integer(jv_copy(part), 2147483647.0, &p) &&
		      integer(jv_copy(off), 9223372036854775807.0, &o);
	if (got) {
		if (!jq_env || strcmp(jv_string_value(topic), env.topic) != 0 || p != (double)env.partition ||
		    o != (double)env.offset)
			fuzz_fail("envelope %s/%d/%lld, jq sees otherwise", env.topic, env.partition, (long long)env.offset);
	} else if (jq_env && o <= 9007199254740992.0 && strlen(jv_string_value(topic)) > 0 && strlen(jv_string_value(topic)) < 200 &&
		   !strpbrk(jv_string_value(topic), "\"\\") && ss_jscan_utf8(jv_string_value(topic), jv_string_value(topic) + strlen(jv_string_value(topic)))) {
		char canon[512];
		bool ctl = false;
		for (const char *c = jv_string_value(topic); *c; c++)
			ctl |= (unsigned char)*c < 0x20;
		snprintf(canon, sizeof canon, "{\"topic\":\"%s\",\"partition\":%lld,\"offset\":%lld}",
			 jv_string_value(topic), (long long)p, (long long)o);
		if (!ctl && !ss_envelope_get(canon, strlen(canon), &env))
			fuzz_fail("canonical envelope not recognised: %s", canon);
	}
	jv_free(topic);
	jv_free(part);
	jv_free(off);
	jv_free(doc);
	return 0;
}
