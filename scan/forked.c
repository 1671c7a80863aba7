/* SPDX-License-Identifier: MIT */
/*
 * A live series' frames (forked.h): per snapshot, the pages sorted by
 * frame say each content's frames and mappings; the mappings of a frame
 * whose content is on no other frame, but the first in ksmd's order, get a
 * content of their own for the replay.
 */
#include <stdlib.h>
#include <string.h>

#include "../util/page.h"
#include "../util/util.h"
#include "forked.h"
#include "frames.h"

/* In forked.frames: the content has a frame that is a KSM page already. */
#define KSM_FRAME (UINT32_C(1) << 31)

/* A page of a snapshot, to sort by frame. */
struct fpage {
	uint64_t frame;
	uint32_t id;
	uint32_t j;	/* its place in the snapshot (ksmd's order) */
};

static int fpage_cmp(const void *a, const void *b)
{
	const struct fpage *x = a, *y = b;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/* SplitMix64: distinct numbers for distinct inputs (a bijection). */
static uint64_t splitmix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

void forked_start(struct forked *fk, size_t base, size_t naddr, size_t nsnaps,
		  size_t nprocs, const struct ksm_params *ksm, uint32_t zero_id)
{
	fk->base = (uint32_t)base;
	fk->last = xmalloc((naddr ? naddr : 1) * sizeof(*fk->last));
	memset(fk->last, 0xff, (naddr ? naddr : 1) * sizeof(*fk->last));
	fk->snaps = xcalloc(nsnaps ? nsnaps : 1, sizeof(*fk->snaps));
	fk->nsnaps = nsnaps;
	fk->nprocs = nprocs;
	fk->frames = xcalloc(base ? base : 1, sizeof(*fk->frames));
	fk->count = xcalloc(base ? base : 1, sizeof(*fk->count));
	fk->ksm = *ksm;
	fk->zero_id = zero_id;
	for (size_t i = 0; i < sizeof(fk->page) / 8; i++) {
		uint64_t w = splitmix(i ^ UINT64_C(0x6b736d7363616e));

		memcpy(fk->page + 8 * i, &w, 8);
	}
}

/* The process of the snapshot's page @j. */
static size_t page_proc(const struct snapshot *snap, size_t j, unsigned shift,
			const uint64_t *addr)
{
	return (size_t)(addr[snap->addr_no[j]] >> shift);
}

/*
 * Count the frames of the sorted pages @v (@m of them): per content its
 * frames (fk->frames) and per process its frames and fork-shared pages.
 */
static void count_frames(struct forked *fk, struct forked_snap *fs,
			 const struct fpage *v, size_t m,
			 const struct snapshot *snap, unsigned shift,
			 const uint64_t *addr)
{
	for (size_t a = 0, b; a < m; a = b) {
		uint64_t procs = 0;

		for (b = a; b < m && v[b].frame == v[a].frame; b++) {
			size_t p = page_proc(snap, v[b].j, shift, addr);

			if (b == a || v[b].id != v[b - 1].id)
				fk->frames[v[b].id] = (fk->frames[v[b].id] + 1) |
					(frames_key_ksm(v[b].frame) ? KSM_FRAME : 0);
			if (p < 64 && !(procs >> p & 1)) {
				procs |= UINT64_C(1) << p;
				if (p < fk->nprocs)
					fs->proc_frames[p]++;
			}
		}
		fs->frames++;
		if (v[a].frame & (FRAME_KEY_FAMILY | FRAME_KEY_ALONE))
			fs->estimate = 1;
		if (!(procs & (procs - 1)))
			continue;	/* one process maps the frame */
		for (size_t k = a; k < b; k++) {
			size_t p = page_proc(snap, v[k].j, shift, addr);

			if (p < fk->nprocs)
				fs->proc_fork_shared[p]++;
		}
	}
}

/* KSM's steady state of the snapshot, counted by frame (scan/tally.c's rule). */
static void steady_state(struct forked *fk, struct forked_snap *fs,
			 const struct snapshot *snap)
{
	for (size_t j = 0; j < snap->n; j++)
		fk->count[snap->id[j]]++;
	for (size_t j = 0; j < snap->n; j++) {
		uint32_t id = snap->id[j];
		uint64_t c = fk->count[id], nf = fk->frames[id] & ~KSM_FRAME;
		uint64_t shared, sharing;

		if (!c)
			continue;	/* counted already */
		fk->count[id] = 0;
		if (fk->ksm.use_zero_pages && id == fk->zero_id) {
			fs->saving += c;
			fs->freed += nf;
		} else if (c >= 2 && (nf >= 2 || (fk->frames[id] & KSM_FRAME))) {
			ksm_content(c, fk->ksm.max_page_sharing, &shared, &sharing);
			fs->saving += sharing;
			fs->freed += ksm_freed_frames(nf, c, fk->ksm.max_page_sharing);
		}
	}
}

/* The id for a forked mapping of content @real at the snapshot's page @j:
 * the one its address had, if for the same content. */
static uint32_t forked_id(struct forked *fk, const struct snapshot *snap,
			  size_t j, uint32_t real)
{
	uint32_t a = snap->addr_no[j], id = fk->last[a];

	if (id != NO_ID && fk->real[id - fk->base] == real)
		return id;
	if ((uint64_t)fk->base + fk->n >= NO_ID)
		return real;	/* no id left (never with the series' bounds) */
	if ((fk->n & (fk->n - 1)) == 0 || !fk->n)
		fk->real = xreallocarray(fk->real, fk->n ? 2 * fk->n : 1,
					 sizeof(*fk->real));
	fk->real[fk->n] = real;
	id = fk->base + (uint32_t)fk->n++;
	fk->last[a] = id;
	return id;
}

/* Give each forked mapping of a frame KSM never merges a content of its own. */
static void rewrite(struct forked *fk, struct forked_snap *fs,
		    struct snapshot *snap, const struct fpage *v, size_t m)
{
	for (size_t a = 0, b; a < m; a = b) {
		uint32_t id = v[a].id, nf = fk->frames[id];

		for (b = a + 1; b < m && v[b].frame == v[a].frame &&
		     v[b].id == id; b++)
			;
		if (nf != 1 || (fk->ksm.use_zero_pages && id == fk->zero_id))
			continue;	/* merged, or KSM's zero page takes it */
		for (size_t k = a + 1; k < b; k++) {
			snap->id[v[k].j] = forked_id(fk, snap, v[k].j, id);
			fs->forked++;
		}
	}
}

void forked_snapshot(struct forked *fk, size_t s, struct snapshot *snap,
		     const uint64_t *frame, unsigned shift, const uint64_t *addr)
{
	struct forked_snap *fs = &fk->snaps[s];
	struct fpage *v = xcalloc(snap->n + 1, sizeof(*v));
	size_t m = 0;

	fs->pages = snap->n;
	for (size_t j = 0; j < snap->n; j++)
		if (frame[j])
			v[m++] = (struct fpage){ frame[j], snap->id[j], (uint32_t)j };
	if (!m) {
		free(v);
		return;
	}
	fs->framed = 1;
	fs->proc_frames = xcalloc(fk->nprocs + 1, sizeof(uint64_t));
	fs->proc_fork_shared = xcalloc(fk->nprocs + 1, sizeof(uint64_t));
	qsort(v, m, sizeof(*v), fpage_cmp);
	count_frames(fk, fs, v, m, snap, shift, addr);
	steady_state(fk, fs, snap);
	rewrite(fk, fs, snap, v, m);
	for (size_t k = 0; k < m; k++)
		fk->frames[v[k].id] = 0;
	free(v);
}

void forked_contents(struct forked *fk, uint32_t **sum, uint64_t **head)
{
	size_t total = (size_t)fk->base + fk->n;

	*sum = xreallocarray(*sum, total ? total : 1, sizeof(**sum));
	*head = xreallocarray(*head, total ? total : 1, sizeof(**head));
	for (size_t k = 0; k < fk->n; k++) {
		(*sum)[fk->base + k] = (*sum)[fk->real[k]];
		(*head)[fk->base + k] = splitmix(k);
	}
}

const unsigned char *forked_bytes(const struct forked *fk, uint32_t id)
{
	(void)id;	/* told apart by their heads */
	return fk->page;
}

const struct forked_snap *forked_at(const struct forked *fk, size_t s)
{
	return s < fk->nsnaps && fk->snaps[s].framed ? &fk->snaps[s] : NULL;
}

void forked_figures(const struct forked *fk, size_t s, uint64_t saving,
		    struct figures *f)
{
	const struct forked_snap *fs = forked_at(fk, s);

	if (!fs) {		/* files: each page a frame */
		f->frames = f->pages;
		f->freed_bytes = saving * PAGE_BYTES;
		return;
	}
	f->frames = fs->frames;
	f->estimate = fs->estimate;
	if (saving > fs->saving)
		saving = fs->saving;
	f->freed_bytes = fs->saving ? (uint64_t)((double)fs->freed *
		(double)saving / (double)fs->saving + 0.5) * PAGE_BYTES : 0;
}

void forked_free(struct forked *fk)
{
	for (size_t s = 0; s < fk->nsnaps; s++) {
		free(fk->snaps[s].proc_frames);
		free(fk->snaps[s].proc_fork_shared);
	}
	free(fk->snaps);
	free(fk->real);
	free(fk->last);
	free(fk->frames);
	free(fk->count);
	memset(fk, 0, sizeof(*fk));
}
