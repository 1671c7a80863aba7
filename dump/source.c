/* SPDX-License-Identifier: MIT */
/*
 * The source layer: bytes of an input, from a mapped file or from a stream,
 * with compressed inputs decompressed as they are read (one loop, for every
 * codec of layers.c).
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

#include "../host/kernel.h"
#include "../util/page.h"
#include "../util/util.h"
#include "layers.h"
#include "source.h"

/* Bytes read ahead so that every reader can probe them. */
#define PROBE_BYTES 4096
/* Block in which a stream is copied to a temporary file. */
#define COPY_BYTES (1u << 20)
/* Zero blocks of this size are left as holes in temporary copies. */
#define SPARSE_BLOCK 4096

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

static ssize_t layer_read(struct source *s, int k, void *buf, size_t len);

/* Bytes of level @level of a stream: 0 is the file, k the output of layer k - 1. */
static ssize_t level_read(struct source *s, int level, void *buf, size_t len)
{
	return level ? layer_read(s, level - 1, buf, len) : fd_read(s, buf, len);
}

/*
 * An error in a layer: the bytes decoded before it are returned first and
 * the error on the next read (s->err says what it is).
 */
static ssize_t layer_fail(struct source_layer *l, size_t produced)
{
	if (!produced)
		return -1;
	l->error = 1;
	return (ssize_t)produced;
}

/* Say that layer @l's decoder stopped; return what layer_fail() does. */
static ssize_t layer_stop(struct source *s, struct source_layer *l,
			  size_t produced, const char *why)
{
	if (why)
		snprintf(s->err, sizeof(s->err), "%s: %s (compressed offset %llu)",
			 l->codec->name, why,
			 (unsigned long long)(l->consumed - (l->in_len - l->in_off)));
	else
		snprintf(s->err, sizeof(s->err), "%s stream truncated after %llu "
			 "compressed bytes", l->codec->name,
			 (unsigned long long)l->consumed);
	return layer_fail(l, produced);
}

/*
 * Decode up to @len bytes of layer @k into @buf, reading its compressed
 * bytes from the level below. After the last compressed byte the decoder
 * is called until it gives nothing more: it holds decoded bytes it has not
 * handed out yet, and a truncated frame still yields every byte decoded
 * before the cut (as `gzip -dc` and the others do). The same loop serves
 * every codec (layers.c).
 */
static ssize_t layer_read(struct source *s, int k, void *buf, size_t len)
{
	struct source_layer *l = &s->layer[k];
	unsigned char *out = buf;
	size_t done = 0;

	if (l->error)
		return -1;
	while (done < len && !l->ended) {
		char why[96];
		size_t used = 0, made = 0;
		int rc;

		if (l->in_off == l->in_len && !l->in_eof) {
			ssize_t n = level_read(s, k, l->in, l->in_cap);

			/* The level below said why in s->err. */
			if (n < 0)
				return layer_fail(l, done);
			l->in_len = (size_t)n;
			l->in_off = 0;
			l->consumed += (uint64_t)n;
			l->in_eof = n == 0;
		}
		rc = l->codec->decode(l->state, l->in + l->in_off,
				      l->in_len - l->in_off, &used, l->in_eof,
				      out + done, len - done, &made, why, sizeof(why));
		l->in_off += used;
		done += made;
		if (rc == LAYER_ERROR)
			return layer_stop(s, l, done, why);
		if (rc == LAYER_END)
			l->boundary = 1;
		else if (used || made)
			l->boundary = 0;
		if (used || made)
			continue;
		/* No progress: more input is needed, or there is none left. */
		if (!l->in_eof && l->in_off == l->in_len)
			continue;
		if (!l->in_eof)
			return layer_stop(s, l, done, "the decoder made no progress");
		if (!l->boundary)
			return layer_stop(s, l, done, NULL);
		l->ended = 1;
	}
	return (ssize_t)done;
}

/* The next bytes of the underlying stream, through its layers if any. */
static ssize_t stream_read(struct source *s, void *buf, size_t len)
{
	ssize_t n;

	if (s->eof)
		return 0;
	n = level_read(s, s->nlayers, buf, len);
	/* A short count that defers a layer's error is not the end yet. */
	if (n >= 0 && (size_t)n < len &&
	    !(s->nlayers && s->layer[s->nlayers - 1].error))
		s->eof = 1;
	return n;
}

