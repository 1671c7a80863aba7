/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the reader of --record's files (scan/record.c):
 * arbitrary bytes as a record's uncompressed data, compressed and given a
 * record's header here so that the fuzzer works on the fields themselves.
 * What it accepts holds together (ids, address indexes and the order of
 * contents in range) and replays without a fault for a few full scans;
 * what it refuses says why; and written back, it reads back the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../model/replay.h"
#include "../scan/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file with a record's header and @data, compressed, as its body. */
static int write_record(const uint8_t *data, size_t size, char *path)
{
	size_t bound = ZSTD_compressBound(size), n;
	unsigned char *z = malloc(bound + 16);
	int fd = mkstemp(path);

	memcpy(z, RECORD_MAGIC, RECORD_MAGIC_LEN);
	memcpy(z + RECORD_MAGIC_LEN, (unsigned char[]){ RECORD_VERSION, 2, 0, 0 }, 4);
	n = ZSTD_compress(z + 16, bound, data, size, 1);
	if (fd < 0 || ZSTD_isError(n) || write(fd, z, n + 16) != (ssize_t)(n + 16))
		abort();
	close(fd);
	free(z);
	return 0;
}

/* Whether two records' series are the same, field by field. */
static int same(const struct record *a, const struct record *b)
{
	size_t n = a->ncontents;

	if (n != b->ncontents || a->naddr != b->naddr || a->nsnaps != b->nsnaps ||
	    a->zero_id != b->zero_id || a->zero_sum != b->zero_sum ||
	    memcmp(a->head, b->head, n * sizeof(*a->head)) ||
	    memcmp(a->sum, b->sum, n * sizeof(*a->sum)) ||
	    memcmp(a->lcp, b->lcp, n * sizeof(*a->lcp)) ||
	    memcmp(a->addr, b->addr, a->naddr * sizeof(*a->addr)) ||
	    memcmp(a->at, b->at, a->nsnaps * sizeof(*a->at)))
		return 0;
	for (size_t s = 0; s < a->nsnaps; s++)
		if (a->snaps[s].n != b->snaps[s].n ||
		    memcmp(a->snaps[s].addr_no, b->snaps[s].addr_no,
			   a->snaps[s].n * sizeof(uint32_t)) ||
		    memcmp(a->snaps[s].id, b->snaps[s].id, a->snaps[s].n * sizeof(uint32_t)))
			return 0;
	return 1;
}

/* What the reader accepts, the writer writes and the reader reads back
 * the same (a read record's ids are its places: the rank is the identity). */
static void round_trip(struct record *rec)
{
	char path[] = "/tmp/fuzz_record.XXXXXX";
	char why[300];
	struct record again;
	int fd = mkstemp(path), ok;

	if (fd < 0)
		abort();
	close(fd);
	rec->rank = calloc(rec->ncontents + 1, sizeof(*rec->rank));
	for (size_t k = 0; k < rec->ncontents; k++)
		rec->rank[k] = (uint32_t)k;
	ok = record_write(rec, path) == 0 &&
	     record_read(path, &again, why, sizeof(why)) == 0;
	unlink(path);
	if (!ok || !same(rec, &again))
		abort();
	record_free(&again);
	free(rec->rank);
	rec->rank = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_record.XXXXXX";
	char why[300];
	struct record rec;
	struct timeline_row *rows;
	int cut, ok;

	write_record(data, size, path);
	ok = record_read(path, &rec, why, sizeof(why)) == 0;
	unlink(path);
	if (!ok) {
		if (!why[0])
			abort();	/* refused: a reason */
		record_free(&rec);
		return 0;
	}
	round_trip(&rec);
	struct series sr = { .naddr = rec.naddr, .addr = rec.addr,
			     .nsnaps = rec.nsnaps, .snaps = rec.snaps,
			     .sum = rec.sum, .head = rec.head,
			     .zero_id = rec.zero_id, .zero_sum = rec.zero_sum,
			     .compare = record_compare, .ctx = &rec, .at = rec.at,
			     .thp = rec.thp, .nthp = rec.nthp, .out_id = NO_ID,
			     .delta = rec.delta };
	struct replay_params p = { .ksm = rec.ksm, .scans = 3, .interval = 1,
				   .policy = policy_lookup("fixed", 5) };

	free(rows = NULL);
	replay_run(&sr, &p, &rows, &cut);
	free(rows);
	record_free(&rec);
	return 0;
}
