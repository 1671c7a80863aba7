/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the /proc/PID/maps parser of the live-process reader
 * (its static functions are reached by including the reader's source).
 */
#include "../dump/proc.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_options opt = { .format = "auto", .range_end = UINT64_MAX };
	struct dump d = { .opt = &opt };
	struct proc *p = xcalloc(1, sizeof(*p));
	char *text = xmalloc(size + 1);

	memcpy(text, data, size);
	text[size] = '\0';
	p->mem = p->pagemap = -1;
	d.src.name = "fuzz";
	d.priv = p;
	msg_quiet = msg_silent = 1;
	opt.all_mappings = size && (data[0] & 1);
	proc_parse_maps(&d, p, text);
	free(text);
	/* proc_close() frees what the parser built. */
	proc_close(&d);
	return 0;
}
