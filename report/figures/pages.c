/* SPDX-License-Identifier: MIT */
/* The pages report: one row per page, streamed as pages are counted. */
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* The sink: its columns (one per algorithm), the header printed at once. */
struct pages {
	struct report_sink r;		/* first: its sink and its setup */
	struct column cols[3 + ALGO_MAX];
	size_t ncols;
};

static void pages_page(struct sink *sk, const struct page_event *pg)
{
	struct pages *p = (struct pages *)sk;
	const struct algo *const *algos = p->r.rs->scan->algos;
	struct cell row[3 + ALGO_MAX];
	char hex[ALGO_MAX][33];

	row[0] = cell_str(pg->input);
	row[1] = cell_hex(pg->address);
	row[2] = cell_uint(pg->zero != 0);
	for (size_t c = 3; c < p->ncols; c++)
		row[c] = cell_digest(digest_format(algos[c - 3], &pg->digests[c - 3],
						   hex[c - 3]));
	p->r.rs->out->row(p->r.rs->out, row);
}

static void pages_print(struct sink *sk)
{
	struct pages *p = (struct pages *)sk;

	p->r.rs->out->end(p->r.rs->out);
}

static void pages_free(struct sink *sk)
{
	free(sk);
}

static const struct sink_ops pages_ops = {
	.needs = SINK_PAGES,
	.page = pages_page, .print = pages_print, .free = pages_free,
};

struct sink *pages_create(const struct report_setup *rs)
{
	const struct scan_config *cfg = rs->scan;
	struct pages *p = report_sink_new(sizeof(*p), &pages_ops, rs);
	int width = 5;

	/* Streamed rows are aligned to the longest input name. */
	for (size_t k = 0; k < cfg->ninputs; k++)
		if ((int)strlen(cfg->inputs[k].name) > width)
			width = (int)strlen(cfg->inputs[k].name);
	p->cols[0] = (struct column){ "input", width, 0, { 0 } };
	p->cols[1] = (struct column){ "address", 18, 0, { 0 } };
	p->cols[2] = (struct column){ "zero", 4, 0, { 0 } };
	for (size_t a = 0; a < cfg->nalgos; a++)
		p->cols[3 + a] = (struct column){ cfg->algos[a]->name,
						  (int)cfg->algos[a]->bits / 4, 0,
						  { 0 } };
	p->ncols = 3 + cfg->nalgos;
	rs->out->begin(rs->out, "pages", p->cols, p->ncols, 1);
	return &p->r.sink;
}
