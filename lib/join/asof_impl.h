/* asof_impl: internals shared by the files of lib/join/; not an API for other modules.
 *
 * Hot state lives in memory: per join key, the right history as an array sorted by
 * event time (pruned behind the slower stream), and the left records still held
 * (defer) or open for revision (revise) in a heap ordered by their release point.
 * The --state file mirrors that state (lib/join/asof_state.c). */
#ifndef SS_ASOF_IMPL_H
#define SS_ASOF_IMPL_H
#include <jq.h>
#include <stdio.h>

#include "db/acks.h"
#include "join/asof.h"
#include "base/buf.h"
#include "stream/envelope.h"
#include "base/expr.h"
#include "stream/feed.h"
#include "base/jscan.h"
#include "base/proj.h"
#include "stream/partwm.h"
#include "stream/tpindex.h"

#define ASOF_NONE SS_PARTWM_NONE /* no time yet, as for a partition (partwm.h) */
#define CHECKPOINT_RECORDS 10000

/* Values of --select's paths found while a record was parsed ahead (asof_ahead.c): the
 * i-th is that of ss_proj_known(proj, its side, i) in the record, at offset at[i] - 1
 * (at[i] 0: the record has no such key), len[i] bytes; n 0: none found. */
struct asof_known {
	uint8_t n;
	uint32_t at[SS_PROJ_KNOWN], len[SS_PROJ_KNOWN];
};

/* Right records kept in the history as the object of their known values alone, where
 * --select reads nothing else of them (ss_proj_known_suffice): 200-byte records become
 * {"wid":17}, and a join over 10,000 keys keeps its history in the cache. n: how many
 * known values (0: records are kept whole); keys: "key": of each, the i-th at
 * [at[i], at[i + 1]). */
struct asof_trim {
	int n;
	ss_buf keys;
	size_t at[SS_PROJ_KNOWN + 1];
};

/* One right record; raw is malloc'd and owned by the history. With has_known, its struct
 * asof_known follows its len bytes in raw's allocation (asof_history_put). */
struct asof_right {
	int64_t t;
	uint64_t seq; /* its identity and rank among ties (asof.c right_seq) */
	uint32_t len;
	bool has_known;
	char *raw;
};

/* Where a right record keeps its struct asof_known, or NULL: the bytes right after its
 * own, so unaligned (copy them out to read them). */
static inline const char *
asof_right_known_bytes(const struct asof_right *r)
{
	return r->has_known ? r->raw + r->len : NULL;
}

/* Ask for all of a right record's bytes ahead of their copy: a right record about to be
 * copied (into the output, or to disk) was most often written long ago, by another core. */
static inline void
asof_right_prefetch(const struct asof_right *r)
{
	for (uint32_t at = 0; at < r->len; at += 64)
		__builtin_prefetch(r->raw + at);
}

struct asof_held;

/* History entries a key holds in itself before its history moves to an array of its own.
 * A merge of ordered files keeps one or two per key (asof_prune), so a lookup's chain of
 * misses is slot, key, record rather than slot, key, array, record: with 1,000,000 keys,
 * where each is a miss to memory, the join takes a fifth less time (bench/keys.sh). */
enum { ASOF_HIST_INLINE = 2 };

/* A key and its first history entries, together on cache-line bounds (asof_hist.c
 * key_new, cut from the map's slabs): these fields and the encoded key in the first line
 * (a key of up to 15 bytes), ASOF_HIST_INLINE entries in the second. A lookup compares
 * the key and reads its newest entry: two lines. Before, the inline entries came first
 * and the key's bytes last, in a malloc chunk on 16 bytes: three lines in three
 * placements of four (cachegrind, 100k + 100k wide records, 10,000 keys, a 1 MB last
 * level: the join's misses there 14% fewer). */
struct asof_key {
	struct asof_right *hist; /* sorted by t, unique t: the entries after enc, or an
				    array of its own */
	size_t n, cap;
	uint64_t hash;
	uint32_t enclen;
	bool pruned; /* older history was dropped: lookups before hist[0] are unknown */
	bool on_disk; /* older history is in the store only (evicted): every record older
			 than hist[0] (asof_match.c evict) */
	struct asof_held *held;  /* this key's held/open left records */
	char enc[];  /* the encoded key and a NUL; then, 32-byte aligned, the inline entries */
};

/* A left record held for defer, or open for revision (revise). */
struct asof_held {
	int64_t t;       /* left event time */
	int64_t p;       /* release point: final once the right watermark is past it */
	int64_t since;   /* monotonic arrival time, for --max-delay */
	uint64_t id;     /* row id in the state file */
	uint64_t match;  /* seq of the right record last emitted with it, 0 for none */
	uint32_t revision;
	/* what was found ahead in it for --select follows its len bytes (as a right
	 * record's does: asof_held_known_bytes); not kept on disk. Without it, each result held
	 * looked for its values again, the whole line over for a later duplicate key (~9% of
	 * the join's thread through pipes, wide shape, perf). */
	bool has_known;
	uint64_t line;
	size_t heap;     /* index in the release heap, or ASOF_PARKED */
	struct asof_held *wnext, *wprev; /* parked: the release heap's list */
	struct asof_key *key;
	struct asof_held *knext, *kprev; /* per-key list */
	struct asof_held *anext, *aprev; /* arrival order, for --max-delay */
	struct asof_held *onext; /* --order left: the next of its left partition (by id) */
	uint32_t oq;             /* --order left: its left partition's queue (j->oq) */
	size_t len;
	char raw[];
};

/* Where a held record keeps its struct asof_known, or NULL (as asof_right_known_bytes). */
static inline const char *
asof_held_known_bytes(const struct asof_held *h)
{
	return h->has_known ? h->raw + h->len : NULL;
}

