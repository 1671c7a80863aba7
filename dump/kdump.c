/* SPDX-License-Identifier: MIT */
/*
 * kdump-compressed dumps as makedumpfile and QEMU dump-guest-memory -z write
 * them ("KDUMP   " header, version 6 and earlier): a 2nd bitmap of the pages
 * that are in the dump, then one page descriptor per such page, in pfn order,
 * pointing at its data, compressed with zlib or zstd or stored whole. QEMU
 * points every zero page at one shared copy.
 *
 * The flattened form (a "makedumpfile" header, then big-endian records
 * "write these bytes at this offset") is first assembled into a temporary
 * file, as `makedumpfile -R` would, and then read the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../util/bytes.h"
#include "../util/util.h"
#include "dump.h"

#define KDUMP_SIG "KDUMP   "
#define FLAT_SIG "makedumpfile"
#define FLAT_HEADER_SIZE 4096

/* Page descriptor flags (makedumpfile diskdump_mod.h). */
#define DUMP_DH_COMPRESSED_ZLIB 0x1
#define DUMP_DH_COMPRESSED_LZO 0x2
#define DUMP_DH_COMPRESSED_SNAPPY 0x4
#define DUMP_DH_COMPRESSED_INCOMPLETE 0x8
#define DUMP_DH_COMPRESSED_ZSTD 0x20

/* dump_level bit 8: user process data pages were excluded. */
#define DL_EXCLUDE_USER_DATA 8

/* Field offsets of struct disk_dump_header on 64-bit hosts. */
#define H_VERSION 8
#define H_BLOCK_SIZE 428
#define H_SUB_HDR_SIZE 432
#define H_BITMAP_BLOCKS 436
#define H_MAX_MAPNR 440
#define H_SIZE 464
/* Field offsets of struct kdump_sub_header. */
#define S_DUMP_LEVEL 8
#define S_MAX_MAPNR_64 96
#define S_SIZE 104
/* struct page_desc: offset, size, flags, page_flags. */
#define DESC_SIZE 24

struct kdump {
	struct region region;		/* all of RAM: pfn 0 to max_mapnr */
	uint64_t max_mapnr;
	const unsigned char *bitmap2;	/* pages present in the dump */
	uint64_t desc_off;		/* file offset of the first descriptor */
	uint64_t pfn;			/* next pfn to look at */
	uint64_t ndesc;			/* descriptors used so far */
};

static int kdump_probe(const unsigned char *head, size_t len)
{
	return len >= 8 && memcmp(head, KDUMP_SIG, 8) == 0;
}

static int kdump_flat_probe(const unsigned char *head, size_t len)
{
	return len >= sizeof(FLAT_SIG) && memcmp(head, FLAT_SIG, sizeof(FLAT_SIG)) == 0;
}

/* Fields of the assembled file are little-endian (written by x86 hosts). */
#define le(p, bytes) get_le(p, bytes)
/* The flattened records are big-endian. */
#define be64(p) get_be(p, 8)

/* Read and check the 4096-byte flattened header; 0, or -1 after reporting. */
static int kdump_flat_header(struct dump *d, unsigned char *buf)
{
	if (source_read(&d->src, buf, FLAT_HEADER_SIZE) != FLAT_HEADER_SIZE) {
		dump_error(d, d->src.pos, "flattened header truncated");
		return -1;
	}
	if (memcmp(buf, FLAT_SIG, sizeof(FLAT_SIG)) != 0) {
		dump_error(d, 0, "not a flattened dump");
		return -1;
	}
	if (be64(buf + 16) != 1) {
		dump_error(d, 16, "flattened dump of unknown type %llu",
			   (unsigned long long)be64(buf + 16));
		return -1;
	}
	return 0;
}

/* What kdump_flat_record() found. */
enum flat_rc { FLAT_RECORD, FLAT_END, FLAT_DAMAGED, FLAT_WRITE_FAILED };

/*
 * Copy one record to the file @fd: "write these bytes at this offset".
 * @end grows to the end of the bytes copied. Offsets are bounded, so that a
 * hostile record cannot make a huge sparse file.
 */
