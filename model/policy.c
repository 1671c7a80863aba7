/* SPDX-License-Identifier: MIT */
/* The table of tuners (policy.h): one line each, the default first. */
#include <stdio.h>
#include <string.h>

#include "policy.h"

/* The tuners, each in its own file. */
extern const struct policy_ops fixed_policy, advisor_policy, ksmtuned_policy,
	kubevirt_policy;

static const struct policy_ops *const all[] = {
	&fixed_policy, &advisor_policy, &ksmtuned_policy, &kubevirt_policy,
};

#define NPOLICIES (sizeof(all) / sizeof(all[0]))
_Static_assert(NPOLICIES <= TUNERS_MAX, "raise TUNERS_MAX");

const struct policy_ops *policy_at(size_t i)
{
	return i < NPOLICIES ? all[i] : NULL;
}

size_t policy_index(const struct policy_ops *ops)
{
	size_t i = 0;

	while (i + 1 < NPOLICIES && all[i] != ops)
		i++;
	return i;
}

const struct policy_ops *policy_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < NPOLICIES; i++)
		if (strlen(all[i]->name) == len &&
		    strncmp(all[i]->name, name, len) == 0)
			return all[i];
	return NULL;
}

void policy_names(unsigned flags, const char *last, char *buf, size_t len)
{
	size_t n = 0, k = 0, at = 0;

	for (size_t i = 0; i < NPOLICIES; i++)
		n += (all[i]->flags & flags) == flags;
	buf[0] = '\0';
	for (size_t i = 0; i < NPOLICIES && at < len; i++) {
		if ((all[i]->flags & flags) != flags)
			continue;
		k++;
		at += (size_t)snprintf(buf + at, len - at, "%s%s%s%s",
				       k == 1 ? "" : k < n ? ", " : " ",
				       k > 1 && k == n ? last : "",
				       k > 1 && k == n ? " " : "", all[i]->name);
	}
}
