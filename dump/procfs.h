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
