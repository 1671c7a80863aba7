/* SPDX-License-Identifier: MIT */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../util/util.h"
#include "hot.h"
#include "index.h"
#include "maps.h"
#include "../util/page.h"
#include "slots.h"
#include "spool.h"

/* Entries and digests live in chunks, so that growing never copies them. */
#define CHUNK_SHIFT 16
#define CHUNK (1u << CHUNK_SHIFT)
/* Most chunks of entries: enough for SLOT_MAX_IDS entries. */
#define NCHUNKS_MAX ((size_t)1 << (SLOT_ID_BITS - CHUNK_SHIFT))

struct index {
	/* Chunks of CHUNK entries: the array never moves, so workers may read it. */
	struct index_entry *entries[NCHUNKS_MAX];
	/* With several inputs, each entry's count in the current input, chunked
	 * the same way; with one, that is the entry's count. */
	_Atomic uint32_t *counts_input[NCHUNKS_MAX];
	int several;
	uint64_t seed;			/* the keys' secret seed */
	unsigned char **dig[ALGO_MAX];	/* per algorithm, NCHUNKS_MAX chunks of digests */
	size_t nentries, nchunks;
	struct slot_set slots;		/* the hash slots (slots.c) */
	uint32_t zero_id;		/* the all-zero content, or NO_ID */
	size_t nalgos;
	unsigned width[ALGO_MAX];	/* digest bytes per algorithm */
	struct spool spool;		/* copies of contents that were not stable */
	struct maps maps;		/* mapped files compared by pread */
	struct hot hot;			/* copies of contents seen twice */
	char why[160];			/* why index_add() last failed */
};

/* A seed nobody can guess in advance: the kernel's random bytes. */
static uint64_t random_seed(void)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
		seed = (uint64_t)(now_seconds() * 1e9) ^ (uint64_t)getpid() << 32;
	return seed;
}

struct index *index_new(const struct algo *const *algos, size_t nalgos,
			int several)
{
	struct index *ix = xcalloc(1, sizeof(*ix));

	ix->several = several;
	slots_init(&ix->slots, 1024);
	spool_init(&ix->spool);
	maps_init(&ix->maps);
	hot_init(&ix->hot);
	ix->seed = random_seed();
	ix->zero_id = NO_ID;
	ix->nalgos = nalgos < ALGO_MAX ? nalgos : ALGO_MAX;
	/* Like the entries, the digest chunk arrays never move (workers read them). */
	for (size_t a = 0; a < ix->nalgos; a++) {
		ix->width[a] = algos[a]->bits / 8;
		ix->dig[a] = xcalloc(NCHUNKS_MAX, sizeof(*ix->dig[a]));
	}
	return ix;
}

static struct index_entry *entry_at(const struct index *ix, size_t id)
{
	return &ix->entries[id >> CHUNK_SHIFT][id & (CHUNK - 1)];
}

uint32_t index_key(const struct index *ix, const unsigned char *page)
{
	uint64_t k = xxh3_seeded_page(page, ix->seed);

	return (uint32_t)(k ^ k >> 32);
}

unsigned index_generation(const struct index *ix)
{
	return ix->slots.generation;
}

void index_reclaim(struct index *ix, unsigned oldest)
{
	slots_reclaim(&ix->slots, oldest);
}

void index_add_mapping(struct index *ix, const unsigned char *base, size_t size,
		       int fd, uint64_t offset)
{
	/* Past the registry's limit, pages are compared through the mapping. */
	maps_add(&ix->maps, base, size, fd, offset, 0);
}

int index_flush(struct index *ix)
{
	if (spool_flush(&ix->spool) < 0) {
		snprintf(ix->why, sizeof(ix->why), "%s", ix->spool.why);
		return -1;
	}
	return 0;
}

void index_release(struct index *ix)
{
	/* Pages rescued after a failed spool write live only in memory. */
	maps_release(&ix->maps, !ix->spool.failed);
}

const char *index_error(const struct index *ix)
{
	return ix->why;
}

