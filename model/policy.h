/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_POLICY_H
#define KSMSCAN_POLICY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Who sets ksmd's pages_to_scan and sleep_millisecs in a replay: a policy
 * (a tuner), one file each (fixed.c, advisor.c, ksmtuned.c, kubevirt.c),
 * which owns its settings, its state, its options and what it adds to the
 * timeline. Everything above model/ (the replay, the series driver, the
 * command line, the reports) knows a tuner only by its table of operations
 * and its flags. Adding a tuner is its file and its line in policy.c's
 * table (docs/architecture.md shows one).
 */

struct replay_params;

/* A tuner's own settings (its params struct, which only its file reads:
 * copied in and out with memcpy()), or its state between two calls
 * (zeroed at the start). */
#define TUNER_PARAMS_BYTES 96
#define TUNER_STATE_BYTES 32
struct policy_params {
	_Alignas(8) unsigned char bytes[TUNER_PARAMS_BYTES];
};
struct policy_state {
	_Alignas(8) unsigned char bytes[TUNER_STATE_BYTES];
};

/* The host a tuner that looks at its memory reads, in kB as /proc/meminfo
 * has them. */
struct policy_host {
	uint64_t total_kb;		/* MemTotal */
	uint64_t used_kb;		/* MemTotal less MemFree, Buffers and
					 * Cached, before KSM saves anything */
};

/* One of a tuner's settings as an option (cli/ makes it a row of the
 * option table, with its range error): --NAME=ARG into a uint64_t of the
 * tuner's params; JSON's parameters name it NAME with '_' for '-'. */
struct policy_knob {
	const char *name;		/* the long name, without "--" */
	const char *arg;		/* the value's name in --help */
	int duration;			/* a duration in whole seconds (60s, 2m),
					 * else a whole number */
	size_t offset;			/* the field in the tuner's params */
	double lo, hi;			/* its range */
	const char *wants;		/* words of its range error, NULL: the
					 * range's */
	const char *help;		/* --help's words */
};

/* A column a tuner adds to the timeline, after ksmd_cpu_percent: a
 * uint64_t field of struct timeline_row. */
struct policy_column {
	const char *name;
	size_t offset;			/* in struct timeline_row */
};

/* What a tuner needs from the series driver and the command line. */
enum {
	TUNER_LOOKS_AT_HOST = 1,	/* reads the host's memory (struct
					 * policy_host): --host-memory and
					 * --host-used, or live, /proc/meminfo */
	TUNER_READS_KSMD_CPU = 2,	/* its first scan counts ksmd's CPU time
					 * before the replay (live: the kernel's) */
};

struct policy_ops {
	const char *name;		/* as --policy takes it */
	const char *who;		/* who sets pages_to_scan, in a sentence
					 * ("the advisor"); NULL: the run's
					 * settings stay */
	const char *who_stops;		/* a tuner that looks: who stops KSM, in a
					 * sentence ("KubeVirt's handler") */
	unsigned flags;			/* TUNER_ bits */
	const struct policy_knob *knobs;	/* its options, in --help's order
					 * (at most TUNER_KNOBS_MAX) */
	size_t nknobs;
	const struct policy_column *columns;	/* its timeline columns */
	size_t ncolumns;
	/**
	 * defaults() - its settings before any option.
	 */
	void (*defaults)(struct policy_params *pp);
	/**
	 * start_pages() - pages_to_scan when the replay starts.
	 */
	uint64_t (*start_pages)(const struct replay_params *p);
	/**
	 * scan_end() - a full scan ended after @scan_seconds, ksmd's CPU
	 * seconds so far @cpu_seconds: the next pages_to_scan. NULL: the
	 * policy leaves it.
	 */
	uint64_t (*scan_end)(struct policy_state *st, const struct replay_params *p,
			     double scan_seconds, double cpu_seconds,
			     uint64_t pages_to_scan);
	/**
	 * look() - the tuner looks at the host's memory (@free_kb free, the
	 * guests' @committed_kb) with KSM @running or not: whether KSM runs
	 * after it, and the settings it writes. NULL: a policy without looks,
	 * which never stops KSM (then what ksmd merges depends on the order
	 * of its visits alone, never on the time).
	 */
	int (*look)(struct policy_state *st, const struct replay_params *p,
		    uint64_t free_kb, uint64_t committed_kb, int running,
		    uint64_t *pages_to_scan, uint64_t *sleep_ms);
	/** look_every() - seconds between two looks, at least 1. */
	double (*look_every)(const struct replay_params *p);
	/** first_look() - when the first look comes (KSM stopped till then). */
	double (*first_look)(const struct replay_params *p);
};

/* At most this many policies to compare in one run (--policy=a,b,...). */
#define POLICIES_MAX 8
/* At most this many tuners in policy.c's table, and knobs a tuner
 * (checked as they compile). */
#define TUNERS_MAX 8
#define TUNER_KNOBS_MAX 8
/* At most this many timeline columns a tuner. */
#define TUNER_COLUMNS_MAX 4

/**
 * policy_at() - the tuners, in their table's order (the first is the
 * default, fixed).
 * @i: from 0
 *
 * Return: the @i-th tuner's operations, NULL past the last.
 */
const struct policy_ops *policy_at(size_t i);

/**
 * policy_index() - a tuner's place in the table.
 * @ops: one of policy_at()'s
 *
 * Return: its @i, below TUNERS_MAX.
 */
size_t policy_index(const struct policy_ops *ops);

/**
 * policy_lookup() - a tuner by its name.
 * @name: the name, @len bytes (not terminated)
 * @len: its length
 *
 * Return: its operations, NULL if no tuner has that name.
 */
const struct policy_ops *policy_lookup(const char *name, size_t len);

/**
 * policy_names() - the tuners' names whose flags include @flags, as a
 * sentence lists them: "a, b or c" (@last "or") or "a and b".
 * @flags: TUNER_ bits each named tuner has (0: every tuner)
 * @last: the word before the last name
 * @buf: set to the list
 * @len: its room
 */
void policy_names(unsigned flags, const char *last, char *buf, size_t len);

/**
 * policy_set_pages() - start_pages() of the policies that start from the
 * run's --pages-to-scan (fixed, ksmtuned, kubevirt).
 * @p: the settings
 *
 * Return: p->ksm.pages_to_scan.
 */
uint64_t policy_set_pages(const struct replay_params *p);

/* The pages_to_scan column every tuner that sets it adds. */
extern const struct policy_column policy_pages_column;

#endif
