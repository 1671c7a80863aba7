/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_FORKED_H
#define KSMSCAN_FORKED_H

#include <stddef.h>
#include <stdint.h>

#include "../model/ksm.h"
#include "../model/replay.h"
#include "tally.h"

/*
 * A live series' frames (docs/over-time.md, "Frames"): in each snapshot,
 * the mappings of one frame that no other frame's content matches are
 * pages ksmd visits and never merges (mm/ksm.c does not substitute a KSM
 * page for a forked page). The first of them in ksmd's order keeps its
 * content; each later one is given a content of its own, equal to no
 * other page, so that the replay tracks and visits it, at its cost, and
 * never merges it. Mappings of a frame whose content is on another frame
 * too keep their content: ksmd merges them all.
 */

/* One snapshot's frames. */
struct forked_snap {
	uint64_t pages;			/* its pages */
	uint64_t frames;		/* their distinct frames */
	uint64_t forked;		/* mappings given a content of their own */
	uint64_t saving;		/* pages_sharing + ksm_zero_pages, KSM's
					 * steady state counted by frame */
	uint64_t freed;			/* the frames KSM frees then */
	int framed;			/* its pages have frames (live) */
	int estimate;			/* some frames were estimated */
	uint64_t *proc_frames;		/* per process: distinct frames */
	uint64_t *proc_fork_shared;	/* ... pages whose frame another
					 * process maps too */
};

struct forked {
	uint32_t base;			/* the first content id given out */
	size_t n;			/* content ids given out */
	uint32_t *real;			/* ... each one's real content */
	uint32_t *last;			/* per address: the id given last */
	struct forked_snap *snaps;
	size_t nsnaps, nprocs;
	uint32_t *frames, *count;	/* per real content: scratch */
	struct ksm_params ksm;
	uint32_t zero_id;
	unsigned char page[4096];	/* the bytes of every content given */
};

/**
 * forked_start() - prepare for a series' snapshots.
 * @fk: zeroed
 * @base: the first id above every real content id
 * @naddr: the series' addresses
 * @nsnaps: its snapshots
 * @nprocs: processes per snapshot
 * @ksm: KSM's settings
 * @zero_id: the all-zero content, or NO_ID
 */
void forked_start(struct forked *fk, size_t base, size_t naddr, size_t nsnaps,
		  size_t nprocs, const struct ksm_params *ksm, uint32_t zero_id);

/**
 * forked_snapshot() - apply the frame rule to snapshot @s.
 * @fk: the state
 * @s: its number
 * @snap: its pages; the ids of forked mappings are replaced
 * @frame: each page's frame key (frames.h), 0 when unknown (files: the
 *	snapshot is left as it is)
 * @shift: a page's process is its address >> @shift
 * @addr: the series' addresses
 */
void forked_snapshot(struct forked *fk, size_t s, struct snapshot *snap,
		     const uint64_t *frame, unsigned shift, const uint64_t *addr);

/**
 * forked_contents() - extend the per-content checksums and heads to the ids
 * given out: each one's checksum is its real content's (ksmd's checksum
 * gate sees the page as it is), its head a number no other has.
 * @fk: the state
 * @sum: per content id, reallocated
 * @head: likewise
 */
void forked_contents(struct forked *fk, uint32_t **sum, uint64_t **head);

/**
 * forked_bytes() - the bytes of a content given out (a page that matches
 * no page of the memory: its head is its own).
 * @fk: the state
 * @id: the id
 */
const unsigned char *forked_bytes(const struct forked *fk, uint32_t id);

/**
 * forked_at() - snapshot @s's frames, or NULL if it has none (files).
 * @fk: the state
 * @s: the snapshot
 */
const struct forked_snap *forked_at(const struct forked *fk, size_t s);

/**
 * forked_figures() - set a series row's frame figures (frames, freed_bytes,
 * estimate) from snapshot @s: the frames KSM frees at the replay's saving,
 * in proportion to the steady state's.
 * @fk: the state
 * @s: the row's snapshot
 * @saving: the replay's pages_sharing + ksm_zero_pages then
 * @f: the row's figures
 */
void forked_figures(const struct forked *fk, size_t s, uint64_t saving,
		    struct figures *f);

/**
 * forked_free() - free the state.
 * @fk: the state
 */
void forked_free(struct forked *fk);

#endif
