/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the parsers of command-line values: counts
 * (parse_u64), sizes (parse_size), percents (parse_percent), --range
 * (parse_range), durations (parse_duration)
 * and algorithm names (hash_lookup), and of what /proc says a process
 * belongs to (/proc/PID/cgroup, a QEMU command line: host/units.c), on
 * arbitrary text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../host/units.h"
#include "../hash/hash.h"
#include "../util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The unit parsers: names always NUL-terminated within their 256 bytes;
 * @s is @size bytes and a NUL, the command line's terminator. */
static void units_check(const char *s, size_t size)
{
	struct proc_unit u;

	memset(&u, 0, sizeof(u));
	unit_parse_cgroup(s, &u);
	unit_parse_cmdline(s, size + 1, &u);
	for (int k = 0; k < UNIT_KINDS; k++)
		if (!memchr(u.name[k], '\0', sizeof(u.name[k])))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	uint64_t a, b;

	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_u64(s, &a) == 0 && (strspn(s, "0123456789") != strlen(s) ||
				       strtoull(s, NULL, 10) != a))
		abort();	/* a count is digits alone, and reads as itself */
	if (parse_size(s, &a) == 0 && strspn(s, "0123456789.KMGT") != strlen(s))
		abort();	/* no sign, space, exponent, hex or lower case */
	double v;
	int sign;

	if (parse_percent(s, &v, &sign) == 0 &&
	    (strspn(s, "0123456789.%") != strlen(s) || !(v >= 0)))
		abort();
	if (parse_range(s, &a, &b) == 0 && a >= b)
		abort();	/* a range that parses is never empty */
	double d;

	if (parse_duration(s, &d) == 0 && !(d >= 0 && d <= DURATION_MAX))
		abort();	/* a duration is not negative, and 1000h at most */
	/* Every comma-separated name either is in the table or is not. */
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		const struct algo *al = hash_lookup(p, len);

		if (al && (strlen(al->name) != len || memcmp(al->name, p, len)))
			abort();
		p += len;
		if (*p == ',')
			p++;
	}
	units_check(s, size);
	free(s);
	return 0;
}
