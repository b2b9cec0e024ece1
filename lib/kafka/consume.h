/* consume: the engine of ss-consume. Kafka records become envelopes on a file descriptor
 * (NDJSON, always valid JSON); offsets are committed only for records that reached it.
 * The caller owns the options and everything they point to. */
#ifndef SS_CONSUME_H
#define SS_CONSUME_H
#include <stdbool.h>
#include <stdint.h>
#include "base/progress.h"
#include "kafka/kafka.h"
#include "stream/ndjson.h"

/* A start position: an absolute offset, a librdkafka logical offset, or SS_OFFSET_TIME
 * with time_ms. */
struct ss_start {
	int64_t offset;
	int64_t time_ms;
};
struct ss_part_start {
	int32_t partition;
	struct ss_start start;
};

struct ss_consume_opts {
	struct ss_kopts k;
	const char *group;             /* -G, or NULL for a static assignment */
	char **topics;
	int ntopics;
	int32_t *partitions;           /* -p, or NULL for all */
	int npartitions;
	struct ss_start start;         /* -o for every partition */
	bool start_given;
	struct ss_part_start *pstarts; /* -o P:OFFSET,... */
	int npstarts;
	bool exit_at_end;              /* -e */
	int64_t count;                 /* -c, or -1 */
	bool from_set, until_set;
	int64_t from_ms, until_ms;
	const char *offsets_from;      /* --offsets-from DB */
	const char *end_file;          /* --end-file: written at an end asked for, or NULL */
	char *checkpoint_db;           /* --checkpoint DB:NAME */
	const char *checkpoint_name;
	enum ss_kfmt key_fmt, value_fmt;
	const char *key_schema, *value_schema; /* --key-schema, --value-schema FILE (avro) */
	const char *registry;          /* --schema-registry URL (avro) */
	struct ss_errpolicy onerror;   /* for records that cannot be decoded */
	enum ss_progress_mode progress; /* the live line (progress.h); AUTO: with -e, stderr a
					   terminal, stdout not */
	int out_fd;
};

void ss_consume_opts_init(struct ss_consume_opts *o);
/* -o and -p are parsed by consume_opts.h. */
/* Run until the end condition (-e, -c, --until), a signal (SIGINT/SIGTERM: flush, commit,
 * leave) or a closed output. Returns the exit status. */
int ss_consume_run(const struct ss_consume_opts *o);
#endif
