/* SPDX-License-Identifier: MIT */
/*
 * Live processes: /proc/PID/maps lists the mappings, /proc/PID/pagemap tells
 * which pages are present, /proc/PID/mem gives their bytes. Only present pages
 * are read (reading any other would fault it in), and by default only private
 * anonymous memory, which is what KSM can merge.
 *
 * With ksmd_pages (a live series), a process with VM_MERGEABLE areas is read
 * as ksmd scans it: every anonymous page of those areas, the private copies
 * in file-backed ones included.
 *
 * A page that maps the kernel's zero page or huge zero page (memory only
 * read) is never read: it is no memory of the process (Rss leaves it out)
 * and ksmd finds no page there (its walk does not return the zero page).
 * It is counted apart (dump.zero_page_mappings). Which frames are zero
 * pages, kpageflags says (root); without root pagemap hides every frame
 * number and such a page is read as a zero-filled page.
 *
 * Each range also carries its pages' pagemap entries (frame number,
 * exclusive bit), and for a process that has KSM pages, which frames are
 * KSM pages (kpageflags): the engine counts live pages by frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../host/doctor.h"
#include "../host/memory.h"
#include "../host/process.h"
#include "../util/page.h"
#include "../util/util.h"
#include "dump.h"

/* The most /proc/PID/maps text read: about a million mappings. */
#define MAPS_MAX (128u << 20)

#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_FILE (UINT64_C(1) << 61)	/* a file page or shared anonymous */
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)

/* One mapping that will be read. */
struct mapping {
	struct region region;	/* name: path, [heap], [stack] or [anon] */
};

struct proc {
	int mem, pagemap;
	struct mapping *maps;
	size_t nmaps, cur;
	uint64_t addr;		/* next address to look at in maps[cur] */
	uint64_t pm[BATCH_PAGES];
	uint64_t frames[BATCH_PAGES];	/* the run's frame words */
	int kpf;		/* /proc/kpageflags, opened when needed */
	int ksm_flags;		/* the process has KSM pages: look for them */
	unsigned char *buf;
	int warned_gone;	/* memory vanished during the scan: said once */
	uint64_t *mg;		/* ksmd_pages: the mergeable areas, start and end */
	size_t nmg;		/* ... how many; 0: the usual rule */
	struct zero_frames zero;	/* the kernel's zero pages seen */
	int rechecked;		/* the maps were read again at the end */
	int seek;		/* find the next present page before reading */
	int no_seek;		/* the kernel has no PAGEMAP_SCAN: ... */
	uint64_t *res;		/* ... the areas smaps says have pages resident */
	size_t nres;		/* ... how many */
	int res_known;		/* ... smaps was read: skip the other areas */
};

/*
 * Open the process's maps, mem or pagemap read-only; report why not. A
 * process -P or --all-processes listed that has exited since is no error:
 * the scan counts it among those left out, in one line.
 */
static int proc_file(struct dump *d, enum proc_memory_file which)
{
	int fd = proc_memory_open(d->pid, which);
	char path[64];

	if (fd < 0 && d->listed && proc_exited(d->pid))
		d->failed = 1;
	else if (fd < 0)
		dump_fail(d, "cannot open %s: %s",
			  proc_memory_path(d->pid, which, path, sizeof(path)),
			  proc_why_unreadable(d->pid, errno));
	return fd;
}

