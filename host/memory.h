/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_MEMORY_H
#define KSMSCAN_HOST_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The host's memory and where a process's pages sit (memory.c). */

/**
 * mem_available() - the memory this machine can give a new task without
 * swapping: MemAvailable of /proc/meminfo, in bytes (UINT64_MAX when it
 * does not say). $KSMSCAN_MEM_AVAILABLE, in bytes, stands in for it (tests).
 */
uint64_t mem_available(void);

/**
 * host_meminfo() - this host's memory as ksmtuned reads it from
 * /proc/meminfo, in kB.
 * @total_kb: set to MemTotal
 * @free_kb: set to MemFree + Buffers + Cached
 *
 * Return: 0, or -1 if /proc/meminfo cannot be read.
 */
int host_meminfo(uint64_t *total_kb, uint64_t *free_kb);

/**
 * numa_host_nodes() - how many NUMA nodes this host has online
 * (/sys/devices/system/node/online); 1 if that cannot be read. With
 * KSMSCAN_TEST_NODES=N in the environment (for tests only) it is N.
 */
int numa_host_nodes(void);

/**
 * proc_page_nodes() - the NUMA node of each page of a process, from
 * move_pages(2) with no target nodes, which moves nothing and answers
 * where each page is. With KSMSCAN_TEST_NODES=N (for tests only) the
 * answer is (address / 4096) % N instead, a fake N-node host.
 * @pid: the process
 * @addrs: the pages' addresses
 * @n: how many
 * @nodes: set to each page's node, or -1 (not present, or no answer)
 *
 * Return: 0, or -1 (errno set) if the kernel refused the query.
 */
int proc_page_nodes(int pid, const uint64_t *addrs, size_t n, int *nodes);

/**
 * proc_page_thp() - whether each page of a process is part of a
 * transparent huge page: its frame from /proc/PID/pagemap, then the
 * frame's KPF_THP bit in /proc/kpageflags, which only root may read
 * (others see no frame numbers).
 * @pid: the process
 * @addrs: the pages' addresses, ascending runs preferred
 * @n: how many
 * @thp: set to 1 for a page in a transparent huge page, else 0
 *
 * Return: 0, or -1 with errno (EACCES or EPERM: not root).
 */
int proc_page_thp(int pid, const uint64_t *addrs, size_t n, unsigned char *thp);

/*
 * A live page's frame word (page_range.frames, host_frames_ksm()): its
 * /proc/PID/pagemap entry as the kernel gives it for a present page, with
 * FRAME_KSM set when the frame is a KSM page already. The frame number
 * reads 0 without CAP_SYS_ADMIN; the exclusive bit is given to everyone.
 */
#define FRAME_PFN_MASK ((UINT64_C(1) << 55) - 1)
#define FRAME_EXCLUSIVE (UINT64_C(1) << 56)	/* mapped by this process only */
#define FRAME_KSM (UINT64_C(1) << 62)	/* pagemap's "swapped" bit, never
					 * set for a present page: ours */
#define FRAME_THP (UINT64_C(1) << 59)	/* always 0 in pagemap: ours */

/**
 * host_frames_flags() - mark the frames that are KSM pages already
 * (KPF_KSM in /proc/kpageflags, which only root may read), and those
 * that are part of a transparent huge page (KPF_THP).
 * @kpf: /proc/kpageflags open, or -1: it is opened (and kept in *@kpf)
 * @frames: frame words; FRAME_KSM is set in those whose frame is a KSM
 *	page, FRAME_THP in those in a transparent huge page
 * @n: how many
 *
 * Return: 0, or -1 (errno set) if kpageflags cannot be read.
 */
int host_frames_flags(int *kpf, uint64_t *frames, size_t n);

/*
 * The kernel's zero pages, as /proc/kpageflags marks them (KPF_ZERO_PAGE,
 * root only): the 4 KiB zero page and the huge zero page's frames (one
 * folio of 512, aligned to its size). A page that maps one of them was
 * only read: no memory of its own, and no page ksmd visits.
 */
struct zero_frames {
	uint64_t pfn;		/* the zero page's frame, 0 until seen */
	uint64_t huge;		/* the huge zero page's first frame, 0 until seen */
	int unreadable;		/* kpageflags cannot be read: none is looked for */
};

#define HUGE_ZERO_FRAMES 512	/* a PMD's 4 KiB pages (x86-64, arm64 4K) */

/**
 * zero_frames_has() - whether frame @pfn is a zero page already seen.
 * @z: the zero pages seen
 * @pfn: a frame number (0: unknown, never one)
 */
static inline int zero_frames_has(const struct zero_frames *z, uint64_t pfn)
{
	return pfn && (pfn == z->pfn ||
		       (z->huge && pfn - z->huge < HUGE_ZERO_FRAMES));
}

/**
 * host_zero_frame() - whether frame @pfn is one of the kernel's zero pages,
 * from kpageflags; a zero page found is kept in @z, so that the next of its
 * mappings is known without a read (zero_frames_has()).
 * @kpf: /proc/kpageflags open, or -1: it is opened (and kept in *@kpf)
 * @z: the zero pages seen so far
 * @pfn: the frame (0: unknown, never one)
 *
 * Return: 1 if it is, 0 if not or if kpageflags cannot be read (not root).
 */
int host_zero_frame(int *kpf, struct zero_frames *z, uint64_t pfn);

/**
 * pagemap_next_present() - the first present page of an address range, found
 * by the kernel's PAGEMAP_SCAN ioctl (Linux 6.7 and later), which walks the
 * page tables and skips what has none: a range with nothing resident costs
 * no read per page.
 * @pagemap: a process's /proc/PID/pagemap, open
 * @start: the range's first address (page-aligned)
 * @end: the address after it
 * @found: set to the first present page's address, or @end if none
 *
 * Return: 0, or -1 when the kernel has no PAGEMAP_SCAN (or refuses it): the
 * caller then reads pagemap entry by entry.
 */
int pagemap_next_present(int pagemap, uint64_t start, uint64_t end,
			 uint64_t *found);

#endif
