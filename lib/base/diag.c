#include "base/diag.h"

#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *tool_name = "ss";

void
ss_diag_init(const char *tool)
{
	tool_name = tool;
	opterr = 0; /* getopt's own message has argv[0], not "ss-TOOL: ": ss_diag_bad_option */
}

const char *
ss_diag_tool(void)
{
	return tool_name;
}

static void (*message_hook)(void);

void
ss_diag_on_message(void (*hook)(void))
{
	message_hook = hook;
}

static void
vmessage(const char *fmt, va_list ap)
{
	if (message_hook != NULL)
		message_hook();
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
ss_diag_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

static void (*die_hook)(int code);
static atomic_bool dying; /* read by other threads (librdkafka's log callback) */

bool
ss_diag_dying(void)
{
	return atomic_load(&dying);
}

void
ss_diag_on_die(void (*hook)(int code))
{
	die_hook = hook;
}

void
ss_diag_exit(int code)
{
	static volatile sig_atomic_t exiting;

	if (exiting) {
		fflush(NULL);
		_exit(code);
	}
	exiting = 1;
	exit(code);
}

void
ss_diag_die(int code, const char *fmt, ...)
{
	va_list ap;

	atomic_store(&dying, true);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (die_hook != NULL) {
		void (*hook)(int) = die_hook;
		die_hook = NULL; /* a failure inside the hook must not come back to it */
		hook(code);
	}
	ss_diag_exit(code);
}

void
ss_diag_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputs(usage, stderr);
	exit(SS_EXIT_USAGE);
}

void
ss_diag_bad_option(const char *usage, char *const argv[], const char *optstring, const char *command)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const char *pre = command != NULL ? command : "", *sep = command != NULL ? ": " : "";
	bool is_long = strncmp(arg, "--", 2) == 0;

	/* getopt_long returned '?': optopt is 0 for an unknown long option, the option's
	 * value when its argument is missing, the letter of a short one */
	if (is_long && optopt != 0 && strchr(arg, '=') != NULL)
		ss_diag_usage_error(usage, "%s%s%.*s takes no value", pre, sep,
		    (int)(strchr(arg, '=') - arg), arg);
	if (is_long && optopt != 0)
		ss_diag_usage_error(usage, "%s%s%s needs a value", pre, sep, arg);
	if (is_long || optopt == 0)
		ss_diag_usage_error(usage, "%s%sunknown option %s", pre, sep, arg);
	if (strchr(optstring, optopt) != NULL)
		ss_diag_usage_error(usage, "%s%s-%c needs a value", pre, sep, optopt);
	ss_diag_usage_error(usage, "%s%sunknown option -%c", pre, sep, optopt);
}

void *
ss_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	return p;
}

void *
ss_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		ss_diag_die(SS_EXIT_DATA, "out of memory");
	return p;
}

char *
ss_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(ss_xmalloc(n), s, n);
}
