#include "base/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

void
ss_buf_grow(ss_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = ss_xrealloc(b->data, cap);
	b->cap = cap;
}

void
ss_buf_reset(ss_buf *b)
{
	b->len = 0;
}

void
ss_buf_adds(ss_buf *b, const char *s)
{
	ss_buf_add(b, s, strlen(s));
}

char *
ss_buf_cstr(ss_buf *b)
{
	ss_buf_grow(b, 0);
	b->data[b->len] = '\0';
	return b->data;
}

void
ss_buf_free(ss_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
ss_buf_base64(ss_buf *b, const void *src, size_t n)
{
	const unsigned char *s = src;

	ss_buf_grow(b, (n + 2) / 3 * 4);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		char out[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < n ? b64[(v >> 6) & 63] : '=',
			       i + 2 < n ? b64[v & 63] : '='};
		ss_buf_add(b, out, 4);
	}
}

bool
ss_buf_unbase64(ss_buf *b, const char *s, size_t n)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t i = 0;

	for (; i < n && s[i] != '='; i++) {
		const char *q = memchr(b64, s[i], 64);
		if (q == NULL || s[i] == '\0')
			return false;
		acc = acc << 6 | (uint32_t)(q - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			ss_buf_addc(b, (char)(acc >> bits & 0xFF));
		}
	}
	for (; i < n; i++)
		if (s[i] != '=')
			return false;
	return true;
}
