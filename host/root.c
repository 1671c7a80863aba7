/* SPDX-License-Identifier: MIT */
/* The root below which the host's kernel files are read (host.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"

const char *host_root(void)
{
	static const char *root;

	if (!root) {
		const char *env = getenv("KSMSCAN_HOST_ROOT");

		root = env && *env ? env : "";
	}
	return root;
}

/* The root, then the formatted kernel path; "" if it does not fit. */
static char *vpath(char *buf, size_t len, const char *fmt, va_list ap)
{
	int n = snprintf(buf, len, "%s", host_root());

	if (n < 0 || (size_t)n >= len ||
	    (size_t)vsnprintf(buf + n, len - (size_t)n, fmt, ap) >= len - (size_t)n)
		buf[0] = '\0';
	return buf;
}

char *host_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpath(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

/* open() the formatted kernel path below the root, read-only; -1 with
 * errno for a path too long to name a file. */
static int vopen(const char *fmt, va_list ap)
{
	char path[4096];

	vpath(path, sizeof(path), fmt, ap);
	if (!path[0]) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

FILE *host_fopen(const char *fmt, ...)
{
	va_list ap;
	int fd;
	FILE *f;

	va_start(ap, fmt);
	fd = vopen(fmt, ap);
	va_end(ap);
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

int host_open(const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = vopen(fmt, ap);
	va_end(ap);
	return fd;
}

DIR *host_opendir(const char *path)
{
	char full[4096];

	return opendir(host_path(full, sizeof(full), "%s", path));
}

int host_read_int(const char *fmt, ...)
{
	char path[4096];
	int v = -1;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = path[0] ? fopen(path, "re") : NULL;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}
