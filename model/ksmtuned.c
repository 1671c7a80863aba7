/* SPDX-License-Identifier: MIT */
/*
 * ksmtuned (Debian's 4.20150326, /usr/sbin/ksmtuned) reads /proc/meminfo
 * every KSM_MONITOR_INTERVAL: below its threshold of free memory (20% of
 * MemTotal, at least 2048 kB) it starts KSM and adds 300 to pages_to_scan
 * (at most 1250), above it subtracts 50 (at least 64), and it stops KSM
 * when the guests' memory and the threshold fit in MemTotal and free
 * memory is above the threshold; sleep_millisecs is 10 ms for 16 GiB,
 * more for less (at least 10). Its bash arithmetic is 64-bit integers.
 */
#include <string.h>

#include "ksmtuned.h"
#include "policy.h"
#include "replay.h"

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
		    uint64_t total_kb, uint64_t free_kb, uint64_t committed_kb,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms)
{
	uint64_t total = total_kb ? total_kb : 1;
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

_Static_assert(sizeof(struct ksmtuned_params) <= TUNER_PARAMS_BYTES &&
	       sizeof(struct ksmtuned) <= TUNER_STATE_BYTES,
	       "ksmtuned's settings and state fit a tuner's room");

static struct ksmtuned_params settings(const struct replay_params *p)
{
	struct ksmtuned_params t;

	memcpy(&t, p->tuning.bytes, sizeof(t));
	return t;
}

static void tuned_defaults(struct policy_params *pp)
{
	const struct ksmtuned_params t = KSMTUNED_DEFAULTS;

	memcpy(pp->bytes, &t, sizeof(t));
}

static int tuned_look(struct policy_state *st, const struct replay_params *p,
		      uint64_t free_kb, uint64_t committed_kb, int running,
		      uint64_t *pages_to_scan, uint64_t *sleep_ms)
{
	struct ksmtuned_params t = settings(p);
	struct ksmtuned state;
	int run;

	(void)running;
	memcpy(&state, st->bytes, sizeof(state));
	run = ksmtuned_adjust(&state, &t, p->host.total_kb, free_kb,
			      committed_kb, pages_to_scan, sleep_ms);
	memcpy(st->bytes, &state, sizeof(state));
	return run;
}

/* Its loop sleeps first: the first look is one interval on. */
static double tuned_every(const struct replay_params *p)
{
	uint64_t every = settings(p).monitor_seconds;

	return every ? (double)every : 1.0;
}

const struct policy_ops ksmtuned_policy = {
	.name = "ksmtuned", .who = "ksmtuned", .who_stops = "ksmtuned",
	.flags = TUNER_LOOKS_AT_HOST,
	.columns = &policy_pages_column, .ncolumns = 1,
	.defaults = tuned_defaults, .start_pages = policy_set_pages,
	.look = tuned_look, .look_every = tuned_every, .first_look = tuned_every,
};
