/* SPDX-License-Identifier: MIT */
/*
 * ELF64 little-endian core files: QEMU dump-guest-memory and virsh dump
 * --memory-only (guest-physical p_paddr), Linux process cores and gdb gcore
 * (p_vaddr, names from the NT_FILE note). Pages are the whole pages of each
 * PT_LOAD segment's file data (p_filesz); the rest of p_memsz is not in the
 * dump. More than 65534 segments (PN_XNUM) are counted in section header 0.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bytes.h"
#include "../util/util.h"
#include "dump.h"

/* One PT_LOAD segment that has file data. */
struct segment {
	struct region region;	/* start: first page address; end: start + p_memsz */
	uint64_t offset;	/* file offset of its data */
	uint64_t pages;		/* whole pages of data present in the file */
	char name[32];		/* "segment N" */
	char *file;		/* the file NT_FILE names for it, if any */
	uint64_t index;		/* its number among the program headers */
	uint64_t filesz;	/* p_filesz */
};

struct elf {
	struct segment *seg;
	size_t nseg, cur;
	uint64_t page;		/* next page within seg[cur] */
	int stream;		/* read in one pass from a stream, not mapped */
	int named;		/* an NT_FILE note was used */
	unsigned char *buf;	/* stream buffer (dump_pages() allocates it) */
};

static int elf_probe(const unsigned char *head, size_t len)
{
	return len >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0;
}

/* The ELF header's little-endian fields. */
#define le16(p) ((uint16_t)get_le(p, 2))
#define le32(p) ((uint32_t)get_le(p, 4))
#define le64(p) get_le(p, 8)

/* The most header bytes (ELF header, program headers, notes) read ahead from a
 * stream; a core whose headers need more is copied to a temporary file. */
#define STREAM_HEAD (16u << 20)

/*
 * Name the segments after the files of an NT_FILE note (Linux and gdb cores):
 * count, page size, count (start, end, offset) triples, then count names.
 */
/* One file mapping of an NT_FILE note. */
struct nt_file {
	uint64_t start, stop;
	const char *name;
	size_t len;
};

static int nt_cmp(const void *a, const void *b)
{
	const struct nt_file *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static void elf_nt_file(struct elf *e, const unsigned char *desc, uint64_t len)
{
	uint64_t count;
	const char *name, *end = (const char *)desc + len;
	struct nt_file *f;
	size_t n = 0;

	/* The first NT_FILE note names the segments; any other is ignored. */
	if (len < 16 || e->named)
		return;
	e->named = 1;
	count = le64(desc);
	if (count > (len - 16) / 24)
		return;
	f = xcalloc((size_t)count + 1, sizeof(*f));
	name = (const char *)desc + 16 + count * 24;
	for (uint64_t i = 0; i < count && name < end; i++) {
		const unsigned char *t = desc + 16 + i * 24;
		size_t l = strnlen(name, (size_t)(end - name));

		f[n++] = (struct nt_file){ le64(t), le64(t + 8), name, l };
		name += l + 1;
	}
	/*
	 * Each segment takes the name of the mapping its start lies in: sort
	 * the mappings and search, so that the work grows as n log n.
	 */
	qsort(f, n, sizeof(*f), nt_cmp);
	for (size_t s = 0; s < e->nseg && n; s++) {
		struct segment *g = &e->seg[s];
		size_t lo = 0, hi = n;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (f[mid].start <= g->region.start)
				lo = mid;
			else
				hi = mid;
		}
		if (f[lo].start > g->region.start || g->region.start >= f[lo].stop)
			continue;
		g->file = xmalloc(f[lo].len + 1);
		memcpy(g->file, f[lo].name, f[lo].len);
		g->file[f[lo].len] = '\0';
		g->region.name = g->file;
	}
	free(f);
}

/* Walk the notes of a PT_NOTE segment looking for NT_FILE. */
static void elf_notes(const unsigned char *h, struct elf *e, uint64_t off,
		      uint64_t len)
{
	const unsigned char *p = h + off;
	uint64_t pos = 0;

	while (pos <= len && len - pos >= 12 && !e->named) {
		uint64_t namesz = le32(p + pos), descsz = le32(p + pos + 4);
		uint32_t type = le32(p + pos + 8);
		uint64_t name_off = pos + 12;
		uint64_t desc_off = name_off + ((namesz + 3) & ~UINT64_C(3));
		uint64_t next = desc_off + ((descsz + 3) & ~UINT64_C(3));

		if (desc_off > len || descsz > len - desc_off)
			return;
		if (type == NT_FILE && namesz == 5 &&
		    memcmp(p + name_off, "CORE", 5) == 0)
			elf_nt_file(e, p + desc_off, descsz);
		pos = next;
	}
}

