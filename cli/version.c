/* SPDX-License-Identifier: MIT */
/* -V: the version and what ksmscan was built with (print_version()). */
#include <lz4.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include "../hash/hash.h"
#include "cli.h"
#include "options.h"

/* Print @word after a space, or on a new line indented by two when the line
 * would pass 80 columns; *@col is the current line's width. */
static void put_word(const char *word, int *col)
{
	int len = (int)strlen(word);

	if (*col && *col + 1 + len > 80) {
		fputs("\n ", stdout);
		*col = 1;
	}
	printf("%s%s", *col ? " " : "", word);
	*col += (*col ? 1 : 0) + len;
}

/* -V: the version, what it was built with, and the checksum paths this CPU
 * runs (as -a help's impl column), within 80 columns. */
void print_version(void)
{
	char line[512], *save = NULL;
	int col = 0;

	printf("ksmscan %s\n", KSMSCAN_VERSION);
	snprintf(line, sizeof(line),
		 "built with %s %s, musl; xxHash %d.%d.%d, zstd %s, zlib %s, lz4 %s",
#ifdef __clang__
		 "clang",
#else
		 "gcc",
#endif
		 __VERSION__, XXH_VERSION_MAJOR, XXH_VERSION_MINOR, XXH_VERSION_RELEASE,
		 ZSTD_VERSION_STRING, ZLIB_VERSION, LZ4_VERSION_STRING);
	for (char *w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save))
		put_word(w, &col);
	putchar('\n');
	col = 0;
	put_word("checksums on this CPU:", &col);
	for (size_t i = 0; i < hash_count(); i++) {
		snprintf(line, sizeof(line), "%s=%s", hash_get(i)->name,
			 hash_get(i)->impl);
		put_word(line, &col);
	}
	putchar('\n');
}
