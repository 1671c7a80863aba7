/* SPDX-License-Identifier: MIT */
/*
 * The table of options read (optable.h): getopt_long()'s arrays, the value
 * of each simple option checked against its range and stored, --help and
 * the usage line, all made from the rows, so that an option is written in
 * one place.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../report/write/writer.h"
#include "../util/util.h"
#include "cli.h"
#include "optable.h"
#include "options.h"
#include "usage.h"

/* getopt_long()'s value for row i without a short letter: past every char. */
#define ROW_VAL 256
/* --help's first column: the options, then their words from here on. */
#define HELP_COL 30
#define WIDTH 80

/* The option getopt_long() stopped at, as typed, for a usage message. */
static const char *typed_option(char **argv)
{
	static char shortopt[3] = "-?";
	const char *arg = argv[optind - 1];

	if (arg && strncmp(arg, "--", 2) == 0)
		return arg;
	if (optopt) {
		shortopt[1] = (char)optopt;
		return shortopt;
	}
	return arg ? arg : "?";
}

/* An option's long name, by row: names_closest()'s candidates. */
static const char *option_at(size_t i)
{
	size_t n;

	return opt_table(&n)[i].name;
}

/* An unknown option, with the long option it is likely a typo of. */
static void unknown_option(char **argv)
{
	const char *typed = typed_option(argv), *guess = NULL;
	size_t n;

	opt_table(&n);
	if (strncmp(typed, "--", 2) == 0)
		guess = names_closest(typed + 2, strcspn(typed + 2, "="), option_at, n);
	usage_error("unknown option '%s'%s%s%s", typed,
		    guess ? " (did you mean '--" : "", guess ? guess : "",
		    guess ? "'?)" : "");
}

/* A range error of a simple option. */
static void range_error(const struct opt_row *r, const char *arg)
{
	if (r->wants)
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
	usage_error("--%s wants %.0f to %.0f, not '%s'", r->name, r->lo, r->hi, arg);
}

/* A simple row's whole number: a size, a count, or for a row whose value
 * is a percent ("P", --advisor-max-cpu) a count with an optional '%'. */
static int read_whole(const struct opt_row *r, const char *arg, uint64_t *u)
{
	char digits[32];
	size_t len = strlen(arg);

	if (r->kind == OK_SIZE)
		return parse_size(arg, u);
	if (r->arg && strcmp(r->arg, "P") == 0 && len > 1 &&
	    len < sizeof(digits) && arg[len - 1] == '%') {
		memcpy(digits, arg, len - 1);
		digits[len - 1] = '\0';
		return parse_u64(digits, u);
	}
	return parse_u64(arg, u);
}

/* Store @v in the row's field, of its type. */
static void store(struct prefs *p, const struct opt_row *r, double v,
		  uint64_t u, const char *s)
{
	void *f = (char *)p + r->offset;

	switch (r->field) {
	case OF_INT: *(int *)f = (int)u; break;
	case OF_UNSIGNED: *(unsigned *)f = (unsigned)u; break;
	case OF_SIZE_T: *(size_t *)f = (size_t)u; break;
	case OF_U64: *(uint64_t *)f = u; break;
	case OF_DOUBLE: *(double *)f = v; break;
	case OF_STRING: *(const char **)f = s; break;
	}
}

/* Read one option's value by its kind, then its handler, if any. */
static void apply(struct prefs *p, const struct opt_row *r, const char *arg)
{
	uint64_t u = 0;
	double d = 0;

	switch (r->kind) {
	case OK_FLAG:
		store(p, r, r->lo, (uint64_t)r->lo, NULL);
		break;
	case OK_STRING:
		store(p, r, 0, 0, arg);
		break;
	case OK_COUNT:
	case OK_SIZE:
		if (read_whole(r, arg, &u) < 0 ||
		    (double)u < r->lo || (double)u > r->hi)
			range_error(r, arg);
		store(p, r, (double)u, u, NULL);
		break;
	case OK_DURATION:
		/* a field of whole seconds takes no fraction of one */
		if (parse_duration(arg, &d) < 0 || !(d >= r->lo && d <= r->hi) ||
		    (r->field != OF_DOUBLE && d != (double)(uint64_t)d))
			range_error(r, arg);
		store(p, r, d, (uint64_t)d, NULL);
		break;
	case OK_HANDLER:
		break;
	}
	if (r->handler)
		r->handler(p, r, arg);
}

