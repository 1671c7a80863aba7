/* SPDX-License-Identifier: MIT */
/*
 * QEMU's migration stream, as `virsh save`, `savevm` to a file or
 * `migrate "exec:cat > FILE"` write it: the magic "QEVM" and version 3
 * (big-endian), then sections. The RAM section ("ram") starts with the list
 * of RAM blocks (name and length each), then carries page records: a
 * big-endian 64-bit word holding the page's offset in its block and flags,
 * the block's name unless the record continues the previous block, then
 * either the page (4096 bytes) or one fill byte for a page of that byte.
 * Each block is a region. Its pages' addresses are their offsets in the
 * block plus the block's base, the sum of the lengths of the blocks listed
 * before it (as QEMU lays its RAM blocks out one after another), so that
 * pages of two blocks never share an address: a series pairs pages by it.
 * Device state follows the RAM; it cannot be skipped without knowing every
 * device, so reading stops at the first device section once the RAM is
 * complete. `virsh save` puts libvirt's header and the domain's XML first:
 * they are skipped.
 *
 * A running guest's stream sends a page again when the guest wrote it after
 * it was sent; the destination keeps the last copy. So the stream is read
 * twice: a first pass counts each page's records, the second hands out only
 * the last record of each page, and one warning counts the pages sent more
 * than once. A stream from a pipe or a compression layer is copied to a
 * temporary file first (the spool's free-space rule applies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/memory.h"
#include "../util/bytes.h"
#include "../util/util.h"
#include "dump.h"

#define QEMU_MAGIC "QEVM"
#define QEMU_VERSION 3

/* Section types. */
enum {
	SEC_EOF = 0x00, SEC_START = 0x01, SEC_PART = 0x02, SEC_END = 0x03,
	SEC_FULL = 0x04, SEC_SUB = 0x05, SEC_VMDESC = 0x06, SEC_CONFIG = 0x07,
	SEC_COMMAND = 0x08, SEC_FOOTER = 0x7e,
};

/* Flags in the low bits of a RAM record's word. */
enum {
	RAM_ZERO = 0x02, RAM_MEM_SIZE = 0x04, RAM_PAGE = 0x08, RAM_EOS = 0x10,
	RAM_CONTINUE = 0x20, RAM_XBZRLE = 0x40, RAM_HOOK = 0x80,
	RAM_COMPRESS = 0x100, RAM_MULTIFD_FLUSH = 0x200,
};
#define RAM_FLAGS (PAGE_BYTES - 1)

/* libvirt's save header: magic, then 32-bit fields in the host's order. */
#define LIBVIRT_HEADER 92
#define LIBVIRT_SAVE "LibvirtQemudSave"
#define LIBVIRT_PART "LibvirtQemudPart"

/* More RAM blocks than any machine has: a bound on a forged list. */
#define MAX_BLOCKS 4096

struct qblock {
	struct region region;	/* name: the block's id; from its base to its
				 * base plus its length */
	uint64_t length;	/* its bytes */
	unsigned list;		/* the last block list that named it */
	char id[256];
};

/* One RAM record, read ahead when a run of fill pages ends at it. */
struct qrec {
	uint64_t word;		/* offset | flags */
	struct qblock *block;	/* ZERO and PAGE records */
	unsigned fill;		/* ZERO records: the byte */
	uint64_t at;		/* where the record starts */
};

struct qemu {
	/* Each block allocated on its own: the engine keeps region pointers. */
	struct qblock **blocks;
	size_t nblocks, cap;
	struct qblock *cur;	/* the block a CONTINUE record means */
	uint64_t next_base;	/* where the next listed block begins */
	unsigned lists;		/* block lists read so far, both passes */
	uint32_t ram_id;	/* the RAM section's id */
	int ram_started;	/* its START section was read */
	int in_ram;		/* inside a RAM section's records */
	int ram_last;		/* the section being read is RAM's END */
	int done;		/* the RAM is complete, or the stream ended */
	struct qrec pending;	/* a record read ahead */
	int have_pending;
	int broken;		/* an error was reported */
	unsigned char *fill;	/* BATCH_PAGES pages of one fill byte */
	int fill_byte;		/* that byte, -1 before the first run */
	unsigned char *buf;	/* stream buffer (dump_pages() allocates it) */
	uint32_t *sends;	/* per page of the RAM (address / PAGE_BYTES):
				 * its records still to come */
	uint64_t npages;	/* entries of sends */
	int counting;		/* the first pass: count records, hand out none */
	uint64_t resent;	/* records passed over: a later one replaced them */
	int resent_said;
};

