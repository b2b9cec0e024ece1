/* cache: the engine of ss-cache, ordered key/value state (Slipstream's Cache) in one
 * SQLite file, or in a directory of one file per topic-partition (statedir.h).
 * A cache owns the stores it opens: each command opens them, and closes them before it
 * returns. The path given to ss_cache_new and the options stay the caller's; jv
 * arguments are consumed (jq's rule). Records come from standard input, results go to
 * standard output. */
#ifndef SS_CACHE_H
#define SS_CACHE_H
#include <jv.h>
#include <stdbool.h>
#include <stdint.h>

#include "stream/ndjson.h"
#include "base/progress.h"
#include "base/sstime.h"

typedef struct ss_cache ss_cache;
/* The state in the file db, opened by each command. */
ss_cache *ss_cache_new(const char *db);
/* The state in the directory dir, created now if writes (exit 1 when it cannot). */
ss_cache *ss_cache_new_dir(const char *dir, bool writes);
void ss_cache_free(ss_cache *c);

struct ss_cache_put_opts {
	const char *key, *value;      /* jq expressions; value NULL: the record, byte for byte */
	bool tee;                     /* pass each record on to stdout once committed */
	int64_t retain_count;         /* keep only the last N keys; 0: all */
	int64_t retain_age;           /* ns: drop keys whose time is older; 0: none */
	enum ss_tsunit unit;          /* of numeric times for retain_age */
	struct ss_errpolicy onerror;  /* taken over: closed by the run */
	enum ss_progress_mode progress;
};

/* Every record of stdin into the state, committed in batches with its offset (a record
 * whose envelope is not newer than the applied offset is skipped as a replay). Returns
 * 0. A bad record under --on-error fail, a failed write or a failing store exits from
 * inside: an exit handler first commits what came before (and passes it on under tee;
 * unless passing it on failed, so that a restart reads it again). The run's memory is
 * freed at exit. */
int ss_cache_put(ss_cache *c, struct ss_cache_put_opts *o);

/* Print each key's value from every store that has it: the value alone, or under json
 * {"key":K,"value":V}, and {"key":K,"missing":true} when none has. A key none has is
 * warned about by its names[i] (the argument as given). Returns 1 when a key was
 * missing, else 0. */
int ss_cache_get(ss_cache *c, jv keys, char *const *names, bool json);
/* Delete the keys (an array) from every store. Returns 0. */
int ss_cache_del(ss_cache *c, jv keys);

enum ss_cache_show { SS_CACHE_BOTH, SS_CACHE_KEYS, SS_CACHE_VALUES };
struct ss_cache_scan_opts {
	jv from, to, prefix; /* inclusive bounds, keys extending prefix; jv_invalid(): none */
	bool backwards;      /* from the last key down */
	long long limit;     /* stop after N rows; -1: never */
	enum ss_cache_show show;
};
/* Print the rows in key order (merged over every store): {"key":K,"value":V}, or only
 * the keys or the values. Consumes from, to and prefix. Returns 0. */
int ss_cache_scan(ss_cache *c, struct ss_cache_scan_opts *o);
/* Print {"path":..,"keys":N,"bytes":N,"offsets":[{"topic":..,"partition":P,"offset":O}..]}.
 * Returns 0. */
int ss_cache_stats(ss_cache *c);
#endif
