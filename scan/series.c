/* SPDX-License-Identifier: MIT */
/*
 * --series: the inputs are snapshots of one memory. The engine reads them as
 * usual; a collecting sink keeps, per snapshot, each page's address and
 * content id (the index's: byte-exact across the whole run, so no digest
 * stands for bytes), then replays ksmd over them (replay.c) and hands the
 * timeline and the snapshots' differences to the reports' series() hooks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../host/kernel.h"
#include "../host/ksm.h"
#include "../host/memory.h"
#include "../host/process.h"
#include "../hash/hash.h"
#include "../hash/measure.h"
#include "../model/sample.h"
#include "../util/util.h"
#include "forked.h"
#include "frames.h"
#include "index.h"
#include "marked.h"
#include "record.h"
#include "series.h"

/*
 * What a series keeps per page of every snapshot at its peak: the page's
 * (address, id, place, frame) while it is read, then (address index, id),
 * and the addresses' union. A series stops before it needs more than the
 * memory the machine has available.
 */
#define SERIES_PAGE_BYTES 40

/*
 * --sample=1/N: a content is in the sample when XXH3 of its bytes with this
 * seed (a digest that has nothing to do with KSM's checksum, so that the
 * sample does not lean on what ksmd compares) is 0 modulo N. The zero
 * page's content is always in: it is known without a digest, and it is
 * often the largest content of all, whose absence or presence would swing
 * every figure.
 */
#define SAMPLE_SEED UINT64_C(0x6b736d7363616e31)
enum { PICK_UNKNOWN, PICK_IN, PICK_OUT };

/* One snapshot's pages: (address, content id), sorted by address at the end. */
struct snap {
	struct page_ref {
		uint64_t addr;
		uint32_t id;
		uint32_t pos;	/* its place in the input, for equal addresses */
		uint64_t frame;	/* its frame key (frames.h), 0 for files */
	} *p;
	size_t n, cap;
	uint64_t dropped;	/* --sample: its pages left out */
	struct run { uint64_t lo, hi; } *runs;	/* --sample: the addresses it
				 * has a page at, as runs [lo, hi) */
	size_t nruns, rcap;
};

/*
 * ksmd's lateness on this host, measured while a live series is read: a
 * thread at ksmd's nice level (5) sleeps as ksmd does, then works for a
 * batch's CPU time, and notes how late it ran: past when it was due, and
 * what other tasks took of its work. The replay adds each batch's cost and
 * asks how many jiffies late ksmd's timer is then armed, over the sample.
 *
 * ksmscan itself reads and hashes the snapshots on the same CPUs, which
 * ksmd would not have to share once ksmscan is gone: the wake-ups that
 * overlap a snapshot's reading are left out, as long as enough others
 * were measured (between snapshots).
 */
#define PACER_SAMPLES 64
#define PACER_MIN 10		/* fewer wake-ups than this tell nothing */
struct pacer {
	pthread_t thread;
	int running;
	int stop;			/* set by the main thread (atomic) */
	unsigned reading;		/* odd while ksmscan reads a snapshot
					 * (atomic, set by the main thread) */
	double sleep, work;		/* seconds */
	double late[PACER_SAMPLES];	/* the latest wake-ups' lateness */
	uint64_t n;			/* wake-ups measured */
	double idle[PACER_SAMPLES];	/* ... of those while ksmscan did not
					 * read */
	uint64_t nidle;
};

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *pacer_run(void *arg)
{
	struct pacer *pc = arg;

	/* ksmd runs at nice 5 (set_user_nice() in ksm_scan_thread()) */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 5) < 0)
		return NULL;
	while (!__atomic_load_n(&pc->stop, __ATOMIC_RELAXED)) {
		double due = now_seconds() + pc->sleep, woke, cpu, late;
		unsigned before = __atomic_load_n(&pc->reading, __ATOMIC_RELAXED);

		sleep_until(due);
		woke = now_seconds();
		for (cpu = thread_cpu(); thread_cpu() - cpu < pc->work;)
			;	/* a batch: what other tasks take of it is late too */
		late = (woke - due) + (now_seconds() - woke) - (thread_cpu() - cpu);
		pc->late[pc->n++ % PACER_SAMPLES] = late;
		if (!(before & 1) &&
		    __atomic_load_n(&pc->reading, __ATOMIC_RELAXED) == before)
			pc->idle[pc->nidle++ % PACER_SAMPLES] = late;
	}
	return NULL;
}

/* Start measuring for a live series of @sp with ksmd's settings @k. */
static void pacer_start(struct pacer *pc, const struct series_params *sp,
			const struct ksm_params *k)
{
	if (!sp->hz)
		return;
	pc->sleep = (double)((k->sleep_ms * sp->hz + 999) / 1000) / sp->hz;
	pc->work = (double)k->pages_to_scan * sp->page_seconds;
	if (pc->work > 0.5)
		pc->work = 0.5;
	pc->running = pthread_create(&pc->thread, NULL, pacer_run, pc) == 0;
}

/* Say that ksmscan begins (@on 1) or ends (0) reading a snapshot. */
static void pacer_reading(struct pacer *pc, int on)
{
	unsigned r = __atomic_load_n(&pc->reading, __ATOMIC_RELAXED);

	if ((int)(r & 1) != on)
		__atomic_store_n(&pc->reading, r + 1, __ATOMIC_RELAXED);
}

/*
 * Stop it: the number of samples in pc->late (0 if too few to tell): those
 * taken while ksmscan did not read, if there are enough, else all.
 */
static size_t pacer_stop(struct pacer *pc)
{
	if (!pc->running)
		return 0;
	__atomic_store_n(&pc->stop, 1, __ATOMIC_RELAXED);
	pthread_join(pc->thread, NULL);
	pc->running = 0;
	if (pc->nidle >= PACER_MIN) {
		memcpy(pc->late, pc->idle, sizeof(pc->late));
		pc->n = pc->nidle;
	}
	if (pc->n < PACER_MIN)
		return 0;
	return pc->n < PACER_SAMPLES ? (size_t)pc->n : PACER_SAMPLES;
}

struct collect {
	struct sink sink;
	const struct scan_config *cfg;
	const struct series_params *sp;
	double t0;			/* when the run began (now_seconds()) */
	size_t nprocs;			/* inputs per snapshot */
	size_t nsnaps;			/* snapshots */
	double *at;			/* per snapshot: when its reading began */
	double worst_late;		/* the latest snapshot: how late */
	size_t worst_snap;		/* ... which one (from 0) */
	struct pacer pacer;		/* ksmd's lateness here (live) */
	struct sink **to;		/* the sinks with a series() hook */
	size_t nto;
	struct snap *snaps;		/* one per input */
	uint32_t *sum;			/* per content id: KSM's checksum */
	uint64_t *head;			/* per content id: first 8 bytes, big endian */
	size_t nsum;
	uint32_t zero_id, zero_sum;
	double hash_seconds;		/* the checksum's time, all snapshots */
	uint64_t hashed;		/* pages it hashed */
	struct figures *figs;		/* each snapshot's figures (its last
					 * process's, for several) */
	struct scope last_sc;		/* the last input's scope */
	uint64_t mergeable;		/* live: the last snapshot's pages in
					 * areas marked mergeable (smaps) */
	int marks_read;			/* ... read for some process */
	uint64_t *keep;			/* live: per snapshot, a bit per process
					 * ksmd scans (marked mergeable, or
					 * named by --enable) */
	uint64_t enabled;		/* ... the processes --enable names */
	struct proc_stats last_proc;	/* ... its process's KSM state, kept:
					 * the input is closed before the replay */
	const struct index *ix;
	int cut;			/* the replay stopped at a bound */
	double ksmd_cpu;		/* live: ksmd's CPU seconds as the replay
					 * begins, for the tuners that count it */
	char why[200];			/* what the series row lacks */
	uint64_t pages, budget;		/* pages collected; the most allowed */
	struct forked forked;		/* live pages' frames (forked.c) */
	char stop[200];			/* why the run was stopped */
	uint64_t *thp0;			/* the first snapshot's pages, in the
					 * order read: the huge page each is
					 * part of (page_event's thp); NULL
					 * while none is */
	size_t thp0_cap;
	uint32_t *thp;			/* per address: its huge page as the
					 * replay begins (series' thp) */
	size_t nthp;
	uint8_t *pick;			/* --sample: per content id, PICK_* */
	size_t npick;
	uint64_t dropped;		/* --sample: pages read and left out */
	uint32_t *pace;			/* --sample: series.pace */
	uint32_t out_id;		/* --sample: series.out_id */
	struct replay_spread spread;	/* --sample: the last figures' spread */
	int failed;			/* --record could not be written */
	double start[SERIES_PROCS_MAX];	/* live: each process's start time */
	char command[SERIES_PROCS_MAX][64];	/* ... its command */
};

