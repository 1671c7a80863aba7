/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_FORECAST_H
#define KSMSCAN_FORECAST_H

#include <stddef.h>
#include <stdint.h>

#include "../host/process.h"

/*
 * A forecast read back (--check): the JSON a live series wrote (-p PID...
 * --count=N -o json), and the kernel's figures now, to compare them with.
 */

/* The largest forecast file read: a series of a million full scans writes
 * about 300 MB; the tree of values takes several times the file. */
#define FORECAST_BYTES_MAX (UINT64_C(256) << 20)

/* The most memory the JSON parser may take for one forecast, whatever the
 * file's shape (a file of small objects costs many times its size). */
#define FORECAST_PARSER_MAX ((size_t)256 << 20)

/* The most processes a forecast names: a live series' bound. */
#define FORECAST_PROCS_MAX 64

/* /sys/kernel/mm/ksm at one full scan of the forecast (its timeline). */
struct forecast_scan {
	uint64_t scan;			/* from 1; 0 is before the first */
	uint64_t pages_shared, pages_sharing, ksm_zero_pages;
	int64_t general_profit;
};

/* One process of the forecast (its processes report). */
struct forecast_proc {
	char input[32];			/* "pid:N" */
	int pid;
	double start_time;		/* /proc/PID/stat starttime, clock ticks */
	uint64_t scan;			/* the full scan its figures are at */
	struct proc_ksm_stat ksm;	/* what ksm_stat should read then */
};

/* KSM's settings a forecast replayed, or the kernel's now. */
struct forecast_settings {
	uint64_t pages_to_scan, sleep_ms, use_zero_pages, max_page_sharing,
		 smart_scan;
	char policy[16];		/* fixed, advisor, ksmtuned, kubevirt */
};

/* What a forecast file holds. */
struct forecast {
	uint64_t full_scans;		/* the kernel's as the series began */
	struct forecast_settings set;
	struct forecast_scan *scans;	/* scans[k] is full scan k (scans[0]
					 * all zero), k to nscans - 1 */
	size_t nscans;
	struct forecast_proc *procs;
	size_t nprocs;
};

/* Why a process of the forecast has no actual figure. */
enum proc_gone {
	PROC_THERE = 0,		/* it has one */
	PROC_EXITED = 1,	/* it has exited */
	PROC_OTHER = 2,		/* its pid is another process's now (a later
				 * start) */
	PROC_UNREADABLE = 3,	/* it runs, but this user may not read its
				 * ksm_stat */
};

/* The kernel now, for a forecast. */
struct forecast_actual {
	uint64_t full_scans;
	struct forecast_scan now;	/* its counters (scan unset) */
	struct forecast_settings set;	/* its settings (policy: "advisor"
					 * when advisor_mode is scan-time) */
	struct proc_ksm_stat *procs;	/* per process of the forecast */
	int *gone;			/* ... 0 or why there is no figure:
					 * enum proc_gone */
	uint64_t elsewhere;		/* pages merged in other processes */
	size_t elsewhere_procs;		/* ... how many */
};

/**
 * forecast_read() - read a forecast from a file.
 * @path: the file
 * @f: filled in (forecast_free() it)
 * @why: on failure, what is wrong, with the offset if the JSON itself is
 *	malformed
 * @len: size of @why
 *
 * Return: 0, or -1 if the file cannot be read or is not the JSON of a live
 * series (@f is then empty).
 */
int forecast_read(const char *path, struct forecast *f, char *why, size_t len);

/**
 * forecast_parse() - forecast_read() of a file's bytes.
 * @buf: the bytes (JSON; need not end in a NUL)
 * @n: how many
 * @f: filled in (forecast_free() it)
 * @why: on failure, what is wrong
 * @len: size of @why
 *
 * Return: 0, or -1 if the bytes are not the JSON of a live series.
 */
int forecast_parse(const char *buf, size_t n, struct forecast *f, char *why,
		   size_t len);

/**
 * forecast_actual() - read the kernel's figures a forecast is compared with.
 * @f: the forecast (its processes)
 * @a: filled in (forecast_actual_free() it)
 *
 * Return: 0, or -1 if this kernel has no KSM.
 */
int forecast_actual(const struct forecast *f, struct forecast_actual *a);

/** forecast_free() - free what forecast_read() allocated. */
void forecast_free(struct forecast *f);

/** forecast_actual_free() - free what forecast_actual() allocated. */
void forecast_actual_free(struct forecast_actual *a);

#endif
