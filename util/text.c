/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "text.h"

/*
 * The length of a well-formed UTF-8 sequence at @p, or 0: no overlong
 * forms, surrogates or code points past U+10FFFF (what a strict decoder
 * refuses); its code point in *@cp.
 */
static size_t utf8_len(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

size_t text_decode(const char *s, uint32_t *cp, int *unsafe)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 1;
	uint32_t c = p[0];

	if (c >= 0x80 && !(n = utf8_len(p, &c))) {
		*cp = p[0];
		*unsafe = TEXT_BYTE;
		return 1;
	}
	*cp = c;
	*unsafe = c < 0x20 || (c >= 0x7f && c <= 0x9f) ||	/* C0, DEL, C1 */
		  (c >= 0x200b && c <= 0x200f) ||	/* zero widths, LRM, RLM */
		  (c >= 0x202a && c <= 0x202e) ||		/* LRE .. RLO */
		  (c >= 0x2060 && c <= 0x2069) ||	/* word joiner .. PDI */
		  c == 0xfeff ? TEXT_CONTROL : 0;	/* byte order mark */
	return n;
}

/* A code point in one of @n sorted, disjoint [lo, hi] ranges @r. */
static int in_ranges(uint32_t c, const uint32_t (*r)[2], size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c < r[mid][0])
			hi = mid;
		else if (c > r[mid][1])
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * The columns a shown code point takes on a terminal. A small table rather
 * than wcwidth(3): the C library's answer depends on the locale (glibc's
 * is -1 for every wide character in the "C" locale a service runs in),
 * and a table must be as wide whoever prints it. Wide: the East Asian
 * Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt W and F, by
 * block); none: the combining marks (Unicode 14's Mn and Me) of the
 * two-byte forms, where a name of stray bytes most often lands, and of the
 * combining blocks, drawn on the character before.
 */
static int cp_cols(uint32_t c)
{
	static const uint32_t wide[][2] = {
		{ 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a },
		{ 0x2e80, 0x303e }, { 0x3041, 0x33ff }, { 0x3400, 0x4dbf },
		{ 0x4e00, 0x9fff }, { 0xa000, 0xa4cf }, { 0xa960, 0xa97f },
		{ 0xac00, 0xd7a3 }, { 0xf900, 0xfaff }, { 0xfe10, 0xfe19 },
		{ 0xfe30, 0xfe6f }, { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 },
		{ 0x1f300, 0x1f64f }, { 0x1f900, 0x1f9ff }, { 0x20000, 0x2fffd },
		{ 0x30000, 0x3fffd },
	};
	static const uint32_t none[][2] = {	/* Unicode 14's Mn and Me */
		{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd },
		{ 0x05bf, 0x05bf }, { 0x05c1, 0x05c2 }, { 0x05c4, 0x05c5 },
		{ 0x05c7, 0x05c7 }, { 0x0610, 0x061a }, { 0x064b, 0x065f },
		{ 0x0670, 0x0670 }, { 0x06d6, 0x06dc }, { 0x06df, 0x06e4 },
		{ 0x06e7, 0x06e8 }, { 0x06ea, 0x06ed }, { 0x0711, 0x0711 },
		{ 0x0730, 0x074a }, { 0x07a6, 0x07b0 }, { 0x07eb, 0x07f3 },
		{ 0x07fd, 0x07fd }, { 0x1ab0, 0x1ace }, { 0x1dc0, 0x1dff },
		{ 0x20d0, 0x20f0 }, { 0x302a, 0x302d }, { 0x3099, 0x309a },
		{ 0xfe00, 0xfe0f }, { 0xfe20, 0xfe2f },
	};

	if (c < 0x300)
		return 1;
	if (in_ranges(c, none, sizeof(none) / sizeof(none[0])))
		return 0;
	return in_ranges(c, wide, sizeof(wide) / sizeof(wide[0])) ? 2 : 1;
}

int text_char_cols(const char *s, size_t *len)
{
	uint32_t cp;
	int unsafe;

	*len = text_decode(s, &cp, &unsafe);
	return unsafe ? text_cols(unsafe) : cp_cols(cp);
}

size_t text_char(const char *s, int *unsafe)
{
	uint32_t cp;

	return text_decode(s, &cp, unsafe);
}

size_t text_shown(const char *s, size_t n, int unsafe, char out[TEXT_SHOWN_MAX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b = (unsigned char)s[0];

	if (unsafe == TEXT_BYTE) {
		out[0] = '\\';
		out[1] = 'x';
		out[2] = hex[b >> 4];
		out[3] = hex[b & 15];
		return 4;
	}
	if (unsafe) {
		out[0] = '?';
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = s[i];
	return n;
}

void text_put(FILE *f, const char *s)
{
	char shown[TEXT_SHOWN_MAX];

	while (*s) {
		int bad;
		size_t n = text_char(s, &bad);

		fwrite(shown, 1, text_shown(s, n, bad, shown), f);
		s += n;
	}
}

char *text_clean(const char *s, char *buf, size_t len)
{
	char shown[TEXT_SHOWN_MAX];
	size_t o = 0;

	while (*s) {
		int bad;
		size_t n = text_char(s, &bad), m = text_shown(s, n, bad, shown);

		if (o + m >= len)
			break;
		for (size_t i = 0; i < m; i++)
			buf[o++] = shown[i];
		s += n;
	}
	buf[o] = '\0';
	return buf;
}

int text_width(const char *s)
{
	int w = 0;

	while (*s) {
		size_t n;

		w += text_char_cols(s, &n);
		s += n;
	}
	return w;
}

char *human_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, bytes ? "%lluB" : "0", (unsigned long long)bytes);
		return buf;
	}
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) - 1; u++)
		v /= 1024;
	snprintf(buf, len, "%.1f%c", v, units[u]);
	return buf;
}

/* The bytes of @s's first @cols columns. */
static size_t text_prefix(const char *s, int cols)
{
	const char *p = s;

	while (*p) {
		size_t n;
		int w = text_char_cols(p, &n);

		if (w > cols)
			break;
		cols -= w;
		p += n;
	}
	return (size_t)(p - s);
}

/* A row's kind before its name ("cgroup:", "unit:", "user-unit:",
 * "enable:"): its bytes, or 0. */
static size_t text_kind(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz_-");

	return n && s[n] == ':' ? n + 1 : 0;
}

/*
 * Both ends are kept, since either may be what tells two names apart: the
 * kind, the start of the rest, "…", then the end. A path keeps its file name
 * whole when it fits (then the start of the path fills what is left), else
 * its end; other names keep their first third and their end (labels such as
 * "advisor 3600s 10%" differ at either end). A start of fewer than 3
 * columns says nothing and goes to the end instead.
 */
const char *text_shorten(const char *name, int cols, char *buf, size_t len)
{
	size_t kind = text_kind(name);
	const char *rest, *tail, *slash;
	int room, head, bad;

	if (text_width(name) <= cols)
		return name;
	if ((int)kind > cols / 3)
		kind = 0;
	rest = name + kind;
	room = cols - (int)kind - 1;		/* beside the kind and "…" */
	slash = strrchr(rest, '/');
	if (slash)
		head = text_width(slash) <= room ? room - text_width(slash) : 0;
	else
		head = room / 3;
	if (head < 3)
		head = 0;
	for (tail = rest; text_width(tail) > room - head;)
		tail += text_char(tail, &bad);
	snprintf(buf, len, "%.*s%.*s\u2026%s", (int)kind, name,
		 (int)text_prefix(rest, head), rest, tail);
	return buf;
}
