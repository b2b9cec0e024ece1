#include "buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "jscan.h"

static void
reserve(ss_buf *b, size_t extra)
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
ss_buf_add(ss_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return; /* p may be NULL then (an empty key) */
	reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
ss_buf_addc(ss_buf *b, char c)
{
	reserve(b, 1);
	b->data[b->len++] = c;
}

void
ss_buf_adds(ss_buf *b, const char *s)
{
	ss_buf_add(b, s, strlen(s));
}

char *
ss_buf_cstr(ss_buf *b)
{
	reserve(b, 0);
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

/* Length of a valid UTF-8 sequence at p, 0 if invalid. Shares jscan's rules. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;

	if ((size_t)(end - p) < n || !ss_jscan_utf8((const char *)p, (const char *)p + n))
		return 0;
	return n;
}

bool
ss_buf_json_string(ss_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	bool clean = true;

	reserve(b, n + 2);
	b->data[b->len++] = '"';
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
			p++;
		ss_buf_add(b, run, (size_t)(p - run));
		if (p == end)
			break;
		unsigned c = *p;
		if (c >= 0x80) {
			size_t len = utf8_len(p, end);
			if (len == 0) {
				ss_buf_add(b, "\\ufffd", 6);
				clean = false;
				p++;
			} else {
				ss_buf_add(b, p, len);
				p += len;
			}
			continue;
		}
		p++;
		switch (c) {
		case '"': ss_buf_add(b, "\\\"", 2); break;
		case '\\': ss_buf_add(b, "\\\\", 2); break;
		case '\n': ss_buf_add(b, "\\n", 2); break;
		case '\t': ss_buf_add(b, "\\t", 2); break;
		case '\r': ss_buf_add(b, "\\r", 2); break;
		case '\b': ss_buf_add(b, "\\b", 2); break;
		case '\f': ss_buf_add(b, "\\f", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			ss_buf_add(b, u, 6);
		}
		}
	}
	ss_buf_addc(b, '"');
	return clean;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
ss_buf_base64(ss_buf *b, const void *src, size_t n)
{
	const unsigned char *s = src;

	reserve(b, (n + 2) / 3 * 4);
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