/* getopt_long()'s arrays from the table: "-:" keeps operands in order and
 * reports a missing value apart. */
static struct option *make_longopts(const struct opt_row *t, size_t n,
				    char *shorts, size_t len)
{
	struct option *o = xcalloc(n + 1, sizeof(*o));
	size_t k = 0;

	shorts[k++] = '-';
	shorts[k++] = ':';
	for (size_t i = 0; i < n; i++) {
		o[i] = (struct option){ t[i].name,
			t[i].arg ? required_argument : no_argument, NULL,
			t[i].key ? t[i].key : ROW_VAL + (int)i };
		if (t[i].key && k + 3 < len) {
			shorts[k++] = t[i].key;
			if (t[i].arg)
				shorts[k++] = ':';
		}
	}
	shorts[k] = '\0';
	return o;
}

/* The row of getopt_long()'s value @c, or NULL. */
static const struct opt_row *row_of(const struct opt_row *t, size_t n, int c)
{
	if (c >= ROW_VAL && (size_t)(c - ROW_VAL) < n)
		return &t[c - ROW_VAL];
	for (size_t i = 0; i < n; i++)
		if (t[i].key && t[i].key == c)
			return &t[i];
	return NULL;
}

/* Append a file or "-" to the inputs. */
static void add_file(struct prefs *p, const char *path)
{
	prefs_add_input(p, (struct input){ .name = path, .path = path });
}

void options_parse(struct prefs *p, int argc, char **argv)
{
	size_t n;
	const struct opt_row *t = opt_table(&n);
	char shorts[128];
	struct option *longopts = make_longopts(t, n, shorts, sizeof(shorts));
	int c;

	opterr = 0;
	/* musl's getopt stops at a lone "-" (standard input): take it as a
	 * file and go on, so that options may follow it. */
	for (;;) {
		const struct opt_row *r;

		c = getopt_long(argc, argv, shorts, longopts, NULL);
		if (c == -1 && optind < argc && strcmp(argv[optind], "-") == 0 &&
		    strcmp(argv[optind - 1], "--") != 0)
			add_file(p, argv[optind++]);
		else if (c == -1)
			break;
		else if (c == 1)
			add_file(p, optarg);
		else if (c == ':')
			usage_error("option '%s' needs a value", typed_option(argv));
		else if (!(r = row_of(t, n, c)))
			unknown_option(argv);
		else {
			apply(p, r, r->arg ? optarg : NULL);
			if (p->help) {	/* at once: what follows is not read */
				options_help();
				exit(output_close() < 0 ? EXIT_INPUT : EXIT_OK);
			}
			if (r->ksmd && !p->series_opt)
				p->series_opt = xstrdup(typed_option(argv));
		}
	}
	free(longopts);
	/* Operands after "--" are files too. */
	for (; optind < argc; optind++)
		add_file(p, argv[optind]);
	p->cfg.inputs = p->inputs;
	p->cfg.ninputs = p->ninputs;
}

/* Print @word after a space, or on a new line indented by @indent when the
 * line would pass 80 columns; *@col is the current line's width, 0 just
 * after a line was broken. */
static void put_word(const char *word, size_t indent, size_t *col)
{
	size_t len = strlen(word);

	if (*col && *col + 1 + len > WIDTH) {
		printf("\n%*s", (int)indent, "");
		*col = 0;
	}
	printf("%s%s", *col ? " " : "", word);
	*col = (*col ? *col + 1 : indent) + len;
}

