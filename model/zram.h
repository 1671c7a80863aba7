/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_ZRAM_H
#define KSMSCAN_ZRAM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The zram model of Linux 6.18: what a new zram device's mm_stat reads
 * after every page was written to it once (drivers/block/zram/zram_drv.c,
 * mm/zsmalloc.c with CONFIG_ZSMALLOC_CHAIN_SIZE=8, 4 KiB pages, 64-bit).
 * A same-filled page (every 8-byte word equal) costs nothing; a page whose
 * compressed length reaches zsmalloc's huge class size is stored whole; the
 * others are zsmalloc objects of their length plus an 8-byte handle,
 * rounded up to a size class, packed into zspages of 1 to 8 pages.
 */

/* zsmalloc's size classes: 32 bytes to a page in steps of 16. */
#define ZRAM_CLASSES 255

/* What zram holds: counts of pages and of objects per size class. */
struct zram_tally {
	uint64_t pages;			/* pages written */
	uint64_t same_pages;		/* same-filled: mm_stat same_pages */
	uint64_t huge_pages;		/* stored whole: mm_stat huge_pages */
	uint64_t compr_bytes;		/* mm_stat compr_data_size */
	uint64_t objects[ZRAM_CLASSES];	/* per merged size class (zram.c: class_of()) */
};

/**
 * zram_same_filled() - whether a page is one 8-byte word repeated.
 * @page: PAGE_BYTES bytes
 */
int zram_same_filled(const unsigned char *page);

/**
 * zram_huge_size() - zsmalloc's huge class size: a compressed length from
 * which zram stores the page whole (3625 bytes here).
 */
size_t zram_huge_size(void);

/**
 * zram_add() - write one page to the model.
 * @t: the tally
 * @same: whether the page is same-filled (then @len is ignored)
 * @len: its compressed length
 * @n: how many such pages
 */
void zram_add(struct zram_tally *t, int same, size_t len, uint64_t n);

/**
 * zram_mem_used() - mm_stat's mem_used_total: the pages zsmalloc took for
 * the objects, zspage by zspage, none freed.
 * @t: the tally
 */
uint64_t zram_mem_used(const struct zram_tally *t);

/**
 * zram_merge() - add one tally to another.
 * @to: the sum
 * @from: what is added
 */
void zram_merge(struct zram_tally *to, const struct zram_tally *from);

#endif
