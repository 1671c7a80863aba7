/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_DOCTOR_H
#define KSMSCAN_HOST_DOCTOR_H

#include <stddef.h>
#include <stdint.h>


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
 * proc_resident_areas() - the areas of a process with pages resident (their
 * smaps Rss is not 0): where a kernel has no PAGEMAP_SCAN, the other areas
 * are skipped without reading their pagemap entries.
 * @pid: the process
 * @area: set to a malloc'd array of start, end pairs in address order
 *	(NULL when there is none)
 * @n: set to the number of areas
 *
 * Return: 0, or -1 if smaps could not be read (then nothing may be skipped).
 */
int proc_resident_areas(int pid, uint64_t **area, size_t *n);

#endif
