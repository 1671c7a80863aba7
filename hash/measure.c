/* SPDX-License-Identifier: MIT */
/* ksmscan --bench and -a auto: how fast each checksum runs on this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/kernel.h"
#include "../util/progress.h"
#include "../util/util.h"
#include "measure.h"

/* One timed run lasts at least this long. */
#define RUN_SECONDS 0.02
/* Runs at most, and how close the three best must be to stop earlier. */
#define MAX_RUNS 20
#define STABLE 1.03
/* The streaming buffer: at least this, and 4x the last-level cache. */
#define STREAM_MIN (64u << 20)
#define STREAM_MAX (1024u << 20)

/* Fill memory with reproducible pseudo-random bytes (xorshift64). */
static void fill_random(unsigned char *p, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15u;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

/* Seconds per page over @npages pages at @buf, hashed @reps times. */
static double time_pages(const struct algo *a, const unsigned char *buf,
			 size_t npages, size_t reps)
{
	struct digest d, sink = { 0, 0 };
	double t0 = now_seconds();

	for (size_t r = 0; r < reps; r++)
		for (size_t i = 0; i < npages; i++) {
			a->hash(buf + i * PAGE_BYTES, &d);
			sink.lo ^= d.lo;
		}
	double t = now_seconds() - t0;

	/* Keep the results alive so that the loop is not optimised away. */
	__asm__ volatile("" : : "r"(sink.lo) : "memory");
	return t / (double)(npages * reps);
}

/* Compare doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The best seconds per page of runs of at least RUN_SECONDS, repeated until
 * the three best agree within STABLE or MAX_RUNS is reached; *@spread is how
 * much slower the third best run (or the last, with fewer) was than the best.
 * @what: shown on the progress line @pr, with the run's number.
 */
static double measure(const struct algo *a, const unsigned char *buf,
		      size_t npages, double *spread, struct progress *pr,
		      const char *what)
{
	double runs[MAX_RUNS], sorted[MAX_RUNS];
	size_t reps = 1, n = 0;
	char text[128];

	/* Calibrate: enough repetitions for one run to last RUN_SECONDS. */
	while (time_pages(a, buf, npages, reps) * (double)(npages * reps) <
	       RUN_SECONDS && reps < (1u << 24))
		reps *= 2;
	while (n < MAX_RUNS) {
		snprintf(text, sizeof(text), "%s, run %zu", what, n + 1);
		progress_note(pr, text);
		runs[n++] = time_pages(a, buf, npages, reps);
		if (n < 3)
			continue;
		memcpy(sorted, runs, n * sizeof(*runs));
		qsort(sorted, n, sizeof(*sorted), cmp_double);
		if (sorted[2] <= sorted[0] * STABLE)
			break;
	}
	memcpy(sorted, runs, n * sizeof(*runs));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	*spread = sorted[0] > 0 ? sorted[n < 3 ? n - 1 : 2] / sorted[0] - 1 : 0;
	return sorted[0];
}

const struct algo *hash_auto(double *seconds)
{
	static const char *const candidates[] = { "crc32c", "xxhash" };
	unsigned char *page = xmalloc(PAGE_BYTES);
	const struct algo *best = NULL;
	double best_t = 0, t0 = now_seconds();

	fill_random(page, PAGE_BYTES);
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		const struct algo *a = hash_lookup(candidates[i], strlen(candidates[i]));
		double t = 1e9;

		/* Best of five short runs of 64 hashes of one hot page. */
		for (int r = 0; r < 5; r++) {
			double x = time_pages(a, page, 1, 64);

			if (x < t)
				t = x;
		}
		if (!best || t < best_t) {
			best = a;
			best_t = t;
		}
	}
	free(page);
	if (seconds)
		*seconds = now_seconds() - t0;
	return best;
}

size_t hash_measure(const struct algo *const *algos, size_t nalgos,
		    struct hash_speed *rows, const struct algo **autopick,
		    int progress)
{
	size_t stream = 4 * cpu_cache_bytes();
	struct progress *pr = progress_start(progress, 0);
	unsigned char *buf;
	char what[96];

	*autopick = hash_auto(NULL);
	if (stream < STREAM_MIN)
		stream = STREAM_MIN;
	if (stream > STREAM_MAX)
		stream = STREAM_MAX;
	buf = xmalloc(stream);
	fill_random(buf, stream);
	for (size_t i = 0; i < nalgos; i++) {
		rows[i].algo = algos[i];
		snprintf(what, sizeof(what), "measuring %s (%zu of %zu), hot page",
			 algos[i]->name, i + 1, nalgos);
		rows[i].hot = measure(algos[i], buf, 1, &rows[i].hot_spread, pr,
				      what);
		snprintf(what, sizeof(what), "measuring %s (%zu of %zu), streamed",
			 algos[i]->name, i + 1, nalgos);
		rows[i].stream = measure(algos[i], buf, stream / PAGE_BYTES,
					 &rows[i].stream_spread, pr, what);
		rows[i].is_auto = algos[i] == *autopick;
	}
	progress_end(pr);
	free(buf);
	return stream;
}

double page_compare_ns_per_byte(void)
{
	static unsigned char a[PAGE_BYTES], b[PAGE_BYTES];
	uint64_t bytes = 0;
	double t0 = now_seconds(), dt;
	int r = 0;

	for (int i = 0; i < 2048; i++) {
		a[i % PAGE_BYTES] = b[i % PAGE_BYTES] = (unsigned char)i;
		r |= page_compare(a, b, 0, &bytes);
	}
	dt = now_seconds() - t0;
	return r ? 0.0 : dt * 1e9 / (double)bytes;
}
