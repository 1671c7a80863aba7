/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "../util/page.h"
#include "../util/util.h"
#include "hot.h"

void hot_init(struct hot *h)
{
	h->mem = xmalloc(HOT_BYTES);
	h->used = 0;
}

unsigned char *hot_copy(struct hot *h, const unsigned char *page)
{
	unsigned char *copy = h->mem + h->used;

	if (h->used == HOT_BYTES)
		return NULL;
	memcpy(copy, page, PAGE_BYTES);
	h->used += PAGE_BYTES;
	return copy;
}

void hot_free(struct hot *h)
{
	free(h->mem);
}
