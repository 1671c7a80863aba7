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
 * quotes, an escaped quote, open them again). Newlines, $, `, \ and bytes
 * that are not ASCII need nothing more inside single quotes.
 *
 * Return: the length of the whole quoted word (without the NUL), as
 * snprintf(): a result >= @len means @buf was too small.
 */
size_t shell_quote(const char *word, char *buf, size_t len);

#endif
