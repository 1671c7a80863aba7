/* SPDX-License-Identifier: MIT */
/*
 * The exposure report: for every pair of trust domains (--group), the pages
 * that KSM would merge across them, split by what they hold (docs/exposure.md).
 * A content present in both domains of a pair crosses: all its pages on
 * both sides count, the first kind that fits naming them: zero, other
 * same-filled, equal to a page of a --known file, then low or high entropy.
 * Page contents are never printed; only counts are.
 *
 * Memory: the domains' (domains.h), and per pair of domains 136 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/text.h"
#include "../../scan/domains.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../svg.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read names cut to DOMAIN_COLS and the pages as sizes, within 80
 * columns. */
#define DOMAIN_COLS 14
#define PAGES_AS(n) { .name = n, .size = SIZE_PAGES }
static const struct column exposure_cols[] = {
	{ "domain_a", 0, 0, { .cut = DOMAIN_COLS } },
	{ "domain_b", 0, 0, { .cut = DOMAIN_COLS } },
	{ "pages_crossing", 0, 0, PAGES_AS("crossing") },
	{ "zero_pages", 0, 0, PAGES_AS("zero") },
	{ "same_filled_pages", 0, 0, PAGES_AS("same") },
	{ "low_entropy_pages", 0, 0, PAGES_AS("low") },
	{ "high_entropy_pages", 0, 0, PAGES_AS("high") },
	{ "known_pages", 0, 0, PAGES_AS("known") },
	COL_F("bytes_crossing", COL_NOT_PEOPLE),
	COL_F("entropy_0_1_pages", COL_NOT_PEOPLE),
	COL_F("entropy_1_2_pages", COL_NOT_PEOPLE),
	COL_F("entropy_2_3_pages", COL_NOT_PEOPLE),
	COL_F("entropy_3_4_pages", COL_NOT_PEOPLE),
	COL_F("entropy_4_5_pages", COL_NOT_PEOPLE),
	COL_F("entropy_5_6_pages", COL_NOT_PEOPLE),
	COL_F("entropy_6_7_pages", COL_NOT_PEOPLE),
	COL_F("entropy_7_8_pages", COL_NOT_PEOPLE),
};

#define NCOLS (sizeof(exposure_cols) / sizeof(exposure_cols[0]))

/* The picture's matrix: the width it is drawn for, and its row labels'. */
#define SVG_WIDTH 800
#define SVG_LABEL 160

/* One pair of domains, a < b. */
struct pair {
	uint64_t crossing;		/* pages of both whose content both hold */
	uint64_t kind[KINDS];		/* the same pages by kind */
	uint64_t band[ENTROPY_BANDS];	/* LOW and HIGH ones by entropy */
};

struct exposure {
	struct report_sink r;		/* first: its sink and its setup */
	struct domains d;
	struct pair *pairs;		/* n(n-1)/2, once "*" is counted */
	size_t npairs;
};

/* Number of the pair (a, b), a < b, among n domains. */
static size_t pair_at(size_t a, size_t b, size_t n)
{
	return a * n - a * (a + 1) / 2 + (b - a - 1);
}

/* Every pair's pages: each content that crosses, on both sides of a pair. */
static void exposure_pairs(struct exposure *e)
{
	const struct domains *d = &e->d;

	e->npairs = d->n * (d->n - 1) / 2;
	e->pairs = xcalloc(e->npairs ? e->npairs : 1, sizeof(*e->pairs));
	for (size_t id = 0; id < d->size; id++) {
		enum page_kind kind = (enum page_kind)d->kind[id];

		for (size_t i = d->start[id]; i < d->start[id + 1]; i++)
			for (size_t j = i + 1; j < d->start[id + 1]; j++) {
				struct pair *q = &e->pairs[pair_at(d->by[i].who,
							d->by[j].who, d->n)];
				uint64_t pages = (uint64_t)d->by[i].pages +
						 d->by[j].pages;

				q->crossing += pages;
				q->kind[kind] += pages;
				if (kind == KIND_LOW || kind == KIND_HIGH)
					q->band[d->band[id]] += pages;
			}
	}
}

/* The side of a cell of the picture's matrix, for @n domains. */
static int svg_cell(size_t n, int width)
{
	int side = (width - SVG_LABEL - 40) / (int)(n ? n : 1);

	return side > 60 ? 60 : side < 4 ? 4 : side;
}

/* One cell of the matrix: pair (@a, @b), coloured by @t of the most. */
static void svg_pair(FILE *f, const struct exposure *e, size_t a, size_t b,
		     int x, int y, int side, uint64_t most)
{
	const struct pair *q = &e->pairs[a < b ? pair_at(a, b, e->d.n) :
					  pair_at(b, a, e->d.n)];
	uint64_t high = q->kind[KIND_HIGH];
	int shade = most ? (int)(255 - 255 * high / most) : 255;

	fputs("<rect class=\"pair\" data-domain-a=\"", f);
	svg_text(f, domain_name(&e->d, a));
	fputs("\" data-domain-b=\"", f);
	svg_text(f, domain_name(&e->d, b));
	fprintf(f, "\" data-pages-crossing=\"%llu\" data-high-entropy-pages="
		"\"%llu\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"rgb(255,%d,%d)\" stroke=\"#999\"><title>",
		(unsigned long long)q->crossing, (unsigned long long)high,
		x, y, side, side, shade, shade);
	svg_text(f, domain_name(&e->d, a));
	fputs(" / ", f);
	svg_text(f, domain_name(&e->d, b));
	fprintf(f, ": %llu pages crossing, %llu of high entropy</title></rect>\n",
		(unsigned long long)q->crossing, (unsigned long long)high);
	/* The figure itself, where the cell has room for it. */
	if (side >= 24)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
			"class=\"tick\">%llu</text>\n", x + side / 2,
			y + side / 2 + 4, (unsigned long long)high);
}

