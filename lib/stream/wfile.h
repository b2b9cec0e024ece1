/* wfile: files that hold record contents (dead-letter, late, events, end and feed files),
 * created or appended without following a symbolic link someone planted at their name,
 * and temporary files under unpredictable names (mkstemp) renamed into place.
 * SQLite state files are checked in statefile.c with ss_wfile_refuse_links. */
#ifndef SS_WFILE_H
#define SS_WFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Open path for appending, creating it (mode 0666 less the umask) if missing; a symbolic
 * link at path is refused (O_NOFOLLOW). NULL with errno on failure (ELOOP for a link). */
FILE *ss_wfile_append(const char *path);
/* The reason for errno after ss_wfile_*: a link gets words of its own. */
const char *ss_wfile_strerror(int err);
/* A new file "PATH.XXXXXX" next to path, made by mkstemp (O_EXCL, so never through a
 * link), mode 0666 less the umask; its name in tmp (n bytes). NULL with errno. Write it,
 * fclose, then rename(tmp, path): rename replaces a link at path, never its target. */
FILE *ss_wfile_tmp(const char *path, char *tmp, size_t n);
/* Is a SQLite file that is about to be opened for writing safe from planted links? path
 * itself may be a link to an existing file (the user's), not a dangling one (opening it
 * would create the file where the link points); its -wal, -shm and -journal (SQLite
 * creates them beside it, following links) may not be links at all. false with *why. */
bool ss_wfile_refuse_links(const char *path, const char **why);
#endif
