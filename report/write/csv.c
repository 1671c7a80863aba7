/* SPDX-License-Identifier: MIT */
/* RFC 4180 CSV: one header row, quoted fields where needed, CRLF line ends. */
#include <stdio.h>
#include <string.h>

#include "../../util/text.h"
#include "writer.h"
#include "writers.h"

/* One output's state (struct writer's state): what used to be shared. */
struct csv_state {
	const struct column *cols;
	size_t ncols;
};


/*
 * Whether a text cell would be taken for a formula by a spreadsheet: it
 * begins with = + - @, a tab or a carriage return (OWASP's list; a lone "-",
 * standard input's name, is no formula). Such a cell gets a leading ' so
 * that it is shown as the text it is: file and process names come from
 * anyone on the machine.
 */
static int csv_formula(const char *s)
{
	return strchr("=+@\t\r", *s) ? *s != '\0' : *s == '-' && s[1] != '\0';
}

/*
 * Print one field, quoted when it holds a comma, quote or line break. Text
 * from a dump may hold controls (ESC, BEL) that a terminal would act on, or
 * bytes that are not UTF-8: they are shown as text_shown() shows them ('?',
 * "\xHH"); tab and line breaks are CSV's own. A text
 * cell (@text) that looks like a formula is defused with a leading '.
 */
static void csv_field(const char *s, int first, int text)
{
	int quote = strpbrk(s, ",\"\r\n") != NULL;

	if (!first)
		putchar(',');
	if (quote)
		putchar('"');
	if (text && csv_formula(s))
		putchar('\'');
	while (*s) {
		char shown[TEXT_SHOWN_MAX];
		int bad;
		size_t n = text_char(s, &bad);

		if (*s == '"')
			putchar('"');
		if (*s == '\t' || *s == '\r' || *s == '\n')
			bad = 0;
		fwrite(shown, 1, text_shown(s, n, bad, shown), stdout);
		s += n;
	}
	if (quote)
		putchar('"');
}

static void csv_begin(const struct writer *w, const char *report,
		      const struct column *cols, size_t ncols, int stream)
{
	struct csv_state *c = w->state;
	int first = 1;

	(void)report;
	(void)stream;

	c->cols = cols;
	c->ncols = ncols;
	for (size_t i = 0; i < ncols; i++)
		if (column_shown(&cols[i], 0, 0)) {
			csv_field(cols[i].name, first, 0);
			first = 0;
		}
	fputs("\r\n", stdout);
}

static void csv_row(const struct writer *w, const struct cell *cells)
{
	struct csv_state *c = w->state;
	char buf[128];
	int first = 1;

	for (size_t i = 0; i < c->ncols; i++) {
		if (!column_shown(&c->cols[i], 0, 0))
			continue;
		if (cells[i].kind == CELL_STR) {
			csv_field(cells[i].s, first, 1);
		} else {
			cell_format(&cells[i], buf, sizeof(buf));
			csv_field(buf, first, 0);
		}
		first = 0;
	}
	fputs("\r\n", stdout);
}

const struct writer csv_writer = {
	.name = "csv",
	.flags = WRITER_STREAMS | WRITER_ONE_REPORT,
	.size = sizeof(struct csv_state),
	.begin = csv_begin,
	.row = csv_row,
	.note = writer_skip_note,
	.total = writer_skip_cells,
	.end = writer_skip,
	.finish = writer_skip,
	.params = writer_skip_params,
};