/*
 * The bytes of a known content for a comparison, or NULL when this thread
 * cannot have them yet. Contents in a registered file mapping are read with
 * pread (maps.c); spooled pages not written yet are where the spool keeps
 * them, which only the main thread may read.
 */
static const unsigned char *index_bytes(const struct index *ix,
					const unsigned char *p, int main_thread)
{
	const unsigned char *q;
	const struct mapping *m;
	int written = 1;

	/* A hot copy is compared where it is. */
	if (hot_has(&ix->hot, p))
		return p;
	/* Popular contents are compared again and again: keep a few read. */
	if ((q = maps_recent(&ix->maps, p)))
		return q;
	m = maps_of(&ix->maps, p);
	if (!m)
		return p;
	if (m->spool) {
		q = spool_bytes(&ix->spool, m->offset + (uint64_t)(p - m->base),
				main_thread, &written);
		if (!written)
			return q;
	}
	return maps_read(&ix->maps, m, p);
}

/*
 * A content seen a second time: while the budget lasts, compare later pages
 * with a copy in memory (@page, the same bytes) rather than read it back.
 */
static void index_heat(struct index *ix, struct index_entry *e,
		       const unsigned char *page)
{
	unsigned char *copy;

	if (!maps_of(&ix->maps, e->bytes) || !(copy = hot_copy(&ix->hot, page)))
		return;
	/* Published: a worker that sees the copy sees its bytes. */
	atomic_store_explicit(&e->bytes, copy, memory_order_release);
}

/* Store a digest in its width: 4, 8 or 16 bytes (lo, then hi). */
static void digest_store(unsigned char *p, unsigned width, const struct digest *d)
{
	uint32_t w = (uint32_t)d->lo;

	switch (width) {
	case 4:
		memcpy(p, &w, 4);
		break;
	case 8:
		memcpy(p, &d->lo, 8);
		break;
	default:
		memcpy(p, &d->lo, 8);
		memcpy(p + 8, &d->hi, 8);
		break;
	}
}

/* Append a new distinct content and its digests; return its id. */
static int index_append(struct index *ix, const unsigned char *page,
			const unsigned char *keep,
			uint32_t key, const struct digest *digests, uint32_t *id)
{
	struct index_entry *e;
	size_t n = ix->nentries;

	if (n >= SLOT_MAX_IDS) {
		snprintf(ix->why, sizeof(ix->why), "more than %u distinct pages",
			 SLOT_MAX_IDS);
		return -1;
	}
	if (!keep && !(keep = spool_keep(&ix->spool, &ix->maps, page))) {
		snprintf(ix->why, sizeof(ix->why), "%s", ix->spool.why);
		return -1;
	}
	if ((n >> CHUNK_SHIFT) == ix->nchunks) {
		ix->entries[ix->nchunks] = xmalloc(CHUNK * sizeof(**ix->entries));
		if (ix->several)
			ix->counts_input[ix->nchunks] =
				xcalloc(CHUNK, sizeof(**ix->counts_input));
		for (size_t a = 0; a < ix->nalgos; a++)
			ix->dig[a][ix->nchunks] = xmalloc((size_t)CHUNK * ix->width[a]);
		ix->nchunks++;
	}
	*id = (uint32_t)ix->nentries++;
	e = entry_at(ix, *id);
	e->bytes = keep;
	e->count = 0;
	e->key = key;
	for (size_t a = 0; a < ix->nalgos; a++)
		digest_store(ix->dig[a][*id >> CHUNK_SHIFT] +
			     (size_t)(*id & (CHUNK - 1)) * ix->width[a],
			     ix->width[a], &digests[a]);
	return 0;
}

/*
 * Look a page (not all zero) up without changing the index; any thread may
 * do so while one other thread calls index_add(). A content added
 * concurrently may be missed; one found is byte-for-byte equal to @page, so
 * index_add() can count it without comparing. Return: its id, or NO_ID.
 */
