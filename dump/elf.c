/* SPDX-License-Identifier: MIT */
/*
 * ELF64 little-endian core files: QEMU dump-guest-memory and virsh dump
 * --memory-only (guest-physical p_paddr), Linux process cores and gdb gcore
 * (p_vaddr, names from the NT_FILE note). Pages are the whole pages of each
 * PT_LOAD segment's file data (p_filesz); the rest of p_memsz is not in the
 * dump. More than 65534 segments (PN_XNUM) are counted in section header 0.
 * File bytes that several segments claim are counted once (a hostile core
 * can point thousands of headers at one page), in file order, which is the
 * order a stream delivers them in: a file and a stream give the same pages.
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
	uint64_t pages;		/* whole pages of its data (p_filesz / 4096) */
	uint64_t first;		/* its first page not already counted as another's */
	char name[32];		/* "segment N" */
	char *file;		/* the file NT_FILE names for it, if any */
	uint64_t index;		/* its number among the program headers */
	uint64_t filesz;	/* p_filesz */
};

struct elf {
	struct segment *seg;
	size_t nseg, cur;
	uint64_t page;		/* next page within seg[cur] */
	int named;		/* an NT_FILE note was used */
	size_t overlap;		/* the first segment that overlaps one before
				 * it in the file (nseg: none), warned of when
				 * it is reached, as a stream would find it */
	uint64_t overlap_by;	/* the earlier segment's number */
	uint64_t overlaps;	/* how many segments overlap others */
	unsigned char *buf;	/* stream buffer (dump_pages() allocates it) */
};

/* A program header's fields, each read once. */
struct phdr {
	uint32_t type;
	uint64_t offset, filesz, memsz;
	uint64_t addr;		/* p_paddr if non-zero, else p_vaddr */
};

/* What the first bytes of a file say of its headers. */
enum head_state {
	HEAD_SHORT,	/* not even the ELF header */
	HEAD_NO_XNUM,	/* PN_XNUM, but section header 0 is beyond the bytes */
	HEAD_BAD_SIZE,	/* e_phentsize below sizeof(Elf64_Phdr) */
	HEAD_NO_PHDRS,	/* the program headers are beyond the bytes */
	HEAD_OK,	/* the program headers are parsed */
};

/* The ELF header's fields that locate the program headers, and those. */
struct elf_head {
	enum head_state state;
	uint64_t phoff, phentsize, phnum;	/* phnum: sh_info for PN_XNUM */
	struct phdr *ph;	/* phnum program headers, when HEAD_OK */
	uint64_t need;		/* bytes from the file's start that the headers
				 * take, as far as the bytes at hand tell */
};

static int elf_probe(const unsigned char *head, size_t len)
{
	return len >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0;
}

/* The ELF header's little-endian fields. */
#define le16(p) ((uint16_t)get_le(p, 2))
#define le32(p) ((uint32_t)get_le(p, 4))
#define le64(p) get_le(p, 8)

/*
 * The most header bytes (ELF header, program headers, notes) read ahead from
 * a stream: a core whose headers need more is copied to a temporary file.
 */
#define STREAM_HEAD (16u << 20)
/* A core has one PT_NOTE; a few more are looked at, not thousands. */
#define MAX_NOTES 16

/* Read the program headers, and how far the notes they point at reach. */
static void elf_parse_phdrs(const unsigned char *h, struct elf_head *eh)
{
	eh->ph = xcalloc((size_t)eh->phnum + 1, sizeof(*eh->ph));
	for (uint64_t i = 0; i < eh->phnum; i++) {
		const unsigned char *p = h + eh->phoff + i * eh->phentsize;
		struct phdr *ph = &eh->ph[i];
		uint64_t paddr = le64(p + 24);

		ph->type = le32(p);
		ph->offset = le64(p + 8);
		ph->addr = paddr ? paddr : le64(p + 16);
		ph->filesz = le64(p + 32);
		ph->memsz = le64(p + 40);
		if (ph->type == PT_NOTE && ph->offset <= UINT64_MAX - ph->filesz &&
		    ph->offset + ph->filesz > eh->need)
			eh->need = ph->offset + ph->filesz;
	}
}

/*
 * Parse what the first @len bytes of a file (all of it when mapped, a prefix
 * of a stream otherwise) tell of its headers; every field is read here only.
 * Validation and messages are elf_check()'s.
 */
