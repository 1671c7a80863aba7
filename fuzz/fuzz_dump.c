/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the dump readers: the input is written to a memfd and
 * opened like any file, with -f FUZZ_FORMAT ("auto" when not defined). With
 * FUZZ_STREAM the file is read as a stream (pipes, zstd) instead of mapped.
 * Every byte of every page handed out is read, so that ASan sees a range
 * that points outside its data.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../dump/dump.h"
#include "../util/util.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT "auto"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_options opt = { .format = FUZZ_FORMAT, .range_end = UINT64_MAX };
#ifdef FUZZ_STREAM
	opt.stream_only = 1;	/* the path a pipe takes, not a mapping */
#endif
	char path[64];
	struct input in = { path, path, 0, 0 };
	struct page_range r;
	struct dump *d;
	static unsigned char page[PAGE_BYTES];
	char why[256];
	unsigned sum = 0;
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	msg_quiet = msg_silent = 1;
	d = dump_open(&in, &opt, why, sizeof(why));
	if (d) {
		const struct region *kept[64];
		size_t nkept = 0;

		while (dump_next(d, &r) > 0) {
			sum += (unsigned)r.region->start;
			/* The engine keeps region pointers to the end: so does this. */
			if (nkept < 64)
				kept[nkept++] = r.region;
			if (!r.data) {
				/* Coded pages: make each, as the scan's workers do. */
				for (size_t i = 0; i < r.npages; i++) {
					char why[160];
					uint64_t off;

					if (d->reader->decode(d, r.coded + i,
						r.address + i * (uint64_t)PAGE_BYTES, page,
						why, sizeof(why), &off) == 0)
						sum += page[0] + page[PAGE_BYTES - 1];
				}
				continue;
			}
			for (size_t i = 0; i < r.npages * PAGE_BYTES; i += 64)
				sum += r.data[i];
			sum += r.data[r.npages * PAGE_BYTES - 1];
		}
		for (size_t i = 0; i < nkept; i++)
			sum += (unsigned)(kept[i]->end - kept[i]->start) + kept[i]->name[0];
		dump_close(d);
	}
	close(fd);
	return (int)(sum & 0);
}
