/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_COMPARE_H
#define KSMSCAN_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "forecast.h"

/* How a check ends: its exit status (ksmscan(1), EXIT STATUS). */
enum check_status {
	CHECK_WITHIN = 0,	/* every figure within the tolerance */
	CHECK_OUTSIDE = 1,	/* some figure outside, or a process gone */
	CHECK_NOT_FORECAST = 2,	/* the file is not a forecast */
	CHECK_UNCOMPARABLE = 3,	/* KSM was unmerged or restarted since, or
				 * the kernel has no KSM */
};

/* How far a figure may be from its forecast and still be within. */
struct check_tolerance {
	double percent;		/* |error_percent| at most this, or */
	uint64_t pages;		/* |actual - forecast| at most this many pages
				 * (a figure in bytes: its difference in
				 * pages, rounded to the nearest) */
};

/* One figure of the host ("*") or of a process, forecast against actual. */
struct check_row {
	char input[32];		/* "*" or "pid:N" */
	const char *figure;	/* pages_shared, ksm_rmap_items, ... */
	double forecast;
	double actual;		/* NaN: the process is gone or unreadable */
	double error;		/* percent; +-inf if forecast 0; NaN if gone */
	uint64_t scan;		/* the forecast's full scan compared with */
	int within;		/* within the tolerance */
};

/* A whole check. */
struct check_result {
	struct check_row *rows;
	size_t nrows, outside;
	size_t gone;		/* processes exited, or their pid another's */
	size_t unreadable;	/* processes whose ksm_stat this user may not
				 * read */
	struct check_tolerance tolerance;
	uint64_t done;		/* ksmd's full scans since the forecast began */
	uint64_t scan;		/* the forecast's scan the host is compared at */
	uint64_t last;		/* the forecast's last full scan */
	enum check_status status;
};

/**
 * check_compare() - compare a forecast with the kernel now, and say on
 * standard error what makes the comparison unfair (other settings, pages
 * merged elsewhere, a process gone, more full scans than the forecast).
 * @path: the forecast's file, for messages
 * @f: the forecast
 * @a: the kernel now
 * @t: the tolerance
 * @c: filled in (check_result_free() it); no rows when uncomparable
 *
 * Return: c->status: CHECK_WITHIN, CHECK_OUTSIDE or CHECK_UNCOMPARABLE
 * (full_scans went back: said on standard error, whatever -q).
 */
enum check_status check_compare(const char *path, const struct forecast *f,
				const struct forecast_actual *a,
				const struct check_tolerance *t,
				struct check_result *c);

/**
 * check_result_free() - free a check's rows.
 * @c: the check
 */
void check_result_free(struct check_result *c);

#endif
