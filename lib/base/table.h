/* table: an aligned text table for a person at a terminal (ss-consume -L, --lag,
 * --offsets-at). Rows are collected, then printed with each column as wide as its widest
 * cell; a column whose cells are all numbers (or "-") is aligned to the right, one
 * whose cells are all empty ("") is left out, header and all (an ERROR column when
 * nothing failed). Trailing blanks are not printed. The table owns copies of every cell; ss_table_free frees them. */
#ifndef SS_TABLE_H
#define SS_TABLE_H
#include <stdio.h>

typedef struct ss_table ss_table;
/* A table with ncols columns and these headers (copied). */
ss_table *ss_table_new(int ncols, const char *const *headers);
/* Add a row of ncols cells (copied); NULL cells print as "-". */
void ss_table_row(ss_table *t, const char *const *cells);
void ss_table_print(const ss_table *t, FILE *f);
void ss_table_free(ss_table *t);
#endif
