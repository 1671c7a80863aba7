/* SPDX-License-Identifier: MIT */
/*
 * JSON: one object with a key per report, each a list of row objects keyed by
 * the CSV column names. Rows are printed as they come, so streamed reports of
 * millions of pages need no memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../../util/text.h"
#include "writer.h"
#include "writers.h"

/* One output's state (struct writer's state): what used to be shared. */
struct json_state {
	const struct column *cols;
	size_t ncols;
	int reports;	/* reports begun so far */
	int rows;		/* rows of the current report */
};


/*
 * Print a JSON string with the escapes RFC 8259 requires. Text from a dump
 * (file names in a core) may not be UTF-8: each byte that is not becomes
 * U+FFFD, so the output is always valid JSON; controls, C1 and
 * bidirectional controls are written as \u escapes (text_decode() says
 * which), so a terminal showing the JSON acts on none of them.
 */
static void json_string(const char *s)
{
	putchar('"');
	while (*s) {
		uint32_t cp;
		int bad;
		size_t n = text_decode(s, &cp, &bad);

		if (bad == TEXT_BYTE)
			fputs("\\ufffd", stdout);
		else if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (bad)
			printf("\\u%04x", (unsigned)cp);
		else
			fwrite(s, 1, n, stdout);
		s += n;
	}
	putchar('"');
}

static void json_begin(const struct writer *w, const char *report,
		       const struct column *cols, size_t ncols, int stream)
{
	struct json_state *j = w->state;

	(void)stream;
	fputs(j->reports++ ? ",\n" : "{\n", stdout);
	json_string(report);
	fputs(": [", stdout);
	j->cols = cols;
	j->ncols = ncols;
	j->rows = 0;
}

/* The members of an object: one per column, named by it. */
static void json_members(const struct column *cols, const struct cell *cells,
			 size_t ncols)
{
	char buf[128];
	int first = 1;

	for (size_t i = 0; i < ncols; i++) {
		if (!column_shown(&cols[i], 0, 0))
			continue;
		if (!first)
			fputs(", ", stdout);
		first = 0;
		json_string(cols[i].name);
		fputs(": ", stdout);
		switch (cells[i].kind) {
		case CELL_STR:
			json_string(cells[i].s);
			break;
		case CELL_DIGEST:
		case CELL_HEX:
			cell_format(&cells[i], buf, sizeof(buf));
			json_string(buf);
			break;
		case CELL_REAL:	/* JSON has no NaN: a time never reached */
			if (!isfinite(cells[i].r)) {
				fputs("null", stdout);
				break;
			}
			/* fall through */
		default:
			cell_format(&cells[i], buf, sizeof(buf));
			fputs(buf, stdout);
			break;
		}
	}
}

static void json_row(const struct writer *w, const struct cell *cells)
{
	struct json_state *j = w->state;

	fputs(j->rows++ ? ",\n  {" : "\n  {", stdout);
	json_members(j->cols, cells, j->ncols);
	putchar('}');
}

static void json_params(const struct writer *w, const struct column *cols,
			const struct cell *cells, size_t ncols)
{
	struct json_state *j = w->state;

	fputs(j->reports++ ? ",\n" : "{\n", stdout);
	json_string("parameters");
	fputs(": {", stdout);
	json_members(cols, cells, ncols);
	putchar('}');
}

static void json_end(const struct writer *w)
{
	struct json_state *j = w->state;

	fputs(j->rows ? "\n]" : "]", stdout);
}

static void json_finish(const struct writer *w)
{
	struct json_state *j = w->state;

	fputs(j->reports ? "\n}\n" : "{}\n", stdout);
}

const struct writer json_writer = {
	.name = "json",
	.flags = WRITER_STREAMS,
	.size = sizeof(struct json_state),
	.begin = json_begin,
	.row = json_row,
	.note = writer_skip_note,
	.total = writer_skip_cells,
	.end = json_end,
	.finish = json_finish,
	.params = json_params,
};
