/* SPDX-License-Identifier: MIT */
/*
 * The scan engine: pages flow from the readers, are hashed once per selected
 * algorithm in batches (each batch timed per algorithm), and are counted in the
 * index. It never parses a format and never prints a figure itself.
 */
#include <stdlib.h>
#include <string.h>

#include "../dump/dump.h"
#include "../util/util.h"
#include "index.h"
#include "scan.h"

/* Pages hashed per algorithm before the next algorithm takes the batch. */
#define BATCH 32

/* The state of one run. */
struct scan {
	const struct scan_config *cfg;
	struct index *ix;
	struct figures *fig;		/* per input, then one for all inputs */
	struct dump **dumps;		/* kept open: the index points into them */
	struct region_row *regions;	/* per region of each input, scan order */
	const struct region **region_of;/* the reader's region of each row */
	size_t nregions, capregions;
};

/* The row of the regions report that a range's pages count in. */
static struct region_row *scan_region(struct scan *s, const char *input,
				      const struct region *reg)
{
	struct region_row *row;

	if (s->nregions && s->region_of[s->nregions - 1] == reg &&
	    s->regions[s->nregions - 1].input == input)
		return &s->regions[s->nregions - 1];
	if (s->nregions == s->capregions) {
		s->capregions = s->capregions ? s->capregions * 2 : 64;
		s->regions = xreallocarray(s->regions, s->capregions,
					   sizeof(*s->regions));
		s->region_of = xreallocarray(s->region_of, s->capregions,
					     sizeof(*s->region_of));
	}
	s->region_of[s->nregions] = reg;
	row = &s->regions[s->nregions++];
	*row = (struct region_row){ .input = input };
	return row;
}

/* Whether a page is all zero bytes. */
static int page_is_zero(const unsigned char *p)
{
	uint64_t acc = 0;

	for (size_t i = 0; i < PAGE_BYTES; i += 64) {
		uint64_t w[8];

		memcpy(w, p + i, sizeof(w));
		acc |= w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7];
		if (acc)
			return 0;
	}
	return 1;
}

/* Hash and count up to BATCH pages of a range. */
static int scan_batch(struct scan *s, struct figures *f, const char *input,
		      const struct page_range *r, size_t first, size_t n)
{
	const struct scan_config *cfg = s->cfg;
	struct digest dg[BATCH][ALGO_MAX];
	const unsigned char *base = r->data + first * PAGE_BYTES;
	struct region_row *reg = scan_region(s, input, r->region);

	/* One algorithm over the whole batch, so its time is measured alone. */
	for (size_t a = 0; a < cfg->nalgos; a++) {
		void (*hash)(const void *, struct digest *) = cfg->algos[a]->hash;
		double t0 = now_seconds();

		for (size_t i = 0; i < n; i++)
			hash(base + i * PAGE_BYTES, &dg[i][a]);
		f->seconds[a] += now_seconds() - t0;
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *page = base + i * PAGE_BYTES;
		int zero = page_is_zero(page);
		int seen = index_add(s->ix, page, r->stable, zero, dg[i]);

		if (seen < 0)
			return -1;
		reg->pages++;
		reg->zero_pages += zero;
		reg->redundant_pages += seen;
		if (cfg->reports & REPORT_PAGES)
			pages_row(cfg->out, input,
				  r->address + (first + i) * (uint64_t)PAGE_BYTES,
				  zero, dg[i], cfg->algos);
	}
	f->pages += n;
	return 0;
}

/* Read one input to its end, or to its first error. */
static int scan_input(struct scan *s, size_t k)
{
	const struct scan_config *cfg = s->cfg;
	const char *name = cfg->inputs[k].name;
	struct figures *f = &s->fig[k];
	struct page_range r;
	int rc, status = 0;
	struct dump *d = dump_open(&cfg->inputs[k], &cfg->dump);

	s->dumps[k] = d;
	if (!d)
		return 1;
	while ((rc = dump_next(d, &r)) > 0) {
		for (size_t i = 0; i < r.npages; i += BATCH) {
			size_t n = r.npages - i < BATCH ? r.npages - i : BATCH;

			if (scan_batch(s, f, name, &r, i, n) < 0) {
				status = 1;
				goto out;
			}
		}
	}
	if (rc < 0)
		status = 1;
out:
	if (d->failed)
		status = 1;
	return status;
}

int scan_run(const struct scan_config *cfg)
{
	struct scan s = { .cfg = cfg };
	size_t n = cfg->ninputs;
	struct summary_input *rows;
	size_t nrows = 0;
	int status = 0;

	s.ix = index_new(cfg->algos, cfg->nalgos);
	s.fig = xcalloc(n + 1, sizeof(*s.fig));
	s.dumps = xcalloc(n, sizeof(*s.dumps));
	rows = xcalloc(n + 1, sizeof(*rows));

	if (cfg->reports & REPORT_PAGES)
		pages_begin(cfg->out, cfg->algos, cfg->nalgos);
	for (size_t k = 0; k < n; k++) {
		struct figures *all = &s.fig[n];

		status |= scan_input(&s, k);
		/* Figures of this input, then the running total of all inputs. */
		ksm_tally(&s.fig[k], s.ix, 1, cfg->algos, cfg->nalgos, &cfg->ksm);
		index_end_input(s.ix);
		all->pages += s.fig[k].pages;
		for (size_t a = 0; a < cfg->nalgos; a++)
			all->seconds[a] += s.fig[k].seconds[a];
		rows[nrows++] = (struct summary_input){
			cfg->inputs[k].name,
			s.dumps[k] ? s.dumps[k]->reader->name : "-",
			&s.fig[k] };
	}
	if (cfg->reports & REPORT_PAGES)
		pages_end(cfg->out);

	if (n > 1) {
		const char *fmt = rows[0].format;

		/* The format of "*" is the inputs' common format, else "mixed". */
		for (size_t k = 1; k < n; k++)
			if (strcmp(rows[k].format, fmt) != 0)
				fmt = "mixed";
		ksm_tally(&s.fig[n], s.ix, 0, cfg->algos, cfg->nalgos, &cfg->ksm);
		rows[nrows++] = (struct summary_input){ "*", fmt, &s.fig[n] };
	}
	if (cfg->reports & REPORT_SUMMARY)
		summary_report(cfg->out, rows, nrows, cfg->algos, cfg->nalgos,
			       &cfg->ksm);
	if (cfg->reports & REPORT_REGIONS) {
		/* Readers may learn where a region ends only at its end. */
		for (size_t i = 0; i < s.nregions; i++) {
			s.regions[i].name = s.region_of[i]->name;
			s.regions[i].start = s.region_of[i]->start;
			s.regions[i].end = s.region_of[i]->end;
		}
		regions_report(cfg->out, s.regions, s.nregions);
	}
	cfg->out->finish();

	for (size_t k = 0; k < n; k++)
		dump_close(s.dumps[k]);
	index_free(s.ix);
	free(s.dumps);
	free(s.regions);
	free(s.region_of);
	free(s.fig);
	free(rows);
	return status;
}