static int qemu_probe(const unsigned char *head, size_t len)
{
	if (len >= 4 && memcmp(head, QEMU_MAGIC, 4) == 0)
		return 1;
	return len >= 16 && (memcmp(head, LIBVIRT_SAVE, 16) == 0 ||
			     memcmp(head, LIBVIRT_PART, 16) == 0);
}

/* Read @len bytes of @what; -1 (reported) when the stream ends first. */
static int qread(struct dump *d, void *buf, size_t len, const char *what)
{
	uint64_t at = d->src.pos;
	ssize_t n = source_read(&d->src, buf, len);

	if (n < 0) {
		dump_read_error(d);
		return -1;
	}
	if ((size_t)n < len) {
		dump_error(d, at, "QEMU stream truncated in %s", what);
		return -1;
	}
	return 0;
}

/* A big-endian integer of 1 to 8 bytes; -1 (reported) when truncated. */
static int qread_be(struct dump *d, int bytes, uint64_t *v, const char *what)
{
	unsigned char b[8];

	if (qread(d, b, (size_t)bytes, what) < 0)
		return -1;
	*v = get_be(b, bytes);
	return 0;
}

/* A name: one length byte, then the bytes (at most 255), made a C string. */
static int qread_name(struct dump *d, char name[256], const char *what)
{
	uint64_t len;

	if (qread_be(d, 1, &len, what) < 0 || qread(d, name, (size_t)len, what) < 0)
		return -1;
	name[len] = 0;
	return 0;
}

/* Report a stream that needs what this reader does not do; return -1. */
static int qemu_unsupported(struct dump *d, uint64_t at, const char *what)
{
	dump_error(d, at, "the stream uses %s, which is not read (save without "
		   "the compress, xbzrle, multifd and postcopy capabilities)",
		   what);
	return -1;
}

/* libvirt's header and XML come first in a `virsh save` file: skip them. */
static int qemu_libvirt(struct dump *d, struct qemu *q)
{
	static const char *const formats[] = { "raw", "gzip", "bzip2", "xz",
					       "lzop", "zstd" };
	unsigned char h[LIBVIRT_HEADER];
	uint32_t data_len, format;

	if (qread(d, h, sizeof(h), "libvirt's save header") < 0)
		return -1;
	data_len = (uint32_t)get_le(h + 20, 4);
	format = (uint32_t)get_le(h + 28, 4);
	if (memcmp(h, LIBVIRT_PART, 16) == 0)
		dump_warn(d, 0, "libvirt marks this save image as incomplete");
	if (format) {
		dump_error(d, 28, "libvirt save image compressed with %s "
			   "(save_image_format): not read", format <
			   sizeof(formats) / sizeof(formats[0]) ?
			   formats[format] : "an unknown format");
		return -1;
	}
	switch (dump_skip_to(d, LIBVIRT_HEADER + (uint64_t)data_len, &q->buf)) {
	case 0:
		return 0;
	case 1:
		dump_error(d, 20, "libvirt's domain XML (%u bytes) runs past the end "
			   "of the file", data_len);
		return -1;
	default:
		return -1;
	}
}

static int qemu_next(struct dump *d, struct page_range *pr);

/*
 * The first pass: count every page's records, from @start to the stream's
 * end or its first fault, saying nothing (the second pass meets the same
 * fault at the same place, and says it then); then go back to @start.
 */
static void qemu_count(struct dump *d, struct qemu *q, uint64_t start)
{
	uint64_t errors = d->errors, warnings = d->warnings;
	int failed = d->failed;
	struct page_range pr;

	d->errors = d->warnings = 1;	/* counted as said: nothing is printed */
	q->counting = 1;
	while (qemu_next(d, &pr) > 0)
		;
	q->counting = 0;
	d->errors = errors;
	d->warnings = warnings;
	d->failed = failed;
	q->cur = NULL;
	q->ram_started = q->in_ram = q->ram_last = q->done = 0;
	q->have_pending = q->broken = 0;
	d->src.pos = start;
}