static enum flat_rc kdump_flat_record(struct dump *d, int fd, unsigned char *buf,
				      uint64_t *end)
{
	unsigned char hdr[16];
	uint64_t rec = d->src.pos, off, size;
	ssize_t n = source_read(&d->src, hdr, sizeof(hdr));

	if (n < 0) {
		dump_read_error(d);
		return FLAT_DAMAGED;
	}
	if (n < (ssize_t)sizeof(hdr)) {
		dump_error(d, rec, n ? "flattened record header truncated" :
			   "flattened dump ends without its end marker");
		return FLAT_DAMAGED;
	}
	off = be64(hdr);
	size = be64(hdr + 8);
	if (off == UINT64_MAX && size == UINT64_MAX)
		return FLAT_END;
	/* Holes cost nothing in the sparse file; 16 TiB is the limit. */
	if (off >> 44 || size >> 44 || off + size > (UINT64_C(1) << 44)) {
		dump_error(d, rec, "flattened record with offset %lld and size %lld "
			   "is not plausible", (long long)off, (long long)size);
		return FLAT_DAMAGED;
	}
	while (size) {
		size_t chunk = size < (1u << 20) ? (size_t)size : (1u << 20);

		n = source_read(&d->src, buf, chunk);
		if (n < 0) {
			dump_read_error(d);
			return FLAT_DAMAGED;
		}
		if (n && !tmp_room_for(fd, (uint64_t)n)) {
			dump_error(d, d->src.pos, "assembling it would leave the "
				   "temporary file system less than %d%% or %llu "
				   "MiB free: read so far", FREE_MIN_PERCENT,
				   (unsigned long long)(FREE_MIN_BYTES >> 20));
			return FLAT_DAMAGED;
		}
		if (n && source_write_sparse(fd, buf, (size_t)n, off) < 0) {
			dump_fail(d, "writing the assembled dump: %s", strerror(errno));
			d->failed = 1;
			return FLAT_WRITE_FAILED;
		}
		if (off + (uint64_t)n > *end)
			*end = off + (uint64_t)n;
		if ((size_t)n < chunk) {
			dump_error(d, d->src.pos, "flattened record data truncated");
			return FLAT_DAMAGED;
		}
		off += chunk;
		size -= chunk;
	}
	return FLAT_RECORD;
}

/*
 * Assemble a flattened dump into a temporary file, as `makedumpfile -R`
 * would: every record's bytes are written at its offset, zero blocks left
 * as holes. What was assembled is read even after a problem (exit status 1).
 */
static int kdump_assemble(struct dump *d)
{
	unsigned char *buf = xmalloc(1u << 20);
	int fd = tmpfile_fd();
	uint64_t end = 0;
	enum flat_rc rc;

	if (fd < 0) {
		dump_fail(d, "cannot create a temporary file: %s", strerror(errno));
		free(buf);
		return -1;
	}
	if (kdump_flat_header(d, buf) < 0) {
		free(buf);
		close(fd);
		return -1;
	}
	while ((rc = kdump_flat_record(d, fd, buf, &end)) == FLAT_RECORD)
		;
	free(buf);
	if (rc == FLAT_END)
		dump_drain(d);
	/* The file ends where the last record does, even in a hole. */
	if (rc != FLAT_WRITE_FAILED && ftruncate(fd, (off_t)end) < 0) {
		dump_fail(d, "writing the assembled dump: %s", strerror(errno));
		d->failed = 1;
		rc = FLAT_WRITE_FAILED;
	}
	if (rc == FLAT_WRITE_FAILED) {
		close(fd);
		return -1;
	}
	if (source_adopt(&d->src, fd) < 0) {
		dump_fail(d, "cannot map the assembled dump: %s", strerror(errno));
		d->failed = 1;
		return -1;
	}
	return 0;
}

