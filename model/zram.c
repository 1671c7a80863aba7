/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <string.h>

#include "../util/page.h"
#include "zram.h"

#define CLASS_MIN 32		/* ZS_MIN_ALLOC_SIZE */
#define CLASS_STEP 16		/* ZS_SIZE_CLASS_DELTA: PAGE_SIZE >> 8 */
#define CHAIN_MAX 8		/* CONFIG_ZSMALLOC_CHAIN_SIZE */
#define HANDLE 8		/* ZS_HANDLE_SIZE: stored in each object */

/* A size class after zsmalloc merged it with larger ones alike. */
struct zclass {
	unsigned size;		/* object size */
	unsigned pages;		/* pages per zspage */
	unsigned objects;	/* objects per zspage */
	unsigned merged;	/* the class index it is counted under */
};

static struct zclass classes[ZRAM_CLASSES];
static size_t huge_size;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The zspage length with the least waste for objects of @size (1 if a
 * power of two): the first of equal wastes, as zsmalloc chooses. */
static unsigned chain_size(unsigned size)
{
	unsigned best = 1, least = PAGE_BYTES;

	if (!(size & (size - 1)))
		return 1;
	for (unsigned i = 1; i <= CHAIN_MAX; i++) {
		unsigned waste = i * PAGE_BYTES % size;

		if (waste < least) {
			least = waste;
			best = i;
		}
	}
	return best;
}

/*
 * zsmalloc makes its classes from the largest down, and a class whose
 * zspages have the same pages and objects as the one above it is merged
 * into it; the huge class size is the largest class that packs several
 * objects, less the handle's bytes but one.
 */
static void classes_init(void)
{
	for (int i = ZRAM_CLASSES - 1; i >= 0; i--) {
		unsigned size = CLASS_MIN + (unsigned)i * CLASS_STEP;
		struct zclass *c = &classes[i];

		if (size > PAGE_BYTES)
			size = PAGE_BYTES;
		*c = (struct zclass){ size, chain_size(size), 0, (unsigned)i };
		c->objects = c->pages * PAGE_BYTES / size;
		if (c->pages != 1 && c->objects != 1 && !huge_size)
			huge_size = size - (HANDLE - 1);
		if (i + 1 < ZRAM_CLASSES && classes[i + 1].pages == c->pages &&
		    classes[i + 1].objects == c->objects)
			c->merged = classes[i + 1].merged;
	}
}

int zram_same_filled(const unsigned char *page)
{
	uint64_t first, w;

	memcpy(&first, page, 8);
	for (size_t i = 8; i < PAGE_BYTES; i += 8) {
		memcpy(&w, page + i, 8);
		if (w != first)
			return 0;
	}
	return 1;
}

size_t zram_huge_size(void)
{
	pthread_once(&once, classes_init);
	return huge_size;
}

/* The class index zsmalloc files an allocation of @len bytes under. */
static unsigned class_of(size_t len)
{
	size_t i = len <= CLASS_MIN ? 0 : (len - CLASS_MIN + CLASS_STEP - 1) / CLASS_STEP;

	return classes[i < ZRAM_CLASSES ? i : ZRAM_CLASSES - 1].merged;
}

void zram_add(struct zram_tally *t, int same, size_t len, uint64_t n)
{
	size_t huge = zram_huge_size();

	t->pages += n;
	if (same) {
		t->same_pages += n;
		return;
	}
	if (len >= huge) {
		/* Stored whole, in the page-sized class. */
		t->huge_pages += n;
		t->compr_bytes += n * PAGE_BYTES;
		t->objects[class_of(PAGE_BYTES)] += n;
		return;
	}
	t->compr_bytes += n * len;
	t->objects[class_of(len + HANDLE)] += n;
}

uint64_t zram_mem_used(const struct zram_tally *t)
{
	uint64_t pages = 0;

	zram_huge_size();
	for (size_t i = 0; i < ZRAM_CLASSES; i++) {
		const struct zclass *c = &classes[i];

		pages += (t->objects[i] + c->objects - 1) / c->objects * c->pages;
	}
	return pages * PAGE_BYTES;
}

void zram_merge(struct zram_tally *to, const struct zram_tally *from)
{
	to->pages += from->pages;
	to->same_pages += from->same_pages;
	to->huge_pages += from->huge_pages;
	to->compr_bytes += from->compr_bytes;
	for (size_t i = 0; i < ZRAM_CLASSES; i++)
		to->objects[i] += from->objects[i];
}
