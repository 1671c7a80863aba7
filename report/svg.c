/* SPDX-License-Identifier: MIT */
/*
 * --svg=FILE: the reports as one standalone SVG picture, written by hand as
 * plain SVG text (no library is needed to write rectangles and text): for
 * each input, the histogram as bars (pages per bucket of sharing, on a log
 * scale) and an address map (the input's pages in scan order, each column of
 * the strip coloured by how many of its pages are zero, copies of a content
 * seen earlier in the input, or other). A series (--series) adds its
 * timeline: ksmd's counters over time as curves, and shows its last
 * snapshot. Every bar, map column and curve point carries its figures as
 * data-* attributes, so that tests and scripts can read them.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../scan/series.h"
#include "../util/text.h"
#include "../util/util.h"
#include "report_sink.h"
#include "svg.h"

#define WIDTH 800		/* the picture's width */
#define MAP_COLS 720		/* columns of an address map */
#define BUCKET_PAGES 64		/* pages counted together before drawing */
#define BAR_H 120		/* the tallest histogram bar */
#define CURVE_H 160		/* the timeline's height */

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
	struct report_sink r;		/* first: its sink and its setup */
	struct picture *pics;
	size_t npics;
	struct picture cur;		/* the input being read */
	struct timeline_row *rows;	/* a series' timeline, or NULL */
	size_t nrows;
	struct svg_run {		/* --policy=a,b,...: each policy's */
		const struct policy_ops *policy;
		struct timeline_row *rows;
		size_t nrows;
	} runs[POLICIES_MAX + 1];
	size_t nruns;			/* 0 with one policy */
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

static void svg_series(struct sink *sk, const struct series_result *r)
{
	struct svg_sink *s = (struct svg_sink *)sk;

	s->rows = xcalloc(r->nrows, sizeof(*s->rows));
	memcpy(s->rows, r->rows, r->nrows * sizeof(*s->rows));
	s->nrows = r->nrows;
	for (size_t k = 0; r->nruns > 1 && k < r->nruns; k++) {
		struct svg_run *u = &s->runs[s->nruns++];

		u->policy = r->runs[k].policy;
		u->nrows = r->runs[k].nrows;
		u->rows = xcalloc(u->nrows, sizeof(*u->rows));
		memcpy(u->rows, r->runs[k].rows, u->nrows * sizeof(*u->rows));
	}
}

void svg_text(FILE *f, const char *s)
{
	char clean[512];

	for (const char *p = text_clean(s, clean, sizeof(clean)); *p; p++)
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else if (*p == '\'')
			fputs("&#39;", f);
		else
			fputc(*p, f);
}

/* A bar's height for @n pages when the tallest has @most: log-scaled, so
 * that 1 page and 100000 both show; the axis says what the heights mean. */
static int bar_height(uint64_t n, uint64_t most)
{
	return n ? (int)lround(BAR_H * log1p((double)n) / log1p((double)most)) : 0;
}

/* The histogram's axis: a line, and the powers of ten up to @most, each with
 * a faint line across the bars so that heights read as page counts. */
static void svg_hist_axis(FILE *f, uint64_t most, int y, int right)
{
	fprintf(f, "<line class=\"axis\" x1=\"56\" y1=\"%d\" x2=\"56\" y2=\"%d\" "
		"stroke=\"#000000\"/>\n", y, y + BAR_H);
	for (uint64_t v = 1; v <= most; v *= 10) {
		int ty = y + BAR_H - bar_height(v, most);

		fprintf(f, "<line x1=\"52\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"#dddddd\"/>\n<text x=\"50\" y=\"%d\" "
			"class=\"axis\" text-anchor=\"end\" data-pages=\"%llu\">%llu"
			"</text>\n", ty, right, ty, ty + 4, (unsigned long long)v,
			(unsigned long long)v);
		if (v > UINT64_MAX / 10)
			break;
	}
}

/*
 * The histogram: a bar per bucket of sharing from the first bucket with
 * pages to the last, its pages written on it; an empty bucket between them
 * keeps its place, so that a gap shows where no content is shared that many
 * times.
 */
