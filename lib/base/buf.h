/* buf: a growable byte buffer. The struct is the caller's (zero-initialize it: ss_buf b = {0});
 * its data is owned by the buffer and released by ss_buf_free. */
#ifndef SS_BUF_H
#define SS_BUF_H
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct ss_buf {
	char *data;
	size_t len, cap;
} ss_buf;
void ss_buf_reset(ss_buf *b);
/* Room for n more bytes and a NUL (ss_buf_add's slow path). */
void ss_buf_grow(ss_buf *b, size_t n);

/* Append [p, p+n) (p may be NULL when n is 0). Inline: outputs are built a few bytes
 * at a time (a --select line is five appends), and the calls were 3% of a join's
 * instructions (cachegrind, wide shape). */
static inline void
ss_buf_add(ss_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (b->len + n + 1 > b->cap)
		ss_buf_grow(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void
ss_buf_addc(ss_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		ss_buf_grow(b, 1);
	b->data[b->len++] = c;
}

void ss_buf_adds(ss_buf *b, const char *s);
/* Make data NUL-terminated (not counted in len) and return it. */
char *ss_buf_cstr(ss_buf *b);
void ss_buf_free(ss_buf *b);
/* Append standard base64 (RFC 4648, with padding) of [s, s+n). */
void ss_buf_base64(ss_buf *b, const void *s, size_t n);
/* Decode base64 into b; false if invalid. */
bool ss_buf_unbase64(ss_buf *b, const char *s, size_t n);
#endif
