/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SLOTS_H
#define KSMSCAN_SLOTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The index's hash slots: open addressing with linear probing. A slot holds
 * an entry's id + 1 in its low SLOT_ID_BITS bits (0: empty) and the top bits
 * of the entry's key above them, so that a probe passes other contents
 * without reading their entries. One thread adds; any thread may probe.
 *
 * A table that grows is replaced; lookups that began on the old one go on
 * reading it, so it is freed only when no such lookup can remain: this file
 * holds that rule (slots_reclaim()).
 */

/* Bits of a slot that hold the id: at most SLOT_MAX_IDS contents (1 TiB). */
#define SLOT_ID_BITS 28
#define SLOT_MAX_IDS ((1u << SLOT_ID_BITS) - 1)

/* One table. */
struct slots {
	struct slots *older;		/* the tables it replaced, not yet freed */
	size_t n;			/* a power of two */
	_Atomic uint32_t s[];
};

/* The current table and how many have been made. */
struct slot_set {
	_Atomic(struct slots *) cur;
	unsigned generation;		/* changed by every replacement */
};

/**
 * slots_init() - start with an empty table.
 * @set: the set
 * @n: slots, a power of two
 */
void slots_init(struct slot_set *set, size_t n);

/**
 * slots_table() - the current table, for a lookup (acquire: the entries its
 * slots name are visible).
 * @set: the set
 */
struct slots *slots_table(const struct slot_set *set);

/**
 * slot_make() - the slot for entry @id with key @key; never 0.
 * @id: the entry id, at most SLOT_MAX_IDS - 1
 * @key: the entry's key
 */
static inline uint32_t slot_make(uint32_t id, uint32_t key)
{
	return (key >> SLOT_ID_BITS) << SLOT_ID_BITS | (id + 1);
}

/**
 * slot_may_be() - whether slot @sl may hold a content with key @key (its top
 * bits agree).
 * @sl: a non-empty slot
 * @key: the key looked for
 */
static inline int slot_may_be(uint32_t sl, uint32_t key)
{
	return (sl ^ key) >> SLOT_ID_BITS == 0;
}

/**
 * slot_id() - the entry id in a non-empty slot.
 * @sl: the slot
 */
static inline uint32_t slot_id(uint32_t sl)
{
	return (sl & SLOT_MAX_IDS) - 1;
}

/**
 * slots_insert() - file entry @id under @key in the current table, then grow
 * the table past three quarters full (the adder's thread only).
 * @set: the set
 * @h: the empty slot the probe ended at
 * @id: the entry
 * @key: its key
 * @entries: entries after this one is filed
 * @key_of: the key of any entry, for refiling; @ctx its argument; entries
 *	for which it returns 0 with @skip set are not filed (the zero page)
 */
void slots_insert(struct slot_set *set, size_t h, uint32_t id, uint32_t key,
		  size_t entries, uint32_t (*key_of)(const void *ctx, size_t id,
						     int *skip),
		  const void *ctx);

/**
 * slots_reclaim() - free the replaced tables no lookup can still be probing.
 * @set: the set
 * @oldest: the generation when the oldest lookup still running (or still to
 *	run: a batch in flight) began; the current generation if none
 */
void slots_reclaim(struct slot_set *set, unsigned oldest);

/**
 * slots_free() - free every table.
 * @set: the set
 */
void slots_free(struct slot_set *set);

#endif
