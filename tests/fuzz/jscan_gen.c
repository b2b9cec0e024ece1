/* Generated inputs for fuzz_jscan's differential check (linked with fuzz_jscan.c instead
 * of replay.c; run by tests/fuzz.bats): deterministic, so a failure repeats.
 *   1. every byte from 0x80 with every next byte, then the bytes that matter after them
 *      (continuations at each edge, ASCII, quote, backslash, leads), in a string that
 *      puts them at offsets around a 64-byte block boundary;
 *   2. random documents (strings with escapes, \u pairs, UTF-8, control bytes; numbers;
 *      nesting) and mutations of them (bytes changed, inserted, deleted, cut short);
 *   3. hand-made edges: deep nesting, escapes and numbers across block boundaries, a
 *      backslash before the closing quote, text after the value.
 * Usage: jscan_gen [N random documents (default 100000)] */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_jscan_check(const char *p, size_t n);

static uint64_t rng = 0x9E3779B97F4A7C15u;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static long checked;

/* Check n bytes as an exact-size buffer. */
static void
check(const char *p, size_t n)
{
	char *b = malloc(n ? n : 1);
	memcpy(b, p, n);
	fuzz_jscan_check(b, n);
	free(b);
	checked++;
}

/* The bytes that matter after a lead or inside a sequence. */
static const unsigned char after[] = {0x00, 0x1F, 0x20, '"', 'A', '\\', 0x7F, 0x80, 0x8F, 0x90,
				      0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
				      0xF0, 0xF4, 0xF5, 0xFF};
#define NAFTER (sizeof after / sizeof after[0])
/* the fourth byte of a 4-byte lead's sequence: the edges of the continuation range and
 * a few that end it early (a 2- or 3-byte lead takes only the first, 'A') */
static const unsigned char last[] = {'A', 0x7F, 0x80, 0xBF, 0xC0, '"', '\\'};
#define NLAST (sizeof last / sizeof last[0])

static void
utf8_sequences(void)
{
	char doc[160];

	for (unsigned b0 = 0x80; b0 < 0x100; b0++)
		for (unsigned b1 = 0; b1 < 0x100; b1++)
			for (size_t i = 0; i < NAFTER; i++)
				for (size_t j = 0; j < (b0 >= 0xF0 ? NLAST : 1); j++) {
					/* {"k":"<pad>SEQ tail"} with SEQ at offsets 61..64 */
					size_t pad = 52 + (size_t)rnd(5), n = 0;
					n += (size_t)sprintf(doc, "{\"k\":\"");
					memset(doc + n, 'a', pad);
					n += pad;
					doc[n++] = (char)b0;
					doc[n++] = (char)b1;
					doc[n++] = (char)after[i];
					doc[n++] = (char)last[j];
					n += (size_t)sprintf(doc + n, "x\"}");
					check(doc, n);
				}
}

/* Append a random JSON value (depth-limited) to s at *n (room for 4096 bytes). */
static void
gen_value(char *s, size_t *n, int depth)
{
	static const char *const strs[] = {"a", "", "\\\"", "\\\\", "\\/", "\\n", "\\u00e9",
					   "\\ud83d\\ude00", "\\udc00", "\\ud800", "\\u12G4", "\\x",
					   "é", "東京", "🌧", "\xC3", "\xE0\x80\x80", "\xED\xA0\x80",
					   "\xF4\x90\x80\x80", "\t", "\x01", "\\", "plain text here"};
	static const char *const nums[] = {"0", "-0", "12", "1.5", "-1e9", "1E+2", "01", "1.",
					   "-", ".5", "1e", "123456789012345678901234567890"};
	if (*n > 3500) {
		s[(*n)++] = '0';
		return;
	}
	switch (depth > 6 ? rnd(4) : rnd(7)) {
	case 0:
	case 1: {
		s[(*n)++] = '"';
		for (unsigned k = rnd(12); k > 0; k--) {
			const char *t = rnd(3) ? "abcdefgh" + rnd(8) : strs[rnd(sizeof strs / sizeof *strs)];
			size_t l = strlen(t);
			memcpy(s + *n, t, l);
			*n += l;
		}
		s[(*n)++] = '"';
		break;
	}
	case 2: {
		const char *t = nums[rnd(sizeof nums / sizeof *nums)];
		memcpy(s + *n, t, strlen(t));
		*n += strlen(t);
		break;
	}
	case 3: {
		static const char *const lits[] = {"true", "false", "null", "nul", "tru"};
		const char *t = lits[rnd(5)];
		memcpy(s + *n, t, strlen(t));
		*n += strlen(t);
		break;
	}
	case 4:
	case 5:
		s[(*n)++] = '{';
		for (unsigned k = rnd(5); k > 0; k--) {
			s[(*n)++] = '"';
			s[(*n)++] = (char)('a' + rnd(26));
			s[(*n)++] = '"';
			if (rnd(8) == 0)
				s[(*n)++] = ' ';
			s[(*n)++] = ':';
			gen_value(s, n, depth + 1);
			if (k > 1)
				s[(*n)++] = ',';
		}
		s[(*n)++] = '}';
		break;
	default:
		s[(*n)++] = '[';
		for (unsigned k = rnd(5); k > 0; k--) {
			gen_value(s, n, depth + 1);
			if (k > 1)
				s[(*n)++] = rnd(10) ? ',' : ' ';
		}
		s[(*n)++] = ']';
	}
}

