/* SPDX-License-Identifier: MIT */
/*
 * The numa report (-r numa): for live processes, the saving with KSM's
 * merge_across_nodes=1 (pages on every node merge together: the other
 * reports' figure) beside merge_across_nodes=0 (a content merges only with
 * copies on its own node), from each page's node as move_pages(2) reports
 * it. Compare them before trying either on a NUMA host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/memory.h"
#include "../../util/text.h"
#include "../../scan/pagerec.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read the same figures under shorter names, within 80 columns. */
static const struct column numa_cols[] = {
	{ "input", 0, 0, { .cut = NAME_COLS } }, COL("nodes"),
	{ "saved_bytes_across_nodes", 0, 0, { .name = "saved_across_nodes" } },
	{ "saved_bytes_within_nodes", 0, 0, { .name = "saved_within_nodes" } },
};

#define NCOLS (sizeof(numa_cols) / sizeof(numa_cols[0]))

struct numa_row {
	const char *name;
	uint64_t nodes, across, within;
};

struct numa {
	struct recs_sink b;		/* first: its sink, setup and pages */
	struct numa_row *rows;
	size_t nrows;
	int failed;		/* a query was refused: said once */
};

/* Tag the input's pages with their nodes, now that it is read. */
static void numa_nodes(struct numa *s, const struct scope *sc)
{
	const struct input *in = &s->b.r.rs->scan->inputs[sc->input_no];
	size_t n;
	struct page_rec *v = page_recs_current(&s->b.recs, sc->input_no, &n);
	int *nodes;

	if (!n)
		return;
	nodes = xcalloc(n, sizeof(*nodes));
	if (proc_page_nodes(in->pid, s->b.recs.addr, n, nodes) < 0 && !s->failed++)
		warn("%s: move_pages: %s; its pages count as one node", in->name,
		     strerror(errno));
	/* A page the kernel gives no node for (the shared zero page mapped
	 * by a read fault answers -EFAULT) counts on the node of the page
	 * before it, as neighbours mostly share a node; else node 0. */
	for (size_t i = 0; i < n; i++)
		v[i].tag = nodes[i] >= 0 ? nodes[i] : i ? v[i - 1].tag : 0;
	free(nodes);
}

/* How many distinct nodes @n records (sorted by tag) sit on. */
static uint64_t distinct_nodes(const struct page_rec *v, size_t n)
{
	uint64_t nodes = 0;

	for (size_t i = 0; i < n; i++)
		nodes += v[i].tag >= 0 && (i == 0 || v[i].tag != v[i - 1].tag);
	return nodes;
}

static void numa_scope(struct sink *sk, const struct scope *sc)
{
	struct numa *s = (struct numa *)sk;
	const struct ksm_params *p = &s->b.r.rs->scan->ksm;
	struct numa_row row = { .name = sc->name };
	struct page_rec *v;
	size_t n;

	if (!sc->all)
		numa_nodes(s, sc);
	v = page_recs_scope(&s->b.recs, sc, s->b.r.rs->scan, &n);
	if (!v)
		return;
	row.across = page_recs_saved(v, n, 0, p) * PAGE_BYTES;
	row.within = page_recs_saved(v, n, 1, p) * PAGE_BYTES;
	row.nodes = distinct_nodes(v, n);
	free(v);
	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof(*s->rows));
	s->rows[s->nrows++] = row;
}

/* For people: what the host has, and what the difference means. */
static void numa_notes(const struct writer *w, const struct numa *s)
{
	int nodes = numa_host_nodes();
	char t[400], a[32], b[32];
	const struct numa_row *all = s->nrows ? &s->rows[0] : NULL;

	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(s->rows[i].name, "*") == 0)
			all = &s->rows[i];
	if (nodes == 1) {
		w->note(w, "This host has one NUMA node: merge_across_nodes changes "
			"nothing here; both columns are the same saving.");
		return;
	}
	if (!all)
		return;
	snprintf(t, sizeof(t), "%s: merge_across_nodes=1 saves %s, =0 saves %s on "
		 "this host's %d nodes; =0 keeps each page on its node (no remote "
		 "accesses to merged pages) at that cost.", all->name,
		 human_bytes(all->across, a, sizeof(a)),
		 human_bytes(all->within, b, sizeof(b)), nodes);
	w->note(w, t);
}

static void numa_print(struct sink *sk)
{
	struct numa *s = (struct numa *)sk;
	const struct writer *w = s->b.r.rs->out;

	w->begin(w, "numa", numa_cols, NCOLS, 0);
	for (size_t i = 0; i < s->nrows; i++) {
		struct cell c[NCOLS] = {
			cell_str(s->rows[i].name),
			cell_uint(s->rows[i].nodes),
			cell_bytes(s->rows[i].across), cell_bytes(s->rows[i].within),
		};

		w->row(w, c);
	}
	if (!any_process(s->b.r.rs->scan))
		w->note(w, "numa: only live processes (-p, -P, --all-processes) have "
			"nodes; files get no row.");
	else
		numa_notes(w, s);
	w->end(w);
}

static void numa_free(struct sink *sk)
{
	struct numa *s = (struct numa *)sk;

	page_recs_free(&s->b.recs);
	free(s->rows);
	free(s);
}

static const struct sink_ops numa_ops = {
	.needs = SINK_PAGES | SINK_GROUPS,
	.page = recs_sink_page, .scope = numa_scope,
	.print = numa_print, .free = numa_free,
};

struct sink *numa_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct numa), &numa_ops, rs);
}