/* --order left (defer): a result is written only after those of the left records before
 * it in its left partition. A held record whose answer is final (released), or was
 * written early (--max-delay) or expired, stays held, marked done in its revision, which
 * defer does not use otherwise (and so in the state file's column): ASOF_DONE | its
 * ASOF_MARK_* bits. Held records are in their partition's queue in arrival (id) order;
 * its done head goes out. A queue's records on disk (spilled) are newer than those in
 * memory; in match (unused by defer too) they carry their queue, its partition + 1. */
#define ASOF_DONE 0x100u

struct asof_oq {
	int32_t partition;   /* left partition number (of any topic); -1: without envelope */
	uint64_t spilled;    /* its held records on disk, all newer than those in memory */
	uint64_t from;       /* the ids of those are at least this */
	struct asof_held *first, *last;
};

struct asof_map {
	/* open addressing; a key's hash (odd) beside it, so a probe reads only the slot
	 * array until a hash matches; hash 0 and key NULL: empty */
	struct asof_slot_ent {
		uint64_t hash;
		struct asof_key *key;
	} *slot;
	size_t cap, n;
	/* the keys' memory (asof_hist.c key_mem): slabs, each holding in its first line a
	 * pointer to the slab before it; the newest has used of its size bytes */
	char *slab;
	size_t slab_used, slab_size;
};

/* The release order of the held records, on (release point, id): a min-heap, and
 * beside it the records with no release point yet (INT64_MAX: a forward join's left
 * records wait for a right one of their key), parked in id order as long as they come
 * in it. A forward join of 10,000 keys holds ~10,000 of those; in the heap, each
 * record's release sifted through all of them (12% of the CPU time, perf). A heap
 * entry keeps its record's order with it: a sift compares entries without reading the
 * records, which are out of the cache with many keys. */
struct asof_heap {
	struct asof_heap_entry {
		int64_t p;
		uint64_t id;
		struct asof_held *x;
	} *v;
	size_t nv, cap;
	struct asof_held *parked, *parked_last;
	size_t n; /* held records in either */
};

/* A parsed input record. */
struct asof_in {
	const char *raw;
	size_t len;
	uint64_t line;
	int64_t t;
	ss_buf key; /* keyenc bytes; empty without --by */
	uint64_t khash; /* asof_key_hash of key where the parsing thread computed it, or 0 */
	bool has_env;
	struct ss_envelope env;
	/* its top-level members, noted while it was validated (SIZE_MAX: not noted) */
	struct ss_jmember members[SS_JMEMBERS_NOTED];
	size_t nmembers;
	struct asof_known known;
	/* a right record's bytes and known values, already copied into a buffer of their own
	 * as the history keeps them (asof_history_put), by the thread that parsed it
	 * (asof_ahead.c), or NULL. The join it is given to takes the buffer over. */
	char *hist;
	size_t hist_len; /* its bytes (asof_hist_copy) */
};

/* Right records' buffers the join is done with, for the thread that copied them
 * (asof_ahead.c) to free: the joining thread bounds a run's time, and free() of a chunk
 * long out of its cache stalls it; the parsing thread has time to spare. */
struct asof_retired {
	char **v;
	size_t n, cap;
};
/* raw to the list, or freed now when there is none (r NULL). */
void asof_retire(struct asof_retired *r, char *raw);
/* Free every buffer in the list and empty it. */
void asof_retired_clear(struct asof_retired *r);

/* One topic-partition of an input (asof_wm.c); wm.pos is the newest offset read from it,
 * applied or not. */
struct asof_part {
	char topic[256];
	int32_t partition;
	struct ss_partwm_part wm;
};

struct asof_parts {
	struct asof_part *v;
	size_t n, cap;
	struct ss_tpindex index;   /* where each is in v */
	struct ss_partwm_fold fold; /* their rule folded, kept up to date (asof_wm.c) */
};

/* --acks: a result written in this run and kept in the state until delivered. */
struct asof_sent {
	uint64_t line; /* its line number in this run's output */
	int64_t row;   /* its row in the state's outbox */
};

struct asof_outbox {
	struct asof_sent *v; /* oldest first, from v[head] */
	size_t head, n, cap;
};

struct asof_counters {
	uint64_t left, right, emitted, matched, late, expired, early, revisions, replayed;
};

struct asof_state;
struct asof_row;
struct asof_dir;

/* What the joins of one run share, owned by the router (asof_router.c: opened by ss_asof_new,
 * closed by ss_asof_end after the joins): the output, the compiled expressions, the
 * --late-file and the --acks file, the inputs' names and what their writers tell, what
 * was said once on stderr, and the counts that are the run's, not a partition's. A
 * join (the one join, or each partition-join of a --state-dir) reaches it through its
 * cx; nothing in it belongs to one join. */
struct asof_ctx {
	ss_writer *out;
	ss_expr *lon, *ron, *lby, *rby;
	jq_state *select;     /* --select in libjq: compiled at its first use (asof_select_jq) */
	struct ss_proj *proj; /* --select without libjq (proj.h), or NULL */
	/* proj's paths into each side's records (ss_proj_known), [left]: their values are
	 * found while a record is parsed (asof_find_known) */
	const struct ss_jpath *known[2][SS_PROJ_KNOWN];
	int nknown[2];
	struct asof_trim trim; /* of right records (asof_hist_copy) */
	FILE *late;
	ss_acks *acks;        /* --acks, or NULL */
	const char *lname, *rname;
	ss_feed_in *rfeed; /* what the right input's writer tells (one input: its), or NULL */
	ss_feed_in *lfeed; /* the same of the left input */
	uint64_t feed_gen; /* times rfeed was read; a join syncs when it has not seen the last */
	bool blind_told;   /* said that the right partitions cannot be known */
	unsigned told;     /* the ASOF_MARK_* said on stderr already */
	bool right_empty;  /* the right input ended without a record, and none came before */
	bool had_history;  /* a state holds right records of an earlier run */
	bool right_seen;   /* a right record came in this run (any partition, late too) */
	int left_failed;   /* the left input's writer failed with this exit status (-1: killed) */
	bool right_whole;  /* the right input is a file read whole first: nothing in it is late */
	uint64_t lines_out;  /* --acks: lines written in this run */
	uint64_t delivered;  /* of which delivered, as the acks file said at the last commit */
	bool backlog_warned; /* told that results are piling up undelivered */
};

