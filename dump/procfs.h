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

#endif
