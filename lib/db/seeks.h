/* seeks: seek requests from ss-checkpoint pulse to the ss-consume --checkpoint that reads
 * its dependent stream, in the table ss_seek_request(checkpoint, topic, partition,
 * offset) of the checkpoint's state file (lib/checkpoint/checkpoint.h): at a recovery, pulse asks
 * for each partition to be read again from the offset saved at the downtime. The table
 * is defined here only. Pulse writes requests inside its own transaction and status
 * lists them, on connections they own; ss_seeks_take opens the file itself, so that
 * ss-consume needs nothing of the checkpoint's. Errors of the functions on a caller's
 * connection exit through ss_statefile_die (path as there). */
#ifndef SS_SEEKS_H
#define SS_SEEKS_H
#include <sqlite3.h>
#include <stdint.h>

/* Create the table when missing. */
void ss_seeks_create(sqlite3 *db, const char *path);
/* Request that checkpoint's reader read topic-partition again from offset (replacing an
 * earlier request for it). */
void ss_seeks_put(sqlite3 *db, const char *path, const char *checkpoint, const char *topic,
		  int32_t partition, int64_t offset);
/* cb for each pending request of checkpoint, in topic-partition order. */
void ss_seeks_each(sqlite3 *db, const char *path, const char *checkpoint,
		   void (*cb)(const char *topic, int32_t partition, int64_t offset, void *arg),
		   void *arg);
/* Take the pending seek requests of a checkpoint: calls cb for each (offset = the first
 * offset to re-read) and deletes them, in one transaction, so a request is acted on at
 * least once. Returns the count, 0 when the file or the table does not exist yet, -1
 * when the database is busy (try again later): never exits. Cheap enough to call every
 * ~200 ms. */
int ss_seeks_take(const char *db_path, const char *checkpoint,
		  void (*cb)(const char *topic, int32_t partition, int64_t offset, void *arg),
		  void *arg);
#endif
