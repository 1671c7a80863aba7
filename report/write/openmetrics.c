/* SPDX-License-Identifier: MIT */
/*
 * OpenMetrics text (-o openmetrics), for node_exporter's textfile collector
 * and Prometheus: each numeric column of a report is a gauge family
 * "ksmscan_COLUMN" (the summary's) or "ksmscan_REPORT_COLUMN", with HELP and
 * TYPE, and one sample per row whose labels are the row's text columns.
 * A family's samples must come together, so a report's rows are held until
 * its end; the output ends with "# EOF".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/text.h"
#include "../../util/util.h"
#include "writer.h"
#include "writers.h"

/* One output's state (struct writer's state): what used to be shared. */
struct om_state {
	const char *report;
	const struct column *cols;
	size_t ncols;
	struct cell *cells;		/* nrows * ncols */
	char **labels;		/* each row's label set, as printed */
	size_t nrows;
};

/* The report being written: its columns and its rows' cells, copied. */

/* Whether a cell is a sample's value (the rest are labels). */
static int is_number(const struct cell *c)
{
	return c->kind == CELL_UINT || c->kind == CELL_INT ||
	       c->kind == CELL_REAL || c->kind == CELL_BYTES;
}

/* A metric or label name: [a-zA-Z0-9_], anything else as '_'. */
static void put_name(const char *s)
{
	for (; *s; s++)
		putchar((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') ? *s : '_');
}

/*
 * A label value, escaped as OpenMetrics wants (\\, \" and \n); controls
 * (text from a dump) become '?', bytes that are not UTF-8 "\xHH" (its
 * backslash escaped too, so the value read back is those four characters).
 */
static void put_escaped(FILE *f, const char *s)
{
	while (*s) {
		char shown[TEXT_SHOWN_MAX];
		int bad;
		size_t n = text_char(s, &bad), m;

		if (*s == '\n') {
			fputs("\\n", f);
			s++;
			continue;
		}
		m = text_shown(s, n, bad, shown);
		for (size_t i = 0; i < m; i++) {
			if (shown[i] == '\\' || shown[i] == '"')
				fputc('\\', f);
			fputc(shown[i], f);
		}
		s += n;
	}
}

static void om_begin(const struct writer *w, const char *report,
		     const struct column *cols, size_t ncols, int stream)
{
	struct om_state *o = w->state;

	(void)stream;
	o->report = report;
	o->cols = cols;
	o->ncols = ncols;
	o->nrows = 0;
}

/* One label, name="value", comma-separated from the last. */
static void label(FILE *f, int *first, const char *name, const char *value,
		  size_t len)
{
	fprintf(f, "%s", *first ? "" : ",");
	*first = 0;
	for (const char *p = name; *p; p++)
		fputc((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_', f);
	fputs("=\"", f);
	{
		char *v = xmalloc(len + 1);

		memcpy(v, value, len);
		v[len] = '\0';
		put_escaped(f, v);
		free(v);
	}
	fputc('"', f);
}

/*
 * A row's labels: its text cells, and for a row of --by, --enable or
 * --group the unit's kind and name apart (unit_kind="unit",
 * unit="nginx.service"; policy="enable:..."), so that queries need not
 * parse the input's name.
 */
static char *row_labels(struct om_state *o, const struct cell *cells)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int first = 1;

	if (!f) {
		error("out of memory");
		exit(1);
	}
	for (size_t i = 0; i < o->ncols; i++) {
		const char *s = cells[i].s, *colon;
		char num[64];

		if (!column_shown(&o->cols[i], 0, 0) || is_number(&cells[i]))
			continue;
		if (cells[i].kind == CELL_HEX) {
			cell_format(&cells[i], num, sizeof(num));
			s = num;
		}
		if (!s || !*s)
			continue;
		label(f, &first, o->cols[i].name, s, strlen(s));
		if (strcmp(o->cols[i].name, "input") != 0 || !(colon = strchr(s, ':')))
			continue;
		if (strncmp(s, "enable:", 7) == 0 || strncmp(s, "group:", 6) == 0) {
			label(f, &first, "policy", s, strlen(s));
		} else if (strncmp(s, "pid:", 4) != 0) {
			label(f, &first, "unit_kind", s, (size_t)(colon - s));
			label(f, &first, "unit", colon + 1, strlen(colon + 1));
		}
	}
	fclose(f);
	return buf;
}

static void om_row(const struct writer *w, const struct cell *cells)
{
	struct om_state *o = w->state;
	struct cell *c;

	o->cells = xreallocarray(o->cells, (o->nrows + 1) * o->ncols, sizeof(*o->cells));
	o->labels = xreallocarray(o->labels, o->nrows + 1, sizeof(*o->labels));
	c = o->cells + o->nrows * o->ncols;
	memcpy(c, cells, o->ncols * sizeof(*c));
	for (size_t i = 0; i < o->ncols; i++)
		c[i].s = NULL;		/* the text lives in the labels now */
	o->labels[o->nrows++] = row_labels(o, cells);
}

static int cmp_labels(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether two rows have the same labels: then each sample gets its row's
 * number as well, since a family's label sets must differ. */
static int labels_repeat(struct om_state *o)
{
	char **sorted = xcalloc(o->nrows ? o->nrows : 1, sizeof(*sorted));
	int rep = 0;

	memcpy(sorted, o->labels, o->nrows * sizeof(*sorted));
	qsort(sorted, o->nrows, sizeof(*sorted), cmp_labels);
	for (size_t i = 1; i < o->nrows && !rep; i++)
		rep = strcmp(sorted[i - 1], sorted[i]) == 0;
	free(sorted);
	return rep;
}

/* What the summary's main figures mean, for HELP; other columns name
 * their report and column, which ksmscan(1) describes. */
static const char *const helps[][2] = {
	{ "pages", "4 KiB pages read" },
	{ "zero_pages", "pages whose bytes are all zero" },
	{ "distinct_pages", "distinct page contents" },
	{ "pages_shared", "KSM pages KSM would keep (its pages_shared)" },
	{ "pages_sharing", "pages KSM would map to a kept page (its pages_sharing)" },
	{ "ksm_zero_pages", "pages KSM would map to the zero page (use_zero_pages)" },
	{ "saved_bytes", "bytes KSM would save, were all of the memory mergeable" },
	{ "saved_percent", "saved bytes in percent of the memory read" },
	{ "general_profit", "saved bytes net of KSM's metadata (its general_profit)" },
	{ "mergeable_pages", "resident pages in MADV_MERGEABLE areas (smaps)" },
	{ "thp_pages", "pages in transparent huge pages (smaps AnonHugePages)" },
	{ "ksm_merging_pages", "pages the kernel's KSM merges now" },
	{ "ksm_rmap_items", "KSM's rmap items of the processes now (ksm_stat)" },
	{ "processes_left_out", "processes found by -P or --all-processes "
	  "without a series of their own (--by=process)" },
};

/* The HELP text of column @col of report @report. */
static void help(const char *report, const char *col)
{
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (strcmp(report, "summary") == 0 && strcmp(col, helps[i][0]) == 0) {
			printf(" %s\n", helps[i][1]);
			return;
		}
	printf(" ksmscan's %s report, column %s (ksmscan(1))\n", report, col);
}

/* One family: column @k's numbers of every row that has one. */
static void family(struct om_state *o, size_t k, int numbered)
{
	char value[128];
	int any = 0;

	for (size_t r = 0; r < o->nrows && !any; r++)
		any = is_number(&o->cells[r * o->ncols + k]);
	if (!any || !column_shown(&o->cols[k], 0, 0))
		return;
	for (int line = 0; line < 2; line++) {
		fputs(line ? "# TYPE " : "# HELP ", stdout);
		fputs("ksmscan_", stdout);
		if (strcmp(o->report, "summary") != 0) {
			put_name(o->report);
			putchar('_');
		}
		put_name(o->cols[k].name);
		if (line)
			puts(" gauge");
		else
			help(o->report, o->cols[k].name);
	}
	for (size_t r = 0; r < o->nrows; r++) {
		const struct cell *c = &o->cells[r * o->ncols + k];

		if (!is_number(c))
			continue;
		fputs("ksmscan_", stdout);
		if (strcmp(o->report, "summary") != 0) {
			put_name(o->report);
			putchar('_');
		}
		put_name(o->cols[k].name);
		printf("{%s", o->labels[r]);
		if (numbered)
			printf("%srow=\"%zu\"", *o->labels[r] ? "," : "", r);
		if (c->kind == CELL_REAL && c->r != c->r)
			snprintf(value, sizeof(value), "NaN");
		else if (c->kind == CELL_REAL && (c->r > 1e308 || c->r < -1e308))
			snprintf(value, sizeof(value), "%sInf", c->r > 0 ? "+" : "-");
		else
			cell_format(c, value, sizeof(value));
		printf("} %s\n", value);
	}
}

static void om_end(const struct writer *w)
{
	struct om_state *o = w->state;
	int numbered = labels_repeat(o);

	for (size_t k = 0; k < o->ncols; k++)
		family(o, k, numbered);
	for (size_t r = 0; r < o->nrows; r++)
		free(o->labels[r]);
	free(o->labels);
	free(o->cells);
	o->labels = NULL;
	o->cells = NULL;
	o->nrows = 0;
}

static void om_finish(const struct writer *w)
{
	(void)w;
	puts("# EOF");
}

const struct writer openmetrics_writer = {
	.name = "openmetrics",
	/* none: a report's rows are held to its end, and reports follow
	 * each other (node_exporter reads them all) */
	.flags = WRITER_METRICS,
	.size = sizeof(struct om_state),
	.begin = om_begin,
	.row = om_row,
	.note = writer_skip_note,
	.total = writer_skip_cells,
	.end = om_end,
	.finish = om_finish,
	.params = writer_skip_params,
};