/* The engine: one join (the one join of a run, or a partition-join of a --state-dir),
 * fed parsed records by the router (struct ss_asof) and answering them: its right
 * history, its held left records, its watermarks, its --state file. What it shares
 * with the other joins of the run is the run's (cx). It knows nothing of the inputs. */
typedef struct asof_join asof_join;

struct asof_join {
	struct ss_asof_opts o;
	struct asof_ctx *cx;   /* the run's, shared by its joins (the router's) */
	struct asof_map keys;
	struct asof_heap heap;
	struct asof_held *afirst, *alast;
	int64_t maxr;     /* newest right event time applied from records without envelope */
	struct asof_parts rparts; /* per topic-partition of enveloped right records */
	int64_t wm;        /* the effective right watermark (asof_wm.c) */
	int32_t partition; /* a partition-join's partition number, else -1 */
	uint64_t feed_synced;
	size_t feed_parts; /* right partitions the writer listed when last synced */
	int64_t idle_next; /* monotonic time the next partition turns idle */
	int64_t started;   /* monotonic start time: unseen partitions are waited for --idle */
	int64_t lw;       /* the left time history is kept for: the slowest left partition's */
	int64_t lw_bare;  /* newest left event time from records without envelope */
	struct asof_parts lparts; /* per topic-partition of enveloped left records */
	bool batch;       /* the right input is complete (asof_join_batch): every result is
			     final when written */
	bool revision0;   /* --emit revise over files: each result written once, revision 0 */
	bool right_eof;   /* the right stream ended: every answer is final */
	struct asof_index *index; /* the right file's index while the held records are
				   answered from it (asof_join_indexed; the run's), else NULL */
	uint64_t rseq, lid;
	uint64_t uncommitted; /* records since the last state commit */
	ss_buf obuf;
	struct asof_state *st;    /* --state, or NULL */
	struct asof_state *spill; /* where held records overflow: st, or a temporary file */
	size_t held_bytes, spill_limit;
	size_t hist_bytes, hist_limit; /* right history in memory, and its bound */
	size_t hist_next;              /* ... and the size at which the next eviction runs */
	struct asof_right near[2];     /* history read back from the store (asof_match.c) */
	uint64_t spilled;         /* held records on disk, not in memory */
	struct asof_oq *oq;       /* --order left: one queue per left partition */
	size_t noq, oqcap, oqlast;
	uint64_t waiting;         /* --order left: done records in memory waiting for older ones */
	int64_t spill_min_t;
	struct asof_counters n; /* for the summary */
	struct asof_outbox outbox; /* --acks: results not yet delivered */
	struct asof_retired *retired; /* where pruned right records go (the run's), or NULL */
};

/* The router and the run: the public handle (asof.h). It reads the inputs, parses
 * their records and hands each to its join: the one join, or with --state-dir the
 * partition-join of its partition (asof_dir.c). It calls the engine, never the other
 * way. */
struct ss_asof {
	struct ss_asof_opts o;
	struct asof_ctx *cx;   /* what the joins of the run share: the router's */
	asof_join *one;        /* without --state-dir: the one join, else NULL */
	struct asof_dir *dir;  /* with --state-dir: the partition-joins, else NULL */
	bool left_eof, right_eof;
	/* revise, or --late-file, over a right input read as it comes: the run ends with
	 * the right input, not when the left ended and no result is open (asof_done) */
	bool right_to_end;
	bool left_seen, left_bare; /* the first left record had no envelope */
	bool batch;       /* the right input is a regular file and there is no state: it is
			     complete, every result is final when written (asof_run.c) */
	uint64_t nread;   /* good records read, for the live line */
	struct asof_index *index; /* the right file, indexed whole (asof_index.c), or NULL: built
				   and freed by the batch run (asof_run.c) */
	struct asof_ahead *lahead, *rahead; /* a file parsed ahead on threads (asof_ahead.c), or NULL */
	uint64_t rquiet;  /* right lines up to this one were reported already (a re-read) */
	struct asof_in lin, rin;
	struct asof_retired retired; /* the one join's pruned right records, for rahead */
	/* a bad record that ends the run (--on-error fail), kept by asof_parse until the
	 * run has sent the held records (ASOF_GOT_FATAL); raw is the reader's, still */
	struct {
		bool pending;
		const char *name, *raw;
		size_t len;
		uint64_t line;
		char reason[512];
	} bad;
	ss_reader *lrd, *rrd; /* the inputs while a run reads them (one input: lrd) */
	ss_progress *progress; /* the live line, or NULL */
	int64_t in_size;       /* bytes of both inputs when both are regular files, else -1 */
};

static inline int64_t
asof_sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static inline int64_t
asof_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* --order left: results in left input order per left partition (only defer reorders). */
static inline bool
asof_ordered(const asof_join *j)
{
	return j->o.order_left && j->o.emit == SS_ASOF_DEFER;
}

/* A held record whose result waits for older ones of its left partition (--order left). */
static inline bool
asof_waiting(const asof_join *j, const struct asof_held *h)
{
	return asof_ordered(j) && (h->revision & ASOF_DONE);
}

