/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "index.h"

/* Marks a ref as an offset in the spool file rather than a pointer. */
#define REF_SPOOL (UINT64_C(1) << 63)
#define NO_ENTRY UINT32_MAX

struct index {
	struct index_entry *entries;
	size_t nentries, capentries;
	uint32_t *slots;	/* open addressing: entry id + 1, 0 is empty */
	size_t nslots;		/* a power of two */
	uint32_t zero_id;	/* the all-zero content, or NO_ENTRY */
	size_t nalgos;
	unsigned width[ALGO_MAX];	/* digest bytes per algorithm */
	unsigned char *dig[ALGO_MAX];	/* digests per algorithm, indexed by entry id */
	FILE *spool;		/* bytes of contents that were not stable */
	uint64_t spool_size;
	unsigned char scratch[PAGE_BYTES];
};

struct index *index_new(const struct algo *const *algos, size_t nalgos)
{
	struct index *ix = xcalloc(1, sizeof(*ix));

	ix->nslots = 1024;
	ix->slots = xcalloc(ix->nslots, sizeof(*ix->slots));
	ix->zero_id = NO_ENTRY;
	ix->nalgos = nalgos;
	for (size_t a = 0; a < nalgos && a < ALGO_MAX; a++)
		ix->width[a] = algos[a]->bits / 8;
	return ix;
}

/* Double the slot table and file every entry again. */
static void index_grow_slots(struct index *ix)
{
	size_t n = ix->nslots * 2;
	uint32_t *s = xcalloc(n, sizeof(*s));

	for (size_t id = 0; id < ix->nentries; id++) {
		if (id == ix->zero_id)
			continue;
		size_t h = (size_t)ix->entries[id].fp & (n - 1);

		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = (uint32_t)id + 1;
	}
	free(ix->slots);
	ix->slots = s;
	ix->nslots = n;
}

/* The bytes of a known content, from memory or from the spool. */
static const unsigned char *index_bytes(struct index *ix, uint64_t ref)
{
	if (!(ref & REF_SPOOL))
		return (const unsigned char *)(uintptr_t)ref;
	if (fseeko(ix->spool, (off_t)(ref & ~REF_SPOOL), SEEK_SET) != 0 ||
	    fread(ix->scratch, 1, PAGE_BYTES, ix->spool) != PAGE_BYTES) {
		error("spool file: %s", strerror(errno ? errno : EIO));
		return NULL;
	}
	return ix->scratch;
}

/* Keep a copy of bytes that will not stay valid; return their ref. */
static int index_keep(struct index *ix, const unsigned char *page, uint64_t *ref)
{
	if (!ix->spool) {
		ix->spool = tmpfile();
		if (!ix->spool) {
			error("cannot create a spool file: %s", strerror(errno));
			return -1;
		}
	}
	if (fseeko(ix->spool, (off_t)ix->spool_size, SEEK_SET) != 0 ||
	    fwrite(page, 1, PAGE_BYTES, ix->spool) != PAGE_BYTES) {
		error("spool file: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	*ref = ix->spool_size | REF_SPOOL;
	ix->spool_size += PAGE_BYTES;
	return 0;
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
static int index_append(struct index *ix, const unsigned char *page, int stable,
			uint64_t fp, const struct digest *digests, uint32_t *id)
{
	struct index_entry *e;
	uint64_t ref = (uint64_t)(uintptr_t)page;

	if (ix->nentries >= NO_ENTRY - 1) {
		error("more than %u distinct pages", NO_ENTRY - 1);
		return -1;
	}
	if (!stable && index_keep(ix, page, &ref) < 0)
		return -1;
	if (ix->nentries == ix->capentries) {
		ix->capentries = ix->capentries ? ix->capentries * 2 : 1024;
		ix->entries = xreallocarray(ix->entries, ix->capentries,
					    sizeof(*ix->entries));
		for (size_t a = 0; a < ix->nalgos; a++)
			ix->dig[a] = xreallocarray(ix->dig[a], ix->capentries,
						   ix->width[a]);
	}
	*id = (uint32_t)ix->nentries++;
	e = &ix->entries[*id];
	e->fp = fp;
	e->ref = ref;
	e->count = 0;
	e->count_input = 0;
	for (size_t a = 0; a < ix->nalgos; a++)
		digest_store(ix->dig[a] + (size_t)*id * ix->width[a],
			     ix->width[a], &digests[a]);
	return 0;
}

int index_add(struct index *ix, const unsigned char *page, int stable,
	      int is_zero, const struct digest *digests)
{
	uint32_t id;

	if (is_zero) {
		/* The zero page needs no table: it is one known content. */
		if (ix->zero_id == NO_ENTRY &&
		    index_append(ix, page, stable, 0, digests, &ix->zero_id) < 0)
			return -1;
		id = ix->zero_id;
	} else {
		uint64_t fp = fingerprint(page);
		size_t h = (size_t)fp & (ix->nslots - 1);

		for (;;) {
			uint32_t s = ix->slots[h];

			if (!s) {
				if (index_append(ix, page, stable, fp, digests, &id) < 0)
					return -1;
				ix->slots[h] = id + 1;
				if (ix->nentries * 2 > ix->nslots)
					index_grow_slots(ix);
				break;
			}
			if (ix->entries[s - 1].fp == fp) {
				const unsigned char *known =
					index_bytes(ix, ix->entries[s - 1].ref);

				if (!known)
					return -1;
				/* Equal fingerprints are only candidates. */
				if (memcmp(known, page, PAGE_BYTES) == 0) {
					id = s - 1;
					break;
				}
			}
			h = (h + 1) & (ix->nslots - 1);
		}
	}
	ix->entries[id].count++;
	return ix->entries[id].count_input++ > 0;
}

void index_end_input(struct index *ix)
{
	for (size_t id = 0; id < ix->nentries; id++)
		ix->entries[id].count_input = 0;
}

size_t index_size(const struct index *ix)
{
	return ix->nentries;
}

const struct index_entry *index_entry(const struct index *ix, size_t id)
{
	return &ix->entries[id];
}

int index_is_zero(const struct index *ix, size_t id)
{
	return id == ix->zero_id;
}

void index_digest(const struct index *ix, size_t a, size_t id, struct digest *out)
{
	const unsigned char *p = ix->dig[a] + id * ix->width[a];
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
	if (ix->spool)
		fclose(ix->spool);
	for (size_t a = 0; a < ix->nalgos; a++)
		free(ix->dig[a]);
	free(ix->entries);
	free(ix->slots);
	free(ix);
}
