/* SPDX-License-Identifier: MIT */
/*
 * Why a live process's memory will not merge (doctor.h), from its smaps:
 * each area under the first reason that holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "doctor.h"
#include "host.h"
#include "process.h"

/* One smaps area's figures, in kB, until its VmFlags line. */
struct smaps_area {
	char path[256];
	unsigned long long rss, anon, thp, hugetlb;
};

/* Whether an area's file is shared anonymous memory (shmem, memfd, SysV,
 * /dev/zero, a deleted tmpfs file) rather than a file's own pages. */
static int shmem_like(const char *path)
{
	return !path[0] || strncmp(path, "/memfd:", 7) == 0 ||
	       strncmp(path, "/dev/zero", 9) == 0 || strncmp(path, "/SYSV", 5) == 0 ||
	       strncmp(path, "/dev/shm/", 9) == 0 || strstr(path, " (deleted)") ||
	       strncmp(path, "[anon_shmem", 11) == 0;
}

/* Count one area under its reason, once its VmFlags line is read. */
static void doctor_area(const struct smaps_area *a, const char *flags,
			int ksm_running, struct proc_doctor *d)
{
	int shared = smaps_vmflag(flags, "sh") || (smaps_vmflag(flags, "ms") && shmem_like(a->path));

	if (smaps_vmflag(flags, "io") || smaps_vmflag(flags, "pf"))
		d->pages[DOCTOR_IO_MAPPING] += a->rss / 4;
	else if (smaps_vmflag(flags, "ht"))
		d->pages[DOCTOR_HUGETLB] += a->hugetlb / 4;
	else if (shared) {
		d->pages[DOCTOR_SHARED_MAPPING] += a->rss / 4;
		if (a->rss && shmem_like(a->path))
			d->shared_memfd = 1;
	} else if (!smaps_vmflag(flags, "mg"))
		d->pages[DOCTOR_NOT_MERGEABLE] += a->anon / 4;
	else {
		d->pages[DOCTOR_THP] += a->thp / 4;
		if (!ksm_running)
			d->pages[DOCTOR_KSM_NOT_RUNNING] += (a->anon - a->thp) / 4;
	}
}

int proc_doctor_read(int pid, int ksm_running, struct proc_doctor *d)
{
	char line[1024];
	struct smaps_area a = { "", 0, 0, 0, 0 };
	unsigned long long kb;
	FILE *f;

	memset(d, 0, sizeof(*d));
	f = host_fopen("/proc/%d/smaps", pid);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t word = strcspn(line, " ");

		line[strcspn(line, "\n")] = '\0';
		/* An area's first line: "start-end perms offset dev inode path";
		 * the others are "Key: value". */
		if (memchr(line, '-', word) && !memchr(line, ':', word)) {
			const char *p = line;

			memset(&a, 0, sizeof(a));
			for (int field = 0; field < 5; field++) {
				p += strcspn(p, " ");
				p += strspn(p, " ");
			}
			snprintf(a.path, sizeof(a.path), "%s", p);
		} else if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			a.rss = kb;
		else if (sscanf(line, "Anonymous: %llu kB", &kb) == 1)
			a.anon = kb;
		else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			a.thp = kb;
		else if (sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1 ||
			 sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1)
			a.hugetlb += kb;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			doctor_area(&a, line, ksm_running, d);
	}
	fclose(f);
	return 0;
}

/*
 * The areas of /proc/PID/smaps that are ksmd's, or with @resident those with
 * pages resident; *@read says whether all of smaps was read: an area's first line is its maps line ("start-end perms"),
 * VmFlags its last, so the area is judged there, with its Rss read before.
 */
static size_t smaps_areas(int pid, int resident, uint64_t **area, int *read)
{
	char line[1024];
	unsigned long long start = 0, end = 0, rss = 0;
	size_t n = 0, cap = 0;
	FILE *f;

	*area = NULL;
	*read = 0;
	f = host_fopen("/proc/%d/smaps", pid);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %n", &a, &b, &pos) == 2 && pos) {
			start = a;
			end = b;
			rss = 0;
			continue;
		}
		if (sscanf(line, "Rss: %llu kB", &a) == 1)
			rss = a;
		if (strncmp(line, "VmFlags:", 8) != 0 ||
		    (resident ? rss == 0 : !smaps_vmflag(line, "mg")))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			*area = xreallocarray(*area, cap, 2 * sizeof(**area));
		}
		(*area)[2 * n] = start;
		(*area)[2 * n + 1] = end;
		n++;
	}
	/* A process that exits mid-read leaves a list that says too little. */
	*read = !ferror(f);
	fclose(f);
	return n;
}

size_t proc_mergeable_areas(int pid, uint64_t **area)
{
	int read;

	return smaps_areas(pid, 0, area, &read);
}

int proc_resident_areas(int pid, uint64_t **area, size_t *n)
{
	int read;

	*n = smaps_areas(pid, 1, area, &read);
	return read ? 0 : -1;
}
