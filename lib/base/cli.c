/* cli: see cli.h. */
#include "base/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

void
ss_cli_bad_value(const char *usage, const char *opt, const char *arg, const char *what)
{
	ss_diag_usage_error(usage, "%s %s: expected %s", opt, *arg != '\0' ? arg : "''", what);
}

int64_t
ss_cli_duration(const char *usage, const char *opt, const char *arg, bool positive)
{
	int64_t ns;

	if (!ss_duration_parse(arg, &ns) || ns < 0 || (positive && ns == 0))
		ss_cli_bad_value(usage, opt, arg,
		    positive ? "a duration above zero, such as " SS_CLI_DURATIONS : "a duration such as " SS_CLI_DURATIONS);
	return ns;
}

int64_t
ss_cli_count(const char *usage, const char *opt, const char *arg, int64_t min, int64_t max)
{
	char *end, what[80];
	long long n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (*arg != '\0' && *end == '\0' && errno == 0 && n >= min && n <= max)
		return n;
	if (max == INT64_MAX)
		snprintf(what, sizeof what, "a whole number, %" PRId64 " or more", min);
	else
		snprintf(what, sizeof what, "a whole number from %" PRId64 " to %" PRId64, min, max);
	ss_cli_bad_value(usage, opt, arg, what);
}

/* "a, b or c" of names, into out (cut short if it does not fit). */
static void
list_names(char *out, size_t size, const char *const *names)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; names[i] != NULL && len < size; i++) {
		const char *sep = i == 0 ? "" : names[i + 1] == NULL ? " or " : ", ";
		int n = snprintf(out + len, size - len, "%s%s", sep, names[i]);
		len += n > 0 ? (size_t)n : 0;
	}
}

int
ss_cli_choice(const char *usage, const char *opt, const char *arg, const char *const *names)
{
	char what[256];

	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	list_names(what, sizeof what, names);
	ss_cli_bad_value(usage, opt, arg, what);
}

enum ss_tsunit
ss_cli_tsunit(const char *usage, const char *opt, const char *arg)
{
	enum ss_tsunit unit;

	if (!ss_tsunit_parse(arg, &unit))
		ss_cli_bad_value(usage, opt, arg, "s, ms, us or ns");
	return unit;
}

int64_t
ss_cli_time(const char *usage, const char *opt, const char *arg)
{
	int64_t ns;

	if (!ss_time_parse_arg(arg, &ns))
		ss_cli_bad_value(usage, opt, arg, "a time such as 2023-01-01T10:00:00Z, 1672567200, now or -1h");
	return ns;
}
