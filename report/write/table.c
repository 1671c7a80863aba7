/* SPDX-License-Identifier: MIT */
/*
 * Aligned tables for people. Rows are held until the report ends so that each
 * column is as wide as its widest value; a streamed report (pages) gives its
 * widths in advance and is printed row by row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../hash/hash.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "writer.h"
#include "writers.h"

/* One output's state (struct writer's state): what used to be shared. */
struct table_state {
	const struct column *cols;	/* the columns shown (the view's) */
	size_t ncols;
	/* The view of the report's columns this table shows (tab_view()): */
	struct column *view;		/* ... the columns shown */
	size_t *pick;			/* ... each one's column in the report's */
	struct cell *cells_shown;	/* ... a row's cells in them */
	char (*cut)[128];		/* ... room for names cut to fit */
	int same;			/* ... every column, as it is */
	int stream;
	int reports;
	char **cells;	/* held rows: ncols strings each */
	int *left;		/* per column: left-aligned (text) */
	size_t nrows, capcells;
	char **notes;
	size_t nnotes;
	int fit_cols;	/* tables for people fit this width; 0: -l */
	char *hide;		/* per column: left out to fit fit_cols */
	int *need;		/* per column: its width before fitting */
	int *stream_width;	/* a streamed report's widths, fitted */
};

/* Notes for people are wrapped to this many columns. */
#define WRAP 80

