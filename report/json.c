/* SPDX-License-Identifier: MIT */
/*
 * JSON: one object with a key per report, each a list of row objects keyed by
 * the CSV column names. Rows are printed as they come, so streamed reports of
 * millions of pages need no memory.
 */
#include <stdio.h>

#include "writers.h"

static const struct column *json_cols;
static size_t json_ncols;
static int json_reports;	/* reports begun so far */
static int json_rows;		/* rows of the current report */

/* Print a JSON string with the escapes RFC 8259 requires. */
static void json_string(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
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

static void json_row(const struct cell *cells)
{
	char buf[128];

	int first = 1;

	fputs(json_rows++ ? ",\n  {" : "\n  {", stdout);
	for (size_t i = 0; i < json_ncols; i++) {
		if (json_cols[i].table_only)
			continue;
		if (!first)
			fputs(", ", stdout);
		first = 0;
		json_string(json_cols[i].name);
		fputs(": ", stdout);
		switch (cells[i].kind) {
		case CELL_STR:
		case CELL_DIGEST:
			json_string(cells[i].s);
			break;
		case CELL_HEX:
			cell_format(&cells[i], buf, sizeof(buf));
			json_string(buf);
			break;
		default:
			cell_format(&cells[i], buf, sizeof(buf));
			fputs(buf, stdout);
			break;
		}
	}
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
};
