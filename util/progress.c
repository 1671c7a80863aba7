/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

/* Seconds between two redraws: about six a second. */
#define REFRESH 0.16

struct progress {
	uint64_t total;
	double start, last;
	int drawn;
};

struct progress *progress_start(int mode, uint64_t total)
{
	struct progress *p;

	if (mode == 0 || (mode < 0 && !isatty(STDERR_FILENO)))
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->total = total;
	p->start = p->last = now_seconds();
	return p;
}

/* Whether the line is to be redrawn now (and so it is counted as drawn);
 * *@now is the time. */
static int redraw(struct progress *p, double *now)
{
	if (!p)
		return 0;
	*now = now_seconds();
	if (*now - p->last < REFRESH)
		return 0;
	p->last = *now;
	p->drawn = 1;
	msg_line_drawn = 1;
	return 1;
}

void progress_update(struct progress *p, uint64_t bytes, uint64_t pages)
{
	double now, rate, el;

	if (!redraw(p, &now))
		return;
	el = now - p->start;
	rate = el > 0 ? (double)bytes / el : 0;
	fprintf(stderr, "\rksmscan: %.1f MiB, %.0f pages/s",
		(double)bytes / 1048576.0, rate / 4096.0);
	if (p->total && bytes <= p->total && rate > 0)
		fprintf(stderr, ", %.0f%%, %.0f s left",
			100.0 * (double)bytes / (double)p->total,
			(double)(p->total - bytes) / rate);
	fprintf(stderr, " (%llu pages in this input)\033[K",
		(unsigned long long)pages);
}

void progress_note(struct progress *p, const char *text)
{
	double now;

	if (redraw(p, &now))
		fprintf(stderr, "\rksmscan: %s, %.0f s\033[K", text,
			now - p->start);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	if (p->drawn && msg_line_drawn)
		fputs("\r\033[K", stderr);
	msg_line_drawn = 0;
	free(p);
}
