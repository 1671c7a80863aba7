/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_KERNEL_H
#define KSMSCAN_HOST_KERNEL_H

#include <stddef.h>

/* The running kernel's build and the machine as it reports them (kernel.c). */

/**
 * kernel_hz() - the running kernel's HZ (jiffies per second): CONFIG_HZ of
 * /proc/config.gz or /boot/config-RELEASE, else counted from the jiffies
 * /proc/timer_list shows over 100 ms (root only).
 *
 * Return: HZ, or 0 if it cannot be known.
 */
unsigned kernel_hz(void);

/**
 * kernel_soft_dirty() - whether the running kernel has soft-dirty bits
 * (CONFIG_MEM_SOFT_DIRTY), which pagemap shows for pages written since
 * clear_refs.
 *
 * Return: 1 yes, 0 no, -1 unknown (no configuration to read).
 */
int kernel_soft_dirty(void);

/**
 * cpu_cache_bytes() - the largest CPU cache of the first CPU (its
 * last-level cache), from sysfs; 0 if unknown.
 */
size_t cpu_cache_bytes(void);

/**
 * pipe_max_size() - the largest pipe buffer an unprivileged user may ask
 * for (/proc/sys/fs/pipe-max-size), or -1 if unknown.
 */
int pipe_max_size(void);

/**
 * reopen_stdin() - open standard input again, as a descriptor with an
 * offset of its own (/proc/self/fd/0).
 *
 * Return: the descriptor, or -1.
 */
int reopen_stdin(void);

#endif
