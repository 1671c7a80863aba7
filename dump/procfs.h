/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_PROCFS_H
#define KSMSCAN_PROCFS_H

#include <stddef.h>
#include <stdint.h>

/*
 * What /proc says about live processes beyond their memory (procfs.c): their
 * state, why one cannot be read, the kernel's own KSM figures for a process
 * (read by the pid reader when it opens one), and the list of processes -P
 * and --all-processes take.
 */

/* A live process's KSM state as the kernel reports it, read at its open. */
struct proc_stats {
	int valid;			/* 1: a live process, the rest was read */
	char command[64];		/* /proc/PID/comm, without its newline */
	uint64_t mergeable_pages;	/* resident pages (Rss) of the areas whose
					 * smaps VmFlags hold "mg" (VM_MERGEABLE) */
	uint64_t thp_pages;		/* AnonHugePages in smaps, in 4 KiB pages:
					 * inside transparent huge pages, which
					 * KSM splits to merge */
	uint64_t ksm_merging_pages;	/* /proc/PID/ksm_merging_pages */
	uint64_t ksm_rmap_items;	/* ksm_rmap_items in /proc/PID/ksm_stat */
};

struct input;

/*
 * Why memory of a live process that looks mergeable will not merge (the
 * doctor report): each area of /proc/PID/smaps counted once, under the
 * first reason that holds, in this order.
 */
enum doctor_reason {
	DOCTOR_IO_MAPPING,	/* VM_IO or VM_PFNMAP ("io", "pf"): device memory */
	DOCTOR_HUGETLB,		/* hugetlbfs ("ht"): KSM skips it */
	DOCTOR_SHARED_MAPPING,	/* MAP_SHARED ("sh", or "ms" of shmem and
				 * memfd): KSM never merges shared memory */
	DOCTOR_NOT_MERGEABLE,	/* private anonymous pages outside areas
				 * marked mergeable ("mg") */
	DOCTOR_THP,		/* mergeable, in transparent huge pages: a
				 * merge splits the huge page */
	DOCTOR_KSM_NOT_RUNNING,	/* mergeable, but ksmd is not running */
	DOCTOR_REASONS,
};

/* A process's pages per reason, from its smaps. */
struct proc_doctor {
	uint64_t pages[DOCTOR_REASONS];	/* present 4 KiB pages */
	int shared_memfd;		/* some shared pages are memfd or shmem */
};

/**
 * ksm_run_value() - /sys/kernel/mm/ksm/run: 1 ksmd runs, 0 stopped, 2
 * unmerging; -1 if the kernel has no KSM.
 */
int ksm_run_value(void);

/**
 * ksm_sysfs() - a figure or setting of /sys/kernel/mm/ksm.
 * @name: the file, as "full_scans"
 * @value: set to its value (a negative general_profit reads as 0: give
 *	ksm_sysfs_signed() for that one)
 *
 * Return: 0, or -1 if the kernel has no such file.
 */
int ksm_sysfs(const char *name, uint64_t *value);

/**
 * ksm_sysfs_signed() - ksm_sysfs() of a signed figure (general_profit).
 * @name: the file
 * @value: set to its value
 *
 * Return: 0, or -1 if the kernel has no such file.
 */
int ksm_sysfs_signed(const char *name, int64_t *value);

/**
 * ksm_advisor_on() - whether /sys/kernel/mm/ksm/advisor_mode is scan-time.
 *
 * Return: 1 if so, 0 if not, -1 if the kernel has no advisor (before 6.9).
 */
int ksm_advisor_on(void);

/* A process's KSM figures as /proc/PID/ksm_stat has them (Linux 6.1+). */
struct proc_ksm_stat {
	uint64_t rmap_items;		/* ksm_rmap_items */
	uint64_t merging_pages;		/* ksm_merging_pages */
	uint64_t zero_pages;		/* ksm_zero_pages (6.10+; else 0) */
	int64_t process_profit;		/* ksm_process_profit (6.4+) */
};

/**
 * proc_ksm_stat() - read a process's /proc/PID/ksm_stat.
 * @pid: the process
 * @st: filled in; figures the file lacks are 0
 *
 * Return: 0, or -1 if the process or the file is gone.
 */
int proc_ksm_stat(int pid, struct proc_ksm_stat *st);

/**
 * ksm_merging_elsewhere() - the pages KSM has merged in processes other than
 * some (ksm_merging_pages of every other process).
 * @skip: the pids left out
 * @nskip: how many
 * @procs: set to the processes with merged pages counted
 *
 * Return: their pages.
 */
uint64_t ksm_merging_elsewhere(const int *skip, size_t nskip, size_t *procs);

/**
 * proc_doctor_read() - count a process's present pages that will not merge,
 * by reason, from /proc/PID/smaps (every area, also those the pid reader
 * skips). Private areas count their anonymous pages (smaps Anonymous),
 * shared ones their resident pages (Rss), hugetlbfs its huge pages.
 * @pid: the process
 * @ksm_running: whether ksmd runs (ksm_run_value() == 1): if not, the
 *	mergeable pages count as DOCTOR_KSM_NOT_RUNNING
 * @d: filled in
 *
 * Return: 0, or -1 if smaps could not be read.
 */