/* The first snapshot's page @k (in the order read) is part of huge page
 * @thp: the replay begins with the huge pages as they are then. */
static void keep_thp(struct collect *c, size_t k, uint64_t thp)
{
	if (k >= c->thp0_cap) {
		size_t n = c->thp0_cap;

		c->thp0_cap = 2 * k + 4096;
		c->thp0 = xreallocarray(c->thp0, c->thp0_cap, sizeof(*c->thp0));
		memset(c->thp0 + n, 0, (c->thp0_cap - n) * sizeof(*c->thp0));
	}
	c->thp0[k] = thp;
}

/* --sample: whether the page's content is in the sample (decided once per
 * content, from its bytes the first time it is read). */
static int sampled(struct collect *c, const struct page_event *pg)
{
	uint32_t n = c->sp->sample;

	if (n <= 1 || pg->zero)
		return 1;
	if (pg->id >= c->npick) {
		size_t was = c->npick;

		c->npick = 2 * (size_t)pg->id + 1024;
		c->pick = xreallocarray(c->pick, c->npick, 1);
		memset(c->pick + was, PICK_UNKNOWN, c->npick - was);
	}
	if (c->pick[pg->id] == PICK_UNKNOWN)
		c->pick[pg->id] = xxh3_seeded_page(pg->bytes, SAMPLE_SEED) % n ?
				  PICK_OUT : PICK_IN;
	return c->pick[pg->id] == PICK_IN;
}

/* --sample: note that the snapshot has a page at @addr (pages come in
 * address order: a file is a run or a few). */
static void note_run(struct snap *s, uint64_t addr)
{
	if (s->nruns && s->runs[s->nruns - 1].hi == addr) {
		s->runs[s->nruns - 1].hi = addr + PAGE_BYTES;
		return;
	}
	if (s->nruns == s->rcap) {
		s->rcap = s->rcap ? 2 * s->rcap : 16;
		s->runs = xreallocarray(s->runs, s->rcap, sizeof(*s->runs));
	}
	s->runs[s->nruns++] = (struct run){ addr, addr + PAGE_BYTES };
}

/* page(): note the page's address and content, and the content's checksum. */
static void collect_page(struct sink *sk, const struct page_event *pg)
{
	struct collect *c = (struct collect *)sk;
	struct snap *s = &c->snaps[pg->input_no / c->nprocs];
	uint64_t proc = pg->input_no % c->nprocs;

	if (!sampled(c, pg)) {
		c->dropped++;	/* counted, and dropped before it costs memory */
		s->dropped++;
		note_run(s, proc << SERIES_PROC_SHIFT | pg->address);
		return;
	}
	if (c->sp->sample > 1)
		note_run(s, proc << SERIES_PROC_SHIFT | pg->address);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->p = xreallocarray(s->p, s->cap, sizeof(*s->p));
	}
	s->p[s->n] = (struct page_ref){ proc << SERIES_PROC_SHIFT | pg->address,
					pg->id, (uint32_t)s->n, pg->frame };
	if (pg->thp && pg->input_no < c->nprocs)
		keep_thp(c, s->n, pg->thp);
	s->n++;
	if (++c->pages >= c->budget && !c->sink.stop) {
		/* Stopped now, as it grows: a small file may decompress to
		 * far more pages than its size suggests. */
		snprintf(c->stop, sizeof(c->stop), "the series' snapshots would "
			 "need more than the %llu MiB of memory there are (%d bytes "
			 "a page): take fewer snapshots or give --range",
			 (unsigned long long)(c->budget * SERIES_PAGE_BYTES >> 20),
			 SERIES_PAGE_BYTES);
		c->sink.stop = c->stop;
	}
	if (pg->id >= c->nsum) {
		size_t n = c->nsum;

		c->nsum = 2 * (size_t)pg->id + 1024;
		c->sum = xreallocarray(c->sum, c->nsum, sizeof(*c->sum));
		c->head = xreallocarray(c->head, c->nsum, sizeof(*c->head));
		memset(c->sum + n, 0, (c->nsum - n) * sizeof(*c->sum));
	}
	if (!pg->seen) {
		uint64_t h = 0;

		for (int i = 0; i < 8; i++)
			h = h << 8 | pg->bytes[i];
		c->head[pg->id] = h;
	}
	/* KSM keeps an unsigned int: the low 32 bits of wider digests. */
	c->sum[pg->id] = (uint32_t)pg->digests[KSM_CHECKSUM].lo;
	if (pg->zero) {
		c->zero_id = pg->id;
		c->zero_sum = (uint32_t)pg->digests[KSM_CHECKSUM].lo;
	}
}