void source_skip_hole(struct source *s)
{
	off_t data;

	if (!s->map || s->spooled || s->fd < 0 || s->pos >= s->size)
		return;
	data = lseek(s->fd, (off_t)s->pos, SEEK_DATA);
	if (data < 0 && errno == ENXIO)
		s->pos = s->size;		/* only a hole remains */
	else if (data >= 0 && (uint64_t)data / PAGE_BYTES * PAGE_BYTES > s->pos)
		s->pos = (uint64_t)data / PAGE_BYTES * PAGE_BYTES;
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

/*
 * Standard input was mapped whole: leave it at its end, as reading it would.
 * The source's own descriptor must then not share its offset (readers seek
 * with SEEK_DATA), so the file is opened again through /proc where it can
 * be.
 */
static void source_consume_stdin(struct source *s)
{
	int own = reopen_stdin();

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
	int max = pipe_max_size();

	if (max < 65536)
		max = 1 << 20;
	if (max > 16 << 20)
		max = 16 << 20;
	fcntl(fd, F_SETPIPE_SZ, max);
}

/*
 * Recognise the compression layers at the start of a stream, outermost
 * first: a layer's first decoded bytes may start another (gzip inside zstd)
 * but not a third; with @raw, none (-f raw means the bytes as they are).
 * The first bytes of the data are kept for probing.
 */
static int source_layers(struct source *s, int raw)
{
	unsigned char magic[LAYER_MAGIC_MAX];

	for (;;) {
		ssize_t n = level_read(s, s->nlayers, magic, sizeof(magic));
		const struct layer_codec *c;
		struct source_layer *l;

		if (n < 0)
			return -1;
		c = raw ? NULL : layer_find(magic, (size_t)n);
		if (!c) {
			memcpy(s->head, magic, (size_t)n);
			s->head_len = (size_t)n;
			if ((size_t)n < sizeof(magic) && !s->nlayers)
				s->eof = 1;
			return 0;
		}
		if (s->nlayers == 2)
			return source_fail(s, 0, "%s inside %s inside %s: only one "
					   "compression layer inside another is read",
					   c->name, s->layer[1].codec->name,
					   s->layer[0].codec->name);
		l = &s->layer[s->nlayers];
		l->codec = c;
		l->state = c->init();
		if (!l->state)
			return source_fail(s, 0, "cannot start %s decompression",
					   c->name);
		/* The magic belongs to the compressed stream: hand it back. */
		l->in_cap = c->in_size;
		l->in = xmalloc(l->in_cap);
		memcpy(l->in, magic, (size_t)n);
		l->in_len = (size_t)n;
		l->consumed = (uint64_t)n;
		s->nlayers++;
	}
}

/*
 * What a named file may be: a regular file or a block device. A FIFO would
 * block open() or read for ever, a character device (/dev/zero, a watchdog,
 * a tape) may never end or act when read, so they are refused before any
 * read; standard input ("-") may be anything the shell hands over.
 */
static const char *source_refused_kind(mode_t mode, int no_stdin)
{
	if (S_ISREG(mode) || S_ISBLK(mode))
		return NULL;
	if (S_ISDIR(mode))
		return strerror(EISDIR);
	if (S_ISFIFO(mode))
		return no_stdin ? "a FIFO, not a regular file or a block device" :
		       "a FIFO, not a file (to read a pipe, give it as standard "
		       "input: cat FILE | ksmscan -)";
	if (S_ISCHR(mode))
		return no_stdin ? "a character device, not a regular file or a "
				  "block device" :
		       "a character device, not a file (to read one, give it as "
		       "standard input: cat FILE | ksmscan -)";
	return "not a regular file or a block device";
}

/* Open @path without blocking (a FIFO would wait for a writer), check what
 * it is with fstat() before any read, then make it blocking again. */
static int source_open_file(struct source *s, const char *path, struct stat *st,
			    unsigned flags)
{
	int no_stdin = (flags & SOURCE_NO_STDIN) != 0;
	const char *why;
	int fl;

	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	/* A socket cannot even be opened: say what it is. */
	if (s->fd < 0 && errno == ENXIO && stat(path, st) == 0)
		return source_fail(s, 0, "%s", source_refused_kind(st->st_mode,
								   no_stdin));
	if (s->fd < 0 || fstat(s->fd, st) < 0)
		return source_fail(s, 0, "%s", strerror(errno));
	why = source_refused_kind(st->st_mode, no_stdin);
	if (why)
		return source_fail(s, 0, "%s", why);
	fl = fcntl(s->fd, F_GETFL);
	if (fl < 0 || fcntl(s->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return source_fail(s, 0, "%s", strerror(errno));
	return 0;
}

int source_open(struct source *s, const char *path, const char *name,
		unsigned flags)
{
	struct stat st;

	s->name = name;
	s->fd = -1;
	if (strcmp(path, "-") != 0) {
		if (source_open_file(s, path, &st, flags) < 0)
			return -1;
	} else if ((s->fd = dup(STDIN_FILENO)) < 0 || fstat(s->fd, &st) < 0) {
		return source_fail(s, 0, "%s", strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		return source_fail(s, 0, "%s", strerror(EISDIR));
	}
	/*
	 * A pipe holds 64 KiB by default: the writer and this reader would take
	 * turns, waking each other, 16 times per MiB. Ask for the most an
	 * unprivileged process may have (1 MiB by default); a hint only.
	 */
	if (S_ISFIFO(st.st_mode))
		source_grow_pipe(s->fd);
	if (!(flags & SOURCE_STREAM))
		source_try_map(s, strcmp(path, "-") == 0);
	if (s->map) {
		size_t n = s->size < LAYER_MAGIC_MAX ? (size_t)s->size : LAYER_MAGIC_MAX;

		if ((flags & SOURCE_RAW) || !layer_find(s->map, n))
			return 0;
		/* Compressed: read it as a stream from its start. */
		munmap((void *)s->map, (size_t)s->size);
		s->map = NULL;
		s->size = 0;
		if (lseek(s->fd, 0, SEEK_SET) < 0)
			return source_fail(s, 0, "%s", strerror(errno));
	}
	s->head = xmalloc(PROBE_BYTES);
	s->head_cap = PROBE_BYTES;
	return source_layers(s, flags & SOURCE_RAW);
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
	m = st.st_size ? tmp_map(fd, (uint64_t)st.st_size) : NULL;
	if (st.st_size && !m) {
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

/* Write @n bytes of a copy at @off, if the file system has room for them. */
static int source_copy_write(struct source *s, int fd, const unsigned char *buf,
			     size_t n, uint64_t off)
{
	if (!tmp_room_for(fd, n))
		return source_fail(s, 0, "a temporary copy would leave its file "
				   "system less than %d%% or %llu MiB free",
				   FREE_MIN_PERCENT,
				   (unsigned long long)(FREE_MIN_BYTES >> 20));
	if (source_write_sparse(fd, buf, n, off) < 0)
		return source_fail(s, 0, "writing a temporary copy: %s",
				   strerror(errno));
	return 0;
}

/*
 * Copy the rest of the stream, at most @limit bytes of it, to a temporary
 * file in COPY_BYTES pieces; @copied is set to the bytes written whole.
 * Return: 0 at its end, 1 when a read error, @limit or the file system's
 * room stopped it (s->err says what, s->err_at where).
 */
static int source_copy(struct source *s, int fd, uint64_t limit,
		       uint64_t *copied)
{
	unsigned char *buf = xmalloc(COPY_BYTES);
	uint64_t base = s->pos;
	int rc = 0;

	for (*copied = 0;; ) {
		uint64_t at = s->pos, left = limit - (at - base);
		size_t want = left < COPY_BYTES ? (size_t)left : COPY_BYTES;
		ssize_t n = want ? source_read(s, buf, want) : 0;

		if (n < 0 || (!want && source_read(s, buf, 1) > 0)) {
			/* Keep what arrived: the reader reports what it lacks. */
			if (n >= 0)
				source_fail(s, at, "longer than its headers declare "
					    "(%llu bytes): the rest is not read",
					    (unsigned long long)limit);
			s->err_at = at;
			rc = 1;
			break;
		}
		/* Zero blocks stay holes: a mostly empty dump costs no disk. */
		if (n && source_copy_write(s, fd, buf, (size_t)n, at - base) < 0) {
			s->err_at = at;
			rc = 1;
			break;
		}
		if (n == 0)
			break;
		*copied += (uint64_t)n;
	}
	free(buf);
	return rc;
}

int source_map(struct source *s, uint64_t limit)
{
	uint64_t copied;
	int fd, rc;

	if (s->map)
		return 0;
	fd = tmpfile_fd();
	if (fd < 0)
		return source_fail(s, 0, "cannot create a temporary file: %s",
				   strerror(errno));
	rc = source_copy(s, fd, limit, &copied);
	/* The file ends where the copy does, even in a hole. */
	if (ftruncate(fd, (off_t)copied) < 0) {
		close(fd);
		return source_fail(s, 0, "writing a temporary copy: %s",
				   strerror(errno));
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
	for (int i = 0; i < s->nlayers; i++) {
		s->layer[i].codec->end(s->layer[i].state);
		free(s->layer[i].in);
	}
	free(s->head);
}