static int qemu_open(struct dump *d)
{
	struct qemu *q = xcalloc(1, sizeof(*q));
	unsigned char h[8];
	const unsigned char *head;
	size_t len = 0;
	uint64_t at;

	d->priv = q;
	q->fill_byte = -1;
	/* Read twice: a stream is copied first (nothing is consumed yet). */
	if (!d->src.map && dump_map(d, UINT64_MAX) < 0)
		return -1;
	head = source_peek(&d->src, &len);
	if (head && len >= 16 && (memcmp(head, LIBVIRT_SAVE, 16) == 0 ||
				  memcmp(head, LIBVIRT_PART, 16) == 0) &&
	    qemu_libvirt(d, q) < 0)
		return -1;
	at = d->src.pos;
	if (qread(d, h, sizeof(h), "its header") < 0)
		return -1;
	if (memcmp(h, QEMU_MAGIC, 4) != 0) {
		dump_error(d, at, "no QEMU migration stream (bad magic)");
		return -1;
	}
	if (get_be(h + 4, 4) != QEMU_VERSION) {
		dump_error(d, at + 4, "QEMU stream version %u: only version 3 is read",
			   (unsigned)get_be(h + 4, 4));
		return -1;
	}
	qemu_count(d, q, d->src.pos);
	return 0;
}

/* The block named @id, or NULL. */
static struct qblock *qemu_block(struct qemu *q, const char *id)
{
	for (size_t i = 0; i < q->nblocks; i++)
		if (strcmp(q->blocks[i]->id, id) == 0)
			return q->blocks[i];
	return NULL;
}

/*
 * The first pass's table of sends, 4 bytes per page of the RAM the block
 * list declares: a forged size that would need more memory than there is
 * is refused.
 */
static int qemu_sends_table(struct dump *d, struct qemu *q)
{
	uint64_t n = q->next_base / PAGE_BYTES;

	if (n <= q->npages && q->sends)
		return 0;
	/* The second pass knows every block already: its table is there. */
	if (!q->counting || n > mem_available() / 2 / sizeof(*q->sends)) {
		dump_error(d, d->src.pos, "the RAM blocks declare %llu MiB: keeping "
			   "track of their pages would need more memory than there "
			   "is", (unsigned long long)(q->next_base >> 20));
		return -1;
	}
	/* A later block list may add blocks: the table grows with it. */
	q->sends = xreallocarray(q->sends, n ? n : 1, sizeof(*q->sends));
	memset(q->sends + q->npages, 0, (size_t)((n ? n : 1) - q->npages) *
	       sizeof(*q->sends));
	q->npages = n ? n : 1;
	return 0;
}

/*
 * Whether the record of the page at @off of block @b is the one that counts:
 * in the first pass, it is counted and 0 returned; in the second, 1 if it
 * is the page's last record (the destination's memory), else 0 (passed
 * over). @peek: only look, count nothing (a fill run looking ahead).
 */
static int qemu_last_send(struct qemu *q, const struct qblock *b, uint64_t off,
			  int peek)
{
	uint32_t *n = &q->sends[(b->region.start + off) / PAGE_BYTES];

	if (q->counting) {
		if (*n < UINT32_MAX)
			(*n)++;
		return 0;
	}
	if (peek)
		return *n <= 1;
	if (*n > 1) {
		(*n)--;
		q->resent++;
		return 0;
	}
	*n = 0;
	return 1;
}

/*
 * The list of RAM blocks (RAM_MEM_SIZE): their lengths add up to the total
 * the record's word declares.
 */
