/* SPDX-License-Identifier: MIT */
/*
 * --series: the inputs are snapshots of one memory. The engine reads them as
 * usual; a collecting sink notes each page's address and content id (the
 * index's: byte-exact across the whole run, so no digest stands for
 * bytes) and, as each snapshot is read, keeps only what changed against
 * the one before, so that what it holds does not grow with the number of
 * snapshots; then it replays ksmd over them (replay.c, taking snapshots as
 * deltas) and hands the timeline and the snapshots' differences to the
 * reports' series() hooks.
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
#include "deltaspool.h"
#include "index.h"
#include "marked.h"
#include "record.h"
#include "series.h"

/*
 * What a series holds at its peak, per page of its largest snapshot: the
 * snapshot being read (address, id, place, frame: 24 bytes, its array
 * grown by doubling), the one before it (address, id; frame when live),
 * the first one's pages (its changes); then the addresses' union, each
 * address's content and two snapshots in full while the deltas are made,
 * and the replay's state per address; with the index's share, 96 bytes a
 * page measured (anonymous memory, every content distinct). Per page that
 * changes between two snapshots: its change as read (address, id; frame
 * when live), then as the replay takes it (address index, id): 16 bytes
 * measured, held in memory only where the delta spool (deltaspool.h)
 * cannot make its file; else on disk, and the spool's two records read
 * back (the first snapshot's: its pages). Nothing else grows with the
 * number of snapshots but the index's contents. A series stops before it
 * needs more than the memory the machine has available.
 */
#define SERIES_PAGE_BYTES 96
#define SERIES_CHANGE_BYTES 16

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

/*
 * One snapshot: its pages (address, content id) while it is read; once
 * read (snap_settle()), only what changed against the snapshot before
 * (the first: all of its pages), by address, the page list freed.
 */
