/* SPDX-License-Identifier: MIT */
/*
 * The contents and sketch reports: each input's distinct contents as
 * (digest, pages, zero) rows sorted by digest, XXH3-128 with seed 0 of the
 * page, so that exports of different hosts join on the digest (the fleet
 * tool, ksmfleet). sketch keeps the K smallest digests of each input:
 * a bottom-k sketch, from which sharing between inputs can be estimated.
 *
 * The digest is computed in the hashing threads, once per content new to an
 * input (prepare()), and kept per content id: 16 bytes per distinct content
 * of the run. When an input ends, its rows (40 bytes per content of that
 * input) are sorted once and written to an unlinked temporary file, then
 * freed; print() streams them from there, so that the report keeps its
 * place among the others and a host's export is never held in memory twice
 * (the file takes 40 bytes per row in $TMPDIR).
 *
 * Live processes' rows have a column more, after the host: frames. pages
 * counts mappings, as the summary's pages do, and frames the content's
 * distinct frames, as the summary's frames do: a frame is counted in the
 * first input that maps it (a page a prefork server's children share since
 * fork is a frame once, in the parent's rows, and a mapping in each child's),
 * and the rows of all inputs ("*") count each content's frames. KSM merges
 * a content on two frames or more, every mapping of it, fork-shared ones
 * too, and none of a content on one frame (mm/ksm.c never merges a page
 * with itself): ksmfleet needs both numbers to count as the kernel does. A
 * page that maps the kernel's zero page is neither (the reader leaves it
 * out). So ksmfleet's totals of one host's export are the summary's "*":
 * pages, pages_shared, pages_sharing, saved_bytes, frames and freed_bytes.
 * Exports of files keep their five columns (each page its own frame).
 *
 * Every row ends with the host's name (--host, else gethostname()), so that
 * the fleet tool counts a whole-host export (many pid:N inputs) as one host
 * whatever its pids. A sketch of several inputs adds the sketch of all of
 * them, input "*": a host's sketch is not the union of its inputs' (the
 * contents of the union with the smallest digests, and its distinct count,
 * are not known from them), and the fleet tool compares hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../scan/frames.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* One row, in memory while an input's rows are sorted, then in the file. */
struct content_row {
	struct digest d;
	uint32_t pages;			/* mappings */
	uint32_t frames;		/* of "*"; an input's are frames_first()'s */
	uint32_t zero;
	uint32_t input;			/* the input's number */
	uint32_t distinct;		/* the input's distinct contents */
	uint32_t id;			/* the content */
};

struct contents {
	struct report_sink r;		/* first: its sink and its setup */
	const struct algo *xxh128;
	size_t limit;			/* rows per input: SIZE_MAX, or K */
	struct digest zero_digest;
	struct digest *digests;		/* per content id, in order of first sight */
	size_t ndigests, cap;
	FILE *rows;			/* the sorted rows of the inputs so far */
	int failed;			/* writing them failed (said once) */
	char host[256];			/* the host column: --host or gethostname() */
	const char *host_name;		/* --host, or host */
	struct column cols[6];
	size_t ncols;
	struct frames_held *first;	/* live: each input's frames per content,
					 * a frame in its first input (frames_first()) */
	size_t nfirst;
};

/* content_row.input of the rows of all inputs ("*") */
#define ALL_INPUTS UINT32_MAX

/* In a hashing thread: the page's XXH3-128, seed 0. */
static void contents_prepare(struct sink *sk, unsigned thread,
			     const unsigned char *page, void *out)
{
	struct contents *c = (struct contents *)sk;

	(void)thread;
	c->xxh128->hash(page, out);
}