/* --emit revise keeps every left record whose answer is final (on disk), so that a right
 * record that comes late can still correct it: the last revision is the exact answer. */
static inline bool
asof_keeps_closed(const asof_join *j)
{
	return j->o.emit == SS_ASOF_REVISE && !j->batch;
}

/* Is the answer of a record with release point p final? The right watermark (j->wm:
 * newest right event time minus --grace, the minimum over the right partitions,
 * asof_wm.c) has passed it, or the right input ended. */
static inline bool
asof_final(const asof_join *j, int64_t p)
{
	return j->right_eof || p < j->wm;
}

/* asof_hist.c: keys, right history, release heap. */
struct asof_key *asof_key_get(struct asof_map *m, const char *enc, size_t len);
/* The key of a record: asof_key_get, by the hash its parsing computed if it did. */
struct asof_key *asof_key_of(struct asof_map *m, const struct asof_in *in);
/* Start loading the slot of a record's key about to be looked up (a cache miss that
 * overlaps with the work before the lookup). */
void asof_key_prefetch(const struct asof_map *m, const struct asof_in *in);
/* The hash a key is kept under (computed where its record is parsed, for the stages). */
uint64_t asof_key_hash(const char *enc, size_t len);
/* For a key met a few records from now, one stage of what its lookup will read, each
 * brought into the cache by the stage before: ASOF_AHEAD_SLOT its slot, _KEY its key,
 * _HIST the ends of its history, _BYTES the newest record's bytes. A hint: only reads. */
enum asof_ahead_stage { ASOF_AHEAD_SLOT, ASOF_AHEAD_KEY, ASOF_AHEAD_HIST, ASOF_AHEAD_BYTES };
void asof_key_prefetch_stage(const struct asof_map *m, uint64_t hash, enum asof_ahead_stage stage);
/* The same in the join's key map: what asof_join_prefetch starts, for a record further
 * ahead, by its key's hash. */
void asof_join_prefetch_stage(const asof_join *j, uint64_t hash, enum asof_ahead_stage stage);
/* Are the join's keys so few that their lookups hit the cache without the stages? */
bool asof_join_keys_cached(const asof_join *j);
void asof_map_free(struct asof_map *m);
/* Insert, or replace the record with the same time unless it ranks higher (seq):
 * NULL then, raw freed. Takes ownership of raw. */
const struct asof_right *asof_hist_put(struct asof_key *k, int64_t t, uint64_t seq, char *raw, size_t len,
				       bool has_known);
const struct asof_right *asof_hist_backward(const struct asof_key *k, int64_t t, bool strict);
const struct asof_right *asof_hist_forward(const struct asof_key *k, int64_t t, bool strict);
/* Drop records older than cutoff except the newest of them; cb sees each dropped one,
 * and its buffer goes to done (asof_retire). */
void asof_hist_prune(struct asof_key *k, int64_t cutoff, struct asof_retired *done,
		     void (*cb)(const struct asof_key *, const struct asof_right *, void *), void *arg);
#define ASOF_PARKED SIZE_MAX
void asof_heap_push(struct asof_heap *h, struct asof_held *x);
struct asof_held *asof_heap_pop(struct asof_heap *h);
void asof_heap_remove(struct asof_heap *h, struct asof_held *x);
/* After x->p changed: its place in the heap. */
void asof_heap_fix(struct asof_heap *h, struct asof_held *x);
/* The held record first to be released (the heap has one). */
struct asof_held *asof_heap_top(const struct asof_heap *h);
/* The answer for a left record at t among the latest right record at or before it (b)
 * and the earliest at or after it (f), either NULL: by --direction and --tolerance. */
const struct asof_right *asof_pick(const struct ss_asof_opts *o, int64_t t, const struct asof_right *b,
				   const struct asof_right *f);

/* asof_parse.c: records parsed (asof_in), bad ones reported. */
/* What a parse, or a read of a file's next record, gave: nothing (a blank or rejected
 * line; of a read, the end), a good record, or a bad one that ends the run (--on-error
 * fail), not reported yet: its caller passes it up to the run, which sends the held
 * records first (asof_fail, asof_join_finish_held), then reports it and exits
 * (asof_parse_fail). */
enum asof_got {
	ASOF_GOT_NONE,
	ASOF_GOT_RECORD,
	ASOF_GOT_FATAL,
	ASOF_GOT_WAIT, /* (asof_ahead_next, live) nothing ready yet: the input has not more */
};
enum asof_got asof_parse(ss_asof *j, bool left, const char *raw, size_t len, uint64_t line, struct asof_in *in);
/* Report the bad record that ends the run (j->bad) as the --on-error policy says: exits. */
void asof_parse_fail(ss_asof *j);
/* What asof_parse does besides parsing for a good record of a batch that was parsed
 * elsewhere (asof_ahead.c). */
void asof_parsed(ss_asof *j, bool left, const struct asof_in *in);
/* The values of --select's n paths (asof_ctx known) in the record raw, found among the
 * nm members noted while it was validated: into *known (left untouched where they were
 * not noted: not an object, or more members than noted). Any thread. */
void asof_find_known(const struct ss_jpath *const *paths, int n, const char *raw, size_t len,
		     const struct ss_jmember *m, size_t nm, struct asof_known *known);
/* A line of the one input (--left-topic/--right-topic), parsed into j->lin or j->rin as
 * *left says; ASOF_GOT_NONE for a blank or rejected one (another topic, no envelope). */
enum asof_got asof_parse_one(ss_asof *j, const char *raw, size_t len, uint64_t line, bool *left);
/* The event time of a line, unvalidated and unreported: for checking an order only. */
bool asof_peek_time(ss_asof *j, bool left, const char *raw, size_t len, int64_t *t);

