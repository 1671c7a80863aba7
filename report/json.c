/* SPDX-License-Identifier: MIT */
/*
 * JSON: one object with a key per report, each a list of row objects keyed by
 * the CSV column names. Rows are printed as they come, so streamed reports of
 * millions of pages need no memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "writers.h"

static const struct column *json_cols;
static size_t json_ncols;
static int json_reports;	/* reports begun so far */
static int json_rows;		/* rows of the current report */

/* Length of the valid UTF-8 sequence at @p, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * Print a JSON string with the escapes RFC 8259 requires. Text from a dump
 * (file names in a core) may not be UTF-8: each invalid byte becomes U+FFFD,
 * so the output is always valid JSON.
 */
static void json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	while (*p) {
		size_t n = utf8_len(p);

		if (n == 0) {
			fputs("\\ufffd", stdout);
			p++;
		} else if (*p == '"' || *p == '\\') {
			printf("\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			printf("\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, stdout);
			p += n;
		}
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