/* Keep the digest of a content at its first sight in the run. */
static void contents_page(struct sink *sk, const struct page_event *pg)
{
	struct contents *c = (struct contents *)sk;

	if (pg->id < c->ndigests)
		return;
	if (pg->id >= c->cap) {
		c->cap = c->cap * 2 > (size_t)pg->id + 1 ? c->cap * 2 :
			 (size_t)pg->id + 4096;
		c->digests = xreallocarray(c->digests, c->cap, sizeof(*c->digests));
		/* Never read unset: a content with no page() keeps digest 0. */
		memset(c->digests + c->ndigests, 0,
		       (c->cap - c->ndigests) * sizeof(*c->digests));
	}
	/* Ids are handed out in order of first sight: this is the next one. */
	if (pg->zero)
		c->digests[pg->id] = c->zero_digest;
	else if (pg->prep)
		memcpy(&c->digests[pg->id], pg->prep, sizeof(struct digest));
	else		/* not prepared (cannot happen): hash it here */
		c->xxh128->hash(pg->bytes, &c->digests[pg->id]);
	c->ndigests = (size_t)pg->id + 1;
}

static int cmp_row(const void *a, const void *b)
{
	const struct content_row *x = a, *y = b;

	if (x->d.hi != y->d.hi)
		return x->d.hi < y->d.hi ? -1 : 1;
	if (x->d.lo != y->d.lo)
		return x->d.lo < y->d.lo ? -1 : 1;
	return 0;
}

/* An input is counted: sort its contents by digest, keep them in the file. */
static void contents_scope(struct sink *sk, const struct scope *sc)
{
	struct contents *c = (struct contents *)sk;
	size_t size = index_size(sc->ix), n = 0;
	struct content_row *rows;
	int all = sc->all && !sc->group;

	struct frame_counts fc = { 0 };

	if (all && sc->frames)
		c->nfirst = frames_first(sc->frames, &c->first);
	/* "*": a sketch of several inputs only (contents would repeat them) */
	if (sc->all && (!all || c->limit == SIZE_MAX ||
			c->r.rs->scan->ninputs < 2))
		return;
	if (all && sc->frames && frames_count(sc->frames, SIZE_MAX, NULL, size, &fc) < 0)
		fc.n = 0;
	rows = xcalloc(size ? size : 1, sizeof(*rows));
	for (size_t id = 0; id < size && id < c->ndigests; id++) {
		uint32_t pages = index_count(sc->ix, id, !all);
		/* "*" of live processes: its frames; files: a frame a page */
		uint32_t frames = fc.n ? (id < fc.n ? fc.frames[id] : 0) : pages;

		if (pages)
			rows[n++] = (struct content_row){ c->digests[id], pages,
				frames, (uint32_t)index_is_zero(sc->ix, id),
				all ? ALL_INPUTS : (uint32_t)sc->input_no, 0,
				(uint32_t)id };
	}
	if (fc.n)
		frame_counts_free(&fc);
	qsort(rows, n, sizeof(*rows), cmp_row);
	for (size_t i = 0; i < n; i++)
		rows[i].distinct = (uint32_t)n;
	n = n < c->limit ? n : c->limit;
	if (!c->failed && fwrite(rows, sizeof(*rows), n, c->rows) != n) {
		error("contents: temporary file: %s", strerror(errno));
		c->failed = 1;
	}
	free(rows);
}

/* One kept row through the writer: of live processes with its frames (an
 * input's: those it maps first, maybe none; its mappings count still). */
static void contents_row(struct contents *c, const struct content_row *r)
{
	char hex[40];
	const struct frames_held *h = c->nfirst && r->input != ALL_INPUTS ?
		frames_held_find(c->first, c->nfirst, r->id, r->input, r->input) :
		NULL;
	uint64_t frames = !c->nfirst || r->input == ALL_INPUTS ? r->frames :
			  h ? h->frames : 0;
	struct cell row[6] = {
		cell_str(r->input == ALL_INPUTS ? "*" :
			 c->r.rs->scan->inputs[r->input].name), cell_str(hex),
		cell_uint(r->pages),
		cell_uint(c->limit == SIZE_MAX ? r->zero : r->distinct),
		cell_str(c->host_name), cell_uint(frames),
	};

	snprintf(hex, sizeof(hex), "0x%016llx%016llx",
		 (unsigned long long)r->d.hi, (unsigned long long)r->d.lo);
	c->r.rs->out->row(c->r.rs->out, row);
}