/* asof.c: the engine, fed one parsed record at a time by the router. */
/* A bad record ends the run: without a state file this join's held records would be
 * lost with the process, so they go out now with what is known. */
void asof_join_finish_held(asof_join *j);
/* One join's side of the router's entry points (asof_router.c: asof_left ...). */
void asof_join_left(asof_join *j, const struct asof_in *in);
/* (in->hist, when set, is the join's: kept in the history or freed) */
void asof_join_right(asof_join *j, const struct asof_in *in);
void asof_join_right_end(asof_join *j);
bool asof_join_applied(asof_join *j, const struct ss_envelope *env);
/* Results out (output, late file, acks read), then this join's state committed. */
void asof_join_idle(asof_join *j);
/* The one join of the run cx (ss_asof_new, without --state-dir): with --state, its
 * state opened. */
asof_join *asof_join_open(struct asof_ctx *cx, const struct ss_asof_opts *opts);
/* A partition-join of the run cx for partition number partition, with the router's
 * options top and its state in path (borrowed until asof_join_free); right_eof: the right input
 * has ended (its held records are finished as it loads). */
asof_join *asof_join_new(struct asof_ctx *cx, const struct ss_asof_opts *top, const char *path, int32_t partition,
			 bool right_eof);
/* Close the state (committed): the join's memory stays, for asof_join_free only. */
void asof_join_close(asof_join *j);
/* Close the state and free the join (not its cx: the router's). */
void asof_join_free(asof_join *j);
void asof_counters_add(struct asof_counters *sum, const struct asof_counters *c);
/* The counters of this join alone, and the records it still holds. */
void asof_join_totals(const asof_join *j, struct asof_counters *c, size_t *held);
/* Does it hold left records whose answers wait for right records (in memory or on
 * disk)? */
bool asof_join_holds(const asof_join *j);
/* The right input is complete (a regular file, no state): every result is final when
 * written, each once (--emit revise: revision 0). */
void asof_join_batch(asof_join *j);
/* Start loading what the lookup of a parsed record's key will read. */
void asof_join_prefetch(const asof_join *j, const struct asof_in *in);
/* A left record answered by the run from the right file's index (r, or NULL). */
void asof_join_answer(asof_join *j, const struct asof_in *in, const struct asof_right *r);

/* asof_held.c: held left records (defer, revise, --order left), spilled and released.
 * Called by asof.c and the router; calls down to asof_match.c and asof_emit.c. */
void asof_join_tick(asof_join *j);
int asof_join_timeout(const asof_join *j);
void asof_held_link(asof_join *j, struct asof_held *h);
/* Hold a left record (k, in) with release point p and answer r so far. */
void asof_hold(asof_join *j, struct asof_key *k, const struct asof_in *in, int64_t p, const struct asof_right *r,
	       int64_t revision);
/* Keep a left record whose answer (revision, match) is final as it is now (revise). */
void asof_close_now(asof_join *j, struct asof_key *k, const struct asof_in *in, const struct asof_right *r,
		    int64_t revision);
/* --order left: does a new left record of this partition have to wait? */
bool asof_oq_busy(asof_join *j, const struct asof_in *in);
/* A queue's spilled count, as a state file keeps it (asof_state_queues). */
void asof_oq_loaded(asof_join *j, int64_t match, uint64_t n);
/* A record of the engine's from a row of the state file (asof_state_unspill,
 * asof_state_closed_get): of key k, or with k NULL, of the row's key. */
struct asof_held *asof_held_from_row(asof_join *j, struct asof_key *k, const struct asof_row *r);
/* Write every held record whose answer is final (spilled ones read back). */
void asof_release_final(asof_join *j);

/* asof_match.c: the right history beyond memory (its oldest part on disk) and the
 * answers of left records from it. Calls down to asof_hist.c and asof_state.c only. */
/* Where evicted history, spilled and closed records go: the state file, or a private
 * temporary one. */
struct asof_state *asof_spill_store(asof_join *j);
/* Could the history have lost the answer for time t? (left too far out of order) */
bool asof_expired(const asof_join *j, const struct asof_key *k, int64_t t);
/* The latest record of k at or before t (strict: before), or the earliest at or after t
 * (strict: after), wherever it is. */
const struct asof_right *asof_history_backward(asof_join *j, const struct asof_key *k, int64_t t, bool strict);
const struct asof_right *asof_history_forward(asof_join *j, const struct asof_key *k, int64_t t, bool strict);
/* The buffer the history keeps a right record in: its *len bytes, or the object of its
 * known values alone (trim, when it has them all: *len then says how long), then its
 * known values (when known->n > 0), their offsets into the buffer. */
char *asof_hist_copy(const char *bytes, size_t *len, const struct asof_known *known, const struct asof_trim *trim);
/* A right record into the history (in->hist, when set, taken over); NULL when one of
 * the same key and time ranks higher. */
const struct asof_right *asof_history_put(asof_join *j, struct asof_key *k, const struct asof_in *in,
					  uint64_t seq);
/* After a record went into the history: keep memory bounded. */
void asof_history_bound(asof_join *j);
/* The history a state file gave back counts against the memory bound too. */
void asof_history_loaded(asof_join *j);
/* Keep history from the slower stream's position minus --retain, and whatever the held
 * records of this key still need. */
void asof_prune(asof_join *j, struct asof_key *k);
const struct asof_right *asof_best_match(asof_join *j, const struct asof_key *k, int64_t t);
/* The latest right event time that could still change the match of a left record at t
 * in key k: once the watermark is past it, the answer is final. */
int64_t asof_release_point(asof_join *j, const struct asof_key *k, int64_t t);
/* A right record at r can only lower a held record's release point. */
int64_t asof_release_point_after(const asof_join *j, const struct asof_held *h, int64_t r);

