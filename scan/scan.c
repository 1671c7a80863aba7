/* SPDX-License-Identifier: MIT */
/*
 * The scan engine. Readers hand out page ranges; the engine cuts them into
 * batches that worker threads prepare (the zero test, the index key, a
 * lookup in the index, and every selected algorithm over the contents new
 * to the input, timed per algorithm); the main thread then counts the
 * batches strictly in scan order, so the figures do not depend on -j. Page
 * data is copied only when a reader's buffer would be reused before the
 * workers are done with it and the reader does not hand the buffer over
 * (streams).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/progress.h"
#include "../util/util.h"
#include "index.h"
#include "page.h"
#include "scan.h"
#include "tree.h"

/* Mapped pages are released in pieces of this size once counted. */
#define RELEASE (16u << 20)

/* Pages hashed together: 32 KiB stay in a core's L1 cache while every
 * algorithm and the index key read them. */
#define GROUP 8

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
	size_t npages;
	const struct region *region;
	struct digest dg[BATCH_PAGES][ALGO_MAX];
	uint32_t fp[BATCH_PAGES];		/* index keys */
	uint32_t hint[BATCH_PAGES];		/* content found by a worker, or INDEX_NONE */
	unsigned char zero[BATCH_PAGES];
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
	int stop;
	const struct scan_config *cfg;
	pthread_t *threads;
	unsigned nthreads;
	struct digest zero_digest[ALGO_MAX];	/* each algorithm's zero page */
	const struct index *ix;		/* looked up (not changed) by workers */
};

/* Trees of the tree report for one scope (an input, or all of them). */
struct trees {
	struct tree *by_memcmp;
	struct tree *by_sum[ALGO_MAX];
};

/* The state of one run. */
struct scan {
	const struct scan_config *cfg;
	struct index *ix;
	struct figures *fig;		/* per input, then one for all inputs */
	struct dump **dumps;		/* kept open: the index points into them */
	struct region_row *regions;	/* per region of each input, scan order */
	const struct region **region_of;/* the reader's region of each row */
	size_t nregions, capregions;
	struct trees cur, all;		/* tree report: this input, all inputs */
	struct tree_row *tree_rows;
	size_t ntree_rows;
	struct top_row *top_rows;
	size_t ntop_rows;
	struct pool pool;
	struct batch *ring;		/* batches in flight, in scan order */
	size_t ring_cap, ring_head, ring_len;
	struct progress *progress;
	uint64_t bytes_done;
	const unsigned char *rel_start, *rel_end;	/* counted, not released */
	size_t batches;			/* batches handed to the workers so far */
};

/*
 * Prepare a batch for counting: make coded pages, test for zero pages, key
 * and look up every page, and hash the new contents with every algorithm,
 * each timed on its own.
 */