static int qemu_blocks(struct dump *d, struct qemu *q, uint64_t total)
{
	q->lists++;
	while (total) {
		uint64_t at = d->src.pos, length;
		char id[256];
		struct qblock *b;

		if (qread_name(d, id, "the RAM block list") < 0 ||
		    qread_be(d, 8, &length, "the RAM block list") < 0)
			return -1;
		if (length > total) {
			dump_error(d, at, "RAM block \"%s\" (%llu bytes) runs past the "
				   "RAM size the stream declares", id,
				   (unsigned long long)length);
			return -1;
		}
		total -= length;
		if ((b = qemu_block(q, id))) {
			/* A later list (or the second pass) names the blocks
			 * again; one list naming one twice is forged. */
			if (b->list == q->lists) {
				dump_error(d, at, "RAM block \"%s\" is named twice in "
					   "one block list", id);
				return -1;
			}
			if (b->length != length) {
				dump_error(d, at, "RAM block \"%s\" is declared again "
					   "with %llu bytes (first %llu)", id,
					   (unsigned long long)length,
					   (unsigned long long)b->length);
				return -1;
			}
			b->list = q->lists;
			continue;
		}
		if (q->nblocks == MAX_BLOCKS) {
			dump_error(d, at, "more than %d RAM blocks", MAX_BLOCKS);
			return -1;
		}
		if (q->nblocks == q->cap) {
			q->cap = q->cap ? q->cap * 2 : 8;
			q->blocks = xreallocarray(q->blocks, q->cap, sizeof(*q->blocks));
		}
		b = q->blocks[q->nblocks++] = xcalloc(1, sizeof(*b));
		b->list = q->lists;
		memcpy(b->id, id, sizeof(id));
		b->region.name = b->id;
		b->length = length;
		b->region.start = q->next_base;
		b->region.end = q->next_base + length;
		/* Page-aligned, so that a base never splits a page. */
		q->next_base += (length + PAGE_BYTES - 1) & ~(uint64_t)(PAGE_BYTES - 1);
	}
	return qemu_sends_table(d, q);
}

/* Which capability a record's flags need that this reader lacks, or NULL. */
static const char *qemu_flags_unsupported(uint64_t flags)
{
	if (flags & RAM_COMPRESS)
		return "compressed pages";
	if (flags & RAM_XBZRLE)
		return "XBZRLE pages";
	if (flags & RAM_MULTIFD_FLUSH)
		return "multifd";
	if (flags & RAM_HOOK)
		return "RDMA";
	return NULL;
}

/*
 * Read one RAM record's word, its block name (unless it continues the last
 * block) and, for a fill page, its byte. The page of a PAGE record is left
 * to read.
 */
static int qemu_record(struct dump *d, struct qemu *q, struct qrec *r)
{
	uint64_t flags, off;
	const char *no;

	r->at = d->src.pos;
	if (qread_be(d, 8, &r->word, "a RAM record") < 0)
		return -1;
	flags = r->word & RAM_FLAGS;
	off = r->word & ~(uint64_t)RAM_FLAGS;
	if ((no = qemu_flags_unsupported(flags)))
		return qemu_unsupported(d, r->at, no);
	if (!(flags & (RAM_ZERO | RAM_PAGE)))
		return 0;
	if (!(flags & RAM_CONTINUE)) {
		char id[256];

		if (qread_name(d, id, "a RAM record") < 0)
			return -1;
		if (!(q->cur = qemu_block(q, id))) {
			dump_error(d, r->at, "page of RAM block \"%s\", which the "
				   "block list does not name", id);
			return -1;
		}
	} else if (!q->cur) {
		dump_error(d, r->at, "page continues a RAM block, but none was named");
		return -1;
	}
	r->block = q->cur;
	if (off > r->block->length || r->block->length - off < PAGE_BYTES) {
		dump_error(d, r->at, "page at 0x%llx lies outside RAM block \"%s\" "
			   "(%llu bytes)", (unsigned long long)off, r->block->id,
			   (unsigned long long)r->block->length);
		return -1;
	}
	if (flags & RAM_ZERO) {
		uint64_t fill;

		if (qread_be(d, 1, &fill, "a RAM record") < 0)
			return -1;
		r->fill = (unsigned)fill;
	}
	return 0;
}

/*
 * A run of fill pages of one byte at consecutive offsets of one block, from
 * record @r: the record after the run is kept for the next call.
 */
static int qemu_fill_run(struct dump *d, struct qemu *q, struct qrec *r,
			 struct page_range *pr)
{
	uint64_t next = (r->word & ~(uint64_t)RAM_FLAGS) + PAGE_BYTES;
	size_t n = 1;

