/* ckpt: a state file's WAL checkpointed by a thread of its own, on a connection of its
 * own, so that the writer does not stop for the copy into the database file and its
 * two fsyncs. Nothing changes for what is committed or when: a commit is the same
 * append to the WAL, a checkpoint only copies committed pages (SQLite's PASSIVE mode,
 * which never blocks the writer), and the writer's close still checkpoints the rest.
 * The writer's connection db stays the caller's; the checkpointer owns its thread and
 * connection. */
#ifndef SS_CKPT_H
#define SS_CKPT_H
#include <sqlite3.h>

typedef struct ss_ckpt ss_ckpt;
/* Take over the checkpoints of db (open on path, in WAL mode) from its commits: NULL,
 * and db keeps checkpointing itself, under SS_THREADS=0, for a temporary database, or
 * when the thread or its connection cannot start. */
ss_ckpt *ss_ckpt_start(sqlite3 *db, const char *path);
/* Finish the checkpoint under way, end the thread, close its connection, and give the
 * checkpoints back to db (which checkpoints what is left when it closes). NULL: nothing. */
void ss_ckpt_stop(ss_ckpt *c);
#endif
