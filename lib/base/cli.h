/* cli: option values of one type parsed the same way by every tool. A bad value is a
 * usage error (exit 2) said in one form, "ss-TOOL: OPT VALUE: expected WHAT", followed
 * by the usage. The caller owns every string it passes; nothing is kept. */
#ifndef SS_CLI_H
#define SS_CLI_H
#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "base/sstime.h"

/* The usage error for a value of OPT that is not what it takes: "OPT VALUE: expected
 * WHAT" (an empty value shows as ''). */
noreturn void ss_cli_bad_value(const char *usage, const char *opt, const char *arg, const char *what);

/* Examples of durations, for messages. */
#define SS_CLI_DURATIONS "250ms, 90s, 10m, 1h, 7d"

/* A duration ("250ms", "90s", "1h30m", "0"), in ns; above zero when positive is set. */
int64_t ss_cli_duration(const char *usage, const char *opt, const char *arg, bool positive);

/* A whole number from min to max (decimal, nothing after it). */
int64_t ss_cli_count(const char *usage, const char *opt, const char *arg, int64_t min, int64_t max);

/* The index of arg in names (a NULL-terminated list); otherwise "expected a, b or c". */
int ss_cli_choice(const char *usage, const char *opt, const char *arg, const char *const *names);

/* A point in time (ss_time_parse_arg: RFC 3339, seconds, "now", "-1h"), in ns. */
int64_t ss_cli_time(const char *usage, const char *opt, const char *arg);

/* --ts-unit: s, ms, us or ns. */
enum ss_tsunit ss_cli_tsunit(const char *usage, const char *opt, const char *arg);
#endif