	if (!qemu_last_send(q, r->block, next - PAGE_BYTES, 0))
		return 0;	/* counted, or replaced later: nothing to hand out */
	while (n < BATCH_PAGES) {
		struct qrec *x = &q->pending;

		if (qemu_record(d, q, x) < 0) {
			/* Reported: the run before it still counts, then no more. */
			q->broken = 1;
			break;
		}
		q->have_pending = 1;
		if ((x->word & RAM_FLAGS) != (RAM_ZERO | RAM_CONTINUE) ||
		    x->fill != r->fill || (x->word & ~(uint64_t)RAM_FLAGS) != next ||
		    !qemu_last_send(q, x->block, next, 1))
			break;
		qemu_last_send(q, x->block, next, 0);
		q->have_pending = 0;
		next += PAGE_BYTES;
		n++;
	}
	if (!q->fill)
		q->fill = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
	if (q->fill_byte != (int)r->fill) {
		memset(q->fill, (int)r->fill, (size_t)BATCH_PAGES * PAGE_BYTES);
		q->fill_byte = (int)r->fill;
	}
	/* Not stable: the engine copies the pages before the next call. */
	pr->data = q->fill;
	pr->npages = n;
	pr->address = r->block->region.start + (r->word & ~(uint64_t)RAM_FLAGS);
	pr->region = &r->block->region;
	return 1;
}

/* The page of a PAGE record, read where the stream stands. */
static int qemu_page(struct dump *d, struct qemu *q, struct qrec *r,
		     struct page_range *pr)
{
	int ended;
	ssize_t got;

	if (!qemu_last_send(q, r->block, r->word & ~(uint64_t)RAM_FLAGS, 0)) {
		/* Counted, or replaced later: its bytes are passed over. */
		if (dump_skip_to(d, d->src.pos + PAGE_BYTES, &q->buf) == 0)
			return 0;
		dump_error(d, r->at, "QEMU stream truncated in a page");
		return -1;
	}
	got = dump_pages(d, d->src.pos, 1, &q->buf, pr, &ended);

	if (got < 0)
		return -1;
	if (!got) {
		if (ended == 1)
			dump_error(d, r->at, "QEMU stream truncated in a page");
		return -1;
	}
	pr->address = r->block->region.start + (r->word & ~(uint64_t)RAM_FLAGS);
	pr->region = &r->block->region;
	return 1;
}

/*
 * The next RAM record that makes pages: 1 with @pr filled, 0 at the end of
 * the section's records, -1 on an error (reported).
 */
static int qemu_ram(struct dump *d, struct qemu *q, struct page_range *pr)
{
	for (;;) {
		struct qrec r;
		uint64_t flags;

		if (q->have_pending) {
			r = q->pending;
			q->have_pending = 0;
		} else if (qemu_record(d, q, &r) < 0) {
			return -1;
		}
		flags = r.word & RAM_FLAGS;
		if (flags & RAM_MEM_SIZE) {
			if (qemu_blocks(d, q, r.word & ~(uint64_t)RAM_FLAGS) < 0)
				return -1;
		} else if (flags & RAM_ZERO) {
			return qemu_fill_run(d, q, &r, pr);
		} else if (flags & RAM_PAGE) {
			return qemu_page(d, q, &r, pr);
		} else if (flags & RAM_EOS) {
			q->in_ram = 0;
			q->done = q->ram_last;
			return 0;
		} else {
			dump_error(d, r.at, "unknown RAM record flags 0x%llx",
				   (unsigned long long)flags);
			return -1;
		}
	}
}

/*
 * A section that starts with an id string (START, FULL): RAM's is read;
 * another cannot be skipped (reading ends before device state, once the
 * RAM is complete).
 */
static int qemu_named_section(struct dump *d, struct qemu *q, int type, uint64_t at)
{
	uint64_t id, instance, version;
	char name[256];

	if (qread_be(d, 4, &id, "a section header") < 0 ||
	    qread_name(d, name, "a section header") < 0 ||
	    qread_be(d, 4, &instance, "a section header") < 0 ||
	    qread_be(d, 4, &version, "a section header") < 0)
		return -1;
	if (type == SEC_START && strcmp(name, "ram") == 0 && !q->ram_started) {
		q->ram_started = 1;
		q->ram_id = (uint32_t)id;
		q->in_ram = 1;
		return 1;
	}
	dump_error(d, at, "section \"%s\" comes before the RAM is complete and "
		   "cannot be skipped", name);
	return -1;
}

