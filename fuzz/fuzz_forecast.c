/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the forecast reader of --check (check/forecast.c):
 * arbitrary bytes as the JSON a live series wrote. What it accepts holds
 * together: full scans 0, 1, 2, ... in order, at least one process, each
 * with a pid; what it refuses says why.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../check/forecast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forecast f;
	char why[300];

	if (forecast_parse((const char *)data, size, &f, why, sizeof(why)) < 0) {
		if (!why[0] || f.scans || f.procs)
			abort();	/* refused: a reason, nothing kept */
		return 0;
	}
	if (f.nscans < 2 || f.scans[0].scan != 0 || !f.nprocs)
		abort();
	for (size_t k = 1; k < f.nscans; k++)
		if (f.scans[k].scan != k)
			abort();
	for (size_t i = 0; i < f.nprocs; i++)
		if (f.procs[i].pid < 1 || f.procs[i].start_time < 0)
			abort();
	forecast_free(&f);
	return 0;
}
