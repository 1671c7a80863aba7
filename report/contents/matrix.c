/* SPDX-License-Identifier: MIT */
/*
 * The matrix report: for every pair of inputs, byte-exact, the contents both
 * hold, the pages of each that hold them, and the extra saving of running
 * the two on one KSM host: saved(a and b) - saved(a) - saved(b), with the
 * summary's KSM arithmetic. Only contents in both inputs change that
 * difference, so it is summed over them alone.
 *
 * Memory: when an input ends, its contents become a list of (id, pages),
 * 8 bytes per content of the input (the index only counts the current input
 * on its own). At the end the lists are regrouped by content (8 bytes more
 * per (content, input), and 8 per distinct content), and each content held
 * by m inputs adds to m(m-1)/2 pairs; a pair of inputs takes 40 bytes.
 *
 * Live processes are counted by frame, as the summary counts them: a
 * content merges only on two frames or more, and two processes that forked
 * share frames, so that the pair's frames of a content are each one's less
 * those both map (frames_held(), 20 bytes per content, input and frame two
 * inputs share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scan/frames.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column matrix_cols[] = {
	COL("input_a"), COL("input_b"), COL("shared_contents"),
	COL_F("pages_a", COL_DROP), COL_F("pages_b", COL_DROP), COL("saved_together_bytes"),
};

#define NCOLS (sizeof(matrix_cols) / sizeof(matrix_cols[0]))

/* A content in one input: its id there, or the input it is in later. */
struct held {
	uint32_t who;			/* content id, or input number */
	uint32_t pages;
};

/* One pair of inputs, a < b. */
struct pair {
	uint32_t a, b;
	uint64_t shared, pages_a, pages_b;
	int64_t saved_pages;
};

struct matrix {
	struct report_sink r;		/* first: its sink and its setup */
	struct held **lists;		/* per input: its contents, ids ascending */
	size_t *nlist;
	struct pair *pairs;		/* n(n-1)/2, once "*" is counted */
	size_t npairs;
};

/* An input is counted: keep its contents; "*": make the pairs. */
static void matrix_input(struct matrix *m, const struct scope *sc)
{
	size_t size = index_size(sc->ix), n = 0;
	struct held *l = xcalloc(size ? size : 1, sizeof(*l));

	for (size_t id = 0; id < size; id++) {
		uint32_t c = index_count(sc->ix, id, 1);

		if (c)
			l[n++] = (struct held){ (uint32_t)id, c };
	}
	m->lists[sc->input_no] = xreallocarray(l, n ? n : 1, sizeof(*l));
	m->nlist[sc->input_no] = n;
}

/* The inputs of each content: @start[id] .. @start[id + 1] in the result. */
static struct held *matrix_by_content(struct matrix *m, size_t ninputs,
				      size_t size, size_t **startp)
{
	size_t *start = xcalloc(size + 1, sizeof(*start)), total = 0;
	struct held *by;

	for (size_t k = 0; k < ninputs; k++)
		for (size_t i = 0; i < m->nlist[k]; i++)
			start[m->lists[k][i].who + 1]++;
	for (size_t id = 0; id < size; id++)
		start[id + 1] += start[id];
	total = start[size];
	by = xcalloc(total ? total : 1, sizeof(*by));
	for (size_t k = 0; k < ninputs; k++) {
		for (size_t i = 0; i < m->nlist[k]; i++) {
			const struct held *h = &m->lists[k][i];

			/* start[id] is used as the next free place, then restored */
			by[start[h->who]++] = (struct held){ (uint32_t)k, h->pages };
		}
		free(m->lists[k]);
		m->lists[k] = NULL;
	}
	for (size_t id = size; id > 0; id--)
		start[id] = start[id - 1];
	start[0] = 0;
	*startp = start;
	return by;
}

/* Number of the pair (a, b), a < b, among n inputs. */
static size_t pair_no(size_t a, size_t b, size_t n)
{
	return a * n - a * (a + 1) / 2 + (b - a - 1);
}

/* The frames of content @id in input @a, and whether one is a KSM page. */
static uint32_t held_frames(const struct frames_held *v, size_t n, uint32_t id,
			    uint32_t a, uint32_t b, uint32_t *ksm)
{
	const struct frames_held *h = frames_held_find(v, n, id, a, b);

	*ksm |= h ? h->ksm : 0;
	return h ? h->frames : 0;
}

/* The pages KSM saves of @c pages of a content on @f frames (@k: one is a
 * KSM page): none on one frame, but merged with the zero page by -z. */
static uint64_t saved_by_frames(uint64_t c, uint32_t f, uint32_t k, int zero,
				const struct ksm_params *p)
{
	return f >= 2 || k || (zero && p->use_zero_pages) ?
	       ksm_saved_pages(c, zero, p) : 0;
}

/*
 * The pages KSM saves of content @id held by @x and @y apart and together:
 * together less apart. With frames (@v), a content merges on two frames or
 * more (or a KSM frame); the pair's frames are each one's less those both map.
 */
