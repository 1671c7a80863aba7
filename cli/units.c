/* SPDX-License-Identifier: MIT */
/*
 * --by=unit|cgroup|container|vm|process and --enable=NAME,...: groups of
 * live processes by what operators configure KSM for, handed to the engine
 * as --group's groups are (their rows are counted the same way), named by
 * their kind instead of "group:".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/units.h"
#include "../util/util.h"
#include "cli.h"

/* The deepest parent chain followed for --enable (pid namespaces nest a
 * few levels; a longer chain means a loop through reused pids). */
#define CHAIN_MAX 4096

int units_by_parse(const char *list, unsigned *mask, char *why, size_t len)
{
	*mask = 0;
	for (const char *p = list; *p; ) {
		size_t n = strcspn(p, ",");
		int k = unit_kind_lookup(p, n);

		/* A unit is the system's or a user manager's; a VM too. */
		if (k == UNIT_UNIT)
			*mask |= 1u << UNIT_USER_UNIT;
		if (k == UNIT_VM)
			*mask |= 1u << UNIT_USER_VM;
		if (k >= 0)
			*mask |= 1u << k;
		else if (n == 7 && strncmp(p, "process", 7) == 0)
			*mask |= BY_PROCESS;
		else if (n) {
			snprintf(why, len, "--by wants unit, cgroup, container, vm "
				 "or process, not '%.*s'", (int)(n > 60 ? 60 : n), p);
			return -1;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

/* The live inputs' units (an empty proc_unit for files and gone processes). */
static struct proc_unit *read_units(const struct input *inputs, size_t n,
				     unit_reader *read_unit)
{
	struct proc_unit *u = xcalloc(n ? n : 1, sizeof(*u));

	for (size_t k = 0; k < n; k++)
		if (!inputs[k].path)
			read_unit(inputs[k].pid, &u[k]);
	return u;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append a group named "@prefix@name" of the @n inputs in @members. */
static struct group *add_group(struct group **groups, size_t *ng,
			       const char *prefix, const char *name,
			       const size_t *members, size_t n)
{
	size_t len = strlen(prefix) + strlen(name) + 1;
	struct group *g;

	*groups = xreallocarray(*groups, *ng + 1, sizeof(**groups));
	g = &(*groups)[(*ng)++];
	g->name = xmalloc(len);
	snprintf(g->name, len, "%s%s", prefix, name);
	g->inputs = xcalloc(n, sizeof(*g->inputs));
	memcpy(g->inputs, members, n * sizeof(*members));
	g->ninputs = n;
	g->parts = NULL;
	g->nparts = 0;
	return g;
}

/* --by=process for the trust domains: each live input its own group,
 * "process:pid:N" (not its input's name, which names its own row). */
static void process_groups(const struct input *inputs, size_t n,
			   struct group **groups, size_t *ng)
{
	for (size_t k = 0; k < n; k++)
		if (!inputs[k].path)
			add_group(groups, ng, "process:", inputs[k].name, &k, 1);
}

/* One group per distinct name of kind @k among the inputs, in name order. */
static void groups_of_kind(enum unit_kind k, const struct proc_unit *u, size_t n,
			   struct group **groups, size_t *ng)
{
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	size_t *members = xcalloc(n ? n : 1, sizeof(*members));
	size_t nn = 0;
	char prefix[16];

	for (size_t i = 0; i < n; i++)
		if (u[i].name[k][0])
			names[nn++] = u[i].name[k];
	qsort(names, nn, sizeof(*names), cmp_str);
	snprintf(prefix, sizeof(prefix), "%s:", unit_kind_name(k));
	for (size_t i = 0; i < nn; i++) {
		size_t m = 0;

		if (i && strcmp(names[i], names[i - 1]) == 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (strcmp(u[j].name[k], names[i]) == 0)
				members[m++] = j;
		add_group(groups, ng, prefix, names[i], members, m);
	}
	free(names);
	free(members);
}

/* --by=unit with live processes none of which is in a unit (no systemd
 * here, or a container's own cgroup namespace): no rows, so say why, once. */
static void no_units_note(const struct input *inputs, const struct proc_unit *u,
			  size_t n)
{
	size_t live = 0;

	for (size_t k = 0; k < n; k++) {
		if (inputs[k].path)
			continue;
		if (u[k].name[UNIT_UNIT][0] || u[k].name[UNIT_USER_UNIT][0])
			return;
		live++;
	}
	if (live)
		warn("--by=unit: none of the %zu %s is in a systemd unit (no "
		     "systemd here?): no unit rows", live,
		     live == 1 ? "process" : "processes");
}

/* One --enable name: a kind, or -1 for "any of @by's kinds", and its name. */
struct wanted {
	int kind;
	const char *name;
	size_t len;
	int found;		/* the kind a process in the chains has it as,
				 * plus one; 0: none */
};

/* Whether a process's units hold any wanted name (marking those found). */
static int unit_wanted(const struct proc_unit *u, struct wanted *w, size_t nw,
		       unsigned by)
{
	int hit = 0;

	for (size_t i = 0; i < nw; i++)
		for (int k = 0; k < UNIT_KINDS; k++) {
			if (w[i].kind >= 0 ? k != w[i].kind : !(by >> k & 1))
				continue;
			if (strlen(u->name[k]) == w[i].len &&
			    strncmp(u->name[k], w[i].name, w[i].len) == 0) {
				w[i].found = k + 1;
				hit = 1;
			}
		}
	return hit;
}

/* Whether input @k's process or one of its ancestors is wanted. */
static int enabled(const struct input *in, const struct proc_unit *own,
		   struct wanted *w, size_t nw, unsigned by, unit_reader *read_unit)
{
	struct proc_unit u = *own;
	int hit = 0;

	for (int depth = 0; depth < CHAIN_MAX; depth++) {
		hit |= unit_wanted(&u, w, nw, by);
		if (u.ppid <= 1 || u.ppid == in->pid || read_unit(u.ppid, &u) < 0)
			break;
	}
	return hit;
}

/* Split --enable's list into @w (at most @cap names); how many. */
static size_t enable_names(const char *list, struct wanted *w, size_t cap)
{
	size_t nw = 0;

	for (const char *p = list; *p && nw < cap; ) {
		size_t n = strcspn(p, ","), kl = strcspn(p, ":");
		int k = kl < n ? unit_kind_lookup(p, kl) : -1;

		if (n)
			w[nw++] = (struct wanted){ .kind = k,
				.name = k >= 0 ? p + kl + 1 : p,
				.len = k >= 0 ? n - kl - 1 : n };
		p += n + (p[n] == ',');
	}
	return nw;
}

/* The group of --enable; -1 with @why if a name matches no process. */
static int enable_group(const char *list, unsigned by, unit_reader *read_unit,
			const struct input *inputs, const struct proc_unit *u,
			size_t n, struct group **groups, size_t *ng, char *why,
			size_t len)
{
	size_t cap = strlen(list) / 2 + 1, nw, m = 0, nl = 1;
	struct wanted *w = xcalloc(cap, sizeof(*w));
	size_t *members = xcalloc(n ? n : 1, sizeof(*members));
	char *label, **parts;
	int rc = 0;

	nw = enable_names(list, w, cap);
	parts = xcalloc(nw ? nw : 1, sizeof(*parts));
	for (size_t k = 0; k < n; k++)
		if (!inputs[k].path && enabled(&inputs[k], &u[k], w, nw, by, read_unit))
			members[m++] = k;
	for (size_t i = 0; i < nw; i++)
		nl += w[i].len + 16;
	label = xcalloc(1, nl);
	for (size_t i = 0; i < nw && rc == 0; i++) {
		if (!w[i].found) {
			snprintf(why, len, "--enable: no process is in a unit named "
				 "'%.*s'", (int)(w[i].len > 60 ? 60 : w[i].len), w[i].name);
			rc = -1;
		}
		/* Canonical names: the kind says which settings apply. The
		 * label is for people; the names go apart, whole, in parts. */
		parts[i] = xmalloc(w[i].len + 16);
		snprintf(parts[i], w[i].len + 16, "%s:%.*s",
			 unit_kind_name(w[i].kind >= 0 ? w[i].kind :
					w[i].found ? w[i].found - 1 : 0),
			 (int)w[i].len, w[i].name);
		snprintf(label + strlen(label), nl - strlen(label), "%s%s",
			 i ? "+" : "", parts[i]);
	}
	if (rc == 0 && !nw) {
		snprintf(why, len, "%s", "--enable wants a unit's name");
		rc = -1;
	} else if (rc == 0 && !m) {
		snprintf(why, len, "--enable %s: none of the inputs runs in it or "
			 "below it", label);
		rc = -1;
	}
	if (rc == 0) {
		struct group *g = add_group(groups, ng, "enable:", label, members, m);

		g->parts = parts;
		g->nparts = nw;
	} else {
		for (size_t i = 0; i < nw; i++)
			free(parts[i]);
		free(parts);
	}
	free(label);
	free(members);
	free(w);
	return rc;
}

int units_groups(unsigned by, const char *enable, unit_reader *read_unit,
		 const struct input *inputs, size_t ninputs,
		 struct group **groups, size_t *n, char *why, size_t len)
{
	struct proc_unit *u;
	int rc = 0;

	if (!by && !enable)
		return 0;
	u = read_units(inputs, ninputs, read_unit);
	for (int k = 0; k < UNIT_KINDS; k++)
		if (by >> k & 1)
			groups_of_kind((enum unit_kind)k, u, ninputs, groups, n);
	if (by & BY_PROCESS)
		process_groups(inputs, ninputs, groups, n);
	if (by >> UNIT_UNIT & 1)
		no_units_note(inputs, u, ninputs);
	by &= ~BY_PROCESS;
	if (enable)
		rc = enable_group(enable, by ? by : (1u << UNIT_KINDS) - 1,
				  read_unit, inputs, u, ninputs, groups, n, why, len);
	free(u);
	return rc;
}
