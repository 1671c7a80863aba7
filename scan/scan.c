/* SPDX-License-Identifier: MIT */
/*
 * The scan engine. Readers hand out page ranges; the engine cuts them into
 * batches that worker threads prepare (the zero test, the index key, a
 * lookup in the index, and every selected algorithm over the contents new
 * to the input, timed per algorithm); the main thread then counts the
 * batches strictly in scan order, so the figures do not depend on -j, and
 * hands each page to the sinks (reports) that asked for pages, and each
 * counted input to every sink. Page data is copied only when a reader's
 * buffer would be reused before the workers are done with it and the
 * reader does not hand the buffer over (streams).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/progress.h"
#include "../util/util.h"
#include "../host/memory.h"
#include "../host/process.h"
#include "frames.h"
#include "index.h"
#include "../util/page.h"
#include "scan.h"

/* Mapped pages are released in pieces of this size once counted. */
#define RELEASE (16u << 20)

/* Pages hashed together: 32 KiB stay in a core's L1 cache while every
 * algorithm and the index key read them. */
#define L1_PAGES 8

/* A batch of pages on its way through the pipeline. */
struct batch {
	struct dump *dump;		/* the input, for coded pages */
	uint64_t coded;			/* coded pages: the first one's code */
	unsigned char bad[BATCH_PAGES];	/* coded pages that could not be made */
	char why[160];			/* what was wrong with the first of them */
	uint64_t why_offset;		/* and where */
	const unsigned char *data;	/* npages pages */
	unsigned char *own;		/* stream data: a copy, or the reader's
					 * buffer taken (BATCH_PAGES pages) */
	const unsigned char *keep;	/* data, if it stays valid to the end */
	uint64_t address;		/* address of the first page */
	uint64_t offset;		/* the input offset of the first page when
					 * mapped, else how far the stream was read */
	size_t npages;
	const struct region *region;
	struct digest dg[BATCH_PAGES][ALGO_MAX];
	uint32_t key[BATCH_PAGES];		/* index keys */
	uint32_t hint[BATCH_PAGES];		/* content found by a worker, or NO_ID */
	unsigned char zero[BATCH_PAGES];
	uint64_t frame[BATCH_PAGES];		/* frame words (live pages) */
	int framed;				/* frame holds them */
	unsigned char prepared[BATCH_PAGES];	/* sinks prepared the page */
	unsigned char *prep;		/* what they made: prep_total bytes a page */
	double seconds[ALGO_MAX];	/* hashing time per algorithm */
	size_t hashed;			/* pages hashed: contents new to the input */
	size_t seq;			/* the batch's number in the scan */
	unsigned generation;		/* the index's slot tables when handed out */
	size_t input_first;		/* the first content id of this input */
	int done;			/* hashed; guarded by the queue lock */
};

/* The worker pool: a FIFO of batches to hash. */
struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work, finished;
	struct batch **queue;		/* ring of pending batches */
	size_t cap, head, len;
	unsigned idle;			/* workers waiting for work */
	const struct batch *awaited;	/* the batch the main thread waits for */
	int stop;
	const struct scan_config *cfg;
	pthread_t *threads;
	unsigned nthreads;
	struct digest zero_digest[ALGO_MAX];	/* each algorithm's zero page */
	const struct index *ix;		/* looked up (not changed) by workers */
	_Atomic unsigned next_thread;	/* numbers for the workers; main is 0 */
	size_t *prep_off;		/* each sink's part of a page's prep */
	size_t prep_total;		/* bytes of prep per page */
};

/* The state of one run. */
struct scan {
	const struct scan_config *cfg;
	unsigned needs;			/* what the sinks need: SINK_* bits */
	struct index *ix;
	struct figures *fig;		/* per input, then one for all inputs */
	struct dump **dumps;		/* mapped ones kept open: the index
					 * points into them */
	const char **format;		/* each input's reader, NULL if not opened */
	struct proc_stats *proc;	/* each live input's kernel figures */
	size_t input;			/* the input being read */
	int stopped;			/* counting failed: the input ends here */
	int halted;			/* a sink stopped the run: no more input */
	struct pool pool;
	struct batch *ring;		/* batches in flight, in scan order */
	size_t ring_cap, ring_head, ring_len;
	struct progress *progress;
	uint64_t bytes_done;
	const unsigned char *rel_start, *rel_end;	/* counted, not released */
	size_t batches;			/* batches handed to the workers so far */
	struct group_counts *groups;	/* --group: pages per content per group */
	struct frames *frames;		/* live pages' frames */
	unsigned char *has_frames;	/* per input: its pages have frames */
	char why[256];			/* the current input's first error */
};

