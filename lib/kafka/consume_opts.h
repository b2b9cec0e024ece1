/* consume_opts: ss-consume's command-line forms of -o, -p and --checkpoint, parsed into
 * its options (consume.h), and the rules on which of them go together. The caller owns
 * the options; what is parsed is appended to arrays the options then own (pstarts,
 * partitions, checkpoint_db), as ss_consume_run reads them. */
#ifndef SS_CONSUME_OPTS_H
#define SS_CONSUME_OPTS_H
#include <stdbool.h>

#include "kafka/consume.h"

/* Parse -o: one position, or P:POSITION,...; false if invalid. */
bool ss_consume_parse_offset(struct ss_consume_opts *o, const char *arg);
/* Parse -p 0,2,5-7; false if invalid. */
bool ss_consume_parse_partitions(struct ss_consume_opts *o, const char *arg);
/* Parse --checkpoint DB:NAME (DB a copy the options own: checkpoint_db); false if
 * invalid. */
bool ss_consume_parse_checkpoint(struct ss_consume_opts *o, const char *arg);
/* After the options of a read: a usage error (exit 2, with usage) for options that do
 * not go together. */
void ss_consume_opts_check(const struct ss_consume_opts *o, const char *usage);
#endif