static int ref_cmp(const void *a, const void *b)
{
	const struct page_ref *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int addr_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The addresses of every snapshot, ascending, each once. */
static uint64_t *union_addresses(const struct collect *c, size_t *n)
{
	size_t total = 0, k = 0;
	uint64_t *a;

	for (size_t s = 0; s < c->nsnaps; s++)
		total += c->snaps[s].n;
	/* Address indexes are 32-bit: series_budget() keeps below this. */
	if (total >= UINT32_MAX) {
		error("a series of more than %u pages", UINT32_MAX - 1);
		exit(1);
	}
	a = xcalloc(total ? total : 1, sizeof(*a));
	for (size_t s = 0; s < c->nsnaps; s++)
		for (size_t i = 0; i < c->snaps[s].n; i++)
			a[k++] = c->snaps[s].p[i].addr;
	qsort(a, total, sizeof(*a), addr_cmp);
	*n = 0;
	for (size_t i = 0; i < total; i++)
		if (!*n || a[*n - 1] != a[i])
			a[(*n)++] = a[i];
	return a;
}

/* Snapshot @s as (address index in @addr, content id) pairs, ascending; of
 * pages at one address, the first read counts; @frame set to their frame
 * keys (0: files). Frees the page list. */
static struct snapshot snap_sparse(struct snap *s, const uint64_t *addr,
				   uint64_t **frame)
{
	struct snapshot out = { 0, xcalloc(s->n + 1, sizeof(uint32_t)),
				xcalloc(s->n + 1, sizeof(uint32_t)) };
	size_t j = 0;

	*frame = xcalloc(s->n + 1, sizeof(**frame));
	if (s->n)	/* an unread snapshot has no page list at all */
		qsort(s->p, s->n, sizeof(*s->p), ref_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (i && s->p[i].addr == s->p[i - 1].addr)
			continue;
		while (addr[j] < s->p[i].addr)
			j++;
		out.addr_no[out.n] = (uint32_t)j;
		(*frame)[out.n] = s->p[i].frame;
		out.id[out.n++] = s->p[i].id;
	}
	free(s->p);
	s->p = NULL;
	s->n = 0;
	return out;
}

static int run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * --sample: snapshot @sn with a page of content @out at each address of
 * the series (@addr, @naddr) that has a page of a content outside the
 * sample in it (in @s's runs, not among its sampled pages): ksmd keeps
 * that address's rmap_item and its age, as it would. Frees the runs.
 */
static void with_outside(struct snapshot *sn, struct snap *s,
			 const uint64_t *addr, size_t naddr, uint32_t out)
{
	uint32_t *no = xcalloc(naddr + 1, sizeof(*no));
	uint32_t *id = xcalloc(naddr + 1, sizeof(*id));
	size_t k = 0, n = 0, r = 0;

	if (s->nruns)
		qsort(s->runs, s->nruns, sizeof(*s->runs), run_cmp);
	for (size_t j = 0; j < naddr; j++) {
		if (k < sn->n && sn->addr_no[k] == j) {
			no[n] = (uint32_t)j;
			id[n++] = sn->id[k++];
			continue;
		}
		while (r < s->nruns && s->runs[r].hi <= addr[j])
			r++;
		if (r < s->nruns && s->runs[r].lo <= addr[j]) {
			no[n] = (uint32_t)j;
			id[n++] = out;
		}
	}
	free(sn->addr_no);
	free(sn->id);
	*sn = (struct snapshot){ n, no, id };
	free(s->runs);
	s->runs = NULL;
	s->nruns = s->rcap = 0;
}

/* The bytes of a content, for the replay's trees: the index's, or for a
 * forked mapping's own content (forked.c) its page. */
static const unsigned char *content_bytes(const void *ctx, uint32_t id)
{
	static unsigned char out[PAGE_BYTES];
	const struct collect *c = ctx;

	if (c->sp->sample > 1 && id == c->out_id) {
		/* a content outside the sample, met in a tree where a sampled
		 * page was: any bytes but those of its head's equals */
		memset(out, 0xff, sizeof(out));
		return out;
	}
	if (id >= c->forked.base)
		return forked_bytes(&c->forked, id);
	return index_entry(c->ix, id)->bytes;
}

/* How many pages a page of content @id stands for (--sample). */
static uint64_t page_weight(const struct series *sr, uint32_t id)
{
	return SERIES_WEIGHT(sr, SERIES_CLASS(sr, id));
}

/* A snapshot's pages, each for the pages it stands for (--sample). */
static uint64_t snap_pages(const struct series *sr, const struct snapshot *s)
{
	uint64_t n = 0;

	if (sr->sample <= 1)
		return s->n;
	for (size_t k = 0; k < s->n; k++)
		n += page_weight(sr, s->id[k]);
	return n;
}

/* compare() of a series read live: memcmp of the contents' bytes. */
static int content_compare(const void *ctx, uint32_t a, uint32_t b,
			   size_t *common)
{
	return page_common(content_bytes(ctx, a), content_bytes(ctx, b), common);
}

/* How snapshot @b differs from snapshot @a; @count is scratch, one zeroed
 * counter per content id. With --sample each page counts for the pages it
 * stands for (an estimate with no bound: a change between a sampled and
 * an unsampled content shows as a page gone or new). */
static struct volatility_row differ(const struct series *sr,
				    const struct snapshot *a,
				    const struct snapshot *b, uint32_t *count)
{
	struct volatility_row v = { .pages = snap_pages(sr, b) };
	size_t i = 0, j = 0;

	for (size_t k = 0; k < a->n; k++)
		count[a->id[k]]++;
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->addr_no[i] < b->addr_no[j])) {
			v.gone_pages += page_weight(sr, a->id[i]);
			i++;
		} else if (i == a->n || b->addr_no[j] < a->addr_no[i]) {
			v.new_pages += page_weight(sr, b->id[j]);
			j++;
		} else if (a->id[i] == b->id[j]) {
			v.unchanged_pages += page_weight(sr, b->id[j]);
			i++, j++;
		} else {
			v.changed_pages += page_weight(sr, b->id[j]);
			v.merges_broken += count[a->id[i]] >= 2 ?
					   page_weight(sr, a->id[i]) : 0;
			i++, j++;
		}
	}
	for (size_t k = 0; k < a->n; k++)
		count[a->id[k]] = 0;
	return v;
}

/* When pages_sharing first reached 90% of its value at the last scan (@n >= 1):
 * the seconds of the first such row; 0 if the last value is 0. */
static double seconds_to_90(const struct timeline_row *rows, size_t n)
{
	uint64_t last = rows[n - 1].pages_sharing;
	size_t i = 0;

	if (!last)
		return 0.0;	/* nothing to reach */
	while ((double)rows[i].pages_sharing < 0.9 * (double)last)
		i++;		/* the last row ends the loop */
	return rows[i].seconds;
}

/* @rp with tuner @ops and its settings from the command line; a tuner
 * that counts ksmd's CPU before the replay gets the host's. */
static struct replay_params with_policy(const struct collect *c,
					struct replay_params rp,
					const struct policy_ops *ops)
{
	rp.policy = ops;
	rp.tuning = c->sp->tuning[policy_index(ops)];
	rp.ksmd_cpu_seconds = ops->flags & TUNER_READS_KSMD_CPU ? c->ksmd_cpu : 0;
	return rp;
}

/* The replay's settings from the command line's, with this machine's costs
 * (the first policy's). */
static struct replay_params replay_params(const struct collect *c)
{
	struct replay_params rp = {
		.ksm = c->cfg->ksm, .scans = c->sp->scans,
		.interval = c->sp->interval, .hz = c->sp->hz,
		.page_seconds = c->sp->page_seconds,
		.revisit_seconds = c->sp->revisit_seconds,
		.merge_seconds = c->sp->merge_seconds, .write_rate = c->sp->write_rate,
		.wake_seconds = c->sp->wake_seconds,
		.host = c->sp->host,
		.ns_per_page = c->hashed ? c->hash_seconds * 1e9 / (double)c->hashed : 0,
		.ns_per_byte = page_compare_ns_per_byte(),
	};

	return with_policy(c, rp, c->sp->policy);
}

/* ksmd's CPU time so far on a live host, when a tuner or -r advise's
 * search counts it (the advisor's first scan does); else 0. */
static double live_ksmd_cpu(const struct collect *c)
{
	unsigned flags = c->sp->policy->flags;

	for (size_t k = 0; k < c->sp->nothers; k++)
		flags |= c->sp->others[k]->flags;
	if (c->cfg->inputs[0].path ||
	    !(flags & TUNER_READS_KSMD_CPU || c->sp->advise.seconds > 0))
		return 0;
	return ksmd_cpu_seconds();
}

/* The series' name: its first input's, and how many more processes (one
 * series a run: the reports print it after the driver has returned). */
static const char *series_name(const struct collect *c)
{
	static char name[300];
	const char *first = c->cfg->inputs[0].name;

	if (c->nprocs == 1)
		return first;
	snprintf(name, sizeof(name), "%.256s+%zu", first, c->nprocs - 1);
	return name;
}

