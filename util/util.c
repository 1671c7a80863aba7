/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "text.h"
#include "util.h"

int msg_quiet;
int msg_silent;

int msg_line_drawn;

/*
 * Print one "ksmscan: ..." line on standard error: after erasing a progress
 * line, and with whatever in it came from a file name or a dump and could
 * drive the terminal or break the line shown as '?'.
 */
static void vmsg(const char *fmt, va_list ap)
{
	char line[1024], clean[4 * 1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (msg_line_drawn) {
		fputs("\r\033[K", stderr);
		msg_line_drawn = 0;
	}
	fprintf(stderr, "ksmscan: %s\n", text_clean(line, clean, sizeof(clean)));
}

void warn(const char *fmt, ...)
{
	va_list ap;

	if (msg_quiet)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void error(const char *fmt, ...)
{
	va_list ap;

	if (msg_silent)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

size_t edit_distance(const char *a, size_t alen, const char *b)
{
	size_t row[64], blen = strlen(b);

	if (alen > 63)
		alen = 63;
	for (size_t j = 0; j <= alen; j++)
		row[j] = j;
	for (size_t i = 1; i <= blen; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= alen; j++) {
			size_t up = row[j];
			size_t best = diag + (a[j - 1] != b[i - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[alen];
}

/* Out of memory is not an input problem: say so and stop. */
static void out_of_memory(size_t n)
{
	error("out of memory (allocating %zu bytes)", n);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	p = realloc(p, n && size ? n * size : 1);
	if (!p)
		out_of_memory(n * size);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_until(double when)
{
	double left;

	while ((left = when - now_seconds()) > 0) {
		struct timespec ts = { (time_t)left,
				       (long)((left - (double)(time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	/* strtoull accepts a sign and leading space; a count must not have them. */
	if (*s < '0' || *s > '9')
		return -1;
	/* Hex with 0x, else decimal: a leading 0 is not octal here. */
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return -1;
		v = strtoull(s + 2, &end, 16);
	} else {
		v = strtoull(s, &end, 10);
	}
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end != '\0')
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}


int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	double v;

	if (parse_u64(s, out) == 0)
		return 0;
	/* Not a whole number: a decimal one with a unit, as 1.8G. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !*end || end[1] ||
	    !(u = strchr(units, toupper((unsigned char)*end))))
		return -1;
	v = ldexp(v, 10 * (int)(u - units + 1));
	if (!(v < 18446744073709551616.0))
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int parse_duration(const char *s, double *seconds)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 },
		{ "h", 3600 },
	};
	char *end;
	double v;

	if (!*s || strchr("+- \t", *s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || v > 1e9)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].suffix) == 0) {
			*seconds = v * units[i].scale;
			return 0;
		}
	return -1;
}

int parse_range(const char *s, uint64_t *start, uint64_t *end)
{
	const char *dash = strchr(s, '-');
	char first[64];
	uint64_t a, b;

	if (!dash || (size_t)(dash - s) >= sizeof(first))
		return -1;
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	if (parse_size(first, &a) < 0 || parse_size(dash + 1, &b) < 0 || a >= b)
		return -1;
	*start = a;
	*end = b;
	return 0;
}

void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
