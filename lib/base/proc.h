/* proc: how a tool ends on a signal, one way for every tool (man ss.7, EXIT STATUS).
 * SIGINT and SIGTERM only set a flag, process-wide: the tool looks at it between
 * records, stops there, writes out and commits what it did, and ends with 128+N. A
 * closed pipe is an error (EPIPE) that the writer turns into SS_EXIT_PIPE, not a signal
 * that would skip the exit handlers. Nothing here allocates. */
#ifndef SS_PROC_H
#define SS_PROC_H
#include <pthread.h>
#include <stdbool.h>

/* The start of every tool's main: its name for messages (ss_diag_init), and SIGXFSZ
 * ignored. */
void ss_proc_init(const char *tool);
/* Catch SIGINT and SIGTERM. Without SA_RESTART: a wait (poll, read, sleep) is cut
 * short with EINTR, so the caller looks at the flag at once. */
void ss_proc_catch(void);
/* Ignore SIGPIPE: a write to a closed pipe fails with EPIPE instead. */
void ss_proc_ignore_pipe(void);
/* The signal caught, 0 if none. */
int ss_proc_signal(void);
/* A run's exit status: status itself, or 128+N when it is 0 and signal N was caught. */
int ss_proc_status(int status);
/* After a signal: exit 128+N, the exit handlers committing what was done. */
void ss_proc_exit_if_signalled(void);
/* May the tool start threads of its own? Not with SS_THREADS=0 (a run on one thread:
 * tests, and instruction counts of the whole work). */
bool ss_proc_threads(void);
/* Start fn(arg) on a thread with every signal blocked: signals go to the main thread,
 * which stops between records. pthread_create's error, or 0. */
int ss_proc_thread(pthread_t *th, void *(*fn)(void *), void *arg);
/* The calling thread does CPU-bound work ahead of another thread that waits for it
 * (SCHED_BATCH): woken, it does not preempt the running thread, but waits for its turn.
 * Only a hint: where the policy cannot be set, nothing changes. */
void ss_proc_thread_batch(void);
/* A lock and a wait of a tool's threads: an error is a bug, and aborts. */
void ss_proc_lock(pthread_mutex_t *mu);
void ss_proc_unlock(pthread_mutex_t *mu);
void ss_proc_wait(pthread_cond_t *cv, pthread_mutex_t *mu);
#endif