static void
mutate(char *s, size_t *n)
{
	static const char bytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n', 0, 0x1F,
				     (char)0x80, (char)0xC3, (char)0xE2, (char)0xF0, 'u', '0'};
	for (unsigned k = 1 + rnd(3); k > 0 && *n > 0; k--) {
		size_t at = rnd((unsigned)*n);
		char c = bytes[rnd(sizeof bytes)];
		switch (rnd(4)) {
		case 0: s[at] = c; break;
		case 1: memmove(s + at + 1, s + at, *n - at); s[at] = c; (*n)++; break;
		case 2: memmove(s + at, s + at + 1, *n - at - 1); (*n)--; break;
		default: *n = at;
		}
	}
}

static void
random_documents(long count)
{
	char *s = malloc(8192);

	for (long i = 0; i < count; i++) {
		size_t n = 0, pad = rnd(4) ? 0 : rnd(70);
		memset(s, ' ', pad);
		n = pad;
		gen_value(s, &n, 0);
		if (rnd(8) == 0)
			n += (size_t)sprintf(s + n, "%s", rnd(2) ? "  " : " x");
		check(s, n);
		mutate(s, &n);
		check(s, n);
	}
	free(s);
}

static void
edges(void)
{
	char s[4096];

	for (size_t d = 250; d < 262; d++) { /* nesting around MAX_SLOTS */
		memset(s, '[', d);
		memset(s + d, ']', d);
		check(s, 2 * d);
		s[0] = '{';
		check(s, 2 * d);
	}
	for (size_t d = 122; d < 134; d++) { /* objects, two slots each, and arrays in them */
		for (size_t a = 0; a < 4; a++) {
			size_t n = 0;
			for (size_t i = 0; i < d; i++)
				n += (size_t)sprintf(s + n, "{\"k\":");
			memset(s + n, '[', a);
			n += a;
			s[n++] = '1';
			memset(s + n, ']', a);
			n += a;
			memset(s + n, '}', d);
			check(s, n + d);
		}
	}
	for (size_t pad = 0; pad < 140; pad++) { /* a special byte at each block offset */
		static const char *const tails[] = {"\\\"\"", "\\\\\"", "\\\"", "\\", "\\u0041\"",
						    "\\ud83d\\ude00\"", "\\ud83d\"", "\"", "\x01\"",
						    "\xC3\xA9\"", "\xC3\"", "\xF0\x9F\x8C\xA7\""};
		for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
			size_t n = (size_t)sprintf(s, "{\"k\":\"");
			memset(s + n, 'b', pad);
			n += pad;
			n += (size_t)sprintf(s + n, "%s}", tails[t]);
			check(s, n);
			check(s, n - 1);
		}
		/* a sequence cut short just before a block of ASCII (not looked at for UTF-8
		 * unless the bytes before it leave a sequence open) */
		static const char *const cut[] = {"\xC3", "\xE2\x82", "\xF0\x9F\x8C", "\xC3\xA9"};
		for (size_t t = 0; t < sizeof cut / sizeof *cut; t++) {
			size_t n = (size_t)sprintf(s, "[\"");
			memset(s + n, 'b', pad);
			n += pad;
			n += (size_t)sprintf(s + n, "%s", cut[t]);
			memset(s + n, 'c', 130);
			n += 130;
			n += (size_t)sprintf(s + n, "\"]");
			check(s, n);
		}
		size_t n = (size_t)sprintf(s, "[");
		memset(s + n, ' ', pad);
		n += pad;
		n += (size_t)sprintf(s + n, "12345.678e+9,\"x\"]");
		check(s, n);
		check(s, n - 5);
	}
}

int
main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000;

	edges();
	utf8_sequences();
	random_documents(count);
	printf("%ld inputs\n", checked);
	return 0;
}
