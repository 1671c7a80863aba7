/* SPDX-License-Identifier: MIT */
/*
 * ksmscan: how much memory would Linux KSM save on these memory dumps?
 *
 * This file only turns the command line into a struct scan_config and calls
 * the engine; everything else lives in hash/, dump/, scan/ and report/.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "dump/dump.h"
#include "hash/hash.h"
#include "report/report.h"
#include "scan/scan.h"
#include "util/util.h"

#define KSMSCAN_VERSION "0.1.0"

/* Limits of --top and -j. */
#define TOP_MAX 10000
#define THREADS_MAX 256

/* Exit statuses of SPEC section 1. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_line[] =
	"usage: ksmscan [-hqVz] [-a algos] [-f format] [-j threads]\n"
	"               [-m max_page_sharing] [-o format] [-p pid] [-r reports]\n"
	"               [--all-mappings] [--csv] [--json] [--[no-]progress]\n"
	"               [--range=start-end] [--top=n] [file ...]\n"
	"       ksmscan --bench [-a algos] [-o format]\n";

static const char help_text[] =
	"Estimate what Linux KSM (Kernel Samepage Merging) would save on memory dumps.\n"
	"\n"
	"  -a, --algo=LIST             checksums: comma list, 'all', 'auto' (the faster of\n"
	"                              crc32c and xxhash here) or 'help' (default xxhash)\n"
	"      --bench                 measure the checksums instead of reading inputs\n"
	"  -f, --format=FMT            auto, raw, elf, kdump, lime (default auto: by magic)\n"
	"  -m, --max-page-sharing=N    KSM's max_page_sharing, N >= 2 (default 256)\n"
	"  -o, --output=FMT            table, csv or json (default table)\n"
	"      --csv, --json           short for -o csv, -o json\n"
	"  -p, --pid=PID               a live process as input (repeatable)\n"
	"      --all-mappings          with -p: also file-backed and shared memory\n"
	"  -r, --report=LIST           summary, histogram, regions, top, tree, pages\n"
	"                              (default summary)\n"
	"      --top=N                 rows per input in the top report (default 10)\n"
	"  -j, --threads=N             hashing threads (default: online CPUs)\n"
	"      --progress, --no-progress\n"
	"                              progress on stderr (default: if it is a terminal)\n"
	"      --range=START-END       only pages with address in [START, END);\n"
	"                              decimal or 0x hex, K/M/G/T suffixes\n"
	"  -z, --use-zero-pages        model KSM with use_zero_pages=1\n"
	"  -q, --quiet                 no warnings\n"
	"  -h, --help                  this help\n"
	"  -V, --version               version\n"
	"\n"
	"A file may be '-' for standard input; zstd-compressed files are read as they\n"
	"are. Exit status: 0 success, 1 an input or the output could not be read or\n"
	"written completely, 2 usage error.\n"
	"See ksmscan(1).\n";

static void usage_error(const char *fmt, const char *arg)
	__attribute__((noreturn));

/* The reports of -r, by name. */
static const struct {
	const char *name;
	unsigned bit;
} report_names[] = {
	{ "summary", REPORT_SUMMARY },
	{ "pages", REPORT_PAGES },
	{ "regions", REPORT_REGIONS },
	{ "histogram", REPORT_HISTOGRAM },
	{ "top", REPORT_TOP },
	{ "tree", REPORT_TREE },
};

/* -p PID: a positive process id, reported as "pid:PID". */
static struct input pid_input(const char *arg)
{
	uint64_t pid;
	char name[32];

	if (parse_u64(arg, &pid) < 0 || pid == 0 || pid > INT32_MAX ||
	    strspn(arg, "0123456789") != strlen(arg))
		usage_error("not a process id: '%s'", arg);
	snprintf(name, sizeof(name), "pid:%d", (int)pid);
	return (struct input){ xstrdup(name), NULL, (int)pid };
}