/* Read and check the assembled headers; find the bitmap and descriptors. */
static int kdump_headers(struct dump *d, struct kdump *k)
{
	const unsigned char *h = d->src.map;
	uint64_t size = d->src.size, block, sub_blocks, bitmap_blocks, sub;
	uint64_t bitmap_off, half, level;
	uint32_t version;

	if (size < H_SIZE) {
		dump_error(d, size, "kdump header truncated");
		return -1;
	}
	if (memcmp(h, KDUMP_SIG, 8) != 0) {
		dump_error(d, 0, "not a kdump-compressed dump (no \"KDUMP\" signature)");
		return -1;
	}
	version = (uint32_t)le(h + H_VERSION, 4);
	block = le(h + H_BLOCK_SIZE, 4);
	sub_blocks = le(h + H_SUB_HDR_SIZE, 4);
	bitmap_blocks = le(h + H_BITMAP_BLOCKS, 4);
	k->max_mapnr = le(h + H_MAX_MAPNR, 4);
	if (block != PAGE_BYTES) {
		dump_error(d, H_BLOCK_SIZE, "kdump block size %llu is not %u",
			   (unsigned long long)block, PAGE_BYTES);
		return -1;
	}
	if (version == 0 || version > 6)
		dump_warn(d, H_VERSION, "kdump header version %u, read as 6", version);
	sub = block;
	if (sub_blocks == 0 || sub + S_SIZE > size) {
		dump_error(d, sub, "kdump sub-header missing or truncated");
		return -1;
	}
	level = le(h + sub + S_DUMP_LEVEL, 4);
	if (version >= 6)
		k->max_mapnr = le(h + sub + S_MAX_MAPNR_64, 8);
	if (level & DL_EXCLUDE_USER_DATA)
		dump_warn(d, sub + S_DUMP_LEVEL, "dump level %llu excluded user "
			  "process pages: KSM could merge many of them, so the "
			  "figures understate it", (unsigned long long)level);

	bitmap_off = (1 + sub_blocks) * block;
	if (bitmap_blocks == 0 || bitmap_blocks % 2 ||
	    bitmap_off + bitmap_blocks * block > size) {
		dump_error(d, bitmap_off, "kdump bitmap of %llu blocks does not "
			   "fit in the file", (unsigned long long)bitmap_blocks);
		return -1;
	}
	half = bitmap_blocks / 2 * block;
	if (k->max_mapnr > half * 8)
		k->max_mapnr = half * 8;
	k->bitmap2 = h + bitmap_off + half;
	k->desc_off = bitmap_off + bitmap_blocks * block;
	k->region.name = "kdump RAM";
	k->region.start = 0;
	k->region.end = k->max_mapnr * PAGE_BYTES;
	return 0;
}

/* Slack beyond the pages the header declares: vmcoreinfo, notes, eraseinfo. */
#define KDUMP_SLACK (UINT64_C(64) << 20)

/*
 * A streamed assembled dump is copied before it is read; its header is
 * checked first, and the copy bounded by what it declares: the header and
 * bitmap blocks, then at most a descriptor and a page per page frame. A
 * forged header cannot make the copy fill a disk.
 */
static int kdump_stream_limit(struct dump *d, uint64_t *limit)
{
	size_t len;
	const unsigned char *h = source_peek_n(&d->src, 2 * PAGE_BYTES, &len);
	uint64_t block, sub_blocks, bitmap_blocks, mapnr;

	if (!h || len < H_SIZE || memcmp(h, KDUMP_SIG, 8) != 0) {
		dump_error(d, 0, "not a kdump-compressed dump (no \"KDUMP\" signature)");
		return -1;
	}
	block = le(h + H_BLOCK_SIZE, 4);
	sub_blocks = le(h + H_SUB_HDR_SIZE, 4);
	bitmap_blocks = le(h + H_BITMAP_BLOCKS, 4);
	mapnr = le(h + H_MAX_MAPNR, 4);
	if (block != PAGE_BYTES) {
		dump_error(d, H_BLOCK_SIZE, "kdump block size %llu is not %u",
			   (unsigned long long)block, PAGE_BYTES);
		return -1;
	}
	if (bitmap_blocks == 0 || bitmap_blocks % 2) {
		dump_error(d, H_BITMAP_BLOCKS, "kdump bitmap of %llu blocks is not "
			   "plausible", (unsigned long long)bitmap_blocks);
		return -1;
	}
	if (len >= block + S_SIZE && le(h + H_VERSION, 4) >= 6)
		mapnr = le(h + block + S_MAX_MAPNR_64, 8);
	/* The bitmap holds a bit per frame: no more frames than that. */
	if (mapnr > bitmap_blocks / 2 * block * 8)
		mapnr = bitmap_blocks / 2 * block * 8;
	*limit = (1 + sub_blocks + bitmap_blocks) * block +
		 mapnr * (DESC_SIZE + PAGE_BYTES) + KDUMP_SLACK;
	return 0;
}