static uint32_t index_find(const struct index *ix, const unsigned char *page,
			   uint32_t key)
{
	struct slots *t = slots_table(&ix->slots);
	size_t h = (size_t)key & (t->n - 1);

	for (size_t probes = 0; probes < t->n; probes++) {
		uint32_t sl = atomic_load_explicit(&t->s[h], memory_order_acquire);
		const struct index_entry *e;

		if (!sl)
			return NO_ID;
		e = entry_at(ix, slot_id(sl));
		if (slot_may_be(sl, key) && e->key == key) {
			const unsigned char *q = index_bytes(ix,
				atomic_load_explicit(&e->bytes, memory_order_acquire), 0);

			if (q && page_equal(q, page))
				return slot_id(sl);
		}
		h = (h + 1) & (t->n - 1);
	}
	return NO_ID;
}

/* How far ahead index_find_many() asks for slots, for what they name, and
 * for the bytes of a content whose key matches. */
#define AHEAD_SLOT 16
#define AHEAD_ENTRY 8
#define AHEAD_BYTES 4

void index_find_many(const struct index *ix, const unsigned char *pages,
		     const uint32_t *key, const unsigned char *skip, size_t n,
		     uint32_t *ids)
{
	struct slots *t = slots_table(&ix->slots);

	/*
	 * Each lookup waits for memory three times (the slot, then the key and
	 * entry it names, then the content's bytes): all are asked for ahead,
	 * so that the waits overlap.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t j = i + AHEAD_SLOT, k = i + AHEAD_ENTRY, m = i + AHEAD_BYTES;

		if (j < n && !skip[j])
			__builtin_prefetch(&t->s[key[j] & (t->n - 1)]);
		if (k < n && !skip[k]) {
			uint32_t sl = atomic_load_explicit(&t->s[key[k] & (t->n - 1)],
							   memory_order_acquire);

			if (sl && slot_may_be(sl, key[k]))
				__builtin_prefetch(entry_at(ix, slot_id(sl)));
		}
		if (m < n && !skip[m]) {
			uint32_t sl = atomic_load_explicit(&t->s[key[m] & (t->n - 1)],
							   memory_order_acquire);

			const struct index_entry *e =
				sl && slot_may_be(sl, key[m]) ? entry_at(ix, slot_id(sl)) : NULL;

			if (e && e->key == key[m]) {
				const unsigned char *p = atomic_load_explicit(
					&e->bytes, memory_order_relaxed);

				/* Other contents are read with pread. */
				if (hot_has(&ix->hot, p))
					for (unsigned c = 0; c < PAGE_BYTES; c += 64)
						__builtin_prefetch(p + c);
			}
		}
		ids[i] = skip[i] ? NO_ID :
			 index_find(ix, pages + i * PAGE_BYTES, key[i]);
	}
}

/* The key of entry @id, for refiling it in a grown table; not the zero page. */
static uint32_t key_of(const void *ctx, size_t id, int *skip)
{
	const struct index *ix = ctx;

	*skip = id == ix->zero_id;
	return entry_at(ix, id)->key;
}

/* The id of a non-zero page's content, added if new; -1 on an error. */
static int index_lookup_add(struct index *ix, const unsigned char *page,
			    const unsigned char *keep, uint32_t key,
			    const struct digest *digests, uint32_t *id)
{
	struct slots *t = slots_table(&ix->slots);
	size_t h = (size_t)key & (t->n - 1);

	for (;;) {
		uint32_t sl = atomic_load_explicit(&t->s[h], memory_order_relaxed);
		const struct index_entry *e;

		if (!sl) {
			if (index_append(ix, page, keep, key, digests, id) < 0)
				return -1;
			slots_insert(&ix->slots, h, *id, key, ix->nentries, key_of, ix);
			return 0;
		}
		e = entry_at(ix, slot_id(sl));
		/* Equal keys are only candidates: the bytes decide. */
		if (slot_may_be(sl, key) && e->key == key) {
			const unsigned char *q = index_bytes(ix, e->bytes, 1);

			if (q && page_equal(q, page)) {
				*id = slot_id(sl);
				return 0;
			}
		}
		h = (h + 1) & (t->n - 1);
	}
}

