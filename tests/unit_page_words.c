/* SPDX-License-Identifier: MIT */
/*
 * The same unit test for util/page.h's portable 64-bit-word build, which
 * CPUs without SSE2 get: built here by hiding SSE2 from the header.
 */
#undef __SSE2__
#include "unit_page.c"
