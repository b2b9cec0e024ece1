/* calltrace-hook: the hooks of gcc's -finstrument-functions for the trace variant
 * (make TRACE=1, build/trace/), used by scripts/calltrace. Every instrumented function
 * (lib/ and cmd/) calls __cyg_profile_func_enter on entry and __cyg_profile_func_exit
 * on return; with SS_CALLTRACE=FILE in the environment each appends a line
 *
 *     E|X THREAD-ID FUNCTION-ADDRESS
 *
 * to FILE (one write(2) each, O_APPEND: lines of threads do not mix, and a run that ends
 * in exit() or a signal loses none). Without SS_CALLTRACE the tools run as usual. The
 * trace variant links without PIE, so the addresses are those of `nm build/trace/bin/…`;
 * scripts/calltrace.py maps them to files and counts the calls that climb. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOTRACE __attribute__((no_instrument_function))

void __cyg_profile_func_enter(void *fn, void *site) NOTRACE;
void __cyg_profile_func_exit(void *fn, void *site) NOTRACE;

static int trace_fd = -2; /* -2: not opened yet, -1: no trace */
static _Thread_local int inside; /* no trace of what the hook itself runs */

static NOTRACE void
trace(char what, void *fn)
{
	char line[64];
	int n;

	if (inside)
		return;
	inside = 1;
	if (trace_fd == -2) { /* first call: main thread, before any other starts */
		const char *path = getenv("SS_CALLTRACE");
		trace_fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	}
	if (trace_fd >= 0) {
		n = snprintf(line, sizeof line, "%c %ld %#lx\n", what, (long)gettid(), (unsigned long)(uintptr_t)fn);
		if (write(trace_fd, line, (size_t)n) != n)
			trace_fd = -1;
	}
	inside = 0;
}

void
__cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	trace('E', fn);
}

void
__cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	trace('X', fn);
}
