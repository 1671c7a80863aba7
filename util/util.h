/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_UTIL_H
#define KSMSCAN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* When set, warn() prints nothing (option -q). Errors are always printed. */
extern int msg_quiet;

/* When set, error() prints nothing either (fuzzing harnesses only). */
extern int msg_silent;

/* Set while a progress line is on standard error: a message erases it first. */
extern int msg_line_drawn;

/**
 * warn() - print "ksmscan: " and a formatted warning line on standard error.
 * @fmt: printf format, without the trailing newline
 *
 * Silent when msg_quiet is set.
 */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * warn_kept() - print a warning that -q does not hide: one that says the
 * rows printed are not the whole of what was asked (processes that could
 * not be read), without which they would be taken for all of it.
 * @fmt: printf format, without the trailing newline
 */
void warn_kept(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * error() - print "ksmscan: " and a formatted error line on standard error.
 * @fmt: printf format, without the trailing newline
 */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * edit_distance() - how many single-byte insertions, deletions and changes
 * turn one name into another (Levenshtein), for "did you mean".
 * @a: a name, not necessarily NUL-terminated
 * @alen: its length (at most 63 bytes count)
 * @b: the other, NUL-terminated
 */
size_t edit_distance(const char *a, size_t alen, const char *b);

/**
 * xmalloc() - malloc() that ends the program with a message when memory is out.
 * @n: bytes
 *
 * Return: the allocation, never NULL.
 */
void *xmalloc(size_t n);

/**
 * xcalloc() - calloc() with overflow check that ends the program when memory is out.
 * @n: elements
 * @size: bytes per element
 *
 * Return: zeroed memory, never NULL.
 */
void *xcalloc(size_t n, size_t size);

/**
 * xreallocarray() - grow an array, ending the program on overflow or no memory.
 * @p: the array or NULL
 * @n: elements
 * @size: bytes per element
 *
 * Return: the new array, never NULL.
 */
void *xreallocarray(void *p, size_t n, size_t size);

/**
 * xstrdup() - strdup() that ends the program when memory is out.
 * @s: the string
 *
 * Return: a copy, never NULL.
 */
char *xstrdup(const char *s);

#include "file.h"	/* tmpfile_fd() and the rules of files written */

/**
 * now_seconds() - a monotonic clock for measuring how long work took.
 *
 * Return: seconds since an arbitrary point.
 */
double now_seconds(void);

/**
 * sleep_until() - sleep until now_seconds() reaches @when (signals resume it).
 * @when: a time from now_seconds()
 */
void sleep_until(double when);

/*
 * The command line's numbers (ksmscan(1), NUMBERS AND SIZES): decimal
 * digits with at most one point (".5", "5.", "5.5"), no sign, space,
 * exponent or hex (but an address's 0x). Every option reads its number
 * through one of these.
 */

/* The longest duration of any option: 1000 hours, in seconds. */
#define DURATION_MAX 3600000.0
/* The shortest time between two events (an interval, a target): 1 ms. */
#define DURATION_MIN 0.001

/**
 * parse_u64() - parse a count: decimal digits alone.
 * @s: the text; the whole of it must be a count
 * @out: the value
 *
 * Return: 0 on success, -1 if @s is not a count or overflows 64 bits.
 */
int parse_u64(const char *s, uint64_t *out);

/**
 * parse_size() - parse a size in bytes: a decimal number with an optional
 * K, M, G or T (powers of 1024, upper case: "1.8G", ".5G", "512M"), rounded
 * down to a whole byte; a point only with a unit.
 * @s: the text; the whole of it must be a size
 * @out: the value
 *
 * Return: 0 on success, -1 if @s is not a size or is 2^64 bytes or more.
 */
int parse_size(const char *s, uint64_t *out);

/**
 * parse_address() - parse an address: a parse_size() size, or 0x and hex
 * digits as /proc/PID/maps prints them.
 * @s: the text
 * @out: the value
 *
 * Return: 0 on success, -1 if @s is not one or overflows 64 bits.
 */
int parse_address(const char *s, uint64_t *out);

/**
 * parse_percent() - parse a share: a decimal number with an optional '%'.
 * @s: the text
 * @v: the number, as written (not divided by 100)
 * @sign: set to 1 if it ended with '%'
 *
 * Return: 0 on success, -1 if @s is not one.
 */
int parse_percent(const char *s, double *v, int *sign);

/**
 * raise_fd_limit() - raise the soft limit on open files to the hard limit:
 * every input stays open until the reports are printed.
 */
void raise_fd_limit(void);

/**
 * parse_duration() - parse a duration: a decimal number of seconds, or with
 * a suffix s, ms, us, m or h ("60s", "0.5s", "2m", "2.5us"), at most
 * DURATION_MAX.
 * @s: the text
 * @seconds: set to the duration
 *
 * Return: 0, or -1 if @s is not one (sign, other suffix, over 1000 h).
 */
int parse_duration(const char *s, double *seconds);

/**
 * parse_range() - parse START-END, two parse_address() addresses with
 * START < END (so 1.5G-2G and 0x1000-0x3000 are ranges).
 * @s: the text
 * @start: the first value
 * @end: the second value
 *
 * Return: 0 on success, -1 if @s is not such a range.
 */
int parse_range(const char *s, uint64_t *start, uint64_t *end);

#endif