/* Order segments by file offset: the order a stream delivers them in. */
static int seg_cmp(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * The ELF header and program headers, checked; the first @hsize bytes of the
 * file are at @h (all of it when mapped, a prefix of a stream otherwise).
 * Return: 0, -1 after an error, or 1 when a stream's headers lie beyond the
 * prefix (the caller then copies the stream to a file and tries again).
 */
static int elf_headers(struct dump *d, struct elf *e, const unsigned char *h,
		       uint64_t hsize, int stream)
{
	uint64_t phoff, phnum, phentsize;

#define in_head(off, len) span_ok(off, len, hsize)
	if (hsize < sizeof(Elf64_Ehdr)) {
		if (hsize >= EI_NIDENT && h[EI_CLASS] == ELFCLASS32)
			goto class32;
		dump_error(d, hsize, "ELF header truncated");
		return -1;
	}
	if (memcmp(h, ELFMAG, SELFMAG) != 0) {
		dump_error(d, 0, "not an ELF file");
		return -1;
	}
	if (h[EI_CLASS] == ELFCLASS32) {
class32:
		dump_error(d, EI_CLASS, "32-bit ELF cores are not supported");
		return -1;
	}
	if (h[EI_CLASS] != ELFCLASS64) {
		dump_error(d, EI_CLASS, "unknown ELF class %u", h[EI_CLASS]);
		return -1;
	}
	if (h[EI_DATA] != ELFDATA2LSB) {
		dump_error(d, EI_DATA, "big-endian ELF cores are not supported");
		return -1;
	}
	if (le16(h + 16) != ET_CORE) {
		dump_error(d, 16, "not an ELF core file (e_type %u)", le16(h + 16));
		return -1;
	}
	phoff = le64(h + 32);
	phentsize = le16(h + 54);
	phnum = le16(h + 56);
	if (phnum == PN_XNUM) {
		/* The real count is in sh_info of section header 0. */
		uint64_t shoff = le64(h + 40);

		if (!in_head(shoff, sizeof(Elf64_Shdr))) {
			if (stream)
				return 1;
			dump_error(d, 40, "PN_XNUM section header past the end "
				   "of the file");
			return -1;
		}
		phnum = le32(h + shoff + 44);
	}
	if (phentsize < sizeof(Elf64_Phdr)) {
		dump_error(d, 54, "program header size %llu too small",
			   (unsigned long long)phentsize);
		return -1;
	}
	if (phnum > hsize / phentsize || !in_head(phoff, phnum * phentsize)) {
		if (stream && hsize == STREAM_HEAD)
			return 1;
		dump_error(d, phoff, "%llu program headers do not fit in the file",
			   (unsigned long long)phnum);
		return -1;
	}
	e->seg = xcalloc((size_t)phnum + 1, sizeof(*e->seg));
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *p = h + phoff + i * phentsize;
		uint32_t type = le32(p);
		uint64_t off = le64(p + 8), vaddr = le64(p + 16);
		uint64_t paddr = le64(p + 24), filesz = le64(p + 32);
		uint64_t memsz = le64(p + 40);
		struct segment *g;

		if (type != PT_LOAD || filesz == 0)
			continue;
		g = &e->seg[e->nseg++];
		g->offset = off;
		g->index = i;
		g->filesz = filesz;
		g->region.start = paddr ? paddr : vaddr;
		g->region.end = memsz <= UINT64_MAX - g->region.start ?
				g->region.start + memsz : UINT64_MAX;
		snprintf(g->name, sizeof(g->name), "segment %llu",
			 (unsigned long long)i);
		g->region.name = g->name;
		g->pages = filesz / PAGE_BYTES;
		if (!stream && !span_ok(off, filesz, d->src.size)) {
			uint64_t have = off < d->src.size ? d->src.size - off : 0;

			dump_error(d, d->src.size, "segment %llu data (%llu bytes at "
				   "offset %llu) runs past the end of the file",
				   (unsigned long long)i,
				   (unsigned long long)filesz,
				   (unsigned long long)off);
			g->pages = have / PAGE_BYTES;
		} else if (filesz % PAGE_BYTES) {
			dump_warn(d, off + filesz - filesz % PAGE_BYTES,
				  "segment %llu ends with a partial page of %llu "
				  "bytes, ignored", (unsigned long long)i,
				  (unsigned long long)(filesz % PAGE_BYTES));
		}
	}
	/*
	 * Name segments after files once all are known: NT_FILE comes first.
	 * A core has one PT_NOTE; a few more are looked at, not thousands.
	 */
	for (uint64_t i = 0, notes = 0; i < phnum && notes < 16; i++) {
		const unsigned char *p = h + phoff + i * phentsize;
		uint64_t off = le64(p + 8), filesz = le64(p + 32);

		if (le32(p) != PT_NOTE || e->named)
			continue;
		if (!in_head(off, filesz)) {
			/* Beyond what a stream read ahead: copy it to a file. */
			if (stream && hsize == STREAM_HEAD)
				return 1;
			continue;
		}
		elf_notes(h, e, off, filesz);
		notes++;
	}
#undef in_head
	/* One pass in file order; the same order when mapped, for the same figures. */
	qsort(e->seg, e->nseg, sizeof(*e->seg), seg_cmp);
	/* Names point into the segments, which qsort moved: point them again. */
	for (size_t k = 0; k < e->nseg; k++)
		e->seg[k].region.name = e->seg[k].file ? e->seg[k].file : e->seg[k].name;
	return 0;
}