/* The picture: a matrix of the domains, each pair's cell the redder the
 * more high-entropy pages would be merged across it. */
static void exposure_draw(FILE *f, int y, int width, const void *arg)
{
	const struct exposure *e = arg;
	size_t n = e->d.n;
	int side = svg_cell(n, width), x0 = 20 + SVG_LABEL, y0 = y + 40;
	uint64_t most = 0;

	for (size_t i = 0; i < e->npairs; i++)
		if (e->pairs[i].kind[KIND_HIGH] > most)
			most = e->pairs[i].kind[KIND_HIGH];
	fprintf(f, "<g class=\"exposure\">\n<text x=\"20\" y=\"%d\" "
		"class=\"title\">High-entropy pages KSM would merge across trust "
		"domains (most: %llu)</text>\n", y + 20, (unsigned long long)most);
	/* Columns in the rows' order, labelled above as far as room allows. */
	for (size_t b = 0; side >= 24 && b < n; b++) {
		char buf[64];

		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
			"class=\"tick\">", x0 + (int)b * side + side / 2, y0 - 4);
		svg_text(f, text_shorten(domain_name(&e->d, b), side / 7, buf,
					 sizeof(buf)));
		fputs("</text>\n", f);
	}
	for (size_t a = 0; a < n; a++) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
			"class=\"tick\">", x0 - 4, y0 + (int)a * side + side / 2 + 4);
		svg_text(f, domain_name(&e->d, a));
		fputs("</text>\n", f);
		for (size_t b = 0; b < n; b++)
			if (a == b)
				fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
					"height=\"%d\" fill=\"#ddd\"/>\n",
					x0 + (int)b * side, y0 + (int)a * side,
					side, side);
			else
				svg_pair(f, e, a, b, x0 + (int)b * side,
					 y0 + (int)a * side, side, most);
	}
	fputs("</g>\n", f);
}

static void exposure_scope(struct sink *sk, const struct scope *sc)
{
	struct exposure *e = (struct exposure *)sk;

	domains_scope(&e->d, sc, 1);
	if (!sc->all || sc->group)
		return;
	exposure_pairs(e);
	if (e->r.rs->svg && e->r.rs->bars) {
		size_t n = e->d.n;
		struct svg_drawing d = {
			.height = 60 + (int)n * svg_cell(n, SVG_WIDTH),
			.draw = exposure_draw, .arg = e,
		};

		svg_drawing_add(e->r.rs->bars, &d);
	}
}

/* The notes for people: what the columns hold, and the entropy bands. */
static void exposure_notes(const struct exposure *e)
{
	const struct writer *w = e->r.rs->out;
	uint64_t band[ENTROPY_BANDS] = { 0 };
	char text[400];
	int len;

	for (size_t i = 0; i < e->npairs; i++)
		for (unsigned k = 0; k < ENTROPY_BANDS; k++)
			band[k] += e->pairs[i].band[k];
	w->note(w, "crossing: the memory of both domains whose content both hold, "
		"which KSM would merge across them; split into zero pages, other "
		"same-filled pages (one 8-byte word repeated), low entropy, high "
		"entropy (7 bits per byte or more: keys, compressed or encrypted "
		"data look so) and pages of --known files. -l shows pages.");
	len = snprintf(text, sizeof(text), "Crossing pages by entropy (bits per "
		       "byte, low and high only):");
	for (unsigned k = 0; k < ENTROPY_BANDS && len < (int)sizeof(text); k++)
		len += snprintf(text + len, sizeof(text) - (size_t)len,
				" %u-%u: %llu%s", k, k + 1,
				(unsigned long long)band[k],
				k + 1 < ENTROPY_BANDS ? "," : ".");
	w->note(w, text);
}

static void exposure_print(struct sink *sk)
{
	struct exposure *e = (struct exposure *)sk;
	const struct writer *w = e->r.rs->out;
	size_t n = e->d.n;

	if (!e->pairs) {		/* "*" never came: nothing was counted */
		w->begin(w, "exposure", exposure_cols, NCOLS, 0);
		w->end(w);
		return;
	}
	w->begin(w, "exposure", exposure_cols, NCOLS, 0);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			const struct pair *q = &e->pairs[pair_at(a, b, n)];
			struct cell row[NCOLS] = {
				cell_str(domain_name(&e->d, a)),
				cell_str(domain_name(&e->d, b)),
				cell_uint(q->crossing), cell_uint(q->kind[KIND_ZERO]),
				cell_uint(q->kind[KIND_SAME]), cell_uint(q->kind[KIND_LOW]),
				cell_uint(q->kind[KIND_HIGH]),
				cell_uint(q->kind[KIND_KNOWN]),
				cell_uint(q->crossing * PAGE_BYTES),
			};

			for (unsigned k = 0; k < ENTROPY_BANDS; k++)
				row[9 + k] = cell_uint(q->band[k]);
			w->row(w, row);
		}
	exposure_notes(e);
	w->end(w);
}

static void exposure_free(struct sink *sk)
{
	struct exposure *e = (struct exposure *)sk;

	domains_free(&e->d);
	free(e->pairs);
	free(e);
}

static const struct sink_ops exposure_ops = {
	.scope = exposure_scope, .print = exposure_print, .free = exposure_free,
};

struct sink *exposure_create(const struct report_setup *rs)
{
	struct exposure *e = report_sink_new(sizeof(*e), &exposure_ops, rs);

	report_domains(&e->d, rs);
	return &e->r.sink;
}
