/* ckpt: checkpoints on a thread of their own (see ckpt.h). */
#include "db/ckpt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/proc.h"

/* SQLite's own threshold (wal_autocheckpoint): a checkpoint once the WAL holds this many
 * frames after a commit, so the WAL grows no larger than it did. */
#define CKPT_FRAMES 1000

struct ss_ckpt {
	sqlite3 *writer, *db; /* the writer's connection; the checkpointer's */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool wanted, stop, failed;
};

/* A failed checkpoint (I/O error, full disk) is left as SQLite leaves its automatic
 * ones: the pages stay in the WAL, the writer's next commit says what is wrong. Only
 * this thread gives up, and the writer checkpoints at its commits again. */
static void *
run(void *arg)
{
	ss_ckpt *c = arg;

	ss_proc_lock(&c->mu);
	for (;;) {
		while (!c->wanted && !c->stop)
			ss_proc_wait(&c->cv, &c->mu);
		if (c->stop)
			break;
		c->wanted = false;
		ss_proc_unlock(&c->mu);
		int rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		ss_proc_lock(&c->mu);
		if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) {
			c->failed = true;
			break;
		}
	}
	ss_proc_unlock(&c->mu);
	return NULL;
}

/* The writer's WAL hook, after each commit, on the writer's thread. */
static int
committed(void *arg, sqlite3 *db, const char *name, int frames)
{
	ss_ckpt *c = arg;
	bool failed;

	(void)name;
	ss_proc_lock(&c->mu);
	failed = c->failed;
	if (frames >= CKPT_FRAMES && !failed) {
		c->wanted = true;
		pthread_cond_signal(&c->cv);
	}
	ss_proc_unlock(&c->mu);
	if (failed) /* checkpointed here, as without the thread */
		sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

/* The checkpointer's connection, in WAL mode already read (a checkpoint on a connection
 * that has not looked at the file yet does nothing), or NULL. */
static sqlite3 *
open_db(const char *path)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
	    sqlite3_exec(db, "PRAGMA synchronous=NORMAL; SELECT count(*) FROM sqlite_master",
			 NULL, NULL, NULL) == SQLITE_OK)
		return db;
	sqlite3_close(db);
	return NULL;
}

ss_ckpt *
ss_ckpt_start(sqlite3 *writer, const char *path)
{
	if (!ss_proc_threads() || *path == '\0')
		return NULL;
	ss_ckpt *c = calloc(1, sizeof *c);
	if (c == NULL || (c->db = open_db(path)) == NULL) {
		free(c);
		return NULL;
	}
	c->writer = writer;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if (ss_proc_thread(&c->th, run, c) != 0) {
		sqlite3_close(c->db);
		free(c);
		return NULL;
	}
	sqlite3_wal_hook(writer, committed, c); /* replaces the automatic checkpoints */
	return c;
}

void
ss_ckpt_stop(ss_ckpt *c)
{
	if (c == NULL)
		return;
	ss_proc_lock(&c->mu);
	c->stop = true;
	pthread_cond_signal(&c->cv);
	ss_proc_unlock(&c->mu);
	pthread_join(c->th, NULL);
	sqlite3_close(c->db);
	sqlite3_wal_autocheckpoint(c->writer, CKPT_FRAMES);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
