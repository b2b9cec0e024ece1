/* sstime: event times and durations as every tool reads them (man ss.7, Event time,
 * Durations).
 * Times are int64 nanoseconds since the epoch (UTC); durations are int64 nanoseconds. */
#ifndef SS_SSTIME_H
#define SS_SSTIME_H
#include <jv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum ss_tsunit { SS_TS_S, SS_TS_MS, SS_TS_US, SS_TS_NS };
/* Parse "s", "ms", "us", "ns"; false if invalid. */
bool ss_tsunit_parse(const char *s, enum ss_tsunit *unit);
/* A duration: 250ms, 90s, 10m, 1h, 7d, 1.5h, 500us, 10ns; "0" alone is allowed. */
bool ss_duration_parse(const char *s, int64_t *ns);
/* RFC 3339 / ISO 8601: 2023-01-01T10:00:00Z, with fraction, offset (+02:00), or space
 * instead of T, or no zone (= UTC), or a date alone. */
bool ss_time_parse_text(const char *s, size_t len, int64_t *ns);
/* A time from a JSON value: number (in unit) or string (RFC 3339, or a number in a
 * string is NOT accepted). false with *why for anything else. Does not free v. */
bool ss_time_from_jv(jv v, enum ss_tsunit unit, int64_t *ns, const char **why);
/* The same from raw JSON bytes of one value (fast path: no jv). */
bool ss_time_from_raw(const char *p, size_t len, enum ss_tsunit unit, int64_t *ns, const char **why);
/* ss_time_from_raw without libjq, for threads: 1 a time, 0 not one (*why), -1 a value
 * only ss_time_from_raw can tell (an escaped string, neither a string nor a number). */
int ss_time_from_raw_nojq(const char *p, size_t len, enum ss_tsunit unit, int64_t *ns, const char **why);
/* Also accepted on the command line: a time as text, a number of seconds, or "now" and
 * relative "-1h" (now minus a duration). */
bool ss_time_parse_arg(const char *s, int64_t *ns);
/* Format as RFC 3339 UTC with the shortest exact fraction: "2023-01-01T10:00:00Z". */
void ss_time_format(int64_t ns, char *buf, size_t size);
/* Wall clock now, and monotonic now, in ns. */
int64_t ss_time_now(void);
int64_t ss_time_mono(void);
/* Monotonic now in ms (deadlines counted against librdkafka's ms timeouts). */
int64_t ss_time_mono_ms(void);
/* Sleep ms milliseconds, all of them: a signal caught meanwhile does not cut it short. */
void ss_time_sleep_ms(int ms);
#endif
