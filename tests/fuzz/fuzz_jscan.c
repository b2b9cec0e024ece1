/* The validator against its former self (jscan_ref.h): on every input, and on the input
 * shifted by 0..63 leading spaces (so each byte meets each offset of a 64-byte block),
 * ss_jscan_document, ss_jscan_document_members and ss_jscan_value give the reference's
 * verdict, reason, end and members (and, for the members noted of members that are
 * objects, the reference's members of those) under every SIMD width this CPU has
 * (portable, SSE2, AVX2, AVX-512: ss_jscan_simd is set directly, as SS_SIMD would); each
 * line of an input that has several, too. */
#include "fuzz.h"
#include "base/jscan.h"
#include "base/jscan_impl.h"
#include "jscan_ref.h"

void fuzz_jscan_check(const char *p, size_t n);

static bool
same_why(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* a, the scanner's member, is the reference's b; a key a says holds no escape has no
 * backslash (lookups then compare its bytes as its name) */
static bool
same_member(const struct ss_jmember *a, const struct ss_jmember *b)
{
	return a->key == b->key && a->keyend == b->keyend && a->value == b->value && a->valueend == b->valueend &&
	       (a->esc || memchr(a->key, '\\', (size_t)(a->keyend - a->key)) == NULL);
}

/* The members of m[0..n) (of max slots) that are objects and had theirs noted: those are
 * the reference's members of that object, the last first, in slots none of the others
 * use, each with none of its own noted. */
static void
check_nested(const struct ss_jmember *m, size_t n, size_t max, const char *p, size_t len)
{
	bool used[8] = {false};

	for (size_t i = 0; i < n; i++) {
		if (*m[i].value != '{' || m[i].nsub == SS_JSUB_NONE)
			continue;
		struct ss_jmember want[8];
		size_t wn;
		if (!ref_jscan_document_members(m[i].value, m[i].valueend, want, 8, &wn, NULL) ||
		    wn != m[i].nsub || m[i].sub < n || m[i].sub + m[i].nsub > max)
			fuzz_fail("nested members of member %zu: %.*s", i, (int)len, p);
		for (size_t k = 0; k < wn; k++) {
			const struct ss_jmember *got = &m[m[i].sub + k];
			if (!same_member(got, &want[wn - 1 - k]) || got->nsub != SS_JSUB_NONE || used[m[i].sub + k])
				fuzz_fail("nested member %zu of member %zu: %.*s", k, i, (int)len, p);
			used[m[i].sub + k] = true;
		}
	}
}

/* One width against the reference's answers on [p, p+n). */
static void
check_width(const char *p, size_t n, bool ok, const char *why, bool mok, size_t mn,
	    const struct ss_jmember *mm, const char *vend, const char *vwhy)
{
	const char *why2 = NULL, *mwhy2 = NULL, *vwhy2 = NULL;
	struct ss_jmember m[8];
	size_t n2;

	if (ss_jscan_document(p, p + n, &why2) != ok || (!ok && !same_why(why, why2)))
		fuzz_fail("width %d: document %s, reference %s: %.*s", (int)ss_jscan_simd,
			  ok ? "refused" : "differs", ok ? "valid" : why, (int)n, p);
	bool mok2 = ss_jscan_document_members(p, p + n, m, 8, &n2, &mwhy2);
	if (mok2 != mok || (mok && n2 != mn))
		fuzz_fail("width %d: members differ: %.*s", (int)ss_jscan_simd, (int)n, p);
	for (size_t i = 0; mok && mn != SIZE_MAX && i < mn; i++)
		if (!same_member(&m[i], &mm[i]))
			fuzz_fail("width %d: members differ: %.*s", (int)ss_jscan_simd, (int)n, p);
	if (mok && mn != SIZE_MAX)
		check_nested(m, mn, 8, p, n);
	if (ss_jscan_value(p, p + n, &vwhy2) != vend || (vend == NULL && !same_why(vwhy, vwhy2)))
		fuzz_fail("width %d: value end differs: %.*s", (int)ss_jscan_simd, (int)n, p);
}

/* [p, p+n) must be a buffer of exactly n bytes (ASan sees a read past it). */
void
fuzz_jscan_check(const char *p, size_t n)
{
	const char *why = NULL, *mwhy = NULL, *vwhy = NULL;
	struct ss_jmember mm[8];
	size_t mn;
	bool ok = ref_jscan_document(p, p + n, &why);
	bool mok = ref_jscan_document_members(p, p + n, mm, 8, &mn, &mwhy);
	const char *vend = ref_jscan_value(p, p + n, &vwhy);
	enum simd saved = ss_jscan_simd;

	if (mok != ok)
		fuzz_fail("reference members and document disagree: %.*s", (int)n, p);
	for (int w = SIMD_PORTABLE; w <= (int)saved; w++) {
		ss_jscan_simd = (enum simd)w;
		check_width(p, n, ok, why, mok, mn, mm, vend, vwhy);
	}
	ss_jscan_simd = saved;
}

/* [p, p+n) after k spaces, in a buffer of exactly that size. */
static void
check_shifted(const uint8_t *p, size_t n, size_t k)
{
	char *buf = malloc(k + n + 1);

	memset(buf, ' ', k);
	memcpy(buf + k, p, n);
	fuzz_jscan_check(buf, k + n);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 100000)
		return 0;
	for (size_t k = 0; k < 64; k++)
		check_shifted(data, size, k);
	/* an NDJSON input: each line on its own too (at 3 offsets) */
	for (const uint8_t *p = data, *end = data + size, *nl; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (p == data && nl == end)
			break;
		for (size_t k = 0; k < 64; k += 31)
			check_shifted(p, (size_t)(nl - p), k);
	}
	return 0;
}
