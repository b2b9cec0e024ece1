/* store: an ordered key/value store in a SQLite file (WAL: one writer, many readers).
 * Keys are any JSON value, ordered as jq sorts them (keyenc); values are JSON text.
 * Writes are batched into transactions that also carry the applied input offsets
 * (topic, partition -> offset, the table of lib/db/offsets.h), which makes replay
 * idempotent and crash-safe at once. SQLite failures exit through lib/db/statefile.h.
 * A store handle owns its sqlite3 connection; cursors and returned strings are owned by
 * the caller as stated per function. Other modules may add tables to the same file
 * through ss_store_db(). */
#ifndef SS_STORE_H
#define SS_STORE_H
#include <jv.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "db/statefile.h"

typedef struct ss_store ss_store;
enum { SS_STORE_READONLY = 1 };
/* Open or create a state of kind (statefile.h: checked, and marked when written; "" is
 * a temporary store, without a journal). On failure: the path, the reason, and exit 75
 * (busy, locked) or 1. SS_STORE_READONLY never writes and works without write access. */
ss_store *ss_store_open(const char *path, int flags, enum ss_state_kind kind);
/* Commit any open transaction and close. */
void ss_store_close(ss_store *s);
sqlite3 *ss_store_db(ss_store *s);
const char *ss_store_path(const ss_store *s);

/* Writes join an open batch (begun on demand); commit ends it. */
void ss_store_commit(ss_store *s);
/* Open the batch now: for modules writing their own tables through ss_store_db(). */
void ss_store_begin(ss_store *s);

/* key_json: the key's canonical JSON text (for display); enc: its keyenc bytes. */
void ss_store_put_enc(ss_store *s, const char *enc, size_t enclen, const char *key_json,
		      size_t klen, const char *value, size_t vlen);
/* Hold puts back until the batch commits (or the store is read), then apply them in key
 * order, the last put of a key winning: a sweep through the key index instead of a seek
 * to a random place per put, which is what keeps a batch of keys from all over a large
 * store cheap. The caller bounds the batch (its records are held in memory until the
 * commit). True the first time. */
bool ss_store_defer_puts(ss_store *s);
/* Value of key as a malloc'd NUL-terminated string (caller frees), or NULL. */
char *ss_store_get(ss_store *s, jv key);
bool ss_store_del(ss_store *s, jv key);
int64_t ss_store_count(ss_store *s);

/* Ordered scans. from/to are inclusive bounds (jv_invalid() for none); backwards starts
 * at the last key <= from. prefix (jv_invalid() for none) limits to keys extending it. */
typedef struct ss_cursor ss_cursor;
ss_cursor *ss_store_scan(ss_store *s, jv from, jv to, jv prefix, bool backwards);
/* Next row: key and value JSON text, valid until the next call. 1 row, 0 done. */
int ss_cursor_next(ss_cursor *c, const char **key, const char **value);
/* The current row's key encoding (keyenc), for merging scans of several stores. */
const void *ss_cursor_enc(ss_cursor *c, size_t *len);
void ss_cursor_free(ss_cursor *c);

/* Retention: keep the newest n keys (by key order); delete the rest. Returns deleted. */
int64_t ss_store_retain_count(ss_store *s, int64_t n);
/* Track the event time of keys from now on: the key itself when it is a number (in unit,
 * an enum ss_tsunit) or a time string, else its last array element. Needed before puts
 * for ss_store_retain_age to see them. */
void ss_store_track_time(ss_store *s, int unit);
/* Delete every key whose tracked time is older than the newest tracked time minus age. */
int64_t ss_store_retain_age(ss_store *s, int64_t age_ns);

/* Applied offsets, in the same transaction as state changes. -1 when none. */
int64_t ss_store_offset_get(ss_store *s, const char *topic, int32_t partition);
void ss_store_offset_set(ss_store *s, const char *topic, int32_t partition, int64_t offset);
/* Idempotence guard for a record's envelope: true when its offset is not newer than the
 * applied offset of its topic-partition (a replay to skip). Answers from memory after the
 * first look-up of each partition. */
struct ss_envelope;
bool ss_store_offset_is_applied(ss_store *s, const struct ss_envelope *env);
/* Iterate all applied offsets: cb(topic, partition, offset, arg). */
void ss_store_offsets_each(ss_store *s, void (*cb)(const char *, int32_t, int64_t, void *), void *arg);
#endif
