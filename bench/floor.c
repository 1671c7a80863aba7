/* SPDX-License-Identifier: MIT */
/*
 * make bench: what the machine can do at best on an image in the page cache,
 * whatever ksmscan does. Threads map the file and take 1 MiB pieces in turn:
 *   read    every 64-byte line of every page (SSE2 loads)
 *   hash    XXH64 and the seeded XXH3 index key of every page, with ksmscan's
 *           own functions, then release the piece (MADV_DONTNEED): a scan
 *           with no zero test, no index and no counting
 * Usage: floor IMAGE THREADS; prints one line per mode with the seconds.
 */
#include <emmintrin.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../hash/hash.h"

#define PIECE ((size_t)1 << 20)

static const unsigned char *map;
static size_t size;
static unsigned nthreads;
static int hashing;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One thread: pieces k, k + nthreads, ... */
static void *run(void *arg)
{
	size_t k = (size_t)(uintptr_t)arg;
	uint64_t acc = 0;
	__m128i x = _mm_setzero_si128();

	for (size_t off = k * PIECE; off + PIECE <= size; off += nthreads * PIECE) {
		const unsigned char *p = map + off;

		for (size_t i = 0; i < PIECE; i += 4096) {
			if (hashing) {
				acc += xxh64_page(p + i);
				acc ^= xxh3_seeded_page(p + i, 42);
				continue;
			}
			for (size_t c = 0; c < 4096; c += 16)
				x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)(p + i + c)));
		}
		if (hashing)
			madvise((void *)p, PIECE, MADV_DONTNEED);
	}
	acc += (uint64_t)_mm_cvtsi128_si64(x);
	return (void *)(uintptr_t)acc;
}

static double timed(int mode)
{
	pthread_t th[64];
	double t0 = now();

	hashing = mode;
	for (unsigned i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, run, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return now() - t0;
}

int main(int argc, char **argv)
{
	struct stat st;
	int fd;

	if (argc != 3 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "usage: floor IMAGE THREADS\n");
		return 2;
	}
	xxh_init();
	nthreads = (unsigned)atoi(argv[2]);
	if (nthreads < 1 || nthreads > 64)
		nthreads = 1;
	size = (size_t)st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	madvise((void *)map, size, MADV_SEQUENTIAL);
	printf("read %.3f\n", timed(0));
	munmap((void *)map, size);
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	printf("hash %.3f\n", timed(1));
	return 0;
}
