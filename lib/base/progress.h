/* progress: a live line on stderr for long work, as a person at a terminal wants it:
 *   ss-asof: 1234567 records, 250000/s, 42%, 12s left
 * redrawn at most 4 times a second, taken back at the end. Shown when stderr is a
 * terminal (never otherwise) unless --progress or --no-progress forces the choice.
 * Of the tools of a pipeline that share a terminal, one draws at a time (the first to
 * take the terminal's lock); the others keep quiet until it is done. */
#ifndef SS_PROGRESS_H
#define SS_PROGRESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ss_progress_mode { SS_PROGRESS_AUTO, SS_PROGRESS_ON, SS_PROGRESS_OFF };

typedef struct ss_progress ss_progress;
/* NULL when no line is to be shown (every function takes NULL and does nothing), so
 * a run without the line pays one test per record. data_fd is where the tool writes its
 * records (-1: nowhere): AUTO shows no line when that is a terminal too, where the
 * line would break the records' lines. */
ss_progress *ss_progress_new(enum ss_progress_mode mode, int data_fd);
/* Is the line shown for this mode: ON, or AUTO with stderr a terminal and data_fd not? */
bool ss_progress_wanted(enum ss_progress_mode mode, int data_fd);
/* Text added to the line from the next redraw on ("lag 12"); NULL for none. */
void ss_progress_note(ss_progress *p, const char *note);
/* records so far; done and total in any unit (bytes, offsets) give the share done and
 * the time left, total <= 0 when unknown. Redraws when 250 ms passed since the last. */
void ss_progress_update(ss_progress *p, int64_t records, int64_t done, int64_t total);
/* Take the line back and free p. */
void ss_progress_end(ss_progress *p);
/* The line for these numbers after elapsed_ms, for tests: "N records, R/s[, S%[, T left]]". */
void ss_progress_format(char *buf, size_t size, int64_t records, int64_t done, int64_t total,
			int64_t elapsed_ms);
/* The size of a regular file open on fd (what a reader of it will have read at the
 * end), -1 for a pipe, a terminal or a socket. */
int64_t ss_progress_file_size(int fd);
#endif
