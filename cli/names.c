/* SPDX-License-Identifier: MIT */
/*
 * The options whose values are names from a table (names.c): -a from the
 * checksums', -r from the reports', -c from the compressors'; --known's
 * files. An unknown name is a usage error with a guess at what was meant.
 * --help lists the names of -f, -o and -r from the same tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compress/compress.h"
#include "../dump/dump.h"
#include "../hash/hash.h"
#include "../hash/measure.h"
#include "../util/util.h"
#include "../report/report.h"
#include "../report/write/writer.h"
#include "optable.h"
#include "options.h"
#include "usage.h"

/* The comma-separated names of @list, each handed to @one; empty ones skipped. */
static void for_each_name(struct prefs *p, const char *list,
			  void (*one)(struct prefs *, const char *, size_t))
{
	while (*list) {
		size_t len = strcspn(list, ",");

		if (len)
			one(p, list, len);
		list += len;
		if (*list == ',')
			list++;
	}
}

/* A name from a list, quoted in a usage message: at most 60 bytes of it. */
static const char *quoted(const char *name, size_t len)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 60 ? len : 60), name);
	return buf;
}

const char *names_closest(const char *name, size_t len,
			  const char *(*candidate)(size_t), size_t n)
{
	const char *best = NULL;
	size_t least = len < 6 ? len / 2 + 1 : 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, len, candidate(i));

		if (d < least) {
			least = d;
			best = candidate(i);
		}
	}
	return best;
}

/* Candidates for names_closest(), one per table. */
static const char *algo_at(size_t i) { return hash_get(i)->name; }
static const char *report_at(size_t i) { return report_get(i)->name; }
static const char *compressor_at(size_t i) { return compress_get(i)->name; }

/* A usage error for an unknown @what, with a guess at what was meant. */
static void unknown(const char *what, const char *name, size_t len,
		    const char *(*candidate)(size_t), size_t n, const char *hint)
{
	const char *guess = names_closest(name, len, candidate, n);

	usage_error("unknown %s '%s'%s%s%s%s", what, quoted(name, len),
		    guess ? " (did you mean '" : "", guess ? guess : "",
		    guess ? "'?)" : "", hint);
}

/* Add one algorithm to the selection, once. */
static void select_algo(struct scan_config *cfg, const struct algo *a)
{
	for (size_t i = 0; i < cfg->nalgos; i++)
		if (cfg->algos[i] == a)
			return;
	cfg->algos[cfg->nalgos++] = a;
}

/* One name of -a: from the table, 'all' or 'auto' ('help' is handled apart). */
static void algo_name(struct prefs *p, const char *name, size_t len)
{
	const struct algo *a = hash_lookup(name, len);

	if (len == 4 && strncmp(name, "auto", 4) == 0) {
		/* The fastest of KSM's candidates on this machine. */
		select_algo(&p->cfg, hash_auto(NULL));
	} else if (len == 3 && strncmp(name, "all", 3) == 0) {
		for (size_t i = 0; i < hash_count(); i++)
			select_algo(&p->cfg, hash_get(i));
	} else if (a) {
		select_algo(&p->cfg, a);
	} else {
		unknown("algorithm", name, len, algo_at, hash_count(), " (try -a help)");
	}
}

/* -a LIST */
void prefs_algos(struct prefs *p, const char *list)
{
	p->cfg.nalgos = 0;
	for_each_name(p, list, algo_name);
	if (p->cfg.nalgos == 0)
		usage_error("no algorithm in '%s'", list);
}

/* One name of -r, from the reports' table. */
static void report_name(struct prefs *p, const char *name, size_t len)
{
	const struct report *r = report_lookup(name, len);

	if (!r)
		unknown("report", name, len, report_at, report_count(), "");
	if (strcmp(r->name, "compress") == 0)
		p->compress = 1;
	for (size_t i = 0; i < report_count(); i++)
		if (report_get(i) == r)
			p->reports |= UINT64_C(1) << i;
}

/* One file of --known (a copy of the name: the list is split at commas). */
static void known_name(struct prefs *p, const char *name, size_t len)
{
	char *path = xmalloc(len + 1);

	memcpy(path, name, len);
	path[len] = '\0';
	if (strcmp(path, "-") == 0)
		usage_error("%s", "--known wants files, not standard input");
	p->known = xreallocarray(p->known, p->nknown + 1, sizeof(*p->known));
	p->known[p->nknown++] = path;
}

/* -r LIST */
void prefs_reports_list(struct prefs *p, const char *list)
{
	p->reports = 0;
	for_each_name(p, list, report_name);
	if (!p->reports)
		usage_error("no report in '%s'", list);
}

/* One name of -c, from the compressors' table, or 'all'. */
static void compressor_name(struct prefs *p, const char *name, size_t len)
{
	const struct compressor *c = compress_lookup(name, len);

	if (len == 3 && strncmp(name, "all", 3) == 0) {
		for (size_t i = 0; i < compress_count(); i++)
			compressor_name(p, compress_get(i)->name,
					strlen(compress_get(i)->name));
		return;
	}
	if (!c)
		unknown("compressor", name, len, compressor_at, compress_count(), "");
	for (size_t i = 0; i < p->ncompressors; i++)
		if (p->compressors[i] == c)
			return;
	p->compressors[p->ncompressors++] = c;
}

/* -c LIST: the compressors, and the compress report. */
void prefs_compressors_list(struct prefs *p, const char *list)
{
	p->ncompressors = 0;
	for_each_name(p, list, compressor_name);
	if (!p->ncompressors)
		usage_error("no compressor in '%s'", list);
	p->compress = 1;
}

void prefs_report(struct prefs *p, const char *name)
{
	report_name(p, name, strlen(name));
}

void prefs_known_list(struct prefs *p, const char *list)
{
	for_each_name(p, list, known_name);
}

void prefs_compressors_all(struct prefs *p)
{
	compressor_name(p, "all", 3);
}

/* Print names from a table after --help's column, wrapped in 80. */
static void help_names(const char *(*name)(size_t), size_t n, const char *tail)
{
	size_t col = 30;

	for (size_t i = 0; i < n; i++) {
		const char *s = name(i);

		if (i && col + strlen(s) + 2 > 79) {
			fputs(",\n                              ", stdout);
			col = 30;
		} else if (i) {
			fputs(", ", stdout);
			col += 2;
		}
		fputs(s, stdout);
		col += strlen(s);
	}
	printf("\n                              %s\n", tail);
}

int opt_help_list(const struct opt_row *row)
{
	size_t n = 0;

	if (row->key == 'f') {
		while (dump_format_name(n))
			n++;
		help_names(dump_format_name, n, "(default auto: by magic); compression is\n"
			   "                              still recognised by its magic");
		return 1;
	}
	if (row->key == 'o') {
		while (writer_name(n))
			n++;
		help_names(writer_name, n, "(default table; sh and tmpfiles: -r advise's\n"
			   "                              first setting as a script or as\n"
			   "                              tmpfiles.d lines)");
		return 1;
	}
	if (row->key == 'r') {
		help_names(report_at, report_count(), "(default summary)");
		return 1;
	}
	return 0;
}
