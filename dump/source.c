/* SPDX-License-Identifier: MIT */
/*
 * The source layer: bytes of an input, from a mapped file or from a stream,
 * with zstd-compressed inputs decompressed as they are read (libzstd).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "../util/util.h"
#include "source.h"

/* Bytes read ahead so that every reader can probe them. */
#define PROBE_BYTES 4096
/* Block in which a stream is copied to a temporary file. */
#define COPY_BYTES (1u << 20)
/* Zero blocks of this size are left as holes in temporary copies. */
#define SPARSE_BLOCK 4096

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

/*
 * Whether four bytes start a zstd stream: a frame, or a skippable frame
 * (0x184D2A50 to 0x184D2A5F, as pzstd writes before its frames).
 */
static int is_zstd(const unsigned char *m)
{
	return memcmp(m, zstd_magic, 4) == 0 ||
	       ((m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18);
}

/* Say what went wrong and where, for the caller to report; return -1. */
static int source_fail(struct source *s, uint64_t at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->err_at = at;
	return -1;
}

/* Read from the file itself, retrying after signals, until @len or its end. */
static ssize_t fd_read(struct source *s, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(s->fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(s->err, sizeof(s->err), "read error: %s",
				 strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * A zstd error: the bytes decompressed before it are returned first and the
 * error on the next read (s->err says what it is).
 */
static ssize_t zstd_fail(struct source *s, size_t produced)
{
	if (!produced)
		return -1;
	s->zerror = 1;
	return (ssize_t)produced;
}

/*
 * Decompress up to @len bytes of a zstd stream into @buf. After the last
 * compressed byte the decoder is called until it gives nothing more: it
 * holds decoded bytes it has not handed out yet, and a truncated frame still
 * yields every byte decoded before the cut.
 */
static ssize_t zstd_read(struct source *s, void *buf, size_t len)
{
	ZSTD_outBuffer out = { buf, len, 0 };

	if (s->zerror)
		return -1;

	while (out.pos < out.size) {
		if (s->zin_off == s->zin_len && !s->zin_eof) {
			ssize_t n = fd_read(s, s->zin, s->zin_cap);

			if (n < 0)
				return zstd_fail(s, out.pos);
			s->zin_len = (size_t)n;
			s->zin_off = 0;
			s->zpos += (uint64_t)n;
			s->zin_eof = n == 0;
		}
		ZSTD_inBuffer in = { s->zin, s->zin_len, s->zin_off };
		size_t before = out.pos;
		size_t rc = ZSTD_decompressStream(s->zstd, &out, &in);
		int progress = out.pos != before || in.pos != s->zin_off;

		s->zin_off = in.pos;
		if (ZSTD_isError(rc)) {
			snprintf(s->err, sizeof(s->err),
				 "zstd: %s (compressed offset %llu)",
				 ZSTD_getErrorName(rc),
				 (unsigned long long)(s->zpos - (s->zin_len - s->zin_off)));
			return zstd_fail(s, out.pos);
		}
		if (progress) {
			/* 0 means a frame ended; another may follow (zstd -c a b). */
			s->zframe_open = rc != 0;
			continue;
		}
		/* No progress: more input is needed, or there is none left. */
		if (!s->zin_eof && s->zin_off == s->zin_len)
			continue;
		if (s->zframe_open || !s->zin_eof) {
			snprintf(s->err, sizeof(s->err), "zstd stream truncated after "
				 "%llu compressed bytes", (unsigned long long)s->zpos);
			return zstd_fail(s, out.pos);
		}
		s->eof = 1;
		break;
	}
	return (ssize_t)out.pos;
}

/* The next bytes of the underlying stream, compressed or not. */
static ssize_t stream_read(struct source *s, void *buf, size_t len)
{
	ssize_t n;

	if (s->eof)
		return 0;
	n = s->zstd ? zstd_read(s, buf, len) : fd_read(s, buf, len);
	if (n >= 0 && (size_t)n < len && !s->zerror)
		s->eof = 1;
	return n;
}

ssize_t source_read(struct source *s, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;
	ssize_t n;

	if (s->map) {
		uint64_t left = s->size - (s->pos < s->size ? s->pos : s->size);

		if (len > left)
			len = (size_t)left;
		memcpy(buf, s->map + s->pos, len);
		s->pos += len;
		return (ssize_t)len;
	}
	/* An error met after some bytes was kept for now: those came first. */
	if (s->failed)
		return -1;
	/* Bytes read ahead for probing come first. */
	if (s->head_len) {
		size_t k = len < s->head_len ? len : s->head_len;

		memcpy(p, s->head + s->head_off, k);
		s->head_off += k;
		s->head_len -= k;
		done = k;
	}
	if (done < len) {
		n = stream_read(s, p + done, len - done);
		if (n < 0) {
			s->failed = 1;
			if (!done)
				return -1;
			n = 0;
		}
		done += (size_t)n;
	}
	s->pos += done;
	return (ssize_t)done;
}

int source_stream_only;

/*
 * Standard input was mapped whole: leave it at its end, as reading it would.
 * The source's own descriptor must then not share its offset (readers seek
 * with SEEK_DATA), so the file is opened again through /proc where it can
 * be.
 */
static void source_consume_stdin(struct source *s)
{
	int own = open("/proc/self/fd/0", O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (own >= 0) {
		close(s->fd);
		s->fd = own;
	}
	lseek(STDIN_FILENO, 0, SEEK_END);
}

/*
 * Map a regular file whole, read-only; leave it a stream if that fails.
 * Standard input is a file that may have been read in part already (by a
 * shell's `read`, or an earlier "-"): only one still at its start is mapped,
 * and it is then moved to its end, as reading it would; one further on is
 * read as a stream from where it stands.
 */
static void source_try_map(struct source *s, int is_stdin)
{
	struct stat st;
	void *m;

	if (source_stream_only)
		return;
	if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return;
	if (is_stdin && lseek(s->fd, 0, SEEK_CUR) != 0)
		return;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	s->map = m;
	s->size = (uint64_t)st.st_size;
	if (is_stdin)
		source_consume_stdin(s);
}

/* Make a pipe's buffer as large as the system allows an unprivileged user. */
static void source_grow_pipe(int fd)
{
	int max = 1 << 20;
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");

	if (f) {
		if (fscanf(f, "%d", &max) != 1 || max < 65536)
			max = 1 << 20;
		fclose(f);
	}
	if (max > 16 << 20)
		max = 16 << 20;
	fcntl(fd, F_SETPIPE_SZ, max);
}

/* Begin decompressing: the zstd magic was seen at the start of the file. */
static int source_start_zstd(struct source *s)
{
	if (s->map) {
		munmap((void *)s->map, (size_t)s->size);
		s->map = NULL;
		s->size = 0;
		if (lseek(s->fd, 0, SEEK_SET) < 0)
			return -1;
	}
	s->zstd = ZSTD_createDStream();
	if (!s->zstd || ZSTD_isError(ZSTD_initDStream(s->zstd)))
		return -1;
	s->zin_cap = ZSTD_DStreamInSize();
	s->zin = xmalloc(s->zin_cap);
	return 0;
}

int source_open(struct source *s, const char *path, const char *name)
{
	struct stat st;
	unsigned char magic[4];
	ssize_t n;

	s->name = name;
	s->fd = -1;
	if (strcmp(path, "-") == 0) {
		s->fd = dup(STDIN_FILENO);
	} else {
		s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		return source_fail(s, 0, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return source_fail(s, 0, "%s", strerror(EISDIR));
	/*
	 * A pipe holds 64 KiB by default: the writer and this reader would take
	 * turns, waking each other, 16 times per MiB. Ask for the most an
	 * unprivileged process may have (1 MiB by default); a hint only.
	 */
	if (S_ISFIFO(st.st_mode))
		source_grow_pipe(s->fd);
	source_try_map(s, strcmp(path, "-") == 0);
	if (s->map) {
		if (s->size >= 4 && is_zstd(s->map) &&
		    source_start_zstd(s) < 0)
			return source_fail(s, 0, "cannot start zstd decompression");
		return 0;
	}
	/* A stream: look at its first four bytes, then keep them for later. */
	s->head = xmalloc(PROBE_BYTES);
	s->head_cap = PROBE_BYTES;
	n = fd_read(s, magic, sizeof(magic));
	if (n < 0)
		return -1;
	if (n == 4 && is_zstd(magic)) {
		if (source_start_zstd(s) < 0)
			return source_fail(s, 0, "cannot start zstd decompression");
		/* The magic belongs to the compressed stream: hand it back. */
		memcpy(s->zin, magic, 4);
		s->zin_len = 4;
		s->zpos = 4;
	} else {
		memcpy(s->head, magic, (size_t)n);
		s->head_len = (size_t)n;
		if (n < 4)
			s->eof = 1;
	}
	return 0;
}

const unsigned char *source_peek_n(struct source *s, size_t want, size_t *len)
{
	ssize_t n;

	if (s->map) {
		*len = s->size < want ? (size_t)s->size : want;
		return s->map;
	}
	/* Only bytes not yet consumed can be looked at again. */
	if (s->pos || s->head_off) {
		*len = 0;
		return s->head;
	}
	if (s->head_cap < want) {
		s->head = xreallocarray(s->head, want, 1);
		s->head_cap = want;
	}
	if (s->head_len < want && !s->eof) {
		n = stream_read(s, s->head + s->head_len, want - s->head_len);
		if (n < 0)
			return NULL;
		s->head_len += (size_t)n;
	}
	*len = s->head_len < want ? s->head_len : want;
	return s->head;
}

const unsigned char *source_peek(struct source *s, size_t *len)
{
	return source_peek_n(s, PROBE_BYTES, len);
}

int source_adopt(struct source *s, int fd)
{
	struct stat st;
	void *m;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return -1;
	}
	m = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			      fd, 0) : NULL;
	if (m == MAP_FAILED) {
		close(fd);
		return -1;
	}
	if (s->map)
		munmap((void *)s->map, (size_t)s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = fd;
	s->map = m;
	s->size = (uint64_t)st.st_size;
	s->pos = 0;
	s->spooled = 1;
	return 0;
}

/* Whether @len bytes (a multiple of 8) are all zero. */
static int all_zero(const unsigned char *p, size_t len)
{
	uint64_t acc = 0, w;

	for (size_t i = 0; i < len; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
		if (acc)
			return 0;
	}
	return 1;
}

int source_write_sparse(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	size_t i = 0;

	while (i < len) {
		size_t blk = len - i < SPARSE_BLOCK ? len - i : SPARSE_BLOCK;
		size_t run = 0;

		/* Skip zero blocks; write the run of blocks that are not. */
		if (blk == SPARSE_BLOCK && all_zero(buf + i, blk)) {
			i += blk;
			continue;
		}
		while (i + run < len) {
			blk = len - i - run < SPARSE_BLOCK ? len - i - run : SPARSE_BLOCK;
			if (blk == SPARSE_BLOCK && all_zero(buf + i + run, blk))
				break;
			run += blk;
		}
		for (size_t done = 0; done < run;) {
			ssize_t n = pwrite(fd, buf + i + done, run - done,
					   (off_t)(off + i + done));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (n == 0)
					errno = ENOSPC;
				return -1;
			}
			done += (size_t)n;
		}
		i += run;
	}
	return 0;
}

int source_map(struct source *s)
{
	unsigned char *buf;
	uint64_t base = s->pos;
	int fd, rc = 0;

	if (s->map)
		return 0;
	fd = tmpfile_fd();
	if (fd < 0)
		return source_fail(s, 0, "cannot create a temporary file: %s",
				   strerror(errno));
	buf = xmalloc(COPY_BYTES);
	for (;;) {
		uint64_t at = s->pos;
		ssize_t n = source_read(s, buf, COPY_BYTES);

		if (n < 0) {
			/* Keep what arrived: the reader reports what it lacks. */
			s->err_at = at;
			rc = 1;
			break;
		}
		/* Zero blocks stay holes: a mostly empty dump costs no disk. */
		if (source_write_sparse(fd, buf, (size_t)n, at - base) < 0) {
			source_fail(s, 0, "writing a temporary copy: %s",
				    strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
	}
	free(buf);
	/* The file ends where the copy does, even in a hole. */
	if (ftruncate(fd, (off_t)(s->pos - base)) < 0) {
		source_fail(s, 0, "writing a temporary copy: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (source_adopt(s, fd) < 0)
		return source_fail(s, 0, "cannot map the temporary copy: %s",
				   strerror(errno));
	return rc;
}

void source_close(struct source *s)
{
	if (s->map)
		munmap((void *)s->map, (size_t)s->size);
	if (s->fd >= 0)
		close(s->fd);
	if (s->zstd)
		ZSTD_freeDStream(s->zstd);
	free(s->zin);
	free(s->head);
}