/* asof_emit.c: results out (--select), the --late-file, and what is said once. */
/* Marks of a result an approximation touched (chosen by a flag), and of what was said
 * once on stderr. */
enum {
	ASOF_MARK_EXPIRED = 1, /* --retain dropped its answer: "expired": true */
	ASOF_MARK_EARLY = 2,   /* written before final (--emit eager, --max-delay): "final": false */
	ASOF_MARK_LATE = 4,    /* (said only) a late right record */
};
/* Write {"left":h's record,"right":r} (r NULL: null), with "revision" unless revision < 0,
 * and the marks (ASOF_MARK_*). */
void asof_emit_held(asof_join *j, const struct asof_held *h, const struct asof_right *r, int64_t revision,
		    unsigned mark);
/* The same for a record as it was parsed: what was found ahead in it serves --select. */
void asof_emit_in(asof_join *j, const struct asof_in *in, const struct asof_right *r, int64_t revision,
		  unsigned mark);
/* Results out: the output and the late file flushed, and what the acks file says is
 * delivered read (a join's commit, or the router's with no join open). */
void asof_ctx_flush(struct asof_ctx *cx);
/* --select compiled in libjq (exit 3 if jq refuses it): at the start, unless proj.h
 * evaluates it, whose grammar is jq's; then when a result first needs libjq. */
jq_state *asof_select_jq(const char *text);
/* An approximation chosen by a flag touched a result: counted, and said on stderr the
 * first time. */
void asof_approximated(asof_join *j, unsigned mark, uint64_t line);
/* A late right record, or an expired left one: to the --late-file. */
void asof_to_late_file(asof_join *j, const struct asof_in *in);
/* A right record older than what its partition delivered: counted, to the --late-file;
 * said once. */
void asof_late(asof_join *j, const struct asof_in *in);

/* asof_router.c: the public handle (asof.h: ss_asof_new, ss_asof_end, ss_asof_summary)
 * and the join's entry points for the run: to the one join (asof_join_*), or with
 * --state-dir to the partition-join of the record's partition, or to each (asof_dir.c).
 * It calls down to the engine and never the other way. */
/* Results out and every state committed: the one join's, or each partition-join's. */
void asof_idle(ss_asof *j);
/* The counters of the whole run (every partition-join), and the records still held. */
void asof_totals(const ss_asof *j, struct asof_counters *c, size_t *held);
void asof_left(ss_asof *j, const struct asof_in *in);
/* in->hist is the join's after it (cleared here). */
void asof_right(ss_asof *j, struct asof_in *in);
void asof_right_end(ss_asof *j);
void asof_tick(ss_asof *j);
int asof_poll_timeout(const ss_asof *j);
/* The left input ended, and the right one too, or nothing waits for it. */
bool asof_done(const ss_asof *j);
/* Has this enveloped right or left record been applied, in this run or an earlier one
 * (the state's offsets)? */
bool asof_applied(ss_asof *j, const struct ss_envelope *env);
/* The right stream of this partition ended (its consumer said so): with --state-dir,
 * its held records are finished at the right end even if no record of it came in this
 * run. */
void asof_partition_ended(ss_asof *j, int32_t partition);
/* A bad record ends the run (ASOF_GOT_FATAL): held records out first, then reported;
 * exits. */
void asof_fail(ss_asof *j);

/* asof_dir.c: --state-dir, a directory of partition-joins (opened, locked, released,
 * counted) for the router; it calls the engine only. */
/* The directory at path, for the partition-joins of the run cx with the options o
 * (the router's: borrowed until asof_dir_free). Opens the partitions whose files keep
 * results of an earlier run, to write them again. */
struct asof_dir *asof_dir_open(const char *path, struct asof_ctx *cx, const struct ss_asof_opts *o);
/* Commit and release every partition-join, free the directory. */
void asof_dir_free(struct asof_dir *d);
/* The partition-join of a record of partition number partition, opened (locked, its
 * state loaded) if it was not. */
asof_join *asof_dir_route(struct asof_dir *d, int32_t partition);
void asof_dir_right_end(struct asof_dir *d);
/* Each open partition-join's tick; those silent on both inputs for --idle released
 * (until the right input ended). */
void asof_dir_tick(struct asof_dir *d);
int asof_dir_timeout(const struct asof_dir *d);
/* Does a partition-join hold left records, open or released with them? */
bool asof_dir_holds(const struct asof_dir *d);
void asof_dir_commit(struct asof_dir *d);
void asof_dir_ended(struct asof_dir *d, int32_t partition);
bool asof_dir_applied(struct asof_dir *d, const struct ss_envelope *env);
/* Counters and held records of the partition-joins, released ones' counters too. */
void asof_dir_count(const struct asof_dir *d, struct asof_counters *c, size_t *held);

/* asof_outbox.c: --acks. Write one result line (without its newline). */
void asof_out(asof_join *j, const char *line, size_t len);
/* Write the results the state kept undelivered again (a new run), first. */
void asof_outbox_resend(asof_join *j);
/* Drop the results delivered by now from the state (in the open batch). */
void asof_outbox_trim(asof_join *j);

/* asof_index.c: a right regular file indexed whole (every answer is final at once); NULL
 * when a bad record in it ends the run (ASOF_GOT_FATAL: the caller's to finish). */
struct asof_index *asof_index_build(ss_asof *j, ss_reader *r);
/* The answer for a parsed left record; buf holds what the result points to. */
const struct asof_right *asof_index_match(struct asof_index *ix, const struct ss_asof_opts *o, const struct asof_in *in,
					  struct asof_right buf[2]);
/* The answers of n parsed left records at once (their lookups overlap in memory):
 * out[r], held in buf[r]. */
void asof_index_match_batch(struct asof_index *ix, const struct ss_asof_opts *o, const struct asof_in *in, size_t n,
			    struct asof_right (*buf)[2], const struct asof_right **out);
