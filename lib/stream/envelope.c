#include "stream/envelope.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/jscan.h"

/* (compiled once, by whichever thread asks first: a join reads envelopes on its parsing
 * threads too) */
static struct ss_jpath *topic_path, *partition_path, *offset_path;
static pthread_once_t paths_once = PTHREAD_ONCE_INIT;

static void
compile_paths(void)
{
	topic_path = ss_jpath_parse(".topic");
	partition_path = ss_jpath_parse(".partition");
	offset_path = ss_jpath_parse(".offset");
}

static bool
find(const struct ss_jpath *path, const char *raw, size_t len, const char **vs, size_t *vlen)
{
	const char *ve;
	bool type_error;

	if (!ss_jpath_find(path, raw, raw + len, vs, &ve, &type_error))
		return false;
	*vlen = (size_t)(ve - *vs);
	return true;
}

/* A non-negative integer written plainly (no fraction, no exponent). */
static bool
integer(const char *p, size_t n, int64_t max, int64_t *out)
{
	int64_t v = 0;

	if (n == 0 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9' || v > (max - (p[i] - '0')) / 10)
			return false; /* not a digit, or beyond max (19 digits overflow int64) */
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

bool
ss_envelope_get(const char *raw, size_t len, struct ss_envelope *env)
{
	const char *v;
	size_t n;
	int64_t part;

	while (len && (*raw == ' ' || *raw == '\t'))
		raw++, len--;
	if (len == 0 || *raw != '{' || memmem(raw, len, "\"partition\"", 11) == NULL)
		return false; /* the common case of a record without an envelope, cheaply */
	pthread_once(&paths_once, compile_paths);
	if (!find(topic_path, raw, len, &v, &n) || n < 3 || v[0] != '"' ||
	    n - 2 >= sizeof env->topic || memchr(v, '\\', n))
		return false;
	memcpy(env->topic, v + 1, n - 2);
	env->topic[n - 2] = '\0';
	if (!find(partition_path, raw, len, &v, &n) || !integer(v, n, INT32_MAX, &part))
		return false;
	env->partition = (int32_t)part;
	return find(offset_path, raw, len, &v, &n) && integer(v, n, INT64_MAX, &env->offset);
}

/* Can one of these top-level keys be "partition"? A key written plainly is compared. One
 * with an escape is not decoded here: it may be one if it is longer than 11 bytes (an
 * escape takes two bytes or more for one character, so 11 bytes with one decode to
 * fewer than 9). */
static bool
partition_key_possible(const struct ss_jmember *m, size_t nm)
{
	for (size_t i = 0; i < nm; i++) {
		size_t kl = (size_t)(m[i].keyend - m[i].key);
		if (kl == 11 ? memcmp(m[i].key, "\"partition\"", 11) == 0
			     : kl > 11 && memchr(m[i].key, '\\', kl) != NULL)
			return true;
	}
	return false;
}

/* ss_envelope_get's memmem reads the whole record, which on records of a few hundred
 * bytes without an envelope was 4% of a live join's time (perf); the keys, already
 * found, say as much: without a top-level "partition" there is no envelope. */
bool
ss_envelope_get_members(const char *raw, size_t len, const struct ss_jmember *m, size_t nm,
			struct ss_envelope *env)
{
	if (nm != SIZE_MAX && !partition_key_possible(m, nm))
		return false;
	return ss_envelope_get(raw, len, env);
}
