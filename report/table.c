/* SPDX-License-Identifier: MIT */
/*
 * Aligned tables for people. Rows are held until the report ends so that each
 * column is as wide as its widest value; a streamed report (pages) gives its
 * widths in advance and is printed row by row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/text.h"
#include "../util/util.h"
#include "writers.h"

/* Notes for people are wrapped to this many columns. */
#define WRAP 80

/* Most columns a streamed report has (input, address, zero, the digests). */
#define TAB_STREAM_COLS (ALGO_MAX + 4)

static const struct column *tab_cols;
static size_t tab_ncols;
static int tab_stream;
static int tab_reports;
static char **tab_cells;	/* held rows: ncols strings each */
static int *tab_left;		/* per column: left-aligned (text) */
static size_t tab_nrows, tab_capcells;
static char **tab_notes;
static size_t tab_nnotes;
static int tab_fit_cols;	/* tables for people fit this width; 0: -l */
static char *tab_hide;		/* per column: left out to fit tab_fit_cols */
static int *tab_need;		/* per column: its width before fitting */
static int *tab_stream_width;	/* a streamed report's widths, fitted */

/* A text column is shortened to no fewer columns than this (or its name). */
#define TAB_MIN_TEXT 12
/* ... and a description that wraps (the last column) to no fewer than this. */
#define TAB_MIN_WRAP 20

/*
 * Print text that came from a dump (a file name in a core, a maps path):
 * as text_put() shows it (controls as '?', bytes not UTF-8 as "\xHH").
 */
static void tab_text(const char *s, int width, int left)
{
	int len = text_width(s);

	if (!left)
		for (int i = len; i < width; i++)
			putchar(' ');
	text_put(stdout, s);
	if (left)
		for (int i = len; i < width; i++)
			putchar(' ');
}

/* Whether column @i is a bar chart (for people only), which fitting scales. */
static int tab_is_bar(size_t i)
{
	return (tab_cols[i].flags & COL_TABLE_ONLY) && tab_left[i];
}

/*
 * The last column's text in lines of @width columns, the lines after the
 * first indented by @indent: cut at the last space that fits, else hard.
 */
static void tab_wrap_cell(const char *s, int width, int indent)
{
	while (text_width(s) > width) {
		const char *p = s, *space = NULL, *end;
		int bad;

		for (int w = 0; w < width; w++) {
			if (*p == ' ' && w)
				space = p;
			p += text_char(p, &bad);
		}
		end = *p == ' ' ? p : space ? space : p;
		char *line = xstrdup(s);

		line[end - s] = '\0';
		tab_text(line, 0, 1);
		free(line);
		printf("\n%*s", indent, "");
		s = *end == ' ' ? end + 1 : end;
	}
	tab_text(s, 0, 1);
}

/* One cell in @width columns: a name shortened, a bar scaled, the last
 * column's text wrapped; @at is the column it starts at. */
static void tab_fit_cell(size_t i, const char *s, int width, int at)
{
	int last = i + 1 == tab_ncols;
	char buf[512];

	if (tab_need && tab_is_bar(i) && tab_need[i] > width &&
	    s[strspn(s, "#")] == '\0') {	/* a bar, not the header */
		/* Scale, not clip: bars keep their proportions; a bar that
		 * was drawn keeps at least one mark. */
		int n = (int)strlen(s);
		int k = (int)(((long)n * width + tab_need[i] - 1) / tab_need[i]);

		snprintf(buf, sizeof(buf), "%.*s", k, s);
		s = buf;
	} else if (tab_need && tab_left[i] && last && text_width(s) > width) {
		tab_wrap_cell(s, width, at);
		return;
	} else if (tab_need && tab_left[i] && text_width(s) > width) {
		s = text_shorten(s, width, buf, sizeof(buf));
	}
	tab_text(s, last && tab_left[i] ? 0 : width, tab_left[i]);
}

