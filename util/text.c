/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "text.h"

/* The length of a well-formed UTF-8 sequence at @p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 :
		   p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;

	if (p[0] >= 0xf5)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t text_char(const char *s, int *unsafe)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = p[0] < 0x80 ? 1 : utf8_len(p);

	if (!n) {		/* not UTF-8: a byte; C1 ones drive 8-bit terminals */
		*unsafe = p[0] <= 0x9f;
		return 1;
	}
	*unsafe = p[0] < 0x20 || p[0] == 0x7f ||
		  (p[0] == 0xc2 && p[1] <= 0x9f) ||			/* C1 */
		  (p[0] == 0xe2 && p[1] == 0x80 &&			/* LRM, RLM, */
		   ((p[2] >= 0x8e && p[2] <= 0x8f) ||		/* LRE .. RLO */
		    (p[2] >= 0xaa && p[2] <= 0xae))) ||
		  (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
	return n;
}

char *text_clean(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	while (*s && o + 1 < len) {
		int bad;
		size_t n = text_char(s, &bad);

		if (bad)
			buf[o++] = '?';
		else if (o + n < len)
			for (size_t i = 0; i < n; i++)
				buf[o++] = s[i];
		else
			break;
		s += n;
	}
	buf[o] = '\0';
	return buf;
}

int text_width(const char *s)
{
	int w = 0;

	while (*s) {
		int bad;

		s += text_char(s, &bad);
		w++;
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
	int bad;

	for (; *p && cols > 0; cols--)
		p += text_char(p, &bad);
	return (size_t)(p - s);
}

/* A row's kind before its name ("cgroup:", "unit:", "enable:"): its bytes,
 * or 0. */
static size_t text_kind(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz_");

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
