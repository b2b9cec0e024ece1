/* statedir: one state file per Kafka topic-partition in a directory, so that ownership of
 * a partition can move between instances (on one host) with its state: DIR/TOPIC-P.db.
 * The statedir owns the stores it opens; ss_statedir_close commits and closes them all. */
#ifndef SS_STATEDIR_H
#define SS_STATEDIR_H
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

typedef struct ss_statedir ss_statedir;
/* Create DIR if needed (not with SS_STORE_READONLY). Exits 1 when it cannot. */
ss_statedir *ss_statedir_open(const char *dir, int flags);
/* The store of one topic-partition, opened (and created) on first use. */
ss_store *ss_statedir_store(ss_statedir *d, const char *topic, int32_t partition);
/* Open every existing partition file (for readers); returns how many there are. */
size_t ss_statedir_open_all(ss_statedir *d);
size_t ss_statedir_count(const ss_statedir *d);
ss_store *ss_statedir_at(ss_statedir *d, size_t i);
void ss_statedir_commit_all(ss_statedir *d);
void ss_statedir_close(ss_statedir *d);
#endif
