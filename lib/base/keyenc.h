/* keyenc: JSON values as byte strings whose memcmp order is exactly jq's sort order:
 * null < false < true < numbers < strings (by code point) < arrays (element-wise) <
 * objects (sorted key sets, then values). SQLite compares BLOBs with memcmp, so an
 * ordered store needs no custom collation. A buffer is owned by its user. */
#ifndef SS_KEYENC_H
#define SS_KEYENC_H
#include <jv.h>
#include "base/buf.h"
#include <stdbool.h>
#include <stddef.h>


/* Append the encoding of v (not consumed) to b. */
void ss_keyenc_jv(ss_buf *b, jv v);
/* Encode a key for a prefix scan: strings and arrays without their terminator, so every
 * key that extends it (a longer string, an array with more elements) starts with it. */
void ss_keyenc_prefix(ss_buf *b, jv v);
/* Encode from raw JSON text of one valid value (fast path); false if not valid. */
bool ss_keyenc_raw(ss_buf *b, const char *p, size_t len);
/* ss_keyenc_raw without libjq, for threads: 1 encoded, 0 not valid, -1 a value only
 * ss_keyenc_raw can encode (an array, an object, an escaped string, a long number). */
int ss_keyenc_raw_nojq(ss_buf *b, const char *p, size_t len);
/* An array encoded element by element: open, each element's encoding, close. */
void ss_keyenc_array_open(ss_buf *b);
void ss_keyenc_array_close(ss_buf *b);
#endif