int index_add(struct index *ix, const unsigned char *page,
	      const unsigned char *keep,
	      int is_zero, uint32_t key, const struct digest *digests,
	      uint32_t hint, uint32_t *idp)
{
	struct index_entry *e;
	uint32_t id = hint;

	if (is_zero) {
		/* The zero page needs no table: it is one known content. */
		if (ix->zero_id == NO_ID &&
		    index_append(ix, page, keep, 0, digests, &ix->zero_id) < 0)
			return -1;
		id = ix->zero_id;
	} else if (hint == NO_ID &&
		   index_lookup_add(ix, page, keep, key, digests, &id) < 0) {
		return -1;
	}
	/* Else a worker found and compared it already (index_find()). */
	e = entry_at(ix, id);
	if (e->count == UINT32_MAX) {
		snprintf(ix->why, sizeof(ix->why), "more than %u pages with one "
			 "content", UINT32_MAX);
		return -1;
	}
	if (e->count++ == 1 && !is_zero)
		index_heat(ix, e, page);
	if (idp)
		*idp = id;
	if (!ix->several)
		return e->count > 1;
	/* One writer (this thread); workers only read (index_counted()). */
	_Atomic uint32_t *c = &ix->counts_input[id >> CHUNK_SHIFT][id & (CHUNK - 1)];
	uint32_t before = atomic_load_explicit(c, memory_order_relaxed);

	atomic_store_explicit(c, before + 1, memory_order_relaxed);
	return before > 0;
}

void index_prefetch(const struct index *ix, uint32_t key, uint32_t hint)
{
	struct slots *t = slots_table(&ix->slots);

	if (hint != NO_ID)
		__builtin_prefetch(entry_at(ix, hint), 1);
	else
		__builtin_prefetch(&t->s[key & (t->n - 1)]);
}

void index_end_input(struct index *ix)
{
	if (ix->several)
		for (size_t c = 0; c < ix->nchunks; c++)
			for (size_t i = 0; i < CHUNK; i++)
				atomic_store_explicit(&ix->counts_input[c][i], 0,
						      memory_order_relaxed);
}

uint32_t index_count(const struct index *ix, size_t id, int current_input)
{
	if (current_input && ix->several)
		return atomic_load_explicit(&ix->counts_input[id >> CHUNK_SHIFT]
						       [id & (CHUNK - 1)], memory_order_relaxed);
	return entry_at(ix, id)->count;
}

int index_counted(const struct index *ix, uint32_t id, size_t input_first)
{
	if (id >= input_first || !ix->several)
		return 1;
	return index_count(ix, id, 1) > 0;
}

size_t index_size(const struct index *ix)
{
	return ix->nentries;
}

const struct index_entry *index_entry(const struct index *ix, size_t id)
{
	return entry_at(ix, id);
}

int index_is_zero(const struct index *ix, size_t id)
{
	return id == ix->zero_id;
}

void index_digest(const struct index *ix, size_t a, size_t id, struct digest *out)
{
	const unsigned char *p = ix->dig[a][id >> CHUNK_SHIFT] +
				 (id & (CHUNK - 1)) * ix->width[a];
	uint32_t w;

	out->hi = 0;
	switch (ix->width[a]) {
	case 4:
		memcpy(&w, p, 4);
		out->lo = w;
		break;
	case 8:
		memcpy(&out->lo, p, 8);
		break;
	default:
		memcpy(&out->lo, p, 8);
		memcpy(&out->hi, p + 8, 8);
		break;
	}
}

void index_free(struct index *ix)
{
	if (!ix)
		return;
	spool_free(&ix->spool);
	hot_free(&ix->hot);
	for (size_t c = 0; c < ix->nchunks; c++) {
		free(ix->entries[c]);
		free(ix->counts_input[c]);
		for (size_t a = 0; a < ix->nalgos; a++)
			free(ix->dig[a][c]);
	}
	for (size_t a = 0; a < ix->nalgos; a++)
		free(ix->dig[a]);
	slots_free(&ix->slots);
	free(ix);
}
