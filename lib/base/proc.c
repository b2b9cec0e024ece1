#include "base/proc.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

_Static_assert(SS_EXIT_PIPE == 128 + SIGPIPE, "SS_EXIT_PIPE is what a shell says of SIGPIPE");

static volatile sig_atomic_t caught;

static void
on_signal(int sig)
{
	caught = sig;
}

void
ss_proc_catch(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void
ss_proc_ignore_pipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

int
ss_proc_signal(void)
{
	return caught;
}

int
ss_proc_status(int status)
{
	return status == 0 && caught ? ss_exit_signal(caught) : status;
}

void
ss_proc_exit_if_signalled(void)
{
	if (caught)
		ss_diag_exit(ss_exit_signal(caught));
}

void
ss_proc_init(const char *tool)
{
	ss_diag_init(tool);
	/* Past RLIMIT_FSIZE a write should fail with EFBIG and a message (SQLite reports it),
	 * not kill the tool by signal before its exit handlers run. */
	signal(SIGXFSZ, SIG_IGN);
}

bool
ss_proc_threads(void)
{
	const char *env = getenv("SS_THREADS");

	return env == NULL || strcmp(env, "0") != 0;
}

int
ss_proc_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

void
ss_proc_thread_batch(void)
{
	struct sched_param none = {0};

	(void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
}

void
ss_proc_lock(pthread_mutex_t *mu)
{
	if (pthread_mutex_lock(mu) != 0)
		abort();
}

void
ss_proc_unlock(pthread_mutex_t *mu)
{
	if (pthread_mutex_unlock(mu) != 0)
		abort();
}

void
ss_proc_wait(pthread_cond_t *cv, pthread_mutex_t *mu)
{
	if (pthread_cond_wait(cv, mu) != 0)
		abort();
}
