/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_FRAMES_H
#define KSMSCAN_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "tally.h"

/*
 * The frames of live pages (docs/model.md, "Frames"). KSM merges physical
 * pages, not mappings: a content held on one frame, however many processes
 * map it since they forked, is never merged (mm/ksm.c does not substitute a
 * KSM page for a forked page); on two frames or more, every mapping is
 * merged. Each page read from a process is noted with its frame; a scope
 * (an input, all of them, a group) then asks how many frames each content
 * has in it.
 *
 * As root the frame is pagemap's frame number. Without root it reads 0, and
 * the frame is estimated: a page pagemap says the process maps alone is a
 * frame of its own; any other is taken to be one frame with the page at the
 * same address of the same content in the processes of its family (the
 * fork tree of one command, host/process.h's proc_family()).
 *
 * A page that maps the kernel's zero page (memory only read) is never
 * noted: the reader leaves it out (dump/proc.c), as ksmd's walk does.
 *
 * Memory: 16 bytes per page read from a process.
 */

/* Key bits: a known frame is its number (below 2^55), and FRAME_KEY_KSM if
 * it is a KSM page; an estimated one has FRAME_KEY_ALONE (a page its
 * process maps alone: a running number) or FRAME_KEY_FAMILY (family and
 * page number). */
#define FRAME_KEY_KSM (UINT64_C(1) << 61)
#define FRAME_KEY_FAMILY (UINT64_C(1) << 62)
#define FRAME_KEY_ALONE (UINT64_C(1) << 63)

/** frames_key_ksm() - whether frame key @key is a KSM page already. */
static inline int frames_key_ksm(uint64_t key)
{
	return (key & (FRAME_KEY_KSM | FRAME_KEY_FAMILY | FRAME_KEY_ALONE)) ==
	       FRAME_KEY_KSM;
}

struct frames;

/**
 * frames_new() - no page noted yet.
 */
struct frames *frames_new(void);

/**
 * frames_input() - the pages noted from now on are input @input_no's.
 * @fr: the frames
 * @input_no: the input's number (ascending: inputs are read in order)
 * @family: its process's family (proc_family()), for the estimate
 */
void frames_input(struct frames *fr, size_t input_no, int family);

/**
 * frames_keep() - whether frames_add() notes pages (the default), or only
 * gives their keys: a live series keeps its own (scan/forked.h), and the
 * engine's notes would cost it 16 bytes a page of every snapshot.
 * @fr: the frames
 * @keep: 0 to give keys only
 */
void frames_keep(struct frames *fr, int keep);

/**
 * frames_add() - note one page of the current input.
 * @fr: the frames
 * @address: the page's address
 * @word: its frame word (host/memory.h)
 * @id: its content id
 *
 * Return: the page's frame key: equal for pages on one frame (known or
 * estimated), never 0.
 */
uint64_t frames_add(struct frames *fr, uint64_t address, uint64_t word,
		    uint32_t id);

/**
 * frames_count() - the frames of each content in a scope.
 * @fr: the frames
 * @input_no: the scope is this input alone; SIZE_MAX: the inputs @in_scope
 *	says (NULL: every input)
 * @in_scope: per input number, nonzero if the scope holds it
 * @nids: content ids to count (index_size())
 * @out: filled; free it with frame_counts_free()
 *
 * Return: 0, or -1 if no page of the scope was noted (files: the scope has
 * no frames, and @out is left empty).
 */
int frames_count(struct frames *fr, size_t input_no,
		 const unsigned char *in_scope, size_t nids,
		 struct frame_counts *out);

/**
 * frames_fork_shared() - the pages of input @input_no whose frame another
 * input's page maps too (pages a process shares with another since fork).
 * @fr: the frames
 * @input_no: the input
 */
uint64_t frames_fork_shared(struct frames *fr, size_t input_no);

/* How many frames of one content an input holds, or two inputs share. */
struct frames_held {
	uint32_t id;		/* the content */
	uint32_t a, b;		/* the inputs (b = a: one input's own) */
	uint32_t frames;	/* its frames there */
	uint32_t ksm;		/* one of them is a KSM page */
};

/**
 * frames_held() - every input's frames per content, and the frames two
 * inputs both map (forked), for the pairs of inputs (the matrix).
 * @fr: the frames, every input read
 * @out: set to the list, sorted by (id, a, b); the caller frees it
 *
 * Return: its length; 0 when no page was noted (files).
 */
size_t frames_held(struct frames *fr, struct frames_held **out);

/**
 * frames_first() - each input's frames per content, a frame counted in the
 * first input that maps it only: the frames of an export, in which a frame
 * that processes share since fork counts once, as the summary counts it.
 * @fr: the frames, every input read
 * @out: set to the list (b = a), sorted as frames_held()'s, for
 *	frames_held_find(); the caller frees it
 *
 * Return: its length; 0 when no page was noted (files).
 */
size_t frames_first(struct frames *fr, struct frames_held **out);

/**
 * frames_held_find() - an entry of frames_held()'s list.
 * @v: the list
 * @n: its length
 * @id: the content
 * @a: an input
 * @b: an input (@a for @a's own frames)
 *
 * Return: the entry, or NULL (no frame).
 */
const struct frames_held *frames_held_find(const struct frames_held *v, size_t n,
					   uint32_t id, uint32_t a, uint32_t b);

/**
 * frames_say_estimate() - say, once a run, that frames were estimated and
 * that root counts them (a warning on standard error).
 */
void frames_say_estimate(void);

/**
 * frames_free() - free the frames.
 * @fr: the frames, or NULL
 */
void frames_free(struct frames *fr);

#endif
