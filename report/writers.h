/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_WRITERS_H
#define KSMSCAN_WRITERS_H

#include <stddef.h>

#include "report.h"

/* The output formats, one file each. */
extern const struct writer table_writer;
extern const struct writer csv_writer;
extern const struct writer json_writer;
extern const struct writer openmetrics_writer;
extern const struct writer sh_writer;
extern const struct writer tmpfiles_writer;

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