/* The assembled form: the file is read where it is (a stream is copied). */
static int kdump_open(struct dump *d)
{
	uint64_t limit = UINT64_MAX;

	d->priv = xcalloc(1, sizeof(struct kdump));
	if (!d->src.map && kdump_stream_limit(d, &limit) < 0)
		return -1;
	if (dump_map(d, limit) < 0)
		return -1;
	return kdump_headers(d, d->priv);
}

/* The flattened form: assembled first, then read as the other. */
static int kdump_flat_open(struct dump *d)
{
	d->priv = xcalloc(1, sizeof(struct kdump));
	if (kdump_assemble(d) < 0)
		return -1;
	return kdump_headers(d, d->priv);
}

/* Whether pfn is in the dump: bit pfn of the 2nd bitmap, least significant first. */
static int kdump_present(const struct kdump *k, uint64_t pfn)
{
	return k->bitmap2[pfn / 8] >> (pfn % 8) & 1;
}

/* The last page a thread decompressed, and where it came from. */
static _Thread_local struct {
	const struct dump *d;
	const unsigned char *src;
	uint64_t size;
	uint32_t flags;
	unsigned char page[PAGE_BYTES];
} last;

/* Remember a decompressed page for the next descriptor that shares it. */
static int kdump_keep(const struct dump *d, const unsigned char *src,
		      uint64_t size, uint32_t flags, const unsigned char *page)
{
	last.d = d;
	last.src = src;
	last.size = size;
	last.flags = flags;
	memcpy(last.page, page, PAGE_BYTES);
	return 0;
}

/*
 * Make the page of descriptor number @coded (its pfn is @address / 4096).
 * Thread-safe: it reads the mapped file only; zlib's uncompress() and
 * ZSTD_decompress() keep no state between calls.
 */
static int kdump_decode(const struct dump *d, uint64_t coded, uint64_t address,
			unsigned char *out, char *why, size_t len, uint64_t *offset)
{
	const struct kdump *k = d->priv;
	unsigned long long pfn = address / PAGE_BYTES;
	uint64_t at = k->desc_off + coded * DESC_SIZE;
	const unsigned char *desc = d->src.map + at, *src;
	uint64_t off = le(desc, 8), size = le(desc + 8, 4);
	uint32_t flags = (uint32_t)le(desc + 12, 4);

	/* kdump_next() checked that the descriptor itself is in the file. */
	if (!span_ok(off, size, d->src.size)) {
		snprintf(why, len, "data of pfn %llu (%llu bytes at offset %llu) "
			 "past the end of the file", pfn, (unsigned long long)size,
			 (unsigned long long)off);
		*offset = at;
		return -1;
	}
	if (size > PAGE_BYTES) {
		snprintf(why, len, "data of pfn %llu is %llu bytes, more than the "
			 "block size", pfn, (unsigned long long)size);
		*offset = at;
		return -1;
	}
	src = d->src.map + off;
	*offset = off;
	/*
	 * Many descriptors share one page (QEMU's zero page): each thread keeps
	 * the last page it made, and a descriptor pointing at the same data
	 * gets a copy.
	 */
	if (last.src == src && last.size == size && last.flags == flags && last.d == d) {
		memcpy(out, last.page, PAGE_BYTES);
		return 0;
	}
	if (flags & DUMP_DH_COMPRESSED_ZLIB) {
		uLongf got = PAGE_BYTES;

		if (uncompress(out, &got, src, (uLong)size) == Z_OK && got == PAGE_BYTES)
			return kdump_keep(d, src, size, flags, out);
		snprintf(why, len, "zlib page of pfn %llu does not inflate to %u "
			 "bytes", pfn, PAGE_BYTES);
		return -1;
	}
	if (flags & DUMP_DH_COMPRESSED_ZSTD) {
		size_t got = ZSTD_decompress(out, PAGE_BYTES, src, size);

		if (!ZSTD_isError(got) && got == PAGE_BYTES)
			return kdump_keep(d, src, size, flags, out);
		snprintf(why, len, "zstd page of pfn %llu does not decompress to %u "
			 "bytes", pfn, PAGE_BYTES);
		return -1;
	}
	if (flags & (DUMP_DH_COMPRESSED_LZO | DUMP_DH_COMPRESSED_SNAPPY)) {
		snprintf(why, len, "pages compressed with %s are not supported; they "
			 "are skipped", flags & DUMP_DH_COMPRESSED_LZO ? "lzo" : "snappy");
		return -1;
	}
	if (size == PAGE_BYTES) {
		memcpy(out, src, PAGE_BYTES);
		return 0;
	}
	snprintf(why, len, "page of pfn %llu has size %llu and flags 0x%x", pfn,
		 (unsigned long long)size, flags);
	*offset = at;
	return -1;
}

