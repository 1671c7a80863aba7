/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the parsers of command-line values: sizes and
 * addresses (parse_u64), --range (parse_range), durations (parse_duration)
 * and algorithm names (hash_lookup), on arbitrary text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../hash/hash.h"
#include "../util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	uint64_t a, b;

	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_u64(s, &a) == 0 && strspn(s, "0123456789") == strlen(s) &&
	    strtoull(s, NULL, 10) != a)
		abort();	/* a plain decimal must read as itself */
	if (parse_range(s, &a, &b) == 0 && a >= b)
		abort();	/* a range that parses is never empty */
	double d;

	if (parse_duration(s, &d) == 0 && !(d >= 0 && d <= 3600e9))
		abort();	/* a duration is finite and not negative */
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
	free(s);
	return 0;
}
