/* consume_opts: ss-consume's command-line forms of -o and -p, parsed into its options
 * (consume.h). The caller owns the options; what is parsed is appended to arrays the
 * options then own (pstarts, partitions), as ss_consume_run reads them. */
#ifndef SS_CONSUME_OPTS_H
#define SS_CONSUME_OPTS_H
#include <stdbool.h>

#include "kafka/consume.h"

/* Parse -o: one position, or P:POSITION,...; false if invalid. */
bool ss_consume_parse_offset(struct ss_consume_opts *o, const char *arg);
/* Parse -p 0,2,5-7; false if invalid. */
bool ss_consume_parse_partitions(struct ss_consume_opts *o, const char *arg);
#endif