/* Read all of /proc/PID/maps (its size is unknown in advance). */
static char *proc_read_maps(struct dump *d)
{
	int fd = proc_file(d, PROC_MAPS);
	size_t len = 0, cap = 65536;
	char *text;

	if (fd < 0)
		return NULL;
	text = xmalloc(cap + 1);
	for (;;) {
		ssize_t n = read(fd, text + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			dump_fail(d, "reading maps: %s", strerror(errno));
			free(text);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap) {
			if (cap >= MAPS_MAX) {
				dump_fail(d, "maps larger than %u bytes", MAPS_MAX);
				free(text);
				close(fd);
				return NULL;
			}
			cap *= 2;
			text = xreallocarray(text, cap + 1, 1);
		}
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/*
 * Whether a maps line is memory KSM could merge: readable private anonymous
 * memory (no file, or the heap and stack), not the kernel's special mappings.
 */
static int proc_wanted(const char *perms, unsigned long long inode,
		       const char *path, int all)
{
	if (perms[0] != 'r')
		return 0;
	if (strcmp(path, "[vvar]") == 0 || strcmp(path, "[vdso]") == 0 ||
	    strcmp(path, "[vsyscall]") == 0 || strcmp(path, "[vvar_vclock]") == 0)
		return 0;
	if (all)
		return 1;
	return perms[3] == 'p' && inode == 0 &&
	       (path[0] == '\0' || path[0] == '[');
}

/* Whether the mapping at @start is one of ksmd's areas. */
static int proc_mergeable(const struct proc *p, uint64_t start)
{
	for (size_t i = 0; i < p->nmg; i++)
		if (p->mg[2 * i] == start)
			return 1;
	return 0;
}

/* Whether a page with pagemap entry @pm maps a zero page already seen. */
static int proc_zero_mapping(const struct proc *p, uint64_t pm)
{
	return (pm & PM_PRESENT) && zero_frames_has(&p->zero, pm & PM_PFN_MASK);
}

/* Whether a page with pagemap entry @pm is read: present, not a mapping of
 * the kernel's zero page (no memory of its own), and with ksmd_pages,
 * anonymous. */
static int proc_page(const struct proc *p, uint64_t pm)
{
	if (!(pm & PM_PRESENT) || proc_zero_mapping(p, pm))
		return 0;
	return !p->nmg || !(pm & PM_FILE);
}

/*
 * The first page of the run read at @first whose frame is a zero page,
 * learnt from kpageflags (root) for the zero-filled pages: the run ends
 * before it, and proc_page() leaves it and the next mappings of that zero
 * page out from then on. Return: its index in the run, or @npages.
 */
static size_t proc_zero_learn(struct proc *p, size_t first, size_t npages)
{
	for (size_t i = 0; i < npages && !p->zero.unreadable; i++) {
		uint64_t pfn = p->pm[first + i] & PM_PFN_MASK;

		if (pfn && page_is_zero(p->buf + i * PAGE_BYTES) &&
		    host_zero_frame(&p->kpf, &p->zero, pfn))
			return i;
	}
	return npages;
}

/* Parse the maps text into the mappings to read, within --range. */
static int proc_parse_maps(struct dump *d, struct proc *p, char *text)
{
	size_t cap = 0;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off, inode;
		char perms[8], dev[32];
		int pathpos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &start, &end,
			   perms, &off, dev, &inode, &pathpos) < 6 ||
		    strlen(perms) < 4 || end < start) {
			dump_fail(d, "unexpected line in maps: %.80s", line);
			return -1;
		}
		if (p->nmg ? !proc_mergeable(p, start) :
		    !proc_wanted(perms, inode, line + pathpos, d->opt->all_mappings))
			continue;
		if (end <= d->opt->range_start || start >= d->opt->range_end)
			continue;
		if (p->nmaps == cap) {
			cap = cap ? cap * 2 : 64;
			p->maps = xreallocarray(p->maps, cap, sizeof(*p->maps));
		}
		p->maps[p->nmaps].region.start = start;
		p->maps[p->nmaps].region.end = end;
		p->maps[p->nmaps].region.name =
			xstrdup(line[pathpos] ? line + pathpos : "[anon]");
		p->nmaps++;
	}
	return 0;
}

static int proc_probe(const unsigned char *head, size_t len)
{
	/* A process is named with -p, never detected in a file. */
	(void)head;
	(void)len;
	return 0;
}

