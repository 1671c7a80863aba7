/* SPDX-License-Identifier: MIT */
/* Quoting words for POSIX sh: the commands ksmscan prints for people to run. */
#include <string.h>

#include "shell.h"
#include "text.h"

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

/* Whether the character at @p, @n bytes, must be written with printf:
 * a control but the line break, or a byte that is not UTF-8. */
static int shell_unshown(const char *p, size_t *n)
{
	int kind;

	*n = text_char(p, &kind);
	return kind == TEXT_BYTE || (kind == TEXT_CONTROL && *p != '\n');
}

/* Append the @n bytes at @p as printf's octal escapes, "$(printf '\ooo')",
 * after closing the single quotes and before opening them again. */
static void put_printf(char *buf, size_t len, size_t *at, const char *p,
		       size_t n)
{
	put(buf, len, at, "'\"$(printf '", 12);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		char o[4] = { '\\', (char)('0' + (c >> 6)),
			      (char)('0' + (c >> 3 & 7)), (char)('0' + (c & 7)) };

		put(buf, len, at, o, 4);
	}
	put(buf, len, at, "')\"'", 4);
}

size_t shell_quote(const char *word, char *buf, size_t len)
{
	size_t at = 0, n = strlen(word), step;
	int plain = n > 0;

	for (size_t i = 0; plain && i < n; i++)
		plain = shell_safe((unsigned char)word[i]);
	if (plain) {
		put(buf, len, &at, word, n);
	} else {
		put(buf, len, &at, "'", 1);
		for (size_t i = 0; i < n; i += step) {
			if (shell_unshown(word + i, &step))
				put_printf(buf, len, &at, word + i, step);
			else if (word[i] == '\'')
				put(buf, len, &at, "'\\''", 4);
			else
				put(buf, len, &at, word + i, step);
		}
		put(buf, len, &at, "'", 1);
	}
	if (len)
		buf[at < len ? at : len - 1] = '\0';
	return at;
}
