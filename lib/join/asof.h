/* asof: the as-of ("nearby") join of two NDJSON streams, with its late-event policies:
 * eager, defer, revise (man ss-asof.1, LATE EVENTS).
 * A join owns its readers, its state (memory, and the --state SQLite file or the
 * --state-dir files and their locks if given), and the --late-file; it writes results to the ss_writer given to ss_asof_new, which
 * stays the caller's. The options struct and its strings are borrowed for the process's
 * life: a run ends with ss_asof_end, and its memory is the process's until it exits. */
#ifndef SS_ASOF_H
#define SS_ASOF_H
#include <stdbool.h>
#include <stdint.h>

#include "stream/ndjson.h"
#include "base/progress.h"
#include "base/sstime.h"

enum ss_asof_dir { SS_ASOF_BACKWARD, SS_ASOF_FORWARD, SS_ASOF_NEAREST };
enum ss_asof_emit { SS_ASOF_EAGER, SS_ASOF_DEFER, SS_ASOF_REVISE };

struct ss_asof_opts {
	const char *left_on, *right_on; /* jq expressions giving the event time */
	const char *left_by, *right_by; /* equality key expressions, or NULL for none */
	enum ss_asof_dir direction;
	bool strict;           /* exact time matches do not count */
	int64_t tolerance;     /* ns, or -1 for unlimited */
	bool inner;            /* drop left records without a match */
	enum ss_asof_emit emit;
	bool order_left;       /* defer: write results in left input order per left partition
				  (--order left), not as they become final */
	int64_t grace;         /* ns the right stream may run out of order */
	int64_t retain;        /* ns of right history kept behind the slower stream, or -1
				  for all of it (the exact answer for a left record late by
				  any amount) */
	int64_t max_delay;     /* ns of wall clock a deferred record may wait, or -1 */
	int64_t idle;          /* ns of wall clock after which a silent right partition
				  no longer holds the watermark back */
	int right_partitions;  /* enveloped right partitions to wait for at start, or 0 */
	bool right_end_exit;   /* a right pipe ending before the left is not the end of the
				  right stream: exit 75, held records kept in the state */
	const char *right_end_file; /* nor is one ending without this file (ss-consume
				       --end-file), or NULL */
	bool allow_empty_right; /* a right input without a record is not an error */
	const char *select;    /* jq expression over each output object, or NULL */
	const char *state;     /* SQLite state file, or NULL */
	const char *state_dir; /* one state file per partition number, or NULL */
	const char *late_file; /* where late right records go, or NULL */
	const char *acks;      /* results kept in the state until this acks file says they
				  are delivered (lib/db/acks.h), or NULL */
	const char *left_topic, *right_topic; /* one input of both topics (ss_asof_run_one) */
	struct ss_errpolicy *onerror;
	enum ss_tsunit unit;
	enum ss_progress_mode progress; /* the live line (progress.h); AUTO: on a terminal,
					   over two regular files */
};

typedef struct ss_asof ss_asof;
/* Compile the expressions (exit 3 on a bad one), open the state and the late file. */
ss_asof *ss_asof_new(const struct ss_asof_opts *opts, ss_writer *out);
/* Join LEFT and RIGHT (paths, "-" for stdin) until the result is complete: both inputs
 * ended, or the left ended with nothing left to emit or revise. Returns an exit code;
 * data errors under --on-error fail exit from inside (state committed first). */
int ss_asof_run(ss_asof *j, const char *left, const char *right);
/* The same over one input that carries both sides, as one `ss-consume -G` of two
 * co-partitioned topics writes it: a record whose envelope names opts.left_topic is
 * left, opts.right_topic right, anything else a data error. Records are applied in the
 * order they come. */
int ss_asof_run_one(ss_asof *j, const char *input);
/* --acks, at the end of a run, after the caller flushed and closed the output (the
 * deliverer's end of input): wait until the deliverer reports every line delivered, or
 * reports nothing new for 2 s (what is left stays kept: at worst written twice), and
 * drop the delivered ones from the state. */
void ss_asof_await_delivery(ss_asof *j);
/* Print the one-line summary (records, matches, late, expired) on stderr; done at exit
 * when there are late, expired, replayed or still held records. */
void ss_asof_summary(const ss_asof *j);
/* End the run: the threads stopped, the state committed and closed, the late file
 * closed, the summary said. Its memory is not freed: the caller is about to exit, and
 * freeing a large key map record by record is work the exit does at once (with a million
 * keys, a third of the run). */
void ss_asof_end(ss_asof *j);
#endif
