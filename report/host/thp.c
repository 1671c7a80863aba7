/* SPDX-License-Identifier: MIT */
/*
 * The thp report (-r thp): KSM merges 4 KiB pages, so merging any page of
 * a transparent huge page splits it. For live processes: the huge pages
 * (2 MiB-aligned areas whose pages the kernel marks THP), how many a merge
 * would split (one of their pages has a copy elsewhere), the saving, and
 * the saving if huge pages were left alone (MADV_NOHUGEPAGE where merging
 * pays, huge pages where it does not: "avoid both on one region").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/memory.h"
#include "../../scan/pagerec.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* A huge page is 2 MiB: the address's bits above 21 name it. */
#define HUGE_SHIFT 21

/* People read the same figures under shorter names, within 80 columns. */
static const struct column thp_cols[] = {
	{ "input", 0, 0, { .cut = NAME_COLS } }, COL("huge_pages"),
	{ "huge_pages_split", 0, 0, { .name = "split" } },
	{ "saved_bytes", 0, 0, { .name = "saved" } },
	{ "saved_bytes_without_split", 0, 0, { .name = "saved_no_split" } },
};

#define NCOLS (sizeof(thp_cols) / sizeof(thp_cols[0]))

struct thp_row {
	const char *name;
	uint64_t huge, split, saved, without;
	int known;		/* the pages' THP bits were read (root) */
};

struct thp {
	struct recs_sink b;		/* first: its sink, setup and pages */
	struct thp_row *rows;
	size_t nrows;
	int unreadable;		/* /proc/kpageflags refused: said once */
};

/* Tag the input's pages in huge pages with their huge page; 0, or -1 if
 * the kernel would not say (not root). */
static int thp_tag(struct thp *s, const struct scope *sc)
{
	const struct input *in = &s->b.r.rs->scan->inputs[sc->input_no];
	size_t n;
	struct page_rec *v = page_recs_current(&s->b.recs, sc->input_no, &n);
	unsigned char *thp;
	int rc;

	if (!n)
		return 0;
	thp = xcalloc(n, 1);
	rc = proc_page_thp(in->pid, s->b.recs.addr, n, thp);
	for (size_t i = 0; i < n; i++)
		v[i].tag = !rc && thp[i] ? (int32_t)(s->b.recs.addr[i] >> HUGE_SHIFT) : -1;
	free(thp);
	/* A process gone since its scan has no huge pages left to split. */
	return rc < 0 && (errno == EACCES || errno == EPERM) ? -1 : 0;
}

/* A page of a huge page, and whether KSM would merge its content. */
struct huge_member {
	uint32_t input;
	int32_t tag;
	int merges;
};

static int cmp_member(const void *a, const void *b)
{
	const struct huge_member *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Count @row's huge pages and those split, from @n records sorted by
 * content (page_recs_saved() leaves them so). */
static void count_huge(struct thp_row *row, const struct page_rec *v, size_t n,
		       const struct ksm_params *p)
{
	struct huge_member *m = xcalloc(n ? n : 1, sizeof(*m));
	size_t nm = 0;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].id == v[i].id; j++)
			;
		/* A content with a copy is merged (the zero page alone is,
		 * with use_zero_pages): each of its huge pages is split. */
		int merges = j - i >= 2 || (v[i].zero && p->use_zero_pages);

		for (size_t k = i; k < j; k++)
			if (v[k].tag >= 0)
				m[nm++] = (struct huge_member){ v[k].input, v[k].tag, merges };
	}
	qsort(m, nm, sizeof(*m), cmp_member);
	for (size_t i = 0, j; i < nm; i = j) {
		int split = 0;

		for (j = i; j < nm && m[j].input == m[i].input && m[j].tag == m[i].tag; j++)
			split |= m[j].merges;
		row->huge++;
		row->split += split;
	}
	free(m);
}

static void thp_scope(struct sink *sk, const struct scope *sc)
{
	struct thp *s = (struct thp *)sk;
	const struct ksm_params *p = &s->b.r.rs->scan->ksm;
	struct thp_row row = { .name = sc->name, .known = 1 };
	struct page_rec *v;
	size_t n, kept = 0;

	if (!sc->all && thp_tag(s, sc) < 0) {
		if (!s->unreadable++)
			warn("thp: /proc/kpageflags: %s: which pages are huge needs "
			     "root; huge_pages is smaps' AnonHugePages / 2 MiB",
			     strerror(errno));
		row.known = 0;
		row.huge = sc->proc ? sc->proc->thp_pages / 512 : 0;
	}
	v = page_recs_scope(&s->b.recs, sc, s->b.r.rs->scan, &n);
	if (!v)
		return;
	row.saved = page_recs_saved(v, n, 0, p) * PAGE_BYTES;
	if (row.known)
		count_huge(&row, v, n, p);
	for (size_t i = 0; i < n; i++)
		if (v[i].tag < 0)
			v[kept++] = v[i];
	row.without = page_recs_saved(v, kept, 0, p) * PAGE_BYTES;
	free(v);
	if (s->unreadable && sc->all)
		return;	/* sums of unknowns say nothing */
	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof(*s->rows));
	s->rows[s->nrows++] = row;
}

static void thp_print(struct sink *sk)
{
	struct thp *s = (struct thp *)sk;
	const struct writer *w = s->b.r.rs->out;

	w->begin(w, "thp", thp_cols, NCOLS, 0);
	for (size_t i = 0; i < s->nrows; i++) {
		const struct thp_row *r = &s->rows[i];
		struct cell c[NCOLS] = {
			cell_str(r->name),
			cell_uint(r->huge),
			r->known ? cell_uint(r->split) : cell_str(""),
			cell_bytes(r->saved),
			r->known ? cell_bytes(r->without) : cell_str(""),
		};

		w->row(w, c);
	}
	if (!any_process(s->b.r.rs->scan))
		w->note(w, "thp: only live processes (-p, -P, --all-processes) have "
			"huge pages; files get no row.");
	else
		w->note(w, "A merge splits a huge page into 512 pages (its TLB reach "
			"is lost); saved_bytes_without_split leaves huge pages alone "
			"(MADV_NOHUGEPAGE only where merging pays).");
	w->end(w);
}

static void thp_free(struct sink *sk)
{
	struct thp *s = (struct thp *)sk;

	page_recs_free(&s->b.recs);
	free(s->rows);
	free(s);
}

static const struct sink_ops thp_ops = {
	.needs = SINK_PAGES | SINK_GROUPS,
	.page = recs_sink_page, .scope = thp_scope,
	.print = thp_print, .free = thp_free,
};

struct sink *thp_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct thp), &thp_ops, rs);
}
