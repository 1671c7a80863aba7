/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_KSM_H
#define KSMSCAN_HOST_KSM_H

#include <stddef.h>
#include <stdint.h>

/* KSM as the running kernel reports it (ksm.c). */

/* The directory of KSM's settings and figures; the reports name it too, in
 * the commands they print, so that it is spelt once. */
#define KSM_SYSFS_DIR "/sys/kernel/mm/ksm"

/**
 * ksm_run_value() - /sys/kernel/mm/ksm/run: 1 ksmd runs, 0 stopped, 2
 * unmerging; -1 if the kernel has no KSM.
 */
int ksm_run_value(void);

/**
 * ksm_sysfs() - a figure or setting of /sys/kernel/mm/ksm.
 * @name: the file, as "full_scans"
 * @value: set to its value (a negative general_profit reads as 0: give
 *	ksm_sysfs_signed() for that one)
 *
 * Return: 0, or -1 if the kernel has no such file.
 */
int ksm_sysfs(const char *name, uint64_t *value);

/**
 * ksm_sysfs_signed() - ksm_sysfs() of a signed figure (general_profit).
 * @name: the file
 * @value: set to its value
 *
 * Return: 0, or -1 if the kernel has no such file.
 */
int ksm_sysfs_signed(const char *name, int64_t *value);

/**
 * ksm_advisor_on() - whether /sys/kernel/mm/ksm/advisor_mode is scan-time.
 *
 * Return: 1 if so, 0 if not, -1 if the kernel has no advisor (before 6.9).
 */
int ksm_advisor_on(void);

/**
 * ksm_merging_elsewhere() - the pages KSM has merged in processes other than
 * some (ksm_merging_pages of every other process).
 * @skip: the pids left out
 * @nskip: how many
 * @procs: set to the processes with merged pages counted
 *
 * Return: their pages.
 */
uint64_t ksm_merging_elsewhere(const int *skip, size_t nskip, size_t *procs);

/**
 * ksmd_cpu_seconds() - the CPU time ksmd has run since boot
 * (/proc/PID/schedstat of the kernel thread named ksmd), 0 if unknown.
 */
double ksmd_cpu_seconds(void);

#endif
