/* SPDX-License-Identifier: MIT */
/* The fixed policy: ksmd at --pages-to-scan and --sleep-ms, as set. */
#include "policy.h"
#include "replay.h"

static uint64_t fixed_start(const struct replay_params *p)
{
	return p->ksm.pages_to_scan;
}

const struct policy_ops fixed_policy = {
	.name = "fixed", .start_pages = fixed_start,
};
