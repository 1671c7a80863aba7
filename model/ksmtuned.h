/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_KSMTUNED_H
#define KSMSCAN_KSMTUNED_H

#include <stdint.h>

struct policy_ops;

/*
 * ksmtuned (Debian's ksmtuned 4.20150326, the script oVirt, KubeVirt and
 * others copied; ksmtuned.c): every monitor interval, its adjust() in its
 * shell arithmetic, on the host's memory. The replay knows it only by its
 * operations (policy.h).
 */

/* ksmtuned's settings (/etc/ksmtuned.conf). */
struct ksmtuned_params {
	uint64_t monitor_seconds;	/* KSM_MONITOR_INTERVAL, 60 */
	int64_t boost, decay;		/* KSM_NPAGES_BOOST 300, _DECAY -50 */
	int64_t npages_min, npages_max;	/* KSM_NPAGES_MIN 64, _MAX 1250 */
	uint64_t sleep_msec;		/* KSM_SLEEP_MSEC 10: for 16 GiB */
	uint64_t thres_coef, thres_const;	/* KSM_THRES_COEF 20, _CONST 2048 */
};

/* /etc/ksmtuned.conf's defaults. */
#define KSMTUNED_DEFAULTS { .monitor_seconds = 60, .boost = 300, .decay = -50, \
			    .npages_min = 64, .npages_max = 1250, \
			    .sleep_msec = 10, .thres_coef = 20, \
			    .thres_const = 2048 }

/* What ksmtuned keeps between two looks. */
struct ksmtuned {
	int64_t npages;			/* its npages, from 0 */
};

/**
 * ksmtuned_adjust() - adjust(): start or stop KSM, and its settings.
 * @t: ksmtuned's state
 * @p: its settings
 * @total_kb: MemTotal
 * @free_kb: free_memory(): MemFree + Buffers + Cached now
 * @committed_kb: committed_memory(): the RSS of the guests (KSM does not
 *	lower it: a merged page stays mapped)
 * @pages_to_scan: set to the pages_to_scan it writes, when it starts KSM
 * @sleep_ms: set to the sleep_millisecs it writes, when it starts KSM
 *
 * Return: 1 if KSM runs after it (run=1), 0 if it stopped KSM (run=0).
 */
int ksmtuned_adjust(struct ksmtuned *t, const struct ksmtuned_params *p,
		    uint64_t total_kb, uint64_t free_kb, uint64_t committed_kb,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms);

/* Its operations (policy.h). */
extern const struct policy_ops ksmtuned_policy;

#endif
