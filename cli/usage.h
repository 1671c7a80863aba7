/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_USAGE_H
#define KSMSCAN_USAGE_H

/*
 * How a run ends: its exit statuses, and a usage error, which every part
 * of the command line (the table's reader, its handlers, the names, the
 * rules between options) may end the run with; it is a unit of its own so
 * that none of them calls back into another for it.
 */

/* Exit statuses (ksmscan(1), EXIT STATUS). */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_UNCOMPARABLE = 3 };

/**
 * usage_error() - print "ksmscan: MESSAGE" and "Try 'ksmscan --help'." on
 * standard error and exit with the usage status.
 * @fmt: printf format of the message
 */
void usage_error(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

#endif
