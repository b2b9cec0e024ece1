/* tpindex: see tpindex.h. */
#include "stream/tpindex.h"

#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/hash.h"

static uint64_t
tp_hash(const char *topic, int32_t partition)
{
	uint64_t h = ss_hash_mix(ss_hash_bytes(topic, strlen(topic)) ^ (uint32_t)partition,
	    UINT64_C(0x9e3779b97f4a7c15));

	return h | 1; /* 0 marks an empty slot */
}

static void
put(struct ss_tpindex *x, uint64_t hash, size_t at)
{
	size_t i = hash & (x->cap - 1);

	while (x->slot[i].hash != 0)
		i = (i + 1) & (x->cap - 1);
	x->slot[i] = (struct ss_tpslot){ .hash = hash, .at = at };
}

/* Twice the slots, the same positions: kept at most half full. */
static void
grow(struct ss_tpindex *x)
{
	struct ss_tpindex old = *x;

	x->cap = old.cap ? 2 * old.cap : 16;
	x->slot = ss_xmalloc(x->cap * sizeof *x->slot);
	memset(x->slot, 0, x->cap * sizeof *x->slot);
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].hash != 0)
			put(x, old.slot[i].hash, old.slot[i].at);
	free(old.slot);
}

size_t
ss_tpindex_find(const struct ss_tpindex *x, const char *topic, int32_t partition,
    ss_tpindex_is *is, const void *owner)
{
	if (x->cap == 0)
		return SIZE_MAX;
	uint64_t h = tp_hash(topic, partition);
	for (size_t i = h & (x->cap - 1); x->slot[i].hash != 0; i = (i + 1) & (x->cap - 1))
		if (x->slot[i].hash == h && is(owner, x->slot[i].at, topic, partition))
			return x->slot[i].at;
	return SIZE_MAX;
}

void
ss_tpindex_add(struct ss_tpindex *x, const char *topic, int32_t partition, size_t at)
{
	if (2 * (x->n + 1) > x->cap)
		grow(x);
	put(x, tp_hash(topic, partition), at);
	x->n++;
}

void
ss_tpindex_free(struct ss_tpindex *x)
{
	free(x->slot);
	*x = (struct ss_tpindex){ 0 };
}