/* One form of the usage line: @head, the options of @form, @tail. */
static void usage_form(const char *lead, const char *head, unsigned form,
		       const char *tail)
{
	size_t n, col = 0, indent = strlen(lead) + strlen("ksmscan ");
	const struct opt_row *t = opt_table(&n);
	char word[96], flags[64] = "[-";
	size_t nf = 2;

	printf("%sksmscan", lead);
	col = indent - 1;
	if (*head)
		put_word(head, indent, &col);
	for (size_t i = 0; i < n; i++)	/* short flags first, together */
		if ((t[i].forms & form) && t[i].key && !t[i].arg && nf + 2 < sizeof(flags))
			flags[nf++] = t[i].key;
	if (nf > 2) {
		flags[nf++] = ']';
		flags[nf] = '\0';
		put_word(flags, indent, &col);
	}
	for (size_t i = 0; i < n; i++) {
		if (!(t[i].forms & form) || (t[i].key && !t[i].arg))
			continue;
		if (t[i].key)
			snprintf(word, sizeof(word), "[-%c %s]", t[i].key, t[i].arg);
		else
			snprintf(word, sizeof(word), "[--%s%s%s]", t[i].name,
				 t[i].arg ? "=" : "", t[i].arg ? t[i].arg : "");
		for (char *w = word; *w; w++)	/* values in lower case */
			if (w > word + 3 && (w[-1] == '=' || w[-1] == ' '))
				for (; *w && *w != ']'; w++)
					*w = (char)tolower((unsigned char)*w);
		put_word(word, indent, &col);
	}
	if (*tail)
		put_word(tail, indent, &col);
	putchar('\n');
}

/* The usage line: one form per way of running ksmscan. */
static void usage_line(void)
{
	usage_form("usage: ", "", FORM_SCAN, "[file ...]");
	usage_form("       ", "--series", FORM_SERIES, "snapshot ...");
	usage_form("       ", "-p pid [-p pid ...] --interval=d --count=n",
		   FORM_LIVE, "[ksmd options]");
	usage_form("       ", "--bench", FORM_BENCH, "");
	usage_form("       ", "--check=forecast.json", FORM_CHECK, "");
}

/* One option's lines of --help: its names, then its words from HELP_COL. */
static void help_row(const struct opt_row *r)
{
	char names[96];
	int len;

	if (r->key)
		len = snprintf(names, sizeof(names), "  -%c, --%s%s%s", r->key,
			       r->name, r->arg ? "=" : "", r->arg ? r->arg : "");
	else
		len = snprintf(names, sizeof(names), "      --%s%s%s", r->name,
			       r->arg ? "=" : "", r->arg ? r->arg : "");
	fputs(names, stdout);
	if (len + 2 > HELP_COL && r->help &&
	    len + 2 + (int)strcspn(r->help, "\n") <= WIDTH) {
		fputs("  ", stdout);
		len = HELP_COL;		/* the first words follow on this line */
	} else if (len + 2 > HELP_COL) {
		printf("\n%*s", HELP_COL, "");
	} else {
		printf("%*s", HELP_COL - len, "");
	}
	if (opt_help_list(r))
		return;
	for (const char *s = r->help ? r->help : ""; ; ) {
		size_t l = strcspn(s, "\n");

		printf("%.*s\n", (int)l, s);
		if (!s[l])
			break;
		s += l + 1;
		printf("%*s", HELP_COL, "");
	}
}

void options_help(void)
{
	size_t n;
	const struct opt_row *t = opt_table(&n);

	usage_line();
	fputs("\nEstimate what Linux KSM (Kernel Samepage Merging) would save on "
	      "memory dumps.\n\n", stdout);
	for (size_t i = 0; i < n; i++)
		help_row(&t[i]);
	fputs("\n"
	      "A file may be '-' for standard input, which is read when no input is named\n"
	      "and it is not a terminal; compressed files are decompressed whatever -f\n"
	      "says (not with --no-decompress). Exit status: 0 success, 1 an input or\n"
	      "the output could not be read or written completely, 2 usage error;\n"
	      "--check: 1 outside the tolerance or a process gone, 2 not a forecast, 3\n"
	      "the kernel cannot be compared. See ksmscan(1).\n",
	      stdout);
}
