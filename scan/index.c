/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../util/util.h"
#include "index.h"
#include "page.h"

#define NO_ENTRY UINT32_MAX
/*
 * A hash slot holds an entry's id + 1 in its low ID_BITS bits (0: empty) and
 * the top bits of the entry's key above them, so that a probe passes other
 * contents without reading their entries. Hence at most MAX_ENTRIES distinct
 * contents: 1 TiB of distinct memory.
 */
#define ID_BITS 28
#define MAX_ENTRIES ((1u << ID_BITS) - 1)
/* Most chunks of entries: enough for MAX_ENTRIES entries. */
#define NCHUNKS_MAX ((size_t)1 << (ID_BITS - CHUNK_SHIFT))
/* Most registered mappings: inputs and 64 MiB pieces of the spool (1 TiB). */
#define MAPS_MAX 16384
/* Entries and digests live in chunks, so that growing never copies them. */
#define CHUNK_SHIFT 16
#define CHUNK (1u << CHUNK_SHIFT)
/* The spool file grows and is mapped in pieces of this size. */
#define SPOOL_PIECE (64u << 20)
/* Pages for the spool are written at most this many at a time. */
#define SPOOL_BATCH 256
/*
 * Contents that occur twice are likely to occur again: up to this many bytes
 * of them are copied to memory, so that later pages are compared with the
 * copy rather than with bytes read back from the input (pread).
 */
#define HOT_BYTES (16u << 20)

/* A file mapping whose pages are compared by pread (index_add_mapping()). */
struct mapping {
	const unsigned char *base;
	size_t size;
	int fd;
	uint64_t offset;	/* file offset of base */
	int spool;		/* a piece of the spool file */
};

/*
 * The hash slots (slot_of()); open addressing with linear probing. A table that
 * grows is replaced, and freed only when the caller says that no worker can
 * still be probing it (index_free_old()).
 */
struct slots {
	struct slots *older;
	size_t n;			/* a power of two */
	_Atomic uint32_t s[];
};

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
	_Atomic(struct slots *) slots;	/* the current table */
	unsigned generation;		/* tables made so far */
	uint32_t zero_id;	/* the all-zero content, or NO_ENTRY */
	size_t nalgos;
	unsigned width[ALGO_MAX];	/* digest bytes per algorithm */
	int spool_fd;		/* copies of contents that were not stable */
	unsigned char **pieces;	/* mapped pieces of the spool */
	size_t npieces;
	size_t piece_used;	/* bytes used in the last piece */
	/* Pages for the spool not written yet (the caller's, valid until
	 * index_flush(); all in the last piece), and how much of the spool
	 * file is written: workers compare only with that. */
	const unsigned char *pend[SPOOL_BATCH];
	size_t npend;
	uint64_t pend_at;	/* the file offset of the first */
	_Atomic uint64_t spool_written;
	int spool_failed;	/* a write failed: nothing more is spooled */
	int spool_unmapped;	/* the last piece is not a registered mapping */
	/* Registered file mappings: a fixed array, filled in order, so that
	 * workers may read the first nmaps while one more is added. */
	struct mapping maps[MAPS_MAX];
	_Atomic size_t nmaps;
	/* Room for the hot copies, allocated at once (it uses memory only as
	 * it fills), so that anybody can tell a hot copy by its address. */
	unsigned char *hot;
	size_t hot_used;	/* bytes of it in use */
};

/* A seed nobody can guess in advance: the kernel's random bytes. */
static uint64_t random_seed(void)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
		seed = (uint64_t)(now_seconds() * 1e9) ^ (uint64_t)getpid() << 32;
	return seed;
}

/* An empty slot table of n slots. */
static struct slots *slots_new(size_t n, struct slots *older)
{
	struct slots *t = xcalloc(1, sizeof(*t) + n * sizeof(t->s[0]));

	t->n = n;
	t->older = older;
	for (size_t i = 0; i < n; i++)
		atomic_init(&t->s[i], 0);
	return t;
}

