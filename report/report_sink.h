/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPORT_SINK_H
#define KSMSCAN_REPORT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "../host/process.h"
#include "../scan/pagerec.h"
#include "../scan/sink.h"
#include "report.h"

/*
 * What the reports of -r share (report_sink.c): each is a sink (scan/sink.h)
 * whose state begins with a struct report_sink; those that print after the
 * scan keep each scope's figures (a scope sink), those of live pages keep
 * the pages (a recs sink).
 */

/* The first member of every report's state (container_of style): the sink
 * the engine calls, and the setup the report prints with. */
struct report_sink {
	struct sink sink;
	const struct report_setup *rs;
};

/**
 * report_sink_new() - a report's zeroed state, its struct report_sink set.
 * @size: the state's size; its first member is a struct report_sink
 * @ops: the report's hooks
 * @rs: the report's setup
 *
 * Return: the state (free() it); ends the program if memory is out. It
 * points to its first member's sink too, so a create() may return it as
 * the struct sink *.
 */
void *report_sink_new(size_t size, const struct sink_ops *ops,
		      const struct report_setup *rs);

/* A scope's figures, kept for reports printed after the scan. */
struct scope_copy {
	const char *name;		/* the input's name, or "*" */
	const char *format;		/* as in struct scope */
	int all;			/* the scope of all inputs */
	size_t input_no;		/* an input's number (as in struct scope) */
	enum scope_status status;	/* how completely it was read */
	char *why;			/* its first error, or NULL */
	struct figures f;
	int group;			/* a --group's scope */
	uint64_t shared_bytes;		/* a group's: saved only together with
					 * the other inputs (struct scope) */
	struct proc_stats proc;		/* a live process's KSM state (valid 0
					 * for files, "*" and groups) */
	double seconds_to_90;		/* a series' row: when pages_sharing
					 * first reached 90% of its last value */
	size_t nsnaps, scans;		/* a series' row: snapshots (0 for other
					 * rows), full scans */
	double seconds;			/* a series' row: its replay's length */
	double cpu_mean, cpu_peak;	/* a series' row: ksmd's CPU over the
					 * replay (ksmd_cpu_mean(), _peak()) */
};

/* A sink that keeps every scope's figures and prints them after the scan. */
struct scope_sink {
	struct report_sink r;		/* first: its sink and its setup */
	struct scope_copy *rows;	/* the scopes in order, "*" last */
	size_t nrows;
};

/**
 * scope_sink_new() - a sink that keeps the scopes' figures.
 * @rs: the report's setup
 * @ops: its hooks: scope_sink_scope(), scope_sink_free() and its print()
 */
struct sink *scope_sink_new(const struct report_setup *rs,
			    const struct sink_ops *ops);

/** scope_sink_scope() - the scope() hook of a scope sink: keep a copy. */
void scope_sink_scope(struct sink *s, const struct scope *sc);

/**
 * scope_sink_series() - the series() hook of a scope sink: keep the last
 * snapshot's scope, with the replay's figures, as the series' row.
 */
void scope_sink_series(struct sink *s, const struct series_result *r);

/** scope_sink_free() - the free() hook of a scope sink. */
void scope_sink_free(struct sink *s);

/* The first members of the thp and numa reports' states. */
struct recs_sink {
	struct report_sink r;
	struct page_recs recs;
};

/**
 * recs_sink_page() - their page() hook: record each page of a live process.
 * @s: the sink, whose state begins with a struct recs_sink
 * @pg: the page
 */
void recs_sink_page(struct sink *s, const struct page_event *pg);

/** any_process() - whether any input of the run is a live process. */
int any_process(const struct scan_config *cfg);

struct domains;

/**
 * report_domains() - the trust domains of the exposure and mitigations
 * reports, from the run's --groups and --known files (scan/domains.h).
 * @d: zeroed
 * @rs: the report's setup; an unreadable --known file sets *rs->failed
 */
void report_domains(struct domains *d, const struct report_setup *rs);

/**
 * for_people() - whether a report is printed for people: a table
 * (WRITER_PEOPLE) without -l. Its columns need not ask (the writer applies
 * their people view); what a report says besides them does: sentences,
 * fewer rows.
 * @rs: the report's setup
 */
int for_people(const struct report_setup *rs);

/**
 * hz_note() - under a table for people whose times follow ksmd's wake-ups
 * (a series' replay), a note naming the HZ they assume and where it comes
 * from: this kernel's, --hz, or neither when this kernel's cannot be read.
 * Nothing for other outputs or without a series.
 * @rs: the report's setup (its series' hz)
 */
void hz_note(const struct report_setup *rs);

/**
 * enable_marking() - how to mark one --enable name's processes mergeable,
 * for the summary's --enable row and -r advise: the systemd command, every
 * word quoted for sh and "--" before the name, so that no name reads as an
 * option, and what else does it (a drop-in, QEMU's mem-merge, prctl).
 * @part: the name as --enable's group keeps it, "KIND:NAME" whole
 * @hint: set to the sentence of other ways (always)
 * @len: size of @hint
 *
 * Return: the command (free() it), or NULL for a kind that has none.
 */
char *enable_marking(const char *part, char *hint, size_t len);

#endif
