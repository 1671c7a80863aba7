/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_CLI_H
#define KSMSCAN_CLI_H

#include <stddef.h>

#include "../scan/group.h"

/*
 * The front end's pieces that ksmscan.c calls while it turns the command
 * line into a struct scan_config: here, --group's values into groups.
 */

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

#endif