struct index *index_new(const struct algo *const *algos, size_t nalgos,
			int several)
{
	struct index *ix = xcalloc(1, sizeof(*ix));

	ix->several = several;
	ix->hot = xmalloc(HOT_BYTES);
	atomic_init(&ix->slots, slots_new(1024, NULL));
	ix->seed = random_seed();
	atomic_init(&ix->nmaps, 0);
	ix->zero_id = NO_ENTRY;
	ix->nalgos = nalgos < ALGO_MAX ? nalgos : ALGO_MAX;
	ix->spool_fd = -1;
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

/* The slot of entry @id with key @key: never 0. */
static uint32_t slot_of(uint32_t id, uint32_t key)
{
	return (key >> ID_BITS) << ID_BITS | (id + 1);
}

/* Whether slot @sl may hold a content with key @key (its top bits agree). */
static int slot_may_be(uint32_t sl, uint32_t key)
{
	return (sl ^ key) >> ID_BITS == 0;
}

/* The entry id in a non-empty slot. */
static uint32_t slot_id(uint32_t sl)
{
	return (sl & MAX_ENTRIES) - 1;
}

uint32_t index_key(const struct index *ix, const unsigned char *page)
{
	uint64_t k = xxh3_seeded_page(page, ix->seed);

	return (uint32_t)(k ^ k >> 32);
}

/* Slots grow past three quarters full. */
static int too_full(size_t entries, size_t slots)
{
	return entries * 4 > slots * 3;
}

/* Double the slot table and file every entry again, then publish it. */
static void index_grow_slots(struct index *ix)
{
	struct slots *old = atomic_load_explicit(&ix->slots, memory_order_relaxed);
	struct slots *t = slots_new(old->n * 2, old);

	for (size_t id = 0; id < ix->nentries; id++) {
		if (id == ix->zero_id)
			continue;
		uint32_t key = entry_at(ix, id)->key;
		size_t h = (size_t)key & (t->n - 1);

		while (atomic_load_explicit(&t->s[h], memory_order_relaxed))
			h = (h + 1) & (t->n - 1);
		atomic_store_explicit(&t->s[h], slot_of((uint32_t)id, key),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&ix->slots, t, memory_order_release);
	ix->generation++;
}

unsigned index_generation(const struct index *ix)
{
	return ix->generation;
}

void index_reclaim(struct index *ix, unsigned oldest)
{
	struct slots *t = atomic_load_explicit(&ix->slots, memory_order_relaxed);

	/* A lookup begun before the last replacement may still read older tables. */
	if (oldest != ix->generation)
		return;
	for (struct slots *o = t->older, *next; o; o = next) {
		next = o->older;
		free(o);
	}
	t->older = NULL;
}

/* Register a mapping (index_add_mapping()); -1 past MAPS_MAX. */
static int add_mapping(struct index *ix, const unsigned char *base, size_t size,
		       int fd, uint64_t offset, int spool)
{
	size_t n = atomic_load_explicit(&ix->nmaps, memory_order_relaxed);

	/* Past the limit, pages are compared through the mapping instead. */
	if (n == MAPS_MAX)
		return -1;
	ix->maps[n] = (struct mapping){ base, size, fd, offset, spool };
	atomic_store_explicit(&ix->nmaps, n + 1, memory_order_release);
	return 0;
}

void index_add_mapping(struct index *ix, const unsigned char *base, size_t size,
		       int fd, uint64_t offset)
{
	add_mapping(ix, base, size, fd, offset, 0);
}

/*
 * The spool cannot take more: say so once (with errno's reason), and spool
 * nothing from now on. Returns NULL for index_keep().
 */
static const unsigned char *spool_fail(struct index *ix, const char *what)
{
	error("%s: %s", what, strerror(errno));
	ix->spool_failed = 1;
	ix->npend = 0;
	return NULL;
}

int index_flush(struct index *ix)
{
	size_t done = 0;	/* bytes written */
	size_t len = ix->npend * PAGE_BYTES;

	/* One system call for the lot, then whatever it left. */
	while (done < len) {
		struct iovec iov[SPOOL_BATCH];
		size_t first = done / PAGE_BYTES, skip = done % PAGE_BYTES, n = 0;
		ssize_t w;

		for (size_t k = first; k < ix->npend; k++, n++) {
			iov[n].iov_base = (void *)(ix->pend[k] + (k == first ? skip : 0));
			iov[n].iov_len = PAGE_BYTES - (k == first ? skip : 0);
		}
		w = pwritev(ix->spool_fd, iov, (int)n, (off_t)(ix->pend_at + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			spool_fail(ix, "spool file");
			return -1;
		}
		done += (size_t)w;
	}
	if (len)
		atomic_store_explicit(&ix->spool_written, ix->pend_at + len,
				      memory_order_release);
	ix->npend = 0;
	return 0;
}

/* Copy bytes that will not stay valid into the mapped spool. */
static const unsigned char *index_keep(struct index *ix, const unsigned char *page)
{
	const unsigned char *dst;
	off_t at;

	if (ix->spool_failed)
		return NULL;
	if (ix->spool_fd < 0) {
		ix->spool_fd = tmpfile_fd();
		if (ix->spool_fd < 0)
			return spool_fail(ix, "cannot create a spool file");
	}
	if (!ix->npieces || ix->piece_used == SPOOL_PIECE) {
		off_t end = (off_t)ix->npieces * SPOOL_PIECE;
		void *m;

		/* Pages waiting to be written stay within one piece. */
		if (index_flush(ix) < 0)
			return NULL;
		if (ftruncate(ix->spool_fd, end + SPOOL_PIECE) < 0)
			return spool_fail(ix, "spool file");
		/* Mapped for the reports that read contents (top, tree). */
		m = mmap(NULL, SPOOL_PIECE, PROT_READ, MAP_SHARED, ix->spool_fd, end);
		if (m == MAP_FAILED)
			return spool_fail(ix, "spool file");
		ix->pieces = xreallocarray(ix->pieces, ix->npieces + 1,
					   sizeof(*ix->pieces));
		ix->pieces[ix->npieces++] = m;
		ix->piece_used = 0;
		ix->spool_unmapped = add_mapping(ix, m, SPOOL_PIECE, ix->spool_fd,
						 (uint64_t)end, 1) < 0;
	}
	/*
	 * Written, not stored through the map, so that it stays out of the
	 * RSS: up to SPOOL_BATCH pages at a time, from where the caller has
	 * them until index_flush().
	 */
	at = (off_t)(ix->npieces - 1) * SPOOL_PIECE + (off_t)ix->piece_used;
	if (!ix->npend)
		ix->pend_at = (uint64_t)at;
	ix->pend[ix->npend++] = page;
	/* A piece past MAPS_MAX is read through its map: no page may wait. */
	if ((ix->npend == SPOOL_BATCH || ix->spool_unmapped) && index_flush(ix) < 0)
		return NULL;
	dst = ix->pieces[ix->npieces - 1] + ix->piece_used;
	ix->piece_used += PAGE_BYTES;
	return dst;
}

/* Pages read back for comparisons, per thread: a small direct-mapped cache. */
#define RECENT 64
static _Thread_local struct recent {
	const struct index *ix;
	const unsigned char *p;
	unsigned char page[PAGE_BYTES];
} recent[RECENT];

/* The registered mapping that holds @p, or NULL. */
static const struct mapping *mapping_of(const struct index *ix,
					const unsigned char *p)
{
	size_t n = atomic_load_explicit(&ix->nmaps, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (p >= ix->maps[i].base && p < ix->maps[i].base + ix->maps[i].size)
			return &ix->maps[i];
	return NULL;
}

/*
 * The bytes of a known content for a comparison, or NULL when a worker
 * cannot have them yet. Contents in a registered file mapping are read with
 * pread (into a small per-thread cache) rather than through the map, so that
 * comparing against an early page does not fault it (and its neighbours)
 * back into the process; pages for the spool not written yet are where
 * ix->pend says, which only the main thread may read.
 */
static const unsigned char *index_bytes(const struct index *ix,
					const unsigned char *p, int main_thread)
{
	struct recent *r = &recent[((uintptr_t)p >> 12 ^ (uintptr_t)p) % RECENT];
	const struct mapping *m;

	/* A hot copy is compared where it is. */
	if (p >= ix->hot && p < ix->hot + HOT_BYTES)
		return p;
	/* Popular contents are compared again and again: keep a few read. */
	if (r->p == p && r->ix == ix)
		return r->page;
	m = mapping_of(ix, p);
	if (m && m->spool) {
		uint64_t off = m->offset + (uint64_t)(p - m->base);

		/* Not written yet: the main thread has it, workers cannot. */
		if (off >= atomic_load_explicit(&ix->spool_written,
						memory_order_acquire)) {
			if (!main_thread || off < ix->pend_at ||
			    off - ix->pend_at >= ix->npend * PAGE_BYTES)
				return NULL;
			return ix->pend[(off - ix->pend_at) / PAGE_BYTES];
		}
	}
	if (!m || pread(m->fd, r->page, PAGE_BYTES,
			(off_t)(m->offset + (uint64_t)(p - m->base))) != PAGE_BYTES)
		return p;
	r->p = p;
	r->ix = ix;
	return r->page;
}

/*
 * A content seen a second time: while the budget lasts, compare later pages
 * with a copy in memory (@page, the same bytes) rather than read it back.
 */
static void index_heat(struct index *ix, struct index_entry *e,
		       const unsigned char *page)
{
	unsigned char *copy = ix->hot + ix->hot_used;

	if (ix->hot_used == HOT_BYTES || !mapping_of(ix, e->bytes))
		return;
	memcpy(copy, page, PAGE_BYTES);
	/* Published: a worker that sees the copy sees its bytes. */
	atomic_store_explicit(&e->bytes, copy, memory_order_release);
	ix->hot_used += PAGE_BYTES;
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
			uint32_t fp, const struct digest *digests, uint32_t *id)
{
	struct index_entry *e;
	size_t n = ix->nentries;

	if (n >= MAX_ENTRIES) {
		error("more than %u distinct pages", MAX_ENTRIES);
		return -1;
	}
	if (!keep && !(keep = index_keep(ix, page)))
		return -1;
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
	e->key = fp;
	for (size_t a = 0; a < ix->nalgos; a++)
		digest_store(ix->dig[a][*id >> CHUNK_SHIFT] +
			     (size_t)(*id & (CHUNK - 1)) * ix->width[a],
			     ix->width[a], &digests[a]);
	return 0;
}

uint32_t index_find(const struct index *ix, const unsigned char *page,
		    uint32_t fp)
{
	struct slots *t = atomic_load_explicit(&((struct index *)ix)->slots,
					       memory_order_acquire);
	size_t h = (size_t)fp & (t->n - 1);

	for (size_t probes = 0; probes < t->n; probes++) {
		uint32_t sl = atomic_load_explicit(&t->s[h], memory_order_acquire);
		const struct index_entry *e;

		if (!sl)
			return NO_ENTRY;
		e = entry_at(ix, slot_id(sl));
		if (slot_may_be(sl, fp) && e->key == fp) {
			const unsigned char *q = index_bytes(ix,
				atomic_load_explicit(&e->bytes, memory_order_acquire), 0);

			if (q && page_equal(q, page))
				return slot_id(sl);
		}
		h = (h + 1) & (t->n - 1);
	}
	return NO_ENTRY;
}

/* How far ahead index_find_many() asks for slots, for what they name, and
 * for the bytes of a content whose key matches. */
#define AHEAD_SLOT 16
#define AHEAD_ENTRY 8
#define AHEAD_BYTES 4

void index_find_many(const struct index *ix, const unsigned char *pages,
		     const uint32_t *fp, const unsigned char *skip, size_t n,
		     uint32_t *ids)
{
	struct slots *t = atomic_load_explicit(&((struct index *)ix)->slots,
					       memory_order_acquire);

	/*
	 * Each lookup waits for memory three times (the slot, then the key and
	 * entry it names, then the content's bytes): all are asked for ahead,
	 * so that the waits overlap.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t j = i + AHEAD_SLOT, k = i + AHEAD_ENTRY, m = i + AHEAD_BYTES;

		if (j < n && !skip[j])
			__builtin_prefetch(&t->s[fp[j] & (t->n - 1)]);
		if (k < n && !skip[k]) {
			uint32_t sl = atomic_load_explicit(&t->s[fp[k] & (t->n - 1)],
							   memory_order_acquire);

			if (sl && slot_may_be(sl, fp[k]))
				__builtin_prefetch(entry_at(ix, slot_id(sl)));
		}
		if (m < n && !skip[m]) {
			uint32_t sl = atomic_load_explicit(&t->s[fp[m] & (t->n - 1)],
							   memory_order_acquire);

			const struct index_entry *e =
				sl && slot_may_be(sl, fp[m]) ? entry_at(ix, slot_id(sl)) : NULL;

			if (e && e->key == fp[m]) {
				const unsigned char *p = atomic_load_explicit(
					&e->bytes, memory_order_relaxed);

				/* Other contents are read with pread. */
				if (p >= ix->hot && p < ix->hot + HOT_BYTES)
					for (unsigned c = 0; c < PAGE_BYTES; c += 64)
						__builtin_prefetch(p + c);
			}
		}
		ids[i] = skip[i] ? NO_ENTRY :
			 index_find(ix, pages + i * PAGE_BYTES, fp[i]);
	}
}

int index_add(struct index *ix, const unsigned char *page,
	      const unsigned char *keep,
	      int is_zero, uint32_t fp, const struct digest *digests,
	      uint32_t hint, uint32_t *idp)
{
	struct index_entry *e;
	uint32_t id;

	if (is_zero) {
		/* The zero page needs no table: it is one known content. */
		if (ix->zero_id == NO_ENTRY &&
		    index_append(ix, page, keep, 0, digests, &ix->zero_id) < 0)
			return -1;
		id = ix->zero_id;
	} else if (hint != NO_ENTRY) {
		/* A worker found and compared it already (index_find()). */
		id = hint;
	} else {
		struct slots *t = atomic_load_explicit(&ix->slots, memory_order_relaxed);
		size_t h = (size_t)fp & (t->n - 1);

		for (;;) {
			uint32_t sl = atomic_load_explicit(&t->s[h], memory_order_relaxed);

			if (!sl) {
				if (index_append(ix, page, keep, fp, digests, &id) < 0)
					return -1;
				/* Publish: a worker that sees the slot sees the entry. */
				atomic_store_explicit(&t->s[h], slot_of(id, fp),
						      memory_order_release);
				if (too_full(ix->nentries, t->n))
					index_grow_slots(ix);
				break;
			}
			e = entry_at(ix, slot_id(sl));
			/* Equal keys are only candidates: the bytes decide. */
			if (slot_may_be(sl, fp) && e->key == fp) {
				const unsigned char *q = index_bytes(ix, e->bytes, 1);

				if (q && page_equal(q, page)) {
					id = slot_id(sl);
					break;
				}
			}
			h = (h + 1) & (t->n - 1);
		}
	}
	e = entry_at(ix, id);
	if (e->count == UINT32_MAX) {
		error("more than %u pages with one content", UINT32_MAX);
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

void index_prefetch(const struct index *ix, uint32_t fp, uint32_t hint)
{
	struct slots *t = atomic_load_explicit(&((struct index *)ix)->slots,
					       memory_order_relaxed);

	if (hint != NO_ENTRY)
		__builtin_prefetch(entry_at(ix, hint), 1);
	else
		__builtin_prefetch(&t->s[fp & (t->n - 1)]);
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
	for (size_t i = 0; i < ix->npieces; i++)
		munmap(ix->pieces[i], SPOOL_PIECE);
	free(ix->hot);
	free(ix->pieces);
	if (ix->spool_fd >= 0)
		close(ix->spool_fd);
	for (size_t c = 0; c < ix->nchunks; c++) {
		free(ix->entries[c]);
		free(ix->counts_input[c]);
		for (size_t a = 0; a < ix->nalgos; a++)
			free(ix->dig[a][c]);
	}
	for (size_t a = 0; a < ix->nalgos; a++)
		free(ix->dig[a]);
	for (struct slots *t = atomic_load(&ix->slots), *o; t; t = o) {
		o = t->older;
		free(t);
	}
	free(ix);
}
