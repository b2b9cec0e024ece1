/* diag: diagnostics and exit codes, one table for every tool (see ss(7)).
 * Messages go to stderr prefixed "ss-TOOL: ". Nothing here allocates for the caller. */
#ifndef SS_DIAG_H
#define SS_DIAG_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdnoreturn.h>

enum ss_exit {
	SS_EXIT_OK = 0,
	SS_EXIT_DATA = 1,      /* bad input record, failed write */
	SS_EXIT_USAGE = 2,     /* bad command line */
	SS_EXIT_EXPR = 3,      /* jq expression does not compile */
	SS_EXIT_NOPERM = 77,   /* not permitted: authentication or authorization (ACL) failed */
	SS_EXIT_TEMPFAIL = 75, /* broker or database unavailable: retry later */
	SS_EXIT_NOEXEC = 127,  /* a hook command that could not be run (as sh says) */
	SS_EXIT_PIPE = 141,    /* the reader of stdout went away (EPIPE): 128 + SIGPIPE */
};
/* Ended by signal sig: 128 + sig, as a shell reports a process the signal killed. */
static inline int
ss_exit_signal(int sig)
{
	return 128 + sig;
}

/* Set the tool name used as message prefix ("ss-cache"). Call first in main. */
void ss_diag_init(const char *tool);
const char *ss_diag_tool(void);
void ss_diag_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the message and exit with code; atexit handlers run (so state commits). */
noreturn void ss_diag_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Exit with code, the exit handlers committing state. Every exit that may come while
 * they run (a write failing in their flush) comes here: one already under way ends
 * the process at once with the new code (_exit, after stdio is flushed), where a
 * second exit() would be undefined. */
noreturn void ss_diag_exit(int code);
/* True once ss_diag_die has begun: what other threads would add after the one line
 * that ends the run (librdkafka's log while the client is torn down) is left unsaid. */
bool ss_diag_dying(void);
/* Call hook(code) in ss_diag_die before the exit handlers: for what must know the
 * exit status (ss-consume tells its reader how it ended). One hook; NULL clears it. */
void ss_diag_on_die(void (*hook)(int code));
/* Call hook() before each message (a live progress line takes itself back). NULL clears. */
void ss_diag_on_message(void (*hook)(void));
/* Usage error: reason, then the usage text, on stderr; exit 2. */
noreturn void ss_diag_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After getopt_long returned '?' (ss_diag_init turned getopt's own message off): what
 * was wrong with argv's last option — unknown, or its value missing — then the usage,
 * exit 2. optstring is the one given to getopt_long; command (or NULL) a subcommand's
 * name to put first. */
noreturn void ss_diag_bad_option(const char *usage, char *const argv[], const char *optstring,
    const char *command);
/* Checked malloc family: exit 1 on out of memory. */
void *ss_xmalloc(size_t n);
void *ss_xrealloc(void *p, size_t n);
char *ss_xstrdup(const char *s);
#endif
