/* offsets: the applied input offsets of a state file, the table ss_offsets(topic,
 * partition, offset): for each topic-partition, the offset of the last record whose
 * effect the file holds. Written in the same transaction as that effect, so a replay
 * after a crash skips exactly what was applied; ss-consume --offsets-from starts after
 * them. An ss-cache or ss-asof state (lib/db/store.c) and an ss-checkpoint state
 * (lib/checkpoint/) hold one; the table is defined here only.
 * The caller owns the connection and its transactions; an ss_offsets handle owns the
 * statements it prepares (ss_offsets_free), and borrows db and path. */
#ifndef SS_OFFSETS_H
#define SS_OFFSETS_H
#include <sqlite3.h>
#include <stdint.h>

/* Create the table when missing; path as for ss_statefile_die. */
void ss_offsets_create(sqlite3 *db, const char *path);

struct ss_offsets {
	sqlite3 *db;
	const char *path;
	sqlite3_stmt *get, *put; /* prepared on first use */
};
void ss_offsets_init(struct ss_offsets *o, sqlite3 *db, const char *path);
void ss_offsets_free(struct ss_offsets *o);
/* The applied offset of topic-partition, -1 when none. */
int64_t ss_offsets_get(struct ss_offsets *o, const char *topic, int32_t partition);
void ss_offsets_put(struct ss_offsets *o, const char *topic, int32_t partition,
		    int64_t offset);
/* cb(topic, partition, offset, arg) for each, in topic-partition order; none when the
 * table is missing (a file another process has only begun to create). */
void ss_offsets_each(sqlite3 *db, const char *path,
		     void (*cb)(const char *topic, int32_t partition, int64_t offset, void *arg),
		     void *arg);
#endif
