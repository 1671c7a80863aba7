/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_INDEX_H
#define KSMSCAN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"

/*
 * The index of distinct page contents. It alone decides whether two pages are
 * equal: a 64-bit fingerprint finds candidates, memcmp of the bytes decides.
 * Contents whose bytes will not stay in memory (streams) are kept in a spool
 * file so that later pages can still be compared byte for byte.
 */

/* One distinct content. */
struct index_entry {
	uint64_t fp;		/* fingerprint (XXH3_64 of the bytes) */
	uint64_t ref;		/* where the bytes are: pointer, or spool offset */
	uint64_t count;		/* pages with this content, all inputs */
	uint64_t count_input;	/* pages with this content in the current input */
};

struct index;

/**
 * index_new() - an empty index.
 * @algos: the selected algorithms, whose digests are kept per distinct content
 * @nalgos: how many
 *
 * Return: the index; ends the program if memory is out.
 */
struct index *index_new(const struct algo *const *algos, size_t nalgos);

/**
 * index_add() - count one page.
 * @ix: the index
 * @page: PAGE_BYTES bytes
 * @stable: whether @page stays valid as long as the index lives
 * @is_zero: whether all bytes of @page are zero (the caller knows already)
 * @digests: the page's digest for each selected algorithm, in order
 *
 * Return: 1 if the content already occurred in the current input, 0 if not,
 * -1 if the spool file could not be written or read (reported).
 */
int index_add(struct index *ix, const unsigned char *page, int stable,
	      int is_zero, const struct digest *digests);

/**
 * index_end_input() - start counting a new input: every count_input becomes 0.
 * @ix: the index
 */
void index_end_input(struct index *ix);

/**
 * index_size() - number of distinct contents seen so far.
 * @ix: the index
 */
size_t index_size(const struct index *ix);

/**
 * index_entry() - a distinct content by id.
 * @ix: the index
 * @id: 0 .. index_size() - 1, in order of first appearance
 */
const struct index_entry *index_entry(const struct index *ix, size_t id);

/**
 * index_is_zero() - whether content @id is the all-zero page.
 * @ix: the index
 * @id: a content id
 */
int index_is_zero(const struct index *ix, size_t id);

/**
 * index_digest() - the digest that algorithm number @a gave content @id.
 * @ix: the index
 * @a: index into the algorithms given to index_new()
 * @id: a content id
 * @out: the digest
 */
void index_digest(const struct index *ix, size_t a, size_t id, struct digest *out);

/**
 * index_free() - free the index and remove its spool file.
 * @ix: the index, or NULL
 */
void index_free(struct index *ix);

#endif
