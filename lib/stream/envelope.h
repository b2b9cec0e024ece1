/* envelope: the record shape ss-consume writes: topic, partition, offset, timestamp, key,
 * value, headers. Extraction works on raw bytes (jscan) and allocates nothing. */
#ifndef SS_ENVELOPE_H
#define SS_ENVELOPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ss_envelope {
	char topic[256];
	int32_t partition;
	int64_t offset;
};
/* True when the record is an object carrying a string topic and integer partition and
 * offset at its top level: what a stateful tool applies at most once, by its offset
 * (man ss.7, Idempotence). */
bool ss_envelope_get(const char *raw, size_t len, struct ss_envelope *env);
/* The same answer for a record validated with its top-level members noted in
 * m[0..nm) (ss_jscan_document_members; nm SIZE_MAX: not noted): without a search of
 * the whole record when none of those keys can be "partition". */
struct ss_jmember;
bool ss_envelope_get_members(const char *raw, size_t len, const struct ss_jmember *m, size_t nm,
			     struct ss_envelope *env);
#endif
