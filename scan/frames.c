/* SPDX-License-Identifier: MIT */
/*
 * Frames of live pages (frames.h): each page read from a process is noted
 * as (frame key, content id, input); a scope's frames per content are the
 * distinct (key, id) pairs of its pages, found by sorting the notes.
 */
#include <stdlib.h>
#include <string.h>

#include "../host/memory.h"
#include "../util/page.h"
#include "../util/util.h"
#include "frames.h"

#define FRAME_PAGE_BITS 36	/* page numbers of a 48-bit address space */

/* One page noted. */
struct note {
	uint64_t key;
	uint32_t id;
	uint32_t input;
};

struct frames {
	struct note *v;
	size_t n, cap;
	size_t input_first;	/* the current input's first note */
	size_t sorted_to;	/* notes before this are sorted per input */
	int all_sorted;		/* every note sorted as one */
	uint32_t input;
	uint64_t family;
	uint64_t alone;		/* running number of lone pages */
	int keys_only;		/* frames_keep(0): no notes */
	uint64_t *shared;	/* per input: its fork-shared pages, once
				 * every input is read (all_sorted) */
	size_t nshared;
};

struct frames *frames_new(void)
{
	return xcalloc(1, sizeof(struct frames));
}

void frames_keep(struct frames *fr, int keep)
{
	fr->keys_only = !keep;
}

void frames_input(struct frames *fr, size_t input_no, int family)
{
	fr->input = (uint32_t)input_no;
	fr->input_first = fr->n;
	fr->family = family > 0 ? (uint64_t)family : 0;
	fr->all_sorted = 0;
}

uint64_t frames_add(struct frames *fr, uint64_t address, uint64_t word,
		    uint32_t id)
{
	uint64_t pfn = word & FRAME_PFN_MASK, key;

	if (pfn)
		key = pfn | (word & FRAME_KSM ? FRAME_KEY_KSM : 0);
	else if (word & FRAME_EXCLUSIVE)
		key = FRAME_KEY_ALONE | ++fr->alone;
	else
		key = FRAME_KEY_FAMILY | fr->family << FRAME_PAGE_BITS |
		      ((address / PAGE_BYTES) & ((UINT64_C(1) << FRAME_PAGE_BITS) - 1));
	if (fr->keys_only)
		return key;
	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? 2 * fr->cap : 65536;
		fr->v = xreallocarray(fr->v, fr->cap, sizeof(*fr->v));
	}
	fr->v[fr->n++] = (struct note){ key, id, fr->input };
	fr->all_sorted = 0;
	return key;
}

static int note_cmp(const void *a, const void *b)
{
	const struct note *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->input < y->input ? -1 : x->input > y->input;
}

/* Sort the current input's notes (the earlier inputs' are sorted). */
static void sort_input(struct frames *fr)
{
	if (fr->sorted_to > fr->input_first)
		return;
	qsort(fr->v + fr->input_first, fr->n - fr->input_first, sizeof(*fr->v),
	      note_cmp);
	fr->sorted_to = fr->n;
}

/* Sort every note as one, and count each input's fork-shared pages. */
static void sort_all(struct frames *fr)
{
	size_t i = 0;

	if (fr->all_sorted)
		return;
	qsort(fr->v, fr->n, sizeof(*fr->v), note_cmp);
	fr->all_sorted = 1;
	fr->nshared = fr->n ? fr->v[fr->n - 1].input + 1 : 0;
	for (size_t k = 0; k < fr->n; k++)
		if (fr->v[k].input + 1 > fr->nshared)
			fr->nshared = fr->v[k].input + 1;
	free(fr->shared);
	fr->shared = xcalloc(fr->nshared ? fr->nshared : 1, sizeof(*fr->shared));
	while (i < fr->n) {
		size_t j = i + 1;

		while (j < fr->n && fr->v[j].key == fr->v[i].key)
			j++;
		for (size_t k = i; j - i > 1 && k < j; k++)
			fr->shared[fr->v[k].input]++;
		i = j;
	}
}

/* Count the distinct (key, id) of the sorted notes v[0..n) in the scope. */
static void count_sorted(const struct note *v, size_t n,
			 const unsigned char *in_scope, struct frame_counts *out)
{
	for (size_t i = 0; i < n; ) {
		size_t j = i;
		int in = 0;

		for (; j < n && v[j].key == v[i].key && v[j].id == v[i].id; j++)
			in |= !in_scope || in_scope[v[j].input];
		if (in && v[i].id < out->n) {
			out->frames[v[i].id]++;
			out->total++;
			if (frames_key_ksm(v[i].key))
				out->ksm[v[i].id] = 1;
			if (v[i].key & (FRAME_KEY_ALONE | FRAME_KEY_FAMILY))
				out->estimate = 1;
		}
		i = j;
	}
}

