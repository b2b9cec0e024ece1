/* tpindex: where a topic-partition is in its owner's array, found in O(1). A stream's
 * partitions are looked up once per record (ss-checkpoint's, ss-asof's), and a scan of
 * the array made that O(partitions): a topic of 10,000 partitions took ss-checkpoint's
 * pulse 20 times as long per record as one of 100.
 *
 * An open-addressing table of positions in the owner's array, each beside its hash: the
 * owner may reallocate the array (positions are kept, not pointers) and only appends to
 * it. The owner says whether the element at a position is the one looked for.
 * Ownership: the owner's struct ss_tpindex (zeroed to start); ss_tpindex_free frees
 * its table. */
#ifndef SS_TPINDEX_H
#define SS_TPINDEX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ss_tpindex {
	struct ss_tpslot {
		uint64_t hash; /* 0: an empty slot */
		size_t at;
	} *slot;
	size_t cap, n;
};
/* Is the element at position `at` of the owner's array (topic, partition)? */
typedef bool ss_tpindex_is(const void *owner, size_t at, const char *topic, int32_t partition);
/* The position of (topic, partition) in the owner's array, or SIZE_MAX if not there. */
size_t ss_tpindex_find(const struct ss_tpindex *x, const char *topic, int32_t partition,
    ss_tpindex_is *is, const void *owner);
/* The element at position `at`, appended, is (topic, partition). */
void ss_tpindex_add(struct ss_tpindex *x, const char *topic, int32_t partition, size_t at);
void ss_tpindex_free(struct ss_tpindex *x);
#endif
