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

void warn_kept(const char *fmt, ...)
{
	va_list ap;

	if (msg_silent)
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

/*
 * The one grammar of a number on the command line (ksmscan(1), NUMBERS AND
 * SIZES): decimal digits with at most one point and at least one digit
 * (".5", "5." and "5.0"); no sign, space, exponent or hex, so that nothing
 * strtod() or strtoull() would also take slips through. Sets *@whole, the
 * fraction as @num / @den (18 digits kept: past them a size's bytes and a
 * duration's nanoseconds no longer change) and *@point; *@sp moves past it.
 */
static int decimal(const char **sp, uint64_t *whole, uint64_t *num,
		   uint64_t *den, int *point)
{
	const char *s = *sp;
	int digits = 0;

	*whole = 0, *num = 0, *den = 1, *point = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		unsigned d = (unsigned)(*s - '0');

		if (*whole > (UINT64_MAX - d) / 10)
			return -1;
		*whole = *whole * 10 + d;
	}
	if (*s == '.') {
		*point = 1;
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (*den < 1000000000000000000ULL) {
				*num = *num * 10 + (uint64_t)(*s - '0');
				*den *= 10;
			}
	}
	if (!digits)
		return -1;
	*sp = s;
	return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
	uint64_t num, den;
	int point;

	if (decimal(&s, out, &num, &den, &point) < 0 || point || *s)
		return -1;
	return 0;
}

/* floor(@num / @den * 2^@shift), bit by bit, exact (@num < @den <= 10^18). */
static uint64_t fraction_bits(uint64_t num, uint64_t den, unsigned shift)
{
	uint64_t bits = 0;

	for (unsigned i = 0; i < shift; i++) {
		num *= 2;
		bits = bits << 1 | (num >= den);
		if (num >= den)
			num -= den;
	}
	return bits;
}

int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	uint64_t whole, num, den, frac;
	unsigned shift = 0;
	int point;

	if (decimal(&s, &whole, &num, &den, &point) < 0)
		return -1;
	if (*s && (u = strchr(units, *s))) {
		shift = 10 * (unsigned)(u - units + 1);
		s++;
	}
	/* a fraction of a byte is no size: a point wants a unit */
	if (*s || (point && !shift) || whole > (UINT64_MAX >> shift))
		return -1;
	frac = fraction_bits(num, den, shift);
	if ((whole << shift) > UINT64_MAX - frac)
		return -1;
	*out = (whole << shift) + frac;
	return 0;
}

int parse_address(const char *s, uint64_t *out)
{
	char *end;

	/* hex as /proc/PID/maps prints addresses: 0x and hex digits alone */
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return parse_size(s, out);
	if (!isxdigit((unsigned char)s[2]))
		return -1;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return errno || *end ? -1 : 0;
}

int parse_duration(const char *s, double *seconds)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 },
		{ "h", 3600 },
	};
	uint64_t whole, num, den;
	int point;

	if (decimal(&s, &whole, &num, &den, &point) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(s, units[i].suffix) == 0) {
			double v = ((double)whole + (double)num / (double)den) *
				   units[i].scale;

			if (v > DURATION_MAX)
				return -1;
			*seconds = v;
			return 0;
		}
	return -1;
}

int parse_percent(const char *s, double *v, int *sign)
{
	uint64_t whole, num, den;
	int point;

	if (decimal(&s, &whole, &num, &den, &point) < 0 ||
	    (*s && strcmp(s, "%") != 0))
		return -1;
	*sign = *s == '%';
	*v = (double)whole + (double)num / (double)den;
	return 0;
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
	if (parse_address(first, &a) < 0 || parse_address(dash + 1, &b) < 0 ||
	    a >= b)
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
