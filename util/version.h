/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_VERSION_H
#define KSMSCAN_VERSION_H

/* The version -V prints and every JSON's parameters.version carries; a
 * forecast of a newer major version is not read back (check/forecast.c).
 * The Makefile reads it here too. */
#define KSMSCAN_VERSION "0.1.0"

#endif