/* Print one line of cells in the given widths, without hidden columns. */
static void tab_line(const char *const *cells, const int *width)
{
	int at = 0, first = 1;

	for (size_t i = 0; i < tab_ncols; i++) {
		if (tab_hide && tab_hide[i])
			continue;
		if (!first)
			fputs("  ", stdout);
		at += first ? 0 : 2;
		tab_fit_cell(i, cells[i], width[i], at);
		at += width[i];
		first = 0;
	}
	putchar('\n');
}

/* The table's width: its shown columns and the two spaces between them. */
static int tab_width(const int *width)
{
	int total = -2;

	for (size_t i = 0; i < tab_ncols; i++)
		if (!tab_hide[i])
			total += width[i] + 2;
	return total;
}

/*
 * Narrow the widest text column that is wider than @floor_text by one column
 * (@all: also bars, to 10 columns, and the last column, which wraps, to
 * TAB_MIN_WRAP); returns 0 when none is.
 */
static int tab_narrow(int *width, int floor_text, int all)
{
	size_t best = tab_ncols;

	for (size_t i = 0; i < tab_ncols; i++) {
		int name = text_width(tab_cols[i].name);
		int last = i + 1 == tab_ncols, bar = tab_is_bar(i);
		int floor = bar ? 10 : last && floor_text < TAB_MIN_WRAP ?
			TAB_MIN_WRAP : floor_text;

		if (tab_hide[i] || !tab_left[i] || width[i] <= floor ||
		    width[i] <= name || (!all && (bar || last)))
			continue;
		if (best == tab_ncols || width[i] > width[best])
			best = i;
	}
	if (best == tab_ncols)
		return 0;
	width[best]--;
	return 1;
}

/*
 * Fit a table for people in tab_fit_cols: long names are shortened first (to
 * 24 columns), then the columns a report marked COL_DROP are left out from
 * the right, then names are shortened to 16 columns, then bars are scaled,
 * the last column wrapped and names shortened further, widest first. Returns how many columns were left out.
 */
static int tab_fit(int *width)
{
	int hidden = 0;

	memcpy(tab_need, width, tab_ncols * sizeof(*width));
	if (!tab_fit_cols)
		return 0;
	while (tab_width(width) > tab_fit_cols && tab_narrow(width, 24, 0))
		;
	for (size_t i = tab_ncols; i-- > 0 && tab_width(width) > tab_fit_cols;)
		if (tab_cols[i].flags & COL_DROP) {
			tab_hide[i] = 1;
			hidden++;
		}
	while (tab_width(width) > tab_fit_cols && tab_narrow(width, 16, 0))
		;
	while (tab_width(width) > tab_fit_cols &&
	       tab_narrow(width, TAB_MIN_TEXT, 1))
		;
	return hidden;
}

void table_fit(int cols)
{
	tab_fit_cols = cols;
}

/* A cell as text: strings as they are, sizes in units of 1024, numbers
 * formatted into @buf. */
static const char *tab_cell(const struct cell *c, char *buf, size_t len)
{
	if (c->kind == CELL_STR || c->kind == CELL_DIGEST)
		return c->s;
	if (c->kind == CELL_BYTES)
		return human_bytes(c->u, buf, len);
	cell_format(c, buf, len);
	return buf;
}

static void tab_begin(const char *report, const struct column *cols,
		      size_t ncols, int stream)
{
	(void)report;
	if (tab_reports++)
		putchar('\n');
	tab_cols = cols;
	tab_ncols = ncols;
	tab_stream = stream;
	tab_nrows = 0;
	free(tab_left);
	tab_left = xcalloc(ncols, sizeof(*tab_left));
	if (stream) {
		const char **names = xcalloc(ncols, sizeof(*names));
		int total = -2;

		tab_stream_width = xcalloc(ncols, sizeof(*tab_stream_width));
		tab_hide = xcalloc(ncols, sizeof(*tab_hide));
		tab_need = xcalloc(ncols, sizeof(*tab_need));
		for (size_t i = 0; i < ncols; i++) {
			tab_need[i] = tab_stream_width[i] = cols[i].width;
			names[i] = cols[i].name;
			tab_left[i] = i == 0;
			total += cols[i].width + 2;
		}
		/* Streamed rows are printed at once: only the input's name
		 * can give way, to no fewer than TAB_MIN_TEXT columns. */
		if (tab_fit_cols && total > tab_fit_cols) {
			int w = tab_stream_width[0] - (total - tab_fit_cols);

			tab_stream_width[0] = w > TAB_MIN_TEXT ? w : TAB_MIN_TEXT;
		}
		tab_line(names, tab_stream_width);
		free((void *)names);
	}
}

