/* SPDX-License-Identifier: MIT */
/* Temporary files, the room they leave, and output files written safely. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "file.h"

int tmpfile_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	snprintf(path, sizeof(path), "%s/ksmscan.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int tmp_room_for(int fd, uint64_t len)
{
	struct statvfs v;
	uint64_t size, avail, keep;

	if (fstatvfs(fd, &v) < 0 || !v.f_blocks)
		return 1;	/* unknown: the writes will tell */
	size = (uint64_t)v.f_blocks * v.f_frsize;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	keep = size / 100 * FREE_MIN_PERCENT;
	if (keep > FREE_MIN_BYTES)
		keep = FREE_MIN_BYTES;
	return avail >= keep + len;
}

/*
 * Map the hole [@start, @end) of the map @m of a file of @size bytes as
 * anonymous zero memory, its whole pages (and the last page's tail).
 * Return: 0, or -1 when the kernel will not (too many maps).
 */
static int map_hole(unsigned char *m, uint64_t start, uint64_t end,
		    uint64_t size)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	start = (start + pg - 1) / pg * pg;
	end = end >= size ? (size + pg - 1) / pg * pg : end / pg * pg;
	if (end <= start)
		return 0;
	return mmap(m + start, (size_t)(end - start), PROT_READ,
		    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED ?
	       -1 : 0;
}

void *tmp_map(int fd, uint64_t size)
{
	unsigned char *m;
	off_t at = 0;

	if (size > SIZE_MAX) {
		errno = EFBIG;
		return NULL;
	}
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* tmpfs gives a hole a page of its own when it is read through a
	 * map, and a full file system ends that read with SIGBUS: holes are
	 * read from zero memory instead, which takes no room anywhere. */
	while ((uint64_t)at < size) {
		off_t hole = lseek(fd, at, SEEK_HOLE), data;

		if (hole < 0 || (uint64_t)hole >= size)
			break;
		data = lseek(fd, hole, SEEK_DATA);
		if (data < 0 || (uint64_t)data > size)
			data = (off_t)size;
		if (map_hole(m, (uint64_t)hole, (uint64_t)data, size) < 0 &&
		    fallocate(fd, 0, hole, (off_t)size - hole) < 0 &&
		    errno != EOPNOTSUPP) {
			/* Out of maps: the rest of the holes take their room
			 * now, or the copy is refused. */
			int e = errno;

			munmap(m, (size_t)size);
			errno = e;
			return NULL;
		}
		at = data;
	}
	return m;
}

int out_open(struct out_file *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	o->path = path;
	if (snprintf(o->tmp, sizeof(o->tmp), "%.*s.%s.XXXXXX", dirlen, path,
		     slash ? slash + 1 : path) >= (int)sizeof(o->tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0)
		return -1;
	/* mkstemp() makes 0600; an output file gets what open() would give. */
	if (fchmod(fd, 0666 & ~mask) < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int out_close(struct out_file *o, int ok)
{
	int failed = ferror(o->f);

	failed |= fclose(o->f) != 0;
	if (failed && !errno)
		errno = EIO;
	if (!ok || failed || rename(o->tmp, o->path) < 0) {
		int e = errno;

		unlink(o->tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int out_replaceable(const char *path, const char *magic)
{
	char head[64] = "";
	struct stat st;
	ssize_t n;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT;
	if (S_ISLNK(st.st_mode))
		return 1;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	return st.st_size == 0 ||
	       (n > 0 && strncmp(head, magic, strlen(magic)) == 0);
}

int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

const char *file_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	default: return "not a regular file";
	}
}
