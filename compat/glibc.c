/* SPDX-License-Identifier: MIT */
/*
 * glibc's fortified entry points, for the static musl build only (the
 * Makefile compiles this file into ./ksmscan and into no glibc build).
 * Why: Debian ships libbz2.a and libjansson.a built against glibc with
 * _FORTIFY_SOURCE, so their formatting and copying call the _chk forms,
 * which musl lacks; no Debian package builds them for musl, and building
 * them here would mean keeping their sources. Each form checks what
 * glibc's does (the size given against the buffer's) and aborts as glibc
 * would, then does the plain call's work.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...);
int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt,
		    va_list ap);
char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen);

/* A size beyond the buffer: glibc's __chk_fail() ends the process. */
static void chk_fail(void)
{
	fputs("*** buffer overflow detected ***: terminated\n", stderr);
	abort();
}

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	(void)flag;
	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt,
		    va_list ap)
{
	(void)flag;
	if (n > slen)
		chk_fail();
	return vsnprintf(s, n, fmt, ap);
}

int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __vsnprintf_chk(s, n, flag, slen, fmt, ap);
	va_end(ap);
	return r;
}

char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen)
{
	if (n > dlen)
		chk_fail();
	return strncpy(d, s, n);
}