static void elf_parse(const unsigned char *h, uint64_t len, struct elf_head *eh)
{
	*eh = (struct elf_head){ .state = HEAD_SHORT, .need = sizeof(Elf64_Ehdr) };
	if (len < sizeof(Elf64_Ehdr))
		return;
	eh->phoff = le64(h + 32);
	eh->phentsize = le16(h + 54);
	eh->phnum = le16(h + 56);
	eh->need = len;
	if (eh->phnum == PN_XNUM) {
		/* The real count is in sh_info of section header 0. */
		uint64_t shoff = le64(h + 40);

		if (!span_ok(shoff, sizeof(Elf64_Shdr), len)) {
			eh->state = HEAD_NO_XNUM;
			eh->need = shoff > UINT64_MAX - sizeof(Elf64_Shdr) ?
				   UINT64_MAX : shoff + sizeof(Elf64_Shdr);
			return;
		}
		eh->phnum = le32(h + shoff + 44);
	}
	if (eh->phentsize < sizeof(Elf64_Phdr)) {
		eh->state = HEAD_BAD_SIZE;
		return;
	}
	if (eh->phnum > UINT64_MAX / eh->phentsize ||
	    !span_ok(eh->phoff, eh->phnum * eh->phentsize, len)) {
		eh->state = HEAD_NO_PHDRS;
		if (eh->phnum <= UINT64_MAX / eh->phentsize &&
		    eh->phoff <= UINT64_MAX - eh->phnum * eh->phentsize)
			eh->need = eh->phoff + eh->phnum * eh->phentsize;
		return;
	}
	eh->state = HEAD_OK;
	eh->need = eh->phoff + eh->phnum * eh->phentsize;
	elf_parse_phdrs(h, eh);
}

/* Check the identification and type; 0, or -1 after reporting. */
static int elf_check_ident(struct dump *d, const unsigned char *h, uint64_t len)
{
	int class32 = len >= EI_NIDENT && h[EI_CLASS] == ELFCLASS32;

	/* A 32-bit core's header is shorter: name the real problem. */
	if (len < sizeof(Elf64_Ehdr) && !class32) {
		dump_error(d, len, "ELF header truncated");
		return -1;
	}
	if (len >= sizeof(Elf64_Ehdr) && memcmp(h, ELFMAG, SELFMAG) != 0) {
		dump_error(d, 0, "not an ELF file");
		return -1;
	}
	if (class32) {
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
	return 0;
}

/*
 * Check what elf_parse() found. Return: 0, -1 after an error, or 1 when a
 * stream's headers lie beyond the @len bytes read ahead (@full: as many as a
 * stream reads ahead); the caller then copies the stream to a file.
 */
static int elf_check(struct dump *d, const unsigned char *h, uint64_t len,
		     const struct elf_head *eh, int stream, int full)
{
	if (elf_check_ident(d, h, len) < 0)
		return -1;
	switch (eh->state) {
	case HEAD_NO_XNUM:
		if (stream)
			return 1;
		dump_error(d, 40, "PN_XNUM section header past the end of the file");
		return -1;
	case HEAD_BAD_SIZE:
		dump_error(d, 54, "program header size %llu too small",
			   (unsigned long long)eh->phentsize);
		return -1;
	case HEAD_NO_PHDRS:
		if (stream && full)
			return 1;
		dump_error(d, eh->phoff, "%llu program headers do not fit in the "
			   "file", (unsigned long long)eh->phnum);
		return -1;
	default:
		break;
	}
	/* Notes beyond what a stream read ahead need the whole file. */
	for (uint64_t i = 0, notes = 0; stream && full && i < eh->phnum &&
	     notes < MAX_NOTES; i++) {
		const struct phdr *p = &eh->ph[i];

		if (p->type != PT_NOTE)
			continue;
		if (!span_ok(p->offset, p->filesz, len))
			return 1;
		notes++;
	}
	return 0;
}

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

/* Name each segment after the mapping of @f (sorted by start) it starts in. */
static void elf_name_segments(struct elf *e, const struct nt_file *f, size_t n)
{
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
}

/*
 * Name the segments after the files of an NT_FILE note (Linux and gdb cores):
 * count, page size, count (start, end, offset) triples, then count names.
 */
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
	elf_name_segments(e, f, n);
	free(f);
}

