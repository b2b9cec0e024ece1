/* The NDJSON reader and validator against libjq's parser.
 * Properties: the reader splits any byte stream into the lines it holds (CRLF and a last
 * line without '\n' included); a line the validator accepts is one libjq parses to a
 * value; a line libjq parses that the validator refuses is one of jq's known leniencies
 * (invalid UTF-8 replaced, nan, numbers like 01 or .5, text after the value...). */
#include <jv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "base/jscan.h"
#include "stream/ndjson.h"

/* Reasons jscan gives that cover a jq leniency rather than a disagreement. */
static const char *const lenient[] = {
	"invalid UTF-8", "NUL byte in string", "nesting too deep",
	"unexpected text after the JSON value", /* jq ignores an unfinished second value */
	NULL,
};

/* Does [p, end) match JSON's number grammar exactly? */
static bool
json_number(const char *p, const char *end)
{
	const char *why;

	if (p == end || !(*p == '-' || (*p >= '0' && *p <= '9')))
		return false;
	return ss_jscan_document(p, end, &why);
}

/* jq's tokenizer takes any run of non-structural characters outside strings as one
 * literal and is lenient about it (01, .5, +1, nan, 1.): an input is sane when every such
 * run is a JSON number or true, false, null. jq 1.6 also lets U+001F through unescaped
 * (its check is c < 0x1f). */
static bool
sane(const char *p, size_t len)
{
	const char *end = p + len, *run = NULL;

	if (memchr(p, 0x1f, len))
		return false;

	for (; p <= end; p++) {
		bool sep = p == end || (*p && strchr(" \t\r\n[]{},:\"", *p) != NULL);
		if (!sep) {
			if (run == NULL)
				run = p;
			continue;
		}
		if (run) {
			size_t n = (size_t)(p - run);
			if (!json_number(run, p) && !(n == 4 && memcmp(run, "true", 4) == 0) &&
			    !(n == 5 && memcmp(run, "false", 5) == 0) && !(n == 4 && memcmp(run, "null", 4) == 0))
				return false;
			run = NULL;
		}
		if (p < end && *p == '"') /* skip the string, escapes included */
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
		if (p == end)
			break;
	}
	return true;
}

/* Validating while noting the members (ss-asof's one pass) is the same validation: the
 * same verdict and reason, members in order and inside the line. */
static void
check_members(const char *line, size_t len, bool ok, const char *why)
{
	struct ss_jmember m[4];
	const char *why2 = NULL;
	size_t n;
	bool ok2 = ss_jscan_document_members(line, line + len, m, 4, &n, &why2);

	if (ok2 != ok || (!ok && strcmp(why, why2) != 0))
		fuzz_fail("members scan says %s, document scan %s: %.*s", ok2 ? "valid" : why2,
			  ok ? "valid" : why, (int)len, line);
	for (size_t i = 0; ok && n != SIZE_MAX && i < n; i++)
		if (m[i].key < line || m[i].keyend > m[i].value || m[i].value >= m[i].valueend ||
		    m[i].valueend > line + len || (i > 0 && m[i].key < m[i - 1].valueend))
			fuzz_fail("member %zu out of place: %.*s", i, (int)len, line);
}

static void
check_line(const char *line, size_t len)
{
	const char *why = NULL;
	bool ok = ss_jscan_document(line, line + len, &why);
	check_members(line, len, ok, why);
	jv v = jv_parse_sized(line, (int)len);
	bool jq_ok = jv_is_valid(v);

	if (ok && !jq_ok) {
		jv msg = jv_invalid_get_msg(jv_copy(v));
		fuzz_fail("jscan accepts what jq refuses (%s): %.*s",
			  jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?", (int)len, line);
	}
	if (!ok && jq_ok && !ss_ndjson_blank(line, len) && sane(line, len)) {
		int i;
		for (i = 0; lenient[i] && strcmp(lenient[i], why) != 0; i++)
			;
		if (lenient[i] == NULL)
			fuzz_fail("jq accepts what jscan refuses (%s): %.*s", why, (int)len, line);
	}
	jv_free(v);
	if (ok && !ss_jscan_utf8(line, line + len))
		fuzz_fail("valid JSON that is not UTF-8");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	ss_reader *r = ss_reader_new(fd, "fuzz", true);
	const char *line;
	size_t len, pos = 0;
	uint64_t n = 0;

	while (ss_reader_next(r, &line, &len)) {
		n++;
		/* the line is the input's bytes up to the next '\n' (a CR before it dropped) */
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t want = nl ? (size_t)(nl - (data + pos)) : size - pos;
		size_t cut = want > 0 && data[pos + want - 1] == '\r' && nl ? want - 1 : want;
		if (!nl && want > 0 && data[pos + want - 1] == '\r')
			cut = want - 1;
		if (len != cut || memcmp(line, data + pos, len) != 0)
			fuzz_fail("line %llu differs from the input", (unsigned long long)n);
		pos += want + (nl != NULL);
		check_line(line, len);
	}
	if (pos != size)
		fuzz_fail("reader stopped at %zu of %zu bytes", pos, size);
	if (ss_reader_lineno(r) != n)
		fuzz_fail("line count");
	ss_reader_free(r);
	return 0;
}
