/* SPDX-License-Identifier: MIT */
/*
 * Settings as something to apply: -o sh, a POSIX sh script that writes each
 * setting into ${KSM_SYSFS:-/sys/kernel/mm/ksm}/NAME and nothing else, and
 * -o tmpfiles, systemd-tmpfiles lines (tmpfiles.d(5): "w PATH - - - -
 * VALUE") that write them at every boot. A report that takes these writers
 * (only -r advise) gives rows of two text cells, the file's name under
 * /sys/kernel/mm/ksm and the value, in the order they are to be written;
 * its notes become comments. A row whose setting is SETTING_REFUSED
 * writes nothing: -o sh prints its reason on standard error and exits 1
 * (so that "| sudo sh" fails), -o tmpfiles gives it as a comment. A row
 * whose setting is SETTING_COMMAND is a command whose words are quoted
 * already: -o sh runs it, -o tmpfiles says it. Every word of the script goes through
 * shell_quote(); a comment is cleaned of controls, so that no text ends it.
 */
#include <stdio.h>
#include <string.h>

#include "../../host/ksm.h"
#include "../../util/shell.h"
#include "../../util/text.h"
#include "writer.h"
#include "writers.h"

#define KSM_DIR KSM_SYSFS_DIR

/* A comment line: the text with every control (a line break) as '?'. */
static void comment(const struct writer *w, const char *text)
{
	char buf[1024];

	(void)w;
	printf("# %s\n", text_clean(text, buf, sizeof(buf)));
}

/* One word, quoted for sh. */
static void word(const char *w)
{
	char buf[1400];

	if (shell_quote(w, buf, sizeof(buf)) >= sizeof(buf))
		fputs("''", stdout);	/* no setting nor reason is as long */
	else
		fputs(buf, stdout);
}

static void sh_begin(const struct writer *w, const char *report,
		     const struct column *cols, size_t ncols, int stream)
{
	(void)w, (void)report, (void)cols, (void)ncols, (void)stream;
	printf("#!/bin/sh\n"
	       "# Run as root. KSM_SYSFS=DIR writes the files in DIR instead.\n"
	       "set -eu\n"
	       "ksm=${KSM_SYSFS:-" KSM_DIR "}\n");
}

static void sh_row(const struct writer *w, const struct cell *cells)
{
	(void)w;
	if (!strcmp(cells[0].s, SETTING_REFUSED)) {	/* so | sudo sh fails */
		char why[600];

		snprintf(why, sizeof(why), "ksmscan: no setting written: %s",
			 cells[1].s);
		fputs("printf '%s\\n' ", stdout);
		word(why);
		fputs(" >&2\nexit 1\n", stdout);
		return;
	}
	if (!strcmp(cells[0].s, SETTING_COMMAND)) {	/* quoted word by word */
		puts(cells[1].s);
		return;
	}
	fputs("printf '%s\\n' ", stdout);
	word(cells[1].s);
	fputs(" > \"$ksm\"/", stdout);
	word(cells[0].s);
	putchar('\n');
}

static void tmpfiles_begin(const struct writer *w, const char *report,
			   const struct column *cols, size_t ncols, int stream)
{
	(void)report, (void)cols, (void)ncols, (void)stream;
	comment(w, "For /etc/tmpfiles.d/ksm.conf: systemd-tmpfiles writes these "
		"at every boot.");
}

/* "w PATH - - - - VALUE": the path is made of safe characters, the value
 * is written as it is (a word: a number or advisor_mode's name). */
static void tmpfiles_row(const struct writer *w, const struct cell *cells)
{
	char name[256], value[256];

	(void)w;
	if (!strcmp(cells[0].s, SETTING_REFUSED)) {
		char why[700];

		snprintf(why, sizeof(why), "No setting written: %s.", cells[1].s);
		comment(w, why);
		return;
	}
	if (!strcmp(cells[0].s, SETTING_COMMAND)) {
		char cmd[1400];

		snprintf(cmd, sizeof(cmd), "Not a file of /sys: run it once, as "
			 "root: %s", cells[1].s);
		comment(w, cmd);
		return;
	}
	printf("w " KSM_DIR "/%s - - - - %s\n",
	       text_clean(cells[0].s, name, sizeof(name)),
	       text_clean(cells[1].s, value, sizeof(value)));
}

const struct writer sh_writer = {
	.name = "sh",
	.flags = WRITER_STREAMS | WRITER_ONE_REPORT | WRITER_SETTINGS,
	.begin = sh_begin, .row = sh_row, .note = comment,
	.total = writer_skip_cells, .end = writer_skip, .finish = writer_skip,
	.params = writer_skip_params,
};

const struct writer tmpfiles_writer = {
	.name = "tmpfiles",
	.flags = WRITER_STREAMS | WRITER_ONE_REPORT | WRITER_SETTINGS,
	.begin = tmpfiles_begin, .row = tmpfiles_row, .note = comment,
	.total = writer_skip_cells, .end = writer_skip, .finish = writer_skip,
	.params = writer_skip_params,
};
