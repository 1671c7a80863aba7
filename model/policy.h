/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_POLICY_H
#define KSMSCAN_POLICY_H

#include <stdint.h>

#include "advisor.h"

/*
 * Who sets ksmd's pages_to_scan and sleep_millisecs in a replay: a policy,
 * one file each (fixed.c, advisor.c, ksmtuned.c, kubevirt.c), known to the
 * replay only by its operations. Adding a tuner is one more table of
 * operations and its line in policy_ops().
 */

struct replay_params;

/* What a tuner keeps from one call to the next (zeroed at the start). */
struct policy_state {
	struct advisor adv;		/* the kernel's advisor */
	struct ksmtuned tuned;		/* ksmtuned */
};

struct policy_ops {
	const char *name;		/* as --policy takes it */
	/**
	 * start_pages() - pages_to_scan when the replay starts.
	 */
	uint64_t (*start_pages)(const struct replay_params *p);
	/**
	 * scan_end() - a full scan ended after @scan_seconds, ksmd's CPU
	 * seconds so far @cpu_seconds: the next pages_to_scan. NULL: the
	 * policy leaves it.
	 */
	uint64_t (*scan_end)(struct policy_state *st, const struct replay_params *p,
			     double scan_seconds, double cpu_seconds,
			     uint64_t pages_to_scan);
	/**
	 * look() - the tuner looks at the host's memory (@free_kb free, the
	 * guests' @committed_kb) with KSM @running or not: whether KSM runs
	 * after it, and the settings it writes. NULL: a policy without looks,
	 * which never stops KSM (then what ksmd merges depends on the order
	 * of its visits alone, never on the time).
	 */
	int (*look)(struct policy_state *st, const struct replay_params *p,
		    uint64_t free_kb, uint64_t committed_kb, int running,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms);
	/** look_every() - seconds between two looks, at least 1. */
	double (*look_every)(const struct replay_params *p);
	/** first_look() - when the first look comes (KSM stopped till then). */
	double (*first_look)(const struct replay_params *p);
};

/* The policies, one file each. */
extern const struct policy_ops fixed_policy, advisor_policy, ksmtuned_policy,
	kubevirt_policy;

/**
 * policy_set_pages() - start_pages() of the policies that start from the
 * run's --pages-to-scan (fixed, ksmtuned, kubevirt).
 * @p: the settings
 *
 * Return: p->ksm.pages_to_scan.
 */
uint64_t policy_set_pages(const struct replay_params *p);

/**
 * policy_ops() - a policy's operations.
 * @p: the policy
 *
 * Return: its table.
 */
const struct policy_ops *policy_ops(enum policy p);

#endif
