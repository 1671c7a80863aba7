/* SPDX-License-Identifier: MIT */
/*
 * Unit test of util/shell.c's quoting. Two oracles besides the code: the
 * quoted forms of a few words, written by hand from the rules of POSIX sh's
 * quoting; and /bin/sh itself, which must read every quoted word back to the
 * same bytes (printf '%s\000' WORD... through popen), for hand-picked hard
 * words and for random words of every byte but NUL. Prints the failures and
 * last "N passed, N failed", like the Python suites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/shell.c"

static unsigned long passed, failed;

static void check(int ok, const char *what, const char *got, const char *exp)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL %s: got [%s], expected [%s]\n", what, got, exp);
}

/* The quoted form of @word, and its length and truncation. */
static void form(const char *word, const char *exp)
{
	char buf[256], small[4];
	size_t n = shell_quote(word, buf, sizeof(buf));

	check(strcmp(buf, exp) == 0, word, buf, exp);
	check(n == strlen(exp), "length", buf, exp);
	check(shell_quote(word, NULL, 0) == n, "length without room", buf, exp);
	/* A short buffer holds the start, NUL-terminated. */
	shell_quote(word, small, sizeof(small));
	check(strncmp(small, exp, 3) == 0 && strlen(small) == (n < 3 ? n : 3),
	      "truncated", small, exp);
}

static void forms(void)
{
	form("pages_to_scan", "pages_to_scan");
	form("/sys/kernel/mm/ksm", "/sys/kernel/mm/ksm");
	form("a-b_c.d/e:f=g@h%i+j,k", "a-b_c.d/e:f=g@h%i+j,k");
	form("200", "200");
	form("", "''");
	form("a b", "'a b'");
	form("it's", "'it'\\''s'");
	form("'", "''\\'''");
	form("''", "''\\'''\\'''");
	form("$HOME", "'$HOME'");
	form("`id`", "'`id`'");
	form("a\\b", "'a\\b'");
	form("x\ny", "'x\ny'");
	form("~", "'~'");
	form("*", "'*'");
	form("#", "'#'");
	form("caf\xc3\xa9", "'caf\xc3\xa9'");
}

/* Every word of @words, quoted, read back by sh: its output must be them. */
static void round_trip(const char *what, char **words, int n)
{
	size_t cap = 64, len = 0;
	char *cmd = malloc(cap), out[1 << 16];

	len = (size_t)sprintf(cmd, "printf '%%s\\000'");
	for (int i = 0; i < n; i++) {
		size_t q = shell_quote(words[i], NULL, 0);

		cmd = realloc(cmd, cap = len + q + 2);
		cmd[len++] = ' ';
		len += shell_quote(words[i], cmd + len, q + 1);
	}
	FILE *sh = popen(cmd, "r");
	size_t got = sh ? fread(out, 1, sizeof(out), sh) : 0;
	int status = sh ? pclose(sh) : -1;

	check(status == 0, what, "sh failed", "exit 0");
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		size_t w = strlen(words[i]);
		int ok = at + w < got && memcmp(out + at, words[i], w) == 0 &&
			 out[at + w] == '\0';

		check(ok, what, ok ? "" : words[i], words[i]);
		at += w + 1;
	}
	check(at == got, what, "extra output", "none");
	free(cmd);
}

static void hard_words(void)
{
	static char all[256];
	char *words[] = {
		"", " ", "'", "''", "a'b'c", "\\'", "'\\''", "\"", "$x", "${x}",
		"$(id)", "`id`", "\\", "\\\\n", "\n", "\t", "a\nb\n", "*", "?",
		"[a]", "~", "~root", "#x", "a#", "!", "&", ";", "|", "<", ">",
		"(", ")", "{}", "-n", "-e", "--", "a=b", "%s", "caf\xc3\xa9",
		"\xff\xfe", all,
	};
	for (int c = 1; c < 256; c++)
		all[c - 1] = (char)c;
	round_trip("hard words", words, sizeof(words) / sizeof(*words));
}

static void random_words(void)
{
	static char store[400][24];
	char *words[400];

	srand(35);
	for (int i = 0; i < 400; i++) {
		int n = rand() % 23;

		for (int k = 0; k < n; k++)	/* quotes often, every byte but NUL */
			store[i][k] = rand() % 4 ? (char)(1 + rand() % 255) : '\'';
		store[i][n] = '\0';
		words[i] = store[i];
	}
	round_trip("random words", words, 400);
}

int main(void)
{
	forms();
	hard_words();
	random_words();
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}
