/* kcat: answers to kcat's options, for people whose fingers know kcat. Each is a usage
 * error (exit 2) that says how ss says the same thing. */
#ifndef SS_KCAT_H
#define SS_KCAT_H
#include <stdnoreturn.h>

/* The kcat options that ss-consume and ss-produce answer: add them to getopt's list. */
#define SS_KCAT_OPTS "t:CPK:q"
/* Option opt (one of SS_KCAT_OPTS) with its argument (or NULL): the answer, exit 2. */
noreturn void ss_kcat_habit(const char *usage, int opt, const char *arg);
/* -o ARG that kcat reads (s@MS, e@MS): the answer, exit 2; returns if ARG is not one. */
void ss_kcat_offset(const char *usage, const char *arg);
#endif
