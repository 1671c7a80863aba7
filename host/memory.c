/* SPDX-License-Identifier: MIT */
/*
 * The host's memory (memory.h): /proc/meminfo, its NUMA nodes, and where a
 * process's pages sit (their node, their frame in a transparent huge page,
 * the zero page's frame).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/page.h"
#include "../util/util.h"
#include "host.h"
#include "memory.h"

/* pagemap: bit 63 present, bits 0-54 the frame (zero unless root). */
#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)
/* /proc/kpageflags: the page is part of a transparent huge page. */
#define KPF_THP (UINT64_C(1) << 22)
#define KPF_KSM (UINT64_C(1) << 21)
#define KPF_COMPOUND_HEAD (UINT64_C(1) << 15)
#define KPF_COMPOUND_TAIL (UINT64_C(1) << 16)
#define KPF_ZERO_PAGE (UINT64_C(1) << 24)	/* the zero page or huge zero page */
/* Pages per move_pages() query. */
#define NODE_BATCH 1024

/*
 * The values of @n keys of /proc/meminfo, in kB (0 for a key it lacks).
 * Return: a bit per key found, or -1 if the file cannot be read.
 */
static int meminfo_kb(const char *const *keys, unsigned long long *kb, size_t n)
{
	char line[256], key[64];
	unsigned long long v;
	int found = 0;
	FILE *f = host_fopen("/proc/meminfo");

	if (!f)
		return -1;
	memset(kb, 0, n * sizeof(*kb));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %llu", key, &v) != 2)
			continue;
		for (size_t k = 0; k < n; k++)
			if (strcmp(key, keys[k]) == 0) {
				kb[k] = v;
				found |= 1 << k;
			}
	}
	fclose(f);
	return found;
}

uint64_t mem_available(void)
{
	static const char *const keys[] = { "MemAvailable" };
	const char *env = getenv("KSMSCAN_MEM_AVAILABLE");
	unsigned long long kb;

	if (env && *env)
		return strtoull(env, NULL, 0);
	if (meminfo_kb(keys, &kb, 1) != 1)
		return UINT64_MAX;	/* it does not say */
	return (uint64_t)kb * 1024;
}

int host_meminfo(uint64_t *total_kb, uint64_t *free_kb)
{
	/* ksmtuned's free memory: MemFree + Buffers + Cached. */
	static const char *const keys[] = { "MemTotal", "MemFree", "Buffers", "Cached" };
	unsigned long long kb[4];
	int found = meminfo_kb(keys, kb, 4);

	if (found < 0 || !(found & 1))
		return -1;
	*total_kb = kb[0];
	*free_kb = kb[1] + kb[2] + kb[3];
	return 0;
}

/* KSMSCAN_TEST_NODES: a fake host of that many nodes (tests only); 0 unset. */
static int test_nodes(void)
{
	const char *v = getenv("KSMSCAN_TEST_NODES");
	int n = v ? atoi(v) : 0;

	return n > 0 && n <= 1024 ? n : 0;
}

int numa_host_nodes(void)
{
	char buf[256];
	int nodes = 0, a, b, used;
	FILE *f;

	if (test_nodes())
		return test_nodes();
	f = host_fopen("/sys/devices/system/node/online");
	if (!f)
		return 1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	/* A list of ranges: "0", "0-3", "0,2-3". */
	for (const char *p = buf; sscanf(p, "%d%n", &a, &used) == 1; ) {
		p += used;
		b = a;
		if (*p == '-' && sscanf(p + 1, "%d%n", &b, &used) == 1)
			p += 1 + used;
		nodes += b >= a ? b - a + 1 : 1;
		if (*p != ',')
			break;
		p++;
	}
	return nodes ? nodes : 1;
}

int proc_page_nodes(int pid, const uint64_t *addrs, size_t n, int *nodes)
{
	void *pages[NODE_BATCH];
	int fake = test_nodes();

	for (size_t i = 0; i < n; i += NODE_BATCH) {
		size_t m = n - i < NODE_BATCH ? n - i : NODE_BATCH;

		if (fake) {
			for (size_t j = 0; j < m; j++)
				nodes[i + j] = (int)(addrs[i + j] / 4096 % (uint64_t)fake);
			continue;
		}
		for (size_t j = 0; j < m; j++)
			pages[j] = (void *)(uintptr_t)addrs[i + j];
		/* No target nodes: a query; each status is a node or -errno. */
		if (syscall(SYS_move_pages, pid, (unsigned long)m, pages, NULL,
			    nodes + i, 0) < 0)
			return -1;
		for (size_t j = 0; j < m; j++)
			if (nodes[i + j] < 0)
				nodes[i + j] = -1;
	}
	return 0;
}

