/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_CELL_H
#define KSMSCAN_CELL_H

#include <stdint.h>

/*
 * What a report gives a writer (writer.h): rows of typed cells under named
 * columns, each column with what a table for people makes of it.
 */

/* What a cell holds. */
enum cell_kind {
	CELL_STR,	/* text, left-aligned in tables, quoted in JSON */
	CELL_UINT,	/* unsigned integer */
	CELL_INT,	/* signed integer */
	CELL_REAL,	/* real number printed with prec decimals (prec < 0: %g) */
	CELL_HEX,	/* unsigned integer printed as 0x-prefixed hex, a string in JSON */
	CELL_DIGEST,	/* hex digest text, a string in JSON, right-aligned in tables */
	CELL_BYTES,	/* a size: the number of bytes, in tables K/M/G/T of 1024 */
};

/* One value of a row. */
struct cell {
	enum cell_kind kind;
	const char *s;		/* CELL_STR, CELL_DIGEST */
	uint64_t u;		/* CELL_UINT, CELL_HEX, CELL_BYTES */
	int64_t i;		/* CELL_INT */
	double r;		/* CELL_REAL */
	int prec;		/* CELL_REAL: decimals, or -1 for 6 significant digits */
};

/*
 * What a table for people makes of a column (-l, CSV, JSON and OpenMetrics
 * show the column as the rows give it). The report gives each row once, with
 * every figure; the table writer derives what people read from this.
 */
struct people_view {
	const char *name;	/* a short name; NULL: the column's */
	int decimals;		/* a real's decimals, as DECIMALS(n); 0: the row's */
	const char *nan;	/* a NaN (never reached, gone, unknown) as this word */
	const char *no, *yes;	/* 0 and 1 as these words; NULL: the number */
	int size;		/* shown as a size in units of 1024: SIZE_PAGES, a
				 * count of pages, or SIZE_BYTES; 0: as it is */
	int cut;		/* a name cut in the middle to this many columns */
};

/* struct people_view's decimals: @n decimals (0 would mean the row's). */
#define DECIMALS(n) ((n) + 1)
/* struct people_view's size. */
#define SIZE_PAGES 1
#define SIZE_BYTES 2

/* A column: its name (fixed: see the README's reports), for streamed reports
 * a width, and what people see of it. */
struct column {
	const char *name;
	int width;		/* table width for streamed rows; 0: measure the rows */
	int flags;		/* COL_TABLE_ONLY, COL_DROP, COL_PEOPLE_ONLY,
				 * COL_NOT_PEOPLE */
	struct people_view people;
};

/* A column of its name alone, or with flags. */
#define COL(n) { n, 0, 0, { 0 } }
#define COL_F(n, f) { n, 0, f, { 0 } }

/* For tables only (a bar chart): not in CSV or JSON. */
#define COL_TABLE_ONLY 1
/* A table for people may leave it out to fit 80 columns (a note names it;
 * -l shows it). */
#define COL_DROP 2
/* Only in the table for people (a figure said another way, such as a size
 * from two counters): not in -l, CSV or JSON. */
#define COL_PEOPLE_ONLY 4
/* Never in the table for people (-l shows it). */
#define COL_NOT_PEOPLE 8

/* Cell constructors, so that reports read as lists of values. */

/** cell_str() - a text cell. */
struct cell cell_str(const char *s);
/** cell_uint() - an unsigned integer cell. */
struct cell cell_uint(uint64_t u);
/** cell_int() - a signed integer cell. */
struct cell cell_int(int64_t i);
/** cell_real() - a real cell with @prec decimals (-1: 6 significant digits). */
struct cell cell_real(double r, int prec);
/** cell_hex() - an address cell, printed 0x-prefixed. */
struct cell cell_hex(uint64_t u);
/** cell_digest() - a digest cell holding hex text. */
struct cell cell_digest(const char *s);
/** cell_bytes() - a size in bytes, which tables show in units of 1024. */
struct cell cell_bytes(uint64_t u);

/**
 * column_shown() - whether an output shows a column.
 * @c: the column
 * @table: the output is a table (its bar charts too)
 * @people: ... for people (without -l): its people view
 */
int column_shown(const struct column *c, int table, int people);

/**
 * cell_for_people() - a cell as the table for people shows it: its column's
 * people view applied (decimals, words for NaN, 0 and 1, sizes, names cut).
 * @c: the column
 * @in: the row's cell
 * @buf: room for a name cut to fit
 * @len: size of @buf
 */
struct cell cell_for_people(const struct column *c, const struct cell *in,
			    char *buf, size_t len);

/**
 * cell_format() - a cell's value as text, as CSV and tables print it.
 * @c: the cell
 * @buf: destination
 * @len: size of @buf
 *
 * Return: snprintf()'s count.
 */
int cell_format(const struct cell *c, char *buf, size_t len);

#endif
