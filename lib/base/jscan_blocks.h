/* jscan_blocks: stage 1 of the validator (private to jscan.c and its tests).
 * A document is cut into 64-byte blocks counted from its first byte; blocks are
 * classified by SIMD into bitmaps (bit i for byte i of the block), a few at a time, when
 * the string scanner first needs them. The scanner then finds the end of a string by a
 * bit scan instead of looking at its bytes. No carry-less multiply or in-string mask is
 * needed: the grammar (jscan.c) knows where each string starts, and escapes are stepped
 * over as they are met. Only x86-64 has blocks (SSE2, AVX2, AVX-512); elsewhere the
 * scanner is the portable byte loop and nothing here is called.
 *
 * The blocks only ever speed up a verdict the byte-wise scanner (scan_string) would give:
 * a string whose bytes hold anything but plain characters and valid UTF-8 is scanned
 * byte by byte as before, so the accept/reject answer and its reason are unchanged. */
#ifndef SS_JSCAN_BLOCKS_H
#define SS_JSCAN_BLOCKS_H
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* Blocks classified at a time for a document: a record of up to 256 bytes in one call
 * (ss_jscan_value, whose value may end long before end, takes one at a time). */
#define SS_JBLOCKS_WINDOW 4

struct ss_jblocks {
	const unsigned char *base; /* the document's first byte */
	size_t len;		   /* its length: blocks past it are never classified */
	size_t first, count;	   /* blocks [first, first + count) are in the bitmaps below */
	unsigned window;	   /* blocks classified at a time, SS_JBLOCKS_WINDOW at most */
	/* stop: the bytes a string scanner must look at (quotes, backslashes, bytes below
	 * 0x20); bad: bit k set when block first + k holds invalid UTF-8 (a string touching
	 * it is scanned byte by byte). */
	uint64_t stop[SS_JBLOCKS_WINDOW];
	unsigned bad;
};

/* Classify the blocks from b on (b * 64 < f->len; up to f->window, the last one
 * short if the document ends in it) and set f->first = b. Reads only [base, base + len).
 * Uses the width ss_jscan_simd names (AVX-512, AVX2 or SSE2; never called for
 * SIMD_PORTABLE). */
void ss_jblocks_classify(struct ss_jblocks *f, size_t b);
#endif
