/* SPDX-License-Identifier: MIT */
/*
 * What every C unit test shares: its counts, one check, and the closing
 * line tests/run_all.py reads ("N passed, N failed"). Included by one test
 * program each, so its statics are that program's own.
 */
#ifndef KSMSCAN_TESTS_UNIT_H
#define KSMSCAN_TESTS_UNIT_H

#include <stdio.h>

static unsigned long passed, failed;

/* One check: counted, and named on a FAIL line when it fails. */
static void check(int ok, const char *what)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL %s\n", what);
}

/* The closing line; the program's exit status (1 when a check failed). */
static int unit_done(void)
{
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}

#endif
