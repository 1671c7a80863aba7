/* SPDX-License-Identifier: MIT */
/*
 * KSM as the running kernel reports it (ksm.h): the settings and counters
 * of /sys/kernel/mm/ksm, the pages merged in other processes, and ksmd's
 * own CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "ksm.h"
#include "process.h"
int ksm_run_value(void)
{
	return host_read_int(KSM_SYSFS_DIR "/run");
}

int ksm_sysfs_signed(const char *name, int64_t *value)
{
	long long v;
	FILE *f;
	int ok;

	f = host_fopen(KSM_SYSFS_DIR "/%s", name);
	if (!f)
		return -1;
	ok = fscanf(f, "%lld", &v) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*value = v;
	return 0;
}

int ksm_advisor_on(void)
{
	char buf[64] = "";
	FILE *f = host_fopen(KSM_SYSFS_DIR "/advisor_mode");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[scan-time]") != NULL;	/* the choice in force */
}

int ksm_sysfs(const char *name, uint64_t *value)
{
	int64_t v;

	if (ksm_sysfs_signed(name, &v) < 0)
		return -1;
	*value = v < 0 ? 0 : (uint64_t)v;
	return 0;
}

uint64_t ksm_merging_elsewhere(const int *skip, size_t nskip, size_t *procs)
{
	size_t n;
	int *pids = procs_pids(&n);
	uint64_t pages = 0;

	*procs = 0;
	for (size_t i = 0; i < n; i++) {
		struct proc_ksm_stat st;
		size_t k = 0;

		while (k < nskip && skip[k] != pids[i])
			k++;
		if (k < nskip || proc_ksm_stat(pids[i], &st) < 0 ||
		    !st.merging_pages)
			continue;
		pages += st.merging_pages;
		(*procs)++;
	}
	free(pids);
	return pages;
}

double ksmd_cpu_seconds(void)
{
	size_t n;
	int *pids = procs_pids(&n);
	double cpu = 0;

	for (size_t i = 0; i < n && !cpu; i++) {
		char comm[32];
		unsigned long long ns;
		FILE *f;

		if (proc_comm(pids[i], comm, sizeof(comm)) < 0 || strcmp(comm, "ksmd"))
			continue;
		f = host_fopen("/proc/%d/schedstat", pids[i]);
		if (f && fscanf(f, "%llu", &ns) == 1)
			cpu = (double)ns * 1e-9;
		if (f)
			fclose(f);
	}
	free(pids);
	return cpu;
}
