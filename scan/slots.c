/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "../util/util.h"
#include "slots.h"

/* An empty table of n slots, replacing @older. */
static struct slots *table_new(size_t n, struct slots *older)
{
	struct slots *t = xcalloc(1, sizeof(*t) + n * sizeof(t->s[0]));

	t->n = n;
	t->older = older;
	for (size_t i = 0; i < n; i++)
		atomic_init(&t->s[i], 0);
	return t;
}

void slots_init(struct slot_set *set, size_t n)
{
	atomic_init(&set->cur, table_new(n, NULL));
	set->generation = 0;
}

struct slots *slots_table(const struct slot_set *set)
{
	return atomic_load_explicit(&((struct slot_set *)set)->cur,
				    memory_order_acquire);
}

/* Double the table and file every entry again, then publish it. */
static void slots_grow(struct slot_set *set, size_t entries,
		       uint32_t (*key_of)(const void *, size_t, int *),
		       const void *ctx)
{
	struct slots *old = atomic_load_explicit(&set->cur, memory_order_relaxed);
	struct slots *t = table_new(old->n * 2, old);

	for (size_t id = 0; id < entries; id++) {
		int skip = 0;
		uint32_t key = key_of(ctx, id, &skip);
		size_t h = (size_t)key & (t->n - 1);

		if (skip)
			continue;
		while (atomic_load_explicit(&t->s[h], memory_order_relaxed))
			h = (h + 1) & (t->n - 1);
		atomic_store_explicit(&t->s[h], slot_make((uint32_t)id, key),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&set->cur, t, memory_order_release);
	set->generation++;
}

void slots_insert(struct slot_set *set, size_t h, uint32_t id, uint32_t key,
		  size_t entries, uint32_t (*key_of)(const void *, size_t, int *),
		  const void *ctx)
{
	struct slots *t = atomic_load_explicit(&set->cur, memory_order_relaxed);

	/* Publish: a lookup that sees the slot sees the entry. */
	atomic_store_explicit(&t->s[h], slot_make(id, key), memory_order_release);
	if (entries * 4 > t->n * 3)
		slots_grow(set, entries, key_of, ctx);
}

void slots_reclaim(struct slot_set *set, unsigned oldest)
{
	struct slots *t = atomic_load_explicit(&set->cur, memory_order_relaxed);

	/* A lookup begun before the last replacement may still read older tables. */
	if (oldest != set->generation)
		return;
	for (struct slots *o = t->older, *next; o; o = next) {
		next = o->older;
		free(o);
	}
	t->older = NULL;
}

void slots_free(struct slot_set *set)
{
	for (struct slots *t = atomic_load(&set->cur), *o; t; t = o) {
		o = t->older;
		free(t);
	}
}