static int svg_histogram(FILE *f, const struct figures *fig, int y)
{
	uint64_t most = 1;
	int first = -1, last = -1, slot, x = 60;

	for (int b = 0; b < 64; b++) {
		if (fig->hist_pages[b] > most)
			most = fig->hist_pages[b];
		if (fig->hist_contents[b]) {
			last = b;
			first = first < 0 ? b : first;
		}
	}
	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"label\">pages by how many share "
		"their content (pages, log scale)</text>\n", y + 14);
	y += 34;	/* room for the values above the tallest bar */
	slot = first < 0 ? 40 : (WIDTH - 80) / (last - first + 1);
	slot = slot > 40 ? 40 : slot < 8 ? 8 : slot;
	svg_hist_axis(f, most, y, first < 0 ? 100 : 60 + slot * (last - first + 1));
	for (int b = first; b >= 0 && b <= last; b++, x += slot) {
		uint64_t n = fig->hist_pages[b];
		int h = bar_height(n, most);

		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"bucket\" text-anchor="
			"\"middle\">%llu</text>\n", x + slot * 3 / 8, y + BAR_H + 14,
			1ULL << b);
		if (!fig->hist_contents[b])
			continue;
		fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" "
			"height=\"%d\" fill=\"#1f77b4\" data-bucket=\"%llu\" "
			"data-pages=\"%llu\"/>\n<text x=\"%d\" y=\"%d\" "
			"class=\"value\" text-anchor=\"middle\">%llu</text>\n",
			x, y + BAR_H - h, slot * 3 / 4, h, 1ULL << b,
			(unsigned long long)n, x + slot * 3 / 8, y + BAR_H - h - 3,
			(unsigned long long)n);
	}
	return y + BAR_H + 30;
}

/* The address map: MAP_COLS columns, each stacked zero / copies / other. */
static int svg_map(FILE *f, const struct picture *p, int y)
{
	static const char *const colour[3] = { "#bbbbbb", "#d62728", "#1f77b4" };
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

/* One counter of the timeline as a polyline, a point per full scan. */
static void svg_curve(FILE *f, const struct svg_sink *s, size_t field,
		      const char *name, const char *colour, double top, int y)
{
	double end = s->rows[s->nrows - 1].seconds;

	fprintf(f, "<polyline class=\"curve\" data-counter=\"%s\" fill=\"none\" "
		"stroke=\"%s\" stroke-width=\"1.5\" points=\"", name, colour);
	for (size_t i = 0; i < s->nrows; i++) {
		const uint64_t *v = (const uint64_t *)((const char *)&s->rows[i] + field);

		fprintf(f, "%s%.1f,%.1f", i ? " " : "",
			60 + (end > 0 ? 680.0 * s->rows[i].seconds / end : 0),
			y + CURVE_H - CURVE_H * (double)*v / top);
	}
	fputs("\"/>\n", f);
}

/* The timeline: ksmd's counters after each full scan, over time. */
static int svg_timeline(FILE *f, const struct svg_sink *s, int y)
{
	static const struct { size_t off; const char *name, *colour; } c[] = {
		{ offsetof(struct timeline_row, pages_sharing), "pages_sharing", "#2ca02c" },
		{ offsetof(struct timeline_row, pages_shared), "pages_shared", "#1f77b4" },
		{ offsetof(struct timeline_row, pages_unshared), "pages_unshared", "#ff7f0e" },
		{ offsetof(struct timeline_row, pages_volatile), "pages_volatile", "#d62728" },
	};
	double top = 1;

	for (size_t i = 0; i < s->nrows; i++)
		for (size_t k = 0; k < 4; k++) {
			const uint64_t *v = (const uint64_t *)
				((const char *)&s->rows[i] + c[k].off);

			top = (double)*v > top ? (double)*v : top;
		}
	fprintf(f, "<g class=\"timeline\"><text x=\"20\" y=\"%d\" class=\"title\">"
		"ksmd over time: %zu full scans in %.0f s</text>\n", y + 16, s->nrows,
		s->rows[s->nrows - 1].seconds);
	y += 30;
	for (size_t k = 0; k < 4; k++) {
		svg_curve(f, s, c[k].off, c[k].name, c[k].colour, top, y);
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\" fill=\"%s\">%s"
			"</text>\n", 60 + 170 * (int)k, y + CURVE_H + 28, c[k].colour,
			c[k].name);
	}
	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"tick\">%.0f</text>"
		"<text x=\"20\" y=\"%d\" class=\"tick\">0</text>"
		"<text x=\"720\" y=\"%d\" class=\"tick\">%.0f s</text></g>\n",
		y + 8, top, y + CURVE_H, y + CURVE_H + 14, s->rows[s->nrows - 1].seconds);
	return y + CURVE_H + 44;
}

/* --policy=a,b,...: each policy's saving (pages_sharing + ksm_zero_pages)
 * after each full scan, on one time scale. */
