/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_KUBEVIRT_H
#define KSMSCAN_KUBEVIRT_H

#include <stdint.h>

struct policy_ops;

/*
 * KubeVirt's KSM handler (virt-handler, pkg/virt-handler/ksm/ksm.go;
 * kubevirt.c): every loop, its Go arithmetic. The replay knows it only by
 * its operations (policy.h).
 */

/* Its defaults, which a node's annotations may override. */
struct kubevirt_params {
	uint64_t loop_seconds;		/* ksmLoopIntervalMinutes: 3 min */
	int64_t boost, decay;		/* pagesBoostDefault 300, _DecayDefault -50 */
	int64_t npages_min, npages_max;	/* nPagesMinDefault 64, _MaxDefault 1250 */
	int64_t npages_init;		/* nPagesInitDefault 100 */
	uint64_t sleep_baseline;	/* sleepMsBaselineDefault 100 (ms) */
	float free_percent;		/* freePercentDefault 0.2 */
};

/* KubeVirt's ksm.go's defaults. */
#define KUBEVIRT_DEFAULTS { .loop_seconds = 180, .boost = 300, .decay = -50, \
			    .npages_min = 64, .npages_max = 1250, \
			    .npages_init = 100, .sleep_baseline = 100, \
			    .free_percent = 0.2f }

/**
 * kubevirt_adjust() - calculateNewRunSleepAndPages(), then what
 * writeKsmValuesToFiles() writes: start, boost, decay or stop KSM.
 * @p: the handler's settings
 * @total_kb: MemTotal
 * @available_kb: MemAvailable now
 * @running: whether KSM runs (/sys/kernel/mm/ksm/run is 1)
 * @pages_to_scan: pages_to_scan now; set to the one it writes, if it writes
 * @sleep_ms: set to the sleep_millisecs it writes, if it writes
 *
 * It writes pages_to_scan and sleep_millisecs only when KSM runs after it.
 *
 * Return: 1 if KSM runs after it, 0 if not.
 */
int kubevirt_adjust(const struct kubevirt_params *p, uint64_t total_kb,
		    uint64_t available_kb, int running, uint64_t *pages_to_scan,
		    uint64_t *sleep_ms);

/* Its operations (policy.h). */
extern const struct policy_ops kubevirt_policy;

#endif
