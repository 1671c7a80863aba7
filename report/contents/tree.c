/* SPDX-License-Identifier: MIT */
/*
 * The tree report: what searching every page costs in KSM's memcmp-ordered
 * unstable tree and in checksum-first trees (model/treesim.c simulates them).
 */
#include <stdlib.h>
#include <string.h>

#include "../../model/treesim.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column tree_cols[] = {
	COL("input"), COL("strategy"), COL("algo"),
	COL_F("inserts", COL_DROP), COL_F("matches", COL_DROP), COL("avg_depth"),
	COL_F("max_depth", COL_DROP), COL_F("node_visits", COL_DROP), COL("memcmp_calls"),
	COL_F("memcmp_bytes", COL_DROP), COL_F("checksum_compares", COL_DROP),
	COL("seconds"),
};

#define NCOLS (sizeof(tree_cols) / sizeof(tree_cols[0]))

/* The trees of one scope (an input, or all of them). */
struct trees {
	struct tree *by_memcmp;
	struct tree *by_sum[ALGO_MAX];
};

/* One row: one strategy on one scope. */
struct tree_row {
	const char *input;
	const char *strategy;		/* "memcmp" or "checksum-first" */
	const char *algo;		/* the checksum, "-" for memcmp */
	struct tree_stats st;
};

/* The sink: the current input's trees, all inputs' trees, the rows so far. */
struct tree_sink {
	struct report_sink r;		/* first: its sink and its setup */
	struct trees cur, all;		/* made at the first page of their scope */
	struct tree_row *rows;
	size_t nrows;
};

/* The scope's trees, made empty if it has none yet. */
static struct trees *trees_of(struct tree_sink *t, int all)
{
	struct trees *tr = all ? &t->all : &t->cur;

	if (!tr->by_memcmp) {
		tr->by_memcmp = tree_new(0);
		for (size_t a = 0; a < t->r.rs->scan->nalgos; a++)
			tr->by_sum[a] = tree_new(1);
	}
	return tr;
}

/* Search (and maybe insert) a page in every tree of a scope. */
static void trees_add(struct trees *tr, size_t nalgos, const struct page_event *pg)
{
	tree_add(tr->by_memcmp, pg->bytes, pg->kept, &pg->digests[KSM_CHECKSUM]);
	for (size_t a = 0; a < nalgos; a++)
		tree_add(tr->by_sum[a], pg->bytes, pg->kept, &pg->digests[a]);
}

static void tree_page(struct sink *sk, const struct page_event *pg)
{
	struct tree_sink *t = (struct tree_sink *)sk;
	size_t nalgos = t->r.rs->scan->nalgos;

	trees_add(trees_of(t, 0), nalgos, pg);
	if (t->r.rs->scan->ninputs > 1)
		trees_add(trees_of(t, 1), nalgos, pg);
}

/* A scope's trees become rows and are freed. */
static void tree_scope(struct sink *sk, const struct scope *sc)
{
	struct tree_sink *t = (struct tree_sink *)sk;
	const struct scan_config *cfg = t->r.rs->scan;
	struct trees *tr = trees_of(t, sc->all);

	t->rows = xreallocarray(t->rows, t->nrows + 1 + cfg->nalgos,
				sizeof(*t->rows));
	t->rows[t->nrows++] = (struct tree_row){
		sc->name, "memcmp", "-", *tree_stats(tr->by_memcmp) };
	tree_free(tr->by_memcmp);
	for (size_t a = 0; a < cfg->nalgos; a++) {
		t->rows[t->nrows++] = (struct tree_row){
			sc->name, "checksum-first", cfg->algos[a]->name,
			*tree_stats(tr->by_sum[a]) };
		tree_free(tr->by_sum[a]);
	}
	memset(tr, 0, sizeof(*tr));
}

static void tree_print(struct sink *sk)
{
	struct tree_sink *t = (struct tree_sink *)sk;
	const struct writer *w = t->r.rs->out;

	w->begin(w, "tree", tree_cols, NCOLS, 0);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct tree_stats *st = &t->rows[i].st;
		uint64_t searches = st->inserts + st->matches;
		struct cell row[NCOLS] = {
			cell_str(t->rows[i].input), cell_str(t->rows[i].strategy),
			cell_str(t->rows[i].algo), cell_uint(st->inserts),
			cell_uint(st->matches),
			cell_real(searches ? (double)st->node_visits /
					     (double)searches : 0.0, 3),
			cell_uint(st->max_depth), cell_uint(st->node_visits),
			cell_uint(st->memcmp_calls), cell_uint(st->memcmp_bytes),
			cell_uint(st->checksum_compares), cell_real(st->seconds, 6),
		};

		w->row(w, row);
	}
	w->end(w);
}

static void tree_sink_free(struct sink *sk)
{
	struct tree_sink *t = (struct tree_sink *)sk;

	free(t->rows);
	free(t);
}

static const struct sink_ops tree_ops = {
	.needs = SINK_PAGES | SINK_KEPT,
	.page = tree_page, .scope = tree_scope, .print = tree_print,
	.free = tree_sink_free,
};

struct sink *tree_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct tree_sink), &tree_ops, rs);
}