static int svg_policies(FILE *f, const struct svg_sink *s, int y)
{
	static const char *const colour[] = {
		"#2ca02c", "#1f77b4", "#ff7f0e", "#d62728", "#9467bd",
	};
	double end = 0, top = 1;

	for (size_t k = 0; k < s->nruns; k++)
		for (size_t i = 0; i < s->runs[k].nrows; i++) {
			const struct timeline_row *r = &s->runs[k].rows[i];
			double v = (double)(r->pages_sharing + r->ksm_zero_pages);

			end = r->seconds > end ? r->seconds : end;
			top = v > top ? v : top;
		}
	fprintf(f, "<g class=\"policies\"><text x=\"20\" y=\"%d\" class=\"title\">"
		"The saving under each policy</text>\n", y + 16);
	y += 30;
	for (size_t k = 0; k < s->nruns; k++) {
		const struct svg_run *u = &s->runs[k];
		const char *c = colour[k % (sizeof(colour) / sizeof(colour[0]))];

		fprintf(f, "<polyline class=\"curve\" data-policy=\"%s\" fill=\"none\" "
			"stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			u->policy->name, c);
		for (size_t i = 0; i < u->nrows; i++)
			fprintf(f, "%s%.1f,%.1f", i ? " " : "",
				60 + (end > 0 ? 680.0 * u->rows[i].seconds / end : 0),
				y + CURVE_H - CURVE_H * (double)(u->rows[i].pages_sharing +
						u->rows[i].ksm_zero_pages) / top);
		fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" class=\"tick\" fill=\"%s\">"
			"%s</text>\n", 60 + 120 * (int)k, y + CURVE_H + 28, c,
			u->policy->name);
	}
	fprintf(f, "<text x=\"20\" y=\"%d\" class=\"tick\">%.0f</text>"
		"<text x=\"20\" y=\"%d\" class=\"tick\">0</text>"
		"<text x=\"720\" y=\"%d\" class=\"tick\">%.0f s</text></g>\n",
		y + 8, top, y + CURVE_H, y + CURVE_H + 14, end);
	return y + CURVE_H + 44;
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

void svg_drawing_add(struct svg_bars *bars, const struct svg_drawing *d)
{
	bars->drawings = xreallocarray(bars->drawings, bars->ndrawings + 1,
				       sizeof(*bars->drawings));
	bars->drawings[bars->ndrawings++] = *d;
}

/* The height of the drawings of other reports. */
static int svg_drawings_height(const struct svg_bars *bars)
{
	int h = 0;

	for (size_t i = 0; bars && i < bars->ndrawings; i++)
		h += bars->drawings[i].height;
	return h;
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
	/* A series shows its last snapshot only. */
	size_t first = s->rows && s->npics ? s->npics - 1 : 0;
	int height = 30 + (int)(s->npics - first) * 340 +
		     16 * svg_extra(s->r.rs->bars) + (s->rows ? CURVE_H + 80 : 0) +
		     (s->nruns ? CURVE_H + 80 : 0) +
		     svg_drawings_height(s->r.rs->bars), y = 10;
	struct out_file out;
	FILE *f;

	if (out_open(&out, s->r.rs->svg) < 0) {
		error("%s: cannot write the picture: %s", s->r.rs->svg, strerror(errno));
		*s->r.rs->failed = 1;
		return;
	}
	f = out.f;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<style>text{font-family:sans-serif;font-size:"
		"12px}.title{font-size:15px;font-weight:bold}.tick,.bucket,.value,.axis{font-size:10px}"
		"</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		WIDTH, height, WIDTH, height);
	if (s->rows && s->nrows)
		y = svg_timeline(f, s, y);
	if (s->nruns)
		y = svg_policies(f, s, y);
	for (size_t i = first; i < s->npics; i++) {
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
		y = svg_sizes(f, p, s->r.rs->bars, y);
		fputs("</g>\n", f);
	}
	for (size_t i = 0; s->r.rs->bars && i < s->r.rs->bars->ndrawings; i++) {
		const struct svg_drawing *d = &s->r.rs->bars->drawings[i];

		d->draw(f, y, WIDTH, d->arg);
		y += d->height;
	}
	fputs("</svg>\n", f);
	if (out_close(&out, 1) < 0) {
		error("%s: cannot write the picture: %s", s->r.rs->svg, strerror(errno));
		*s->r.rs->failed = 1;
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
	free(s->rows);
	for (size_t k = 0; k < s->nruns; k++)
		free(s->runs[k].rows);
	free(s);
}

static const struct sink_ops svg_ops = {
	.needs = SINK_PAGES | SINK_SNAPSHOTS,
	.page = svg_page, .scope = svg_scope, .series = svg_series,
	.print = svg_print, .free = svg_free,
};

struct sink *svg_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct svg_sink), &svg_ops, rs);
}
