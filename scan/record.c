/* SPDX-License-Identifier: MIT */
/*
 * --record=FILE (record.h): the file is the magic, a version and a zstd
 * frame holding the record's fields in a fixed order, as little-endian
 * numbers and LEB128 varints, each field a table of its own (zstd finds
 * more in columns). Contents are written in memcmp order, so that a
 * content's place is its id, its head costs the bytes past the prefix it
 * shares with the one before, and a page's content is a step from the page
 * before's; a page whose content did not change since the snapshot before
 * is a 0: a few bytes a page, under a tenth of one a page unchanged
 * (docs/over-time.md, "A record"). Read back, each snapshot is made a
 * delta as soon as it is read (series.delta): one is whole at a time.
 *
 * Reading trusts nothing: every count is checked against the bytes left
 * before anything is allocated for it, every id and address index against
 * its table, the order of contents against their heads, and the whole
 * against the memory there is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "../host/memory.h"
#include "../util/util.h"
#include "record.h"

#define RECORD_HEADER (RECORD_MAGIC_LEN + 4)
#define RECORD_LEVEL 9		/* zstd's: small files, a second a GiB */

/* ---- writing ---- */

struct out {
	unsigned char *b;
	size_t n, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2 + 4096;
		o->b = xreallocarray(o->b, o->cap, 1);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put_var(struct out *o, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	do {
		b[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	put(o, b, n);
}

static void put_f64(struct out *o, double d)
{
	put(o, &d, sizeof(d));	/* little-endian hosts alone (x86, arm64) */
}

static void put_str(struct out *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_var(o, n);
	put(o, s, n);
}

/* Memory order, for record_order()'s sort (one sort at a time). */
static const unsigned char *(*sort_bytes)(const void *, uint32_t);
static const void *sort_ctx;
static const uint64_t *sort_head;

static int by_bytes(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_head[x] != sort_head[y])
		return sort_head[x] < sort_head[y] ? -1 : 1;
	return memcmp(sort_bytes(sort_ctx, x), sort_bytes(sort_ctx, y), PAGE_BYTES);
}

/* The common prefix of two contents of the same head or not. */
static uint16_t prefix(const struct record *rec, uint32_t a, uint32_t b)
{
	const unsigned char *x = sort_bytes(sort_ctx, a), *y = sort_bytes(sort_ctx, b);
	size_t k = 0;
	uint64_t d = rec->head[a] ^ rec->head[b];

	if (d)
		return (uint16_t)(__builtin_clzll(d) / 8);
	for (k = 8; k < PAGE_BYTES && x[k] == y[k]; k++)
		;
	return (uint16_t)k;
}

void record_order(struct record *rec,
		  const unsigned char *(*bytes)(const void *ctx, uint32_t id),
		  const void *ctx)
{
	size_t n = rec->ncontents;
	uint32_t *ids = xcalloc(n + 1, sizeof(*ids));

	for (size_t i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	sort_bytes = bytes, sort_ctx = ctx, sort_head = rec->head;
	qsort(ids, n, sizeof(*ids), by_bytes);
	rec->rank = xcalloc(n + 1, sizeof(*rec->rank));
	rec->lcp = xcalloc(n + 1, sizeof(*rec->lcp));
	for (size_t i = 0; i < n; i++) {
		rec->rank[ids[i]] = (uint32_t)i;
		rec->lcp[i] = i + 1 < n ? prefix(rec, ids[i], ids[i + 1]) : 0;
	}
	free(ids);
}

/* The host's facts and the run's costs. */
static void put_host(struct out *o, const struct record *r)
{
	put_var(o, r->hz);
	put_var(o, r->cpus);
	put_var(o, r->mem_kb);
	put_str(o, r->kernel);
	put_var(o, sizeof(r->ksm));
	put(o, &r->ksm, sizeof(r->ksm));
	put_f64(o, r->interval);
	put_f64(o, r->page_seconds);
	put_f64(o, r->revisit_seconds);
	put_f64(o, r->merge_seconds);
	put_f64(o, r->wake_seconds);
	put_f64(o, r->ns_per_page);
	put_f64(o, r->ns_per_byte);
	put_f64(o, r->hash_seconds);
	put_var(o, r->hashed);
	put_var(o, r->nlate);
	for (size_t i = 0; i < r->nlate; i++)
		put_f64(o, r->late[i]);
	put_f64(o, r->ksmd_cpu);
	put_var(o, r->host_total_kb);
	put_var(o, r->host_used_kb);
	put_var(o, (uint64_t)(r->ksm_full_scans + 1));
}

/* Each content's id by its place (record_order()'s rank inverted). */
static uint32_t *by_place(const struct record *r)
{
	uint32_t *at = xcalloc(r->ncontents + 1, sizeof(*at));

	for (size_t id = 0; id < r->ncontents; id++)
		at[r->rank[id]] = (uint32_t)id;
	return at;
}

struct sum_at {
	uint32_t sum, place;
};

static int by_sum(const void *a, const void *b)
{
	const struct sum_at *x = a, *y = b;

	if (x->sum != y->sum)
		return x->sum < y->sum ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/*
 * KSM's checksums as the replay reads them, equal or not (to each other
 * and to 0, which a page's last checksum starts at): per place 0 for a
 * checksum of its own, 1 for 0, else 1 + how many places back the last
 * content of the same checksum is. Nearly all are 0, which costs nothing.
 */
static void put_sums(struct out *o, const struct record *r, const uint32_t *at)
{
	size_t n = r->ncontents;
	struct sum_at *s = xcalloc(n + 1, sizeof(*s));
	uint32_t *ref = xcalloc(n + 1, sizeof(*ref));

	for (size_t k = 0; k < n; k++)
		s[k] = (struct sum_at){ r->sum[at[k]], (uint32_t)k };
	qsort(s, n, sizeof(*s), by_sum);
	for (size_t k = 0; k < n; k++)
		if (!s[k].sum)
			ref[s[k].place] = 1;
		else if (k && s[k].sum == s[k - 1].sum)
			ref[s[k].place] = s[k].place - s[k - 1].place + 1;
	for (size_t k = 0; k < n; k++)
		put_var(o, ref[k]);
	free(s);
	free(ref);
}

/* Byte @j (0 first) of a head, whose order is memcmp's. */
static unsigned head_byte(uint64_t h, unsigned j)
{
	return (unsigned)(h >> (56 - 8 * j)) & 0xff;
}

/* How many of a head's bytes place @k shares with the one before. */
static unsigned shared(const uint16_t *lcp, size_t k)
{
	return !k ? 0 : lcp[k - 1] < 8 ? lcp[k - 1] : 8;
}

/*
 * The contents in memcmp order, their place their id: the common prefixes
 * with the next; then of each head that differs from the one before, how
 * much its first differing byte is above that one's, less one; then the
 * heads' bytes after that one (all 8 of the first); then the checksums.
 */
static void put_contents(struct out *o, const struct record *r, const uint32_t *at)
{
	size_t n = r->ncontents;

	put_var(o, n);
	for (size_t k = 0; k < n; k++)
		put_var(o, r->lcp[k]);
	for (size_t k = 1; k < n; k++) {
		unsigned p = shared(r->lcp, k);
		unsigned char c;

		if (p == 8)
			continue;	/* the same head */
		c = (unsigned char)(head_byte(r->head[at[k]], p) -
				    head_byte(r->head[at[k - 1]], p) - 1);
		put(o, &c, 1);
	}
	for (size_t k = 0; k < n; k++)
		for (unsigned j = k ? shared(r->lcp, k) + 1 : 0; j < 8; j++) {
			unsigned char c = (unsigned char)head_byte(r->head[at[k]], j);

			put(o, &c, 1);
		}
	put_sums(o, r, at);
	put_var(o, r->zero_id == NO_ID ? 0 : (uint64_t)r->rank[r->zero_id] + 1);
}

/* The bytes a page's content takes in the pages' tables (a byte plane
 * each): 0 and zigzagged steps of up to +-ncontents, plus one. */
static unsigned id_width(size_t ncontents)
{
	unsigned w = 1;

	while (w < 5 && ((uint64_t)2 * ncontents + 2) >> (8 * w))
		w++;
	return w;
}

/*
 * A snapshot's contents, a byte plane at a time (the low bytes of all,
 * then the next): 0 for the one the address had in the snapshot before,
 * else 1 + the step from the page before's place, zigzagged (neighbouring
 * pages often hold neighbouring contents).
 */
static void put_ids(struct out *o, const struct record *r, const struct snapshot *sn,
		    uint32_t *last)
{
	unsigned w = id_width(r->ncontents);
	uint64_t *v = xcalloc(sn->n + 1, sizeof(*v));
	int64_t before = 0;

	for (size_t i = 0; i < sn->n; i++) {
		uint32_t a = sn->addr_no[i], place = r->rank[sn->id[i]];
		int64_t step = (int64_t)place - before;

		v[i] = last[a] == place + 1 ? 0 :
		       1 + (step < 0 ? 2 * (uint64_t)-step - 1 : 2 * (uint64_t)step);
		last[a] = place + 1;
		before = place;
	}
	for (unsigned j = 0; j < w; j++)
		for (size_t i = 0; i < sn->n; i++) {
			unsigned char c = (unsigned char)(v[i] >> (8 * j));

			put(o, &c, 1);
		}
	free(v);
}

/*
 * A delta @sn (record.delta) as the snapshot in full, in @full: @now per
 * address its content + 1 (0: none), kept from one snapshot to the next.
 */
static const struct snapshot *undelta(const struct snapshot *sn, uint32_t *now,
				      size_t naddr, struct snapshot *full)
{
	size_t n = 0;

	for (size_t i = 0; i < sn->n; i++)
		now[sn->addr_no[i]] = sn->id[i] == NO_ID ? 0 : sn->id[i] + 1;
	full->addr_no = xreallocarray(full->addr_no, naddr + 1, sizeof(uint32_t));
	full->id = xreallocarray(full->id, naddr + 1, sizeof(uint32_t));
	for (size_t a = 0; a < naddr; a++)
		if (now[a]) {
			full->addr_no[n] = (uint32_t)a;
			full->id[n++] = now[a] - 1;
		}
	full->n = n;
	return full;
}

/*
 * The addresses as gaps in pages (most are 0: the next page), then per
 * snapshot its pages' address numbers as gaps, then their contents.
 */
static void put_pages(struct out *o, const struct record *r)
{
	uint32_t *last = xcalloc(r->naddr + 1, sizeof(*last));
	uint32_t *now = r->delta ? xcalloc(r->naddr + 1, sizeof(*now)) : NULL;
	struct snapshot full = { 0 };
	unsigned shift = 12;

	for (size_t i = 0; i < r->naddr; i++)
		if (r->addr[i] & (PAGE_BYTES - 1))
			shift = 0;	/* (files: any offset) */
	put_var(o, shift);
	put_var(o, r->naddr);
	for (size_t i = 0; i < r->naddr; i++)
		put_var(o, i ? ((r->addr[i] - r->addr[i - 1]) >> shift) - 1
			     : r->addr[0] >> shift);
	for (size_t s = 0; s < r->nsnaps; s++) {
		const struct snapshot *sn = &r->snaps[s];

		if (now)
			sn = undelta(sn, now, r->naddr, &full);
		put_f64(o, r->at[s]);
		put_var(o, sn->n);
		for (size_t i = 0; i < sn->n; i++)
			put_var(o, sn->addr_no[i] - (i ? sn->addr_no[i - 1] + 1 : 0));
		put_ids(o, r, sn, last);
	}
	free(last);
	free(now);
	free(full.addr_no);
	free(full.id);
}

/* The series row's figures and each snapshot's frames. */
static void put_row(struct out *o, const struct record *r)
{
	put_var(o, sizeof(struct figures));
	put(o, r->figs, r->nsnaps * sizeof(struct figures));
	put_str(o, r->format);
	put_var(o, (uint64_t)r->status);
	put_str(o, r->why);
	put_var(o, (uint64_t)r->has_proc);
	put_var(o, sizeof(r->proc));
	put(o, &r->proc, sizeof(r->proc));
	put_var(o, r->mergeable);
	put_var(o, (uint64_t)r->marks_read);
	for (size_t s = 0; s < r->nsnaps; s++) {
		const struct forked_snap *f = &r->frames[s];

		put_var(o, (uint64_t)f->framed);
		if (!f->framed)
			continue;
		put_var(o, f->pages), put_var(o, f->frames), put_var(o, f->forked);
		put_var(o, f->saving), put_var(o, f->freed);
		put_var(o, (uint64_t)f->estimate);
		for (size_t k = 0; k < r->nprocs; k++) {
			put_var(o, f->proc_frames[k]);
			put_var(o, f->proc_fork_shared[k]);
		}
	}
	for (size_t s = 0; s < r->nsnaps; s++)
		put_var(o, r->keep ? r->keep[s] : 0);
}

/* Each address's huge page: 0 for none, else its number + 1. */
static void put_thp(struct out *o, const struct record *r)
{
	put_var(o, r->thp ? r->nthp : 0);
	for (size_t a = 0; r->thp && a < r->naddr; a++)
		put_var(o, r->thp[a] == NO_ID ? 0 : (uint64_t)r->thp[a] + 1);
}

/* The whole record, uncompressed. */
static void put_record(struct out *o, const struct record *r)
{
	uint32_t *at = by_place(r);

	put_var(o, r->nprocs);
	put_var(o, r->nsnaps);
	for (size_t i = 0; i < r->nprocs * r->nsnaps; i++) {
		put_str(o, r->names[i]);
		put_var(o, (uint64_t)r->pids[i]);
	}
	for (size_t k = 0; k < r->nprocs; k++) {
		put_f64(o, r->start[k]);
		put_str(o, r->command[k]);
	}
	put_host(o, r);
	put_contents(o, r, at);
	put_pages(o, r);
	put_row(o, r);
	put_thp(o, r);
	free(at);
}

int record_write(const struct record *rec, const char *path)
{
	struct out o = { 0 };
	unsigned char head[RECORD_HEADER] = RECORD_MAGIC;
	size_t bound, n;
	unsigned char *z;
	FILE *f;
	int ok;

	put_record(&o, rec);
	head[RECORD_MAGIC_LEN] = RECORD_VERSION;
	head[RECORD_MAGIC_LEN + 1] = rec->live ? 1 : 2;
	bound = ZSTD_compressBound(o.n);
	z = xmalloc(bound);
	n = ZSTD_compress(z, bound, o.b, o.n, RECORD_LEVEL);
	free(o.b);
	if (ZSTD_isError(n)) {
		error("%s: cannot compress the record: %s", path, ZSTD_getErrorName(n));
		free(z);
		return -1;
	}
	f = fopen(path, "wb");
	ok = f && fwrite(head, 1, sizeof(head), f) == sizeof(head) &&
	     fwrite(z, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok)
		error("%s: cannot write the record: %s", path, strerror(errno));
	free(z);
	return ok ? 0 : -1;
}

/* ---- reading ---- */

struct in {
	const unsigned char *b;
	size_t n, at;
	const char *bad;		/* what was wrong, or NULL */
	size_t bad_at;
};

static int fail(struct in *i, const char *what)
{
	if (!i->bad) {
		i->bad = what;
		i->bad_at = i->at;
	}
	i->at = i->n;	/* nothing more is read */
	return -1;
}

static void get(struct in *i, void *p, size_t n)
{
	if (i->n - i->at < n) {
		fail(i, "truncated");
		memset(p, 0, n);
		return;
	}
	memcpy(p, i->b + i->at, n);
	i->at += n;
}

static uint64_t get_var(struct in *i)
{
	uint64_t v = 0;

	for (unsigned s = 0; s < 64; s += 7) {
		unsigned char c;

		get(i, &c, 1);
		if (i->bad)
			return 0;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return v;
	}
	fail(i, "a number too long");
	return 0;
}

/* A count of things of at least @each bytes, which the bytes left can hold. */
static size_t get_count(struct in *i, size_t each, const char *what)
{
	uint64_t v = get_var(i);

	if (v > (i->n - i->at) / (each ? each : 1)) {
		fail(i, what);
		return 0;
	}
	return (size_t)v;
}

static double get_f64(struct in *i)
{
	double d;

	get(i, &d, sizeof(d));
	return d;
}

/* A string into @dst of @len bytes, or newly allocated with @len 0. */
static char *get_str(struct in *i, char *dst, size_t len)
{
	size_t n = get_count(i, 1, "a string longer than the file");

	if (len && n >= len)
		fail(i, "a string too long");
	if (i->bad)
		n = 0;
	if (!dst)
		dst = xmalloc(n + 1);
	get(i, dst, n);
	dst[i->bad ? 0 : n] = 0;
	for (size_t k = 0; k < n; k++)
		if (!dst[k])
			fail(i, "a string with a NUL byte");
	return dst;
}

/* A raw struct whose size the file states (a record of this build). */
static void get_raw(struct in *i, void *p, size_t size)
{
	if (get_var(i) != size)
		fail(i, "written by another build of ksmscan (a struct's size)");
	get(i, p, size);
}

static int finite_nonneg(double d)
{
	return d >= 0 && d < 1e300;
}

static void get_host(struct in *i, struct record *r)
{
	r->hz = (unsigned)get_var(i);
	r->cpus = (unsigned)get_var(i);
	r->mem_kb = get_var(i);
	get_str(i, r->kernel, sizeof(r->kernel));
	get_raw(i, &r->ksm, sizeof(r->ksm));
	r->interval = get_f64(i);
	r->page_seconds = get_f64(i);
	r->revisit_seconds = get_f64(i);
	r->merge_seconds = get_f64(i);
	r->wake_seconds = get_f64(i);
	r->ns_per_page = get_f64(i);
	r->ns_per_byte = get_f64(i);
	r->hash_seconds = get_f64(i);
	r->hashed = get_var(i);
	r->nlate = (size_t)get_var(i);
	if (r->nlate > sizeof(r->late) / sizeof(r->late[0]))
		fail(i, "too many lateness samples");
	for (size_t k = 0; k < r->nlate && !i->bad; k++)
		if (!((r->late[k] = get_f64(i)) > -1e6 && r->late[k] < 1e6))
			fail(i, "a lateness sample out of range");
	r->ksmd_cpu = get_f64(i);
	r->host_total_kb = get_var(i);
	r->host_used_kb = get_var(i);
	r->ksm_full_scans = (int64_t)get_var(i) - 1;
	/* the options' ranges, and what a live host measures */
	if (r->hz > 100000 || !(r->interval > 0 && r->interval < 1e9) ||
	    !(r->page_seconds <= 1) || !(r->revisit_seconds <= 1) ||
	    !(r->merge_seconds <= 1) || !(r->wake_seconds <= 1) ||
	    !finite_nonneg(r->wake_seconds) || !(r->ns_per_page <= 1e9) ||
	    !(r->ns_per_byte <= 1e6) || !(r->ksmd_cpu <= 1e12) ||
	    !finite_nonneg(r->page_seconds) || !finite_nonneg(r->revisit_seconds) ||
	    !finite_nonneg(r->merge_seconds) || !finite_nonneg(r->ns_per_page) ||
	    !finite_nonneg(r->ns_per_byte) || !finite_nonneg(r->ksmd_cpu) ||
	    r->host_used_kb > r->host_total_kb || !r->ksm.sleep_ms ||
	    !r->ksm.pages_to_scan || r->ksm.max_page_sharing < 2)
		fail(i, "a host fact out of range");
}

/* The checksums' equalities (put_sums()): a checksum of its own is its
 * place + 1, which no other has and is never 0. */
static void get_sums(struct in *i, struct record *r)
{
	for (size_t k = 0; k < r->ncontents && !i->bad; k++) {
		uint64_t v = get_var(i);

		if (v > k + 1)
			fail(i, "a checksum's content out of range");
		else
			r->sum[k] = !v ? (uint32_t)k + 1 : v == 1 ? 0 :
				    r->sum[k - (v - 1)];
	}
}

/* The heads (put_contents()): each the one before's up to their common
 * prefix, then greater (or equal from 8 bytes on), so that the order is a
 * total one, as memcmp's is. */
static void get_heads(struct in *i, struct record *r)
{
	size_t n = r->ncontents;
	unsigned char *up = xcalloc(n + 1, 1);

	for (size_t k = 1; k < n && !i->bad; k++)
		if (shared(r->lcp, k) < 8)
			get(i, &up[k], 1);
	for (size_t k = 0; k < n && !i->bad; k++) {
		unsigned p = shared(r->lcp, k), c;
		uint64_t h = p ? r->head[k - 1] & ~0ULL << (64 - 8 * p) : 0;

		if (k && p < 8) {
			if ((c = head_byte(r->head[k - 1], p) + 1 + up[k]) > 0xff)
				fail(i, "contents out of order");
			h |= (uint64_t)(c & 0xff) << (56 - 8 * p);
		}
		for (unsigned j = k ? p + 1 : 0; j < 8; j++) {
			unsigned char b;

			get(i, &b, 1);
			h |= (uint64_t)b << (56 - 8 * j);
		}
		r->head[k] = h;
	}
	free(up);
}

/* The contents (put_contents()), their ids their places. */
static void get_contents(struct in *i, struct record *r)
{
	size_t n = r->ncontents = get_count(i, 2, "more contents than the file holds");

	if (n >= NO_ID)
		fail(i, "more contents than ids");
	n = r->ncontents = i->bad ? 0 : n;
	r->sum = xcalloc(n + 1, sizeof(*r->sum));
	r->head = xcalloc(n + 1, sizeof(*r->head));
	r->lcp = xcalloc(n + 1, sizeof(*r->lcp));
	for (size_t k = 0; k < n; k++)
		if ((r->lcp[k] = (uint16_t)get_var(i)) >= PAGE_BYTES ||
		    (k + 1 == n && r->lcp[k]))
			fail(i, "a common prefix out of range");
	get_heads(i, r);
	get_sums(i, r);
	r->zero_id = (uint32_t)get_var(i) - 1;
	if (r->zero_id != NO_ID && r->zero_id >= n)
		fail(i, "the zero page's content out of range");
	r->zero_sum = r->zero_id == NO_ID || i->bad ? 0 : r->sum[r->zero_id];
}

/* The least common prefix over 2^k places, for record_compare(). */
static void build_rmq(struct record *r)
{
	size_t n = r->ncontents;

	for (r->levels = 1; ((size_t)1 << r->levels) < n; r->levels++)
		;
	r->rmq = xcalloc((size_t)r->levels * (n + 1), sizeof(*r->rmq));
	memcpy(r->rmq, r->lcp, n * sizeof(*r->lcp));
	for (unsigned l = 1; l < r->levels; l++)
		for (size_t k = 0; k + ((size_t)1 << l) <= n; k++) {
			uint16_t a = r->rmq[(l - 1) * (n + 1) + k];
			uint16_t b = r->rmq[(l - 1) * (n + 1) + k + ((size_t)1 << (l - 1))];

			r->rmq[l * (n + 1) + k] = a < b ? a : b;
		}
}

int record_compare(const void *ctx, uint32_t a, uint32_t b, size_t *common)
{
	const struct record *r = ctx;
	uint32_t x = a, y = b;		/* a read record's ids are places */
	size_t lo = x < y ? x : y, hi = x < y ? y : x, n = r->ncontents + 1;
	unsigned l = 0;
	uint16_t m, m2;

	if (a == b) {
		*common = PAGE_BYTES;
		return 0;
	}
	/* the least lcp over places lo .. hi-1, two overlapping spans */
	while (((size_t)2 << l) <= hi - lo)
		l++;
	m = r->rmq[l * n + lo];
	m2 = r->rmq[l * n + hi - ((size_t)1 << l)];
	*common = m < m2 ? m : m2;
	return x < y ? -1 : 1;
}

/* The addresses (put_pages()), ascending. */
static void get_addresses(struct in *i, struct record *r)
{
	unsigned shift = (unsigned)get_var(i);

	if (shift != 0 && shift != 12)
		fail(i, "an address unit out of range");
	r->naddr = get_count(i, 1, "more addresses than the file holds");
	if (r->naddr >= NO_ID)
		fail(i, "more addresses than numbers");
	r->addr = xcalloc(i->bad ? 1 : r->naddr + 1, sizeof(*r->addr));
	for (size_t k = 0; k < r->naddr && !i->bad; k++) {
		uint64_t d = get_var(i) + (k ? 1 : 0), prev = k ? r->addr[k - 1] : 0;

		if (d > (UINT64_MAX - prev) >> shift || (k && !d))
			fail(i, "addresses out of order");
		r->addr[k] = prev + (d << shift);
	}
}

/* Snapshot @sn's @n contents (put_ids()), each in the table. */
static void get_ids(struct in *i, struct record *r, struct snapshot *sn, size_t n,
		    uint32_t *last)
{
	unsigned w = id_width(r->ncontents);
	unsigned char *b = xcalloc(i->bad || n > (i->n - i->at) / w ? 1 : n * w, 1);
	int64_t before = 0;

	if (n > (i->n - i->at) / w)
		fail(i, "more pages than the file holds");
	get(i, b, i->bad ? 0 : n * w);
	for (size_t k = 0; k < n && !i->bad; k++) {
		uint64_t v = 0;
		uint32_t at = sn->addr_no[k];
		int64_t place;

		for (unsigned j = 0; j < w; j++)
			v |= (uint64_t)b[j * n + k] << (8 * j);
		place = !v ? (int64_t)last[at] - 1 :
			before + (v & 1 ? (int64_t)((v - 1) / 2) : -(int64_t)(v / 2));
		if (place < 0 || place >= (int64_t)r->ncontents)
			fail(i, "a page's content out of range");
		else {
			last[at] = (uint32_t)place + 1;
			sn->id[k] = (uint32_t)place;
			sn->n = k + 1;
			before = place;
		}
	}
	free(b);
}

/*
 * Snapshot @s's pages: address numbers ascending, contents in the table;
 * kept as a delta against the one before (@cur, per address its content
 * there), so that a record read back holds what changes, not every
 * snapshot in full.
 */
static void get_snapshot(struct in *i, struct record *r, size_t s, uint32_t *last,
			 uint32_t *cur)
{
	struct snapshot *sn = &r->snaps[s];
	size_t n, a = 0;

	r->at[s] = get_f64(i);
	n = get_count(i, 2, "more pages than the file holds");
	if (!(r->at[s] >= (s ? r->at[s - 1] : 0) && r->at[s] < 1e9) ||
	    (s == 0 && r->at[s] != 0))
		fail(i, "snapshot times out of order");
	n = i->bad ? 0 : n;
	sn->addr_no = xcalloc(n + 1, sizeof(uint32_t));
	sn->id = xcalloc(n + 1, sizeof(uint32_t));
	for (size_t k = 0; k < n && !i->bad; k++) {
		uint64_t d = get_var(i);

		a += (size_t)(d > r->naddr ? r->naddr : d);
		if (a >= r->naddr)
			fail(i, "a page's address out of range");
		sn->addr_no[k] = (uint32_t)a++;
	}
	get_ids(i, r, sn, n, last);
	if (!i->bad)
		snapshot_delta(sn, cur, r->naddr);
}

/* The addresses, then each snapshot's pages (deltas: record.delta). */
static void get_pages(struct in *i, struct record *r)
{
	uint32_t *last, *cur;

	get_addresses(i, r);
	last = xcalloc(r->naddr + 1, sizeof(*last));
	cur = xmalloc((r->naddr + 1) * sizeof(*cur));
	memset(cur, 0xff, (r->naddr + 1) * sizeof(*cur));	/* NO_ID: none */
	for (size_t s = 0; s < r->nsnaps && !i->bad; s++)
		get_snapshot(i, r, s, last, cur);
	r->delta = 1;
	free(last);
	free(cur);
}

/* The series row's figures, and each snapshot's frames. */
static void get_row(struct in *i, struct record *r)
{
	if (get_var(i) != sizeof(struct figures) ||
	    r->nsnaps > (i->n - i->at) / sizeof(struct figures))
		fail(i, "written by another build of ksmscan (its figures)");
	r->figs = xcalloc(i->bad ? 1 : r->nsnaps, sizeof(*r->figs));
	get(i, r->figs, i->bad ? 0 : r->nsnaps * sizeof(*r->figs));
	get_str(i, r->format, sizeof(r->format));
	if ((r->status = (int)get_var(i)) > 2)
		fail(i, "a status out of range");
	get_str(i, r->why, sizeof(r->why));
	r->has_proc = get_var(i) != 0;
	get_raw(i, &r->proc, sizeof(r->proc));
	r->proc.command[sizeof(r->proc.command) - 1] = 0;
	r->mergeable = get_var(i);
	r->marks_read = get_var(i) != 0;
	r->frames = xcalloc(r->nsnaps + 1, sizeof(*r->frames));
	for (size_t s = 0; s < r->nsnaps && !i->bad; s++) {
		struct forked_snap *f = &r->frames[s];

		if (!(f->framed = get_var(i) != 0))
			continue;
		f->pages = get_var(i), f->frames = get_var(i);
		f->forked = get_var(i), f->saving = get_var(i);
		f->freed = get_var(i);
		f->estimate = get_var(i) != 0;
		if (r->nprocs > (i->n - i->at) / 2)
			fail(i, "truncated");
		f->proc_frames = xcalloc(r->nprocs, sizeof(uint64_t));
		f->proc_fork_shared = xcalloc(r->nprocs, sizeof(uint64_t));
		for (size_t k = 0; k < r->nprocs; k++) {
			f->proc_frames[k] = get_var(i);
			f->proc_fork_shared[k] = get_var(i);
		}
	}
	r->keep = xcalloc(r->nsnaps + 1, sizeof(*r->keep));
	for (size_t s = 0; s < r->nsnaps && !i->bad; s++)
		r->keep[s] = get_var(i);
}

/*
 * Each address's huge page, as the replay takes them: numbered in address
 * order, a huge page's addresses consecutive and at most 512 (2 MiB).
 */
static void get_thp(struct in *i, struct record *r)
{
	size_t run = 0;
	uint64_t last = 0, top = 0;	/* the address before's; the highest */

	r->nthp = get_count(i, 1, "more huge pages than the file holds");
	if (!r->nthp || i->bad)
		return;
	r->thp = xcalloc(r->naddr + 1, sizeof(*r->thp));
	for (size_t a = 0; a < r->naddr && !i->bad; a++) {
		uint64_t v = get_var(i);

		run = v && v == last ? run + 1 : 1;
		if (v > r->nthp || (v && v != last && v != top + 1) || run > 512)
			fail(i, "huge pages out of order");
		r->thp[a] = v ? (uint32_t)(v - 1) : NO_ID;
		top = v > top ? v : top;
		last = v;
	}
}

/* The whole record from its uncompressed bytes. */
static void get_record(struct in *i, struct record *r)
{
	size_t ninputs;

	r->nprocs = (size_t)get_var(i);
	if (r->nprocs < 1 || r->nprocs > 64)
		fail(i, "a number of processes out of range");
	r->nsnaps = get_count(i, 9 * r->nprocs, "more snapshots than the file holds");
	if (!r->nsnaps)
		fail(i, "no snapshot");
	ninputs = i->bad ? 0 : r->nprocs * r->nsnaps;
	r->names = xcalloc(ninputs + 1, sizeof(*r->names));
	r->pids = xcalloc(ninputs + 1, sizeof(*r->pids));
	for (size_t k = 0; k < ninputs && !i->bad; k++) {
		r->names[k] = get_str(i, NULL, 0);
		if ((r->pids[k] = (int)get_var(i)) < 0)
			fail(i, "a pid out of range");
	}
	for (size_t k = 0; k < r->nprocs && !i->bad; k++) {
		r->start[k] = get_f64(i);
		get_str(i, r->command[k], sizeof(r->command[k]));
	}
	get_host(i, r);
	get_contents(i, r);
	if (!i->bad)
		build_rmq(r);
	r->snaps = xcalloc(r->nsnaps + 1, sizeof(*r->snaps));
	r->at = xcalloc(r->nsnaps + 1, sizeof(*r->at));
	get_pages(i, r);
	get_row(i, r);
	get_thp(i, r);
	if (!i->bad && i->at != i->n)
		fail(i, "bytes after the record's end");
}

int record_is(const char *path)
{
	unsigned char head[RECORD_HEADER];
	struct stat st;
	FILE *f;
	size_t n;

	/* a FIFO or a device is never opened here: it could block, or be read
	 * once only (detection refuses it later, with its reason) */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	f = fopen(path, "rb");
	n = f ? fread(head, 1, sizeof(head), f) : 0;

	if (f)
		fclose(f);
	if (n < RECORD_MAGIC_LEN || memcmp(head, RECORD_MAGIC, RECORD_MAGIC_LEN))
		return 0;
	return n == sizeof(head) && head[RECORD_MAGIC_LEN + 1] == 1 ? 1 : 2;
}

/* The file's compressed bytes, uncompressed into @out, at most @cap. */
static int inflate(const unsigned char *z, size_t n, struct out *out,
		   uint64_t cap, char *why, size_t len)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	ZSTD_inBuffer in = { z, n, 0 };
	size_t r = 1;

	while (r && in.pos < in.size) {
		ZSTD_outBuffer o;

		if (out->cap - out->n < 65536) {
			if (out->cap > cap) {
				snprintf(why, len, "more data than the memory there is, "
					 "at offset %zu", RECORD_HEADER + in.pos);
				break;
			}
			out->cap = out->cap * 2 + 65536;
			out->b = xreallocarray(out->b, out->cap, 1);
		}
		o = (ZSTD_outBuffer){ out->b + out->n, out->cap - out->n, 0 };
		r = ZSTD_decompressStream(ds, &o, &in);
		out->n += o.pos;
		if (ZSTD_isError(r))
			snprintf(why, len, "corrupt (%s), at offset %zu",
				 ZSTD_getErrorName(r), RECORD_HEADER + in.pos);
		if (ZSTD_isError(r))
			break;
	}
	if (!ZSTD_isError(r) && !*why && (r || in.pos < in.size))
		snprintf(why, len, "%s, at offset %zu", r ? "truncated" :
			 "bytes after the compressed data", RECORD_HEADER + in.pos);
	ZSTD_freeDStream(ds);
	return *why ? -1 : 0;
}

/* The whole file, at most its size (checked as it is read). */
static unsigned char *slurp(const char *path, size_t *n, char *why, size_t len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	unsigned char *b;

	if (!f || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "cannot read: %s", f ? "not a regular file" :
			 strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	b = xmalloc((size_t)st.st_size + 1);
	*n = fread(b, 1, (size_t)st.st_size, f);
	fclose(f);
	return b;
}

int record_read(const char *path, struct record *rec, char *why, size_t len)
{
	size_t n = 0;
	unsigned char *file = slurp(path, &n, why, len);
	struct out body = { 0 };
	struct in i;

	memset(rec, 0, sizeof(*rec));
	*why = 0;
	if (!file)
		return -1;
	if (n < RECORD_MAGIC_LEN || memcmp(file, RECORD_MAGIC, RECORD_MAGIC_LEN))
		snprintf(why, len, "not a record, at offset 0");
	else if (n < RECORD_HEADER)
		snprintf(why, len, "truncated, at offset %zu", n);
	else if (file[RECORD_MAGIC_LEN] != RECORD_VERSION)
		snprintf(why, len, "a record of version %u (this ksmscan reads %u), "
			 "at offset %d", file[RECORD_MAGIC_LEN], RECORD_VERSION,
			 RECORD_MAGIC_LEN);
	else
		inflate(file + RECORD_HEADER, n - RECORD_HEADER, &body,
			mem_available() / 2, why, len);
	rec->live = n > RECORD_MAGIC_LEN + 1 && file[RECORD_MAGIC_LEN + 1] == 1;
	free(file);
	if (*why) {
		free(body.b);
		return -1;
	}
	i = (struct in){ body.b, body.n, 0, NULL, 0 };
	get_record(&i, rec);
	free(body.b);
	if (i.bad)
		snprintf(why, len, "%s, at offset %zu of its uncompressed data",
			 i.bad, i.bad_at);
	return i.bad ? -1 : 0;
}

void record_free(struct record *r)
{
	for (size_t k = 0; r->names && k < r->nprocs * r->nsnaps; k++)
		free(r->names[k]);
	for (size_t s = 0; r->snaps && s < r->nsnaps; s++) {
		free(r->snaps[s].addr_no);
		free(r->snaps[s].id);
	}
	for (size_t s = 0; r->frames && s < r->nsnaps; s++) {
		free(r->frames[s].proc_frames);
		free(r->frames[s].proc_fork_shared);
	}
	free(r->names), free(r->pids), free(r->addr), free(r->snaps);
	free(r->at), free(r->sum), free(r->head);
	free(r->rank), free(r->lcp), free(r->rmq), free(r->figs), free(r->frames);
	free(r->keep), free(r->thp);
	memset(r, 0, sizeof(*r));
}
