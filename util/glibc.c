/* SPDX-License-Identifier: MIT */
/*
 * glibc's fortified entry points that Debian's static libraries call and
 * musl lacks. libbz2.a and libjansson.a were built with _FORTIFY_SOURCE, so
 * their formatting and copying call the _chk forms, which check a buffer's
 * size first; the plain calls do the same work (their sizes are right by
 * construction, and the sanitizer builds link glibc's own).
 */
#ifndef __GLIBC__
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...);
int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt,
		    va_list ap);
char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen);

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

int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...)
{
	va_list ap;
	int r;

	(void)flag;
	(void)slen;
	va_start(ap, fmt);
	r = vsnprintf(s, n, fmt, ap);
	va_end(ap);
	return r;
}

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt,
		    va_list ap)
{
	(void)flag;
	(void)slen;
	return vsnprintf(s, n, fmt, ap);
}

char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen)
{
	(void)dlen;
	return strncpy(d, s, n);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int glibc_has_its_own;
#endif
