/* SPDX-License-Identifier: MIT */
/*
 * Reference for `make bench`: ISA-L's crc32_iscsi (Debian's libisal-dev, a
 * shared library, so it is a comparison only, never part of ksmscan) on one
 * hot 4 KiB page, timed like ksmscan --bench: the best of runs of at least
 * 20 ms. crc32_iscsi(page, 4096, 0) equals the kernel's crc32c(0, page, 4096).
 * Prints: MiB/s ns/page crc-of-"123456789"
 */
#include <isa-l/crc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	unsigned char *page = aligned_alloc(4096, 4096);
	volatile uint32_t sink = 0;
	double best = 1e9;
	long reps = 1;

	for (int i = 0; i < 4096; i++)
		page[i] = (unsigned char)(i * 131 + 7);
	while (1) {
		double t0 = now();

		for (long i = 0; i < reps; i++)
			sink ^= crc32_iscsi(page, 4096, 0);
		if (now() - t0 >= 0.02)
			break;
		reps *= 2;
	}
	for (int run = 0; run < 10; run++) {
		double t0 = now();

		for (long i = 0; i < reps; i++)
			sink ^= crc32_iscsi(page, 4096, 0);
		double t = (now() - t0) / (double)reps;

		if (t < best)
			best = t;
	}
	printf("%.1f %.1f %08x\n", 4096.0 / best / 1048576.0, best * 1e9,
	       crc32_iscsi((unsigned char *)"123456789", 9, 0));
	return 0;
}
