/* table: aligned text tables (see table.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/table.h"

struct ss_table {
	int ncols;
	char **cells; /* (nrows + 1) * ncols, the headers first */
	int nrows;    /* rows added, not counting the headers */
};

static void
add_cells(ss_table *t, const char *const *cells)
{
	size_t n = (size_t)(t->nrows + 1) * (size_t)t->ncols;

	t->cells = ss_xrealloc(t->cells, (n + (size_t)t->ncols) * sizeof *t->cells);
	for (int i = 0; i < t->ncols; i++)
		t->cells[n + (size_t)i] = ss_xstrdup(cells[i] != NULL ? cells[i] : "-");
}

ss_table *
ss_table_new(int ncols, const char *const *headers)
{
	ss_table *t = ss_xmalloc(sizeof *t);

	t->ncols = ncols;
	t->cells = NULL;
	t->nrows = -1;
	add_cells(t, headers);
	t->nrows = 0;
	return t;
}

void
ss_table_row(ss_table *t, const char *const *cells)
{
	add_cells(t, cells);
	t->nrows++;
}

static const char *
cell(const ss_table *t, int row, int col)
{
	return t->cells[(size_t)row * (size_t)t->ncols + (size_t)col];
}

static bool
numeric(const char *s)
{
	if (strcmp(s, "-") == 0)
		return true;
	if (*s == '-')
		s++;
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Width of a column, 0 when every cell below the header is empty (the column is left
 * out), and whether every cell below the header is a number or "-" (and one a number). */
static int
column(const ss_table *t, int col, bool *right)
{
	int width = 0;
	bool empty = true, number = false;

	*right = true;
	for (int r = 0; r <= t->nrows; r++) {
		const char *s = cell(t, r, col);
		int w = (int)strlen(s);
		if (w > width)
			width = w;
		if (r == 0)
			continue;
		empty = empty && *s == '\0';
		number = number || strcmp(s, "-") != 0;
		*right = *right && numeric(s);
	}
	*right = *right && number;
	return empty && t->nrows > 0 ? 0 : width;
}

static void
print_row(const ss_table *t, int row, const int *width, const bool *right, FILE *f)
{
	int last = t->ncols - 1;
	bool first = true;

	/* no trailing blanks: the last cells that are empty are left out */
	while (last > 0 && (width[last] == 0 || *cell(t, row, last) == '\0'))
		last--;
	for (int c = 0; c <= last; c++) {
		const char *s = cell(t, row, c);
		if (width[c] == 0)
			continue;
		if (!first)
			fputs("  ", f);
		first = false;
		if (right[c])
			fprintf(f, "%*s", width[c], s);
		else if (c < last)
			fprintf(f, "%-*s", width[c], s);
		else
			fputs(s, f);
	}
	fputc('\n', f);
}

void
ss_table_print(const ss_table *t, FILE *f)
{
	int *width = ss_xmalloc((size_t)t->ncols * sizeof *width);
	bool *right = ss_xmalloc((size_t)t->ncols * sizeof *right);

	for (int c = 0; c < t->ncols; c++)
		width[c] = column(t, c, &right[c]);
	for (int r = 0; r <= t->nrows; r++)
		print_row(t, r, width, right, f);
	free(width);
	free(right);
}

void
ss_table_free(ss_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < (size_t)(t->nrows + 1) * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