/* Most columns a streamed report has (input, address, zero, the digests). */
#define TAB_STREAM_COLS (ALGO_MAX + 4)


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
static int tab_is_bar(struct table_state *t, size_t i)
{
	return (t->cols[i].flags & COL_TABLE_ONLY) && t->left[i];
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
static void tab_fit_cell(struct table_state *t, size_t i, const char *s,
			 int width, int at)
{
	int last = i + 1 == t->ncols;
	char buf[512];

	if (t->need && tab_is_bar(t, i) && t->need[i] > width &&
	    s[strspn(s, "#")] == '\0') {	/* a bar, not the header */
		/* Scale, not clip: bars keep their proportions; a bar that
		 * was drawn keeps at least one mark. */
		int n = (int)strlen(s);
		int k = (int)(((long)n * width + t->need[i] - 1) / t->need[i]);

		snprintf(buf, sizeof(buf), "%.*s", k, s);
		s = buf;
	} else if (t->need && t->left[i] && last && text_width(s) > width) {
		tab_wrap_cell(s, width, at);
		return;
	} else if (t->need && t->left[i] && text_width(s) > width) {
		s = text_shorten(s, width, buf, sizeof(buf));
	}
	tab_text(s, last && t->left[i] ? 0 : width, t->left[i]);
}

/* Print one line of cells in the given widths, without hidden columns. */
static void tab_line(struct table_state *t, const char *const *cells,
		     const int *width)
{
	int at = 0, first = 1;

	for (size_t i = 0; i < t->ncols; i++) {
		if (t->hide && t->hide[i])
			continue;
		if (!first)
			fputs("  ", stdout);
		at += first ? 0 : 2;
		tab_fit_cell(t, i, cells[i], width[i], at);
		at += width[i];
		first = 0;
	}
	putchar('\n');
}

/* The table's width: its shown columns and the two spaces between them. */
static int tab_width(struct table_state *t, const int *width)
{
	int total = -2;

	for (size_t i = 0; i < t->ncols; i++)
		if (!t->hide[i])
			total += width[i] + 2;
	return total;
}

/*
 * Narrow the widest text column that is wider than @floor_text by one column
 * (@all: also bars, to 10 columns, and the last column, which wraps, to
 * TAB_MIN_WRAP); returns 0 when none is.
 */
static int tab_narrow(struct table_state *t, int *width, int floor_text,
		      int all)
{
	size_t best = t->ncols;

	for (size_t i = 0; i < t->ncols; i++) {
		int name = text_width(t->cols[i].name);
		int last = i + 1 == t->ncols, bar = tab_is_bar(t, i);
		int floor = bar ? 10 : last && floor_text < TAB_MIN_WRAP ?
			TAB_MIN_WRAP : floor_text;

		if (t->hide[i] || !t->left[i] || width[i] <= floor ||
		    width[i] <= name || (!all && (bar || last)))
			continue;
		if (best == t->ncols || width[i] > width[best])
			best = i;
	}
	if (best == t->ncols)
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
static int tab_fit(struct table_state *t, int *width)
{
	int hidden = 0;

	memcpy(t->need, width, t->ncols * sizeof(*width));
	if (!t->fit_cols)
		return 0;
	while (tab_width(t, width) > t->fit_cols && tab_narrow(t, width, 24, 0))
		;
	for (size_t i = t->ncols; i-- > 0 && tab_width(t, width) > t->fit_cols;)
		if (t->cols[i].flags & COL_DROP) {
			t->hide[i] = 1;
			hidden++;
		}
	while (tab_width(t, width) > t->fit_cols && tab_narrow(t, width, 16, 0))
		;
	while (tab_width(t, width) > t->fit_cols &&
	       tab_narrow(t, width, TAB_MIN_TEXT, 1))
		;
	return hidden;
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

/*
 * The columns this table shows of a report's: for people (w->fit), each
 * column's people view (its short name, the columns left out or added for
 * people); with -l, all but those for people only. Returns how many.
 */
static size_t tab_view(struct table_state *t, int people,
		       const struct column *cols, size_t ncols)
{
	size_t n = 0;

	free(t->view);
	free(t->pick);
	free(t->cells_shown);
	free(t->cut);
	t->view = xcalloc(ncols + 1, sizeof(*t->view));
	t->pick = xcalloc(ncols + 1, sizeof(*t->pick));
	t->cells_shown = xcalloc(ncols + 1, sizeof(*t->cells_shown));
	t->cut = xcalloc(ncols + 1, sizeof(*t->cut));
	t->same = 1;
	for (size_t i = 0; i < ncols; i++) {
		const struct people_view *v = &cols[i].people;

		if (!column_shown(&cols[i], 1, people)) {
			t->same = 0;
			continue;
		}
		t->pick[n] = i;
		t->view[n] = cols[i];
		if (people && v->name)
			t->view[n].name = v->name;
		if (people && (v->name || v->decimals || v->nan || v->yes ||
			       v->size || v->cut))
			t->same = 0;
		n++;
	}
	return n;
}

/* A report's row in the columns this table shows. */
static const struct cell *tab_view_row(struct table_state *t, int people,
				       const struct cell *cells)
{
	if (t->same)
		return cells;
	for (size_t k = 0; k < t->ncols; k++) {
		const struct cell *c = &cells[t->pick[k]];

		t->cells_shown[k] = people ? cell_for_people(&t->view[k], c,
							     t->cut[k],
							     sizeof(t->cut[k])) : *c;
	}
	return t->cells_shown;
}

static void tab_begin(const struct writer *w, const char *report,
		      const struct column *all, size_t nall, int stream)
{
	struct table_state *t = w->state;
	size_t ncols = tab_view(t, w->fit != 0, all, nall);
	const struct column *cols = t->view;

	(void)report;
	t->fit_cols = w->fit;
	if (t->reports++)
		putchar('\n');
	t->cols = cols;
	t->ncols = ncols;
	t->stream = stream;
	t->nrows = 0;
	free(t->left);
	t->left = xcalloc(ncols, sizeof(*t->left));
	if (stream) {
		const char **names = xcalloc(ncols, sizeof(*names));
		int total = -2;

		t->stream_width = xcalloc(ncols, sizeof(*t->stream_width));
		t->hide = xcalloc(ncols, sizeof(*t->hide));
		t->need = xcalloc(ncols, sizeof(*t->need));
		for (size_t i = 0; i < ncols; i++) {
			t->need[i] = t->stream_width[i] = cols[i].width;
			names[i] = cols[i].name;
			t->left[i] = i == 0;
			total += cols[i].width + 2;
		}
		/* Streamed rows are printed at once: the input's name gives
		 * way, to no fewer than TAB_MIN_TEXT columns, then the columns
		 * a report marked COL_DROP, from the right. */
		if (t->fit_cols && total > t->fit_cols) {
			int w = t->stream_width[0] - (total - t->fit_cols);
			int least = t->stream_width[0] < TAB_MIN_TEXT ?
				    t->stream_width[0] : TAB_MIN_TEXT;

			w = w > least ? w : least;	/* never wider than it was */
			total -= t->stream_width[0] - w;
			t->stream_width[0] = w;
		}
		for (size_t i = ncols; t->fit_cols && i-- > 1 && total > t->fit_cols;)
			if (cols[i].flags & COL_DROP) {
				t->hide[i] = 1;
				total -= t->stream_width[i] + 2;
			}
		tab_line(t, names, t->stream_width);
		free((void *)names);
	}
}

static void tab_row(const struct writer *w, const struct cell *row)
{
	struct table_state *t = w->state;
	const struct cell *cells = tab_view_row(t, w->fit != 0, row);
	char buf[64];

	if (t->stream && t->ncols <= TAB_STREAM_COLS) {
		/* Streamed rows are many: print them without allocating. */
		char text[TAB_STREAM_COLS][64];
		const char *ptr[TAB_STREAM_COLS];
		int width[TAB_STREAM_COLS];

		for (size_t i = 0; i < t->ncols; i++) {
			ptr[i] = tab_cell(&cells[i], text[i], sizeof(text[i]));
			width[i] = t->stream_width[i];
		}
		tab_line(t, ptr, width);
		return;
	}
	/* The capacity counts cells: reports differ in their number of columns. */
	if ((t->nrows + 1) * t->ncols > t->capcells) {
		t->capcells = t->capcells ? t->capcells * 2 : 64;
		if (t->capcells < (t->nrows + 1) * t->ncols)
			t->capcells = (t->nrows + 1) * t->ncols;
		t->cells = xreallocarray(t->cells, t->capcells, sizeof(*t->cells));
	}
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] =
			xstrdup(tab_cell(&cells[i], buf, sizeof(buf)));
		/* The first row's kinds align the columns (a total row is text). */
		if (t->nrows == 0)
			t->left[i] = cells[i].kind == CELL_STR;
	}
	t->nrows++;
}

static void tab_total(const struct writer *w, const struct cell *cells)
{
	/* A totals row reads like any other row of the table. */
	tab_row(w, cells);
}

/* The columns of @s before @end. */
static int text_width_n(const char *s, const char *end)
{
	int w = 0;

	while (s < end && *s) {
		size_t n;

		w += text_char_cols(s, &n);
		s += n;
	}
	return w;
}

/* @s after its first @cols columns (at least one character). */
static char *text_skip(char *s, int cols)
{
	char *start = s;
	int bad;

	while (*s) {
		size_t n;
		int w = text_char_cols(s, &n);

		if (w > cols)
			break;
		cols -= w;
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

static void tab_note(const struct writer *w, const char *text)
{
	struct table_state *t = w->state;

	t->notes = xreallocarray(t->notes, t->nnotes + 1, sizeof(*t->notes));
	t->notes[t->nnotes++] = xstrdup(text);
}

/* Say which columns were left out to fit, before the report's own notes. */
static void tab_hidden_note(struct table_state *t)
{
	char text[512];
	size_t len = 0;

	len += (size_t)snprintf(text, sizeof(text), "Left out to fit %d columns "
				"(-l shows them):", t->fit_cols);
	for (size_t i = 0; i < t->ncols && len < sizeof(text); i++)
		if (t->hide[i])
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						" %s", t->cols[i].name);
	/* The first note of this table: it is printed after an empty line. */
	t->notes = xreallocarray(t->notes, t->nnotes + 1, sizeof(*t->notes));
	memmove(t->notes + 1, t->notes, t->nnotes * sizeof(*t->notes));
	t->notes[0] = xstrdup(text);
	t->nnotes++;
}

static void tab_end(const struct writer *w)
{
	struct table_state *t = w->state;
	int *width, hidden;
	const char **names;

	if (t->stream) {
		for (size_t i = 0; i < t->ncols; i++)
			if (t->hide[i]) {
				tab_hidden_note(t);
				break;
			}
		free(t->stream_width);
		free(t->hide);
		free(t->need);
		t->stream_width = NULL;
		t->hide = NULL;
		t->need = NULL;
		goto notes;
	}
	width = xcalloc(t->ncols, sizeof(*width));
	names = xcalloc(t->ncols, sizeof(*names));
	t->hide = xcalloc(t->ncols, sizeof(*t->hide));
	t->need = xcalloc(t->ncols, sizeof(*t->need));
	for (size_t i = 0; i < t->ncols; i++) {
		names[i] = t->cols[i].name;
		width[i] = text_width(names[i]);
		for (size_t r = 0; r < t->nrows; r++) {
			int w = text_width(t->cells[r * t->ncols + i]);

			if (w > width[i])
				width[i] = w;
		}
	}
	hidden = tab_fit(t, width);
	tab_line(t, names, width);
	for (size_t r = 0; r < t->nrows; r++) {
		tab_line(t, (const char *const *)&t->cells[r * t->ncols], width);
		for (size_t i = 0; i < t->ncols; i++)
			free(t->cells[r * t->ncols + i]);
	}
	if (hidden)
		tab_hidden_note(t);
	free(width);
	free((void *)names);
	free(t->hide);
	free(t->need);
	t->hide = NULL;
	t->need = NULL;
notes:
	/* Notes follow the table, after an empty line. */
	if (t->nnotes)
		putchar('\n');
	for (size_t i = 0; i < t->nnotes; i++) {
		tab_wrap(t->notes[i]);
		free(t->notes[i]);
	}
	t->nnotes = 0;
}

static void tab_finish(const struct writer *w)
{
	struct table_state *t = w->state;

	free(t->cells);
	free(t->left);
	free(t->notes);
	t->cells = NULL;
	t->capcells = 0;
	t->left = NULL;
	t->notes = NULL;
}

static void tab_close(void *state)
{
	struct table_state *t = state;

	free(t->view);
	free(t->pick);
	free(t->cells_shown);
	free(t->cut);
	free(t->left);
}

const struct writer table_writer = {
	.name = "table",
	.flags = WRITER_PEOPLE,
	.size = sizeof(struct table_state),
	.begin = tab_begin,
	.row = tab_row,
	.note = tab_note,
	.total = tab_total,
	.end = tab_end,
	.finish = tab_finish,
	.params = writer_skip_params,
	.close = tab_close,
};
