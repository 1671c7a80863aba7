/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_OPTABLE_H
#define KSMSCAN_OPTABLE_H

#include <stddef.h>


/*
 * One row per option (options.c holds the table; optparse.c reads it).
 * Simple options name the field they fill and its range; the others have
 * a handler. Adding an option is adding a row (docs/architecture.md).
 */

/* How a value is read. */
enum opt_kind {
	OK_FLAG,	/* no value: the int field becomes @lo */
	OK_STRING,	/* the text as it is, into a const char * field */
	OK_COUNT,	/* a whole number from @lo to @hi (K/M/G/T suffixes) */
	OK_SIZE,	/* bytes: 64G, 1.8G, 512M (parse_size) */
	OK_DURATION,	/* seconds: 60s, 0.5s, 2m, 2.5us, from @lo to @hi */
	OK_HANDLER,	/* the row's handler reads it */
};

/* The C type of a simple option's field. */
enum opt_field { OF_INT, OF_UNSIGNED, OF_SIZE_T, OF_U64, OF_DOUBLE, OF_STRING };

/* The forms of the usage line an option is listed in. */
enum {
	FORM_SCAN = 1,		/* ksmscan [options] file ... */
	FORM_SERIES = 2,	/* ksmscan --series ... snapshot ... */
	FORM_LIVE = 4,		/* ksmscan -p pid --interval=d --count=n */
	FORM_BENCH = 8,		/* ksmscan --bench */
	FORM_CHECK = 16,	/* ksmscan --check=forecast.json */
};

struct opt_row;
struct prefs;

/* A handler: read @arg (NULL for an option without a value) into @p. */
typedef void opt_handler(struct prefs *p, const struct opt_row *row,
			 const char *arg);

struct opt_row {
	const char *name;	/* the long name, without "--" */
	char key;		/* the short letter, or 0 */
	const char *arg;	/* the value's name in --help ("N"), NULL: none */
	enum opt_kind kind;
	enum opt_field field;	/* simple kinds: the field's type ... */
	size_t offset;		/* ... and place in struct prefs */
	double lo, hi;		/* the range (OK_FLAG: lo is the value set) */
	opt_handler *handler;	/* OK_HANDLER, or after a simple kind */
	const char *wants;	/* a range error: "--NAME wants WANTS, not 'X'" */
	const char *help;	/* --help's words, lines split by '\n' */
	unsigned forms;		/* FORM_ bits: where the usage line lists it */
	int ksmd;		/* a setting of ksmd: it needs a series */
};

/**
 * opt_table() - the table of options, in --help's order.
 * @n: set to its rows
 */
const struct opt_row *opt_table(size_t *n);

/**
 * opt_help_list() - the help of -f, -o and -r, whose values come from the
 * readers', the writers' and the reports' tables: printed after the
 * option's column (names.c).
 * @row: the row
 *
 * Return: 1 if it printed the row's help, 0 if the row's text stands.
 */
int opt_help_list(const struct opt_row *row);

#endif
