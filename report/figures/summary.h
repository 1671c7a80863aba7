/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SUMMARY_H
#define KSMSCAN_SUMMARY_H

#include <stddef.h>

#include "../report_sink.h"

/*
 * The summary's own parts: its rows (summary.c) and what it says to people
 * besides them (summary_people.c).
 */

/**
 * scope_status_label() - the summary's status: "ok", "partial" or
 * "failed", but "estimate" for a scope read in full whose frames were
 * estimated (live processes read without root).
 * @st: the scope's status
 * @f: its figures
 */
const char *scope_status_label(enum scope_status st, const struct figures *f);

/**
 * status_why() - a summary row's status as people read it: with the reason
 * a scope failed, without the input's name it repeats.
 * @in: the row
 * @buf: room for it
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *status_why(const struct scope_copy *in, char *buf, size_t len);

/**
 * summary_checksums() - for people, the checksums' own figures apart (a
 * table of one line per input and algorithm) when there are several.
 * @rs: the report's setup
 * @rows: the summary's rows
 * @n: how many
 */
void summary_checksums(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n);

/**
 * summary_sentences() - the summary's notes for people (tables only): what
 * each input's saving is made of, other KSM settings, the checksum, what
 * exists only across inputs, and that KSM merges only mergeable memory.
 * @rs: the report's setup
 * @rows: the scopes, "*" last if there are several inputs
 * @n: how many
 */
void summary_sentences(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n);

#endif
