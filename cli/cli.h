/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_CLI_H
#define KSMSCAN_CLI_H

#include <stddef.h>

#include "../host/units.h"
#include "../scan/group.h"

/*
 * The front end's pieces that the rules between options (setup.c) call
 * while the command line becomes a struct scan_config: --group's values
 * into groups (groups.c), --by and --enable into groups of live processes
 * by unit, cgroup, container or VM (units.c); and -V's text (version.c).
 * The table of options itself is optable.h, the prefs options.h.
 */

/**
 * names_closest() - the name of the @n candidates that @name is likely a
 * typo of (an edit distance of at most 2, and less than half its length),
 * as -r, -a, -c and the options' names guess.
 * @name: the name typed
 * @len: its length
 * @candidate: the candidates' names, by index
 * @n: how many
 *
 * Return: the closest candidate, or NULL.
 */
const char *names_closest(const char *name, size_t len,
			  const char *(*candidate)(size_t), size_t n);

/**
 * group_parse() - read one --group value.
 * @spec: "NAME=INPUT[,INPUT...]", each INPUT an input's name as reported
 *	(a path as given, "-", or "pid:N"); an input named twice in the run
 *	is taken with every input of that name
 * @inputs: the run's inputs
 * @ninputs: how many
 * @g: filled in; free it with group_free()
 * @why: on failure, what is wrong (at most @len bytes)
 * @len: size of @why
 *
 * Return: 0, or -1 (nothing to free).
 */
int group_parse(const char *spec, const struct input *inputs, size_t ninputs,
		struct group *g, char *why, size_t len);

/**
 * group_free() - free what group_parse() allocated.
 * @g: the group
 */
void group_free(struct group *g);

/**
 * groups_domains() - check that groups can be trust domains: two or more,
 * and every input in exactly one of them.
 * @g: the groups
 * @n: how many
 * @inputs: the run's inputs
 * @ninputs: how many
 * @why: on failure, what is wrong and how to name domains (at most @len bytes)
 * @len: size of @why
 *
 * Return: 0, or -1.
 */
int groups_domains(const struct group *g, size_t n, const struct input *inputs,
		   size_t ninputs, char *why, size_t len);

/* --by=process: each process its own trust domain (the bit after the
 * kinds of enum unit_kind). */
#define BY_PROCESS (1u << UNIT_KINDS)

/**
 * units_by_parse() - read --by's value: a comma list of unit, cgroup,
 * container, vm and process (process: the inputs' own rows, which are
 * there anyway, and each process its own trust domain).
 * @list: the value
 * @mask: set to a bit per enum unit_kind (host/units.h) named (unit
 *	names user-unit too, vm user-vm), and BY_PROCESS
 * @why: on failure, what is wrong (at most @len bytes)
 * @len: size of @why
 *
 * Return: 0, or -1.
 */
int units_by_parse(const char *list, unsigned *mask, char *why, size_t len);

/* What a process belongs to and its parent, as host/'s unit_read() reads
 * it from /proc: handed in (struct host_facts), so that the rules between
 * options read no kernel themselves. 0, or -1 if the process is gone. */
typedef int unit_reader(int pid, struct proc_unit *u);

/**
 * units_groups() - the groups of --by and --enable, appended to @groups:
 * for each kind in @by, one group per name the live inputs belong to
 * ("unit:NAME", "cgroup:PATH", "container:ID", "vm:NAME"), in name order;
 * with BY_PROCESS one group "process:pid:N" per live input (for the trust
 * domains: the caller passes it only then); with a kind "unit" and no
 * input in any unit, one warning that says so;
 * then with @enable one group "enable:KIND:NAME+..." of the live inputs
 * that would be mergeable if only those units were: their processes and
 * every descendant (PR_SET_MEMORY_MERGE is inherited across fork), found
 * by walking each input's parents; the group's parts hold each name whole.
 * @by: a bit per enum unit_kind, and BY_PROCESS
 * @enable: --enable's comma list of names, each "KIND:NAME" or a NAME of
 *	the --by kinds (of any kind without --by); or NULL
 * @read_unit: reads a live process's units and parent
 * @inputs: the run's inputs (files are in no unit)
 * @ninputs: how many
 * @groups: the array, grown with xreallocarray()
 * @n: its entries, increased
 * @why: on failure, what is wrong (at most @len bytes)
 * @len: size of @why
 *
 * Return: 0, or -1 (a name no input belongs to).
 */
int units_groups(unsigned by, const char *enable, unit_reader *read_unit,
		 const struct input *inputs, size_t ninputs,
		 struct group **groups, size_t *n, char *why, size_t len);

/**
 * print_version() - -V: the version, what it was built with, and the
 * checksum paths this CPU runs, within 80 columns (version.c).
 */
void print_version(void);

#endif
