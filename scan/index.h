/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_INDEX_H
#define KSMSCAN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"
#include "../util/page.h"

/*
 * The index of distinct page contents. It alone decides whether two pages are
 * equal: a 32-bit key (seeded XXH3) finds candidates, a comparison of the
 * bytes (page_equal()) decides.
 * Contents whose bytes will not stay in memory (streams, decompressed pages,
 * processes) are copied once into a spool file, mapped, so that later pages
 * are still compared byte for byte; contents seen twice are copied to memory
 * (at most 16 MiB) and compared there.
 *
 * Memory per distinct content: a 16-byte entry, 5.3 to 10.7 bytes of hash
 * slots, each selected algorithm's digest width, and with several inputs a
 * 4-byte count for the current input; nothing per duplicate page. At most
 * 2^28 - 1 distinct contents.
 */

/* One distinct content: 16 bytes. */
struct index_entry {
	/* The content: in an input, the spool, or a copy in memory. */
	_Atomic(const unsigned char *) bytes;
	uint32_t count;			/* pages with this content, all inputs */
	uint32_t key;			/* its index_key() */
};

struct index;

/**
 * index_key() - the key a page is filed under: XXH3 of its bytes with a seed
 * chosen at random for the run, folded to 32 bits. Equal pages have equal
 * keys; a key only finds candidates, and with a secret seed no dump can put
 * all its pages on one key.
 * @ix: the index (it holds the seed)
 * @page: PAGE_BYTES bytes
 */
uint32_t index_key(const struct index *ix, const unsigned char *page);

/**
 * index_new() - an empty index.
 * @algos: the selected algorithms, whose digests are kept per distinct content
 * @nalgos: how many
 * @several: whether several inputs are counted, each on its own as well
 *
 * Return: the index; ends the program if memory is out.
 */
struct index *index_new(const struct algo *const *algos, size_t nalgos,
			int several);

/**
 * index_add() - count one page.
 * @ix: the index
 * @page: PAGE_BYTES bytes
 * @keep: the same bytes where they stay valid as long as the index lives
 *	(kept if the content is new), or NULL: then they are copied to the
 *	spool file, and @page must stay valid until index_flush()
 * @is_zero: whether all bytes of @page are zero (the caller knows already)
 * @key: the page's index_key(); ignored for zero pages
 * @digests: the page's digest for each selected algorithm, in order
 * @hint: the id index_find_many() returned for this page, or NO_ID
 * @id: set to the content's id
 *
 * Return: 1 if the content already occurred in the current input, 0 if not,
 * -1 if the spool file could not be written or the index is full
 * (index_error() says which; nothing is printed).
 */
int index_add(struct index *ix, const unsigned char *page,
	      const unsigned char *keep,
	      int is_zero, uint32_t key, const struct digest *digests,
	      uint32_t hint, uint32_t *id);

/**
 * index_find_many() - look pages up without changing the index, their
 * memory accesses overlapped. Any thread may, while one other thread calls
 * index_add(); a content added concurrently may be missed, and one found is
 * byte-for-byte equal to its page (so index_add() counts it uncompared).
 * @ix: the index
 * @pages: @n pages of PAGE_BYTES bytes
 * @key: their index_key()s
 * @skip: pages not to look up (nonzero), such as zero pages
 * @n: how many pages
 * @ids: set to each page's content id, or NO_ID (skipped or not found)
 */
void index_find_many(const struct index *ix, const unsigned char *pages,
		     const uint32_t *key, const unsigned char *skip, size_t n,
		     uint32_t *ids);

/**
 * index_prefetch() - start loading what index_add() will soon need: the
 * entry a worker found, or else the hash slot the key will probe.
 * @ix: the index
 * @key: the key index_add() will be given
 * @hint: the hint it will be given
 */
void index_prefetch(const struct index *ix, uint32_t key, uint32_t hint);

/**
 * index_flush() - write the pages waiting for the spool file: before the
 * pages given to index_add() go away, and before contents are read through
 * their mapping (the reports that read contents).
 * @ix: the index
 *
 * Return: 0, or -1 if the spool file could not be written (index_error()).
 */
int index_flush(struct index *ix);

/**
 * index_error() - why index_add() or index_flush() last returned -1.
 * @ix: the index
 */
const char *index_error(const struct index *ix);

/**
 * index_add_mapping() - say that some stable bytes are a mapped file.
 * @ix: the index
 * @base: the mapping
 * @size: its length
 * @fd: the file, open for reading as long as the index lives
 * @offset: the file offset of @base
 *
 * Contents in it are then compared by reading the file (pread) rather than
 * through the mapping, so that the scan's resident set stays small.
 */
void index_add_mapping(struct index *ix, const unsigned char *base, size_t size,
		       int fd, uint64_t offset);

/**
 * index_release() - drop the pages of mapped files and of the spool that
 * reading contents through their mappings brought into the process.
 * @ix: the index
 *
 * For sinks that read kept contents page by page (SINK_KEPT): without it,
 * every content they read would stay resident to the end of the scan.
 */
void index_release(struct index *ix);

/**
 * index_generation() - a number that changes whenever the hash slots are
 * replaced (they grow as contents are added).
 * @ix: the index
 */
unsigned index_generation(const struct index *ix);

/**
 * index_reclaim() - free the slot tables no lookup can still be probing.
 * @ix: the index
 * @oldest: index_generation() when the oldest lookup still running (or
 *	about to run: a batch in flight) began; index_generation() if none
 *
 * Lookups (index_find_many()) probe the table they find when
 * they start; a table replaced since goes on being read by them.
 */
void index_reclaim(struct index *ix, unsigned oldest);

/**
 * index_end_input() - start counting a new input: every count in the current
 * input becomes 0.
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
 * index_count() - how many pages had content @id.
 * @ix: the index
 * @id: a content id
 * @current_input: in the current input only, else in all inputs
 */
uint32_t index_count(const struct index *ix, size_t id, int current_input);

/**
 * index_counted() - whether content @id (which index_find_many() found) has been
 * counted in the current input already; any thread may ask while one other
 * calls index_add(), and may be told 0 for a content counted meanwhile.
 * @ix: the index
 * @id: a content id
 * @input_first: index_size() when the current input began
 */
int index_counted(const struct index *ix, uint32_t id, size_t input_first);

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
