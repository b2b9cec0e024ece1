/* ndjson: reading and writing newline-delimited JSON.
 * A reader owns its line buffer; a line returned stays valid until the next read.
 * A writer owns its buffer, not its fd; every write is checked, ss_writer_free flushes
 * and frees. */
#ifndef SS_NDJSON_H
#define SS_NDJSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ss_onerror { SS_ONERROR_FAIL, SS_ONERROR_SKIP, SS_ONERROR_DEADLETTER };

/* The --on-error policy; dead-letter owns an open FILE. */
struct ss_errpolicy {
	enum ss_onerror mode;
	FILE *deadletter;
	char *deadletter_path;
};
/* Parse "fail", "skip" or "dead-letter=FILE" (opens FILE for append); false if invalid. */
bool ss_errpolicy_parse(struct ss_errpolicy *pol, const char *arg);
void ss_errpolicy_close(struct ss_errpolicy *pol);
/* Apply the policy to a bad record: fail -> message "SOURCE:LINE: reason" and exit 1
 * (atexit handlers commit what came before); skip -> warn and count; dead-letter -> write
 * {"source":..,"line":..,"reason":..,"raw":..} and count. */
void ss_errpolicy_reject(struct ss_errpolicy *pol, const char *source, uint64_t line,
			 const char *raw, size_t len, const char *reason);

typedef struct ss_reader ss_reader;
/* Read from fd (not owned; closed by ss_reader_free only if own_fd). name is for messages. */
ss_reader *ss_reader_new(int fd, const char *name, bool own_fd);
/* Open a path ("-" = stdin). Exits 1 with a message if it cannot be opened. */
ss_reader *ss_reader_open(const char *path);
void ss_reader_free(ss_reader *r);
/* Called before the reader would block waiting for input (flush output, commit state). */
void ss_reader_set_idle(ss_reader *r, void (*idle)(void *), void *arg);
/* Next line without its '\n' or "\r\n" (a final line without '\n' counts too).
 * Returns 1 with line and len set, 0 at end of input, -1 when a signal caught with
 * ss_proc_catch cut a wait for input short. Exits 1 on a read error. */
int ss_reader_next(ss_reader *r, const char **line, size_t *len);
/* Non-blocking variant for poll loops: 1 line, 0 end of input, -1 would block. */
int ss_reader_try_next(ss_reader *r, const char **line, size_t *len);
int ss_reader_fd(const ss_reader *r);
uint64_t ss_reader_lineno(const ss_reader *r);
/* Read a regular file again from its start. */
void ss_reader_rewind(ss_reader *r);
/* Byte offset in the input of the line last returned. */
uint64_t ss_reader_offset(const ss_reader *r);
const char *ss_reader_name(const ss_reader *r);
/* The next line of a buffer in memory (a mapped file) at *cursor, split as
 * ss_reader_next splits a stream; false at end. */
bool ss_ndjson_next_line(const char **cursor, const char *end, const char **line, size_t *len);
/* Is the line empty or whitespace only? (skipped silently by every tool) */
bool ss_ndjson_blank(const char *line, size_t len);

typedef struct ss_writer ss_writer;
/* Buffered writer on fd (not closed). Writes are checked: EPIPE ends the process quietly
 * (SS_EXIT_PIPE, 141, as SIGPIPE would), other errors exit 1 with a message. */
ss_writer *ss_writer_new(int fd, const char *name);
void ss_writer_write(ss_writer *w, const char *buf, size_t len);
/* Flush now unless n more bytes fit: a line written in pieces after it goes out whole. */
void ss_writer_reserve(ss_writer *w, size_t n);
void ss_writer_puts(ss_writer *w, const char *s);
void ss_writer_putc(ss_writer *w, char c);
/* Write a JSON string literal (quoted, escaped) of raw bytes (UTF-8 assumed valid). */
void ss_writer_json_string(ss_writer *w, const char *s, size_t len);
/* Write everything buffered now (or wait until the writer's thread has). */
void ss_writer_flush(ss_writer *w);
/* From now on, full buffers are written by a thread of the writer's while the caller
 * fills the next one: its write(2)s (the kernel's copy) leave the caller's thread. A
 * failed write is reported at the next buffer or flush, on the caller's thread, as
 * above; ss_writer_flush returns once everything is written. Stays synchronous if no
 * thread can be started. */
void ss_writer_async(ss_writer *w);
void ss_writer_free(ss_writer *w); /* flushes, stops the thread */
#endif