/* Make a batch's coded (compressed) pages, on the worker's core. */
static void batch_decode(struct batch *b)
{
	int first = 1;

	for (size_t i = 0; i < b->npages; i++) {
		char why[160];
		uint64_t off = 0;

		b->bad[i] = b->dump->reader->decode(b->dump, b->coded + i,
			b->address + i * (uint64_t)PAGE_BYTES,
			b->own + i * PAGE_BYTES, why, sizeof(why), &off) < 0;
		if (!b->bad[i])
			continue;
		/* A page that cannot be made is not counted. */
		memset(b->own + i * PAGE_BYTES, 0, PAGE_BYTES);
		if (first) {
			memcpy(b->why, why, sizeof(why));
			b->why_offset = off;
			first = 0;
		}
	}
	b->data = b->own;
}

/*
 * The zero test and the index's own key (seeded: a checksum alone could be
 * forged), the first read of each page, then the lookup: workers look each
 * page up and compare it with what they find, so that the main thread, which
 * counts in order, only counts. A content that the main thread is adding
 * meanwhile may be missed: then the main thread looks it up again.
 */
static void batch_lookup(struct pool *p, struct batch *b)
{
	for (size_t i = 0; i < b->npages; i++) {
		b->zero[i] = (unsigned char)page_is_zero(b->data + i * PAGE_BYTES);
		b->key[i] = b->zero[i] ? 0 : index_key(p->ix, b->data + i * PAGE_BYTES);
	}
	index_find_many(p->ix, b->data, b->key, b->zero, b->npages, b->hint);
}

/*
 * Only contents new to this input are hashed: a zero page, or one found in
 * the index that this input has counted already, has digests known already
 * (equal bytes, equal digests). Each input hashes its own contents, so that
 * its speed figures measure something. (A content whose first page is still
 * on its way to the main thread is not found yet: its next pages are hashed
 * too.) Return: how many pages are left to hash, listed in @todo.
 */
static size_t batch_known(struct pool *p, struct batch *b, uint16_t *todo)
{
	const struct scan_config *cfg = p->cfg;
	size_t n = 0;

	for (size_t i = 0; i < b->npages; i++) {
		int known = b->zero[i] || (b->hint[i] != NO_ID &&
			    index_counted(p->ix, b->hint[i], b->input_first));

		for (size_t a = 0; a < cfg->nalgos; a++) {
			if (b->zero[i])
				b->dg[i][a] = p->zero_digest[a];
			else if (known)
				index_digest(p->ix, a, b->hint[i], &b->dg[i][a]);
		}
		if (!known)
			todo[n++] = (uint16_t)i;
	}
	return n;
}

/* The sinks' prepare() for the pages whose contents are new to the input. */
static void batch_prepare(struct pool *p, struct batch *b, unsigned thread,
			  const uint16_t *todo, size_t n)
{
	const struct scan_config *cfg = p->cfg;

	if (!p->prep_total)
		return;
	memset(b->prepared, 0, b->npages);
	for (size_t j = 0; j < n; j++) {
		size_t i = todo[j];

		for (size_t k = 0; k < cfg->nsinks; k++)
			if (cfg->sinks[k]->ops->prepare)
				cfg->sinks[k]->ops->prepare(cfg->sinks[k], thread,
					b->data + i * PAGE_BYTES,
					b->prep + i * p->prep_total + p->prep_off[k]);
		b->prepared[i] = 1;
	}
}

/*
 * Prepare a batch for counting: make coded pages, test for zero pages, key
 * and look up every page, and hash the new contents with every algorithm,
 * each timed on its own; then the sinks' own preparations. @thread is the
 * caller's number.
 */
static void batch_hash(struct pool *p, struct batch *b, unsigned thread)
{
	const struct scan_config *cfg = p->cfg;
	uint16_t todo[BATCH_PAGES];		/* the pages to hash */
	size_t hashed;

	if (!b->data)
		batch_decode(b);
	batch_lookup(p, b);
	hashed = batch_known(p, b, todo);
	/*
	 * The rest is hashed L1_PAGES pages at a time, one algorithm after the
	 * other, so that each reads them from the core's own cache; which one
	 * goes first rotates from batch to batch, so that none always finds
	 * the pages a little further away. Only hashing is timed.
	 */
	for (size_t g = 0; g < hashed; g += L1_PAGES) {
		size_t end = hashed - g < L1_PAGES ? hashed : g + L1_PAGES;

		for (size_t k = 0; k < cfg->nalgos; k++) {
			size_t a = (k + b->seq) % cfg->nalgos;
			void (*hash)(const void *, struct digest *) = cfg->algos[a]->hash;
			double t0 = now_seconds();

			for (size_t j = g; j < end; j++)
				hash(b->data + todo[j] * PAGE_BYTES, &b->dg[todo[j]][a]);
			b->seconds[a] += now_seconds() - t0;
		}
	}
	b->hashed = hashed;
	batch_prepare(p, b, thread, todo, hashed);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	unsigned me = atomic_fetch_add(&p->next_thread, 1) + 1;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->len && !p->stop) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		if (!p->len)
			break;
		struct batch *b = p->queue[p->head];

		p->head = (p->head + 1) % p->cap;
		p->len--;
		pthread_mutex_unlock(&p->lock);
		batch_hash(p, b, me);
		pthread_mutex_lock(&p->lock);
		b->done = 1;
		/* Wake-ups cost system calls: only the one that is waited for. */
		if (b == p->awaited)
			pthread_cond_signal(&p->finished);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * Start the workers: one fewer than the threads asked for, since the main
 * thread prepares batches too while it waits (pool_wait()); with one
 * thread it prepares every batch by itself.
 */
