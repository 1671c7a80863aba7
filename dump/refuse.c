/* SPDX-License-Identifier: MIT */
/*
 * Files a user may pass by mistake that are not memory: disk images,
 * programs, archives. Scanned as raw memory they would give figures that
 * mean nothing, so detection refuses them by their magic, with one line
 * saying what the file is (-f raw still reads them as raw memory). One table.
 */
#include <elf.h>
#include <string.h>

#include "dump.h"

/* The ELF header's e_type, in the byte order the header declares. */
static unsigned elf_type(const unsigned char *h, size_t len)
{
	if (len < 18)
		return ET_NONE;
	return h[EI_DATA] == ELFDATA2MSB ? (unsigned)(h[16] << 8 | h[17]) :
					   (unsigned)(h[16] | h[17] << 8);
}

/* A core is memory (elf.c reads it); programs and objects are not. */
static int elf_exec(const unsigned char *h, size_t len)
{
	return elf_type(h, len) == ET_EXEC;
}

static int elf_dyn(const unsigned char *h, size_t len)
{
	return elf_type(h, len) == ET_DYN;
}

static int elf_rel(const unsigned char *h, size_t len)
{
	return elf_type(h, len) == ET_REL;
}

/* A file kind: magic bytes at an offset, and what the file then is. */
struct refusal {
	uint32_t off;
	const char *magic;
	size_t len;
	const char *what;
	int (*also)(const unsigned char *head, size_t len); /* a further test */
};

static const struct refusal refusals[] = {
	{ 0, "QFI\xfb", 4, "a qcow2 disk image", NULL },
	{ 0, "KDMV", 4, "a VMDK disk image (sparse extent)", NULL },
	{ 0, "# Disk DescriptorFile", 21, "a VMDK disk descriptor", NULL },
	{ 64, "\x7f\x10\xda\xbe", 4, "a VirtualBox VDI disk image", NULL },
	{ 0, "conectix", 8, "a VHD disk image", NULL },
	{ 0, "vhdxfile", 8, "a VHDX disk image", NULL },
	{ 0, ELFMAG, SELFMAG, "an ELF executable", elf_exec },
	{ 0, ELFMAG, SELFMAG, "an ELF shared object", elf_dyn },
	{ 0, ELFMAG, SELFMAG, "an ELF relocatable object", elf_rel },
	{ 257, "ustar", 5, "a tar archive", NULL },
	{ 0, "PK\x03\x04", 4, "a zip archive", NULL },
	{ 32769, "CD001", 5, "an ISO 9660 image", NULL },
};

/* A fixed-size VHD has its 512-byte footer only at the end. */
#define VHD_FOOTER 512

const char *refuse_kind(const unsigned char *head, size_t len,
			const unsigned char *map, uint64_t size, uint64_t *at)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];

		if (len < r->off || len - r->off < r->len ||
		    memcmp(head + r->off, r->magic, r->len) != 0)
			continue;
		if (r->also && !r->also(head, len))
			continue;
		*at = r->off;
		return r->what;
	}
	if (map && size >= VHD_FOOTER &&
	    memcmp(map + size - VHD_FOOTER, "conectix", 8) == 0) {
		*at = size - VHD_FOOTER;
		return "a VHD disk image";
	}
	return NULL;
}
