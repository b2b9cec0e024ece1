/* kcat: kcat's options answered the ss way (see kcat.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "kafka/kcat.h"
#include "base/sstime.h"

struct habit {
	const char *tool; /* NULL: either tool */
	int opt;
	const char *answer;
};

static const struct habit habits[] = {
	{"ss-consume", 't', "topics are arguments here: ss-consume [-b brokers] %s"},
	{"ss-produce", 't', "the topic is the argument here: ss-produce [-b brokers] %s"},
	{"ss-consume", 'C', "ss-consume only consumes: drop -C"},
	{"ss-produce", 'C', "to consume, use ss-consume"},
	{"ss-consume", 'P', "to produce, use ss-produce TOPIC"},
	{"ss-produce", 'P', "ss-produce only produces: drop -P"},
	{"ss-consume", 'K', "every envelope has .key and .value; to print them as KEY%sVALUE: "
			     "ss-consume TOPIC | jq -r '\"\\(.key)%s\\(.value)\"'"},
	{"ss-produce", 'K', "lines are JSON here: take the key and the value with expressions, "
			     "e.g. --key .id --value .payload (a line KEY%sVALUE of text: "
			     "jq -cR 'split(\"%s\") | {key: .[0], value: .[1]}' | "
			     "ss-produce --key .key --value .value TOPIC)"},
	{NULL, 'q', "ss tools are quiet already: standard error has errors and warnings only"},
};

noreturn void
ss_kcat_habit(const char *usage, int opt, const char *arg)
{
	const char *tool = ss_diag_tool();

	for (size_t i = 0; i < sizeof habits / sizeof *habits; i++) {
		const struct habit *h = &habits[i];
		if (h->opt != opt || (h->tool != NULL && strcmp(h->tool, tool) != 0))
			continue;
		/* the answers use their argument at most twice: the topic or delimiter */
		char answer[512];
		snprintf(answer, sizeof answer, h->answer, arg ? arg : "", arg ? arg : "");
		ss_diag_usage_error(usage, "-%c is kcat's option: %s", opt, answer);
	}
	ss_diag_usage_error(usage, "unknown option -%c", opt);
}

void
ss_kcat_offset(const char *usage, const char *arg)
{
	char *end, when[64] = "TIME";
	long long ms;

	if ((arg[0] != 's' && arg[0] != 'e') || arg[1] != '@')
		return;
	ms = strtoll(arg + 2, &end, 10);
	if (arg[2] != '\0' && *end == '\0')
		ss_time_format(ms * 1000000, when, sizeof when);
	if (arg[0] == 's')
		ss_diag_usage_error(usage, "-o %s is kcat's (milliseconds): say -o @%s, or --from %s "
				    "(a time: RFC 3339, or seconds since the epoch)", arg, when, when);
	ss_diag_usage_error(usage, "-o %s is kcat's end (milliseconds): say --until %s "
			    "(a time: RFC 3339, or seconds since the epoch)", arg, when);
}