/*
 * The series row: the snapshot in force at the last full scan (the last one,
 * unless the replay stopped earlier), its pages and the KSM figures of that
 * scan; named by that snapshot (by the series' name with several
 * processes). A replay cut short by a bound makes the row partial.
 */
static struct scope last_scope(struct collect *c, const struct timeline_row *t,
			       const struct snapshot *snaps)
{
	size_t k = t->snapshot, n = c->nsnaps;
	struct figures *f = &c->figs[k];
	struct scope sc = c->last_sc;
	uint64_t saved = t->pages_sharing + t->ksm_zero_pages;

	if (c->nprocs > 1)	/* the snapshot is all its processes */
		f->pages = snaps[k].n + c->snaps[k].dropped;
	f->pages_shared = t->pages_shared;
	f->pages_sharing = t->pages_sharing;
	f->ksm_zero_pages = t->ksm_zero_pages;
	f->saved_bytes = saved * PAGE_BYTES;
	f->saved_zero_bytes = (t->ksm_zero_pages + t->zero_sharing) * PAGE_BYTES;
	f->general_profit = t->general_profit;
	f->saved_percent = ksm_saved_percent(saved, f->pages);
	forked_figures(&c->forked, k, saved, f);
	f->thp_zero_freed_pages = t->thp_zero_freed;
	f->freed_bytes += t->thp_zero_freed * PAGE_BYTES;
	sc.f = f;
	sc.name = c->nprocs == 1 ? c->cfg->inputs[k].name : series_name(c);
	sc.input_no = k * c->nprocs;
	if (c->cut) {
		if (k + 1 < n)
			snprintf(c->why, sizeof(c->why), "the replay stopped at a "
				 "bound in snapshot %zu of %zu: snapshots %zu to %zu "
				 "were not replayed", k + 1, n, k + 2, n);
		else
			snprintf(c->why, sizeof(c->why), "the replay stopped at a "
				 "bound before the counters settled");
		sc.status = sc.status == SCOPE_FAILED ? SCOPE_FAILED : SCOPE_PARTIAL;
		sc.why = c->why;
	}
	return sc;
}

/*
 * --sample: say what the figures rest on, once: the pages replayed of
 * those read, and each last figure's bound (two standard errors of the
 * estimate from the sampled contents).
 */
static void say_sample(const struct collect *c, const struct timeline_row *rows,
		       size_t nrows)
{
	uint32_t n = c->sp->sample;
	const struct replay_spread *sp = &c->spread;
	const struct timeline_row *t = &rows[nrows - 1];
	double saved;

	if (n <= 1)
		return;
	saved = replay_ratio_bound(n, sp) + replay_swing(rows, nrows);
	warn("%s: --sample=1/%u: %llu of %llu pages replayed (%llu contents "
	     "with a page at the end, and every zero page), each standing for %u; "
	     "the last full scan's figures, within two standard errors: "
	     "pages_shared %llu +- %.0f, pages_sharing %llu +- %.0f, "
	     "pages_unshared %llu (no bound: it follows smart_scan's skips), "
	     "saved pages %llu +- %.0f",
	     series_name(c), n, (unsigned long long)(c->pages),
	     (unsigned long long)(c->pages + c->dropped),
	     (unsigned long long)sp->contents, n,
	     (unsigned long long)t->pages_shared, replay_bound(n, sp->shared),
	     (unsigned long long)t->pages_sharing, saved,
	     (unsigned long long)t->pages_unshared,
	     (unsigned long long)(t->pages_sharing + t->ksm_zero_pages), saved);
}

/* Say how late the latest live snapshot was, once, at the end. */
static void say_late(const struct collect *c)
{
	if (c->worst_late > 0.02 && c->worst_late > 0.1 * c->sp->interval)
		warn("%s: snapshots were taken late, at worst snapshot %zu by %.3g s "
		     "(due at %.3g s): reading takes longer than --interval; the "
		     "replay takes each at the time it was read",
		     c->cfg->inputs[0].name, c->worst_snap + 1, c->worst_late,
		     c->at[c->worst_snap] - c->worst_late);
}

/* Whether a replay ran until its counters settled (replay_figures()). */
static int settled(const struct replay_params *rp, int cut)
{
	return !cut && !rp->scans && !(rp->write_rate > 0);
}

/*
 * --policy=a,b,...: the policies after the first, each replayed over the
 * same snapshots with the same settings but its own tuner; @runs[0], the
 * first policy's, is set already. Returns how many runs there are.
 */
static size_t replay_others(const struct collect *c, const struct series *sr,
			    struct policy_run *runs, struct replay_params *rps)
{
	size_t n = 1;

	for (size_t k = 0; k < c->sp->nothers; k++, n++) {
		struct timeline_row *rows;
		size_t nrows;
		int cut;

		rps[k] = with_policy(c, *runs[0].params, c->sp->others[k]);
		nrows = replay_run(sr, &rps[k], &rows, &cut);
		runs[n] = (struct policy_run){ rps[k].policy, rows, nrows,
					       settled(&rps[k], cut), &rps[k] };
		if (cut)
			warn("%s: the replay of --policy=%s stopped at a bound after "
			     "%zu full scans (%.0f s): its later figures are unknown",
			     series_name(c), rps[k].policy->name, nrows,
			     rows[nrows - 1].seconds);
	}
	return n;
}

/* -r advise: the fixed settings and the advisor's knobs that reach the
 * target (the settings search, model/search.c) over @sr, the target a
 * share of @reference; the advisor's first scan counts ksmd's CPU so far
 * on a live host, as its policy's replay does. Return: the rows in @out. */
static size_t advise(const struct collect *c, const struct series *sr,
		     const struct replay_params *rp, uint64_t reference,
		     struct advice *out)
{
	struct replay_params base = *rp;

	base.ksmd_cpu_seconds = c->ksmd_cpu;
	return search_settings(sr, &base, c->sp->tuning, &c->sp->advise,
			       reference, c->cfg->progress, out);
}

/* The row's snapshot's pages ksmd scans and the others (@res), and
 * whether some snapshot has pages ksmd does not scan. */
static int count_marked(const struct collect *c, const struct series *sr,
			size_t row, struct series_result *res)
{
	int some_out = 0;

	for (size_t s = 0; s < sr->nsnaps; s++)
		for (size_t i = 0; i < sr->snaps[s].n; i++) {
			uint64_t k = sr->addr[sr->snaps[s].addr_no[i]] >>
				     SERIES_PROC_SHIFT;
			int in = c->keep[s] >> k & 1;

			some_out |= !in;
			if (s != row)
				continue;
			if (in)
				res->mergeable_pages++;
			else {
				res->not_mergeable_pages++;
				res->not_mergeable_procs |= UINT64_C(1) << k;
			}
		}
	return some_out;
}

/*
 * -r advise over the memory ksmd scans (@res: its figures, the reference
 * and the rows in @out): all of @sr for files, or when every live process
 * read is marked mergeable or named by --enable; else only those, replayed
 * at the run's settings for the reference, what the others would save more
 * beside it. Nothing marked: no advice (nothing_mergeable says why).
 */
static size_t advise_marked(const struct collect *c, const struct series *sr,
			    const struct replay_params *rp,
			    const struct timeline_row *last,
			    struct series_result *res, struct advice *out)
{
	struct snapshot *snaps;
	struct timeline_row *rows;
	struct series msr;
	size_t nrows, n;
	int cut;