static void batch_hash(struct pool *p, struct batch *b)
{
	const struct scan_config *cfg = p->cfg;
	uint16_t todo[BATCH_PAGES];		/* the pages to hash */
	size_t hashed = 0;

	/* Coded (compressed) pages are made here, on the worker's core. */
	if (!b->data) {
		int first = 1;

		for (size_t i = 0; i < b->npages; i++) {
			char why[160];
			uint64_t off = 0;

			b->bad[i] = b->dump->reader->decode(b->dump, b->coded + i,
				b->address + i * (uint64_t)PAGE_BYTES,
				b->own + i * PAGE_BYTES, why, sizeof(why), &off) < 0;
			if (b->bad[i]) {
				/* A page that cannot be made is not counted. */
				memset(b->own + i * PAGE_BYTES, 0, PAGE_BYTES);
				if (first) {
					memcpy(b->why, why, sizeof(why));
					b->why_offset = off;
					first = 0;
				}
			}
		}
		b->data = b->own;
	}
	/*
	 * First the zero test and the index's own key (seeded: a checksum
	 * alone could be forged), the first read of each page, then the
	 * lookup: workers look each page up and compare it with what they
	 * find, so that the main thread, which counts in order, only counts.
	 * A content that the main thread is adding meanwhile may be missed:
	 * then the main thread looks it up again.
	 */
	for (size_t i = 0; i < b->npages; i++) {
		/* The CPU does not fetch ahead across pages: ask for the next. */
		if (i + 1 < b->npages)
			for (unsigned c = 0; c < PAGE_BYTES; c += 64)
				__builtin_prefetch(b->data + (i + 1) * PAGE_BYTES + c);
		b->zero[i] = (unsigned char)page_is_zero(b->data + i * PAGE_BYTES);
		b->fp[i] = b->zero[i] ? 0 : index_key(p->ix, b->data + i * PAGE_BYTES);
	}
	index_find_many(p->ix, b->data, b->fp, b->zero, b->npages, b->hint);
	/*
	 * Only contents new to this input are hashed: a zero page, or one
	 * found in the index that this input has counted already, has digests
	 * known already (equal bytes, equal digests). Each input hashes its
	 * own contents, so that its speed figures measure something. (A
	 * content whose first page is still on its way to the main thread is
	 * not found yet: its next pages are hashed too.)
	 */
	for (size_t i = 0; i < b->npages; i++) {
		int known = b->zero[i] || (b->hint[i] != INDEX_NONE &&
			    index_counted(p->ix, b->hint[i], b->input_first));

		for (size_t a = 0; a < cfg->nalgos; a++) {
			if (b->zero[i])
				b->dg[i][a] = p->zero_digest[a];
			else if (known)
				index_digest(p->ix, a, b->hint[i], &b->dg[i][a]);
		}
		if (!known)
			todo[hashed++] = (uint16_t)i;
	}
	/*
	 * The rest is hashed GROUP pages at a time, one algorithm after the
	 * other, so that each reads them from the core's own cache; which one
	 * goes first rotates from batch to batch, so that none always finds
	 * the pages a little further away. Only hashing is timed.
	 */
	for (size_t g = 0; g < hashed; g += GROUP) {
		size_t end = hashed - g < GROUP ? hashed : g + GROUP;

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
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->len && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (!p->len)
			break;
		struct batch *b = p->queue[p->head];

		p->head = (p->head + 1) % p->cap;
		p->len--;
		pthread_mutex_unlock(&p->lock);
		batch_hash(p, b);
		pthread_mutex_lock(&p->lock);
		b->done = 1;
		pthread_cond_broadcast(&p->finished);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Start the workers; with one thread the main thread hashes by itself. */
static void pool_start(struct pool *p, const struct scan_config *cfg, size_t cap,
		       const struct index *ix)
{
	static const unsigned char zero[PAGE_BYTES];

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->cap = cap;
	p->ix = ix;
	for (size_t a = 0; a < cfg->nalgos; a++)
		cfg->algos[a]->hash(zero, &p->zero_digest[a]);
	if (cfg->threads <= 1)
		return;
	p->queue = xcalloc(cap, sizeof(*p->queue));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->finished, NULL);
	p->threads = xcalloc(cfg->threads, sizeof(*p->threads));
	for (unsigned i = 0; i < cfg->threads; i++) {
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
		batch_hash(p, b);
		b->done = 1;
		return;
	}
	pthread_mutex_lock(&p->lock);
	b->done = 0;
	p->queue[(p->head + p->len) % p->cap] = b;
	p->len++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

static void pool_wait(struct pool *p, struct batch *b)
{
	if (!p->nthreads)
		return;
	pthread_mutex_lock(&p->lock);
	while (!b->done)
		pthread_cond_wait(&p->finished, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

/* The row of the regions report that a batch's pages count in. */
static struct region_row *scan_region(struct scan *s, const char *input,
				      const struct region *reg)
{
	struct region_row *row;

	if (s->nregions && s->region_of[s->nregions - 1] == reg &&
	    s->regions[s->nregions - 1].input == input)
		return &s->regions[s->nregions - 1];
	if (s->nregions == s->capregions) {
		s->capregions = s->capregions ? s->capregions * 2 : 64;
		s->regions = xreallocarray(s->regions, s->capregions,
					   sizeof(*s->regions));
		s->region_of = xreallocarray(s->region_of, s->capregions,
					     sizeof(*s->region_of));
	}
	s->region_of[s->nregions] = reg;
	row = &s->regions[s->nregions++];
	*row = (struct region_row){ .input = input };
	return row;
}

/* The trees of the tree report for one scope. */
static void trees_new(struct trees *t, const struct scan_config *cfg)
{
	t->by_memcmp = tree_new(0);
	for (size_t a = 0; a < cfg->nalgos; a++)
		t->by_sum[a] = tree_new(1);
}

/* Search (and maybe insert) a page in every tree of a scope. */
static void trees_add(struct trees *t, const struct scan_config *cfg,
		      const unsigned char *page, const unsigned char *stable,
		      const struct digest *dg)
{
	tree_add(t->by_memcmp, page, stable, &dg[0]);
	for (size_t a = 0; a < cfg->nalgos; a++)
		tree_add(t->by_sum[a], page, stable, &dg[a]);
}

/* Turn a scope's trees into report rows and free them. */
static void trees_end(struct scan *s, struct trees *t, const char *input)
{
	const struct scan_config *cfg = s->cfg;

	s->tree_rows = xreallocarray(s->tree_rows, s->ntree_rows + 1 + cfg->nalgos,
				     sizeof(*s->tree_rows));
	s->tree_rows[s->ntree_rows++] = (struct tree_row){
		input, "memcmp", "-", *tree_stats(t->by_memcmp) };
	tree_free(t->by_memcmp);
	for (size_t a = 0; a < cfg->nalgos; a++) {
		s->tree_rows[s->ntree_rows++] = (struct tree_row){
			input, "checksum-first", cfg->algos[a]->name,
			*tree_stats(t->by_sum[a]) };
		tree_free(t->by_sum[a]);
	}
	memset(t, 0, sizeof(*t));
}

/* Count a hashed batch: the index, regions, pages report and trees. */
static int batch_count(struct scan *s, struct figures *f, const char *input,
		       struct batch *b)
{
	const struct scan_config *cfg = s->cfg;
	struct region_row *reg = scan_region(s, input, b->region);
	int multi = cfg->ninputs > 1;
	int rc = 0;

	for (size_t a = 0; a < cfg->nalgos; a++)
		f->seconds[a] += b->seconds[a];
	f->hashed_pages += b->hashed;
	for (size_t i = 0; i < b->npages; i++) {
		const unsigned char *page = b->data + i * PAGE_BYTES;
		uint32_t id;

		if (b->bad[i]) {
			/* Reported in scan order; only the input's first is printed. */
			dump_error(b->dump, b->why_offset, "%s", b->why);
			continue;
		}
		/* Entries and slots are random accesses: ask for them ahead. */
		if (i + 8 < b->npages && !b->zero[i + 8])
			index_prefetch(s->ix, b->fp[i + 8], b->hint[i + 8]);
		int seen = index_add(s->ix, page,
				     b->keep ? b->keep + i * PAGE_BYTES : NULL,
				     b->zero[i], b->fp[i],
				     b->dg[i], b->hint[i], &id);

		if (seen < 0) {
			rc = -1;
			break;
		}
		f->pages++;
		reg->pages++;
		reg->zero_pages += b->zero[i];
		reg->redundant_pages += (uint64_t)seen;
		if (cfg->reports & REPORT_PAGES)
			pages_row(cfg->out, input,
				  b->address + i * (uint64_t)PAGE_BYTES,
				  b->zero[i], b->dg[i], cfg->algos);
		if (cfg->reports & REPORT_TREE) {
			const unsigned char *kept = index_entry(s->ix, id)->bytes;

			/* The trees read contents through their mappings. */
			if (index_flush(s->ix) < 0) {
				rc = -1;
				break;
			}
			trees_add(&s->cur, cfg, page, kept, b->dg[i]);
			if (multi)
				trees_add(&s->all, cfg, page, kept, b->dg[i]);
		}
	}
	/* Pages for the spool are read from the batch: write them now. */
	if (index_flush(s->ix) < 0)
		rc = -1;
	s->bytes_done += (uint64_t)b->npages * PAGE_BYTES;
	progress_update(s->progress, s->bytes_done, f->pages);
	return rc;
}

/* Release the mapped pages counted since the last release. */
static void release_flush(struct scan *s, struct dump *d)
{
	if (s->rel_end > s->rel_start)
		dump_release(d, s->rel_start, (size_t)(s->rel_end - s->rel_start));
	s->rel_start = s->rel_end = NULL;
}

/* Count the oldest batch in flight once it is hashed. */
static int ring_retire(struct scan *s, struct figures *f, const char *input,
		       struct dump *d)
{
	struct batch *b = &s->ring[s->ring_head];
	int rc;

	pool_wait(&s->pool, b);
	s->ring_head = (s->ring_head + 1) % s->ring_cap;
	s->ring_len--;
	rc = batch_count(s, f, input, b);
	/*
	 * Workers look batches up in the slot table they find when they start
	 * one; a batch handed out after the table last grew never sees the
	 * tables it replaced. Once no older batch is in flight, free them.
	 */
	if (!s->ring_len || s->ring[s->ring_head].generation == index_generation(s->ix))
		index_free_old(s->ix);
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

/* Read one input to its end, or to its first error. */
static int scan_input(struct scan *s, size_t k)
{
	const struct scan_config *cfg = s->cfg;
	const char *name = cfg->inputs[k].name;
	struct figures *f = &s->fig[k];
	struct page_range r;
	int rc, status = 0;
	struct dump *d = dump_open(&cfg->inputs[k], &cfg->dump);
	size_t first = index_size(s->ix);	/* contents before this input */

	s->dumps[k] = d;
	if (!d)
		return 1;
	if (d->src.map)
		index_add_mapping(s->ix, d->src.map, (size_t)d->src.size, d->src.fd, 0);
	while ((rc = dump_next(d, &r)) > 0) {
		for (size_t i = 0; i < r.npages; i += BATCH_PAGES) {
			size_t n = r.npages - i < BATCH_PAGES ? r.npages - i : BATCH_PAGES;
			struct batch *b;

			if (s->ring_len == s->ring_cap &&
			    ring_retire(s, f, name, d) < 0) {
				status = 1;
				goto out;
			}
			b = &s->ring[(s->ring_head + s->ring_len) % s->ring_cap];
			s->ring_len++;
			b->seq = s->batches++;
			b->generation = index_generation(s->ix);
			b->input_first = first;
			b->address = r.address + i * (uint64_t)PAGE_BYTES;
			b->npages = n;
			b->region = r.region;
			b->keep = r.stable && r.data ? r.data + i * PAGE_BYTES : NULL;
			b->dump = d;
			memset(b->bad, 0, n);
			memset(b->seconds, 0, sizeof(b->seconds));
			if (!r.data) {
				/* Coded: the worker makes the pages into b->own. */
				b->data = NULL;
				b->coded = r.coded + i;
			} else {
				b->data = r.data + i * PAGE_BYTES;
				/*
				 * The reader reuses its buffer: take it and give
				 * the reader this batch's, or else hash a copy.
				 */
				if (!r.stable && s->pool.nthreads && r.buffer &&
				    *r.buffer == r.data && r.npages <= BATCH_PAGES) {
					unsigned char *mine = b->own;

					b->own = *r.buffer;
					*r.buffer = mine;
					b->data = b->own;
				} else if (!r.stable && s->pool.nthreads) {
					memcpy(b->own, b->data, n * PAGE_BYTES);
					b->data = b->own;
				}
			}
			pool_submit(&s->pool, b);
			/* Without workers, count at once: the data is still valid. */
			if (!s->pool.nthreads && ring_retire(s, f, name, d) < 0) {
				status = 1;
				goto out;
			}
		}
	}
	if (rc < 0)
		status = 1;
out:
	while (s->ring_len)
		if (ring_retire(s, f, name, d) < 0)
			status = 1;
	release_flush(s, d);
	/* The top report reads contents through their mappings. */
	if (index_flush(s->ix) < 0)
		status = 1;
	if (d->failed)
		status = 1;
	return status;
}

/* Note the top contents of a scope for the top report. */
static void scan_top(struct scan *s, const char *input, int current_input)
{
	const struct scan_config *cfg = s->cfg;
	struct top_item *items = xcalloc(cfg->top ? cfg->top : 1, sizeof(*items));
	size_t n = ksm_top(s->ix, current_input, items, cfg->top);

	s->top_rows = xreallocarray(s->top_rows, s->ntop_rows + n + 1,
				    sizeof(*s->top_rows));
	for (size_t i = 0; i < n; i++) {
		struct top_row *t = &s->top_rows[s->ntop_rows++];
		const struct index_entry *e = index_entry(s->ix, items[i].id);
		struct digest d;

		t->input = input;
		t->rank = i + 1;
		t->pages = items[i].count;
		index_digest(s->ix, 0, items[i].id, &d);
		digest_format(cfg->algos[0], &d, t->digest);
		ksm_describe(e->bytes, t->description, sizeof(t->description));
	}
	free(items);
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

int scan_run(const struct scan_config *cfg)
{
	struct scan s = { .cfg = cfg };
	size_t n = cfg->ninputs;
	struct summary_input *rows;
	size_t nrows = 0;
	int status = 0;
	int multi = n > 1;

	/* Every input stays open to the end (the index points into them). */
	raise_fd_limit();
	s.ix = index_new(cfg->algos, cfg->nalgos, multi);
	s.fig = xcalloc(n + 1, sizeof(*s.fig));
	s.dumps = xcalloc(n, sizeof(*s.dumps));
	rows = xcalloc(n + 1, sizeof(*rows));
	s.ring_cap = cfg->threads > 1 ? 2 * (size_t)cfg->threads + 2 : 1;
	s.ring = xcalloc(s.ring_cap, sizeof(*s.ring));
	pool_start(&s.pool, cfg, s.ring_cap, s.ix);
	for (size_t i = 0; i < s.ring_cap; i++)
		s.ring[i].own = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
	s.progress = progress_start(cfg->progress, scan_total_bytes(cfg));
	if (cfg->reports & REPORT_TREE && multi)
		trees_new(&s.all, cfg);

	if (cfg->reports & REPORT_PAGES) {
		int width = 0;

		for (size_t k = 0; k < n; k++)
			if ((int)strlen(cfg->inputs[k].name) > width)
				width = (int)strlen(cfg->inputs[k].name);
		pages_begin(cfg->out, cfg->algos, cfg->nalgos, width);
	}
	for (size_t k = 0; k < n; k++) {
		struct figures *all = &s.fig[n];

		if (cfg->reports & REPORT_TREE)
			trees_new(&s.cur, cfg);
		status |= scan_input(&s, k);
		/* Figures of this input, then the running total of all inputs. */
		ksm_tally(&s.fig[k], s.ix, 1, cfg->algos, cfg->nalgos, &cfg->ksm);
		if (cfg->reports & REPORT_TOP)
			scan_top(&s, cfg->inputs[k].name, 1);
		if (cfg->reports & REPORT_TREE)
			trees_end(&s, &s.cur, cfg->inputs[k].name);
		index_end_input(s.ix);
		all->pages += s.fig[k].pages;
		all->hashed_pages += s.fig[k].hashed_pages;
		for (size_t a = 0; a < cfg->nalgos; a++)
			all->seconds[a] += s.fig[k].seconds[a];
		rows[nrows++] = (struct summary_input){
			cfg->inputs[k].name,
			s.dumps[k] ? s.dumps[k]->reader->name : "-",
			&s.fig[k] };
	}
	progress_end(s.progress);
	if (cfg->reports & REPORT_PAGES)
		pages_end(cfg->out);

	if (multi) {
		const char *fmt = rows[0].format;

		/* The format of "*" is the inputs' common format, else "mixed". */
		for (size_t k = 1; k < n; k++)
			if (strcmp(rows[k].format, fmt) != 0)
				fmt = "mixed";
		ksm_tally(&s.fig[n], s.ix, 0, cfg->algos, cfg->nalgos, &cfg->ksm);
		rows[nrows++] = (struct summary_input){ "*", fmt, &s.fig[n] };
		if (cfg->reports & REPORT_TOP)
			scan_top(&s, "*", 0);
		if (cfg->reports & REPORT_TREE)
			trees_end(&s, &s.all, "*");
	}
	if (cfg->reports & REPORT_SUMMARY)
		summary_report(cfg->out, rows, nrows, cfg->algos, cfg->nalgos,
			       &cfg->ksm);
	if (cfg->reports & REPORT_HISTOGRAM)
		histogram_report(cfg->out, rows, nrows);
	if (cfg->reports & REPORT_REGIONS) {
		/* Readers may learn where a region ends only at its end. */
		for (size_t i = 0; i < s.nregions; i++) {
			s.regions[i].name = s.region_of[i]->name;
			s.regions[i].start = s.region_of[i]->start;
			s.regions[i].end = s.region_of[i]->end;
		}
		regions_report(cfg->out, s.regions, s.nregions);
	}
	if (cfg->reports & REPORT_TOP)
		top_report(cfg->out, s.top_rows, s.ntop_rows);
	if (cfg->reports & REPORT_TREE)
		tree_report(cfg->out, s.tree_rows, s.ntree_rows);
	cfg->out->finish();

	pool_stop(&s.pool);
	for (size_t i = 0; i < s.ring_cap; i++)
		free(s.ring[i].own);
	free(s.ring);
	for (size_t k = 0; k < n; k++)
		dump_close(s.dumps[k]);
	index_free(s.ix);
	free(s.dumps);
	free(s.fig);
	free(s.regions);
	free(s.region_of);
	free(s.tree_rows);
	free(s.top_rows);
	free(rows);
	return status;
}
