/* SPDX-License-Identifier: MIT */
/*
 * JSON: one object with a key per report, each a list of row objects keyed by
 * the CSV column names. Rows are printed as they come, so streamed reports of
 * millions of pages need no memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/text.h"
#include "writers.h"

static const struct column *json_cols;
static size_t json_ncols;
static int json_reports;	/* reports begun so far */
static int json_rows;		/* rows of the current report */

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

static void json_begin(const char *report, const struct column *cols,
		       size_t ncols, int stream)
{
	(void)stream;
	fputs(json_reports++ ? ",\n" : "{\n", stdout);
	json_string(report);
	fputs(": [", stdout);
	json_cols = cols;
	json_ncols = ncols;
	json_rows = 0;
}

/* The members of an object: one per column, named by it. */
static void json_members(const struct column *cols, const struct cell *cells,
			 size_t ncols)
{
	char buf[128];
	int first = 1;

	for (size_t i = 0; i < ncols; i++) {
		if (cols[i].flags & COL_TABLE_ONLY)
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

static void json_row(const struct cell *cells)
{
	fputs(json_rows++ ? ",\n  {" : "\n  {", stdout);
	json_members(json_cols, cells, json_ncols);
	putchar('}');
}

static void json_params(const struct column *cols, const struct cell *cells,
			size_t ncols)
{
	fputs(json_reports++ ? ",\n" : "{\n", stdout);
	json_string("parameters");
	fputs(": {", stdout);
	json_members(cols, cells, ncols);
	putchar('}');
}

static void json_note(const char *text)
{
	(void)text;
}

static void json_total(const struct cell *cells)
{
	(void)cells;
}

static void json_end(void)
{
	fputs(json_rows ? "\n]" : "]", stdout);
}

static void json_finish(void)
{
	fputs(json_reports ? "\n}\n" : "{}\n", stdout);
}

const struct writer json_writer = {
	.name = "json",
	.begin = json_begin,
	.row = json_row,
	.note = json_note,
	.total = json_total,
	.end = json_end,
	.finish = json_finish,
	.params = json_params,
};
