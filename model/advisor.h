/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_ADVISOR_H
#define KSMSCAN_ADVISOR_H

#include <stdint.h>

/*
 * The tuners' arithmetic, each in its policy's file (the replay knows them
 * only by their operations, policy.h). The kernel's scan-time advisor
 * (advisor_mode=scan-time, Linux 6.9+, advisor.c): mm/ksm.c's
 * scan_time_advisor() of Linux 6.18, in its own integer arithmetic, at the
 * end of each full scan. ksmtuned (Debian's ksmtuned 4.20150326, the
 * script oVirt, KubeVirt and others copied; ksmtuned.c): every monitor
 * interval, its adjust() in its shell arithmetic, on the host's memory.
 * KubeVirt's handler (kubevirt.c): every loop, its Go arithmetic.
 */

enum policy { POLICY_FIXED, POLICY_ADVISOR, POLICY_KSMTUNED, POLICY_KUBEVIRT };

/* At most this many policies to compare in one run (--policy=a,b,...). */
#define POLICIES_MAX 8

/**
 * policy_name() - a policy's name, as --policy takes it.
 * @p: the policy
 *
 * Return: its name.
 */
const char *policy_name(enum policy p);

/* The advisor's knobs, as /sys/kernel/mm/ksm has them. */
struct advisor_params {
	uint64_t target_scan_time;	/* advisor_target_scan_time, seconds */
	uint64_t max_cpu;		/* advisor_max_cpu, percent */
	uint64_t min_pages_to_scan;	/* advisor_min_pages_to_scan */
	uint64_t max_pages_to_scan;	/* advisor_max_pages_to_scan */
};

/* The kernel's defaults, and its fixed lower bound on CPU. */
#define ADVISOR_TARGET_SCAN_TIME 200
#define ADVISOR_MAX_CPU 70
#define ADVISOR_MIN_PAGES 500
#define ADVISOR_MAX_PAGES 30000
#define ADVISOR_MIN_CPU 10		/* KSM_ADVISOR_MIN_CPU */
#define ADVISOR_EWMA_WEIGHT 30		/* EWMA_WEIGHT */
/* The kernel's knobs as it boots: a struct advisor_params. */
#define ADVISOR_DEFAULTS { ADVISOR_TARGET_SCAN_TIME, ADVISOR_MAX_CPU, \
			   ADVISOR_MIN_PAGES, ADVISOR_MAX_PAGES }

/* struct advisor_ctx: what the advisor keeps from one scan to the next. */
struct advisor {
	uint64_t change;		/* the smoothed change, percent */
	uint64_t scan_time;		/* the last scan's, whole seconds */
	double cpu_time;		/* ksmd's CPU seconds at the last scan's end */
};

/**
 * advisor_scan_end() - scan_time_advisor(): a full scan ended; the next
 * pages_to_scan.
 * @a: the advisor's state (zeroed at the start, as set_advisor_defaults())
 * @p: its knobs
 * @scan_seconds: the scan's time, from its start to its end
 * @cpu_seconds: ksmd's CPU time so far
 * @pages_to_scan: the current value
 *
 * Return: the new pages_to_scan.
 */
uint64_t advisor_scan_end(struct advisor *a, const struct advisor_params *p,
			  double scan_seconds, double cpu_seconds,
			  uint64_t pages_to_scan);

/* ksmtuned's settings (/etc/ksmtuned.conf) and the host it reads, in kB
 * as /proc/meminfo has them. */
struct ksmtuned_params {
	uint64_t monitor_seconds;	/* KSM_MONITOR_INTERVAL, 60 */
	int64_t boost, decay;		/* KSM_NPAGES_BOOST 300, _DECAY -50 */
	int64_t npages_min, npages_max;	/* KSM_NPAGES_MIN 64, _MAX 1250 */
	uint64_t sleep_msec;		/* KSM_SLEEP_MSEC 10: for 16 GiB */
	uint64_t thres_coef, thres_const;	/* KSM_THRES_COEF 20, _CONST 2048 */
	uint64_t total_kb;		/* MemTotal */
	uint64_t used_kb;		/* MemTotal less MemFree, Buffers and
					 * Cached, before KSM saves anything */
};

/* /etc/ksmtuned.conf's defaults, and no host yet. */
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
 * @p: its settings and the host
 * @free_kb: free_memory(): MemFree + Buffers + Cached now
 * @committed_kb: committed_memory(): the RSS of the guests (KSM does not
 *	lower it: a merged page stays mapped)
 * @pages_to_scan: set to the pages_to_scan it writes, when it starts KSM
 * @sleep_ms: set to the sleep_millisecs it writes, when it starts KSM
 *
 * Return: 1 if KSM runs after it (run=1), 0 if it stopped KSM (run=0).
 */
int ksmtuned_adjust(struct ksmtuned *t, const struct ksmtuned_params *p,
		    uint64_t free_kb, uint64_t committed_kb,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms);

/* KubeVirt's KSM handler (virt-handler, pkg/virt-handler/ksm/ksm.go):
 * its defaults, which a node's annotations may override. */
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

#endif
