/* SPDX-License-Identifier: MIT */
/* The fixed policy: ksmd at --pages-to-scan and --sleep-ms, as set. */
#include <stddef.h>

#include "policy.h"
#include "replay.h"

uint64_t policy_set_pages(const struct replay_params *p)
{
	return p->ksm.pages_to_scan;
}

const struct policy_column policy_pages_column = {
	"pages_to_scan", offsetof(struct timeline_row, pages_to_scan),
};

const struct policy_ops fixed_policy = {
	.name = "fixed", .start_pages = policy_set_pages,
};
