/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOT_H
#define KSMSCAN_HOT_H

#include <stddef.h>

/*
 * Hot copies: contents that occur twice are likely to occur again, so up to
 * HOT_BYTES of them are copied to memory, and later pages are compared with
 * the copy rather than with bytes read back from the input (pread).
 */

/* The budget for hot copies. */
#define HOT_BYTES (16u << 20)

/* Room for the copies, allocated at once (it uses memory only as it fills),
 * so that anybody can tell a hot copy by its address. */
struct hot {
	unsigned char *mem;
	size_t used;		/* bytes of it in use */
};

/**
 * hot_init() - reserve the room.
 * @h: the hot copies
 */
void hot_init(struct hot *h);

/**
 * hot_has() - whether @p is a hot copy (any thread).
 * @h: the hot copies
 * @p: an address
 */
static inline int hot_has(const struct hot *h, const unsigned char *p)
{
	return p >= h->mem && p < h->mem + HOT_BYTES;
}

/**
 * hot_copy() - copy a page while the budget lasts (the adder's thread only).
 * @h: the hot copies
 * @page: PAGE_BYTES bytes
 *
 * Return: the copy, or NULL when the budget is spent.
 */
unsigned char *hot_copy(struct hot *h, const unsigned char *page);

/**
 * hot_free() - free the room.
 * @h: the hot copies
 */
void hot_free(struct hot *h);

#endif
