/* A right input that is a regular file is complete: it is indexed whole before the
 * first left record, so every left record, in whatever order it comes, gets its exact
 * answer at once (as a batch engine answers it), and nothing in the file is late.
 *
 * The index holds 24 bytes per right record: its key's number, its time and where its
 * line is in the file; records are sorted by (key, time, position in the file), so the
 * later record of a key and time wins a tie. The raw lines are not copied: a match is
 * spliced from a read-only mapping of the file (its pages are the page cache's: they
 * count in the resident size as they are read, and go under memory pressure; letting
 * them go on purpose makes random lookups fault them in again, at 5x the time). Keys are numbered through a hash table
 * that compares the encoded key bytes, so a hash collision can never join two keys. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "join/asof_impl.h"
#include "base/diag.h"
#include "base/hash.h"

/* One right record: key number, event time, and its line (offset << 24 | length,
 * the length capped: a longer line is found by its newline). */
struct ix_entry {
	uint32_t key;
	int64_t t;
	uint64_t pos;
};

/* A key's time range is cut into one bucket per BUCKET_RECORDS records; a directory
 * says where each bucket's records start, so a lookup reads a bucket, not a binary
 * search's worth of cache lines. Skewed times only make some buckets larger. */
#define BUCKET_RECORDS 8

struct ix_group {
	int64_t tmin, tmax;
	size_t lo, hi;     /* its records */
	size_t dir;        /* its directory: dir[dir .. dir + nb], record offsets from lo */
	uint32_t nb;       /* buckets */
};
#define LEN_BITS 24
#define LEN_MAX ((UINT64_C(1) << LEN_BITS) - 1)

struct ix_key {
	uint64_t hash;
	uint32_t id; /* slot empty when id == 0; key number id - 1 */
	uint32_t enclen;
	size_t enc;  /* offset of the encoded key in keybytes */
};

struct asof_index {
	struct ix_entry *v; /* while the file is read; then split into tv and pos */
	size_t n, cap;
	int64_t *tv;   /* times, grouped by key, each group in time order */
	struct ix_group *group; /* per key: where its records are, and their time directory */
	uint32_t *dir;
	uint64_t *pos; /* the line of each */
	size_t *start; /* records of key i are [start[i], start[i + 1]) */
	struct ix_key *slot;
	size_t nkeys, slotcap;
	ss_buf keybytes;
	const char *map; /* the file, mapped */
	size_t maplen;
};

static uint32_t
key_number(struct asof_index *ix, const char *enc, size_t len)
{
	uint64_t h = ss_hash_bytes(enc, len);

	if (2 * (ix->nkeys + 1) > ix->slotcap) {
		size_t cap = ix->slotcap ? 2 * ix->slotcap : 1024;
		struct ix_key *slot = calloc(cap, sizeof *slot);
		if (slot == NULL)
			ss_diag_die(SS_EXIT_DATA, "out of memory");
		for (size_t i = 0; i < ix->slotcap; i++) {
			if (ix->slot[i].id == 0)
				continue;
			size_t s = ix->slot[i].hash & (cap - 1);
			while (slot[s].id != 0)
				s = (s + 1) & (cap - 1);
			slot[s] = ix->slot[i];
		}
		free(ix->slot);
		ix->slot = slot;
		ix->slotcap = cap;
	}
	size_t s = h & (ix->slotcap - 1);
	for (; ix->slot[s].id != 0; s = (s + 1) & (ix->slotcap - 1)) {
		const struct ix_key *k = &ix->slot[s];
		if (k->hash == h && k->enclen == len && (len == 0 || memcmp(ix->keybytes.data + k->enc, enc, len) == 0))
			return k->id - 1;
	}
	ix->slot[s] = (struct ix_key){.hash = h, .id = (uint32_t)++ix->nkeys, .enclen = (uint32_t)len,
				      .enc = ix->keybytes.len};
	ss_buf_add(&ix->keybytes, enc, len);
	return ix->slot[s].id - 1;
}

