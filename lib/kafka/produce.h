/* produce: the engine of ss-produce. NDJSON lines become Kafka records, each sent as soon
 * as it is read; every delivery report is awaited before the run ends. The caller owns
 * the options and what they point to. */
#ifndef SS_PRODUCE_H
#define SS_PRODUCE_H
#include <stdbool.h>
#include "kafka/kafka.h"
#include "stream/ndjson.h"
#include "base/sstime.h"

struct ss_produce_opts {
	struct ss_kopts k;
	const char *topic;
	const char *key, *value, *headers, *partition, *timestamp; /* jq expressions or NULL */
	enum ss_tsunit ts_unit;   /* of numeric --timestamp results */
	bool envelope;            /* key, value, headers, timestamp from envelopes */
	bool raw;                 /* lines are values as they are: no JSON check */
	bool dry_run;
	struct ss_errpolicy onerror;
	const char *acks;         /* file to report delivered input lines to, or NULL */
	bool key_avro, value_avro;             /* --key-format/--value-format avro */
	const char *key_schema, *value_schema; /* --key-schema, --value-schema FILE */
	const char *registry;                  /* --schema-registry URL */
	int in_fd;
	const char *in_name;
};

void ss_produce_opts_init(struct ss_produce_opts *o);
/* Returns the exit status: 0, 1 (bad input under --on-error fail, or a record refused),
 * 75 (a record not delivered because the brokers were unavailable), 128+N on a signal
 * (after every record read was delivered). */
int ss_produce_run(struct ss_produce_opts *o);
#endif