/*
 * How many bytes from the start of the file the headers take: the ELF
 * header, PN_XNUM's section header, the program headers and the notes, as
 * far as the @len bytes at @h tell (a larger answer asks for more).
 */
static uint64_t elf_head_need(const unsigned char *h, uint64_t len)
{
	uint64_t phoff, phnum, phentsize, end;

	if (len < sizeof(Elf64_Ehdr))
		return sizeof(Elf64_Ehdr);
	phoff = le64(h + 32);
	phentsize = le16(h + 54);
	phnum = le16(h + 56);
	if (phnum == PN_XNUM) {
		uint64_t shoff = le64(h + 40);

		if (!span_ok(shoff, sizeof(Elf64_Shdr), len))
			return shoff > UINT64_MAX - 64 ? UINT64_MAX : shoff + 64;
		phnum = le32(h + shoff + 44);
	}
	if (phentsize < sizeof(Elf64_Phdr) || phnum > UINT64_MAX / phentsize ||
	    phoff > UINT64_MAX - phnum * phentsize)
		return len;
	end = phoff + phnum * phentsize;
	if (end > len)
		return end;
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *p = h + phoff + i * phentsize;
		uint64_t off = le64(p + 8), filesz = le64(p + 32);

		if (le32(p) == PT_NOTE && off <= UINT64_MAX - filesz &&
		    off + filesz > end)
			end = off + filesz;
	}
	return end;
}

/* Forget the segments read so far. */
static void elf_free_segments(struct elf *e)
{
	for (size_t i = 0; i < e->nseg; i++)
		free(e->seg[i].file);
	free(e->seg);
	e->seg = NULL;
	e->nseg = 0;
}

static int elf_open(struct dump *d)
{
	struct elf *e = xcalloc(1, sizeof(*e));
	const unsigned char *h;
	size_t len;
	int rc;

	d->priv = e;
	if (!d->src.map) {
		/*
		 * A stream (pipe, zstd): read the headers ahead, then the
		 * segments in one pass. Headers that do not fit in the first
		 * STREAM_HEAD bytes (or PN_XNUM's section header at the end)
		 * need the whole file: it is copied to a temporary file.
		 */
		uint64_t want = 65536;

		for (;;) {
			h = source_peek_n(&d->src, (size_t)want, &len);
			if (!h) {
				dump_read_error(d);
				return -1;
			}
			uint64_t need = elf_head_need(h, len);

			if (len < want || need <= len || want == STREAM_HEAD)
				break;
			want = need < STREAM_HEAD ? need : STREAM_HEAD;
		}
		rc = elf_headers(d, e, h, len, 1);
		if (rc <= 0) {
			e->stream = 1;
			return rc;
		}
		elf_free_segments(e);
		e->named = 0;
		if (dump_map(d) < 0)
			return -1;
	}
	return elf_headers(d, e, d->src.map, d->src.size, 0);
}

/* The next pages of a segment, pointed at in the map or read from a stream. */
static int elf_next(struct dump *d, struct page_range *r)
{
	struct elf *e = d->priv;

	while (e->cur < e->nseg) {
		struct segment *g = &e->seg[e->cur];
		uint64_t at = g->offset + e->page * PAGE_BYTES;
		ssize_t got;
		int ended;

		if (e->page >= g->pages) {
			e->cur++;
			e->page = 0;
			continue;
		}
		if (e->stream && at < d->src.pos) {
			/* Behind what was read: a stream cannot go back. */
			dump_error(d, g->offset, "segment %llu overlaps the one before "
				   "it; read this core from a file, not a stream",
				   (unsigned long long)g->index);
			e->cur++;
			e->page = 0;
			continue;
		}
		got = dump_pages(d, at, g->pages - e->page, &e->buf, r, &ended);
		if (got < 0)
			return -1;
		if (ended) {
			dump_error(d, d->src.pos, "segment %llu data (%llu bytes at "
				   "offset %llu) runs past the end of the file",
				   (unsigned long long)g->index,
				   (unsigned long long)g->filesz,
				   (unsigned long long)g->offset);
			e->cur = e->nseg;
			if (!got)
				return 0;
		}
		r->address = g->region.start + e->page * PAGE_BYTES;
		r->region = &g->region;
		e->page += (uint64_t)got;
		return 1;
	}
	return 0;
}

static void elf_close(struct dump *d)
{
	struct elf *e = d->priv;

	if (e) {
		elf_free_segments(e);
		free(e->buf);
	}
	free(e);
}

const struct reader elf_reader = {
	.name = "elf",
	.probe = elf_probe,
	.open = elf_open,
	.next = elf_next,
	.close = elf_close,
};
