/* jscan_blocks: stage 1 of the validator (private to jscan.c and its tests).
 * A document is cut into 64-byte blocks counted from its first byte; a block is
 * classified by SIMD into bitmaps (bit i for byte i of the block), the first time the
 * string scanner needs it. The scanner then finds the end of a string by a bit scan
 * instead of looking at its bytes.
 *
 * The blocks only ever speed up a verdict the byte-wise scanner (scan_string) would give:
 * a string whose bytes hold anything but plain characters and valid UTF-8 is scanned
 * byte by byte as before, so the accept/reject answer and its reason are unchanged. */
#ifndef SS_JSCAN_BLOCKS_H
#define SS_JSCAN_BLOCKS_H
#include <stddef.h>
#include <stdint.h>

struct ss_jblocks {
	const unsigned char *base; /* the document's first byte */
	size_t len;		   /* its length: blocks past it are never classified */
	size_t cur;		   /* the block whose bitmaps are below, or SIZE_MAX */
	/* quote: the '"' bytes. special: backslashes and bytes below 0x20 (a string holding
	 * one is scanned byte by byte), and every bit of a block where invalid UTF-8 was seen
	 * (so a string touching it is too). */
	uint64_t quote, special;
};

/* Classify block b (b * 64 < f->len) into f->quote, f->special and set f->cur = b.
 * Reads only inside [base, base + len): the last, short block is copied first. Uses the
 * width ss_jscan_simd names (AVX2 or SSE2; never called for SIMD_PORTABLE). */
void ss_jblocks_classify(struct ss_jblocks *f, size_t b);
#endif