static void contents_print(struct sink *sk)
{
	struct contents *c = (struct contents *)sk;
	struct content_row r[256];
	size_t n;

	/* live processes: their frames, after the columns of files' exports */
	c->ncols = c->nfirst ? 6 : 5;
	c->r.rs->out->begin(c->r.rs->out, c->limit == SIZE_MAX ? "contents" : "sketch",
			  c->cols, c->ncols, 1);
	if (c->rows) {
		rewind(c->rows);
		while ((n = fread(r, sizeof(r[0]), 256, c->rows)) > 0)
			for (size_t i = 0; i < n; i++)
				contents_row(c, &r[i]);
		if (ferror(c->rows) && !c->failed)
			error("contents: temporary file: %s", strerror(errno));
	}
	c->r.rs->out->end(c->r.rs->out);
}

static void contents_free(struct sink *sk)
{
	struct contents *c = (struct contents *)sk;

	if (c->rows)
		fclose(c->rows);
	free(c->digests);
	free(c->first);
	free(c);
}

static const struct sink_ops contents_ops = {
	.needs = SINK_PAGES,
	.prep_bytes = sizeof(struct digest),
	.prepare = contents_prepare,
	.page = contents_page, .scope = contents_scope,
	.print = contents_print, .free = contents_free,
};

/* The sink of either report; rows stream from each input's scope. */
static struct sink *contents_new(const struct report_setup *rs, int sketch)
{
	const struct scan_config *cfg = rs->scan;
	struct contents *c = report_sink_new(sizeof(*c), &contents_ops, rs);
	static const unsigned char zero[PAGE_BYTES];
	int width = 5, fd;

	for (size_t k = 0; k < cfg->ninputs; k++)
		if ((int)strlen(cfg->inputs[k].name) > width)
			width = (int)strlen(cfg->inputs[k].name);
	c->xxh128 = hash_lookup("xxh128", 6);
	c->xxh128->hash(zero, &c->zero_digest);
	c->limit = sketch ? rs->sketch_size : SIZE_MAX;
	c->cols[0] = (struct column){ "input", width, 0, { 0 } };
	c->cols[1] = (struct column){ "digest", 34, 0, { 0 } };
	c->cols[2] = (struct column){ "pages", 10, 0, { 0 } };
	/* sketch: the input's distinct contents, for estimates from samples */
	c->cols[3] = sketch ? (struct column){ "distinct_pages", 14, 0, { 0 } } :
			      (struct column){ "zero", 4, 0, { 0 } };
	if (rs->host)
		c->host_name = rs->host;
	else {
		/* POSIX leaves a truncated name unterminated: the last byte 0 */
		if (gethostname(c->host, sizeof(c->host) - 1) < 0)
			snprintf(c->host, sizeof(c->host), "localhost");
		c->host_name = c->host;
	}
	/* for people, the one host's name can give way to fit 80 columns */
	c->cols[4] = (struct column){ "host", 4, COL_DROP, { 0 } };
	c->cols[5] = (struct column){ "frames", 10, COL_DROP, { 0 } };
	c->ncols = 5;
	fd = tmpfile_fd();
	c->rows = fd < 0 ? NULL : fdopen(fd, "w+");
	if (!c->rows) {
		error("%s: cannot make a temporary file: %s",
		      sketch ? "sketch" : "contents", strerror(errno));
		c->failed = 1;
	}
	return &c->r.sink;
}

struct sink *contents_create(const struct report_setup *rs)
{
	return contents_new(rs, 0);
}

struct sink *sketch_create(const struct report_setup *rs)
{
	return contents_new(rs, 1);
}