static void pool_start(struct pool *p, const struct scan_config *cfg, size_t cap,
		       const struct index *ix)
{
	static const unsigned char zero[PAGE_BYTES];

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->cap = cap;
	p->ix = ix;
	atomic_init(&p->next_thread, 0);
	/* Each sink that prepares pages gets its part of a page's prep. */
	p->prep_off = xcalloc(cfg->nsinks + 1, sizeof(*p->prep_off));
	for (size_t k = 0; k < cfg->nsinks; k++) {
		p->prep_off[k] = p->prep_total;
		/* Rounded up, so that each sink's part is aligned. */
		p->prep_total += (cfg->sinks[k]->ops->prep_bytes + 7) & ~(size_t)7;
	}
	for (size_t a = 0; a < cfg->nalgos; a++)
		cfg->algos[a]->hash(zero, &p->zero_digest[a]);
	if (cfg->threads <= 1)
		return;
	p->queue = xcalloc(cap, sizeof(*p->queue));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->finished, NULL);
	p->threads = xcalloc(cfg->threads, sizeof(*p->threads));
	for (unsigned i = 0; i + 1 < cfg->threads; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
			break;
		p->nthreads++;
	}
}

static void pool_stop(struct pool *p)
{
	if (!p->nthreads)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->finished);
	free(p->threads);
	free(p->queue);
}

