#include "base/sstime.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000LL

bool
ss_tsunit_parse(const char *s, enum ss_tsunit *unit)
{
	static const char *names[] = {"s", "ms", "us", "ns"};

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*unit = (enum ss_tsunit)i;
			return true;
		}
	return false;
}

static int64_t
unit_ns(const char *u, size_t n)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", NS_PER_S},
		     {"m", 60 * NS_PER_S}, {"h", 3600 * NS_PER_S}, {"d", 86400 * NS_PER_S}};

	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
			return units[i].ns;
	return 0;
}

/* One or more NUMBER UNIT pairs: "90s", "1.5h", "1h30m". */
bool
ss_duration_parse(const char *s, int64_t *ns)
{
	double total = 0;

	if (strcmp(s, "0") == 0) {
		*ns = 0;
		return true;
	}
	if (*s == '\0')
		return false;
	while (*s) {
		char *e;
		if (*s < '0' || *s > '9')
			return false;
		double v = strtod(s, &e);
		const char *u = e;
		while (*e >= 'a' && *e <= 'z')
			e++;
		int64_t mult = unit_ns(u, (size_t)(e - u));
		if (mult == 0)
			return false;
		total += v * (double)mult;
		s = e;
	}
	if (total > 9.2e18)
		return false;
	*ns = (int64_t)llround(total);
	return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool
digits(const char *p, const char *end, int n, int *out)
{
	int v = 0;

	if (end - p < n)
		return false;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

static bool
leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool
parse_zone(const char *p, const char *end, int64_t *offset_s)
{
	int hh, mm;

	*offset_s = 0;
	if (p == end)
		return true; /* no zone: UTC */
	if ((*p == 'Z' || *p == 'z') && p + 1 == end)
		return true;
	if (*p != '+' && *p != '-')
		return false;
	int sign = *p++ == '-' ? -1 : 1;
	if (!digits(p, end, 2, &hh))
		return false;
	p += 2;
	if (p < end && *p == ':')
		p++;
	if (!digits(p, end, 2, &mm) || p + 2 != end || hh > 23 || mm > 59)
		return false;
	*offset_s = sign * (hh * 3600 + mm * 60);
	return true;
}

bool
ss_time_parse_text(const char *p, size_t len, int64_t *ns)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *end = p + len;
	int y, mo, d, h = 0, mi = 0, s = 0;
	int64_t frac = 0, offset;

	if (!digits(p, end, 4, &y) || len < 10 || p[4] != '-' || !digits(p + 5, end, 2, &mo) ||
	    p[7] != '-' || !digits(p + 8, end, 2, &d))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return false;
	p += 10;
	if (p < end && (*p == 'T' || *p == 't' || *p == ' ')) {
		if (!digits(p + 1, end, 2, &h) || end - p < 6 || p[3] != ':' || !digits(p + 4, end, 2, &mi))
			return false;
		p += 6;
		if (p < end && *p == ':') {
			if (!digits(p + 1, end, 2, &s))
				return false;
			p += 3;
			if (p < end && (*p == '.' || *p == ',')) {
				int n = 0;
				p++;
				for (; p < end && *p >= '0' && *p <= '9'; p++, n++)
					if (n < 9)
						frac = frac * 10 + (*p - '0');
				if (n == 0)
					return false;
				for (; n < 9; n++)
					frac *= 10;
			}
		}
		if (h > 23 || mi > 59 || s > 60)
			return false;
	}
	if (!parse_zone(p, end, &offset))
		return false;
	if (y < 1677 || y > 2262)
		return false;
	/* int64 nanoseconds reach 1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z;
	 * borrow a second before multiplying so the lowest instants do not overflow */
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
	if (secs < 0 && frac > 0) {
		secs++;
		frac -= NS_PER_S;
	}
	return !__builtin_mul_overflow(secs, NS_PER_S, ns) && !__builtin_add_overflow(*ns, frac, ns);
}

/* Out of range in this unit; a finer unit that would fit is most likely the one meant
 * (Kafka's timestamps count milliseconds), and said. */
static const char *
out_of_range(double v, enum ss_tsunit unit)
{
	static const char *const hint[] = {
		"time out of range",
		"time out of range in seconds: if it counts milliseconds (as Kafka's timestamps do), "
		"use --ts-unit ms",
		"time out of range in seconds: if it counts microseconds, use --ts-unit us",
		"time out of range in seconds: if it counts nanoseconds, use --ts-unit ns",
	};
	static const double scale[] = {1e9, 1e6, 1e3, 1};

	if (unit != SS_TS_S || !isfinite(v))
		return hint[0];
	for (int u = SS_TS_MS; u <= SS_TS_NS; u++)
		if (fabs(v * scale[u]) <= 9.2e18)
			return hint[u];
	return hint[0];
}

static bool
number_to_ns(double v, enum ss_tsunit unit, int64_t *ns, const char **why)
{
	static const int64_t scale[] = {1000000000, 1000000, 1000, 1};
	double x = v * (double)scale[unit], whole;

	if (!isfinite(x) || fabs(x) > 9.2e18) {
		*why = out_of_range(v, unit);
		return false;
	}
	/* Whole units in integers: v * 1e6 in doubles would turn the millisecond Kafka
	 * timestamp 1672567399999 into ...999000064 ns (doubles have 53 bits). */
	double frac = modf(v, &whole);
	*ns = (int64_t)whole * scale[unit] + llround(frac * (double)scale[unit]);
	return true;
}

/* number_to_ns of a whole number, in integers only (no modf, no rounding: there is no
 * fraction); false where number_to_ns would say it is out of range, for it to say so. */
static bool
whole_to_ns(int64_t v, enum ss_tsunit unit, int64_t *ns)
{
	static const int64_t scale[] = {1000000000, 1000000, 1000, 1};

	if (fabs((double)v * (double)scale[unit]) > 9.2e18)
		return false;
	*ns = v * scale[unit];
	return true;
}

/* Eight ASCII digits in the word v (the first in its low byte) as their value, or -1 when
 * one of them is not a digit: SWAR (the well-known three-multiply form), as the per-digit
 * loop's chain of multiplies was 4% of a join's CPU on epoch-millisecond times (13
 * digits, wide shape, perf). */
static inline __attribute__((always_inline)) int64_t
digits_word(uint64_t v)
{
	/* each byte 0x30..0x39: its high nibble 3, and adding 6 does not carry out of it */
	if ((v & 0xF0F0F0F0F0F0F0F0u) != 0x3030303030303030u ||
	    ((v + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) != 0x3030303030303030u)
		return -1;
	v -= 0x3030303030303030u;
	v = (v * 10) + (v >> 8); /* pairs of digits */
	v = (((v & 0x000000FF000000FFu) * (100 + (1000000ull << 32))) +
	     (((v >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32)))) >> 32;
	return (int64_t)v;
}

/* The eight ASCII digits at p (little-endian: p[0] in the low byte). */
static inline int64_t
eight_digits(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return digits_word(v);
}

/* The last n (1 to 7) of the eight ASCII digits at p: the first 8 - n bytes read as '0'. */
static inline int64_t
last_digits(const char *p, size_t n)
{
	uint64_t v, low = ~0ull >> (8 * n); /* the bytes before them (p[0] is the low byte) */

	memcpy(&v, p, 8);
	return digits_word((v & ~low) | (0x3030303030303030u & low));
}

/* A plain integer of at most 15 digits: exact as a double, so this gives what strtod
 * would, without its cost on the hot path (most event times are such integers). Past
 * eight digits, the rest are the last eight read again, those already read masked (a
 * loop over them was 55 of 142 instructions on epoch-millisecond times). */
static bool
small_integer(const char *p, size_t len, int64_t *v)
{
	static const int64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
	size_t i = p[0] == '-';
	int64_t x = 0, y;

	if (len - i == 0 || len - i > 15)
		return false;
	if (len - i >= 8) {
		if ((x = eight_digits(p + i)) < 0)
			return false;
		size_t rest = len - i - 8;
		if (rest > 0) {
			if ((y = last_digits(p + len - 8, rest)) < 0)
				return false;
			x = x * pow10[rest] + y;
		}
		i = len;
	}
	for (; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		x = x * 10 + (p[i] - '0');
	}
	*v = p[0] == '-' ? -x : x;
	return true;
}

bool
ss_time_from_jv(jv v, enum ss_tsunit unit, int64_t *ns, const char **why)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_NUMBER:
		return number_to_ns(jv_number_value(v), unit, ns, why);
	case JV_KIND_STRING: {
		const char *s = jv_string_value(v);
		if (ss_time_parse_text(s, (size_t)jv_string_length_bytes(jv_copy(v)), ns))
			return true;
		*why = "not an RFC 3339 time";
		return false;
	}
	case JV_KIND_NULL:
		*why = "time is null (missing?)";
		return false;
	default:
		*why = "time is neither a number nor a string";
		return false;
	}
}

