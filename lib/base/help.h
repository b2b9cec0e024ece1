/* help: what -h prints, for every tool: the usage (the SYNOPSIS of its page), one
 * line per option, and where the full page is (git -h, jq --help). */
#ifndef SS_HELP_H
#define SS_HELP_H
#include <stdio.h>
#include <stdnoreturn.h>

/* One line of the option list. An entry with opt NULL is a heading ("put:") given
 * in what; the list ends with an entry whose opt and what are both NULL. */
struct ss_help_opt {
	const char *opt;  /* "--on EXPR", "-b, --brokers BROKERS" */
	const char *what; /* one line, no full stop */
};

/* Write usage, the options and "the full page: man TOOL" to out. */
void ss_help_write(FILE *out, const char *usage, const struct ss_help_opt *opts);
/* ss_help_write to stdout and exit 0 (the tool's -h, --help). */
noreturn void ss_help(const char *usage, const struct ss_help_opt *opts);
#endif