/* The key's number, or -1 when no right record has that key. */
static int64_t
find_key(const struct asof_index *ix, const char *enc, size_t len)
{
	if (ix->slotcap == 0)
		return -1;
	uint64_t h = ss_hash_bytes(enc, len);
	for (size_t s = h & (ix->slotcap - 1); ix->slot[s].id != 0; s = (s + 1) & (ix->slotcap - 1)) {
		const struct ix_key *k = &ix->slot[s];
		if (k->hash == h && k->enclen == len && (len == 0 || memcmp(ix->keybytes.data + k->enc, enc, len) == 0))
			return k->id - 1;
	}
	return -1;
}

static void
add_entry(struct asof_index *ix, uint32_t key, int64_t t, uint64_t off, size_t len)
{
	if (ix->n == ix->cap) {
		ix->cap = ix->cap ? 2 * ix->cap : 4096;
		ix->v = ss_xrealloc(ix->v, ix->cap * sizeof *ix->v);
	}
	ix->v[ix->n++] = (struct ix_entry){.key = key, .t = t, .pos = off << LEN_BITS | (len < LEN_MAX ? len : LEN_MAX)};
}

static int
by_time(const void *a, const void *b)
{
	const struct ix_entry *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The bucket of time t in group g (t within [tmin, tmax]). */
static uint32_t
bucket_of(const struct ix_group *g, int64_t t)
{
	__uint128_t span = (__uint128_t)((uint64_t)g->tmax - (uint64_t)g->tmin) + 1;

	return (uint32_t)((__uint128_t)((uint64_t)t - (uint64_t)g->tmin) * g->nb / span);
}

static void
build_directory(struct asof_index *ix)
{
	size_t nk = ix->nkeys, nd = 0;

	ix->group = ss_xmalloc((nk ? nk : 1) * sizeof *ix->group);
	for (size_t k = 0; k < nk; k++) {
		struct ix_group *g = &ix->group[k];
		g->lo = ix->start[k];
		g->hi = ix->start[k + 1];
		g->tmin = ix->tv[g->lo];
		g->tmax = ix->tv[g->hi - 1];
		g->nb = (uint32_t)((g->hi - g->lo) / BUCKET_RECORDS + 1);
		g->dir = nd;
		nd += g->nb + 1;
	}
	ix->dir = ss_xmalloc((nd ? nd : 1) * sizeof *ix->dir);
	for (size_t k = 0; k < nk; k++) {
		const struct ix_group *g = &ix->group[k];
		uint32_t *d = ix->dir + g->dir, b = 0;
		for (size_t i = g->lo; i < g->hi; i++)
			for (uint32_t bi = bucket_of(g, ix->tv[i]); b <= bi; b++)
				d[b] = (uint32_t)(i - g->lo);
		for (; b <= g->nb; b++)
			d[b] = (uint32_t)(g->hi - g->lo);
	}
	free(ix->start);
	ix->start = NULL;
}

/* Group the entries by key (a counting sort, stable: file order within a key), then
 * sort each key's entries by time unless they already are. */
static void
sort_entries(struct asof_index *ix)
{
	size_t nk = ix->nkeys;
	struct ix_entry *out = ss_xmalloc((ix->n ? ix->n : 1) * sizeof *out);

	ix->start = calloc(nk + 2, sizeof *ix->start);
	if (ix->start == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	for (size_t i = 0; i < ix->n; i++)
		ix->start[ix->v[i].key + 2]++;
	for (size_t k = 2; k < nk + 2; k++)
		ix->start[k] += ix->start[k - 1];
	for (size_t i = 0; i < ix->n; i++)
		out[ix->start[ix->v[i].key + 1]++] = ix->v[i];
	free(ix->v);
	ix->v = NULL;
	for (size_t k = 0; k < nk; k++) {
		struct ix_entry *e = out + ix->start[k];
		size_t n = ix->start[k + 1] - ix->start[k];
		for (size_t i = 1; i < n; i++)
			if (e[i].t < e[i - 1].t) {
				qsort(e, n, sizeof *e, by_time);
				break;
			}
	}
	/* times apart from positions: a lookup's binary search touches fewer cache lines */
	ix->tv = ss_xmalloc((ix->n ? ix->n : 1) * sizeof *ix->tv);
	ix->pos = ss_xmalloc((ix->n ? ix->n : 1) * sizeof *ix->pos);
	for (size_t i = 0; i < ix->n; i++) {
		ix->tv[i] = out[i].t;
		ix->pos[i] = out[i].pos;
	}
	free(out);
	build_directory(ix);
}

static void
map_file(struct asof_index *ix, ss_reader *r)
{
	struct stat st;

	if (fstat(ss_reader_fd(r), &st) != 0)
		ss_diag_die(SS_EXIT_DATA, "%s: %s", ss_reader_name(r), strerror(errno));
	ix->maplen = (size_t)st.st_size;
	if (ix->maplen == 0)
		return;
	ix->map = mmap(NULL, ix->maplen, PROT_READ, MAP_PRIVATE, ss_reader_fd(r), 0);
	if (ix->map == MAP_FAILED)
		ss_diag_die(SS_EXIT_DATA, "%s: mmap: %s", ss_reader_name(r), strerror(errno));
}

struct asof_index *
asof_index_build(ss_asof *j, ss_reader *r)
{
	struct asof_index *ix = calloc(1, sizeof *ix);
	enum asof_got got;

	if (ix == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	while ((got = asof_next_record(j, r, false, &j->rin)) == ASOF_GOT_RECORD) {
		asof_progress(j);
		add_entry(ix, key_number(ix, j->rin.key.data, j->rin.key.len), j->rin.t,
			  asof_record_offset(j, r, false), j->rin.len);
	}
	if (got == ASOF_GOT_FATAL) { /* the run ends: its caller sends the held records */
		asof_index_free(ix);
		return NULL;
	}
	sort_entries(ix);
	map_file(ix, r);
	return ix;
}

size_t
asof_index_records(const struct asof_index *ix)
{
	return ix->n;
}

void
asof_index_free(struct asof_index *ix)
{
	if (ix == NULL)
		return;
	if (ix->map != NULL)
		munmap((void *)ix->map, ix->maplen);
	free(ix->v);
	free(ix->tv);
	free(ix->group);
	free(ix->dir);
	free(ix->pos);
	free(ix->start);
	free(ix->slot);
	ss_buf_free(&ix->keybytes);
	free(ix);
}

/* The raw line of record i, from the mapping. */
static void
record_line(struct asof_index *ix, size_t i, struct asof_right *out)
{
	size_t off = (size_t)(ix->pos[i] >> LEN_BITS), len = (size_t)(ix->pos[i] & LEN_MAX);

	if (len == LEN_MAX) { /* too long for the index's bits: find its end again */
		const char *cursor = ix->map + off, *line;
		ss_ndjson_next_line(&cursor, ix->map + ix->maplen, &line, &len);
	}
	*out = (struct asof_right){.t = ix->tv[i], .len = (uint32_t)len, .raw = (char *)ix->map + off};
}

/* Index of the first time in [lo, hi) that is > t (or >= t when or_equal is false). */
static size_t
after(const int64_t *tv, size_t lo, size_t hi, int64_t t, bool or_equal)
{
	size_t n = hi - lo;

	/* branch-free halving: the loads do not wait on mispredicted branches */
	while (n > 1) {
		size_t half = n / 2;
		bool right = or_equal ? tv[lo + half - 1] <= t : tv[lo + half - 1] < t;
		lo = right ? lo + half : lo;
		n = right ? n - half : half;
	}
	if (n == 1 && (or_equal ? tv[lo] <= t : tv[lo] < t))
		lo++;
	return lo;
}

/* The range of group g's records that holds the first one past t (> t, or >= t when
 * or_equal is false): its bucket's records, or an end of the group. */
static void
candidates(const struct asof_index *ix, const struct ix_group *g, int64_t t, size_t *lo, size_t *hi)
{
	if (t < g->tmin) {
		*lo = *hi = g->lo;
	} else if (t > g->tmax) {
		*lo = *hi = g->hi;
	} else {
		const uint32_t *d = ix->dir + g->dir + bucket_of(g, t);
		*lo = g->lo + d[0];
		*hi = g->lo + d[1];
	}
}

/* Index of the first record of group g past t. */
static size_t
group_after(const struct asof_index *ix, const struct ix_group *g, int64_t t, bool or_equal)
{
	size_t lo, hi;

	candidates(ix, g, t, &lo, &hi);
	return after(ix->tv, lo, hi, t, or_equal);
}

/* The answer among group g's records (g NULL: no right record has the key). */
static const struct asof_right *
match_in_group(struct asof_index *ix, const struct ss_asof_opts *o, const struct ix_group *g, const struct asof_in *in,
	       struct asof_right buf[2])
{
	const struct asof_right *b = NULL, *f = NULL;

	if (g == NULL)
		return NULL;
	if (o->direction != SS_ASOF_FORWARD) {
		/* the last record at or before t: of equal times, the latest in the file */
		size_t i = group_after(ix, g, in->t, !o->strict);
		if (i > g->lo) {
			record_line(ix, i - 1, &buf[0]);
			b = &buf[0];
		}
	}
	if (o->direction != SS_ASOF_BACKWARD) {
		size_t i = group_after(ix, g, in->t, o->strict);
		if (i < g->hi) {
			size_t last = group_after(ix, g, ix->tv[i], true) - 1; /* ties: the latest */
			record_line(ix, last, &buf[1]);
			f = &buf[1];
		}
	}
	return asof_pick(o, in->t, b, f);
}

static const struct ix_group *
group_of(const struct asof_index *ix, const struct asof_in *in)
{
	int64_t k = find_key(ix, in->key.data, in->key.len);

	return k < 0 ? NULL : &ix->group[k];
}

const struct asof_right *
asof_index_match(struct asof_index *ix, const struct ss_asof_opts *o, const struct asof_in *in, struct asof_right buf[2])
{
	return match_in_group(ix, o, group_of(ix, in), in, buf);
}

/* The lookups of n left records go stage by stage across all of them, each stage only
 * touching memory (prefetch) that the next one reads: their cache misses overlap
 * instead of waiting one after another. */
void
asof_index_match_batch(struct asof_index *ix, const struct ss_asof_opts *o, const struct asof_in *in, size_t n,
		       struct asof_right (*buf)[2], const struct asof_right **out)
{
	if (n == 0)
		return;
	const struct ix_group *g[n];
	size_t at[n];

	for (size_t r = 0; r < n; r++)
		if ((g[r] = group_of(ix, &in[r])) != NULL)
			__builtin_prefetch(g[r]);
	for (size_t r = 0; r < n; r++)
		if (g[r] != NULL && in[r].t >= g[r]->tmin && in[r].t <= g[r]->tmax)
			__builtin_prefetch(ix->dir + g[r]->dir + bucket_of(g[r], in[r].t));
	for (size_t r = 0; r < n; r++) {
		size_t hi;
		if (g[r] == NULL)
			continue;
		candidates(ix, g[r], in[r].t, &at[r], &hi);
		__builtin_prefetch(&ix->tv[at[r]]);
	}
	for (size_t r = 0; r < n; r++) {
		if (g[r] == NULL)
			continue;
		at[r] = group_after(ix, g[r], in[r].t, !o->strict);
		if (at[r] > g[r]->lo)
			__builtin_prefetch(&ix->pos[at[r] - 1]);
		if (at[r] < g[r]->hi)
			__builtin_prefetch(&ix->pos[at[r]]);
	}
	for (size_t r = 0; r < n; r++) {
		if (g[r] == NULL)
			continue;
		if (at[r] > g[r]->lo)
			__builtin_prefetch(ix->map + (ix->pos[at[r] - 1] >> LEN_BITS));
		if (o->direction != SS_ASOF_BACKWARD && at[r] < g[r]->hi)
			__builtin_prefetch(ix->map + (ix->pos[at[r]] >> LEN_BITS));
	}
	for (size_t r = 0; r < n; r++)
		out[r] = match_in_group(ix, o, g[r], &in[r], buf[r]);
}
