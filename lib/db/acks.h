/* acks: delivery receipts from the process that delivers a stream of lines back to the
 * process that writes them (`ss-asof --acks FILE | ss-produce --acks FILE`), so that the
 * writer can keep what it wrote until it is delivered, and write it again after a crash
 * of either side.
 * FILE is a small SQLite database (WAL) of one row: the token of the writer's current
 * run, and how many lines of that run, counted from its first, are delivered. The writer
 * starts a run (a fresh token, none delivered) before it writes its first line; the
 * deliverer adopts the token it finds once its first line has arrived (that line proves
 * the run had started) and reports a count that only grows. A deliverer that outlives
 * its writer reports under the old token, which changes nothing.
 * The lines are counted as written: nothing may add, drop or split lines between the
 * two. A handle owns its SQLite connection. */
#ifndef SS_ACKS_H
#define SS_ACKS_H
#include <stdint.h>

typedef struct ss_acks ss_acks;
/* Open or create FILE; on failure a message and exit 75 (busy, cannot open) or 1. */
ss_acks *ss_acks_open(const char *path);
void ss_acks_close(ss_acks *a);
const char *ss_acks_path(const ss_acks *a);

/* The writer: start a run; then read how many of its lines are delivered (0 when the
 * file cannot be read: a warning, once). */
void ss_acks_start(ss_acks *a);
uint64_t ss_acks_delivered(ss_acks *a);

/* The deliverer: adopt the current run (or start one if none was); then report that
 * the first n lines are delivered (a failure is a warning, once: at worst lines are
 * written again). */
void ss_acks_join(ss_acks *a);
void ss_acks_report(ss_acks *a, uint64_t n);
#endif