	if (!(c->sp->advise.seconds > 0))
		return 0;
	if (c->cfg->inputs[0].path) {
		res->mergeable_pages = sr->snaps[last->snapshot].n;
		return advise(c, sr, rp, res->reference, out);
	}
	if (!count_marked(c, sr, last->snapshot, res))
		return advise(c, sr, rp, res->reference, out);
	res->not_mergeable_saved = res->reference;
	if (!res->mergeable_pages)
		return 0;
	snaps = xcalloc(sr->nsnaps, sizeof(*snaps));
	series_marked(sr, c->keep, SERIES_PROC_SHIFT, &msr, snaps);
	nrows = replay_run(&msr, rp, &rows, &cut);
	res->reference = rows[nrows - 1].pages_sharing +
			 rows[nrows - 1].ksm_zero_pages;
	res->not_mergeable_saved -= res->not_mergeable_saved > res->reference ?
				    res->reference : res->not_mergeable_saved;
	free(rows);
	n = advise(c, &msr, rp, res->reference, out);
	series_marked_free(&msr, snaps);
	free(snaps);
	return n;
}

/*
 * Each address's huge page as the replay begins (the first snapshot's),
 * in @sr: a run of consecutive addresses of one huge page is one (a huge
 * page two forked processes map is one in each).
 */
static void thp_build(struct collect *c, const uint64_t *addr, size_t n,
		      struct series *sr)
{
	const struct snap *s = &c->snaps[0];
	uint64_t *key;

	if (!c->thp0 || !c->nsnaps)
		return;
	key = xcalloc(n ? n : 1, sizeof(*key));
	for (size_t i = 0; i < s->n; i++) {
		const uint64_t *at = bsearch(&s->p[i].addr, addr, n, sizeof(*addr),
					     addr_cmp);

		if (at && s->p[i].pos < c->thp0_cap && !key[at - addr])
			key[at - addr] = c->thp0[s->p[i].pos];
	}
	c->thp = xcalloc(n ? n : 1, sizeof(*c->thp));
	for (size_t j = 0; j < n; j++) {
		if (!key[j]) {
			c->thp[j] = NO_ID;
			continue;
		}
		if (!j || key[j] != key[j - 1] || addr[j] != addr[j - 1] + PAGE_BYTES)
			c->nthp++;
		c->thp[j] = (uint32_t)(c->nthp - 1);
	}
	free(key);
	sr->thp = c->thp;
	sr->nthp = c->nthp;
}

/*
 * The snapshots as the replay takes them (@sr, its snapshots in @snaps):
 * the union of their addresses, each one's pages by address, and each
 * content's checksum and head; the snapshots' times from the first one.
 */
static void series_build(struct collect *c, struct series *sr,
			 struct snapshot *snaps)
{
	size_t n, ns = c->nsnaps;
	uint64_t *addr = union_addresses(c, &n);

	*sr = (struct series){ .naddr = n, .addr = addr, .nsnaps = ns,
			       .snaps = snaps, .zero_id = c->zero_id,
			       .zero_sum = c->zero_sum, .compare = content_compare,
			       .ctx = c,
			       .at = c->cfg->inputs[0].path ? NULL : c->at,
			       .sample = c->sp->sample, .pace = NULL,
			       .out_id = NO_ID };
	thp_build(c, addr, n, sr);
	for (size_t s = ns; s-- > 0;)
		c->at[s] -= c->at[0];	/* from the first snapshot on */
	if (sr->sample > 1) {	/* one more content: those outside the sample */
		sr->out_id = c->out_id = (uint32_t)c->nsum++;
		c->sum = xreallocarray(c->sum, c->nsum, sizeof(*c->sum));
		c->head = xreallocarray(c->head, c->nsum, sizeof(*c->head));
		c->sum[c->out_id] = 0x5a5a5a5a;
		c->head[c->out_id] = UINT64_MAX;
	}
	forked_start(&c->forked, c->nsum, n, ns, c->nprocs, &c->cfg->ksm,
		     c->zero_id);
	for (size_t s = 0; s < ns; s++) {
		uint64_t *frame;

		snaps[s] = snap_sparse(&c->snaps[s], addr, &frame);
		forked_snapshot(&c->forked, s, &snaps[s], frame, SERIES_PROC_SHIFT,
				addr);
		free(frame);
		if (sr->sample > 1)	/* (no frames: files only) */
			with_outside(&snaps[s], &c->snaps[s], addr, n, c->out_id);
		if (c->forked.snaps[s].estimate)
			frames_say_estimate();
	}
	if (sr->sample > 1) {	/* ksmd's pace: the whole memory's */
		c->pace = xcalloc(ns, sizeof(*c->pace));
		for (size_t s = 0; s < ns; s++)
			c->pace[s] = replay_pace_weight(sr, s, c->snaps[s].dropped);
		sr->pace = c->pace;
	}
	forked_contents(&c->forked, &c->sum, &c->head);
	sr->sum = c->sum;
	sr->head = c->head;
}

/* How each snapshot differs from the one before (the volatility report). */
static struct volatility_row *volatility(const struct collect *c,
					 const struct series *sr,
					 const struct snapshot *snaps)
{
	size_t ns = c->nsnaps;
	struct volatility_row *vol = xcalloc(ns, sizeof(*vol));
	uint32_t *count = xcalloc(c->forked.base + c->forked.n + 1, sizeof(*count));

	for (size_t s = 1; s < ns; s++) {
		vol[s - 1] = differ(sr, &snaps[s - 1], &snaps[s], count);
		vol[s - 1].from = s;
		vol[s - 1].to = s + 1;
	}
	free(count);
	return vol;
}

/* The first policy's replay, with each live process's pages at its end in
 * @owners; a replay stopped at a bound is an error. Return: its rows. */
static size_t replay_first(struct collect *c, const struct series *sr,
			   const struct replay_params *rp,
			   struct replay_owner *owners, struct timeline_row **rows)
{
	int live = !c->cfg->inputs[0].path, cut;
	size_t nrows = sr->sample > 1 ?
		       replay_run_sampled(sr, rp, rows, &cut, &c->spread) :
		       replay_run_owners(sr, rp, rows, &cut, SERIES_PROC_SHIFT,
					 owners, live ? c->nprocs : 0);

	c->cut = cut;
	if (sr->sample > 1) {	/* pages_sharing by its ratio to the scan's */
		uint64_t *full = xcalloc(c->nsnaps, sizeof(*full));

		for (size_t k = 0; k < c->nsnaps; k++)
			full[k] = c->figs[k].pages_sharing;
		replay_sample_rows(sr, &rp->ksm, full, *rows, nrows);
		free(full);
	}
	if (cut)
		error("%s: the replay stopped after %zu full scans (%.0f s, in "
		      "snapshot %zu of %zu), before the series' end: give --scans, "
		      "or more --pages-to-scan or --sleep-ms", series_name(c),
		      nrows, (*rows)[nrows - 1].seconds,
		      (*rows)[nrows - 1].snapshot + 1, c->nsnaps);
	return nrows;
}

/* The other policies' replays and the advice, then every series() hook:
 * the first policy's @rows and the snapshots' differences @vol. */