/*
 * The first pfn from @pfn (a multiple of 8 * PAGE_BYTES) whose bitmap block
 * may hold a set bit: blocks that are holes of the file (a flattened dump
 * assembled sparse, with records far apart) are skipped with SEEK_DATA
 * instead of being read, and blocks of zeros with memchr-like speed.
 */
static uint64_t kdump_skip_holes(struct dump *d, struct kdump *k, uint64_t pfn)
{
	uint64_t bm = (uint64_t)(k->bitmap2 - d->src.map);
	uint64_t at = bm + pfn / 8, end = bm + (k->max_mapnr + 7) / 8;
	off_t data;

	while (at < end) {
		data = lseek(d->src.fd, (off_t)at, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? k->max_mapnr : (at - bm) * 8;
		if ((uint64_t)data > at) {
			at = (uint64_t)data / PAGE_BYTES * PAGE_BYTES;
			if (at < bm + pfn / 8)
				at = bm + pfn / 8;
			if (at >= end)
				return k->max_mapnr;
		}
		/* Data: look for a non-zero byte in this block. */
		uint64_t stop = (at / PAGE_BYTES + 1) * PAGE_BYTES;

		if (stop > end)
			stop = end;
		for (uint64_t i = at; i < stop; i++)
			if (d->src.map[i])
				return (i - bm) * 8;
		at = stop;
	}
	return k->max_mapnr;
}

/*
 * The next run of consecutive present pfns, coded: their descriptors are
 * consecutive too, and the workers decompress them (kdump_decode()).
 */
static int kdump_next(struct dump *d, struct page_range *r)
{
	struct kdump *k = d->priv;
	size_t n = 0;

	while (k->pfn < k->max_mapnr && n < BATCH_PAGES) {
		uint64_t pfn = k->pfn;
		uint64_t at = k->desc_off + k->ndesc * DESC_SIZE;

		/* Skip absent pages a byte of the bitmap at a time. */
		if (n == 0 && pfn % 8 == 0 && k->bitmap2[pfn / 8] == 0) {
			/* A 4 KiB block of the bitmap at a time, holes at once. */
			if (pfn % (8 * PAGE_BYTES) == 0) {
				k->pfn = kdump_skip_holes(d, k, pfn);
				if (k->pfn != pfn)
					continue;
			}
			k->pfn += 8;
			continue;
		}
		if (!kdump_present(k, pfn)) {
			k->pfn++;
			if (n)
				break;
			continue;
		}
		if (!span_ok(at, DESC_SIZE, d->src.size)) {
			dump_error(d, at, "page descriptor of pfn %llu past the end of "
				   "the file", (unsigned long long)pfn);
			k->pfn = k->max_mapnr;
			break;
		}
		if (n == 0) {
			r->address = pfn * PAGE_BYTES;
			r->coded = k->ndesc;
		}
		k->ndesc++;
		k->pfn++;
		n++;
	}
	if (n == 0)
		return 0;
	r->npages = n;
	r->data = NULL;
	r->stable = 0;
	r->region = &k->region;
	return 1;
}

static void kdump_close(struct dump *d)
{
	struct kdump *k = d->priv;

	if (!k)
		return;
	free(k);
}

const struct reader kdump_reader = {
	.name = "kdump",
	.probe = kdump_probe,
	.open = kdump_open,
	.next = kdump_next,
	.close = kdump_close,
	.decode = kdump_decode,
};

/* The same format name: -f kdump takes whichever layout the magic shows. */
const struct reader kdump_flat_reader = {
	.name = "kdump",
	.probe = kdump_flat_probe,
	.open = kdump_flat_open,
	.next = kdump_next,
	.close = kdump_close,
	.decode = kdump_decode,
};
