/* SPDX-License-Identifier: MIT */
#include "text.h"

size_t text_unsafe(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && *p <= 0x9f))
		return 1;
	/* U+0080-U+009F: C2 80 .. C2 9F */
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	/* U+200E-U+200F and U+202A-U+202E: E2 80 8E-8F, E2 80 AA-AE */
	if (p[0] == 0xe2 && p[1] == 0x80 &&
	    ((p[2] >= 0x8e && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae)))
		return 3;
	/* U+2066-U+2069: E2 81 A6-A9 */
	if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
		return 3;
	return 0;
}

char *text_clean(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	while (*s && o + 1 < len) {
		size_t n = text_unsafe(s);

		buf[o++] = n ? '?' : *s;
		s += n ? n : 1;
	}
	buf[o] = '\0';
	return buf;
}