static int64_t pair_saved(const struct held *x, const struct held *y,
			  uint32_t id, int zero, const struct ksm_params *p,
			  const struct frames_held *v, size_t nv)
{
	uint64_t cx = x->pages, cy = y->pages;
	uint32_t kx = 0, ky = 0, fx, fy, fxy;

	if (!v)
		return (int64_t)(ksm_saved_pages(cx + cy, zero, p) -
				 ksm_saved_pages(cx, zero, p) -
				 ksm_saved_pages(cy, zero, p));
	fx = held_frames(v, nv, id, x->who, x->who, &kx);
	fy = held_frames(v, nv, id, y->who, y->who, &ky);
	fxy = fx + fy - held_frames(v, nv, id, x->who, y->who, &kx);
	return (int64_t)(saved_by_frames(cx + cy, fxy, kx | ky, zero, p) -
			 saved_by_frames(cx, fx, kx, zero, p) -
			 saved_by_frames(cy, fy, ky, zero, p));
}

/* Every pair's figures, from the contents' inputs. */
static void matrix_pairs(struct matrix *m, const struct scope *sc)
{
	const struct ksm_params *p = &m->r.rs->scan->ksm;
	size_t n = m->r.rs->scan->ninputs, size = index_size(sc->ix), *start;
	struct held *by = matrix_by_content(m, n, size, &start);
	struct frames_held *v = NULL;
	size_t nv = sc->frames ? frames_held(sc->frames, &v) : 0;

	m->npairs = n * (n - 1) / 2;
	m->pairs = xcalloc(m->npairs ? m->npairs : 1, sizeof(*m->pairs));
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			m->pairs[pair_no(a, b, n)] = (struct pair){
				.a = (uint32_t)a, .b = (uint32_t)b };
	for (size_t id = 0; id < size; id++) {
		int zero = index_is_zero(sc->ix, id);

		for (size_t i = start[id]; i < start[id + 1]; i++)
			for (size_t j = i + 1; j < start[id + 1]; j++) {
				const struct held *x = &by[i], *y = &by[j];
				struct pair *q = &m->pairs[pair_no(x->who, y->who, n)];

				q->shared++;
				q->pages_a += x->pages;
				q->pages_b += y->pages;
				q->saved_pages += pair_saved(x, y, (uint32_t)id, zero,
							     p, v, nv);
			}
	}
	free(v);
	free(by);
	free(start);
}

static void matrix_scope(struct sink *sk, const struct scope *sc)
{
	struct matrix *m = (struct matrix *)sk;

	if (!sc->all)
		matrix_input(m, sc);
	else
		matrix_pairs(m, sc);
}

/* The pairs that gain most first, then those sharing most contents. */
static int cmp_pair(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->saved_pages != b->saved_pages)
		return a->saved_pages > b->saved_pages ? -1 : 1;
	if (a->shared != b->shared)
		return a->shared > b->shared ? -1 : 1;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static void matrix_print(struct sink *sk)
{
	struct matrix *m = (struct matrix *)sk;
	const struct writer *w = m->r.rs->out;
	const struct input *in = m->r.rs->scan->inputs;
	char text[160];

	if (m->npairs)		/* one input: no "*" scope, no pairs */
		qsort(m->pairs, m->npairs, sizeof(*m->pairs), cmp_pair);
	w->begin(w, "matrix", matrix_cols, NCOLS, 0);
	for (size_t i = 0; i < m->npairs; i++) {
		const struct pair *q = &m->pairs[i];
		struct cell row[NCOLS] = {
			cell_str(in[q->a].name), cell_str(in[q->b].name),
			cell_uint(q->shared), cell_uint(q->pages_a),
			cell_uint(q->pages_b),
			cell_int(q->saved_pages * (int64_t)PAGE_BYTES),
		};

		w->row(w, row);
	}
	snprintf(text, sizeof(text), "%zu pairs of inputs, the pairs that gain "
		 "most from one KSM host first.", m->npairs);
	w->note(w, text);
	w->end(w);
}

static void matrix_free(struct sink *sk)
{
	struct matrix *m = (struct matrix *)sk;

	for (size_t k = 0; k < m->r.rs->scan->ninputs; k++)
		free(m->lists[k]);
	free(m->lists);
	free(m->nlist);
	free(m->pairs);
	free(m);
}

static const struct sink_ops matrix_ops = {
	.scope = matrix_scope, .print = matrix_print, .free = matrix_free,
};

struct sink *matrix_create(const struct report_setup *rs)
{
	struct matrix *m = report_sink_new(sizeof(*m), &matrix_ops, rs);
	size_t n = rs->scan->ninputs;

	m->lists = xcalloc(n ? n : 1, sizeof(*m->lists));
	m->nlist = xcalloc(n ? n : 1, sizeof(*m->nlist));
	return &m->r.sink;
}
