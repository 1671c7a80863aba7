/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_TEXT_H
#define KSMSCAN_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Text that came from a dump, a process or the command line (a file name in
 * a core, a maps path, a comm, a cgroup, an input's name) may hold bytes that
 * drive a terminal or a spreadsheet, reorder what a person sees, or are not
 * UTF-8 at all. Every writer shows it through these functions, so that all
 * output is valid UTF-8: a control (C0, DEL, C1) or bidirectional control is
 * shown as one '?', a byte that is not part of well-formed UTF-8 as "\xHH"
 * (JSON uses its own escapes for both, from text_decode()).
 */

/* What text_char() says of a character. */
enum {
	TEXT_CONTROL = 1,	/* a control or bidirectional control: '?' */
	TEXT_BYTE = 2,		/* a byte that is not UTF-8: "\xHH" */
};

/* The most bytes text_shown() writes for one character. */
#define TEXT_SHOWN_MAX 4

/**
 * text_decode() - the character at @s: its length, code point and kind.
 * @s: a NUL-terminated string, at a character's first byte
 * @cp: set to its code point (a byte that is not UTF-8: the byte's value)
 * @unsafe: set to 0, TEXT_CONTROL or TEXT_BYTE
 *
 * A character is one well-formed UTF-8 sequence (no overlong form,
 * surrogate or code point past U+10FFFF), else one byte (TEXT_BYTE).
 * TEXT_CONTROL: C0 controls and DEL (ESC, BEL, newlines...), C1 controls
 * (U+0080-U+009F), and the bidirectional controls U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069.
 *
 * Return: the character's length in bytes, at least 1.
 */
size_t text_decode(const char *s, uint32_t *cp, int *unsafe);

/**
 * text_char() - text_decode() without the code point.
 * @p: a NUL-terminated string, at a character's first byte
 * @unsafe: set to 0, TEXT_CONTROL or TEXT_BYTE
 *
 * Return: the character's length in bytes, at least 1.
 */
size_t text_char(const char *p, int *unsafe);

/**
 * text_shown() - how one character is shown: itself, '?' or "\xHH".
 * @s: the character (text_char()'s @p)
 * @n: its length (text_char()'s return)
 * @unsafe: its kind (text_char()'s @unsafe)
 * @out: room for TEXT_SHOWN_MAX bytes, not NUL-terminated
 *
 * Return: the bytes written to @out.
 */
size_t text_shown(const char *s, size_t n, int unsafe,
		  char out[TEXT_SHOWN_MAX]);

/**
 * text_cols() - the columns one character of kind @unsafe takes as
 * text_shown() shows it: 4 for a byte shown "\\xHH", else 1.
 * @unsafe: text_char()'s kind
 */
static inline int text_cols(int unsafe)
{
	return unsafe == TEXT_BYTE ? 4 : 1;
}

/**
 * text_char_cols() - the columns one character takes on a terminal as
 * text_shown() shows it: 2 for an East Asian wide or fullwidth one, 0 for
 * a combining mark, 4 for a byte shown "\\xHH", else 1.
 * @s: a NUL-terminated string, at a character's first byte
 * @len: set to the character's length in bytes (at least 1)
 *
 * Return: its columns.
 */
int text_char_cols(const char *s, size_t *len);

/**
 * text_put() - write @s to @f as text_shown() shows each character.
 * @f: the stream
 * @s: the text
 */
void text_put(FILE *f, const char *s);

/**
 * text_clean() - copy @s to @buf as text_shown() shows each character,
 * truncated to fit (never within a character's form).
 * @s: the text
 * @buf: the result, NUL-terminated
 * @len: size of @buf, at least 1
 *
 * Return: @buf.
 */
char *text_clean(const char *s, char *buf, size_t len);

/**
 * text_width() - the columns a text takes on a terminal as text_shown()
 * shows it: text_char_cols() of each character (two for a wide one, one per
 * control shown '?', four per byte that is not UTF-8, shown "\xHH").
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
