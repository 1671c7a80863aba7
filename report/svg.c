/* SPDX-License-Identifier: MIT */
/*
 * --svg=FILE: the reports as one standalone SVG picture, written by hand as
 * plain SVG text (no library is needed to write rectangles and text): for
 * each input, the histogram as bars (pages per bucket of sharing, on a log
 * scale) and an address map (the input's pages in scan order, each column of
 * the strip coloured by how many of its pages are zero, copies of a content
 * seen earlier in the input, or other). Every bar and map column carries its
 * figures as data-* attributes, so that tests and scripts can read them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/text.h"
#include "../util/util.h"
#include "report.h"

#define WIDTH 800		/* the picture's width */
#define MAP_COLS 720		/* columns of an address map */
#define BUCKET_PAGES 64		/* pages counted together before drawing */
#define BAR_H 120		/* the tallest histogram bar */

/* Pages of one bucket of an input's address map. */
struct cell3 {
	uint32_t zero, copies, other;
};

/* One input's picture. */
struct picture {
	char *name;
	struct figures f;
	struct cell3 *map;		/* BUCKET_PAGES pages each, scan order */
	size_t nmap;
	uint64_t pages;
};

struct svg_sink {
	struct sink sink;
	const struct report_setup *rs;
	struct picture *pics;
	size_t npics;
	struct picture cur;		/* the input being read */
};

static void svg_page(struct sink *sk, const struct page_event *pg)
{
	struct svg_sink *s = (struct svg_sink *)sk;
	struct picture *p = &s->cur;
	size_t b = (size_t)(p->pages++ / BUCKET_PAGES);

	if (b == p->nmap) {
		p->map = xreallocarray(p->map, p->nmap + 1, sizeof(*p->map));
		p->map[p->nmap++] = (struct cell3){ 0, 0, 0 };
	}
	if (pg->zero)
		p->map[b].zero++;
	else if (pg->seen)
		p->map[b].copies++;
	else
		p->map[b].other++;
}

static void svg_scope(struct sink *sk, const struct scope *sc)
{
	struct svg_sink *s = (struct svg_sink *)sk;

	if (sc->all)
		return;
	s->cur.name = xstrdup(sc->name);
	s->cur.f = *sc->f;
	s->pics = xreallocarray(s->pics, s->npics + 1, sizeof(*s->pics));
	s->pics[s->npics++] = s->cur;
	memset(&s->cur, 0, sizeof(s->cur));
}

/* Text in SVG: &, < and > escaped, controls as '?'. */
static void svg_text(FILE *f, const char *s)
{
	char clean[512];

	for (const char *p = text_clean(s, clean, sizeof(clean)); *p; p++)
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else
			fputc(*p, f);
}

/* The histogram: a bar per bucket, its height log-scaled to its pages. */
static int svg_histogram(FILE *f, const struct figures *fig, int y)
{
	uint64_t most = 1;
	int x = 60;

	for (int b = 0; b < 64; b++)
		if (fig->hist_pages[b] > most)
			most = fig->hist_pages[b];
	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"label\">pages by how many share "
		"their content (log scale)</text>\n", y + 14);
	y += 24;
	for (int b = 0; b < 64; b++) {
		uint64_t n = fig->hist_pages[b];
		int h = n ? (int)lround(BAR_H * log1p((double)n) / log1p((double)most)) : 0;

		if (!fig->hist_groups[b])
			continue;
		fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"30\" height=\"%d\" "
			"fill=\"#1f77b4\" data-bucket=\"%llu\" data-pages=\"%llu\"/>\n"
			"<text x=\"%d\" y=\"%d\" class=\"tick\">%llu</text>\n",
			x, y + BAR_H - h, h, 1ULL << b, (unsigned long long)n,
			x, y + BAR_H + 14, 1ULL << b);
		x += 40;
	}
	return y + BAR_H + 30;
}

/* The address map: MAP_COLS columns, each stacked zero / copies / other. */
static int svg_map(FILE *f, const struct picture *p, int y)
{
	static const char *colour[3] = { "#bbbbbb", "#d62728", "#1f77b4" };
	size_t per = (p->nmap + MAP_COLS - 1) / MAP_COLS;

	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"label\">address map: zero "
		"(grey), copies of earlier pages (red), other (blue)</text>\n", y + 14);
	y += 22;
	for (size_t c = 0; per && c * per < p->nmap; c++) {
		struct cell3 sum = { 0, 0, 0 };
		double top = 0;

		for (size_t k = c * per; k < (c + 1) * per && k < p->nmap; k++) {
			sum.zero += p->map[k].zero;
			sum.copies += p->map[k].copies;
			sum.other += p->map[k].other;
		}
		uint32_t n[3] = { sum.zero, sum.copies, sum.other };
		double all = (double)n[0] + n[1] + n[2];

		fprintf(f, "<g class=\"col\" data-col=\"%zu\" data-zero=\"%u\" "
			"data-copies=\"%u\" data-other=\"%u\">", c, n[0], n[1], n[2]);
		for (int k = 0; k < 3; k++) {
			double h = all ? 40.0 * n[k] / all : 0;

			if (h > 0)
				fprintf(f, "<rect x=\"%zu\" y=\"%.2f\" width=\"1\" "
					"height=\"%.2f\" fill=\"%s\"/>", 60 + c, y + top, h,
					colour[k]);
			top += h;
		}
		fputs("</g>\n", f);
	}
	return y + 60;
}