/* Print an error and the usage line, then exit with the usage status. */
static void usage_error(const char *fmt, const char *arg)
{
	fputs("ksmscan: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	fputs(usage_line, stderr);
	exit(EXIT_USAGE);
}

/* The option getopt_long() stopped at, for a usage message. */
static const char *option_name(char **argv)
{
	static char shortopt[3] = "-?";
	const char *arg = argv[optind - 1];

	if (arg && strncmp(arg, "--", 2) == 0)
		return arg;
	if (optopt) {
		shortopt[1] = (char)optopt;
		return shortopt;
	}
	return arg ? arg : "?";
}

/* Add one algorithm to the selection, once. */
static void select_algo(struct scan_config *cfg, const struct algo *a)
{
	for (size_t i = 0; i < cfg->nalgos; i++)
		if (cfg->algos[i] == a)
			return;
	cfg->algos[cfg->nalgos++] = a;
}

/* -a LIST: names from the table, 'all' or 'auto' ('help' is handled by main). */
static void parse_algos(struct scan_config *cfg, const char *list)
{
	const char *p = list;

	cfg->nalgos = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		const struct algo *a = hash_lookup(p, len);

		if (len == 4 && strncmp(p, "auto", 4) == 0) {
			/* The fastest of KSM's candidates on this machine. */
			select_algo(cfg, bench_auto(NULL));
		} else if (len == 3 && strncmp(p, "all", 3) == 0) {
			for (size_t i = 0; i < hash_count(); i++)
				select_algo(cfg, hash_get(i));
		} else if (a) {
			select_algo(cfg, a);
		} else {
			char name[64];

			snprintf(name, sizeof(name), "%.*s", (int)(len < 60 ? len : 60), p);
			usage_error("unknown algorithm '%s' (try -a help)", name);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (cfg->nalgos == 0)
		usage_error("no algorithm in '%s'", list);
}

/* -r LIST: report names. */
static unsigned parse_reports(const char *list)
{
	unsigned bits = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(report_names) / sizeof(report_names[0]); i++)
			if (strlen(report_names[i].name) == len &&
			    strncmp(report_names[i].name, p, len) == 0)
				break;
		if (i == sizeof(report_names) / sizeof(report_names[0])) {
			char name[64];

			snprintf(name, sizeof(name), "%.*s", (int)(len < 60 ? len : 60), p);
			usage_error("unknown report '%s'", name);
		}
		bits |= report_names[i].bit;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!bits)
		usage_error("no report in '%s'", list);
	return bits;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "algo", required_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },
		{ "max-page-sharing", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-mappings", no_argument, NULL, 'M' },
		{ "range", required_argument, NULL, 'R' },
		{ "bench", no_argument, NULL, 'B' },
		{ "top", required_argument, NULL, 'T' },
		{ "threads", required_argument, NULL, 'j' },
		{ "progress", no_argument, NULL, 'P' },
		{ "no-progress", no_argument, NULL, 'N' },
		{ "use-zero-pages", no_argument, NULL, 'z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "csv", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct scan_config cfg = {
		.dump = { .format = "auto", .range_end = UINT64_MAX },
		.top = 10,
		.progress = -1,
		.reports = REPORT_SUMMARY,
		.ksm = { .max_page_sharing = 256, .use_zero_pages = 0 },
	};
	const char *output = "table";
	int bench = 0, algos_given = 0, algos_help = 0;
	struct input *inputs = xcalloc((size_t)argc + 1, sizeof(*inputs));
	size_t ninputs = 0;
	uint64_t m;
	int c;

	hash_init();
	cfg.algos[cfg.nalgos++] = hash_lookup("xxhash", 6);
	opterr = 0;
	/* A leading '-' keeps files and -p in command-line order. */
	while ((c = getopt_long(argc, argv, "-:a:f:j:m:o:p:r:zqhV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 1:
			inputs[ninputs++] = (struct input){ optarg, optarg, 0 };
			break;
		case 'p':
			inputs[ninputs++] = pid_input(optarg);
			break;
		case 'M':
			cfg.dump.all_mappings = 1;
			break;
		case 'R':
			if (parse_range(optarg, &cfg.dump.range_start,
					&cfg.dump.range_end) < 0)
				usage_error("--range wants START-END with START < END, "
					    "not '%s'", optarg);
			break;
		case 'a':
			if (strcmp(optarg, "help") == 0) {
				algos_help = 1;
				break;
			}
			parse_algos(&cfg, optarg);
			algos_given = 1;
			break;
		case 'B':
			bench = 1;
			break;
		case 'T':
			if (parse_u64(optarg, &m) < 0 || m > TOP_MAX)
				usage_error("--top wants 0 to 10000, not '%s'", optarg);
			cfg.top = (size_t)m;
			break;
		case 'j':
			if (parse_u64(optarg, &m) < 0 || m < 1 || m > THREADS_MAX)
				usage_error("-j wants 1 to 256 threads, not '%s'", optarg);
			cfg.threads = (unsigned)m;
			break;
		case 'P':
			cfg.progress = 1;
			break;
		case 'N':
			cfg.progress = 0;
			break;
		case 'f':
			if (!dump_format_known(optarg))
				usage_error("unknown format '%s'", optarg);
			cfg.dump.format = optarg;
			break;
		case 'm':
			if (parse_u64(optarg, &m) < 0 || m < 2 || m > UINT32_MAX)
				usage_error("max_page_sharing must be an integer "
					    "from 2 to 4294967295, not '%s'", optarg);
			cfg.ksm.max_page_sharing = m;
			break;
		case 'o':
			output = optarg;
			break;
		case 'C':
			output = "csv";
			break;
		case 'J':
			output = "json";
			break;
		case 'r':
			cfg.reports = parse_reports(optarg);
			break;
		case 'z':
			cfg.ksm.use_zero_pages = 1;
			break;
		case 'q':
			msg_quiet = 1;
			break;
		case 'h':
			fputs(usage_line, stdout);
			fputs(help_text, stdout);
			free(inputs);
			return output_close() < 0 ? EXIT_INPUT : EXIT_OK;
		case 'V':
			printf("ksmscan %s\n", KSMSCAN_VERSION);
			free(inputs);
			return output_close() < 0 ? EXIT_INPUT : EXIT_OK;
		case ':':
			usage_error("option '%s' needs an argument", option_name(argv));
			break;
		default:
			usage_error("unknown option '%s'", option_name(argv));
			break;
		}
	}
	/* Operands after "--" are files too. */
	while (optind < argc) {
		inputs[ninputs] = (struct input){ argv[optind], argv[optind], 0 };
		ninputs++;
		optind++;
	}
	cfg.out = writer_lookup(output);
	if (!cfg.out)
		usage_error("unknown output format '%s'", output);
	if (cfg.out == writer_lookup("csv") &&
	    (cfg.reports & (cfg.reports - 1)))
		usage_error("%s", "--csv takes exactly one report");
	if (algos_help) {
		algos_report(cfg.out);
		free(inputs);
		return output_close() < 0 ? EXIT_INPUT : EXIT_OK;
	}
	if (bench) {
		if (ninputs)
			usage_error("%s", "--bench reads no input");
		/* Without -a, every algorithm is measured. */
		if (!algos_given)
			parse_algos(&cfg, "all");
		c = bench_run(cfg.algos, cfg.nalgos, cfg.out);
		free(inputs);
		return output_close() < 0 ? EXIT_INPUT : c;
	}
	if (ninputs == 0)
		usage_error("%s", "no input file or process");
	if (!cfg.threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		cfg.threads = cpus < 1 ? 1 : cpus > THREADS_MAX ? THREADS_MAX :
			      (unsigned)cpus;
	}
	cfg.inputs = inputs;
	cfg.ninputs = ninputs;

	c = scan_run(&cfg);
	if (output_close() < 0)
		c = EXIT_INPUT;
	for (size_t i = 0; i < ninputs; i++)
		if (!inputs[i].path)
			free((char *)inputs[i].name);
	free(inputs);
	return c;
}