static void feed_reports(struct collect *c, const struct series *sr,
			 const struct replay_params *rp,
			 struct timeline_row *rows, size_t nrows,
			 const struct volatility_row *vol,
			 const struct replay_owner *owners)
{
	size_t ns = c->nsnaps;
	int live = !c->cfg->inputs[0].path;
	const struct timeline_row *last = &rows[nrows - 1];
	struct scope sc = last_scope(c, last, sr->snaps);
	const struct forked_snap *fs = forked_at(&c->forked, last->snapshot);
	struct policy_run runs[POLICIES_MAX + 1] = {
		{ rp->policy, rows, nrows, settled(rp, c->cut), rp },
	};
	struct replay_params others[POLICIES_MAX];
	size_t nruns = replay_others(c, sr, runs, others);
	struct advice advice[ADVISE_ROWS_MAX];
	struct series_result res = { sc.name, &sc, rows, nrows, vol, ns - 1, ns,
				     seconds_to_90(rows, nrows), rp, runs, nruns,
				     NULL, 0,
				     last->pages_sharing + last->ksm_zero_pages,
				     &c->sp->advise,
				     live ? owners : NULL, live ? c->nprocs : 0,
				     c->start, c->command,
				     live && fs ? fs->proc_frames : NULL,
				     live && fs ? fs->proc_fork_shared : NULL,
				     0, 0, 0, 0, 0 };

	res.nadvice = advise_marked(c, sr, rp, last, &res, advice);
	res.advice = res.nadvice ? advice : NULL;
	/* nothing ksmd scans: the marks, or with -r advise the pages kept */
	res.nothing_mergeable = live && c->marks_read &&
		(c->sp->advise.seconds > 0 ? !res.mergeable_pages :
		 !c->mergeable);

	for (size_t i = 0; i < c->nto; i++)
		c->to[i]->ops->series(c->to[i], &res);
	for (size_t k = 1; k < nruns; k++)
		free((void *)runs[k].rows);
}

/* The contents a record keeps: those of its pages, numbered densely in
 * the order of their ids (the replay's figures do not depend on ids). */
struct kept {
	const struct collect *c;
	uint32_t *old;			/* per record id: the series' id */
	uint32_t *new;			/* per series id: the record's, or NO_ID */
};

static const unsigned char *kept_bytes(const void *ctx, uint32_t id)
{
	const struct kept *k = ctx;

	return content_bytes(k->c, k->old[id]);
}

/* The host's facts and the run's costs, into @rec. */
static void record_host(const struct collect *c, const struct replay_params *rp,
			struct record *rec)
{
	struct utsname u;
	uint64_t total = 0, free_kb = 0;

	rec->hz = c->sp->hz;
	rec->cpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (host_meminfo(&total, &free_kb) == 0)
		rec->mem_kb = total;
	if (uname(&u) == 0)
		snprintf(rec->kernel, sizeof(rec->kernel), "%s", u.release);
	rec->ksm = c->cfg->ksm;
	rec->interval = c->sp->interval;
	rec->page_seconds = c->sp->page_seconds;
	rec->revisit_seconds = c->sp->revisit_seconds;
	rec->merge_seconds = c->sp->merge_seconds;
	rec->ns_per_page = rp->ns_per_page;
	rec->ns_per_byte = rp->ns_per_byte;
	rec->hash_seconds = c->hash_seconds;
	rec->hashed = c->hashed;
	rec->nlate = rp->nlate;
	if (rp->nlate)
		memcpy(rec->late, rp->late, rp->nlate * sizeof(*rp->late));
	rec->ksmd_cpu = c->ksmd_cpu;
	rec->host_total_kb = c->sp->host.total_kb;
	rec->host_used_kb = c->sp->host.used_kb;
	rec->ksm_full_scans = c->sp->ksm_full_scans;
}

/* The series @sr's contents and pages, renumbered, into @rec. */
static void record_pages(const struct collect *c, const struct series *sr,
			 struct record *rec, struct kept *k)
{
	size_t n = c->forked.base + c->forked.n, m = 0;

	k->new = xmalloc((n + 1) * sizeof(*k->new));
	k->old = xcalloc(n + 1, sizeof(*k->old));
	memset(k->new, 0xff, (n + 1) * sizeof(*k->new));
	for (size_t s = 0; s < sr->nsnaps; s++)
		for (size_t i = 0; i < sr->snaps[s].n; i++)
			k->new[sr->snaps[s].id[i]] = 0;
	rec->sum = xcalloc(n + 1, sizeof(*rec->sum));
	rec->head = xcalloc(n + 1, sizeof(*rec->head));
	for (size_t id = 0; id < n; id++)
		if (k->new[id] != NO_ID) {
			k->old[m] = (uint32_t)id;
			rec->sum[m] = sr->sum[id];
			rec->head[m] = sr->head[id];
			k->new[id] = (uint32_t)m++;
		}
	rec->ncontents = m;
	rec->zero_id = sr->zero_id == NO_ID ? NO_ID : k->new[sr->zero_id];
	rec->zero_sum = sr->zero_sum;
	rec->naddr = sr->naddr;
	rec->addr = (uint64_t *)sr->addr;
	rec->snaps = xcalloc(sr->nsnaps, sizeof(*rec->snaps));
	for (size_t s = 0; s < sr->nsnaps; s++) {
		const struct snapshot *from = &sr->snaps[s];
		struct snapshot *to = &rec->snaps[s];

		*to = (struct snapshot){ from->n, from->addr_no,
					 xcalloc(from->n + 1, sizeof(uint32_t)) };
		for (size_t i = 0; i < from->n; i++)
			to->id[i] = k->new[from->id[i]];
	}
}

/* --record: write the series @sr as the replay takes it, with what the
 * reports read besides (scan/record.h). Return: 0, or -1 (said). */
static int save_record(struct collect *c, const struct series *sr,
		       const struct replay_params *rp)
{
	struct record rec = { .live = !c->cfg->inputs[0].path, .nprocs = c->nprocs,
			      .nsnaps = c->nsnaps, .at = c->at, .figs = c->figs,
			      .status = c->last_sc.status, .has_proc = !!c->last_sc.proc,
			      .proc = c->last_proc, .mergeable = c->mergeable,
			      .marks_read = c->marks_read, .frames = c->forked.snaps,
			      .keep = c->keep, .thp = (uint32_t *)sr->thp,
			      .nthp = sr->nthp };
	struct kept k = { c, NULL, NULL };
	size_t ninputs = c->nprocs * c->nsnaps;
	int status;

	memcpy(rec.start, c->start, sizeof(rec.start));
	memcpy(rec.command, c->command, sizeof(rec.command));
	rec.names = xcalloc(ninputs + 1, sizeof(*rec.names));
	rec.pids = xcalloc(ninputs + 1, sizeof(*rec.pids));
	for (size_t i = 0; i < ninputs; i++) {
		rec.names[i] = (char *)c->cfg->inputs[i].name;
		rec.pids[i] = rec.live ? (int)c->cfg->inputs[i].pid : 0;
	}
	snprintf(rec.format, sizeof(rec.format), "%s",
		 c->last_sc.format ? c->last_sc.format : "-");
	snprintf(rec.why, sizeof(rec.why), "%s", c->last_sc.why ? c->last_sc.why : "");
	record_host(c, rp, &rec);
	record_pages(c, sr, &rec, &k);
	record_order(&rec, kept_bytes, &k);
	status = record_write(&rec, c->sp->record);
	for (size_t s = 0; s < c->nsnaps; s++)
		free(rec.snaps[s].id);
	free(rec.snaps), free(rec.names), free(rec.pids), free(rec.sum);
	free(rec.head), free(rec.digest), free(rec.rank), free(rec.lcp);
	free(k.old), free(k.new);
	return status;
}

/* Replay ksmd over the series @sr with @rp and hand the result to the
 * series sinks. */
