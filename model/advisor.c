/* SPDX-License-Identifier: MIT */
/*
 * The kernel's scan-time advisor, as Linux 6.18's mm/ksm.c runs it at the
 * end of every full scan: pages_to_scan moves toward what would make a full
 * scan last advisor_target_scan_time, by the ratio of the target to the
 * scan's time in whole seconds, smoothed by a moving average of how much
 * the scan time changed, then held between the CPU that ksmd's cost per
 * page allows (from 10% to advisor_max_cpu) and advisor_max_pages_to_scan.
 * Every step is the kernel's unsigned integer arithmetic, truncations
 * included: the replay's pages_to_scan after a scan is the kernel's for the
 * same scan time and CPU.
 *
 * ksmtuned (Debian's 4.20150326, /usr/sbin/ksmtuned) reads /proc/meminfo
 * every KSM_MONITOR_INTERVAL: below its threshold of free memory (20% of
 * MemTotal, at least 2048 kB) it starts KSM and adds 300 to pages_to_scan
 * (at most 1250), above it subtracts 50 (at least 64), and it stops KSM
 * when the guests' memory and the threshold fit in MemTotal and free
 * memory is above the threshold; sleep_millisecs is 10 ms for 16 GiB,
 * more for less (at least 10). Its bash arithmetic is 64-bit integers.
 */
#include "advisor.h"

static uint64_t ewma(uint64_t prev, uint64_t curr)
{
	return ((100 - ADVISOR_EWMA_WEIGHT) * prev + ADVISOR_EWMA_WEIGHT * curr) /
	       100;
}

static uint64_t at_least_1(uint64_t v)
{
	return v ? v : 1;
}

uint64_t advisor_scan_end(struct advisor *a, const struct advisor_params *p,
			  double scan_seconds, double cpu_seconds,
			  uint64_t pages_to_scan)
{
	/* div_s64(ms, MSEC_PER_SEC): whole seconds, at least 1 */
	uint64_t scan_time = at_least_1((uint64_t)(scan_seconds * 1000) / 1000);
	uint64_t cpu_ms = (uint64_t)((cpu_seconds - a->cpu_time) * 1e9) / 1000 / 1000;
	uint64_t cpu_percent = at_least_1(cpu_ms * 100 / (scan_time * 1000));
	uint64_t last = a->scan_time ? a->scan_time : scan_time;
	uint64_t factor = at_least_1(p->target_scan_time * 100 / scan_time);
	uint64_t change = ewma(a->change, at_least_1(scan_time * 100 / last));
	uint64_t pages = pages_to_scan * 100 / factor * change / 100;
	uint64_t per_page_cost = at_least_1(pages_to_scan / cpu_percent);

	if (pages > per_page_cost * p->max_cpu)
		pages = per_page_cost * p->max_cpu;
	if (pages < per_page_cost * ADVISOR_MIN_CPU)
		pages = per_page_cost * ADVISOR_MIN_CPU;
	if (pages > p->max_pages_to_scan)
		pages = p->max_pages_to_scan;
	a->change = change;
	a->scan_time = scan_time;
	a->cpu_time = cpu_seconds;
	return pages;
}

/* increase_npages(): npages plus @delta, held within the bounds. */
static int64_t npages_add(const struct ksmtuned_params *p, int64_t npages,
			  int64_t delta)
{
	npages += delta;
	if (npages < p->npages_min)
		return p->npages_min;
	return npages > p->npages_max ? p->npages_max : npages;
}

int ksmtuned_adjust(struct ksmtuned *t, const struct ksmtuned_params *p,
		    uint64_t free_kb, uint64_t committed_kb,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms)
{
	uint64_t total = p->total_kb ? p->total_kb : 1;
	uint64_t sleep = p->sleep_msec * 16 * 1024 * 1024 / total;
	uint64_t thres = total * p->thres_coef / 100;

	if (sleep <= 10)
		sleep = 10;
	if (p->thres_const > thres)
		thres = p->thres_const;
	if (committed_kb + thres < total && free_kb > thres)
		return 0;	/* KSMCTL stop */
	t->npages = npages_add(p, t->npages, free_kb < thres ? p->boost : p->decay);
	*pages_to_scan = (uint64_t)t->npages;
	*sleep_ms = sleep;
	return 1;		/* KSMCTL start */
}

const char *policy_name(enum policy p)
{
	static const char *const names[] = {
		[POLICY_FIXED] = "fixed", [POLICY_ADVISOR] = "advisor",
		[POLICY_KSMTUNED] = "ksmtuned", [POLICY_KUBEVIRT] = "kubevirt",
	};

	return names[p];
}

int kubevirt_adjust(const struct kubevirt_params *p, uint64_t total_kb,
		    uint64_t available_kb, int running, uint64_t *pages_to_scan,
		    uint64_t *sleep_ms)
{
	/* Go's unsigned arithmetic: total - available wraps when the savings
	 * make more available than there is memory (the sleep then comes to
	 * its floor); 0 would be a division by zero, which panics in Go: the
	 * floor here */
	uint64_t used = total_kb - available_kb;
	uint64_t sleep = used ? p->sleep_baseline * (16 * 1024 * 1024) / used : 0;
	int64_t pages = (int64_t)*pages_to_scan;

	if (sleep < p->sleep_baseline / 10)
		sleep = p->sleep_baseline / 10;
	/* float32, as Go compares them */
	if ((float)available_kb > (float)total_kb * p->free_percent) {
		if (!running)
			return 0;		/* ksmState{false, 0, 0}: run=0 */
		pages += p->decay;
		if (pages < p->npages_min)
			return 0;		/* run=0, nothing else written */
	} else if (running) {
		pages += p->boost;
		if (pages > p->npages_max)
			pages = p->npages_max;
	} else {
		pages = p->npages_init;
	}
	*pages_to_scan = (uint64_t)pages;
	*sleep_ms = sleep;
	return 1;
}
