/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the reader of --record's files (scan/record.c):
 * arbitrary bytes as a record's uncompressed data, compressed and given a
 * record's header here so that the fuzzer works on the fields themselves.
 * What it accepts holds together (ids, address indexes and the order of
 * contents in range) and replays without a fault for a few full scans;
 * what it refuses says why.
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
	struct series sr = { .naddr = rec.naddr, .addr = rec.addr,
			     .nsnaps = rec.nsnaps, .snaps = rec.snaps,
			     .sum = rec.sum, .head = rec.head,
			     .zero_id = rec.zero_id, .zero_sum = rec.zero_sum,
			     .compare = record_compare, .ctx = &rec, .at = rec.at,
			     .thp = rec.thp, .nthp = rec.nthp, .out_id = NO_ID };
	struct replay_params p = { .ksm = rec.ksm, .scans = 3, .interval = 1,
				   .policy = policy_lookup("fixed", 5) };

	free(rows = NULL);
	replay_run(&sr, &p, &rows, &cut);
	free(rows);
	record_free(&rec);
	return 0;
}
