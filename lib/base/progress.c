/* progress: the live line on stderr (see progress.h). */
#include "base/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"

enum { REDRAW_MS = 250 };

struct ss_progress {
	int64_t start_ms, next_ms;
	int tty;     /* the terminal opened anew, for the lock; -1 when not a terminal */
	char note[64];
	bool owner;  /* holds the terminal's lock: draws */
};

static bool drawn; /* a line is on the terminal: a message takes it back first */

static void
take_back(void)
{
	if (drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		drawn = false;
	}
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); /* a few ns: called per record */
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool
ss_progress_wanted(enum ss_progress_mode mode, int data_fd)
{
	if (mode == SS_PROGRESS_AUTO)
		return isatty(2) && !(data_fd >= 0 && isatty(data_fd));
	return mode == SS_PROGRESS_ON;
}

ss_progress *
ss_progress_new(enum ss_progress_mode mode, int data_fd)
{
	if (!ss_progress_wanted(mode, data_fd))
		return NULL;
	ss_progress *p = ss_xmalloc(sizeof *p);
	p->start_ms = now_ms();
	p->next_ms = p->start_ms + REDRAW_MS;
	p->owner = false;
	p->tty = -1;
	p->note[0] = '\0';
	const char *name = isatty(2) ? ttyname(2) : NULL;
	if (name != NULL)
		p->tty = open(name, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	ss_diag_on_message(take_back);
	return p;
}

/* "12s", "3m05s", "2h07m" */
static void
format_duration(char *buf, size_t size, int64_t s)
{
	if (s < 60)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(buf, size, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
}

void
ss_progress_format(char *buf, size_t size, int64_t records, int64_t done, int64_t total,
		   int64_t elapsed_ms)
{
	double secs = elapsed_ms > 0 ? elapsed_ms / 1000.0 : 0.001;
	int n = snprintf(buf, size, "%lld records, %.0f/s", (long long)records, records / secs);
	char left[32];

	if (total <= 0 || n < 0 || (size_t)n >= size)
		return;
	if (done > total)
		done = total;
	n += snprintf(buf + n, size - (size_t)n, ", %d%%", (int)(done * 100 / total));
	if (done <= 0 || (size_t)n >= size)
		return;
	format_duration(left, sizeof left, (int64_t)(secs * (double)(total - done) / (double)done + 0.5));
	snprintf(buf + n, size - (size_t)n, ", %s left", left);
}

/* The tools of one pipeline share a terminal: the one that holds its lock (an flock on
 * the terminal opened anew, so not shared with the others) draws, the others keep quiet
 * and try again at their next redraw. Not a terminal (--progress): no lock. */
static bool
owns_terminal(ss_progress *p)
{
	if (!p->owner)
		p->owner = p->tty < 0 || flock(p->tty, LOCK_EX | LOCK_NB) == 0;
	return p->owner;
}

void
ss_progress_update(ss_progress *p, int64_t records, int64_t done, int64_t total)
{
	char line[160];
	int64_t now;

	if (p == NULL || (now = now_ms()) < p->next_ms)
		return;
	p->next_ms = now + REDRAW_MS;
	if (!owns_terminal(p))
		return;
	ss_progress_format(line, sizeof line, records, done, total, now - p->start_ms);
	fprintf(stderr, "\r%s: %s%s%s\033[K", ss_diag_tool(), line, p->note[0] ? ", " : "", p->note);
	fflush(stderr);
	drawn = true;
}

void
ss_progress_note(ss_progress *p, const char *note)
{
	if (p != NULL)
		snprintf(p->note, sizeof p->note, "%s", note ? note : "");
}

void
ss_progress_end(ss_progress *p)
{
	if (p == NULL)
		return;
	take_back();
	ss_diag_on_message(NULL);
	if (p->tty >= 0)
		close(p->tty); /* and the lock with it */
	free(p);
}

int64_t
ss_progress_file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_size;
}
