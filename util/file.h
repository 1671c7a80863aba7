/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_FILE_H
#define KSMSCAN_FILE_H

#include <stdint.h>
#include <stdio.h>

/*
 * Files ksmscan writes: temporary copies and spools, kept from filling their
 * file system by one rule, and output files (--svg), written whole under a
 * temporary name and renamed, so that no input and no file behind a
 * symbolic link is ever replaced.
 */

/* What a temporary file leaves free of its file system: the smaller of this
 * share and this many bytes. */
#define FREE_MIN_PERCENT 5
#define FREE_MIN_BYTES (UINT64_C(1) << 30)

/**
 * tmpfile_fd() - an unlinked read-write temporary file in $TMPDIR or /tmp.
 *
 * Return: the descriptor, or -1 (errno set).
 */
int tmpfile_fd(void);

/**
 * tmp_room_for() - whether @len more bytes written to @fd leave its file
 * system at least min(FREE_MIN_PERCENT %, FREE_MIN_BYTES) free: the one rule
 * every temporary copy and spool checks before each write.
 * @fd: the temporary file
 * @len: the bytes about to be written
 *
 * Return: 1 if there is room (or the file system does not say), else 0.
 */
int tmp_room_for(int fd, uint64_t len);

/**
 * tmp_map() - map a temporary file (a copy written sparse) for reading,
 * its holes as anonymous zero memory: reading a hole takes no room of the
 * file system (tmpfs would give it a page, and a full one would end the
 * read with SIGBUS). Where the kernel allows no more maps, the remaining
 * holes are given their room at once (fallocate) or the map is refused.
 * @fd: the temporary file, at its final size
 * @size: its size, not 0
 *
 * Return: the map (munmap() it with @size), or NULL (errno set; ENOSPC:
 * no room for the holes that could not be mapped).
 */
void *tmp_map(int fd, uint64_t size);

/* An output file being written (out_open() to out_close()). */
struct out_file {
	FILE *f;		/* write here */
	char tmp[4096];		/* its temporary name, beside the final one */
	const char *path;	/* the final name */
};

/**
 * out_open() - start writing the output file @path: a new temporary file in
 * the same folder, mode 0666 less the umask, renamed over @path by
 * out_close().
 * @o: filled in
 * @path: the final name
 *
 * Return: 0, or -1 (errno set).
 */
int out_open(struct out_file *o, const char *path);

/**
 * out_close() - finish an output file: flush it, and rename it over its
 * final name (a symbolic link there is replaced, never followed); on any
 * error the temporary file is removed and the final name left as it was.
 * @o: the file
 * @ok: 0 to give up: remove the temporary file
 *
 * Return: 0, or -1 (errno set).
 */
int out_close(struct out_file *o, int ok);

/**
 * out_replaceable() - whether an output file may be written at @path: no
 * file is there, a symbolic link is (replaced, never followed), or a regular
 * file that begins with @magic (an earlier output of the same kind).
 * @path: the final name
 * @magic: what such a file begins with
 */
int out_replaceable(const char *path, const char *magic);

/**
 * same_file() - whether two paths name the same file (device and inode),
 * following symbolic links; 0 if either does not exist.
 * @a: a path
 * @b: another
 */
int same_file(const char *a, const char *b);

/**
 * file_kind() - what a file is, in words ("a FIFO", "a directory"), for
 * messages that refuse it.
 * @mode: its st_mode
 */
const char *file_kind(unsigned mode);

#endif
