/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_TEXT_H
#define KSMSCAN_TEXT_H

#include <stddef.h>

/*
 * Text that came from a dump or a command line (a file name in a core, a
 * maps path, an input's name) may hold bytes that drive a terminal or a
 * spreadsheet, or reorder what a person sees: such sequences are shown as
 * one '?' in tables, CSV and messages (JSON escapes them instead).
 */

/**
 * text_unsafe() - the length of an unsafe sequence at @p, or 0.
 * @p: a NUL-terminated string, at the byte to test
 *
 * Unsafe: C0 controls and DEL (ESC, BEL, newlines...), C1 controls as UTF-8
 * (U+0080-U+009F) or as single bytes (0x9b is CSI to 8-bit terminals), and
 * the bidirectional controls U+200E-U+200F, U+202A-U+202E, U+2066-U+2069.
 */
size_t text_unsafe(const char *p);

/**
 * text_clean() - copy @s to @buf with every unsafe sequence replaced by '?'.
 * @s: the text
 * @buf: the result, NUL-terminated, truncated to fit
 * @len: size of @buf, at least 1
 *
 * Return: @buf.
 */
char *text_clean(const char *s, char *buf, size_t len);

#endif