/* Hand a batch to the workers, or hash it here when there are none. */
static void pool_submit(struct pool *p, struct batch *b)
{
	if (!p->nthreads) {
		batch_hash(p, b, 0);
		b->done = 1;
		return;
	}
	pthread_mutex_lock(&p->lock);
	b->done = 0;
	p->queue[(p->head + p->len) % p->cap] = b;
	p->len++;
	if (p->idle)
		pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

/*
 * Wait until batch @b is prepared; meanwhile the main thread prepares the
 * oldest queued batches itself, so that -j N keeps N threads busy and no
 * more (a third thread on two cores took turns with the workers).
 */
static void pool_wait(struct pool *p, struct batch *b)
{
	if (!p->nthreads)
		return;
	pthread_mutex_lock(&p->lock);
	p->awaited = b;
	while (!b->done) {
		/* Rather than sleep, prepare the oldest batch still queued. */
		if (p->len) {
			struct batch *q = p->queue[p->head];

			p->head = (p->head + 1) % p->cap;
			p->len--;
			pthread_mutex_unlock(&p->lock);
			batch_hash(p, q, 0);
			pthread_mutex_lock(&p->lock);
			q->done = 1;
			continue;
		}
		pthread_cond_wait(&p->finished, &p->lock);
	}
	p->awaited = NULL;
	pthread_mutex_unlock(&p->lock);
}

/* Page @i of a batch to the sinks that want every page, each with what
 * its prepare() made of it. */
static void sinks_page(struct scan *s, struct batch *b, size_t i,
		       struct page_event *pg)
{
	const struct pool *p = &s->pool;

	for (size_t k = 0; k < s->cfg->nsinks; k++) {
		struct sink *sk = s->cfg->sinks[k];

		if (!(sk->ops->needs & SINK_PAGES))
			continue;
		pg->prep = sk->ops->prepare && b->prepared[i] ?
			   b->prep + i * p->prep_total + p->prep_off[k] : NULL;
		sk->ops->page(sk, pg);
	}
}

/*
 * The huge page page @i of the batch is part of (page_event's thp): a
 * live page's from kpageflags (its frame's 2 MiB: a huge page's frames
 * are aligned), a file's, with --thp=always, its 2 MiB of addresses.
 */
static uint64_t page_thp(const struct scan *s, const struct batch *b,
			 size_t i, uint64_t address)
{
	if (b->framed)
		return b->frame[i] & FRAME_THP ?
		       ((b->frame[i] & FRAME_PFN_MASK) >> 9) + 1 : 0;
	if (s->cfg->thp_always && s->cfg->inputs[s->input].path)
		return (address >> 21) + 1;
	return 0;
}

/*
 * The index could not count page @i of a batch (the spool is full, or the
 * index): say so for the input, and count nothing more of it, so that the
 * figures are those of a prefix of the input, the same for every -j.
 */
static int batch_fail(struct scan *s, struct batch *b, size_t i)
{
	uint64_t off = b->offset;

	if (b->keep)
		off += (uint64_t)(i < b->npages ? i : b->npages - 1) * PAGE_BYTES;
	dump_error(b->dump, off, "%s", index_error(s->ix));
	s->stopped = 1;
	return -1;
}

/*
 * Whether a sink asked the run to stop at page @i of a batch: then it is
 * said once, at that page, and no more is read of this input or any other.
 */
static int sinks_stop(struct scan *s, struct batch *b, size_t i)
{
	for (size_t k = 0; k < s->cfg->nsinks; k++) {
		const char *why = s->cfg->sinks[k]->stop;

		if (why) {
			dump_error(b->dump, b->offset + i * (uint64_t)PAGE_BYTES,
				   "%s", why);
			s->stopped = s->halted = 1;
			return -1;
		}
	}
	return 0;
}

/* Count a hashed batch in the index, and hand its pages to the sinks. */
static int batch_count(struct scan *s, struct figures *f, struct batch *b)
{
	const struct scan_config *cfg = s->cfg;
	struct page_event pg = { .input = cfg->inputs[s->input].name,
				 .input_no = s->input, .region = b->region };

	for (size_t a = 0; a < cfg->nalgos; a++)
		f->seconds[a] += b->seconds[a];
	f->hashed_pages += b->hashed;
	for (size_t i = 0; i < b->npages; i++) {
		const unsigned char *page = b->data + i * PAGE_BYTES;

		if (b->bad[i]) {
			/* Reported in scan order; only the input's first is printed. */
			dump_error(b->dump, b->why_offset, "%s", b->why);
			continue;
		}
		/* Entries and slots are random accesses: ask for them ahead. */
		if (i + 8 < b->npages && !b->zero[i + 8])
			index_prefetch(s->ix, b->key[i + 8], b->hint[i + 8]);
		pg.seen = index_add(s->ix, page,
				    b->keep ? b->keep + i * PAGE_BYTES : NULL,
				    b->zero[i], b->key[i], b->dg[i], b->hint[i],
				    &pg.id);
		if (pg.seen < 0)
			return batch_fail(s, b, i);
		f->pages++;
		pg.address = b->address + i * (uint64_t)PAGE_BYTES;
		pg.frame = b->framed ? frames_add(s->frames, pg.address,
						  b->frame[i], pg.id) : 0;
		pg.thp = page_thp(s, b, i, pg.address);
		if (!(s->needs & SINK_PAGES))
			continue;
		/* Sinks that read kept contents read them through the spool. */
		if ((s->needs & SINK_KEPT) && index_flush(s->ix) < 0)
			return batch_fail(s, b, i);
		pg.bytes = page;
		pg.kept = index_entry(s->ix, pg.id)->bytes;
		pg.digests = b->dg[i];
		pg.zero = b->zero[i];
		sinks_page(s, b, i, &pg);
		if (sinks_stop(s, b, i) < 0)
			return -1;
	}
	/* Pages for the spool are read from the batch: write them now. */
	if (index_flush(s->ix) < 0)
		return batch_fail(s, b, b->npages);
	/*
	 * Sinks that read contents bring them in: let them go again, every
	 * RELEASE bytes counted (each release makes the next reads fault).
	 */
	if ((s->needs & SINK_KEPT) && s->bytes_done / RELEASE !=
	    (s->bytes_done + (uint64_t)b->npages * PAGE_BYTES) / RELEASE)
		index_release(s->ix);
	s->bytes_done += (uint64_t)b->npages * PAGE_BYTES;
	progress_update(s->progress, s->bytes_done, f->pages);
	return 0;
}

/* Release the mapped pages counted since the last release. */
static void release_flush(struct scan *s, struct dump *d)
{
	if (s->rel_end > s->rel_start)
		dump_release(d, s->rel_start, (size_t)(s->rel_end - s->rel_start));
	s->rel_start = s->rel_end = NULL;
}


/* Count the oldest batch in flight once it is hashed. */
static int ring_retire(struct scan *s, struct figures *f, struct dump *d)
{
	struct batch *b = &s->ring[s->ring_head];
	int rc;

	pool_wait(&s->pool, b);
	s->ring_head = (s->ring_head + 1) % s->ring_cap;
	s->ring_len--;
	/* After a failure, batches in flight are only waited for. */
	rc = s->stopped ? -1 : batch_count(s, f, b);
	index_reclaim(s->ix, s->ring_len ? s->ring[s->ring_head].generation :
					   index_generation(s->ix));
	/*
	 * Counted: let mapped pages go until a later page needs them again, in
	 * pieces of RELEASE bytes (each release makes the other CPUs flush
	 * their TLBs, so it should not happen per batch).
	 */
	if (b->keep) {
		const unsigned char *end = b->data + b->npages * PAGE_BYTES;

		if (b->data != s->rel_end) {
			release_flush(s, d);
			s->rel_start = b->data;
		}
		s->rel_end = end;
		if ((size_t)(s->rel_end - s->rel_start) >= RELEASE)
			release_flush(s, d);
	}
	return rc;
}

/*
 * Fill the next batch with @n pages of range @r from its page @i. Stream
 * data is taken from the reader (its buffer swapped for the batch's) or
 * copied, since the reader reuses it before a worker is done with it.
 */
static void batch_fill(struct scan *s, struct batch *b, struct dump *d,
		       struct page_range *r, size_t i, size_t n, size_t first)
{
	b->seq = s->batches++;
	b->generation = index_generation(s->ix);
	b->input_first = first;
	b->address = r->address + i * (uint64_t)PAGE_BYTES;
	b->npages = n;
	b->region = r->region;
	b->keep = r->stable && r->data ? r->data + i * PAGE_BYTES : NULL;
	b->offset = b->keep && d->src.map && b->keep >= d->src.map &&
		    b->keep < d->src.map + d->src.size ?
		    (uint64_t)(b->keep - d->src.map) : d->src.pos;
	b->dump = d;
	b->framed = r->frames != NULL;
	if (b->framed) {
		memcpy(b->frame, r->frames + i, n * sizeof(*b->frame));
		s->has_frames[s->input] = !s->cfg->frame_keys_only;
	}
	memset(b->bad, 0, n);
	memset(b->seconds, 0, sizeof(b->seconds));
	if (!r->data) {
		/* Coded: the worker makes the pages into b->own. */
		b->data = NULL;
		b->coded = r->coded + i;
		return;
	}
	b->data = r->data + i * PAGE_BYTES;
	if (r->stable || !s->pool.nthreads)
		return;
	if (r->buffer && *r->buffer == r->data && r->npages <= BATCH_PAGES) {
		unsigned char *mine = b->own;

		b->own = *r->buffer;
		*r->buffer = mine;
	} else {
		memcpy(b->own, b->data, n * PAGE_BYTES);
	}
	b->data = b->own;
}

/* Hand a range's pages to the workers a batch at a time; -1 on an error. */
static int scan_range(struct scan *s, struct figures *f, struct dump *d,
		      struct page_range *r, size_t first)
{
	for (size_t i = 0; i < r->npages; i += BATCH_PAGES) {
		size_t n = r->npages - i < BATCH_PAGES ? r->npages - i : BATCH_PAGES;
		struct batch *b;

		if (s->ring_len == s->ring_cap && ring_retire(s, f, d) < 0)
			return -1;
		b = &s->ring[(s->ring_head + s->ring_len) % s->ring_cap];
		s->ring_len++;
		batch_fill(s, b, d, r, i, n, first);
		pool_submit(&s->pool, b);
		/* Without workers, count at once: the data is still valid. */
		if (!s->pool.nthreads && ring_retire(s, f, d) < 0)
			return -1;
	}
	return 0;
}

/* scan_input()'s status for a process -P or --all-processes listed that
 * exited before it could be read: left out of the reports, not an error. */
#define INPUT_GONE 2

/* Whether input @k is a listed process that has exited since, and whose
 * failure (@status 1) is that alone. */
static int input_gone(const struct scan *s, size_t k, int status)
{
	const struct input *in = &s->cfg->inputs[k];

	return in->listed && status && !s->fig[k].pages && proc_exited(in->pid);
}

/* Read input number @k to its end, or to its first error; INPUT_GONE for a
 * listed process that exited before it could be read. */
static int scan_input(struct scan *s, size_t k)
{
	const struct scan_config *cfg = s->cfg;
	struct figures *f = &s->fig[k];
	const struct input *in = &cfg->inputs[k];
	struct page_range r;
	int rc, status = 0;
	struct dump *d;
	size_t first = index_size(s->ix);	/* contents before this input */

	/* A process -P listed may have exited since: not an error. */
	if (in->listed && proc_exited(in->pid))
		return INPUT_GONE;
	if (cfg->before_input)
		cfg->before_input(cfg->arg, k);
	s->why[0] = '\0';
	d = dump_open(in, &cfg->dump, s->why, sizeof(s->why));
	s->dumps[k] = d;
	s->format[k] = d ? d->reader->name : NULL;
	s->input = k;
	s->stopped = 0;
	frames_input(s->frames, k, in->path ? 0 : proc_family(in->pid));
	if (!d)
		return input_gone(s, k, 1) ? INPUT_GONE : 1;
	if (d->src.map)
		index_add_mapping(s->ix, d->src.map, (size_t)d->src.size, d->src.fd, 0);
	while ((rc = dump_next(d, &r)) > 0)
		if (scan_range(s, f, d, &r, first) < 0)
			break;
	if (rc != 0)
		status = 1;
	while (s->ring_len)
		if (ring_retire(s, f, d) < 0)
			status = 1;
	release_flush(s, d);
	/* Sinks may read contents through their mappings now. */
	if (!s->stopped && index_flush(s->ix) < 0) {
		dump_error(d, d->src.pos, "%s", index_error(s->ix));
		status = 1;
	}
	if (d->failed)
		status = 1;
	f->zero_page_mappings = d->zero_page_mappings;
	memcpy(s->why, d->why, sizeof(s->why));
	return input_gone(s, k, status) ? INPUT_GONE : status;
}

/*
 * The frames of each content in a scope: input @k alone, or (k the number
 * of inputs) those @in_scope marks (NULL: all). NULL when the scope has no
 * frames: files, or files and processes together (each page of a file is
 * a frame of its own, which the processes' frame numbers cannot say).
 */
static const struct frame_counts *scope_frames(struct scan *s, size_t k,
					       const unsigned char *in_scope,
					       struct frame_counts *fc)
{
	size_t n = s->cfg->ninputs, framed = 0;

	if (k < n)
		framed = s->has_frames[k];
	for (size_t i = 0; k == n && i < n; i++) {
		if (in_scope && !in_scope[i])
			continue;
		if (!s->has_frames[i] && s->fig[i].pages)
			return NULL;
		framed += s->has_frames[i];
	}
	if (!framed || frames_count(s->frames, k < n ? k : SIZE_MAX, in_scope,
				    index_size(s->ix), fc) < 0)
		return NULL;
	return fc;
}

/* Compute a scope's figures and hand it to every sink. */
static void scan_scope(struct scan *s, size_t k, const char *name,
		       const char *format, enum scope_status status)
{
	const struct scan_config *cfg = s->cfg;
	int all = k == cfg->ninputs;
	const struct dump *d = all ? NULL : s->dumps[k];
	struct scope sc = {
		.name = name, .format = format, .input_no = k, .all = all,
		.f = &s->fig[k], .ix = s->ix, .status = status,
		.why = status == SCOPE_OK || all || !s->why[0] ? NULL : s->why,
		.proc = d && d->pid && d->proc.valid ? &d->proc : NULL,
	};

	struct frame_counts fc;
	const struct frame_counts *fcp = scope_frames(s, k, NULL, &fc);

	ksm_tally(&s->fig[k], s->ix, !all, fcp, cfg->algos, cfg->nalgos,
		  &cfg->ksm);
	if (fcp)
		frame_counts_free(&fc);
	sc.frames = all && fcp ? s->frames : NULL;
	if (s->fig[k].estimate)
		frames_say_estimate();
	for (size_t i = 0; i < cfg->nsinks; i++)
		if (cfg->sinks[i]->ops->scope)
			cfg->sinks[i]->ops->scope(cfg->sinks[i], &sc);
}

/* The format of input @k for the reports: its reader, or "-" if not opened. */
static const char *input_format(const struct scan *s, size_t k)
{
	return s->format[k] ? s->format[k] : "-";
}

/* Add input @k's own figures to the running total of all inputs. */
static void scan_total(struct scan *s, size_t k)
{
	struct figures *all = &s->fig[s->cfg->ninputs];

	all->pages += s->fig[k].pages;
	all->zero_page_mappings += s->fig[k].zero_page_mappings;
	all->hashed_pages += s->fig[k].hashed_pages;
	for (size_t a = 0; a < s->cfg->nalgos; a++)
		all->seconds[a] += s->fig[k].seconds[a];
}

/* How input @k was read, from scan_input()'s status. */
static enum scope_status input_status(const struct scan *s, size_t k, int failed)
{
	if (!s->format[k] || (failed && !s->fig[k].pages))
		return SCOPE_FAILED;
	return failed ? SCOPE_PARTIAL : SCOPE_OK;
}

/*
 * The scope of all inputs together: its format is theirs, or "mixed"; it
 * failed if they all did, and is partial if any had a problem.
 */
static void scan_scope_all(struct scan *s, const enum scope_status *st,
			   const char *gone)
{
	size_t n = s->cfg->ninputs, failed = 0, ok = 0, read = 0;
	const char *fmt = NULL;

	for (size_t k = 0; k < n; k++) {
		if (gone[k])	/* processes that exited count for nothing */
			continue;
		if (fmt && strcmp(input_format(s, k), fmt) != 0)
			fmt = "mixed";
		else if (!fmt)
			fmt = input_format(s, k);
		read++;
		failed += st[k] == SCOPE_FAILED;
		ok += st[k] == SCOPE_OK;
	}
	scan_scope(s, n, "*", fmt ? fmt : "-", read && failed == read ?
		   SCOPE_FAILED : ok == read ? SCOPE_OK : SCOPE_PARTIAL);
}

/*
 * What a group shares with the other inputs: the saving of all of them
 * ("*") less the group's own (@f) and that of the others on a host of
 * their own, counted from the index's counts less the group's.
 */
static uint64_t group_shared(struct scan *s, const struct figures *f,
			     const uint32_t *counts, const unsigned char *in_group)
{
	const struct scan_config *cfg = s->cfg;
	const struct figures *all = &s->fig[cfg->ninputs];
	size_t size = index_size(s->ix), n = cfg->ninputs;
	uint32_t *rest = xcalloc(size ? size : 1, sizeof(*rest));
	unsigned char *others = xcalloc(n ? n : 1, 1);
	struct figures rf = { 0 };
	struct frame_counts fc;
	const struct frame_counts *fcp;

	if (n < 2) {
		free(rest);
		free(others);
		return 0;
	}
	for (size_t id = 0; id < size; id++)
		rest[id] = index_count(s->ix, id, 0) - counts[id];
	for (size_t i = 0; i < n; i++)
		others[i] = !in_group[i];
	fcp = scope_frames(s, n, others, &fc);
	rf.pages = all->pages - f->pages;
	ksm_tally_counts(&rf, s->ix, 0, rest, fcp, cfg->algos, cfg->nalgos,
			 &cfg->ksm);
	if (fcp)
		frame_counts_free(&fc);
	free(others);
	free(rest);
	return all->saved_bytes > f->saved_bytes + rf.saved_bytes ?
	       all->saved_bytes - f->saved_bytes - rf.saved_bytes : 0;
}

/*
 * The kernel's figures of a group's live processes, summed (as a cgroup's
 * would be, had it any); valid 0 if none is a live process.
 */
static void group_proc(const struct scan *s, const struct group *gr,
		       struct proc_stats *sum)
{
	size_t procs = 0;

	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < gr->ninputs; i++) {
		const struct proc_stats *p = &s->proc[gr->inputs[i]];

		if (!p->valid)
			continue;
		procs++;
		sum->mergeable_pages += p->mergeable_pages;
		sum->thp_pages += p->thp_pages;
		sum->ksm_merging_pages += p->ksm_merging_pages;
		sum->ksm_rmap_items += p->ksm_rmap_items;
	}
	sum->valid = procs > 0;
	snprintf(sum->command, sizeof(sum->command), "%zu %s", procs,
		 procs == 1 ? "process" : "processes");
}

