/* SPDX-License-Identifier: MIT */
/*
 * KubeVirt's KSM handler (virt-handler, pkg/virt-handler/ksm/ksm.go): every
 * ksmLoopIntervalMinutes it reads MemAvailable and starts, boosts, decays
 * or stops KSM (kubevirt.h, kubevirt_adjust()).
 */
#include <string.h>

#include "kubevirt.h"
#include "policy.h"
#include "replay.h"

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

_Static_assert(sizeof(struct kubevirt_params) <= TUNER_PARAMS_BYTES,
	       "the handler's settings fit a tuner's room");

static struct kubevirt_params settings(const struct replay_params *p)
{
	struct kubevirt_params k;

	memcpy(&k, p->tuning.bytes, sizeof(k));
	return k;
}

static void kubevirt_defaults(struct policy_params *pp)
{
	const struct kubevirt_params k = KUBEVIRT_DEFAULTS;

	memcpy(pp->bytes, &k, sizeof(k));
}

static int kubevirt_look(struct policy_state *st, const struct replay_params *p,
			 uint64_t free_kb, uint64_t committed_kb, int running,
			 uint64_t *pages_to_scan, uint64_t *sleep_ms)
{
	struct kubevirt_params k = settings(p);

	(void)st;
	(void)committed_kb;
	return kubevirt_adjust(&k, p->host.total_kb, free_kb, running,
			       pages_to_scan, sleep_ms);
}

static double kubevirt_every(const struct replay_params *p)
{
	uint64_t every = settings(p).loop_seconds;

	return every ? (double)every : 1.0;
}

/* Its loop spins first: the first look is at once. */
static double kubevirt_first(const struct replay_params *p)
{
	(void)p;
	return 0;
}

const struct policy_ops kubevirt_policy = {
	.name = "kubevirt", .who = "kubevirt", .who_stops = "KubeVirt's handler",
	.flags = TUNER_LOOKS_AT_HOST,
	.columns = &policy_pages_column, .ncolumns = 1,
	.defaults = kubevirt_defaults, .start_pages = policy_set_pages,
	.look = kubevirt_look, .look_every = kubevirt_every,
	.first_look = kubevirt_first,
};
