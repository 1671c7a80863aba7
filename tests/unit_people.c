/* SPDX-License-Identifier: MIT */
/*
 * Unit test of what a table for people makes of a report's columns
 * (report/write/cell.c): column_shown() for each kind of column and reader,
 * and cell_for_people() for each part of a people view. The expected texts
 * are written by hand (a page is 4096 bytes; sizes in units of 1024 with one
 * decimal, as human_bytes() prints them); prints the failures and last
 * "N passed, N failed", like the Python suites.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../report/write/writer.h"
#include "../report/write/writers.h"
#include "../util/text.h"

#include "unit.h"

/* The cell as a table prints it: sizes in units, the rest formatted. */
static const char *shown(const struct cell *c, char *buf, size_t len)
{
	if (c->kind == CELL_STR)
		return c->s;
	if (c->kind == CELL_BYTES)
		return human_bytes(c->u, buf, len);
	cell_format(c, buf, len);
	return buf;
}

static void view(const struct column *col, struct cell in, const char *exp,
		 const char *what)
{
	char cut[128], buf[64], line[200];
	struct cell out = cell_for_people(col, &in, cut, sizeof(cut));
	const char *got = shown(&out, buf, sizeof(buf));

	snprintf(line, sizeof(line), "%s: got '%s', expected '%s'", what, got, exp);
	check(strcmp(got, exp) == 0, line);
}

static void shown_where(void)
{
	static const struct column plain = COL("pages");
	static const struct column bar = COL_F("bar", COL_TABLE_ONLY);
	static const struct column only = COL_F("saved", COL_PEOPLE_ONLY);
	static const struct column not = COL_F("apply", COL_NOT_PEOPLE);
	/* for each column: CSV/JSON, -l, a table for people */
	const struct { const struct column *c; int data, wide, people; } cases[] = {
		{ &plain, 1, 1, 1 }, { &bar, 0, 1, 1 },
		{ &only, 0, 0, 1 }, { &not, 1, 1, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[100];

		snprintf(what, sizeof(what), "%s: shown in data, -l, people",
			 cases[i].c->name);
		check(column_shown(cases[i].c, 0, 0) == cases[i].data &&
		   column_shown(cases[i].c, 1, 0) == cases[i].wide &&
		   column_shown(cases[i].c, 1, 1) == cases[i].people, what);
	}
}

static void views(void)
{
	static const struct column secs = { "seconds_to_target", 0, 0,
		{ .decimals = DECIMALS(0), .nan = "never" } };
	static const struct column pct = { "error_percent", 0, 0,
		{ .decimals = DECIMALS(1) } };
	static const struct column yes = { "within", 0, 0,
		{ .no = "no", .yes = "yes" } };
	static const struct column pages = { "pages", 0, 0, { .size = SIZE_PAGES } };
	static const struct column bytes = { "zram", 0, 0, { .size = SIZE_BYTES } };
	static const struct column cut = { "input", 0, 0, { .cut = 12 } };
	static const struct column plain = COL("pages");

	view(&secs, cell_real(335.6, 3), "336", "decimals 0 rounds");
	view(&secs, cell_real(NAN, 3), "never", "a NaN is its word");
	view(&pct, cell_real(-6.66666, 3), "-6.7", "decimals 1");
	view(&pct, cell_real(NAN, 3), "nan", "a NaN without a word stays");
	view(&yes, cell_uint(1), "yes", "1 is yes");
	view(&yes, cell_uint(0), "no", "0 is no");
	view(&yes, cell_uint(7), "7", "a number other than 0 and 1 stays");
	view(&pages, cell_uint(256), "1.0M", "256 pages are 1 MiB");
	view(&pages, cell_uint(3), "12.0K", "3 pages are 12 KiB");
	view(&bytes, cell_uint(1536), "1.5K", "1536 bytes");
	view(&plain, cell_uint(256), "256", "a plain column is as it is");
	view(&plain, cell_real(1.23456, 4), "1.2346", "... its reals too");
	view(&cut, cell_str("short"), "short", "a short name is whole");
	{
		char cutbuf[128];
		struct cell in = cell_str("a-very-long-name-of-a-process");
		struct cell out = cell_for_people(&cut, &in, cutbuf, sizeof(cutbuf));

		check(out.kind == CELL_STR && text_width(out.s) == 12 &&
		   strncmp(out.s, "a-very", 3) == 0,
		   "a long name is cut to its 12 columns");
	}
}

int main(void)
{
	shown_where();
	views();
	return unit_done();
}