/*
 * The scope of --group number @g: its inputs' pages on one KSM host, after
 * "*", for the sinks that ask for groups.
 */
static void scan_scope_group(struct scan *s, size_t g)
{
	const struct scan_config *cfg = s->cfg;
	const struct group *gr = &cfg->groups[g];
	const char *fmt = input_format(s, gr->inputs[0]);
	struct figures f = { 0 };
	struct proc_stats procs;
	const uint32_t *counts;
	unsigned char *in_group = xcalloc(cfg->ninputs ? cfg->ninputs : 1, 1);
	struct frame_counts fc;
	const struct frame_counts *fcp;
	struct scope sc = { .name = gr->name, .input_no = cfg->ninputs, .all = 1,
			    .f = &f, .ix = s->ix, .group = 1 };

	group_proc(s, gr, &procs);
	sc.proc = procs.valid ? &procs : NULL;

	for (size_t i = 0; i < gr->ninputs; i++) {
		const struct figures *in = &s->fig[gr->inputs[i]];

		f.pages += in->pages;
		f.zero_page_mappings += in->zero_page_mappings;
		f.hashed_pages += in->hashed_pages;
		for (size_t a = 0; a < cfg->nalgos; a++)
			f.seconds[a] += in->seconds[a];
		if (strcmp(input_format(s, gr->inputs[i]), fmt) != 0)
			fmt = "mixed";
	}
	sc.format = fmt;
	counts = group_counts_get(s->groups, g, index_size(s->ix));
	for (size_t i = 0; i < gr->ninputs; i++)
		in_group[gr->inputs[i]] = 1;
	fcp = scope_frames(s, cfg->ninputs, in_group, &fc);
	ksm_tally_counts(&f, s->ix, 0, counts, fcp, cfg->algos, cfg->nalgos,
			 &cfg->ksm);
	if (fcp)
		frame_counts_free(&fc);
	sc.shared_bytes = group_shared(s, &f, counts, in_group);
	free(in_group);
	for (size_t i = 0; i < cfg->nsinks; i++)
		if (cfg->sinks[i]->ops->scope &&
		    (cfg->sinks[i]->ops->needs & SINK_GROUPS))
			cfg->sinks[i]->ops->scope(cfg->sinks[i], &sc);
}

