/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_H
#define KSMSCAN_HOST_H

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The live host (host/): everything ksmscan reads from the running kernel,
 * /proc and /sys, goes through these few functions. Each takes the path as
 * the kernel names it ("/proc/%d/smaps") and reads it below one root: "/"
 * normally, or the folder $KSMSCAN_HOST_ROOT names, so that the tests can
 * run the doctor, the units, the KSM figures and the process reads on a
 * tree of files they wrote. Nothing else in ksmscan spells a /proc or /sys
 * path (tests/test_layers.py checks it).
 */

/**
 * host_root() - the folder that stands for "/": $KSMSCAN_HOST_ROOT, or ""
 * for the real host. Read once.
 */
const char *host_root(void);

/**
 * host_path() - a kernel path below the root.
 * @buf: set to the path
 * @len: its size
 * @fmt: printf format of the path as the kernel names it
 *
 * Return: @buf (a path too long for @buf names no file: "").
 */
char *host_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * host_fopen() - fopen() a kernel file for reading (close-on-exec).
 * @fmt: printf format of its path
 *
 * Return: the stream, or NULL with errno set.
 */
FILE *host_fopen(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * host_open() - open() a kernel file read-only (close-on-exec).
 * @fmt: printf format of its path
 *
 * Return: the descriptor, or -1 with errno set.
 */
int host_open(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * host_opendir() - opendir() a kernel folder ("/proc").
 * @path: its path as the kernel names it
 */
DIR *host_opendir(const char *path);

/**
 * host_read_int() - the number a one-number file holds (a sysctl, a sysfs
 * knob).
 * @fmt: printf format of its path
 *
 * Return: the number, or -1 if the file cannot be read.
 */
int host_read_int(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
