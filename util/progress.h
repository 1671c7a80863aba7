/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_PROGRESS_H
#define KSMSCAN_PROGRESS_H

#include <stdint.h>

/*
 * A progress line on standard error for long scans: bytes done, pages per
 * second and, when the total is known, time left. Refreshed at most about six
 * times a second; shown only when asked (--progress) or when standard error
 * is a terminal.
 */
struct progress;

/**
 * progress_start() - begin showing progress.
 * @mode: 1 always, 0 never, -1 when standard error is a terminal
 * @total: bytes expected in all, or 0 if unknown
 *
 * Return: the progress state, or NULL when nothing is to be shown.
 */
struct progress *progress_start(int mode, uint64_t total);

/**
 * progress_update() - note how far the scan is; redraws when it is time.
 * @p: the state, or NULL
 * @bytes: bytes of pages read so far
 * @pages: pages of the current input so far
 */
void progress_update(struct progress *p, uint64_t bytes, uint64_t pages);

/**
 * progress_note() - show a line of text as the progress, for work measured in
 * steps rather than bytes (--bench); redraws when it is time.
 * @p: the state, or NULL
 * @text: what is being done
 */
void progress_note(struct progress *p, const char *text);

/**
 * progress_end() - erase the progress line and free the state.
 * @p: the state, or NULL
 */
void progress_end(struct progress *p);

#endif