int
ss_time_from_raw_nojq(const char *p, size_t len, enum ss_tsunit unit, int64_t *ns, const char **why)
{
	if (len >= 2 && p[0] == '"' && memchr(p, '\\', len) == NULL) {
		if (ss_time_parse_text(p + 1, len - 2, ns))
			return 1;
		*why = "not an RFC 3339 time";
		return 0;
	}
	if (len > 0 && (p[0] == '-' || (p[0] >= '0' && p[0] <= '9')) && len < 64) {
		int64_t whole;
		if (small_integer(p, len, &whole))
			return whole_to_ns(whole, unit, ns) || number_to_ns((double)whole, unit, ns, why);
		char tmp[64];
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		return number_to_ns(strtod(tmp, NULL), unit, ns, why);
	}
	return -1;
}

bool
ss_time_from_raw(const char *p, size_t len, enum ss_tsunit unit, int64_t *ns, const char **why)
{
	int rc = ss_time_from_raw_nojq(p, len, unit, ns, why);

	if (rc >= 0)
		return rc;
	jv v = jv_parse_sized(p, (int)len);
	bool ok = ss_time_from_jv(v, unit, ns, why);
	jv_free(v);
	return ok;
}

bool
ss_time_parse_arg(const char *s, int64_t *ns)
{
	int64_t d;
	char *e;

	if (strcmp(s, "now") == 0) {
		*ns = ss_time_now();
		return true;
	}
	if ((s[0] == '-' || s[0] == '+') && ss_duration_parse(s + 1, &d)) {
		*ns = ss_time_now() + (s[0] == '-' ? -d : d);
		return true;
	}
	if (ss_time_parse_text(s, strlen(s), ns))
		return true;
	double v = strtod(s, &e);
	const char *why;
	return *s && *e == '\0' && number_to_ns(v, SS_TS_S, ns, &why);
}

void
ss_time_format(int64_t ns, char *buf, size_t size)
{
	int64_t secs = ns / NS_PER_S, frac = ns % NS_PER_S;
	struct tm tm;

	if (frac < 0) {
		frac += NS_PER_S;
		secs--;
	}
	time_t t = (time_t)secs;
	gmtime_r(&t, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac) {
		char f[16];
		snprintf(f, sizeof f, ".%09lld", (long long)frac);
		for (int i = 9; f[i] == '0'; i--)
			f[i] = '\0';
		snprintf(buf + n, size - n, "%sZ", f);
	} else
		snprintf(buf + n, size - n, "Z");
}

int64_t
ss_time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t
ss_time_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t
ss_time_mono_ms(void)
{
	return ss_time_mono() / 1000000;
}

void
ss_time_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}