int proc_doctor_read(int pid, int ksm_running, struct proc_doctor *d);

/**
 * proc_stats_read() - read a process's KSM state. Files this kernel lacks
 * (ksm_stat before Linux 6.1) leave their figures 0.
 * @pid: the process
 * @st: filled in; valid is 1 even if some files could not be read
 */
void proc_stats_read(int pid, struct proc_stats *st);

/**
 * proc_stat() - the state letter and flags of /proc/PID/stat.
 * @pid: the process
 * @state: its state letter (R, S, Z, ...)
 * @flags: its task flags (PF_KTHREAD for a kernel thread)
 *
 * Return: 0, or -1 if the process is gone.
 */
int proc_stat(int pid, char *state, unsigned long *flags);

/**
 * proc_comm() - a process's command name (/proc/PID/comm).
 * @pid: the process
 * @buf: set to the name, without its newline ("" if unreadable)
 * @len: size of @buf
 *
 * Return: 0, or -1 if the process is gone.
 */
int proc_comm(int pid, char *buf, size_t len);

/**
 * proc_exited() - whether a process is gone or a zombie (no memory left).
 * @pid: the process
 */
int proc_exited(int pid);

/**
 * proc_why_unreadable() - why a process's /proc files could not be opened,
 * in words: no such process, a kernel thread or a zombie (whoever asks),
 * or why reading another process's memory was refused (Yama, a missing
 * CAP_SYS_PTRACE, another user).
 * @pid: the process
 * @err: the errno of the failed open()
 */
const char *proc_why_unreadable(int pid, int err);

/**
 * procs_list() - the processes -P REGEX or --all-processes take, appended
 * to an array of inputs as "pid:PID" in ascending pid order. Kernel
 * threads, zombies, ksmscan itself and processes that vanish while they are
 * listed are left out silently; one whose memory this user may not read is
 * left out with one warning naming it, its command and why.
 * @regex: a POSIX extended regular expression matched against the command
 *	name (/proc/PID/comm; unanchored, as grep -E), or NULL for every process
 * @inputs: the array, grown with xreallocarray(); new names are malloc'd
 * @n: its entries, increased
 * @cap: its capacity, increased as needed
 * @why: for a bad regular expression, what is wrong (at most @len bytes)
 * @len: size of @why
 *
 * Return: the processes added, or -1 for a bad regular expression.
 */
long procs_list(const char *regex, struct input **inputs, size_t *n,
		size_t *cap, char *why, size_t len);

/**
 * mem_available() - the memory this machine can give a new task without
 * swapping: MemAvailable of /proc/meminfo, in bytes (UINT64_MAX when it
 * does not say). $KSMSCAN_MEM_AVAILABLE, in bytes, stands in for it (tests).
 */
uint64_t mem_available(void);

/**
 * proc_resident_pages() - a process's resident pages (/proc/PID/statm).
 * @pid: the process
 *
 * Return: the pages, or 0 if it cannot be read.
 */
uint64_t proc_resident_pages(int pid);

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

/**
 * proc_mergeable_areas() - the areas ksmd scans in a process: those whose
 * smaps VmFlags hold "mg" (VM_MERGEABLE, set by MADV_MERGEABLE or
 * PR_SET_MEMORY_MERGE, whether or not KSM runs).
 * @pid: the process
 * @area: set to a malloc'd array of start, end pairs in address order
 *	(NULL when there is none)
 *
 * Return: the number of areas.
 */
size_t proc_mergeable_areas(int pid, uint64_t **area);

/**
 * proc_zero_pfn() - the page frame number of the kernel's zero page, as
 * pagemap shows it for a page that was only read; 0 when pagemap hides
 * frame numbers (without CAP_SYS_ADMIN). Measured once.
 */
uint64_t proc_zero_pfn(void);

/**
 * proc_start_time() - when a process started (/proc/PID/stat starttime,
 * in clock ticks after boot), or -1 if it is gone.
 * @pid: the process
 */
double proc_start_time(int pid);

/**
 * ksmd_cpu_seconds() - the CPU time ksmd has run since boot
 * (/proc/PID/schedstat of the kernel thread named ksmd), 0 if unknown.
 */
double ksmd_cpu_seconds(void);

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
 * kernel_hz() - the running kernel's HZ (jiffies per second): CONFIG_HZ of
 * /proc/config.gz or /boot/config-RELEASE, else counted from the jiffies
 * /proc/timer_list shows over 100 ms (root only).
 *
 * Return: HZ, or 0 if it cannot be known.
 */
unsigned kernel_hz(void);

/**
 * kernel_soft_dirty() - whether the running kernel has soft-dirty bits
 * (CONFIG_MEM_SOFT_DIRTY), which pagemap shows for pages written since
 * clear_refs.
 *
 * Return: 1 yes, 0 no, -1 unknown (no configuration to read).
 */
int kernel_soft_dirty(void);

#endif
