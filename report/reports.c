/* SPDX-License-Identifier: MIT */
/*
 * The table of reports -r can name, in the order they are printed. Adding a
 * report: write report/ROOM/NAME.c (figures/, contents/, series/ or host/,
 * by what it needs) with a sink and NAME_create(), declare that in
 * report.h, and add its row here.
 */
#include <string.h>

#include "report.h"

static const struct report reports[] = {
	/* pages first: its rows stream during the scan, before any other report */
	{ "pages", pages_create, 0 },
	{ "summary", summary_create, 0 },
	{ "histogram", histogram_create, 0 },
	{ "regions", regions_create, 0 },
	{ "top", top_create, 0 },
	{ "tree", tree_create, 0 },
	{ "compress", compress_create, 0 },
	{ "matrix", matrix_create, 0 },
	{ "contents", contents_create, 0 },
	{ "sketch", sketch_create, 0 },
	{ "exposure", exposure_create, REPORT_DOMAINS },
	{ "mitigations", mitigations_create, REPORT_DOMAINS },
	{ "doctor", doctor_create, 0 },
	{ "thp", thp_create, 0 },
	{ "numa", numa_create, 0 },
	{ "timeline", timeline_create, REPORT_SERIES },
	{ "processes", processes_create, REPORT_SERIES },
	{ "volatility", volatility_create, REPORT_SERIES },
	{ "policies", policies_create, REPORT_SERIES },
	{ "advise", advise_create, REPORT_SERIES },
};
_Static_assert(sizeof(reports) / sizeof(reports[0]) <= REPORTS_MAX,
	       "more reports than REPORTS_MAX: widen the selection's bit mask");

const struct report *report_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
		if (strlen(reports[i].name) == len &&
		    strncmp(reports[i].name, name, len) == 0)
			return &reports[i];
	return NULL;
}

size_t report_count(void)
{
	return sizeof(reports) / sizeof(reports[0]);
}

const struct report *report_get(size_t i)
{
	return &reports[i];
}