struct snap {
	struct page_ref {
		uint64_t addr;
		uint32_t id;
		uint32_t pos;	/* its place in the input, for equal addresses */
		uint64_t frame;	/* its frame key (frames.h), 0 for files */
	} *p;
	size_t n, cap;
	uint64_t *caddr;	/* the addresses whose content (or frame) changed,
				 * came or went, ascending */
	uint32_t *cid;		/* ... the content now (NO_ID: gone) */
	uint64_t *cframe;	/* ... the frame now (live; NULL for files) */
	size_t nc;
	long spooled;		/* its changes' record in the collector's
				 * spool, + 1 (0: held in memory) */
	size_t npages;		/* its pages as the replay takes it (each
				 * address once) */
	uint64_t marked_in, marked_out;	/* live: its pages ksmd scans, and not */
	uint64_t out_procs;	/* ... a bit per process left out */
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
	struct snap *snaps;		/* one per snapshot */
	size_t settled;			/* snapshots read and settled */
	uint64_t *paddr;		/* the last one settled: its addresses */
	uint32_t *pid;			/* ... their contents */
	uint64_t *pframe;		/* ... their frames (live), or NULL */
	size_t np;
	uint64_t *thpkey;		/* the first snapshot's huge page keys,
					 * one per change (its pages), or NULL */
	uint64_t changed;		/* changes, after the first snapshot */
	uint64_t held;			/* ... of those held in memory (not in
					 * the spool) */
	struct deltaspool changes;	/* each snapshot's changes as it settles
					 * (snap_settle()), on disk */
	struct deltaspool deltas;	/* ... then as the replay takes them
					 * (snaps_build()) */
	uint64_t most;			/* the most pages a snapshot had */
	struct volatility_row *vol;	/* per pair of snapshots */
	int some_out;			/* live: some snapshot has pages ksmd
					 * does not scan */
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
	uint64_t pages, budget;		/* pages collected; the most bytes a
					 * series may hold (series_over()) */
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

static int ref_cmp(const void *a, const void *b)
{
	const struct page_ref *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Whether the series holds more than the memory allowed with @n pages in
 * the snapshot being read: a page of its largest snapshot costs
 * SERIES_PAGE_BYTES, a change held in memory (not spooled)
 * SERIES_CHANGE_BYTES; and addresses are
 * 32-bit indexes.
 */
static int series_over(const struct collect *c, uint64_t n)
{
	uint64_t most = n > c->most ? n : c->most;

	return most * SERIES_PAGE_BYTES + c->held * SERIES_CHANGE_BYTES >=
	       c->budget || most + c->changed >= UINT32_MAX - 1;
}

/*
 * Snapshot @k's page list sorted by address, each address once (the first
 * read of equal ones counts); for the first snapshot, each page's huge
 * page key in c->thpkey (the first one known of equal addresses).
 * Return: its pages.
 */
static size_t snap_dedupe(struct collect *c, struct snap *s, size_t k)
{
	uint64_t *key = NULL;
	size_t n = 0;

	if (!s->n)	/* an unread snapshot has no page list at all */
		return 0;
	qsort(s->p, s->n, sizeof(*s->p), ref_cmp);
	if (k == 0 && c->thp0)
		key = xcalloc(s->n, sizeof(*key));
	for (size_t i = 0; i < s->n; i++) {
		uint64_t t = key && s->p[i].pos < c->thp0_cap ?
			     c->thp0[s->p[i].pos] : 0;

		if (n && s->p[i].addr == s->p[n - 1].addr) {
			if (key && !key[n - 1])
				key[n - 1] = t;
			continue;
		}
		if (key)
			key[n] = t;
		s->p[n++] = s->p[i];
	}
	if (key) {
		c->thpkey = key;
		free(c->thp0);
		c->thp0 = NULL;
		c->thp0_cap = 0;
	}
	return n;
}

/* The changes from the last snapshot settled to @s's @n pages (sorted,
 * each address once): counted, and with @fill written to s->c*. */
static size_t changes_walk(const struct collect *c, struct snap *s, size_t n,
			   int fill)
{
	size_t i = 0, j = 0, m = 0;

	while (i < c->np || j < n) {
		uint64_t addr, frame = 0;
		uint32_t id = NO_ID;

		if (j == n || (i < c->np && c->paddr[i] < s->p[j].addr)) {
			addr = c->paddr[i++];	/* gone */
		} else {
			const struct page_ref *r = &s->p[j++];
			int same = i < c->np && c->paddr[i] == r->addr;

			if (same && c->pid[i] == r->id &&
			    (!c->pframe || c->pframe[i] == r->frame)) {
				i++;
				continue;
			}
			i += same;
			addr = r->addr, id = r->id, frame = r->frame;
		}
		if (fill) {
			s->caddr[m] = addr;
			s->cid[m] = id;
			if (s->cframe)
				s->cframe[m] = frame;
		}
		m++;
	}
	return m;
}

/*
 * Snapshot @s's changes (snap_settle()) into the spool, out of memory: a
 * long series holds on disk what changes. A spool that refuses stops the
 * series as series_over() does (the snapshot kept in memory).
 */
static void snap_spool(struct collect *c, struct snap *s)
{
	const void *parts[3] = { s->caddr, s->cframe, s->cid };
	size_t lens[3] = { s->nc * sizeof(*s->caddr),
			   s->cframe ? s->nc * sizeof(*s->cframe) : 0,
			   s->nc * sizeof(*s->cid) };
	long r = deltaspool_put(&c->changes, parts, lens, 3);

	if (r < 0 && !c->changes.opened)
		return;	/* no file in $TMPDIR: held in memory, as before */
	if (r < 0) {
		if (!c->sink.stop) {
			snprintf(c->stop, sizeof(c->stop), "%s", c->changes.why);
			c->sink.stop = c->stop;
		}
		return;
	}
	free(s->caddr), free(s->cid), free(s->cframe);
	s->caddr = NULL, s->cid = NULL, s->cframe = NULL;
	s->spooled = r + 1;
}

/* Snapshot @s's changes where they are read: from the spool (valid until
 * the second load after this one), or in memory already. */
static void snap_load(const struct collect *c, struct snap *s)
{
	const uint64_t *p;
	size_t len;

	if (!s->spooled)
		return;
	p = deltaspool_get((struct deltaspool *)&c->changes,
			   (size_t)(s->spooled - 1), &len);
	s->caddr = (uint64_t *)p;
	s->cframe = len > s->nc * 12 ? (uint64_t *)p + s->nc : NULL;
	s->cid = (uint32_t *)(p + (s->cframe ? 2 : 1) * s->nc);
}

/* What snap_load() read is the spool's: given back, not freed. */
static void snap_unload(const struct collect *c, struct snap *s)
{
	if (!s->spooled || !s->caddr)
		return;
	deltaspool_done((struct deltaspool *)&c->changes, s->caddr);
	s->caddr = NULL, s->cid = NULL, s->cframe = NULL;
}

/*
 * Snapshot @k is read: keep only its changes against the one before, and
 * its (address, content, frame) for the next one's; its page list freed.
 * What a series holds thus grows with what changes, not with snapshots.
 */
static void snap_settle(struct collect *c, size_t k)
{
	struct snap *s = &c->snaps[k];
	size_t n = snap_dedupe(c, s, k);
	int live = !c->cfg->inputs[0].path;

	s->nc = changes_walk(c, s, n, 0);
	s->caddr = xcalloc(s->nc + 1, sizeof(*s->caddr));
	s->cid = xcalloc(s->nc + 1, sizeof(*s->cid));
	s->cframe = live ? xcalloc(s->nc + 1, sizeof(*s->cframe)) : NULL;
	changes_walk(c, s, n, 1);
	snap_spool(c, s);
	free(c->paddr), free(c->pid), free(c->pframe);
	c->paddr = xcalloc(n + 1, sizeof(*c->paddr));
	c->pid = xcalloc(n + 1, sizeof(*c->pid));
	c->pframe = live ? xcalloc(n + 1, sizeof(*c->pframe)) : NULL;
	for (size_t i = 0; i < n; i++) {
		c->paddr[i] = s->p[i].addr;
		c->pid[i] = s->p[i].id;
		if (live)
			c->pframe[i] = s->p[i].frame;
	}
	c->np = n;
	free(s->p);
	s->p = NULL;
	s->n = s->cap = 0;
	if (n > c->most)
		c->most = n;
	if (k)
		c->changed += s->nc;
	if (k && !s->spooled)
		c->held += s->nc;
}

/* Settle the snapshots before @k that are not yet (they are read). */
static void snaps_settle(struct collect *c, size_t k)
{
	for (; c->settled < k && c->settled < c->nsnaps; c->settled++)
		snap_settle(c, c->settled);
}

/* page(): note the page's address and content, and the content's checksum. */
static void collect_page(struct sink *sk, const struct page_event *pg)
{
	struct collect *c = (struct collect *)sk;
	size_t k = pg->input_no / c->nprocs;
	struct snap *s = &c->snaps[k];
	uint64_t proc = pg->input_no % c->nprocs;

	if (k > c->settled)	/* the ones before are read: settle them */
		snaps_settle(c, k);
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
	c->pages++;
	if (!c->sink.stop && series_over(c, s->n)) {
		/* Stopped now, as it grows: a small file may decompress to
		 * far more pages than its size suggests. */
		snprintf(c->stop, sizeof(c->stop), "the series' snapshots would "
			 "need more than the %llu MiB of memory there are (%d bytes "
			 "a page of a snapshot, %d a page that changes between "
			 "snapshots): take fewer snapshots or give --range",
			 (unsigned long long)(c->budget >> 20), SERIES_PAGE_BYTES,
			 SERIES_CHANGE_BYTES);
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

static int addr_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The addresses of every snapshot, ascending, each once: the first's, and
 * those the changes of the others come to. */
static uint64_t *union_addresses(const struct collect *c, size_t *n)
{
	uint64_t *a = xcalloc(1, sizeof(*a));
	size_t na = 0;

	for (size_t s = 0; s < c->nsnaps; s++) {
		struct snap *sn = &c->snaps[s];
		uint64_t *m = xcalloc(na + sn->nc + 1, sizeof(*m));
		size_t i = 0, j = 0, k = 0;

		snap_load(c, sn);

		while (i < na || j < sn->nc) {
			if (j == sn->nc || (i < na && a[i] < sn->caddr[j]))
				m[k++] = a[i++];
			else if (i == na || sn->caddr[j] < a[i])
				m[k++] = sn->caddr[j++];
			else
				m[k++] = a[i++], j++;
		}
		snap_unload(c, sn);
		free(a);
		a = m, na = k;
	}
	/* Address indexes are 32-bit: series_over() keeps below this. */
	if (na >= UINT32_MAX) {
		error("a series of more than %u addresses", UINT32_MAX - 1);
		exit(1);
	}
	*n = na;
	return a;
}

/* Snapshot @s's changes applied to @cur (per address of @addr, its
 * content, NO_ID: none) and @curf (its frame, or NULL); they are freed. */
static void snap_apply(struct snap *s, const uint64_t *addr, uint32_t *cur,
		       uint64_t *curf)
{
	size_t j = 0;

	for (size_t i = 0; i < s->nc; i++) {
		while (addr[j] < s->caddr[i])
			j++;
		cur[j] = s->cid[i];
		if (curf)
			curf[j] = s->cframe ? s->cframe[i] : 0;
	}
	if (s->spooled)
		return;	/* (the spool's: snap_unload()) */
	free(s->caddr), free(s->cid), free(s->cframe);
	s->caddr = NULL, s->cid = NULL, s->cframe = NULL;
	s->nc = 0;
}

/* The snapshot @cur (snap_apply()) as (address index, content id) pairs,
 * ascending; @frame set to their frame keys (0: files). */
static struct snapshot snap_full(const uint32_t *cur, const uint64_t *curf,
				 size_t naddr, uint64_t **frame)
{
	struct snapshot out = { 0, NULL, NULL };
	size_t m = 0;

	for (size_t a = 0; a < naddr; a++)
		m += cur[a] != NO_ID;
	out.addr_no = xcalloc(m + 1, sizeof(uint32_t));
	out.id = xcalloc(m + 1, sizeof(uint32_t));
	*frame = xcalloc(m + 1, sizeof(**frame));
	for (size_t a = 0; a < naddr; a++)
		if (cur[a] != NO_ID) {
			out.addr_no[out.n] = (uint32_t)a;
			(*frame)[out.n] = curf ? curf[a] : 0;
			out.id[out.n++] = cur[a];
		}
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
static struct scope last_scope(struct collect *c, const struct timeline_row *t)
{
	size_t k = t->snapshot, n = c->nsnaps;
	struct figures *f = &c->figs[k];
	struct scope sc = c->last_sc;
	uint64_t saved = t->pages_sharing + t->ksm_zero_pages;

	if (c->nprocs > 1)	/* the snapshot is all its processes */
		f->pages = c->snaps[k].npages + c->snaps[k].dropped;
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
	     (unsigned long long)t->pages_shared,
	     replay_shared_bound(n, sp, rows, nrows),
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
 * whether some snapshot has pages ksmd does not scan (snap_summary()). */
static int count_marked(const struct collect *c, size_t row,
			struct series_result *res)
{
	const struct snap *st = &c->snaps[row];

	res->mergeable_pages += st->marked_in;
	res->not_mergeable_pages += st->marked_out;
	res->not_mergeable_procs |= st->out_procs;
	return c->some_out;
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
		res->mergeable_pages = c->snaps[last->snapshot].npages;
		return advise(c, sr, rp, res->reference, out);
	}
	if (!count_marked(c, last->snapshot, res))
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
	struct snap *s = &c->snaps[0];	/* its changes: its pages */
	uint64_t *key;

	if (!c->thpkey || !c->nsnaps)
		return;
	snap_load(c, s);
	key = xcalloc(n ? n : 1, sizeof(*key));
	for (size_t i = 0; i < s->nc; i++) {
		const uint64_t *at = bsearch(&s->caddr[i], addr, n, sizeof(*addr),
					     addr_cmp);

		if (at && !key[at - addr])
			key[at - addr] = c->thpkey[i];
	}
	snap_unload(c, s);
	free(c->thpkey);
	c->thpkey = NULL;
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
 * What the reports read of snapshot @s (@sn, in full): its pages, and
 * (live) those of the processes ksmd scans and the others.
 */
static void snap_summary(struct collect *c, size_t s, const struct snapshot *sn,
			 const uint64_t *addr)
{
	struct snap *st = &c->snaps[s];

	st->npages = sn->n;
	for (size_t i = 0; i < sn->n; i++) {
		uint64_t k = addr[sn->addr_no[i]] >> SERIES_PROC_SHIFT;

		if (c->keep[s] >> k & 1) {
			st->marked_in++;
			continue;
		}
		c->some_out = 1;
		st->marked_out++;
		st->out_procs |= UINT64_C(1) << k;
	}
}

/* How snapshot @b differs from @a, the one before it (@s its number from
 * 0); @count scratch, grown to the content ids given out so far. */
static void snap_vol(struct collect *c, const struct series *sr, size_t s,
		     const struct snapshot *a, const struct snapshot *b,
		     uint32_t **count, size_t *ncount)
{
	size_t need = (size_t)c->forked.base + c->forked.n + 1;

	if (need > *ncount) {
		*count = xreallocarray(*count, need, sizeof(**count));
		memset(*count + *ncount, 0, (need - *ncount) * sizeof(**count));
		*ncount = need;
	}
	c->vol[s - 1] = differ(sr, a, b, *count);
	c->vol[s - 1].from = s;
	c->vol[s - 1].to = s + 1;
}

/*
 * Snapshot @s in full (@sn, its frames @frame) as the replay takes it:
 * the frame rule, --sample's pages outside the sample, ksmd's pace then;
 * and what the reports read of it.
 */
static void snap_finish(struct collect *c, const struct series *sr, size_t s,
			struct snapshot *sn, const uint64_t *frame)
{
	forked_snapshot(&c->forked, s, sn, frame, SERIES_PROC_SHIFT, sr->addr);
	if (sr->sample > 1)	/* (no frames: files only) */
		with_outside(sn, &c->snaps[s], sr->addr, sr->naddr, c->out_id);
	if (c->forked.snaps[s].estimate)
		frames_say_estimate();
	if (sr->sample > 1) {	/* ksmd's pace: the whole memory's */
		struct series one = *sr;

		one.delta = 0, one.snaps = sn, one.nsnaps = 1;
		c->pace[s] = replay_pace_weight(&one, 0, c->snaps[s].dropped);
	}
	snap_summary(c, s, sn, sr->addr);
}

/* A record's delta @d applied to @cur (per address its content, NO_ID:
 * none). */
static void delta_apply(const struct snapshot *d, uint32_t *cur)
{
	for (size_t i = 0; i < d->n; i++)
		cur[d->addr_no[i]] = d->id[i];
}

/*
 * Delta @s of @snaps to the spool, out of memory. Should the spool refuse
 * now, when the changes as read did fit, the deltas stay in memory, as
 * they did before there was a spool (those spooled already read back).
 */
static void delta_keep(struct collect *c, struct snapshot *snaps, size_t s)
{
	int opened = c->deltas.opened;

	if (c->deltas.failed || !deltaspool_keep(&c->deltas, snaps, s))
		return;
	if (opened && !c->changes.failed)	/* (else said) */
		warn("%s: the snapshots are kept in memory", c->deltas.why);
}

/*
 * The snapshots one after the other: each made whole from its changes,
 * finished (snap_finish()), compared with the one before, and kept as a
 * delta in @snaps (series.delta): at most two in full at a time. With
 * @snaps NULL, @sr's are a record's deltas already (its frames and pages
 * as the recorded run finished them): each is made whole, summarized
 * (snap_summary()) and compared.
 */
static void snaps_build(struct collect *c, const struct series *sr,
			struct snapshot *snaps)
{
	size_t n = sr->naddr, ncount = 0;
	uint32_t *cur = xmalloc((n + 1) * sizeof(*cur)), *count = NULL;
	uint32_t *last = snaps ? xmalloc((n + 1) * sizeof(*last)) : NULL;
	uint64_t *curf = !snaps || c->cfg->inputs[0].path ? NULL :
			 xcalloc(n + 1, sizeof(*curf));
	struct snapshot prev = { 0, NULL, NULL };

	memset(cur, 0xff, (n + 1) * sizeof(*cur));
	if (last)
		memset(last, 0xff, (n + 1) * sizeof(*last));
	for (size_t s = 0; s < c->nsnaps; s++) {
		struct snapshot full;
		uint64_t *frame;

		if (snaps) {
			snap_load(c, &c->snaps[s]);
			snap_apply(&c->snaps[s], sr->addr, cur, curf);
			snap_unload(c, &c->snaps[s]);
		} else {
			const struct snapshot *d = series_snap(sr, s);

			delta_apply(d, cur);
			series_snap_done(sr, d);
		}
		full = snap_full(cur, curf, n, &frame);
		if (snaps)
			snap_finish(c, sr, s, &full, frame);
		else
			snap_summary(c, s, &full, sr->addr);
		free(frame);
		if (s)
			snap_vol(c, sr, s, &prev, &full, &count, &ncount);
		free(prev.addr_no), free(prev.id);
		prev = full;
		if (!snaps)
			continue;
		snaps[s] = (struct snapshot){ full.n,
			xcalloc(full.n + 1, sizeof(uint32_t)),
			xcalloc(full.n + 1, sizeof(uint32_t)) };
		memcpy(snaps[s].addr_no, full.addr_no, full.n * sizeof(uint32_t));
		memcpy(snaps[s].id, full.id, full.n * sizeof(uint32_t));
		snapshot_delta(&snaps[s], last, n);
		delta_keep(c, snaps, s);
	}
	free(prev.addr_no), free(prev.id);
	free(cur), free(curf), free(last), free(count);
}

/*
 * The snapshots as the replay takes them (@sr, its snapshots in @snaps,
 * deltas): the union of their addresses, each one's changes by address,
 * and each content's checksum and head; the snapshots' times from the
 * first one.
 */
static void series_build(struct collect *c, struct series *sr,
			 struct snapshot *snaps)
{
	size_t n, ns = c->nsnaps;
	uint64_t *addr;

	snaps_settle(c, ns);
	free(c->paddr), free(c->pid), free(c->pframe);
	c->paddr = NULL, c->pid = NULL, c->pframe = NULL, c->np = 0;
	addr = union_addresses(c, &n);
	*sr = (struct series){ .naddr = n, .addr = addr, .nsnaps = ns,
			       .snaps = snaps, .zero_id = c->zero_id,
			       .zero_sum = c->zero_sum, .compare = content_compare,
			       .ctx = c,
			       .at = c->cfg->inputs[0].path ? NULL : c->at,
			       .sample = c->sp->sample, .pace = NULL,
			       .out_id = NO_ID, .delta = 1 };
	thp_build(c, addr, n, sr);
	for (size_t s = ns; s-- > 0;)
		c->at[s] -= c->at[0];	/* from the first snapshot on */
	if (sr->sample > 1) {	/* one more content: those outside the sample */
		sr->out_id = c->out_id = (uint32_t)c->nsum++;
		c->sum = xreallocarray(c->sum, c->nsum, sizeof(*c->sum));
		c->head = xreallocarray(c->head, c->nsum, sizeof(*c->head));
		c->sum[c->out_id] = 0x5a5a5a5a;
		c->head[c->out_id] = UINT64_MAX;
		c->pace = xcalloc(ns ? ns : 1, sizeof(*c->pace));
		sr->pace = c->pace;
	}
	forked_start(&c->forked, c->nsum, n, ns, c->nprocs, &c->cfg->ksm,
		     c->zero_id);
	c->vol = xcalloc(ns ? ns : 1, sizeof(*c->vol));
	snaps_build(c, sr, snaps);
	deltaspool_free(&c->changes);	/* (made deltas: no longer read) */
	if (!c->deltas.failed) {	/* the replay reads them from disk */
		sr->snaps = NULL;
		sr->snap = deltaspool_snap;
		sr->snap_done = deltaspool_snap_done;
		sr->src = &c->deltas;
	}
	forked_contents(&c->forked, &c->sum, &c->head);
	sr->sum = c->sum;
	sr->head = c->head;
}

/* A record's series (deltas): what the reports read of each snapshot,
 * and how each differs from the one before (the volatility report). */
static void snaps_summarize(struct collect *c, const struct series *sr)
{
	c->vol = xcalloc(c->nsnaps ? c->nsnaps : 1, sizeof(*c->vol));
	snaps_build(c, sr, NULL);
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
	struct scope sc = last_scope(c, last);
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
	rec->wake_seconds = c->sp->wake_seconds;
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
	for (size_t s = 0; s < sr->nsnaps; s++) {	/* (deltas: NO_ID for gone) */
		const struct snapshot *sn = series_snap(sr, s);

		for (size_t i = 0; i < sn->n; i++)
			if (sn->id[i] != NO_ID)
				k->new[sn->id[i]] = 0;
		series_snap_done(sr, sn);
	}
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
		const struct snapshot *from = series_snap(sr, s);
		struct snapshot *to = &rec->snaps[s];

		/* (the record is written from memory: a copy) */
		*to = (struct snapshot){ from->n,
					 xcalloc(from->n + 1, sizeof(uint32_t)),
					 xcalloc(from->n + 1, sizeof(uint32_t)) };
		memcpy(to->addr_no, from->addr_no, from->n * sizeof(uint32_t));
		for (size_t i = 0; i < from->n; i++)
			to->id[i] = from->id[i] == NO_ID ? NO_ID :
				    k->new[from->id[i]];
		series_snap_done(sr, from);
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
			      .nthp = sr->nthp, .delta = sr->delta };
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
		free(rec.snaps[s].addr_no), free(rec.snaps[s].id);
	free(rec.snaps), free(rec.names), free(rec.pids), free(rec.sum);
	free(rec.head), free(rec.rank), free(rec.lcp);
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
	size_t nrows = replay_first(c, sr, rp, owners, &rows);

	say_sample(c, rows, nrows);
	feed_reports(c, sr, rp, rows, nrows, c->vol, owners);
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
		if (sc->input_no % c->nprocs == c->nprocs - 1)
			snaps_settle(c, sc->input_no / c->nprocs + 1);
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
		free(c->snaps[s].caddr);
		free(c->snaps[s].cid);
		free(c->snaps[s].cframe);
	}
	free(c->paddr), free(c->pid), free(c->pframe);
	deltaspool_free(&c->changes);
	deltaspool_free(&c->deltas);
	free(c->thpkey);
	free(c->vol);
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

/* The most bytes a series may hold (series_over()): the memory available. */
static uint64_t series_budget(void)
{
	return mem_available();
}

int series_fits(const struct scan_config *cfg, const struct series_params *sp)
{
	size_t nprocs = sp->nprocs ? sp->nprocs : 1;
	uint64_t want = 0, budget = series_budget();

	/* its largest snapshot: what changes later is counted as it comes */
	for (size_t k = 0; k < cfg->ninputs; k += nprocs) {
		uint64_t pages = 0;

		for (size_t i = k; i < k + nprocs && i < cfg->ninputs; i++)
			pages += expected_pages(&cfg->inputs[i]);
		want = pages > want ? pages : want;
	}
	if (sp->sample > 1)	/* about; the pages kept are counted as they come */
		want /= sp->sample;
	if (want * SERIES_PAGE_BYTES < budget && want < UINT32_MAX - 1)
		return 0;
	error("the series would need about %llu MiB for its largest snapshot of "
	      "%llu pages (%d bytes a page of a snapshot, and %d a page that "
	      "changes between snapshots, counted as they come), more than the "
	      "%llu MiB available: give --range or --sample=1/N",
	      (unsigned long long)(want * SERIES_PAGE_BYTES >> 20),
	      (unsigned long long)want, SERIES_PAGE_BYTES, SERIES_CHANGE_BYTES,
	      (unsigned long long)(budget >> 20));
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
	rsp.wake_seconds = rec->wake_seconds;
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
			      .thp = rec.thp, .nthp = rec.nthp, .out_id = NO_ID,
			      .delta = rec.delta };
	snaps_summarize(&c, &sr);
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
