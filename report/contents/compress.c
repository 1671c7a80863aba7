/* SPDX-License-Identifier: MIT */
/*
 * The compress report: what zram would hold of each input, with each
 * compressor, alone and after KSM (KSM merges first, so zram holds each
 * remaining content once), and how fast each compressor runs here. Pages
 * are compressed in the hashing threads, each content new to the input
 * once (prepare()); the main thread adds them up in scan order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../compress/compress.h"
#include "../../model/zram.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../svg.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read sizes in units, within 80 columns (-l shows every figure). */
static const struct column compress_cols[] = {
	{ "input", 0, 0, { .cut = NAME_COLS } }, COL("compressor"),
	{ "pages", 0, 0, { .name = "memory", .size = SIZE_PAGES } },
	COL_F("same_pages", COL_NOT_PEOPLE), COL_F("huge_pages", COL_NOT_PEOPLE),
	COL_F("compressed_bytes", COL_NOT_PEOPLE),
	{ "zram_mem_used", 0, 0, { .name = "zram", .size = SIZE_BYTES } },
	COL_F("zram_saved_bytes", COL_NOT_PEOPLE),
	{ "ksm_zram_mem_used", 0, 0, { .name = "KSM+zram", .size = SIZE_BYTES } },
	COL_F("ksm_zram_saved_bytes", COL_NOT_PEOPLE),
	{ "compress_mib_s", 0, 0, { .name = "MiB/s", .decimals = DECIMALS(0) } },
};

#define NCOLS (sizeof(compress_cols) / sizeof(compress_cols[0]))

/* What prepare() makes of a page: its length with each compressor. */
struct prep {
	uint16_t len[COMPRESS_MAX];
	uint8_t same;			/* same-filled: not compressed */
};

/* A thread's own work memory and how long its compressions took. */
struct worker {
	struct compress_ctx *ctx;
	double seconds[COMPRESS_MAX];
	uint64_t pages[COMPRESS_MAX];
};

/* One row. */
struct compress_row {
	const char *input;
	const struct compressor *c;
	struct zram_tally alone, ksm;
	double mib_s;
};

struct compress_sink {
	struct report_sink r;		/* first: its sink and its setup */
	size_t n;			/* compressors */
	struct worker *workers;		/* one per thread */
	struct prep *contents;		/* per content id, in order of first sight */
	size_t ncontents, cap;
	struct zram_tally cur[COMPRESS_MAX], all[COMPRESS_MAX];
	double seconds[COMPRESS_MAX];	/* as of the last scope */
	uint64_t pages[COMPRESS_MAX];
	struct compress_row *rows;
	size_t nrows;
};

/* In a hashing thread: the page's length with every compressor, timed. */
static void compress_prepare(struct sink *sk, unsigned thread,
			     const unsigned char *page, void *out)
{
	struct compress_sink *c = (struct compress_sink *)sk;
	struct worker *w = &c->workers[thread];
	struct prep *p = out;

	memset(p, 0, sizeof(*p));
	p->same = (uint8_t)zram_same_filled(page);
	if (p->same)
		return;
	for (size_t k = 0; k < c->n; k++) {
		double t0 = now_seconds();

		p->len[k] = (uint16_t)c->r.rs->compressors[k]->page_len(w->ctx, page);
		w->seconds[k] += now_seconds() - t0;
		w->pages[k]++;
	}
}

/* The lengths of a page's content: kept at its first sight, in id order. */
static const struct prep *content(struct compress_sink *c,
				  const struct page_event *pg)
{
	if (pg->id < c->ncontents)
		return &c->contents[pg->id];
	if (c->ncontents == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->contents = xreallocarray(c->contents, c->cap, sizeof(*c->contents));
	}
	struct prep *p = &c->contents[c->ncontents++];

	if (pg->prep)
		*p = *(const struct prep *)pg->prep;
	else if (pg->zero)
		*p = (struct prep){ .same = 1 };
	else		/* not prepared (cannot happen): do it here, thread 0 */
		compress_prepare(&c->r.sink, 0, pg->bytes, p);
	return p;
}

static void compress_page(struct sink *sk, const struct page_event *pg)
{
	struct compress_sink *c = (struct compress_sink *)sk;
	const struct prep *p = content(c, pg);

	for (size_t k = 0; k < c->n; k++)
		zram_add(&c->cur[k], p->same, p->len[k], 1);
}