/* The right records in the index. */
size_t asof_index_records(const struct asof_index *ix);
void asof_index_free(struct asof_index *ix);
/* The right file was indexed whole (ix) in the middle of a merge: the right stream is
 * at its end, and every held record is answered from ix (asof_held.c). */
void asof_join_indexed(asof_join *j, struct asof_index *ix);

/* asof_ahead.c: an input parsed ahead on threads (two; a pipe, one). A regular file of
 * a batch: started on a reader not read yet (or rewound), when the side's --on and --by
 * are plain paths and SS_THREADS is not 0; else NULL (the reader is read on the main
 * thread). With copy (the right file of a merge), the threads also copy each good
 * record as the history keeps it (struct asof_in hist), and free the ones j->retired
 * hands back. */
struct asof_ahead *asof_ahead_start(ss_asof *j, ss_reader *r, bool left, bool copy);
/* The same for an input of a live join, also a pipe (run_live), and for a left pipe of a
 * batch (answer_left): a live join's envelopes are read on the thread too, and with the
 * one join its right records are copied for its history there (j->one->retired set).
 * NULL as asof_ahead_start. */
struct asof_ahead *asof_ahead_live(ss_asof *j, ss_reader *r, bool left);
/* The next good record into in, as next_record reads it from the reader (bad ones
 * reported on the way, in order); ASOF_GOT_NONE at the end, ASOF_GOT_FATAL at a bad
 * one that ends the run; and for a live one ASOF_GOT_WAIT when nothing is ready until its
 * input has more: poll asof_ahead_wake_fd then. in->raw stays valid until the next call. */
enum asof_got asof_ahead_next(ss_asof *j, struct asof_ahead *a, bool left, struct asof_in *in);
/* The fd a live one's thread makes readable when it has more (after ASOF_GOT_WAIT). */
int asof_ahead_wake_fd(const struct asof_ahead *a);
/* The file offset of the line last returned, and the number of the line last read
 * (as ss_reader_offset and ss_reader_lineno). */
uint64_t asof_ahead_offset(const struct asof_ahead *a);
uint64_t asof_ahead_lineno(const struct asof_ahead *a);
/* Are the times of a regular file in order, as asof_run.c's in_order finds them (a
 * line without one skipped)? Its two halves checked at once, on two threads: true with
 * *sorted set, or false when that cannot be told so (SS_THREADS=0, a small file, --on not
 * a plain path, a line whose time only libjq can read): check it on this thread then. */
bool asof_ahead_in_order(ss_asof *j, ss_reader *r, bool left, bool *sorted);
/* Stop the thread (it may be waiting for room) and free everything; NULL is fine. */
void asof_ahead_stop(struct asof_ahead *a);

/* asof_read.c: the next good record of a regular file (parsed ahead or read here), and
 * the offset of its line. */
enum asof_got asof_next_record(ss_asof *j, ss_reader *r, bool left, struct asof_in *in);
uint64_t asof_record_offset(const ss_asof *j, const ss_reader *r, bool left);
/* Redraw the live line if one is shown and it is time: cheap per record. */
void asof_progress(ss_asof *j);

/* asof_wm.c: the partition-aware right watermark and left time. */
/* The partition, added if new, for the caller to change (the fold over them is done
 * again when next asked for). */
struct asof_part *asof_part_get(struct asof_parts *ps, const char *topic, int32_t partition);
void asof_parts_free(struct asof_parts *ps);
/* Take in what the right input's writer says about its partitions (after a refresh). */
void asof_wm_feed(asof_join *j);
/* A record of this partition was read, whether applied or not (bad, late, a replay). */
void asof_wm_seen(asof_join *j, bool left, const struct ss_envelope *env);
bool asof_wm_update(asof_join *j);
/* The right input holds nothing older than t from here on (a file known to be in time
 * order, its next record at t): left records before t are final now. */
void asof_wm_promise(asof_join *j, int64_t t);
/* Is the right watermark held back because the right partitions cannot be known? */
bool asof_wm_blind(const asof_join *j);
/* Advance the left time by a left record (its partition's, with an envelope). */
void asof_lw_left(asof_join *j, const struct asof_in *in);
/* Recompute the left time: the minimum over the left partitions not idle. */
void asof_lw_update(asof_join *j);
/* Is the right record late in its own partition? If not, advance the watermarks. */
bool asof_wm_right(asof_join *j, const struct asof_in *in);
int asof_wm_timeout(const asof_join *j);

/* asof_state.c: the --state file. Called by the engine, it calls none of lib/join/'s
 * files back: what it reads it hands over as values and rows (struct asof_state_row at
 * load, struct asof_row, the queues' counts, the kept results), pulled by the engine;
 * it writes no field of a join. */
/* path "" opens a private temporary file (for spilling without --state). */
struct asof_state *asof_state_open(const char *path);
void asof_state_close(struct asof_state *st);
/* The load is a pull: the engine (asof.c) opens the rows, reads them one by one and
 * applies each to its join itself; the state file writes none of a join's fields. */
enum asof_state_kind {
	ASOF_ROW_META,    /* a counter or time of asof_meta: maxr, lw, rseq, lid, wm */
	ASOF_ROW_PART,    /* a topic-partition of the left or right input, with the newest
			   * time it delivered */
	ASOF_ROW_HISTORY, /* a right record of the key (keylen bytes) for the history */
	ASOF_ROW_PRUNED,  /* the key's history was pruned */
	ASOF_ROW_HELD,    /* the held records, all on disk now (spilled): how many, and the
			   * oldest time among them */
};
/* A row of the load, its fields those of its kind. The strings and keys are the state
 * file's, good until the next asof_state_row_next or asof_state_rows_close; raw (HISTORY:
 * malloc'd, len bytes) is the caller's, to free or hand on (the history takes it). */