static void tab_row(const struct cell *cells)
{
	char buf[64];

	if (tab_stream && tab_ncols <= TAB_STREAM_COLS) {
		/* Streamed rows are many: print them without allocating. */
		char text[TAB_STREAM_COLS][64];
		const char *ptr[TAB_STREAM_COLS];
		int width[TAB_STREAM_COLS];

		for (size_t i = 0; i < tab_ncols; i++) {
			ptr[i] = tab_cell(&cells[i], text[i], sizeof(text[i]));
			width[i] = tab_stream_width[i];
		}
		tab_line(ptr, width);
		return;
	}
	/* The capacity counts cells: reports differ in their number of columns. */
	if ((tab_nrows + 1) * tab_ncols > tab_capcells) {
		tab_capcells = tab_capcells ? tab_capcells * 2 : 64;
		if (tab_capcells < (tab_nrows + 1) * tab_ncols)
			tab_capcells = (tab_nrows + 1) * tab_ncols;
		tab_cells = xreallocarray(tab_cells, tab_capcells, sizeof(*tab_cells));
	}
	for (size_t i = 0; i < tab_ncols; i++) {
		tab_cells[tab_nrows * tab_ncols + i] =
			xstrdup(tab_cell(&cells[i], buf, sizeof(buf)));
		/* The first row's kinds align the columns (a total row is text). */
		if (tab_nrows == 0)
			tab_left[i] = cells[i].kind == CELL_STR;
	}
	tab_nrows++;
}

static void tab_total(const struct cell *cells)
{
	/* A totals row reads like any other row of the table. */
	tab_row(cells);
}

/* The columns of @s before @end. */
static int text_width_n(const char *s, const char *end)
{
	int w = 0, bad;

	while (s < end && *s) {
		s += text_char(s, &bad);
		w += text_cols(bad);
	}
	return w;
}

/* @s after its first @cols columns (at least one character). */
static char *text_skip(char *s, int cols)
{
	char *start = s;
	int bad;

	while (*s) {
		size_t n = text_char(s, &bad);

		if (text_cols(bad) > cols)
			break;
		cols -= text_cols(bad);
		s += n;
	}
	return s == start && *s ? s + text_char(s, &bad) : s;
}

/*
 * A note for people, wrapped at spaces to fit WRAP columns; lines after the
 * first are indented, so that each note reads as one block.
 */
static void tab_wrap(const char *text)
{
	if (strncmp(text, NOTE_SHELL, strlen(NOTE_SHELL)) == 0) {
		/* shell_quote() made it valid UTF-8 without controls; a cut or
		 * a '?' would change what it runs. */
		printf("  %s\n", text + strlen(NOTE_SHELL));
		return;
	}
	char *s = xstrdup(text), *line = s;
	int indent = 2, first = 1;

	while (*line) {
		int room = WRAP - (first ? 0 : indent);
		char *cut = NULL, *p = line;

		/* The last space within the room, or the first after it; w
		 * counts characters (a UTF-8 one ends before a non-continuation
		 * byte). */
		for (int w = 0; *p && (w <= room || !cut); p++) {
			if (*p == ' ' && (w <= room || !cut))
				cut = p;
			if (((unsigned char)p[1] & 0xC0) != 0x80)
				w++;
		}
		if (!*p && text_width(line) <= room)
			cut = NULL;
		if (cut && text_width_n(line, cut) > room)
			cut = NULL;	/* a word wider than the line: cut it */
		int hard = !cut && text_width(line) > room;
		char *end = hard ? text_skip(line, room) : NULL, keep = 0;

		if (cut)
			*cut = '\0';
		if (hard) {
			keep = *end;
			*end = '\0';
		}
		printf("%*s", first ? 0 : indent, "");
		tab_text(line, 0, 1);
		putchar('\n');
		if (hard)
			*end = keep;
		line = cut ? cut + 1 : hard ? end : line + strlen(line);
		first = 0;
	}
	free(s);
}

