/* SPDX-License-Identifier: MIT */
/*
 * The kernel now, for a forecast (forecast_actual()): KSM's counters and
 * settings, and each process's ksm_stat, through host/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/ksm.h"
#include "../host/process.h"
#include "../util/util.h"
#include "forecast.h"

/* The kernel's settings now, as a forecast names them. */
static void actual_settings(struct forecast_settings *s)
{
	ksm_sysfs("pages_to_scan", &s->pages_to_scan);
	ksm_sysfs("sleep_millisecs", &s->sleep_ms);
	ksm_sysfs("use_zero_pages", &s->use_zero_pages);
	ksm_sysfs("max_page_sharing", &s->max_page_sharing);
	if (ksm_sysfs("smart_scan", &s->smart_scan) < 0)
		s->smart_scan = 0;	/* before Linux 6.7: every page, every scan */
	snprintf(s->policy, sizeof(s->policy), "%s",
		 ksm_advisor_on() == 1 ? "advisor" : "fixed");
}

int forecast_actual(const struct forecast *f, struct forecast_actual *a)
{
	int *pids = xcalloc(f->nprocs + 1, sizeof(*pids));

	memset(a, 0, sizeof(*a));
	a->procs = xcalloc(f->nprocs + 1, sizeof(*a->procs));
	a->gone = xcalloc(f->nprocs + 1, sizeof(*a->gone));
	if (ksm_sysfs("full_scans", &a->full_scans) < 0) {
		free(pids);
		return -1;
	}
	ksm_sysfs("pages_shared", &a->now.pages_shared);
	ksm_sysfs("pages_sharing", &a->now.pages_sharing);
	if (ksm_sysfs("ksm_zero_pages", &a->now.ksm_zero_pages) < 0)
		a->now.ksm_zero_pages = 0;	/* before Linux 6.10 */
	ksm_sysfs_signed("general_profit", &a->now.general_profit);
	actual_settings(&a->set);
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct forecast_proc *p = &f->procs[i];
		double start = proc_start_time(p->pid);

		pids[i] = p->pid;
		if (start < 0)
			a->gone[i] = PROC_EXITED;
		else if (start != p->start_time)
			a->gone[i] = PROC_OTHER;
		else if (proc_ksm_stat(p->pid, &a->procs[i]) < 0)
			/* another user's process (ksm_stat is the owner's and
			 * root's) is there, not gone */
			a->gone[i] = errno == EACCES || errno == EPERM ?
				     PROC_UNREADABLE : PROC_EXITED;
	}
	a->elsewhere = ksm_merging_elsewhere(pids, f->nprocs, &a->elsewhere_procs);
	free(pids);
	return 0;
}

void forecast_actual_free(struct forecast_actual *a)
{
	free(a->procs);
	free(a->gone);
	memset(a, 0, sizeof(*a));
}