int frames_count(struct frames *fr, size_t input_no,
		 const unsigned char *in_scope, size_t nids,
		 struct frame_counts *out)
{
	const struct note *v;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (input_no != SIZE_MAX) {
		if (input_no != fr->input || fr->n == fr->input_first)
			return -1;
		sort_input(fr);
		v = fr->v + fr->input_first;
		n = fr->n - fr->input_first;
	} else {
		if (!fr->n)
			return -1;
		sort_all(fr);
		v = fr->v;
		n = fr->n;
	}
	out->n = nids;
	out->frames = xcalloc(nids ? nids : 1, sizeof(*out->frames));
	out->ksm = xcalloc(nids ? nids : 1, sizeof(*out->ksm));
	count_sorted(v, n, input_no != SIZE_MAX ? NULL : in_scope, out);
	return 0;
}

uint64_t frames_fork_shared(struct frames *fr, size_t input_no)
{
	sort_all(fr);
	return input_no < fr->nshared ? fr->shared[input_no] : 0;
}

static int held_cmp(const void *x, const void *y)
{
	const struct frames_held *p = x, *q = y;

	if (p->id != q->id)
		return p->id < q->id ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Append (id, a, b) once per frame to @v, growing it. */
static void held_add(struct frames_held **v, size_t *n, size_t *cap,
		     uint32_t id, uint32_t a, uint32_t b, int ksm)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4096;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = (struct frames_held){ id, a, b, 1, (uint32_t)ksm };
}

/* Sum the entries of sorted @v that name the same (id, a, b). */
static size_t held_merge(struct frames_held *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (m && !held_cmp(&v[m - 1], &v[i])) {
			v[m - 1].frames += v[i].frames;
			v[m - 1].ksm |= v[i].ksm;
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

/* The end of the notes of one frame and content that begin at @i (sorted). */
static size_t same_frame_end(const struct frames *fr, size_t i)
{
	size_t j = i + 1;

	while (j < fr->n && fr->v[j].key == fr->v[i].key &&
	       fr->v[j].id == fr->v[i].id)
		j++;
	return j;
}

/*
 * The (content, input, input) triples of the sorted notes: with @pairs,
 * each input that maps a frame of the content with itself and with each
 * later input mapping that frame; without, the first input mapping each
 * frame only. Return: how many, merged (held_merge()).
 */
static size_t frames_walk(struct frames *fr, struct frames_held **out, int pairs)
{
	struct frames_held *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!fr->n)
		return 0;
	sort_all(fr);
	/* notes of one frame and content come sorted by input */
	for (size_t i = 0, j; i < fr->n; i = j) {
		const struct note *r = &fr->v[i];
		int ksm = frames_key_ksm(r->key);

		j = same_frame_end(fr, i);
		for (size_t x = i; x < (pairs ? j : i + 1); x++) {
			if (x > i && fr->v[x].input == fr->v[x - 1].input)
				continue;
			held_add(&v, &n, &cap, r->id, fr->v[x].input,
				 fr->v[x].input, ksm);
			for (size_t y = x + 1; pairs && y < j; y++)
				if (fr->v[y].input != fr->v[y - 1].input)
					held_add(&v, &n, &cap, r->id, fr->v[x].input,
						 fr->v[y].input, ksm);
		}
	}
	qsort(v, n, sizeof(*v), held_cmp);
	*out = v;
	return held_merge(v, n);
}

size_t frames_held(struct frames *fr, struct frames_held **out)
{
	return frames_walk(fr, out, 1);
}

size_t frames_first(struct frames *fr, struct frames_held **out)
{
	return frames_walk(fr, out, 0);
}

const struct frames_held *frames_held_find(const struct frames_held *v, size_t n,
					   uint32_t id, uint32_t a, uint32_t b)
{
	struct frames_held key = { id, a, b, 0, 0 };

	return bsearch(&key, v, n, sizeof(*v), held_cmp);
}

void frames_say_estimate(void)
{
	static int said;

	if (said)
		return;
	said = 1;
	warn("the kernel hides frame numbers from this user: pages that "
	     "processes share since fork (one frame, which KSM never merges) "
	     "are estimated from pagemap's exclusive bit and the processes' "
	     "parentage (status \"estimate\"); run as root to count frames");
}

void frames_free(struct frames *fr)
{
	if (!fr)
		return;
	free(fr->v);
	free(fr->shared);
	free(fr);
}