static void tab_note(const char *text)
{
	tab_notes = xreallocarray(tab_notes, tab_nnotes + 1, sizeof(*tab_notes));
	tab_notes[tab_nnotes++] = xstrdup(text);
}

/* Say which columns were left out to fit, before the report's own notes. */
static void tab_hidden_note(void)
{
	char text[512];
	size_t len = 0;

	len += (size_t)snprintf(text, sizeof(text), "Left out to fit %d columns "
				"(-l shows them):", tab_fit_cols);
	for (size_t i = 0; i < tab_ncols && len < sizeof(text); i++)
		if (tab_hide[i])
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						" %s", tab_cols[i].name);
	/* The first note of this table: it is printed after an empty line. */
	tab_notes = xreallocarray(tab_notes, tab_nnotes + 1, sizeof(*tab_notes));
	memmove(tab_notes + 1, tab_notes, tab_nnotes * sizeof(*tab_notes));
	tab_notes[0] = xstrdup(text);
	tab_nnotes++;
}

static void tab_end(void)
{
	int *width, hidden;
	const char **names;

	if (tab_stream) {
		free(tab_stream_width);
		free(tab_hide);
		free(tab_need);
		tab_stream_width = NULL;
		tab_hide = NULL;
		tab_need = NULL;
		goto notes;
	}
	width = xcalloc(tab_ncols, sizeof(*width));
	names = xcalloc(tab_ncols, sizeof(*names));
	tab_hide = xcalloc(tab_ncols, sizeof(*tab_hide));
	tab_need = xcalloc(tab_ncols, sizeof(*tab_need));
	for (size_t i = 0; i < tab_ncols; i++) {
		names[i] = tab_cols[i].name;
		width[i] = text_width(names[i]);
		for (size_t r = 0; r < tab_nrows; r++) {
			int w = text_width(tab_cells[r * tab_ncols + i]);

			if (w > width[i])
				width[i] = w;
		}
	}
	hidden = tab_fit(width);
	tab_line(names, width);
	for (size_t r = 0; r < tab_nrows; r++) {
		tab_line((const char *const *)&tab_cells[r * tab_ncols], width);
		for (size_t i = 0; i < tab_ncols; i++)
			free(tab_cells[r * tab_ncols + i]);
	}
	if (hidden)
		tab_hidden_note();
	free(width);
	free((void *)names);
	free(tab_hide);
	free(tab_need);
	tab_hide = NULL;
	tab_need = NULL;
notes:
	/* Notes follow the table, after an empty line. */
	if (tab_nnotes)
		putchar('\n');
	for (size_t i = 0; i < tab_nnotes; i++) {
		tab_wrap(tab_notes[i]);
		free(tab_notes[i]);
	}
	tab_nnotes = 0;
}

static void tab_finish(void)
{
	free(tab_cells);
	free(tab_left);
	free(tab_notes);
	tab_cells = NULL;
	tab_capcells = 0;
	tab_left = NULL;
	tab_notes = NULL;
}

/* The run's parameters are for machines that read JSON. */
static void tab_params(const struct column *cols, const struct cell *cells,
		      size_t ncols)
{
	(void)cols;
	(void)cells;
	(void)ncols;
}

const struct writer table_writer = {
	.name = "table",
	.begin = tab_begin,
	.row = tab_row,
	.note = tab_note,
	.total = tab_total,
	.end = tab_end,
	.finish = tab_finish,
	.params = tab_params,
};
