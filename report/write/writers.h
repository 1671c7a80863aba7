/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_WRITERS_H
#define KSMSCAN_WRITERS_H

#include <stddef.h>

#include "writer.h"

/* The output formats, one file each, and their table (writer.c). */
extern const struct writer table_writer;
extern const struct writer csv_writer;
extern const struct writer json_writer;
extern const struct writer openmetrics_writer;
extern const struct writer sh_writer;
extern const struct writer tmpfiles_writer;

/* What a format does without: writer_skip() for end() and finish(),
 * writer_skip_note(), writer_skip_cells() for total(), writer_skip_params(). */
/** writer_skip() - nothing, for an end() or finish() a format needs not. */
void writer_skip(const struct writer *w);
/** writer_skip_note() - nothing, for a format without notes. */
void writer_skip_note(const struct writer *w, const char *text);
/** writer_skip_cells() - nothing, for a format without totals rows. */
void writer_skip_cells(const struct writer *w, const struct cell *cells);
/** writer_skip_params() - nothing, for a format without parameters. */
void writer_skip_params(const struct writer *w, const struct column *cols,
			const struct cell *cells, size_t ncols);

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
