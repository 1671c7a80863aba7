/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_RECORD_H
#define KSMSCAN_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "../host/process.h"
#include "../model/replay.h"
#include "forked.h"
#include "tally.h"

/*
 * --record=FILE: a series as the replay and its reports take it, in one
 * zstd-compressed file that any user reads back on any machine (README,
 * "Recording a series"). Contents are ids: each has KSM's checksum (as
 * read back, a stand-in equal where the checksums are, which is all
 * ksmd's test of a changed page asks), its first 8 bytes and its place in
 * memcmp order with the common prefix it shares with the next, which is
 * all the replay's trees ask of bytes (compare()). Pages
 * are (address, content id) per snapshot; the host's facts the replay
 * uses (HZ, the checksum's and memcmp's cost here, ksmd's lateness, its
 * CPU so far, memory) are kept, so the figures do not move.
 */

/* The first bytes of a record. */
#define RECORD_MAGIC "KSMSCANREC\n\032"
#define RECORD_MAGIC_LEN 12
/* The format's version, the byte after the magic: a record of another
 * version is refused, naming both (docs/over-time.md, "A record"). */
#define RECORD_VERSION 2

/* A recorded series, as written and as read back. */
struct record {
	int live;			/* from -p PID --count (else files) */
	size_t nprocs, nsnaps;		/* inputs: nsnaps x nprocs */
	char **names;			/* each input's name */
	int *pids;			/* ... its pid (live), else 0 */
	double start[64];		/* per process: its start time, ticks */
	char command[64][64];		/* ... its command (/proc/PID/comm) */
	/* the host's facts */
	unsigned hz, cpus;
	uint64_t mem_kb;		/* MemTotal */
	char kernel[65];		/* uname -r */
	struct ksm_params ksm;		/* the settings the run replayed */
	double interval, page_seconds, revisit_seconds, merge_seconds;
	double wake_seconds;		/* ksmd's time per wake-up */
	double ns_per_page, ns_per_byte;	/* as the replay charged them */
	double hash_seconds;		/* the checksum's time, all snapshots */
	uint64_t hashed;		/* ... its pages */
	double late[64];		/* ksmd's lateness measured here */
	size_t nlate;
	double ksmd_cpu;		/* ksmd's CPU seconds as the replay began */
	uint64_t host_total_kb, host_used_kb;	/* the tuners' host */
	int64_t ksm_full_scans;		/* the kernel's full_scans, -1: none */
	/* the series */
	size_t naddr;
	uint64_t *addr;
	struct snapshot *snaps;		/* nsnaps */
	int delta;			/* snaps are deltas (series.delta):
					 * written in full; read back, always */
	double *at;			/* per snapshot, from the first */
	size_t ncontents;
	uint32_t *sum;
	uint64_t *head;
	uint32_t *rank;			/* per content: its place in memcmp order
					 * (as written; read back, ids are
					 * places and this is NULL) */
	uint16_t *lcp;			/* per place: the common prefix with the
					 * next one's content */
	uint16_t *rmq;			/* lcp's minima over 2^k places */
	unsigned levels;
	uint32_t zero_id, zero_sum;
	/* what the series row says */
	struct figures *figs;		/* per snapshot */
	char format[32];
	int status;			/* enum scope_status */
	char why[300];			/* "" for none */
	int has_proc;
	struct proc_stats proc;
	uint64_t mergeable;
	int marks_read;
	struct forked_snap *frames;	/* per snapshot (live), framed 0: none */
	uint32_t *thp;			/* per address: its transparent huge page
					 * as the replay began (below nthp, in
					 * address order), NO_ID: none; NULL
					 * when the series had none */
	size_t nthp;
	uint64_t *keep;			/* per snapshot (live): a bit per process
					 * ksmd scans (marked mergeable, or named
					 * by --enable), as -r advise took it */
};

/**
 * record_order() - give a record's contents their memcmp order (rank, lcp)
 * from their bytes, as it is written.
 * @rec: the record, its contents' heads set
 * @bytes: content @id's 4096 bytes
 * @ctx: for @bytes
 */
void record_order(struct record *rec,
		  const unsigned char *(*bytes)(const void *ctx, uint32_t id),
		  const void *ctx);

/**
 * record_write() - write a record to @path.
 * @rec: the record (record_order() done)
 * @path: the file
 *
 * Return: 0, or -1 (said on stderr).
 */
int record_write(const struct record *rec, const char *path);

/**
 * record_is() - whether @path begins with a record's magic.
 * @path: a file
 *
 * Return: 1 for a record of a live series, 2 for one of files, else 0.
 */
int record_is(const char *path);

/**
 * record_read() - read a record back, checking every count and id against
 * the file (a truncated, corrupt or hostile one is refused).
 * @path: the file
 * @rec: filled in (record_free() it)
 * @why: set to what is wrong and where, on failure
 * @len: its size
 *
 * Return: 0, or -1.
 */
int record_read(const char *path, struct record *rec, char *why, size_t len);

/**
 * record_compare() - a read record's compare() for struct series: the
 * order of the contents' places, and the least common prefix between them.
 * @ctx: the record
 * @a: a content id
 * @b: another
 * @common: set to their common prefix
 *
 * Return: <0, 0 or >0 as memcmp() of their bytes.
 */
int record_compare(const void *ctx, uint32_t a, uint32_t b, size_t *common);

/**
 * record_free() - free what a record holds.
 * @rec: the record
 */
void record_free(struct record *rec);

#endif
