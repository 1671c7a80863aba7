/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SINK_H
#define KSMSCAN_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "../dump/dump.h"
#include "../hash/hash.h"
#include "index.h"
#include "tally.h"

/*
 * A sink is what the engine hands its results to: a report, in report/. The
 * engine knows no report; it calls each sink's hooks in the order the sinks
 * were given, and a sink asks for only what it needs (the summary scan asks
 * for no page at all, so it makes no call per page).
 */

/* What a sink needs of the engine, as bits of sink_ops.needs. */
enum {
	SINK_PAGES = 1 << 0,	/* page() for every page counted, in scan order */
	SINK_KEPT = 1 << 1,	/* page_event.kept readable during page() (the
				 * spool is written before each call: slower) */
	SINK_GROUPS = 1 << 2,	/* scope() for each --group as well, after "*" */
	SINK_SNAPSHOTS = 1 << 3,	/* with --series, the snapshots as inputs
					 * too (page(), scope()), not only series() */
};

/*
 * Which selected algorithm stands for KSM's own page checksum: the first that
 * -a names (xxhash by default, as in the kernel since Linux 6.1). The ksmd
 * replay, the tree model and the reports about KSM's checksum use it.
 */
#define KSM_CHECKSUM 0

/* One page as the engine counted it. */
struct page_event {
	const char *input;		/* the input's name */
	size_t input_no;		/* its number, from 0 */
	uint64_t address;		/* the page's address */
	const unsigned char *bytes;	/* the page, valid during the call */
	const unsigned char *kept;	/* the content's bytes as the index keeps
					 * them (valid as long as the scan; read
					 * them only with SINK_KEPT) */
	const struct digest *digests;	/* one per selected algorithm */
	const struct region *region;	/* valid until the input's scope ends */
	const void *prep;		/* what this sink's prepare() made of the
					 * page, or NULL: the content was not new
					 * to the input (nor the zero page) */
	uint32_t id;			/* the content's id in the index */
	uint64_t frame;			/* a live page's frame key (frames.h:
					 * equal for pages on one frame), or 0 */
	uint64_t thp;			/* the transparent huge page the page is
					 * part of: equal for its subpages (a
					 * live page's: its frame's 2 MiB; a
					 * file's with --thp=always: its 2 MiB of
					 * addresses), 0 for none */
	int zero;			/* all bytes zero */
	int seen;			/* the content occurred earlier in the input */
};

struct frames;

/* How completely a scope was read. */
enum scope_status {
	SCOPE_OK,		/* every input read to its end */
	SCOPE_PARTIAL,		/* read with errors; the figures are of what was read */
	SCOPE_FAILED,		/* nothing could be read */
};

/*
 * What has been counted: one input, or all inputs together ("*", after the
 * last input, when there are several). Valid only during the call.
 */
struct scope {
	const char *name;		/* the input's name, or "*" */
	const char *format;		/* the reader's name; "-" if the input
					 * could not be opened; for "*" the
					 * inputs' common format or "mixed" */
	size_t input_no;		/* the input's number; ninputs for "*" */
	int all;			/* 1 for "*" */
	const struct figures *f;	/* the KSM figures of the scope */
	const struct index *ix;		/* the contents: count them with
					 * index_count(ix, id, !all) */
	enum scope_status status;	/* "*": the worst of the inputs', but
					 * partial when some were read */
	const char *why;		/* the first error, as printed, or NULL */
	int group;			/* a --group (SINK_GROUPS only): name is
					 * "group:NAME", all is 1, and only f
					 * holds its figures (the index counts
					 * no group) */
	uint64_t shared_bytes;		/* a group: what it saves only together
					 * with the other inputs: the saving of
					 * all, less its own and theirs */
	struct frames *frames;		/* "*" of live processes: their pages'
					 * frames (scan/frames.h), to count
					 * other scopes by frame; else NULL */
	const struct proc_stats *proc;	/* a live process's KSM state now;
					 * a group's: its processes' summed;
					 * NULL for files, "*" and groups of
					 * no live process */
};

struct sink;
struct series_result;

/* The hooks of a sink; any may be NULL. */
struct sink_ops {
	unsigned needs;			/* SINK_* bits */
	size_t prep_bytes;		/* what prepare() writes per page */
	/**
	 * prepare() - work on a page in the hashing threads, once per
	 * content new to the input (zero pages excepted), before page();
	 * @thread is the caller's number, 0 to the run's threads - 1.
	 */
	void (*prepare)(struct sink *s, unsigned thread,
			const unsigned char *page, void *out);
	/** page() - one page counted (SINK_PAGES), main thread, scan order. */
	void (*page)(struct sink *s, const struct page_event *pg);
	/** scope() - an input (then, with several, all of them) is counted. */
	void (*scope)(struct sink *s, const struct scope *sc);
	/**
	 * series() - with --series, instead of scope(): the snapshots were
	 * replayed through ksmd (valid only during the call).
	 */
	void (*series)(struct sink *s, const struct series_result *r);
	/** print() - the scan is over: print the report through its writer. */
	void (*print)(struct sink *s);
	/** free() - free the sink. */
	void (*free)(struct sink *s);
};

/* A sink: a report's state begins with one (container_of style). */
struct sink {
	const struct sink_ops *ops;
	/* Set by page() to stop the run: what would go wrong if it went on
	 * (a bound of the sink's own memory). The engine reports it at the
	 * page it came at, reads no further, and the run's status is 1. */
	const char *stop;
};

#endif