/* Compression speed since the last scope (@since), or overall. */
static double speed(struct compress_sink *c, size_t k, int since)
{
	double secs = 0;
	uint64_t pages = 0;

	for (unsigned t = 0; t < c->r.rs->scan->threads; t++) {
		secs += c->workers[t].seconds[k];
		pages += c->workers[t].pages[k];
	}
	if (since) {
		double d = secs - c->seconds[k];
		uint64_t n = pages - c->pages[k];

		c->seconds[k] = secs;
		c->pages[k] = pages;
		secs = d;
		pages = n;
	}
	return secs > 0 ? (double)pages * PAGE_BYTES / 1048576.0 / secs : 0.0;
}

/*
 * With --svg: zram's memory, alone and after KSM, as bars of the picture,
 * for the rows from @first on. They are handed over as each scope ends, so
 * the picture has them whatever order the reports print in.
 */
static void compress_bars(struct compress_sink *c, size_t first)
{
	for (size_t i = first; c->r.rs->svg && i < c->nrows; i++) {
		const struct compress_row *r = &c->rows[i];
		char label[40];

		snprintf(label, sizeof(label), "zram %s", r->c->name);
		svg_bar_add(c->r.rs->bars, r->input, label, zram_mem_used(&r->alone));
		snprintf(label, sizeof(label), "KSM+zram %s", r->c->name);
		svg_bar_add(c->r.rs->bars, r->input, label, zram_mem_used(&r->ksm));
	}
}

/* A scope's rows: zram alone as counted, after KSM from its contents. */
static void compress_scope(struct sink *sk, const struct scope *sc)
{
	struct compress_sink *c = (struct compress_sink *)sk;
	size_t first = c->nrows;

	c->rows = xreallocarray(c->rows, c->nrows + c->n, sizeof(*c->rows));
	for (size_t k = 0; k < c->n; k++) {
		struct compress_row *r = &c->rows[c->nrows++];

		*r = (struct compress_row){ .input = sc->name,
					    .c = c->r.rs->compressors[k] };
		if (sc->all) {
			r->alone = c->all[k];
		} else {
			r->alone = c->cur[k];
			zram_merge(&c->all[k], &c->cur[k]);
			memset(&c->cur[k], 0, sizeof(c->cur[k]));
		}
		for (size_t id = 0; id < c->ncontents; id++)
			if (index_count(sc->ix, id, !sc->all))
				zram_add(&r->ksm, c->contents[id].same,
					 c->contents[id].len[k], 1);
		r->mib_s = speed(c, k, !sc->all);
	}
	compress_bars(c, first);
}

static void compress_print(struct sink *sk)
{
	struct compress_sink *c = (struct compress_sink *)sk;
	const struct writer *w = c->r.rs->out;

	w->begin(w, "compress", compress_cols, NCOLS, 0);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct compress_row *r = &c->rows[i];
		uint64_t bytes = r->alone.pages * PAGE_BYTES;
		uint64_t used = zram_mem_used(&r->alone), ksm = zram_mem_used(&r->ksm);
		struct cell row[NCOLS] = {
			cell_str(r->input), cell_str(r->c->name),
			cell_uint(r->alone.pages), cell_uint(r->alone.same_pages),
			cell_uint(r->alone.huge_pages), cell_uint(r->alone.compr_bytes),
			cell_uint(used), cell_int((int64_t)bytes - (int64_t)used),
			cell_uint(ksm), cell_int((int64_t)bytes - (int64_t)ksm),
			cell_real(r->mib_s, 1),
		};

		w->row(w, row);
	}
	if (for_people(c->r.rs))
		w->note(w, "zram: what a zram device would hold of every page "
			"(same-filled pages cost nothing, pages that compress badly "
			"are kept whole); KSM+zram: when KSM merges first. -l shows "
			"every figure.");
	w->end(w);
}

static void compress_free(struct sink *sk)
{
	struct compress_sink *c = (struct compress_sink *)sk;

	for (unsigned t = 0; t < c->r.rs->scan->threads; t++)
		compress_ctx_free(c->workers[t].ctx);
	free(c->workers);
	free(c->contents);
	free(c->rows);
	free(c);
}

static const struct sink_ops compress_ops = {
	.needs = SINK_PAGES, .prep_bytes = sizeof(struct prep),
	.prepare = compress_prepare, .page = compress_page,
	.scope = compress_scope, .print = compress_print, .free = compress_free,
};

struct sink *compress_create(const struct report_setup *rs)
{
	struct compress_sink *c = report_sink_new(sizeof(*c), &compress_ops, rs);
	unsigned threads = rs->scan->threads ? rs->scan->threads : 1;

	c->n = rs->ncompressors;
	c->workers = xcalloc(threads, sizeof(*c->workers));
	for (unsigned t = 0; t < threads; t++)
		c->workers[t].ctx = compress_ctx_new();
	return &c->r.sink;
}