/* Whether frame @pfn is in a transparent huge page; -1 on a read error. */
static int pfn_thp(int kpf, uint64_t pfn)
{
	uint64_t flags;

	if (pread(kpf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
	    (ssize_t)sizeof(flags))
		return -1;
	return (flags & KPF_THP) != 0;
}

int proc_page_thp(int pid, const uint64_t *addrs, size_t n, unsigned char *thp)
{
	uint64_t pm[512];
	int fd, kpf = host_open("/proc/kpageflags");

	if (kpf < 0)
		return -1;
	fd = host_open("/proc/%d/pagemap", pid);
	if (fd < 0) {
		close(kpf);
		return -1;
	}
	for (size_t i = 0; i < n; ) {
		size_t run = 1;

		/* One read for a run of consecutive pages. */
		while (i + run < n && run < 512 && addrs[i + run] == addrs[i] + run * 4096)
			run++;
		if (pread(fd, pm, run * sizeof(*pm), (off_t)(addrs[i] / 4096 * 8)) !=
		    (ssize_t)(run * sizeof(*pm)))
			memset(pm, 0, sizeof(pm));
		for (size_t j = 0; j < run; j++)
			thp[i + j] = (pm[j] & PM_PRESENT) && (pm[j] & PM_PFN_MASK) &&
				     pfn_thp(kpf, pm[j] & PM_PFN_MASK) == 1;
		i += run;
	}
	close(fd);
	close(kpf);
	return 0;
}

int host_frames_flags(int *kpf, uint64_t *frames, size_t n)
{
	if (*kpf < 0 && (*kpf = host_open("/proc/kpageflags")) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t pfn = frames[i] & FRAME_PFN_MASK, flags;

		if (!pfn)
			continue;
		if (pread(*kpf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
		    (ssize_t)sizeof(flags))
			return -1;
		if (flags & KPF_KSM)
			frames[i] |= FRAME_KSM;
		if (flags & KPF_THP)
			frames[i] |= FRAME_THP;
	}
	return 0;
}

int host_zero_frame(int *kpf, struct zero_frames *z, uint64_t pfn)
{
	uint64_t flags;

	if (!pfn || z->unreadable)
		return 0;
	if (zero_frames_has(z, pfn))
		return 1;
	if (*kpf < 0 && (*kpf = host_open("/proc/kpageflags")) < 0) {
		z->unreadable = 1;
		return 0;
	}
	if (pread(*kpf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
	    (ssize_t)sizeof(flags))
		return 0;
	if (!(flags & KPF_ZERO_PAGE))
		return 0;
	/* fs/proc/page.c marks every frame of the huge zero folio, which is
	 * a compound page (and THP); the 4 KiB zero page is neither. */
	if (flags & (KPF_THP | KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL))
		z->huge = pfn & ~(uint64_t)(HUGE_ZERO_FRAMES - 1);
	else
		z->pfn = pfn;
	return 1;
}

/*
 * PAGEMAP_SCAN's interface (<linux/fs.h> of Linux 6.7), spelt out here: the
 * kernel headers a build finds may be older than the kernel it runs on, and
 * the ioctl's layout is fixed by the kernel's ABI.
 */
struct pagemap_region {
	uint64_t start, end, categories;
};

struct pagemap_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};

#define PAGEMAP_IS_PRESENT (UINT64_C(1) << 3)
#define PAGEMAP_SCAN_IOCTL _IOWR('f', 16, struct pagemap_scan_arg)

int pagemap_next_present(int pagemap, uint64_t start, uint64_t end,
			 uint64_t *found)
{
	struct pagemap_region reg;
	struct pagemap_scan_arg a = {
		.size = sizeof(a), .start = start, .end = end,
		.vec = (uint64_t)(uintptr_t)&reg, .vec_len = 1,
		/* Stop at the first present page: the caller reads from there. */
		.max_pages = 1,
		.category_anyof_mask = PAGEMAP_IS_PRESENT,
		.return_mask = PAGEMAP_IS_PRESENT,
	};
	int n;

	/* Tests compare the entry-by-entry walk with this one. */
	if (getenv("KSMSCAN_TEST_NO_PAGEMAP_SCAN"))
		return -1;
	do
		n = ioctl(pagemap, PAGEMAP_SCAN_IOCTL, &a);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	*found = n > 0 && reg.start >= start && reg.start < end ? reg.start : end;
	return 0;
}
