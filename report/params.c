/* SPDX-License-Identifier: MIT */
/* The run's parameters, for JSON's "parameters": what the figures depend on. */
#include <stdio.h>
#include <string.h>

#include "../compress/compress.h"
#include "../model/zram.h"
#include "../scan/series.h"
#include "report.h"
#include "write/cell.h"
#include "write/writer.h"

/* The names of @n table entries, comma-separated, into @buf. */
static void names(char *buf, size_t len, const char *const *v, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 i ? "," : "", v[i]);
}

/* Knobs of every tuner at most, and a knob's column name at most. */
#define KNOBS_MAX (TUNERS_MAX * TUNER_KNOBS_MAX)
#define KNOB_NAME_MAX 64

/*
 * Each tuner's knobs, after --policy's list: a column each, named as its
 * option with '_' for '-', and its value in the tuner's settings. Return:
 * how many.
 */
static size_t knob_cells(const struct series_params *sp, struct column *cols,
			 char (*name)[KNOB_NAME_MAX], struct cell *cells)
{
	const struct policy_ops *ops;
	size_t n = 0;

	for (size_t t = 0; (ops = policy_at(t)); t++)
		for (size_t k = 0; k < ops->nknobs; k++, n++) {
			const struct policy_knob *kn = &ops->knobs[k];
			uint64_t v;

			snprintf(name[n], KNOB_NAME_MAX, "%s", kn->name);
			for (char *c = name[n]; *c; c++)
				*c = *c == '-' ? '_' : *c;
			cols[n] = (struct column)COL(name[n]);
			memcpy(&v, sp->tuning[t].bytes + kn->offset, sizeof(v));
			cells[n] = cell_uint(v);
		}
	return n;
}

void params_report(const struct report_setup *rs)
{
	static const struct column head[] = {
		COL("version"), COL("algorithms"),
		COL("max_page_sharing"), COL("use_zero_pages"),
		COL("compressors"), COL("zram_huge_size"),
		/* a series' */
		COL("interval"), COL("pages_to_scan"), COL("sleep_ms"),
		COL("smart_scan"), COL("scans"),
		/* ksmd's pace, and writes snapshots cannot see */
		COL("hz"), COL("page_cost_seconds"), COL("write_rate"),
		/* who sets pages_to_scan (then the tuners' knobs) */
		COL("policy"),
	}, tail[] = {
		/* ksmd's time per KSM page it revisits */
		COL("revisit_cost_seconds"),
		/* ... and more per page it merges */
		COL("merge_cost_seconds"),
		/* ksmd's time per wake-up, besides its pages' */
		COL("wake_cost_seconds"),
		/* a live series: the kernel's full_scans as it began (last:
		 * left out for files) */
		COL("ksm_full_scans"),
	};
	const struct series_params none = { 0 };
	const struct series_params *sp = rs->series ? rs->series : &none;
	const struct scan_config *cfg = rs->scan;
	const struct ksm_params *k = &cfg->ksm;
	const char *an[ALGO_MAX], *cn[COMPRESS_MAX];
	char algos[ALGO_MAX * 16], comps[COMPRESS_MAX * 16];
	double interval = rs->series ? rs->series->interval : 0;
	uint64_t scans = rs->series ? rs->series->scans : 0;

	for (size_t i = 0; i < cfg->nalgos; i++)
		an[i] = cfg->algos[i]->name;
	for (size_t i = 0; i < rs->ncompressors; i++)
		cn[i] = rs->compressors[i]->name;
	names(algos, sizeof(algos), an, cfg->nalgos);
	names(comps, sizeof(comps), cn, rs->ncompressors);
	const char *pn[POLICIES_MAX + 1] = { sp->policy ? sp->policy->name : "" };
	char pols[128];

	for (size_t i = 0; i < sp->nothers; i++)
		pn[i + 1] = sp->others[i]->name;
	names(pols, sizeof(pols), pn, sp->nothers + 1);
	struct cell cells[] = {
		cell_str(rs->version), cell_str(algos),
		cell_uint(k->max_page_sharing),
		cell_uint((uint64_t)k->use_zero_pages), cell_str(comps),
		cell_uint(zram_huge_size()),
		cell_real(interval, -1), cell_uint(k->pages_to_scan),
		cell_uint(k->sleep_ms), cell_uint((uint64_t)k->smart_scan),
		cell_uint(scans), cell_uint(sp->hz), cell_real(sp->page_seconds, -1),
		cell_real(sp->write_rate, -1),
		cell_str(pols),	/* --policy's list, the timeline's first */
	}, tails[] = {
		cell_real(sp->revisit_seconds, -1),
		cell_real(sp->merge_seconds, -1),
		cell_real(sp->wake_seconds, -1),
		cell_int(sp->ksm_full_scans),
	};
	enum { NHEAD = sizeof(head) / sizeof(head[0]),
	       NTAIL = sizeof(tail) / sizeof(tail[0]) };
	struct column cols[NHEAD + KNOBS_MAX + NTAIL];
	struct cell all[NHEAD + KNOBS_MAX + NTAIL];
	char knob[KNOBS_MAX][KNOB_NAME_MAX];
	size_t n = NHEAD;

	memcpy(cols, head, sizeof(head));
	memcpy(all, cells, sizeof(cells));
	n += knob_cells(sp, cols + n, knob, all + n);
	memcpy(cols + n, tail, sizeof(tail));
	memcpy(all + n, tails, sizeof(tails));
	n += NTAIL;
	if (!rs->series)
		n = 6;
	else if (sp->ksm_full_scans < 0)
		n--;
	rs->out->params(rs->out, cols, all, n);
}
