/* SPDX-License-Identifier: MIT */
/*
 * The writers' table: the one place an output format is found by its name
 * (-o NAME, --csv, --json); everything after asks the row's flags. Then an
 * output's instance, what a format does without, and the final check of
 * standard output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "writer.h"
#include "writers.h"

/* The formats; the first is the default (writer_default()). */
static const struct writer *const writers[] = {
	&table_writer,
	&csv_writer,
	&json_writer,
	&openmetrics_writer,
	&sh_writer,
	&tmpfiles_writer,
};

const struct writer *writer_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (strcmp(writers[i]->name, name) == 0)
			return writers[i];
	return NULL;
}

const struct writer *writer_default(void)
{
	return writers[0];
}

const char *writer_name(size_t i)
{
	return i < sizeof(writers) / sizeof(writers[0]) ? writers[i]->name : NULL;
}

/* The operations a format does without (a note in CSV, params in a table). */
void writer_skip(const struct writer *w)
{
	(void)w;
}

void writer_skip_note(const struct writer *w, const char *text)
{
	(void)w, (void)text;
}

void writer_skip_cells(const struct writer *w, const struct cell *cells)
{
	(void)w, (void)cells;
}

void writer_skip_params(const struct writer *w, const struct column *cols,
			const struct cell *cells, size_t ncols)
{
	(void)w, (void)cols, (void)cells, (void)ncols;
}

struct writer *writer_open(const struct writer *format, int fit)
{
	struct writer *w = xmalloc(sizeof(*w));

	*w = *format;
	w->state = format->size ? xcalloc(1, format->size) : NULL;
	w->fit = fit;
	return w;
}

void writer_close(struct writer *w)
{
	if (!w)
		return;
	if (w->close)
		w->close(w->state);
	free(w->state);
	free(w);
}

int output_close(void)
{
	/* Flush first: an error may only show when the last buffer is written. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error("standard output: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
