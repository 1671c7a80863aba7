/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_WRITERS_H
#define KSMSCAN_WRITERS_H

#include <stddef.h>

/* Only pointers to them here: each writer includes writer.h itself. */
struct writer;
struct cell;
struct column;

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

#endif