struct asof_state_row {
	enum asof_state_kind kind;
	union {
		struct { const char *name; int64_t value; } meta;
		struct { bool left; const char *topic; int32_t partition; int64_t maxt; } part;
		struct { const void *key; size_t keylen; int64_t t; uint64_t seq; char *raw; size_t len; } history;
		struct { const void *key; size_t keylen; } pruned;
		struct { uint64_t spilled; int64_t min_t; } held;
	};
};
/* The rows of st, in this order: meta, right parts, left parts, history, pruned keys,
 * held (the held records are marked spilled when their row is reached, in the open
 * batch). The iterator is the caller's: asof_state_rows_close frees it, read to the end
 * or not (NULL is fine). */
struct asof_state_rows *asof_state_rows_open(struct asof_state *st);
/* The next row into *row; false when there are no more. */
bool asof_state_row_next(struct asof_state_rows *it, struct asof_state_row *row);
void asof_state_rows_close(struct asof_state_rows *it);
/* Has this enveloped record been applied already? */
bool asof_state_seen(struct asof_state *st, const struct ss_envelope *env);
void asof_state_applied(struct asof_state *st, const struct ss_envelope *env);
void asof_state_right_put(struct asof_state *st, const struct asof_key *k, const struct asof_right *r);
/* Records r[0..n) of k, sorted by t, all newer than any stored of k (evicted from the
 * history in memory). */
void asof_state_right_evicted(struct asof_state *st, const struct asof_key *k, const struct asof_right *r,
			      size_t n);
/* Key k's stored record latest at or before t (before), or earliest at or after t, into
 * out (its raw replaced: out owns it); false if none. */
bool asof_state_right_near(struct asof_state *st, const struct asof_key *k, int64_t t, bool before,
			   struct asof_right *out);
void asof_state_right_del(struct asof_state *st, const struct asof_key *k, const struct asof_right *r);
/* Key k's history has been pruned (kept across restarts: expired() needs it). */
void asof_state_pruned(struct asof_state *st, const struct asof_key *k);
void asof_state_held_put(struct asof_state *st, const struct asof_held *h, bool spilled);
void asof_state_held_del(struct asof_state *st, const struct asof_held *h);
/* Counters and times (the names of a META row), and a topic-partition's
 * newest time, for the next load. */
void asof_state_meta(struct asof_state *st, const char *name, int64_t v);
void asof_state_part(struct asof_state *st, bool left, const char *topic, int32_t partition, int64_t maxt);
/* Revision counter of an enveloped left record (revise replays), -1 if unknown. */
int64_t asof_state_revision_get(struct asof_state *st, const struct ss_envelope *env);
void asof_state_revision_set(struct asof_state *st, const struct ss_envelope *env, int64_t rev);
void asof_state_commit(struct asof_state *st);
/* A held or closed left record as the state file gives it back: plain values, and in
 * bytes (malloc'd, the caller frees it) the key (keylen bytes), then the record (len
 * bytes). The engine makes its records of them (asof_held_from_row). */
struct asof_row {
	uint64_t id, match, line;
	int64_t t, p, since;
	uint32_t revision;
	size_t keylen, len;
	char *bytes;
};
/* --emit revise: a left record whose answer is final, kept for a late right record to
 * correct (its row is its key, time and bytes); key k's kept records with time in
 * [lo, hi] into *rows (their number returned; id, p and since 0); and the kept records
 * older than cutoff dropped. */
void asof_state_closed_put(struct asof_state *st, const struct asof_held *h);
size_t asof_state_closed_get(struct asof_state *st, const struct asof_key *k, int64_t lo, int64_t hi,
			     struct asof_row **rows);
void asof_state_closed_prune(struct asof_state *st, const struct asof_key *k, int64_t cutoff);
/* The outbox of --acks: put a result line (returns its row), drop rows up to row. */
int64_t asof_state_outbox_put(struct asof_state *st, const char *line, size_t len);
void asof_state_outbox_trim(struct asof_state *st, int64_t row);
/* Does the state file at path keep results of an earlier run not known delivered? */
bool asof_state_keeps_results(const char *path);
/* The kept rows in order, pulled one by one: line (len bytes, the state file's, good
 * until the next call) and its row. The iterator is the caller's to close. */
struct asof_state_kept *asof_state_kept_open(struct asof_state *st);
bool asof_state_kept_next(struct asof_state_kept *it, const char **line, size_t *len, int64_t *row);
void asof_state_kept_close(struct asof_state_kept *it);
enum asof_unspill { ASOF_UNSPILL_P, ASOF_UNSPILL_SINCE };
/* Take up to limit spilled records off the disk, into *rows (their number returned), with
 * since now: by ASOF_UNSPILL_P, release point <= max, in release order; by
 * ASOF_UNSPILL_SINCE, arrived at or before max. --order left: those of queue match
 * (partition + 1) with id >= from, in id order, with their arrival times; and at load,
 * each queue's spilled count, into *counts (malloc'd, the caller's; their number
 * returned). */
size_t asof_state_unspill_queue(struct asof_state *st, int64_t match, int64_t from, size_t limit,
				struct asof_row **rows);
struct asof_queue_count {
	int64_t match; /* the queue: its partition + 1 */
	uint64_t n;    /* its spilled records */
};
size_t asof_state_queues(struct asof_state *st, struct asof_queue_count **counts);
size_t asof_state_unspill(struct asof_state *st, enum asof_unspill by, int64_t max, size_t limit,
			  struct asof_row **rows);
/* Oldest event time among spilled records, ASOF_NONE if none. */
int64_t asof_state_spill_min(struct asof_state *st);
#endif
