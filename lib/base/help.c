/* help: the -h text of every tool (see help.h). */
#include "base/help.h"

#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

enum { OPT_COLUMN = 26 }; /* where the descriptions start */

static void
write_opt(FILE *out, const struct ss_help_opt *o)
{
	int n;

	if (!o->opt) {
		fprintf(out, "%s\n", o->what);
		return;
	}
	n = fprintf(out, "  %s", o->opt);
	/* a long option keeps its text on its line, two spaces after it */
	fprintf(out, "%*s%s\n", n < OPT_COLUMN - 1 ? OPT_COLUMN - n : 2, "", o->what);
}

void
ss_help_write(FILE *out, const char *usage, const struct ss_help_opt *opts)
{
	const char *tool = ss_diag_tool();

	fputs(usage, out);
	fputs("\noptions:\n", out);
	for (; opts->opt || opts->what; opts++)
		write_opt(out, opts);
	fprintf(out, "\nThe full page: man %s (what every tool shares: man 7 ss)\n", tool);
}

noreturn void
ss_help(const char *usage, const struct ss_help_opt *opts)
{
	ss_help_write(stdout, usage, opts);
	exit(fflush(stdout) == 0 ? SS_EXIT_OK : SS_EXIT_DATA);
}
