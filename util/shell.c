/* SPDX-License-Identifier: MIT */
/* Quoting words for POSIX sh: the commands ksmscan prints for people to run. */
#include <string.h>

#include "shell.h"

/* Characters that are never special to sh, wherever they are in a word. */
static int shell_safe(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || (c && strchr("_./:=@%+,-", c));
}

/* Appends @s to @buf at *@at, as far as it fits, and counts it in *@at. */
static void put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, (*at)++)
		if (*at + 1 < len)
			buf[*at] = s[i];
}

size_t shell_quote(const char *word, char *buf, size_t len)
{
	size_t at = 0, n = strlen(word);
	int plain = n > 0;

	for (size_t i = 0; plain && i < n; i++)
		plain = shell_safe((unsigned char)word[i]);
	if (plain) {
		put(buf, len, &at, word, n);
	} else {
		put(buf, len, &at, "'", 1);
		for (size_t i = 0; i < n; i++) {
			if (word[i] == '\'')
				put(buf, len, &at, "'\\''", 4);
			else
				put(buf, len, &at, word + i, 1);
		}
		put(buf, len, &at, "'", 1);
	}
	if (len)
		buf[at < len ? at : len - 1] = '\0';
	return at;
}