/* The total size of the input files, for the progress estimate; 0 if unknown. */
static uint64_t scan_total_bytes(const struct scan_config *cfg)
{
	uint64_t total = 0;

	for (size_t k = 0; k < cfg->ninputs; k++) {
		struct stat st;

		if (!cfg->inputs[k].path || strcmp(cfg->inputs[k].path, "-") == 0 ||
		    stat(cfg->inputs[k].path, &st) < 0 || !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

/* Set up a run: the index, the workers and their batches. */
static void scan_start(struct scan *s, const struct scan_config *cfg)
{
	size_t n = cfg->ninputs;

	s->cfg = cfg;
	for (size_t k = 0; k < cfg->nsinks; k++)
		s->needs |= cfg->sinks[k]->ops->needs;
	/* Every input stays open to the end (the index points into them). */
	raise_fd_limit();
	s->ix = index_new(cfg->algos, cfg->nalgos, n > 1);
	s->fig = xcalloc(n + 1, sizeof(*s->fig));
	s->dumps = xcalloc(n, sizeof(*s->dumps));
	s->format = xcalloc(n, sizeof(*s->format));
	s->proc = xcalloc(n ? n : 1, sizeof(*s->proc));
	s->ring_cap = cfg->threads > 1 ? 2 * (size_t)cfg->threads + 2 : 1;
	s->ring = xcalloc(s->ring_cap, sizeof(*s->ring));
	pool_start(&s->pool, cfg, s->ring_cap, s->ix);
	for (size_t i = 0; i < s->ring_cap; i++) {
		s->ring[i].own = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
		s->ring[i].prep = xmalloc(BATCH_PAGES * s->pool.prep_total + 1);
	}
	s->progress = progress_start(cfg->progress, scan_total_bytes(cfg));
	s->groups = group_counts_new(cfg->groups, cfg->ngroups);
	s->frames = frames_new();
	frames_keep(s->frames, !cfg->frame_keys_only);
	s->has_frames = xcalloc(n ? n : 1, 1);
}

/* Free what scan_start() made and close the inputs. */
static void scan_stop(struct scan *s)
{
	pool_stop(&s->pool);
	for (size_t i = 0; i < s->ring_cap; i++) {
		free(s->ring[i].own);
		free(s->ring[i].prep);
	}
	free(s->ring);
	free(s->pool.prep_off);
	for (size_t k = 0; k < s->cfg->ninputs; k++)
		dump_close(s->dumps[k]);
	index_free(s->ix);
	group_counts_free(s->groups);
	frames_free(s->frames);
	free(s->has_frames);
	free(s->dumps);
	free(s->format);
	free(s->proc);
	free(s->fig);
}

/*
 * Close input @k once its scope is handed out, unless the index points into
 * it (a mapped file). A stream's contents are in the spool already, and a
 * series of many live snapshots must not keep every reader's buffers (a
 * megabyte each) to the end.
 */
static void scan_release(struct scan *s, size_t k)
{
	/* A live process's kernel figures outlive its reader: groups sum them. */
	if (s->dumps[k] && s->dumps[k]->pid)
		s->proc[k] = s->dumps[k]->proc;
	if (s->dumps[k] && !s->dumps[k]->src.map) {
		dump_close(s->dumps[k]);
		s->dumps[k] = NULL;
	}
}

int scan_run(const struct scan_config *cfg)
{
	struct scan s = { 0 };
	enum scope_status *st;
	char *gone = xcalloc(cfg->ninputs ? cfg->ninputs : 1, 1);
	size_t ngone = 0, nexited = 0;
	int status = 0;

	st = xcalloc(cfg->ninputs, sizeof(*st));
	scan_start(&s, cfg);
	for (size_t k = 0; k < cfg->ninputs; k++) {
		int failed;

		if (s.halted) {
			snprintf(s.why, sizeof(s.why), "%s: not read: the run "
				 "stopped before it", cfg->inputs[k].name);
			error("%s", s.why);
			failed = 1;
		} else {
			failed = scan_input(&s, k);
		}
		gone[k] = failed == INPUT_GONE;
		ngone += gone[k];
		nexited += !gone[k] && s.dumps[k] && s.dumps[k]->exited;
		failed = gone[k] ? 0 : failed;
		status |= failed;
		st[k] = input_status(&s, k, failed);
		if (!gone[k])
			scan_scope(&s, k, cfg->inputs[k].name,
				   input_format(&s, k), st[k]);
		scan_release(&s, k);
		group_counts_input(s.groups, s.ix, k);
		index_end_input(s.ix);
		scan_total(&s, k);
	}
	progress_end(s.progress);
	/* Processes come and go on a live host: one line for all of them. */
	if (ngone)
		warn("%zu of the processes listed exited before they could be "
		     "read: left out", ngone);
	if (nexited)
		warn("%zu of the processes listed exited while they were read: "
		     "their figures cover what was read", nexited);
	if (cfg->ninputs > 1)
		scan_scope_all(&s, st, gone);
	free(gone);
	for (size_t g = 0; g < cfg->ngroups; g++)
		scan_scope_group(&s, g);
	scan_stop(&s);
	free(st);
	return status;
}

const struct group *scope_group(const struct scan_config *cfg,
				const struct scope *sc)
{
	for (size_t g = 0; sc->group && g < cfg->ngroups; g++)
		if (strcmp(cfg->groups[g].name, sc->name) == 0)
			return &cfg->groups[g];
	return NULL;
}
