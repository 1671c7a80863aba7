/* SPDX-License-Identifier: MIT */
/* The policies by name and number (policy.h). */
#include "policy.h"

const struct policy_ops *policy_ops(enum policy p)
{
	static const struct policy_ops *const all[] = {
		[POLICY_FIXED] = &fixed_policy, [POLICY_ADVISOR] = &advisor_policy,
		[POLICY_KSMTUNED] = &ksmtuned_policy,
		[POLICY_KUBEVIRT] = &kubevirt_policy,
	};

	return all[p];
}

const char *policy_name(enum policy p)
{
	return policy_ops(p)->name;
}