static int proc_open(struct dump *d)
{
	struct proc *p = xcalloc(1, sizeof(*p));
	char *text;

	d->priv = p;
	p->mem = p->pagemap = p->kpf = -1;
	if (d->opt->ksmd_pages && !d->opt->all_mappings)
		p->nmg = proc_mergeable_areas(d->pid, &p->mg);
	text = proc_read_maps(d);
	if (!text)
		return -1;
	if (proc_parse_maps(d, p, text) < 0) {
		free(text);
		return -1;
	}
	free(text);
	p->mem = proc_file(d, PROC_MEM);
	if (p->mem < 0)
		return -1;
	p->pagemap = proc_file(d, PROC_PAGEMAP);
	if (p->pagemap < 0)
		return -1;
	p->buf = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
	proc_stats_read(d->pid, &d->proc);
	/* Only a process with KSM pages has frames kpageflags marks KSM,
	 * and only one with AnonHugePages frames in huge pages. */
	p->ksm_flags = d->proc.ksm_merging_pages > 0 || d->proc.thp_pages > 0;
	if (p->nmaps)
		p->addr = p->maps[0].region.start;
	p->seek = 1;
	return 0;
}

/* Say once that memory went away while it was read; the scan goes on. A
 * listed process that exited meanwhile, the scan counts in one line. */
static void proc_gone(struct dump *d, struct proc *p, uint64_t addr)
{
	if (!p->warned_gone && d->listed && proc_exited(d->pid))
		d->exited = 1;
	else if (!p->warned_gone)
		dump_warn(d, addr, "memory changed during the scan (the process "
			  "exited, or unmapped or remapped memory); figures cover "
			  "what was read");
	p->warned_gone = 1;
}

/*
 * At the end, read the maps again: pages of memory unmapped during the scan
 * only look "not present" in pagemap, so this is how a scan notices that the
 * process exited or unmapped memory it was reading.
 */
static void proc_recheck(struct dump *d, struct proc *p)
{
	char *text;
	size_t gone = 0;
	int fd;

	if (p->rechecked || !p->nmaps)
		return;
	p->rechecked = 1;
	fd = proc_memory_open(d->pid, PROC_MAPS);
	if (fd < 0) {
		proc_gone(d, p, p->maps[0].region.start);
		return;
	}
	close(fd);
	text = proc_read_maps(d);
	if (!text)
		return;
	/*
	 * Every mapping read must still be there, the same: both lists are in
	 * address order, so one walk over the new one compares them.
	 */
	size_t i = 0;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line && i < p->nmaps;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end;

		if (sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		while (i < p->nmaps && p->maps[i].region.start < start) {
			gone++;
			i++;
		}
		if (i < p->nmaps && p->maps[i].region.start == start) {
			gone += p->maps[i].region.end != end;
			i++;
		}
	}
	gone += p->nmaps - i;
	if (gone)
		proc_gone(d, p, p->maps[0].region.start);
	free(text);
}

/*
 * The frame words of the run of pages from entry @first of the pagemap
 * read (host/memory.h); a frame that is a KSM page already is marked, and
 * one in a transparent huge page, as far as kpageflags can be read (root).
 */
static void proc_frames(struct proc *p, struct page_range *r, size_t first)
{
	memcpy(p->frames, p->pm + first, r->npages * sizeof(*p->frames));
	if (p->ksm_flags && host_frames_flags(&p->kpf, p->frames, r->npages) < 0)
		p->ksm_flags = 0;	/* not root: no frame numbers either */
	r->frames = p->frames;
}

/* Without PAGEMAP_SCAN: whether smaps gave the mapping at @start no page. */
static int proc_not_resident(struct proc *p, int pid, uint64_t start)
{
	if (!p->no_seek) {
		p->no_seek = 1;
		p->res_known = proc_resident_areas(pid, &p->res, &p->nres) == 0;
	}
	if (!p->res_known)
		return 0;
	for (size_t i = 0; i < p->nres; i++)
		if (p->res[2 * i] == start)
			return 0;
	return 1;
}

/*
 * Move to the first present page of the current mapping, from p->addr on
 * (0), or past the mapping if it has none (1), asking the kernel to walk its
 * page tables: a mapping's untouched terabytes cost no pagemap entry each.
 * Without PAGEMAP_SCAN, a mapping smaps gives no resident page is skipped
 * whole; the others are read entry by entry.
 */
