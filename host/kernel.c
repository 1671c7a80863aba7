/* SPDX-License-Identifier: MIT */
/*
 * The running kernel's build (kernel.h): its configuration, HZ, soft-dirty
 * bits; and the machine's caches and pipes as the kernel reports them.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>

#include "../util/util.h"
#include "host.h"
#include "kernel.h"

/* The most configuration text read: a kernel's .config is about 300 KB. */
#define CONFIG_MAX (8u << 20)

/* The whole of a small kernel file (at most @max bytes), NUL-terminated;
 * NULL if it cannot be opened. */
static unsigned char *slurp(const char *path, size_t max, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0;
	FILE *f = host_fopen("%s", path);

	*len = 0;
	if (!f)
		return NULL;
	while (!feof(f) && !ferror(f) && cap < max) {
		cap = cap ? 2 * cap : 65536;
		if (cap > max)
			cap = max;
		buf = xreallocarray(buf, cap + 1, 1);
		*len += fread(buf + *len, 1, cap - *len, f);
	}
	fclose(f);
	if (!buf)
		buf = xmalloc(1);
	buf[*len] = '\0';
	return buf;
}

/* The running kernel's configuration as text: /proc/config.gz inflated, or
 * /boot/config-RELEASE; NULL if neither can be read. */
static char *config_text(void)
{
	size_t len, cap = CONFIG_MAX;
	unsigned char *gz = slurp("/proc/config.gz", CONFIG_MAX, &len);
	char *text, path[320];
	struct utsname u;
	z_stream z;

	if (!gz) {
		if (uname(&u) < 0)
			return NULL;
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		return (char *)slurp(path, CONFIG_MAX, &len);
	}
	memset(&z, 0, sizeof(z));
	text = xmalloc(cap + 1);
	/* 16 + window bits: the gzip wrapper */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(gz);
		free(text);
		return NULL;
	}
	z.next_in = gz;
	z.avail_in = (uInt)len;
	z.next_out = (unsigned char *)text;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_FINISH);
	text[cap - z.avail_out] = '\0';
	inflateEnd(&z);
	free(gz);
	return text;
}

/* A line of the running kernel's configuration: 1 and its value in @val,
 * 0 if it is not set, -1 if the configuration cannot be read. */
static int kernel_config(const char *name, char *val, size_t len)
{
	char *text = config_text();
	size_t nlen = strlen(name);
	int found = 0;

	if (!text)
		return -1;
	for (const char *line = text; *line && !found;
	     line += strcspn(line, "\n"), line += *line == '\n') {
		if (strncmp(line, name, nlen) == 0 && line[nlen] == '=') {
			snprintf(val, len, "%.*s", (int)strcspn(line + nlen + 1, "\n"),
				 line + nlen + 1);
			found = 1;
		}
	}
	free(text);
	return found;
}

/* "now at N nsecs" and the first "jiffies: J" of /proc/timer_list. */
static int timer_list(double *seconds, unsigned long long *jiffies)
{
	char line[256];
	unsigned long long ns;
	int have = 0;
	FILE *f = host_fopen("/proc/timer_list");

	if (!f)
		return -1;
	while (have != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "now at %llu nsecs", &ns) == 1) {
			*seconds = (double)ns * 1e-9;
			have |= 1;
		} else if (sscanf(line, "jiffies: %llu", jiffies) == 1) {
			have |= 2;
		}
	}
	fclose(f);
	return have == 3 ? 0 : -1;
}

/* HZ from the jiffies /proc/timer_list counts over 100 ms (root only),
 * rounded to the nearest HZ kernels are built with; 0 if unreadable. */
static unsigned counted_hz(void)
{
	static const unsigned known[] = { 100, 250, 300, 1000 };
	double t0, t1;
	unsigned long long j0, j1;
	unsigned best = 0;

	if (timer_list(&t0, &j0) < 0)
		return 0;
	sleep_until(now_seconds() + 0.1);
	if (timer_list(&t1, &j1) < 0 || t1 - t0 < 0.05)
		return 0;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		double hz = (double)(j1 - j0) / (t1 - t0);

		if (!best || fabs(hz - known[i]) < fabs(hz - best))
			best = known[i];
	}
	return best;
}

/* Asked once a run: the series' setup and the people's notes both ask, and
 * counting takes 100 ms. */
unsigned kernel_hz(void)
{
	static int asked;
	static unsigned hz;
	char val[32];

	if (asked)
		return hz;
	asked = 1;
	if (kernel_config("CONFIG_HZ", val, sizeof(val)) == 1 && atoi(val) > 0)
		hz = (unsigned)atoi(val);
	else
		hz = counted_hz();
	return hz;
}

int kernel_soft_dirty(void)
{
	char val[8];
	int r = kernel_config("CONFIG_MEM_SOFT_DIRTY", val, sizeof(val));

	return r < 0 ? -1 : r == 1 && val[0] == 'y';
}

size_t cpu_cache_bytes(void)
{
	size_t best = 0;

	for (int i = 0; i < 8; i++) {
		char buf[32];
		unsigned long v;
		char unit = 0;
		FILE *f = host_fopen("/sys/devices/system/cpu/cpu0/cache/index%d/size", i);

		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) &&
		    sscanf(buf, "%lu%c", &v, &unit) >= 1) {
			size_t b = unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;

			if (b > best)
				best = b;
		}
		fclose(f);
	}
	return best;
}

int pipe_max_size(void)
{
	return host_read_int("/proc/sys/fs/pipe-max-size");
}

int reopen_stdin(void)
{
	/* ksmscan's own descriptor: never below the tests' root. */
	return open("/proc/self/fd/0", O_RDONLY | O_CLOEXEC | O_NOCTTY);
}
