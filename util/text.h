/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_TEXT_H
#define KSMSCAN_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Text that came from a dump or a command line (a file name in a core, a
 * maps path, an input's name) may hold bytes that drive a terminal or a
 * spreadsheet, or reorder what a person sees: such sequences are shown as
 * one '?' in tables, CSV and messages (JSON escapes them instead).
 */

/**
 * text_char() - the length of the character at @p, and whether it is unsafe.
 * @p: a NUL-terminated string, at a character's first byte
 * @unsafe: set to 1 if the character must be shown as '?', else 0
 *
 * A character is one well-formed UTF-8 sequence, or else one byte. Unsafe:
 * C0 controls and DEL (ESC, BEL, newlines...), C1 controls as UTF-8
 * (U+0080-U+009F) or as single bytes (0x9b is CSI to 8-bit terminals), and
 * the bidirectional controls U+200E-U+200F, U+202A-U+202E, U+2066-U+2069.
 *
 * Return: the character's length in bytes, at least 1.
 */
size_t text_char(const char *p, int *unsafe);

/**
 * text_clean() - copy @s to @buf with every unsafe sequence replaced by '?'.
 * @s: the text
 * @buf: the result, NUL-terminated, truncated to fit
 * @len: size of @buf, at least 1
 *
 * Return: @buf.
 */
char *text_clean(const char *s, char *buf, size_t len);

/**
 * text_width() - the columns a text takes on a terminal: one per character
 * (UTF-8 continuation bytes take none), one per unsafe sequence (shown '?').
 * @s: the text
 */
int text_width(const char *s);

/* Widest input name in tables for people: longer ones lose their middle. */
#define NAME_COLS 30

/**
 * text_shorten() - a name in at most @cols columns, cut in the middle if it
 * is longer: its kind ("cgroup:"), its start, "…" and its end (a path's
 * file name whole when it fits; other names their first third).
 * @name: the name
 * @cols: columns, at least 2
 * @buf: room for the shortened name
 * @len: size of @buf
 *
 * Return: @name itself if it fits, else @buf.
 */
const char *text_shorten(const char *name, int cols, char *buf, size_t len);

/**
 * human_bytes() - a size in units of 1024 as smem -k prints it: "0", "512B",
 * "4.0K", "85.3M", "1.2G", "3.0T".
 * @bytes: the size
 * @buf: the result
 * @len: size of @buf (at least 16)
 *
 * Return: @buf.
 */
char *human_bytes(uint64_t bytes, char *buf, size_t len);

#endif