/* Walk the notes of a PT_NOTE segment looking for NT_FILE. */
static void elf_note_walk(const unsigned char *h, struct elf *e, uint64_t off,
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

/* Name segments after files from the first NT_FILE note at hand. */
static void elf_notes(struct elf *e, const unsigned char *h, uint64_t len,
		      const struct elf_head *eh)
{
	for (uint64_t i = 0, notes = 0; i < eh->phnum && notes < MAX_NOTES &&
	     !e->named; i++) {
		const struct phdr *p = &eh->ph[i];

		if (p->type != PT_NOTE || !span_ok(p->offset, p->filesz, len))
			continue;
		elf_note_walk(h, e, p->offset, p->filesz);
		notes++;
	}
}

/* The PT_LOAD segments that have file data. */
static void elf_segment_table(struct elf *e, const struct elf_head *eh)
{
	e->seg = xcalloc((size_t)eh->phnum + 1, sizeof(*e->seg));
	for (uint64_t i = 0; i < eh->phnum; i++) {
		const struct phdr *p = &eh->ph[i];
		struct segment *g;

		if (p->type != PT_LOAD || p->filesz == 0)
			continue;
		g = &e->seg[e->nseg++];
		g->offset = p->offset;
		g->index = i;
		g->filesz = p->filesz;
		g->pages = p->filesz / PAGE_BYTES;
		g->region.start = p->addr;
		g->region.end = p->memsz <= UINT64_MAX - p->addr ?
				p->addr + p->memsz : UINT64_MAX;
	}
}

/* Order segments by file offset (the order a stream delivers them in). */
static int seg_cmp(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	if (x->offset != y->offset)
		return (x->offset > y->offset) - (x->offset < y->offset);
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * Sort the segments into file order, and count file bytes claimed by several
 * segments once: a segment's pages that begin within the file data
 * (p_filesz) of an earlier one are skipped (its "first" page). Mapped and streamed, a core is
 * read in this one order, so both give the same figures.
 */
static void elf_sort(struct elf *e)
{
	uint64_t covered = 0, by = 0;

	qsort(e->seg, e->nseg, sizeof(*e->seg), seg_cmp);
	e->overlap = e->nseg;
	for (size_t k = 0; k < e->nseg; k++) {
		struct segment *g = &e->seg[k];
		uint64_t end = g->offset <= UINT64_MAX - g->filesz ?
			       g->offset + g->filesz : UINT64_MAX;

		snprintf(g->name, sizeof(g->name), "segment %llu",
			 (unsigned long long)g->index);
		g->region.name = g->name;
		if (g->offset < covered && g->pages) {
			g->first = (covered - g->offset + PAGE_BYTES - 1) / PAGE_BYTES;
			if (g->first > g->pages)
				g->first = g->pages;
			if (!e->overlaps++) {
				e->overlap = k;
				e->overlap_by = by;
			}
		}
		if (end > covered) {
			covered = end;
			by = g->index;
		}
	}
}

/*
 * The headers of a core whose first @len bytes are at @h (all of it when
 * mapped, a prefix of a stream otherwise), parsed in @eh. Return: 0, -1
 * after an error, or 1 when a stream must be copied to a file first.
 */
static int elf_headers(struct dump *d, struct elf *e, const unsigned char *h,
		       uint64_t len, const struct elf_head *eh, int stream)
{
	int rc = elf_check(d, h, len, eh, stream, len == STREAM_HEAD);

	if (rc)
		return rc;
	elf_segment_table(e, eh);
	elf_sort(e);
	/* Names point into the sorted table: name segments after the sort. */
	elf_notes(e, h, len, eh);
	return 0;
}

/* Forget the segments read so far. */
static void elf_free_segments(struct elf *e)
{
	for (size_t i = 0; i < e->nseg; i++)
		free(e->seg[i].file);
	free(e->seg);
	e->seg = NULL;
	e->nseg = 0;
	e->named = 0;
}

/*
 * Read a stream's headers ahead: as many bytes as they need, up to
 * STREAM_HEAD. Return: as elf_headers().
 */
static int elf_open_stream(struct dump *d, struct elf *e)
{
	struct elf_head eh = { 0 };
	uint64_t want = 65536;
	const unsigned char *h;
	size_t len;
	int rc;

	for (;;) {
		free(eh.ph);
		h = source_peek_n(&d->src, (size_t)want, &len);
		if (!h) {
			dump_read_error(d);
			return -1;
		}
		elf_parse(h, len, &eh);
		if (len < want || eh.need <= len || want == STREAM_HEAD)
			break;
		want = eh.need < STREAM_HEAD ? eh.need : STREAM_HEAD;
	}
	rc = elf_headers(d, e, h, len, &eh, 1);
	free(eh.ph);
	return rc;
}

static int elf_open(struct dump *d)
{
	struct elf *e = xcalloc(1, sizeof(*e));
	struct elf_head eh;
	int rc;

	d->priv = e;
	if (!d->src.map) {
		/*
		 * A stream (pipe, zstd): the headers are read ahead, then the
		 * segments in one pass. Headers that do not fit in the first
		 * STREAM_HEAD bytes (or PN_XNUM's section header at the end)
		 * need the whole file: it is copied to a temporary file.
		 */
		rc = elf_open_stream(d, e);
		if (rc <= 0)
			return rc;
		elf_free_segments(e);
		if (dump_map(d, UINT64_MAX) < 0)
			return -1;
	}
	elf_parse(d->src.map, d->src.size, &eh);
	rc = elf_headers(d, e, d->src.map, d->src.size, &eh, 0);
	free(eh.ph);
	return rc;
}

/*
 * Say once that segments share file bytes, when the first that does is
 * reached (a core cut short before it needs no such word).
 */
static void elf_overlap_warn(struct dump *d, struct elf *e)
{
	if (e->cur != e->overlap)
		return;
	dump_warn(d, e->seg[e->cur].offset, "segment %llu shares file bytes with "
		  "segment %llu (%llu segments overlap others); bytes claimed by "
		  "several segments are counted once",
		  (unsigned long long)e->seg[e->cur].index,
		  (unsigned long long)e->overlap_by,
		  (unsigned long long)e->overlaps);
}

/* Say that segment @g runs past the end of the input, and stop reading. */
static void elf_truncated(struct dump *d, struct elf *e, const struct segment *g)
{
	dump_error(d, d->src.pos, "segment %llu data (%llu bytes at offset %llu) "
		   "runs past the end of the file", (unsigned long long)g->index,
		   (unsigned long long)g->filesz, (unsigned long long)g->offset);
	e->cur = e->nseg;
}

/*
 * A segment's whole pages were read: a partial page after them is left out
 * with a warning if the file holds it, and is a truncation if not (as a
 * stream finds it: by reading on to the segment's end).
 * Return: 0, or -1 after a read error (reported).
 */
static int elf_segment_done(struct dump *d, struct elf *e, const struct segment *g)
{
	uint64_t part = g->filesz % PAGE_BYTES;
	int rc;

	if (!part)
		return 0;
	rc = dump_skip_to(d, g->offset <= UINT64_MAX - g->filesz ?
			  g->offset + g->filesz : UINT64_MAX, &e->buf);
	if (rc < 0)
		return -1;
	if (rc)
		elf_truncated(d, e, g);
	else
		dump_warn(d, g->offset + g->filesz - part, "segment %llu ends with "
			  "a partial page of %llu bytes, ignored",
			  (unsigned long long)g->index, (unsigned long long)part);
	return 0;
}

/* The next pages of a segment, pointed at in the map or read from a stream. */
static int elf_next(struct dump *d, struct page_range *r)
{
	struct elf *e = d->priv;

	while (e->cur < e->nseg) {
		struct segment *g = &e->seg[e->cur];
		ssize_t got;
		int ended;

		/* Pages that an earlier segment handed out are not counted again. */
		if (e->page < g->first) {
			elf_overlap_warn(d, e);
			e->page = g->first;
			continue;
		}
		if (e->page >= g->pages) {
			if (elf_segment_done(d, e, g) < 0)
				return -1;
			if (e->cur < e->nseg)
				e->cur++;
			e->page = 0;
			continue;
		}
		got = dump_pages(d, g->offset + e->page * PAGE_BYTES,
				 g->pages - e->page, &e->buf, r, &ended);
		if (got < 0)
			return -1;
		if (ended) {
			/* A read error that ended it was reported already. */
			if (ended == 1)
				elf_truncated(d, e, g);
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