static void replay_and_feed(struct collect *c, const struct series *sr,
			    const struct replay_params *rp)
{
	struct replay_owner owners[SERIES_PROCS_MAX];
	struct timeline_row *rows;
	struct volatility_row *vol = volatility(c, sr, sr->snaps);
	size_t nrows = replay_first(c, sr, rp, owners, &rows);

	say_sample(c, rows, nrows);
	feed_reports(c, sr, rp, rows, nrows, vol, owners);
	free(vol);
	free(rows);
}

/* Replay ksmd over the snapshots and hand the result to the series sinks;
 * with --record, write the series first. */
static void collect_finish(struct collect *c)
{
	size_t ns = c->nsnaps, nlate;
	struct snapshot *snaps = xcalloc(ns, sizeof(*snaps));
	struct replay_params rp;
	struct series sr;

	say_late(c);
	nlate = pacer_stop(&c->pacer);
	c->ksmd_cpu = live_ksmd_cpu(c);
	rp = replay_params(c);
	rp.nlate = nlate;
	rp.late = nlate ? c->pacer.late : NULL;
	series_build(c, &sr, snaps);
	for (size_t k = 0; !c->cfg->inputs[0].path && k < c->nprocs; k++) {
		/* as the series ends: what tells each process from a later one
		 * with its pid (the processes report, --check) */
		c->start[k] = proc_start_time(c->cfg->inputs[k].pid);
		proc_comm(c->cfg->inputs[k].pid, c->command[k], sizeof(c->command[k]));
	}
	if (c->sp->record && save_record(c, &sr, &rp) < 0)
		c->failed = 1;
	replay_and_feed(c, &sr, &rp);
	for (size_t s = 0; s < ns; s++) {
		free(snaps[s].addr_no);
		free(snaps[s].id);
	}
	free(snaps);
	free((void *)sr.addr);
}

/*
 * A snapshot's figures, as its processes are counted one after the other
 * (@first: its first): the last process's, but for the counts of pages,
 * which are the sums over them (the row is all of its processes).
 */
static void keep_figures(struct figures *snap, const struct figures *f, int first)
{
	uint64_t zero = first ? 0 : snap->zero_pages;
	uint64_t mappings = first ? 0 : snap->zero_page_mappings;

	*snap = *f;
	snap->zero_pages += zero;
	snap->zero_page_mappings += mappings;
}

/* scope(): keep the snapshot's figures; after the last one, replay. */
static void collect_scope(struct sink *sk, const struct scope *sc)
{
	struct collect *c = (struct collect *)sk;

	if (!sc->all) {
		c->hash_seconds += sc->f->seconds[KSM_CHECKSUM];
		c->hashed += sc->f->hashed_pages;
		keep_figures(&c->figs[sc->input_no / c->nprocs], sc->f,
			     sc->input_no % c->nprocs == 0);
		c->last_sc = *sc;
		if (sc->input_no % c->nprocs == 0)
			c->mergeable = 0, c->marks_read = 0;
		if (sc->proc) {
			size_t k = sc->input_no % c->nprocs;

			c->mergeable += sc->proc->mergeable_pages;
			c->marks_read = 1;
			if (sc->proc->mergeable_pages || (c->enabled >> k & 1))
				c->keep[sc->input_no / c->nprocs] |= UINT64_C(1) << k;
		}
		if (sc->proc) {
			c->last_proc = *sc->proc;
			c->last_sc.proc = &c->last_proc;
		}
		c->ix = sc->ix;
	}
	if (sc->all || c->cfg->ninputs == 1) {
		/* The series row is as complete as the worst snapshot. */
		c->last_sc.status = sc->status;
		c->last_sc.why = sc->why;
		collect_finish(c);
	}
}

static void collect_free(struct collect *c)
{
	for (size_t s = 0; s < c->nsnaps; s++) {
		free(c->snaps[s].p);
		free(c->snaps[s].runs);
	}
	free(c->snaps);
	free(c->figs);
	free(c->keep);
	free(c->at);
	free(c->sum);
	free(c->head);
	free(c->pick);
	free(c->pace);
	forked_free(&c->forked);
	free(c->to);
	free(c->thp0);
	free(c->thp);
}

/*
 * before_input(): a live snapshot waits for its time, and the time its
 * reading begins is the time the replay takes it at (its processes are read
 * one after the other); the latest is said at the end.
 */
static void wait_turn(void *arg, size_t k)
{
	struct collect *c = arg;
	const struct input *in = &c->cfg->inputs[k];
	size_t snap = k / c->nprocs;
	double due = in->at, late;

	if (k % c->nprocs || in->path)
		return;		/* not live, or a snapshot's later process */
	pacer_reading(&c->pacer, 0);	/* the snapshot before is read */
	sleep_until(c->t0 + due);
	pacer_reading(&c->pacer, 1);
	late = now_seconds() - (c->t0 + due);
	c->at[snap] = due + late;
	if (late > c->worst_late) {
		c->worst_late = late;
		c->worst_snap = snap;
	}
}

/* Every page, in scan order; the index's bytes stay readable for the replay. */
static const struct sink_ops collect_ops = {
	.needs = SINK_PAGES,
	.page = collect_page, .scope = collect_scope,
};

/* The pages an input will have, as far as can be known before reading it:
 * a file's size, a process's resident pages. */
