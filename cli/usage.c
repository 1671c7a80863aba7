/* SPDX-License-Identifier: MIT */
/* A usage error: the message, cleaned for a terminal, and the exit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/text.h"
#include "usage.h"

void usage_error(const char *fmt, ...)
{
	char line[1024], shown[4 * 1024];
	va_list ap;

	/* An option's value may hold controls or bytes that are not UTF-8. */
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ksmscan: %s\nTry 'ksmscan --help'.\n",
		text_clean(line, shown, sizeof(shown)));
	exit(EXIT_USAGE);
}