static int proc_seek(struct proc *p, int pid, const struct mapping *m)
{
	uint64_t found;

	if (!p->seek)
		return 0;
	p->seek = 0;
	if (p->no_seek ||
	    pagemap_next_present(p->pagemap, p->addr, m->region.end, &found) < 0)
		return p->addr == m->region.start &&
		       proc_not_resident(p, pid, m->region.start);
	p->addr = found;
	return found >= m->region.end;
}

/*
 * The next run of present pages. The pagemap entries of up to BATCH_PAGES
 * pages are read at once; the first present page and those after it that are
 * present too make the range. Where a batch has none, the next present page
 * is looked for first (proc_seek()).
 */
static int proc_next(struct dump *d, struct page_range *r)
{
	struct proc *p = d->priv;

	while (p->cur < p->nmaps) {
		struct mapping *m = &p->maps[p->cur];
		uint64_t left;
		size_t n, first, run;
		ssize_t got;

		if (m->region.end - p->addr < PAGE_BYTES || proc_seek(p, d->pid, m)) {
			if (++p->cur < p->nmaps)
				p->addr = p->maps[p->cur].region.start;
			p->seek = 1;
			continue;
		}
		left = (m->region.end - p->addr) / PAGE_BYTES;
		n = left < BATCH_PAGES ? (size_t)left : BATCH_PAGES;
		got = pread(p->pagemap, p->pm, n * sizeof(uint64_t),
			    (off_t)(p->addr / PAGE_BYTES * sizeof(uint64_t)));
		if (got < (ssize_t)(n * sizeof(uint64_t))) {
			if (got < 0 && errno != EIO && errno != ESRCH &&
			    errno != EINVAL) {
				dump_error(d, p->addr, "reading pagemap: %s",
					   strerror(errno));
				return -1;
			}
			proc_gone(d, p, p->addr);
			p->addr = m->region.end;
			continue;
		}
		for (first = 0; first < n && !proc_page(p, p->pm[first]); first++)
			d->zero_page_mappings += proc_zero_mapping(p, p->pm[first]);
		for (run = first; run < n && proc_page(p, p->pm[run]); run++)
			;
		if (first == n) {
			p->addr += (uint64_t)n * PAGE_BYTES;
			p->seek = 1;
			continue;
		}
		r->address = p->addr + (uint64_t)first * PAGE_BYTES;
		r->npages = run - first;
		p->addr += (uint64_t)run * PAGE_BYTES;
		got = pread(p->mem, p->buf, r->npages * PAGE_BYTES, (off_t)r->address);
		if (got < 0 && (errno == EPERM || errno == EACCES)) {
			dump_error(d, r->address, "cannot read memory: %s",
				   strerror(errno));
			return -1;
		}
		if (got < (ssize_t)PAGE_BYTES) {
			proc_gone(d, p, r->address);
			continue;
		}
		r->npages = (size_t)got / PAGE_BYTES;
		if ((run = proc_zero_learn(p, first, r->npages)) < r->npages) {
			/* read again from the zero page's mapping on */
			r->npages = run;
			p->addr = r->address + (uint64_t)run * PAGE_BYTES;
			if (!run)
				continue;
		}
		proc_frames(p, r, first);
		r->data = p->buf;
		r->buffer = &p->buf;
		r->stable = 0;
		r->region = &m->region;
		return 1;
	}
	proc_recheck(d, p);
	return 0;
}

static void proc_close(struct dump *d)
{
	struct proc *p = d->priv;

	if (!p)
		return;
	if (p->mem >= 0)
		close(p->mem);
	if (p->pagemap >= 0)
		close(p->pagemap);
	if (p->kpf >= 0)
		close(p->kpf);
	for (size_t i = 0; i < p->nmaps; i++)
		free((char *)p->maps[i].region.name);
	free(p->maps);
	free(p->mg);
	free(p->res);
	free(p->buf);
	free(p);
}

const struct reader proc_reader = {
	.name = "pid",
	.probe = proc_probe,
	.open = proc_open,
	.next = proc_next,
	.close = proc_close,
};