static uint64_t expected_pages(const struct input *in)
{
	struct stat st;

	if (!in->path)
		return proc_resident_pages(in->pid);
	if (strcmp(in->path, "-") == 0 || stat(in->path, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size / PAGE_BYTES;
}

/* The most pages a series may collect: those that fit in the memory
 * available, and fewer than 2^32 (addresses are 32-bit indexes). */
static uint64_t series_budget(void)
{
	uint64_t budget = mem_available() / SERIES_PAGE_BYTES;

	return budget > UINT32_MAX - 1 ? UINT32_MAX - 1 : budget;
}

int series_fits(const struct scan_config *cfg, uint32_t sample)
{
	uint64_t want = 0, budget = series_budget();

	for (size_t k = 0; k < cfg->ninputs; k++)
		want += expected_pages(&cfg->inputs[k]);
	if (sample > 1)	/* about; the pages kept are counted as they come */
		want /= sample;
	if (want <= budget)
		return 0;
	error("the series would need about %llu MiB for %zu snapshots of %llu "
	      "pages in all (%d bytes a page), more than the %llu MiB available: "
	      "take fewer snapshots (--count), give --range or --sample=1/N",
	      (unsigned long long)(want * SERIES_PAGE_BYTES >> 20), cfg->ninputs,
	      (unsigned long long)want, SERIES_PAGE_BYTES,
	      (unsigned long long)(mem_available() >> 20));
	return -1;
}

/* A live series whose process cannot be read ends at once, with one line,
 * before the first sample: the run would be a whole sample of nothing,
 * and the advice of nothing. A process -P listed is skipped later. */
static int live_inputs_open(const struct scan_config *cfg, size_t nprocs)
{
	char path[64];

	for (size_t i = 0; i < nprocs && i < cfg->ninputs; i++) {
		const struct input *in = &cfg->inputs[i];
		int fd;

		if (in->path || in->listed)
			continue;
		fd = proc_memory_open(in->pid, PROC_MAPS);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		error("%s: cannot open %s: %s", in->name,
		      proc_memory_path(in->pid, PROC_MAPS, path, sizeof(path)),
		      proc_why_unreadable(in->pid, errno));
		return -1;
	}
	return 0;
}

/* The run's settings as the record has them: its host's facts and costs
 * (what the figures were made with there), the command line's KSM
 * settings, tuners and target (what the replay is asked). */
static void record_params(struct series_params *sp, const struct record *rec)
{
	struct series_params rsp = *sp;

	rsp.hz = rec->hz;
	rsp.interval = rec->interval;
	rsp.page_seconds = rec->page_seconds;
	rsp.revisit_seconds = rec->revisit_seconds;
	rsp.merge_seconds = rec->merge_seconds;
	rsp.ksm_full_scans = rec->ksm_full_scans;
	rsp.record = NULL;
	if (rec->host_total_kb)
		rsp.host = (struct policy_host){ .total_kb = rec->host_total_kb,
						 .used_kb = rec->host_used_kb };
	*sp = rsp;
}

/* The collector as the recorded run had it at its replay: @ins its inputs
 * (series_record_load()'s). */
static void record_collect(struct collect *c, struct record *rec,
			   const struct input *ins)
{
	size_t ninputs = rec->nprocs * rec->nsnaps;

	memcpy(c->start, rec->start, sizeof(c->start));
	memcpy(c->command, rec->command, sizeof(c->command));
	c->nprocs = rec->nprocs, c->nsnaps = rec->nsnaps;
	c->snaps = xcalloc(rec->nsnaps, sizeof(*c->snaps));
	c->at = rec->at, rec->at = NULL;
	c->figs = rec->figs, rec->figs = NULL;
	c->keep = rec->keep, rec->keep = NULL;
	c->sum = rec->sum, rec->sum = NULL;
	c->head = rec->head, rec->head = NULL;
	c->nsum = rec->ncontents;
	c->zero_id = rec->zero_id, c->zero_sum = rec->zero_sum;
	c->hash_seconds = rec->hash_seconds, c->hashed = rec->hashed;
	c->ksmd_cpu = rec->ksmd_cpu;
	c->mergeable = rec->mergeable, c->marks_read = rec->marks_read;
	c->last_proc = rec->proc;
	c->last_sc = (struct scope){ .name = ins[ninputs - 1].name,
				     .format = rec->format,
				     .input_no = ninputs - 1,
				     .status = (enum scope_status)rec->status,
				     .why = rec->why[0] ? rec->why : NULL,
				     .proc = rec->has_proc ? &c->last_proc : NULL };
	c->forked = (struct forked){ .base = (uint32_t)rec->ncontents,
				     .snaps = rec->frames, .nsnaps = rec->nsnaps,
				     .nprocs = rec->nprocs };
	rec->frames = NULL;
}

/* The record replayed: the reports print its names after the driver has
 * returned (one series a run), so it is freed at exit. */
static struct record rec;
static struct input *rec_inputs;	/* its inputs, as the reports see them */

static void rec_free(void)
{
	record_free(&rec);
	free(rec_inputs);
	rec_inputs = NULL;
}

int series_record_load(struct scan_config *cfg, struct series_params *sp)
{
	char why[300];
	size_t n;

	rec_free();
	atexit(rec_free);
	if (record_read(cfg->inputs[0].path, &rec, why, sizeof(why)) < 0) {
		error("%s: %s", cfg->inputs[0].name, why);
		record_free(&rec);
		return -1;
	}
	n = rec.nprocs * rec.nsnaps;
	rec_inputs = xcalloc(n, sizeof(*rec_inputs));
	for (size_t i = 0; i < n; i++)	/* live ones without a path */
		rec_inputs[i] = (struct input){ .name = rec.names[i],
						.path = rec.live ? NULL :
							cfg->inputs[0].path,
						.pid = rec.pids[i] };
	cfg->inputs = rec_inputs;
	cfg->ninputs = n;
	record_params(sp, &rec);
	return 0;
}

/* The input is a record, loaded (series_record_load()): replay it as the
 * run that wrote it did, and hand the result to the reports. Return: the
 * exit status. */
static int series_from_record(const struct scan_config *cfg,
			      const struct series_params *sp)
{
	struct scan_config sub = *cfg;
	struct collect c = { .cfg = &sub, .sp = sp,
			     .to = xcalloc(cfg->nsinks + 1, sizeof(*c.to)) };
	struct replay_params rp;
	struct series sr;

	record_collect(&c, &rec, cfg->inputs);
	for (size_t i = 0; i < cfg->nsinks; i++)
		if (cfg->sinks[i]->ops->series)
			c.to[c.nto++] = cfg->sinks[i];
	rp = replay_params(&c);
	rp.ns_per_byte = rec.ns_per_byte;	/* memcmp's cost there */
	rp.nlate = rec.nlate;
	rp.late = rec.nlate ? rec.late : NULL;
	sr = (struct series){ .naddr = rec.naddr, .addr = rec.addr,
			      .nsnaps = rec.nsnaps, .snaps = rec.snaps,
			      .sum = c.sum, .head = c.head, .zero_id = c.zero_id,
			      .zero_sum = c.zero_sum, .compare = record_compare,
			      .ctx = &rec, .at = rec.live ? c.at : NULL,
			      .thp = rec.thp, .nthp = rec.nthp, .out_id = NO_ID };
	replay_and_feed(&c, &sr, &rp);
	collect_free(&c);
	return (c.last_sc.status != SCOPE_OK) | c.cut;
}

int series_run(const struct scan_config *cfg, const struct series_params *sp)
{
	size_t nprocs = sp->nprocs ? sp->nprocs : 1;
	size_t nsnaps = cfg->ninputs / nprocs;
	struct collect c = {
		.sink.ops = &collect_ops, .cfg = cfg, .sp = sp, .zero_id = NO_ID,
		.t0 = now_seconds(), .nprocs = nprocs, .nsnaps = nsnaps,
		.snaps = xcalloc(nsnaps ? nsnaps : 1, sizeof(*c.snaps)),
		.at = xcalloc(nsnaps ? nsnaps : 1, sizeof(*c.at)),
		.figs = xcalloc(nsnaps ? nsnaps : 1, sizeof(*c.figs)),
		.keep = xcalloc(nsnaps ? nsnaps : 1, sizeof(*c.keep)),
		.to = xcalloc(cfg->nsinks + 1, sizeof(*c.to)),
	};
	struct sink **sinks;
	struct scan_config sub = *cfg;
	int status;

	for (size_t i = 0; sp->enable && i < sp->enable->ninputs; i++)
		c.enabled |= UINT64_C(1) << (sp->enable->inputs[i] % nprocs);
	if (sp->from_record) {
		collect_free(&c);
		return series_from_record(cfg, sp);
	}
	if (live_inputs_open(cfg, nprocs) < 0) {
		collect_free(&c);
		return 1;	/* EXIT_INPUT */
	}
	if (sp->live_note[0])
		warn("%s", sp->live_note);
	sinks = xcalloc(cfg->nsinks + 1, sizeof(*sinks));

	sinks[sub.nsinks = 0] = &c.sink;
	sub.nsinks++;
	for (size_t i = 0; i < cfg->nsinks; i++) {
		const struct sink_ops *ops = cfg->sinks[i]->ops;

		if (ops->series)
			c.to[c.nto++] = cfg->sinks[i];
		if (!ops->series || (ops->needs & SINK_SNAPSHOTS))
			sinks[sub.nsinks++] = cfg->sinks[i];
	}
	sub.sinks = sinks;
	sub.before_input = wait_turn;
	sub.frame_keys_only = 1;	/* forked.c counts each snapshot's frames */
	sub.arg = &c;
	if (cfg->ninputs && !cfg->inputs[0].path)
		pacer_start(&c.pacer, sp, &cfg->ksm);
	c.budget = series_budget();
	status = scan_run(&sub) | c.cut | c.failed;
	pacer_stop(&c.pacer);	/* if the replay did not run */
	collect_free(&c);
	free(sinks);
	return status;
}
