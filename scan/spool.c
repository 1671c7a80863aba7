/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../util/util.h"
#include "spool.h"

void spool_init(struct spool *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	atomic_init(&s->written, 0);
}

/*
 * Pages that waited and could not be written are mapped past what the file
 * holds: reading them would raise SIGBUS. Put copies of them in their place
 * (anonymous memory over those addresses), for the reports that read them.
 */
static void spool_rescue(struct spool *s)
{
	unsigned char *at;
	size_t len = s->npend * PAGE_BYTES;

	if (!s->npend)
		return;
	at = s->pieces[s->npieces - 1] +
	     (s->pend_at - (uint64_t)(s->npieces - 1) * SPOOL_PIECE);
	if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE |
		 MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return;
	for (size_t k = 0; k < s->npend; k++)
		memcpy(at + k * PAGE_BYTES, s->pend[k], PAGE_BYTES);
	mprotect(at, len, PROT_READ);
}

/* The spool cannot take more: say why once, and spool nothing from now on. */
static int spool_fail(struct spool *s, const char *what, int err)
{
	if (!s->failed)
		snprintf(s->why, sizeof(s->why), "spool file in $TMPDIR: %s%s%s",
			 what, err ? ": " : "", err ? strerror(err) : "");
	s->failed = 1;
	spool_rescue(s);
	s->npend = 0;
	return -1;
}

int spool_flush(struct spool *s)
{
	size_t done = 0;	/* bytes written */
	size_t len = s->npend * PAGE_BYTES;

	if (len && !tmp_room_for(s->fd, len))
		return spool_fail(s, "would leave its file system less than 5% "
				  "or 1 GiB free", 0);
	/* One system call for the lot, then whatever it left. */
	while (done < len) {
		struct iovec iov[BATCH_PAGES];
		size_t first = done / PAGE_BYTES, skip = done % PAGE_BYTES, n = 0;
		ssize_t w;

		for (size_t k = first; k < s->npend; k++, n++) {
			iov[n].iov_base = (void *)(s->pend[k] + (k == first ? skip : 0));
			iov[n].iov_len = PAGE_BYTES - (k == first ? skip : 0);
		}
		errno = 0;
		w = pwritev(s->fd, iov, (int)n, (off_t)(s->pend_at + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return spool_fail(s, "cannot write", w ? errno : ENOSPC);
		done += (size_t)w;
	}
	if (len)
		atomic_store_explicit(&s->written, s->pend_at + len,
				      memory_order_release);
	s->npend = 0;
	return 0;
}

/* Map the next piece. The file is not extended: pages are written into it
 * before anybody reads them, and a file size limit stops only the page that
 * would pass it. */
static int spool_grow(struct spool *s, struct maps *m)
{
	off_t end = (off_t)s->npieces * SPOOL_PIECE;
	void *p;

	/* Pages waiting to be written stay within one piece. */
	if (spool_flush(s) < 0)
		return -1;
	p = mmap(NULL, SPOOL_PIECE, PROT_READ, MAP_SHARED, s->fd, end);
	if (p == MAP_FAILED)
		return spool_fail(s, "cannot map", errno);
	s->pieces = xreallocarray(s->pieces, s->npieces + 1, sizeof(*s->pieces));
	s->pieces[s->npieces++] = p;
	s->piece_used = 0;
	s->unmapped = maps_add(m, p, SPOOL_PIECE, s->fd, (uint64_t)end, 1) < 0;
	return 0;
}

const unsigned char *spool_keep(struct spool *s, struct maps *m,
				const unsigned char *page)
{
	const unsigned char *dst;

	if (s->failed)
		return NULL;
	if (s->fd < 0 && (s->fd = tmpfile_fd()) < 0) {
		spool_fail(s, "cannot create", errno);
		return NULL;
	}
	if ((!s->npieces || s->piece_used == SPOOL_PIECE) && spool_grow(s, m) < 0)
		return NULL;
	if (!s->npend)
		s->pend_at = (uint64_t)(s->npieces - 1) * SPOOL_PIECE + s->piece_used;
	s->pend[s->npend++] = page;
	/* A piece past MAPS_MAX is read through its map: no page may wait. */
	if ((s->npend == BATCH_PAGES || s->unmapped) && spool_flush(s) < 0)
		return NULL;
	dst = s->pieces[s->npieces - 1] + s->piece_used;
	s->piece_used += PAGE_BYTES;
	return dst;
}

const unsigned char *spool_bytes(const struct spool *s, uint64_t off,
				 int main_thread, int *written)
{
	*written = off < atomic_load_explicit(&((struct spool *)s)->written,
					      memory_order_acquire);
	if (*written || !main_thread || off < s->pend_at ||
	    off - s->pend_at >= s->npend * PAGE_BYTES)
		return NULL;
	return s->pend[(off - s->pend_at) / PAGE_BYTES];
}

void spool_free(struct spool *s)
{
	for (size_t i = 0; i < s->npieces; i++)
		munmap(s->pieces[i], SPOOL_PIECE);
	free(s->pieces);
	if (s->fd >= 0)
		close(s->fd);
}