/* A command (QEMU_VM_COMMAND): postcopy and COLO ones are not read. */
static int qemu_command(struct dump *d, struct qemu *q, uint64_t at)
{
	uint64_t cmd, len;

	if (qread_be(d, 2, &cmd, "a command") < 0 ||
	    qread_be(d, 2, &len, "a command") < 0)
		return -1;
	/* 1 opens the return path, 2 is a ping, 11 starts the switchover. */
	if (cmd != 1 && cmd != 2 && cmd != 11)
		return qemu_unsupported(d, at, cmd == 10 ? "COLO" : "postcopy");
	if (dump_skip_to(d, d->src.pos + len, &q->buf) != 0) {
		dump_error(d, at, "QEMU stream truncated in a command");
		return -1;
	}
	return 1;
}

/*
 * The configuration (the machine type, and subsections some machines add):
 * skipped by its framing.
 */
static int qemu_config(struct dump *d, struct qemu *q, uint64_t at)
{
	uint64_t len;

	if (qread_be(d, 4, &len, "the configuration") < 0)
		return -1;
	if (dump_skip_to(d, d->src.pos + len, &q->buf) != 0) {
		dump_error(d, at, "QEMU stream truncated in the configuration");
		return -1;
	}
	return 1;
}

/*
 * Read section headers until RAM records follow (1), the RAM is complete
 * or the stream ends (0), or an error (-1, reported).
 */
static int qemu_section(struct dump *d, struct qemu *q)
{
	for (;;) {
		uint64_t at = d->src.pos, type, id;
		int rc;

		if (qread_be(d, 1, &type, "a section header") < 0)
			return -1;
		switch (type) {
		case SEC_EOF:
		case SEC_VMDESC:
			if (!q->done)
				dump_error(d, at, "QEMU stream ends before its RAM does");
			return q->done ? 0 : -1;
		case SEC_START:
		case SEC_FULL:
			return qemu_named_section(d, q, (int)type, at);
		case SEC_PART:
		case SEC_END:
			if (qread_be(d, 4, &id, "a section header") < 0)
				return -1;
			if (!q->ram_started || id != q->ram_id) {
				dump_error(d, at, "section %llu is not RAM and cannot be "
					   "skipped", (unsigned long long)id);
				return -1;
			}
			q->in_ram = 1;
			q->ram_last = type == SEC_END;
			return 1;
		case SEC_FOOTER:
			if (qread_be(d, 4, &id, "a section footer") < 0)
				return -1;
			continue;
		case SEC_CONFIG:
			rc = qemu_config(d, q, at);
			break;
		case SEC_COMMAND:
			rc = qemu_command(d, q, at);
			break;
		default:
			dump_error(d, at, "unknown QEMU section type 0x%02x",
				   (unsigned)type);
			return -1;
		}
		if (rc < 0)
			return -1;
	}
}

/* Said once, at the end: pages a running guest's stream sent again. */
static void qemu_resent_warn(struct dump *d, struct qemu *q)
{
	if (!q->resent || q->resent_said++)
		return;
	dump_warn(d, d->src.pos, "%llu page records were replaced by a later "
		  "record of the same page (a running guest's stream): each page "
		  "counts once, as its last copy, the guest's memory at the end",
		  (unsigned long long)q->resent);
}

static int qemu_next(struct dump *d, struct page_range *pr)
{
	struct qemu *q = d->priv;
	int rc;

	/* After an error the stream's framing is lost: nothing more is read. */
	while (!q->broken) {
		if (q->in_ram) {
			rc = qemu_ram(d, q, pr);
			if (rc == 0)
				continue;	/* the section's records ended */
		} else {
			/* Device state follows a complete RAM: not memory. */
			if (q->done) {
				qemu_resent_warn(d, q);
				return 0;
			}
			rc = qemu_section(d, q);
			if (rc > 0)
				continue;
		}
		if (rc < 0)
			q->broken = 1;
		return rc;
	}
	return -1;
}

static void qemu_close(struct dump *d)
{
	struct qemu *q = d->priv;

	if (!q)
		return;
	for (size_t i = 0; i < q->nblocks; i++)
		free(q->blocks[i]);
	free(q->blocks);
	free(q->fill);
	free(q->buf);
	free(q->sends);
	free(q);
}

const struct reader qemu_reader = {
	.name = "qemu-save",
	.probe = qemu_probe,
	.open = qemu_open,
	.next = qemu_next,
	.close = qemu_close,
};