void svg_bar_add(struct svg_bars *bars, const char *input, const char *label,
		 uint64_t bytes)
{
	struct svg_bar *b;

	bars->v = xreallocarray(bars->v, bars->n + 1, sizeof(*bars->v));
	b = &bars->v[bars->n++];
	b->input = input;
	snprintf(b->label, sizeof(b->label), "%s", label);
	b->bytes = bytes;
}

/* One horizontal bar of the memory chart, scaled to @full bytes. */
static int svg_size_bar(FILE *f, const char *label, uint64_t bytes,
			uint64_t full, int y)
{
	char h[32];
	double w = full ? 500.0 * (double)bytes / (double)full : 0;

	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"tick\">%s</text>"
		"<rect class=\"size\" x=\"140\" y=\"%d\" width=\"%.2f\" height=\"12\" "
		"fill=\"#2ca02c\" data-label=\"%s\" data-bytes=\"%llu\"/>"
		"<text x=\"%.0f\" y=\"%d\" class=\"tick\">%s</text>\n", y + 10, label,
		y, w, label, (unsigned long long)bytes, 146 + w, y + 10,
		human_bytes(bytes, h, sizeof(h)));
	return y + 16;
}

/* The memory an input takes: as it is, after KSM, and what other reports
 * (zram) added. */
static int svg_sizes(FILE *f, const struct picture *p, const struct svg_bars *bars,
		     int y)
{
	uint64_t full = p->f.pages * PAGE_BYTES;

	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"label\">memory used</text>\n",
		y + 12);
	y = svg_size_bar(f, "as it is", full, full, y + 18);
	y = svg_size_bar(f, "KSM", full - p->f.saved_bytes, full, y);
	for (size_t i = 0; bars && i < bars->n; i++)
		if (strcmp(bars->v[i].input, p->name) == 0)
			y = svg_size_bar(f, bars->v[i].label, bars->v[i].bytes, full, y);
	return y + 10;
}

/* How many bars of other reports an input has. */
static int svg_extra(const struct svg_bars *bars)
{
	return bars ? (int)bars->n : 0;
}

/* Write the picture to the file -svg named; an error is one line. */
static void svg_print(struct sink *sk)
{
	struct svg_sink *s = (struct svg_sink *)sk;
	int height = 30 + (int)s->npics * 330 + 16 * svg_extra(s->rs->bars), y = 10;
	FILE *f = fopen(s->rs->svg, "w");

	if (!f) {
		error("%s: cannot write the picture: %s", s->rs->svg, strerror(errno));
		*s->rs->failed = 1;
		return;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<style>text{font-family:sans-serif;font-size:"
		"12px}.title{font-size:15px;font-weight:bold}.tick{font-size:10px}"
		"</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		WIDTH, height, WIDTH, height);
	for (size_t i = 0; i < s->npics; i++) {
		const struct picture *p = &s->pics[i];
		char a[32], b[32];

		fprintf(f, "<g class=\"input\" data-input=\"");
		svg_text(f, p->name);
		fprintf(f, "\">\n<text x=\"20\" y=\"%d\" class=\"title\">", y + 16);
		svg_text(f, p->name);
		fprintf(f, ": KSM saves up to %s of %s</text>\n",
			human_bytes(p->f.saved_bytes, a, sizeof(a)),
			human_bytes(p->f.pages * PAGE_BYTES, b, sizeof(b)));
		y = svg_histogram(f, &p->f, y + 24);
		y = svg_map(f, p, y);
		y = svg_sizes(f, p, s->rs->bars, y);
		fputs("</g>\n", f);
	}
	fputs("</svg>\n", f);
	if (ferror(f) | fclose(f)) {
		error("%s: cannot write the picture", s->rs->svg);
		*s->rs->failed = 1;
	}
}

static void svg_free(struct sink *sk)
{
	struct svg_sink *s = (struct svg_sink *)sk;

	for (size_t i = 0; i < s->npics; i++) {
		free(s->pics[i].name);
		free(s->pics[i].map);
	}
	free(s->cur.map);
	free(s->pics);
	free(s);
}

static const struct sink_ops svg_ops = {
	.needs = SINK_PAGES,
	.page = svg_page, .scope = svg_scope, .print = svg_print, .free = svg_free,
};

struct sink *svg_create(const struct report_setup *rs)
{
	struct svg_sink *s = xcalloc(1, sizeof(*s));

	s->sink.ops = &svg_ops;
	s->rs = rs;
	return &s->sink;
}
