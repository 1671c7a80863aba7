/* SPDX-License-Identifier: MIT */
/* The top report: the most-shared contents of each input, and what they hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column top_cols[] = {
	COL("input"), COL("rank"), COL("pages"),
	COL("digest"), COL("description"),
};

#define NCOLS (sizeof(top_cols) / sizeof(top_cols[0]))
/* A page is described as text when it starts with this many text bytes, */
#define TEXT_MIN 16
/* and then by this many of its first characters. */
#define TEXT_SHOWN 40

/* One of the most-shared contents. */
struct top_item {
	uint32_t id;			/* content id in the index */
	uint32_t count;			/* its pages */
};

/* One row of the report. */
struct top_row {
	const char *input;
	size_t rank;
	uint64_t pages;
	char digest[33];		/* by the first selected algorithm */
	char description[80];
};

/* The sink: the rows of every scope, in rank order. */
struct top {
	struct report_sink r;		/* first: its sink and its setup */
	struct top_row *rows;
	size_t nrows;
};

/* Whether item a should rank before item b. */
static int top_before(const struct top_item *a, const struct top_item *b)
{
	return a->count > b->count || (a->count == b->count && a->id < b->id);
}

/*
 * The @n contents with the most pages in the index (of the current input,
 * or of all), most first; ties go to the first seen. Return: how many.
 */
static size_t top_items(const struct index *ix, int current_input,
			struct top_item *top, size_t n)
{
	size_t size = index_size(ix), len = 0;

	if (n == 0)
		return 0;
	/* Keep the best n in a sorted array: n is small (--top). */
	for (size_t id = 0; id < size; id++) {
		struct top_item it = { (uint32_t)id,
				       index_count(ix, id, current_input) };
		size_t k;

		if (!it.count || (len == n && !top_before(&it, &top[n - 1])))
			continue;
		k = len < n ? len++ : n - 1;
		while (k > 0 && top_before(&it, &top[k - 1])) {
			top[k] = top[k - 1];
			k--;
		}
		top[k] = it;
	}
	return len;
}

/* Whether the page is one @width-byte pattern repeated. */
static int repeats(const unsigned char *page, size_t width)
{
	for (size_t i = width; i < PAGE_BYTES; i += width)
		if (memcmp(page, page + i, width) != 0)
			return 0;
	return 1;
}

/* Bytes at the start of a page that read as text (printable ASCII, tab,
 * line breaks), up to @max. */
static size_t text_start(const unsigned char *page, size_t max)
{
	size_t n = 0;

	while (n < max && ((page[n] >= 0x20 && page[n] < 0x7f) || page[n] == '\t' ||
			   page[n] == '\n' || page[n] == '\r'))
		n++;
	return n;
}

/* "text "..."": the page's first characters, line breaks as \n. */
static void describe_text(const unsigned char *page, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "text \"");

	for (size_t i = 0; i < TEXT_SHOWN && at + 5 < len; i++) {
		unsigned char ch = page[i];

		if (ch == '\n' || ch == '\t' || ch == '\r')
			at += (size_t)snprintf(buf + at, len - at, "\\%c",
					       ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r');
		else
			buf[at++] = (char)ch;
	}
	snprintf(buf + at, len - at, "...\"");
}

/*
 * A few words on what a page holds: "zero page", "byte 0xff repeated",
 * "pattern 0000dead repeated", "text "..."" when it starts with text, or
 * "starts " and its first 16 bytes in hex.
 */
static void describe(const unsigned char *page, char *buf, size_t len)
{
	static const size_t widths[] = { 1, 2, 4, 8, 16 };
	size_t w = 0;

	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]) && !w; i++)
		if (repeats(page, widths[i]))
			w = widths[i];
	if (w == 1) {
		if (page[0] == 0)
			snprintf(buf, len, "zero page");
		else
			snprintf(buf, len, "byte 0x%02x repeated", page[0]);
		return;
	}
	size_t n = w ? w : 16, at;

	if (!w && text_start(page, TEXT_MIN) == TEXT_MIN) {
		describe_text(page, buf, len);
		return;
	}
	/* A repeated pattern, or else the first 16 bytes, in memory order. */
	at = (size_t)snprintf(buf, len, "%s", w ? "pattern " : "starts ");
	for (size_t i = 0; i < n && at + 3 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x", page[i]);
	if (w && at + 10 < len)
		snprintf(buf + at, len - at, " repeated");
}

/* The scope's most-shared contents become rows, while the index holds them. */
static void top_scope(struct sink *sk, const struct scope *sc)
{
	struct top *t = (struct top *)sk;
	size_t want = t->r.rs->top;
	struct top_item *items = xcalloc(want ? want : 1, sizeof(*items));
	size_t n = top_items(sc->ix, !sc->all, items, want);

	t->rows = xreallocarray(t->rows, t->nrows + n + 1, sizeof(*t->rows));
	for (size_t i = 0; i < n; i++) {
		struct top_row *r = &t->rows[t->nrows++];
		struct digest d;

		r->input = sc->name;
		r->rank = i + 1;
		r->pages = items[i].count;
		index_digest(sc->ix, KSM_CHECKSUM, items[i].id, &d);
		digest_format(t->r.rs->scan->algos[KSM_CHECKSUM], &d, r->digest);
		describe(index_entry(sc->ix, items[i].id)->bytes, r->description,
			 sizeof(r->description));
	}
	free(items);
}

static void top_print(struct sink *sk)
{
	struct top *t = (struct top *)sk;
	const struct writer *w = t->r.rs->out;

	w->begin(w, "top", top_cols, NCOLS, 0);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct top_row *r = &t->rows[i];
		struct cell row[NCOLS] = {
			cell_str(r->input), cell_uint(r->rank), cell_uint(r->pages),
			cell_digest(r->digest), cell_str(r->description),
		};

		w->row(w, row);
	}
	w->end(w);
}

static void top_free(struct sink *sk)
{
	struct top *t = (struct top *)sk;

	free(t->rows);
	free(t);
}

static const struct sink_ops top_ops = {
	.scope = top_scope, .print = top_print, .free = top_free,
};

struct sink *top_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct top), &top_ops, rs);
}
