/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SHELL_H
#define KSMSCAN_SHELL_H

#include <stddef.h>

/**
 * shell_quote() - one word as POSIX sh reads it back unchanged.
 * @word: the word, any bytes but NUL (an empty word is allowed)
 * @buf: room for the quoted word, NUL-terminated, truncated to fit; may be
 *       NULL when @len is 0, to learn the length needed
 * @len: size of @buf
 *
 * A word made only of characters sh never treats specially
 * (A-Z a-z 0-9 and _ . / : = @ % + , -) is copied as it is; any other word,
 * and the empty word, is put in single quotes, where sh gives no character a
 * meaning but the closing quote: each ' inside is written '\'' (close the
 * quotes, an escaped quote, open them again). Newlines, $, `, \ and UTF-8
 * text need nothing more inside single quotes. So that a printed command is
 * valid UTF-8 and drives no terminal, a control character but the line
 * break (ESC, CR, C1, the bidirectional controls) and a byte that is not
 * UTF-8 are written outside the quotes as printf's octal escapes,
 * '"$(printf '\033')"' (a line break stays between the quotes: a command
 * substitution would drop it at the end of a word).
 *
 * Return: the length of the whole quoted word (without the NUL), as
 * snprintf(): a result >= @len means @buf was too small.
 */
size_t shell_quote(const char *word, char *buf, size_t len);

#endif
