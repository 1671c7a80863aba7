/* SPDX-License-Identifier: MIT */
#include <sys/mman.h>
#include <unistd.h>

#include "../util/page.h"
#include "maps.h"

/* Pages read back for comparisons, per thread: a small direct-mapped cache. */
#define RECENT 64
static _Thread_local struct recent {
	const struct maps *m;
	const unsigned char *p;
	unsigned char page[PAGE_BYTES];
} recent[RECENT];

void maps_init(struct maps *m)
{
	atomic_init(&m->n, 0);
}

int maps_add(struct maps *m, const unsigned char *base, size_t size, int fd,
	     uint64_t offset, int spool)
{
	size_t n = atomic_load_explicit(&m->n, memory_order_relaxed);

	if (n == MAPS_MAX)
		return -1;
	m->v[n] = (struct mapping){ base, size, fd, offset, spool };
	atomic_store_explicit(&m->n, n + 1, memory_order_release);
	return 0;
}

const struct mapping *maps_of(const struct maps *m, const unsigned char *p)
{
	size_t n = atomic_load_explicit(&m->n, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (p >= m->v[i].base && p < m->v[i].base + m->v[i].size)
			return &m->v[i];
	return NULL;
}

/* The cache line of @p. */
static struct recent *recent_of(const unsigned char *p)
{
	return &recent[((uintptr_t)p >> 12 ^ (uintptr_t)p) % RECENT];
}

const unsigned char *maps_recent(const struct maps *m, const unsigned char *p)
{
	struct recent *r = recent_of(p);

	return r->p == p && r->m == m ? r->page : NULL;
}

const unsigned char *maps_read(const struct maps *m, const struct mapping *mp,
			       const unsigned char *p)
{
	struct recent *r = recent_of(p);

	if (pread(mp->fd, r->page, PAGE_BYTES,
		  (off_t)(mp->offset + (uint64_t)(p - mp->base))) != PAGE_BYTES)
		return p;
	r->p = p;
	r->m = m;
	return r->page;
}

void maps_release(const struct maps *m, int spool)
{
	size_t n = atomic_load_explicit(&m->n, memory_order_acquire);
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++) {
		uintptr_t start = (uintptr_t)m->v[i].base & ~(pg - 1);
		uintptr_t end = (uintptr_t)m->v[i].base + m->v[i].size;

		if (!m->v[i].spool || spool)
			madvise((void *)start, end - start, MADV_DONTNEED);
	}
}
