/* SPDX-License-Identifier: MIT */
/*
 * ksmscan: how much memory would Linux KSM save on these memory dumps?
 *
 * This file turns the command line into preferences (a struct scan_config for
 * the engine, a struct report_setup for the reports) and dispatches: -a help,
 * --bench, a scan (scan/scan.c) or a series (scan/series.c), whose reports it
 * creates, prints and frees. Everything else lives in util/, hash/, dump/,
 * compress/, model/, scan/, report/ and cli/ (see docs/architecture.md).
 */
#include <errno.h>
#include <getopt.h>
#include <lz4.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include "compress/compress.h"
#include "model/zram.h"
#include "dump/dump.h"
#include "cli/cli.h"
#include "dump/procfs.h"
#include "hash/hash.h"
#include "hash/measure.h"
#include "report/report.h"
#include "scan/forecast.h"
#include "scan/scan.h"
#include "util/util.h"

#define KSMSCAN_VERSION "0.1.0"

/* Limits of --top and -j. */
#define TOP_MAX 10000
#define THREADS_MAX 256

/* Long options without a short form, beyond every character. */
enum {
	OPT_PROGRESS = 256, OPT_ALL_PROCESSES, OPT_GROUP, OPT_SKETCH_SIZE, OPT_HOST,
	OPT_KNOWN, OPT_BY, OPT_ENABLE,
	/* --series and ksmd's settings */
	OPT_SERIES, OPT_INTERVAL, OPT_COUNT, OPT_PAGES_TO_SCAN, OPT_SLEEP_MS,
	OPT_SMART_SCAN, OPT_SCANS, OPT_HZ, OPT_PAGE_COST, OPT_REVISIT_COST,
	OPT_WRITE_RATE,
	OPT_POLICY, OPT_ADV_TARGET, OPT_ADV_MAX_CPU, OPT_ADV_MIN_PAGES,
	OPT_ADV_MAX_PAGES, OPT_HOST_MEMORY, OPT_HOST_USED, OPT_TARGET, OPT_MAX_CPU,
	/* a forecast against the kernel afterwards */
	OPT_CHECK, OPT_TOLERANCE,
};

/* Limits of --interval, in seconds. */
#define INTERVAL_MIN 0.001
#define INTERVAL_MAX 3600000.0

/* Limits of --count and of ksmd's settings. */
#define COUNT_MAX 100000
#define KSMD_MAX 100000000
#define HZ_MAX 10000
/* ksmd's time per page it visits, without --page-cost: its CPU time
 * (/proc/PID/schedstat) per page scanned, measured with Linux 6.18 on a
 * 2-CPU virtual machine: 2.2 us on static memory, 2.9 us on memory being
 * written (docs/changing-memory.md). */
#define PAGE_COST_DEFAULT 3e-6
/* ... per KSM page it revisits (it finds the page merged and goes on), by
 * default this share of --page-cost: 0.4 to 1.0 us on the same machine, in
 * full scans where smart_scan passed the unmerged pages and ksmd only
 * revisited 22954 KSM pages, about a sixth of the default. */
#define REVISIT_SHARE_DEFAULT (1.0 / 6)
/* HZ when the kernel's cannot be known: the most common distribution build. */
#define HZ_DEFAULT 250

/* Largest --sketch-size: the index's most distinct contents. */
#define SKETCH_MAX ((1u << 28) - 1)

/* Exit statuses (ksmscan(1), EXIT STATUS). */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_line[] =
	"usage: ksmscan [-hlqVz] [-a algos] [-c compressors] [-f format]\n"
	"               [-j threads] [-m max_page_sharing] [-o format] [-p pid]\n"
	"               [-P regex] [-r reports] [--host=name]\n"
	"               [--all-mappings] [--all-processes] [--by=kind] [--csv]\n"
	"               [--enable=unit,...] [--group=name=input,...] [--json]\n"
	"               [--known=file,...] [--label=name] [--[no-]progress]\n"
	"               [--range=start-end] [--sketch-size=k] [--svg=file] [--top=n]\n"
	"               [file ...]\n"
	"       ksmscan --series [--interval=d] [--pages-to-scan=n] [--sleep-ms=n]\n"
	"               [--smart-scan=0|1] [--scans=n] [--hz=n] [--page-cost=d]\n"
	"               [--revisit-cost=d] [--write-rate=r] [options] snapshot ...\n"
	"       ksmscan -p pid [-p pid ...] --interval=d --count=n [ksmd options]\n"
	"       ksmscan --bench [-a algos] [-o format]\n"
	"       ksmscan --check=forecast.json [--tolerance=percent] [-o format]\n";

/* --help, before and after the list of reports (from the reports' table). */
static const char help_head[] =
	"Estimate what Linux KSM (Kernel Samepage Merging) would save on memory dumps.\n"
	"\n"
	"  -a, --algo=LIST             checksums: comma list, 'all', 'auto' (the faster\n"
	"                              of crc32c and xxhash here) or 'help' (default\n"
	"                              xxhash)\n"
	"      --bench                 measure the checksums instead of reading inputs\n"
	"      --check=FILE            instead of reading inputs, compare a live\n"
	"                              series' forecast (its JSON) with the kernel\n"
	"                              now; exit 1 outside --tolerance\n"
	"      --tolerance=P           --check's largest error, percent (default 10)\n"
	"  -c, --compress=LIST         zram's compressors: lz4, lzo, lzo-rle, zstd or\n"
	"                              'all'; selects the compress report too\n";

/* --help after the formats of -f (from the readers' table). */
static const char help_formats[] =
	"\n                              (default auto: by magic)\n"
	"  -m, --max-page-sharing=N    KSM's max_page_sharing, N >= 2 (default 256)\n"
	"  -o, --output=FMT            table, csv, json or openmetrics (default table)\n"
	"      --csv, --json           short for -o csv, -o json\n"
	"  -p, --pid=PID               a live process as input (repeatable)\n"
	"      --all-mappings          with -p: also file-backed and shared memory\n"
	"  -P, --process=REGEX         every process whose command name matches the\n"
	"                              extended regular expression, as pid:PID inputs\n"
	"      --all-processes         every process (not kernel threads)\n"
	"      --group=NAME=INPUT,...  also the inputs' sharing within this group\n"
	"                              only (repeatable): summary rows group:NAME;\n"
	"                              the trust domains of -r exposure\n"
	"      --known=FILE,...        with -r exposure: pages equal to a page of\n"
	"                              these files (a kernel image, a library)\n"
	"      --by=KIND               live processes also counted by unit, cgroup,\n"
	"                              container or vm (comma list; process: only\n"
	"                              the processes' rows): rows KIND:NAME\n"
	"      --enable=NAME,...       the saving if only these --by rows' processes\n"
	"                              and their children had KSM on: row enable:...\n"
	"      --series                the inputs are snapshots of one memory, oldest\n"
	"                              first: replay KSM's scanner over them\n"
	"      --interval=D            between snapshots: seconds, or with s, ms, m, h\n"
	"                              (default 60s)\n"
	"      --count=N               with -p (one or more): take N snapshots,\n"
	"                              --interval apart, of the pages ksmd scans\n"
	"      --pages-to-scan=N       ksmd's pages per wake-up (default 100)\n"
	"      --sleep-ms=N            ksmd's sleep between wake-ups (default 20)\n"
	"      --smart-scan=0|1        ksmd skips pages that do not merge (default 1)\n"
	"      --scans=N               replay exactly N full scans (default: past the\n"
	"                              last snapshot, until the counters settle)\n"
	"      --hz=N                  the kernel's HZ: ksmd wakes on jiffies (default:\n"
	"                              this kernel's; 0: exactly every --sleep-ms)\n"
	"      --page-cost=D           ksmd's time per page it visits (default 3us)\n"
	"      --revisit-cost=D        ... that is a KSM page already (default a sixth\n"
	"                              of --page-cost)\n"
	"      --write-rate=R          writes snapshots cannot see: a share of the\n"
	"                              pages per second, 0.02 or 2% (default 0)\n"
	"      --policy=P              who sets pages_to_scan: fixed (default),\n"
	"                              advisor (the kernel's advisor_mode=scan-time)\n"
	"                              ksmtuned (by the host's free memory) or\n"
	"                              kubevirt (KubeVirt's KSM handler); a comma\n"
	"                              list compares them (-r policies)\n"
	"      --advisor-target-scan-time=D  (default 200s)\n"
	"      --advisor-max-cpu=P     percent (default 70)\n"
	"      --advisor-min-pages-to-scan=N  (default 500)\n"
	"      --advisor-max-pages-to-scan=N  (default 30000)\n"
	"      --host-memory=SIZE      ksmtuned's and kubevirt's host: its memory\n"
	"                              (live: MemTotal)\n"
	"      --host-used=SIZE        and what is used before KSM (live: MemTotal\n"
	"                              less MemFree, Buffers and Cached)\n"
	"      --target=F@D            -r advise: a share of the saving by a time,\n"
	"                              such as 90%@1h\n"
	"      --max-cpu=P             -r advise: ksmd's mean CPU, percent (default\n"
	"                              100); the advisor_max_cpu tried besides 10\n";

static const char help_tail[] =
	"      --top=N                 rows per input in the top report (default 10)\n"
	"      --sketch-size=K         contents per input in the sketch report\n"
	"                              (default 4096)\n"
	"      --host=NAME             the host column of contents and sketch\n"
	"                              (default: this machine's host name)\n"
	"  -j, --threads=N             hashing threads (default: online CPUs)\n"
	"      --progress, --no-progress\n"
	"                              progress on stderr (default: if it is a terminal)\n"
	"      --range=START-END       only pages with address in [START, END);\n"
	"                              decimal or 0x hex, K/M/G/T suffixes\n"
	"  -z, --use-zero-pages        model KSM with use_zero_pages=1\n"
	"  -l, --long                  tables with every column, as CSV has them\n"
	"      --label=NAME            the name of standard input in reports ('-')\n"
	"      --svg=FILE              also a picture: histograms and address maps\n"
	"  -q, --quiet                 no warnings\n"
	"  -h, --help                  this help\n"
	"  -V, --version               version\n"
	"\n"
	"A file may be '-' for standard input, which is read when no input is named\n"
	"and it is not a terminal; compressed files are read as they are. Exit\n"
	"status: 0 success, 1 an input or the output could not be read or written\n"
	"completely, 2 usage error; --check: 1 outside the tolerance, 2 not a forecast.\n"
	"See ksmscan(1).\n";

static void usage_error(const char *fmt, const char *arg)
	__attribute__((noreturn));

/* -p PID: a positive process id, reported as "pid:PID". */
static struct input pid_input(const char *arg)
{
	uint64_t pid;
	char name[32];

	if (parse_u64(arg, &pid) < 0 || pid == 0 || pid > INT32_MAX ||
	    strspn(arg, "0123456789") != strlen(arg))
		usage_error("not a process id: '%s'", arg);
	snprintf(name, sizeof(name), "pid:%d", (int)pid);
	return (struct input){ .name = xstrdup(name), .pid = (int)pid };
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

/* What the command line asks for; main() turns it into a run. */
struct prefs {
	struct scan_config cfg;		/* what the engine reads */
	struct input *inputs;		/* files and processes, in order */
	size_t ninputs, cap;
	const char **groups;		/* --group values, parsed at the end */
	size_t ngroups;
	const char **known;		/* --known files */
	size_t nknown;
	unsigned by;			/* --by: a bit per enum unit_kind */
	const char *enable;		/* --enable's list, or NULL */
	size_t sketch_size;		/* --sketch-size */
	const char *host;		/* --host, or NULL: gethostname() */
	const char *output;		/* the writer's name */
	const char *label;		/* --label: standard input's name */
	const char *svg;		/* --svg: the picture's file */
	uint64_t reports;		/* bit i: report_get(i) is selected */
	size_t top;			/* rows of the top report (--top) */
	const struct compressor *compressors[COMPRESS_MAX];	/* -c */
	size_t ncompressors;
	struct series_params series;	/* --series and ksmd's settings */
	const char *series_opt;		/* the first of ksmd's options given */
	int series_on;			/* --series */
	size_t count;			/* --count: live snapshots of the -p */
	int hz_given;			/* --hz was given */
	uint64_t host_memory, host_used;	/* --host-memory, --host-used */
	int bench;			/* --bench */
	const char *check;		/* --check: the forecast's file */
	double tolerance;		/* --tolerance, percent; -1: not given */
	int algos_given;		/* -a was given */
	int algos_help;			/* -a help */
	int compress;			/* -c or -r compress: the compress report */
	int long_table;			/* -l */
};

/* The comma-separated names of @list, each handed to @one; empty ones skipped. */
static void for_each_name(struct prefs *p, const char *list,
			  void (*one)(struct prefs *, const char *, size_t))
{
	while (*list) {
		size_t len = strcspn(list, ",");

		if (len)
			one(p, list, len);
		list += len;
		if (*list == ',')
			list++;
	}
}

/* A name from a list, quoted in a usage message: at most 60 bytes of it. */
static const char *quoted(const char *name, size_t len)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 60 ? len : 60), name);
	return buf;
}

/*
 * The name of the @n candidates that @name is likely a typo of (an edit
 * distance of at most 2, and less than half its length), or NULL.
 */
static const char *closest(const char *name, size_t len,
			   const char *(*candidate)(size_t), size_t n)
{
	const char *best = NULL;
	size_t least = len < 6 ? len / 2 + 1 : 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, len, candidate(i));

		if (d < least) {
			least = d;
			best = candidate(i);
		}
	}
	return best;
}

/* Candidates for closest(), one per table. */
static const char *algo_at(size_t i) { return hash_get(i)->name; }
static const char *report_at(size_t i) { return report_get(i)->name; }
static const char *compressor_at(size_t i) { return compress_get(i)->name; }

/* A usage error for an unknown @what, with a guess at what was meant. */
static void unknown(const char *what, const char *name, size_t len,
		    const char *(*candidate)(size_t), size_t n, const char *hint)
{
	const char *guess = closest(name, len, candidate, n);
	char msg[256];

	snprintf(msg, sizeof(msg), "unknown %s '%%s'%s%s%s%s", what,
		 guess ? " (did you mean '" : "", guess ? guess : "",
		 guess ? "'?)" : "", hint);
	usage_error(msg, quoted(name, len));
}

/* Add one algorithm to the selection, once. */
static void select_algo(struct scan_config *cfg, const struct algo *a)
{
	for (size_t i = 0; i < cfg->nalgos; i++)
		if (cfg->algos[i] == a)
			return;
	cfg->algos[cfg->nalgos++] = a;
}

/* One name of -a: from the table, 'all' or 'auto' ('help' is handled apart). */
static void algo_name(struct prefs *p, const char *name, size_t len)
{
	const struct algo *a = hash_lookup(name, len);

	if (len == 4 && strncmp(name, "auto", 4) == 0) {
		/* The fastest of KSM's candidates on this machine. */
		select_algo(&p->cfg, hash_auto(NULL));
	} else if (len == 3 && strncmp(name, "all", 3) == 0) {
		for (size_t i = 0; i < hash_count(); i++)
			select_algo(&p->cfg, hash_get(i));
	} else if (a) {
		select_algo(&p->cfg, a);
	} else {
		unknown("algorithm", name, len, algo_at, hash_count(), " (try -a help)");
	}
}

/* -a LIST */
static void parse_algos(struct prefs *p, const char *list)
{
	p->cfg.nalgos = 0;
	for_each_name(p, list, algo_name);
	if (p->cfg.nalgos == 0)
		usage_error("no algorithm in '%s'", list);
}

/* One name of -r, from the reports' table. */
static void report_name(struct prefs *p, const char *name, size_t len)
{
	const struct report *r = report_lookup(name, len);

	if (!r)
		unknown("report", name, len, report_at, report_count(), "");
	if (strcmp(r->name, "compress") == 0)
		p->compress = 1;
	for (size_t i = 0; i < report_count(); i++)
		if (report_get(i) == r)
			p->reports |= UINT64_C(1) << i;
}

/* One file of --known (a copy of the name: the list is split at commas). */
static void known_name(struct prefs *p, const char *name, size_t len)
{
	char *path = xmalloc(len + 1);

	memcpy(path, name, len);
	path[len] = '\0';
	if (strcmp(path, "-") == 0)
		usage_error("%s", "--known wants files, not standard input");
	p->known = xreallocarray(p->known, p->nknown + 1, sizeof(*p->known));
	p->known[p->nknown++] = path;
}

/* -r LIST */
static void parse_reports(struct prefs *p, const char *list)
{
	p->reports = 0;
	for_each_name(p, list, report_name);
	if (!p->reports)
		usage_error("no report in '%s'", list);
}

/* One name of -c, from the compressors' table, or 'all'. */
static void compressor_name(struct prefs *p, const char *name, size_t len)
{
	const struct compressor *c = compress_lookup(name, len);

	if (len == 3 && strncmp(name, "all", 3) == 0) {
		for (size_t i = 0; i < compress_count(); i++)
			compressor_name(p, compress_get(i)->name,
					strlen(compress_get(i)->name));
		return;
	}
	if (!c)
		unknown("compressor", name, len, compressor_at, compress_count(), "");
	for (size_t i = 0; i < p->ncompressors; i++)
		if (p->compressors[i] == c)
			return;
	p->compressors[p->ncompressors++] = c;
}

/* -c LIST: the compressors, and the compress report. */
static void parse_compressors(struct prefs *p, const char *list)
{
	p->ncompressors = 0;
	for_each_name(p, list, compressor_name);
	if (!p->ncompressors)
		usage_error("no compressor in '%s'", list);
	p->compress = 1;
}

/* A number option from @lo to @hi, or a usage error saying @what. */
static uint64_t number(const char *arg, uint64_t lo, uint64_t hi, const char *what)
{
	uint64_t v;

	if (parse_u64(arg, &v) < 0 || v < lo || v > hi)
		usage_error(what, arg);
	return v;
}

/* --help: the usage line, then the options; the reports come from their table. */
static int print_help(void)
{
	fputs(usage_line, stdout);
	fputs(help_head, stdout);
	fputs("  -f, --format=FMT            ", stdout);
	for (size_t i = 0; dump_format_name(i); i++)
		printf("%s%s", i ? ", " : "", dump_format_name(i));
	fputs(help_formats, stdout);
	size_t col = 30;

	fputs("  -r, --report=LIST           ", stdout);
	for (size_t i = 0; i < report_count(); i++) {
		const char *name = report_get(i)->name;

		/* Wrap within 80 columns, under the descriptions. */
		if (i && col + strlen(name) + 2 > 79) {
			fputs(",\n                              ", stdout);
			col = 30;
		} else if (i) {
			fputs(", ", stdout);
			col += 2;
		}
		fputs(name, stdout);
		col += strlen(name);
	}
	fputs("\n                              (default summary)\n", stdout);
	fputs(help_tail, stdout);
	return output_close() < 0 ? EXIT_INPUT : EXIT_OK;
}

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
static int print_version(void)
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
	return output_close() < 0 ? EXIT_INPUT : EXIT_OK;
}

static double share(const char *arg, double most, int zero);

/* --page-cost, --revisit-cost: ksmd's time per page, at most a second. */
static double cost(const char *arg, const char *fmt)
{
	double d;

	if (parse_duration(arg, &d) < 0 || d > 1)
		usage_error(fmt, arg);
	return d;
}

/* share() of an option's value, or the usage error @fmt naming it. */
static double share_arg(const char *arg, double most, int zero, const char *fmt)
{
	double v = share(arg, most, zero);

	if (v < 0)
		usage_error(fmt, arg);
	return v;
}

/* A percent: "5" and "5%" are both 5 percent (--tolerance, --max-cpu). */
static double percent_arg(const char *arg, double most, int zero,
			  const char *fmt)
{
	double d = share_arg(arg, most, zero, fmt);

	return strchr(arg, '%') ? d * 100 : d;
}

/* Options that only set a value: 0 if @c is one of them (handled). */
static int set_value(struct prefs *p, int c)
{
	switch (c) {
	case 'M': p->cfg.dump.all_mappings = 1; break;
	case 'B': p->bench = 1; break;
	case OPT_PROGRESS: p->cfg.progress = 1; break;
	case 'N': p->cfg.progress = 0; break;
	case 'o': p->output = optarg; break;
	case 'L': p->label = optarg; break;
	case 'S': p->svg = optarg; break;
	case 'C': p->output = "csv"; break;
	case 'J': p->output = "json"; break;
	case 'z': p->cfg.ksm.use_zero_pages = 1; break;
	case 'q': msg_quiet = 1; break;
	case 'l': p->long_table = 1; break;
	case OPT_GROUP: p->groups[p->ngroups++] = optarg; break;
	case OPT_KNOWN: for_each_name(p, optarg, known_name); break;
	case OPT_ENABLE: p->enable = optarg; break;
	case OPT_CHECK: p->check = optarg; break;
	case OPT_TOLERANCE:
		p->tolerance = percent_arg(optarg, 1e6, 1, "--tolerance wants a "
					   "percent, such as 10 or 10%%, not '%s'");
		break;
	case OPT_HOST:
		if (!*optarg)
			usage_error("%s", "--host wants a name");
		p->host = optarg;
		break;
	case OPT_SKETCH_SIZE:
		p->sketch_size = (size_t)number(optarg, 1, SKETCH_MAX,
			"--sketch-size wants 1 to 268435455, not '%s'");
		break;
	case 'T':
		p->top = (size_t)number(optarg, 0, TOP_MAX,
					"--top wants 0 to 10000, not '%s'");
		break;
	case 'j':
		p->cfg.threads = (unsigned)number(optarg, 1, THREADS_MAX,
						  "-j wants 1 to 256 threads, not '%s'");
		break;
	case 'm':
		p->cfg.ksm.max_page_sharing = number(optarg, 2, UINT32_MAX,
			"max_page_sharing must be an integer from 2 to 4294967295, "
			"not '%s'");
		break;
	default:
		return -1;
	}
	return 0;
}

static int advisor_value(struct prefs *p, int c);

/* A share: 0.9 or 90%, within (0, @most] ([0, @most] with @zero); -1 if
 * it is not one. */
static double share(const char *arg, double most, int zero)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && strcmp(end, "%") == 0)
		v /= 100;
	else if (end == arg || *end)
		return -1;
	if (errno || !(v > 0 || (zero && v == 0)) || !(v <= most) ||
	    strchr("+- \t", *arg))
		return -1;
	return v;
}


/* --series and ksmd's settings: 0 if @c is one of them (handled). */
static int series_value(struct prefs *p, int c, char **argv)
{
	struct series_params *sp = &p->series;
	struct ksm_params *k = &p->cfg.ksm;

	switch (c) {
	case OPT_SERIES: p->series_on = 1; return 0;
	case OPT_INTERVAL:
		/* ksmd sleeps at least 1 ms: a shorter interval means nothing,
		 * and a tiny one would overflow the replay's arithmetic. */
		if (parse_duration(optarg, &sp->interval) < 0 ||
		    !(sp->interval >= INTERVAL_MIN && sp->interval <= INTERVAL_MAX))
			usage_error("--interval wants a duration from 1ms to 1000h, "
				    "such as 60s, 0.5s or 2m, not '%s'", optarg);
		break;
	case OPT_COUNT:
		p->count = (size_t)number(optarg, 2, COUNT_MAX,
					  "--count wants 2 to 100000, not '%s'");
		break;
	case OPT_PAGES_TO_SCAN:
		k->pages_to_scan = number(optarg, 1, KSMD_MAX,
			"--pages-to-scan wants 1 to 100000000, not '%s'");
		break;
	case OPT_SLEEP_MS:
		k->sleep_ms = number(optarg, 1, KSMD_MAX,
				      "--sleep-ms wants 1 to 100000000, not '%s'");
		break;
	case OPT_SMART_SCAN:
		k->smart_scan = (int)number(optarg, 0, 1,
					     "--smart-scan wants 0 or 1, not '%s'");
		break;
	case OPT_SCANS:
		sp->scans = number(optarg, 1, REPLAY_SCANS_MAX,
				   "--scans wants 1 to 1000000, not '%s'");
		break;
	case OPT_HZ:
		sp->hz = (unsigned)number(optarg, 0, HZ_MAX,
					  "--hz wants 0 to 10000, not '%s'");
		p->hz_given = 1;
		break;
	case OPT_PAGE_COST:
		sp->page_seconds = cost(optarg, "--page-cost wants a duration "
					"such as 2.5us, not '%s'");
		break;
	case OPT_REVISIT_COST:
		sp->revisit_seconds = cost(optarg, "--revisit-cost wants a "
					   "duration such as 0.5us, not '%s'");
		break;
	case OPT_WRITE_RATE:
		/* a share of the pages per second, at most 1 */
		sp->write_rate = share_arg(optarg, 1, 1, "--write-rate wants a share "
					   "of the pages per second from 0 to 1, "
					   "such as 0.02 or 2%%, not '%s'");
		break;
	default:
		if (advisor_value(p, c) < 0)
			return -1;
	}
	if (!p->series_opt)
		p->series_opt = option_name(argv);
	return 0;
}

/* One policy's name, from @s to a comma or the end. */
static enum policy policy_word(const char *s, size_t len)
{
	static const enum policy all[] = {
		POLICY_FIXED, POLICY_ADVISOR, POLICY_KSMTUNED, POLICY_KUBEVIRT,
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strlen(policy_name(all[i])) == len &&
		    strncmp(policy_name(all[i]), s, len) == 0)
			return all[i];
	char word[64];

	snprintf(word, sizeof(word), "%.*s", (int)(len < 60 ? len : 60), s);
	usage_error("--policy wants fixed, advisor, ksmtuned or kubevirt (or a "
		    "comma list of them), not '%s'", word);
}

/* --policy=a,b,...: the first is the series' policy, the others are
 * replayed beside it (the policies report), each once. */
static void parse_policies(struct series_params *sp, const char *arg)
{
	size_t n = 0;

	sp->nothers = 0;
	for (const char *s = arg;; n++) {
		size_t len = strcspn(s, ",");
		enum policy pol = policy_word(s, len);

		if (n > POLICIES_MAX)
			usage_error("%s", "--policy takes at most 9 policies");
		for (size_t k = 0; k < n; k++)
			if ((k ? sp->others[k - 1] : sp->policy) == pol)
				usage_error("--policy names %s twice", policy_name(pol));
		if (n)
			sp->others[sp->nothers++] = pol;
		else
			sp->policy = pol;
		if (!s[len])
			break;
		s += len + 1;
	}
}

/* --target=FRACTION@DURATION (-r advise): 90%@1h. */
static void parse_target(struct advise_params *a, const char *arg)
{
	const char *at = strchr(arg, '@');
	char frac[64];

	if (at && (size_t)(at - arg) < sizeof(frac)) {
		snprintf(frac, sizeof(frac), "%.*s", (int)(at - arg), arg);
		a->fraction = share(frac, 1, 0);
	}
	if (!at || (size_t)(at - arg) >= sizeof(frac) || a->fraction < 0 ||
	    parse_duration(at + 1, &a->seconds) < 0 || !(a->seconds > 0) ||
	    a->seconds > 1e8)
		usage_error("--target wants a share of the saving and a time, such "
			    "as 90%%@1h, not '%s'", arg);
}

/* --policy and the advisor's knobs: 0 if @c is one of them (handled). */
static int advisor_value(struct prefs *p, int c)
{
	struct advisor_params *a = &p->series.advisor;
	double d;

	switch (c) {
	case OPT_POLICY:
		parse_policies(&p->series, optarg);
		break;
	case OPT_ADV_TARGET:
		/* the kernel takes whole seconds, at least 1 */
		if (parse_duration(optarg, &d) < 0 || d < 1 || d > 1e8)
			usage_error("--advisor-target-scan-time wants a duration of "
				    "1s or more, such as 200s, not '%s'", optarg);
		a->target_scan_time = (uint64_t)d;
		break;
	case OPT_ADV_MAX_CPU:
		a->max_cpu = number(optarg, 1, 100,
				    "--advisor-max-cpu wants 1 to 100, not '%s'");
		break;
	case OPT_ADV_MIN_PAGES:
		a->min_pages_to_scan = number(optarg, 1, KSMD_MAX,
			"--advisor-min-pages-to-scan wants 1 to 100000000, not '%s'");
		break;
	case OPT_ADV_MAX_PAGES:
		a->max_pages_to_scan = number(optarg, 1, KSMD_MAX,
			"--advisor-max-pages-to-scan wants 1 to 100000000, not '%s'");
		break;
	case OPT_HOST_MEMORY:
	case OPT_HOST_USED:
		if (parse_u64(optarg, c == OPT_HOST_MEMORY ? &p->host_memory :
			      &p->host_used) < 0)
			usage_error(c == OPT_HOST_MEMORY ?
				    "--host-memory wants a size such as 64G, not '%s'" :
				    "--host-used wants a size such as 48G, not '%s'",
				    optarg);
		break;
	case OPT_TARGET:
		parse_target(&p->series.advise, optarg);
		break;
	case OPT_MAX_CPU:
		p->series.advise.max_cpu = percent_arg(optarg, 100, 0, "--max-cpu "
			"wants a percent of a CPU above 0, such as 5 or 5%%, not '%s'");
		break;
	default:
		return -1;
	}
	return 0;
}

/* Append an input, growing the array. */
static void add_input(struct prefs *p, struct input in)
{
	if (p->ninputs + 1 >= p->cap) {
		p->cap = 2 * p->cap + 16;
		p->inputs = xreallocarray(p->inputs, p->cap, sizeof(*p->inputs));
	}
	p->inputs[p->ninputs++] = in;
}

/* Marks -P REGEX (name: the regex) and --all-processes (name NULL) until
 * the command line is read: then -q applies to their warnings. */
#define PID_LIST (-1)

/* Whether -P or --all-processes was given (before expand_processes()). */
static int any_listed(const struct prefs *p)
{
	for (size_t i = 0; i < p->ninputs; i++)
		if (!p->inputs[i].path && p->inputs[i].pid == PID_LIST)
			return 1;
	return 0;
}

/* Replace each -P and --all-processes by the processes, in place. */
static void expand_processes(struct prefs *p)
{
	struct input *old = p->inputs;
	size_t n = p->ninputs;
	char why[256];
	long found;

	p->inputs = xcalloc(p->cap, sizeof(*p->inputs));
	p->ninputs = 0;
	for (size_t i = 0; i < n; i++) {
		if (old[i].path || old[i].pid != PID_LIST)
			add_input(p, old[i]);
		else if ((found = procs_list(old[i].name, &p->inputs, &p->ninputs,
					     &p->cap, why, sizeof(why))) < 0)
			usage_error("%s", why);
		else if (!found && n > 1)
			warn("%s%s%s: no process to read", old[i].name ? "-P '" : "",
			     old[i].name ? old[i].name : "--all-processes",
			     old[i].name ? "'" : "");
		else if (!found)
			/* The only input: finding no process is the run's
			 * failure, not a usage mistake (main() exits 1). */
			error("%s%s%s: no process to read", old[i].name ? "-P '" : "",
			      old[i].name ? old[i].name : "--all-processes",
			      old[i].name ? "'" : "");
	}
	free(old);
}

/* One option of getopt_long(); returns only if the run goes on. */
static void parse_option(struct prefs *p, int c, char **argv)
{
	char why[256];

	if (set_value(p, c) == 0 || series_value(p, c, argv) == 0)
		return;
	switch (c) {
	case 1:
		add_input(p, (struct input){ .name = optarg, .path = optarg });
		break;
	case 'p':
		add_input(p, pid_input(optarg));
		break;
	case 'P':
		add_input(p, (struct input){ .name = optarg, .pid = PID_LIST,
					     .listed = 1 });
		break;
	case OPT_ALL_PROCESSES:
		add_input(p, (struct input){ .pid = PID_LIST, .listed = 1 });
		break;
	case OPT_BY:
		if (units_by_parse(optarg, &p->by, why, sizeof(why)) < 0)
			usage_error("%s", why);
		break;
	case 'R':
		if (parse_range(optarg, &p->cfg.dump.range_start,
				&p->cfg.dump.range_end) < 0)
			usage_error("--range wants START-END with START < END, "
				    "not '%s'", optarg);
		break;
	case 'a':
		if (strcmp(optarg, "help") == 0) {
			p->algos_help = 1;
			break;
		}
		parse_algos(p, optarg);
		p->algos_given = 1;
		break;
	case 'f':
		if (!dump_format_known(optarg))
			usage_error("unknown format '%s'", optarg);
		p->cfg.dump.format = optarg;
		break;
	case 'r':
		parse_reports(p, optarg);
		break;
	case 'c':
		parse_compressors(p, optarg);
		break;
	case 'h':
		exit(print_help());
	case 'V':
		exit(print_version());
	case ':':
		usage_error("option '%s' needs an argument", option_name(argv));
		break;
	default:
		usage_error("unknown option '%s'", option_name(argv));
		break;
	}
}

/* The long options; those without a short form have OPT_ values. */
static const struct option longopts[] = {
	{ "algo", required_argument, NULL, 'a' },
	{ "compress", required_argument, NULL, 'c' },
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
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "process", required_argument, NULL, 'P' },
	{ "all-processes", no_argument, NULL, OPT_ALL_PROCESSES },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "known", required_argument, NULL, OPT_KNOWN },
	{ "by", required_argument, NULL, OPT_BY },
	{ "enable", required_argument, NULL, OPT_ENABLE },
	{ "sketch-size", required_argument, NULL, OPT_SKETCH_SIZE },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "series", no_argument, NULL, OPT_SERIES },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "pages-to-scan", required_argument, NULL, OPT_PAGES_TO_SCAN },
	{ "sleep-ms", required_argument, NULL, OPT_SLEEP_MS },
	{ "smart-scan", required_argument, NULL, OPT_SMART_SCAN },
	{ "scans", required_argument, NULL, OPT_SCANS },
	{ "hz", required_argument, NULL, OPT_HZ },
	{ "page-cost", required_argument, NULL, OPT_PAGE_COST },
	{ "revisit-cost", required_argument, NULL, OPT_REVISIT_COST },
	{ "write-rate", required_argument, NULL, OPT_WRITE_RATE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "advisor-target-scan-time", required_argument, NULL, OPT_ADV_TARGET },
	{ "advisor-max-cpu", required_argument, NULL, OPT_ADV_MAX_CPU },
	{ "advisor-min-pages-to-scan", required_argument, NULL, OPT_ADV_MIN_PAGES },
	{ "advisor-max-pages-to-scan", required_argument, NULL, OPT_ADV_MAX_PAGES },
	{ "host-memory", required_argument, NULL, OPT_HOST_MEMORY },
	{ "host-used", required_argument, NULL, OPT_HOST_USED },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "max-cpu", required_argument, NULL, OPT_MAX_CPU },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
	{ "no-progress", no_argument, NULL, 'N' },
	{ "use-zero-pages", no_argument, NULL, 'z' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "long", no_argument, NULL, 'l' },
	{ "label", required_argument, NULL, 'L' },
	{ "svg", required_argument, NULL, 'S' },
	{ "csv", no_argument, NULL, 'C' },
	{ "json", no_argument, NULL, 'J' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Parse the whole command line into @p. */
static void parse_args(struct prefs *p, int argc, char **argv)
{
	int c;

	opterr = 0;
	/*
	 * A leading '-' keeps files and -p in command-line order. musl's
	 * getopt stops at a lone "-" (standard input): take it as a file
	 * and go on, so that options may follow it.
	 */
	for (;;) {
		c = getopt_long(argc, argv, "-:a:c:f:j:m:o:p:P:r:zqlhV", longopts, NULL);
		if (c == -1 && optind < argc && strcmp(argv[optind], "-") == 0 &&
		    strcmp(argv[optind - 1], "--") != 0)
			add_input(p, (struct input){ .name = "-", .path = argv[optind++] });
		else if (c == -1)
			break;
		else
			parse_option(p, c, argv);
	}
	/* Operands after "--" are files too. */
	for (; optind < argc; optind++)
		add_input(p, (struct input){ .name = argv[optind],
					     .path = argv[optind] });
	p->cfg.inputs = p->inputs;
	p->cfg.ninputs = p->ninputs;
}

/*
 * An output file (--svg) must never replace an input, nor a file that is not
 * an earlier picture: "--svg a.img b.img" takes a.img as the picture's name,
 * and must not turn that dump into a picture.
 */
static void check_outputs(const struct prefs *p)
{
	for (size_t i = 0; p->svg && i < p->ninputs; i++)
		if (p->inputs[i].path && same_file(p->svg, p->inputs[i].path))
			usage_error("--svg %s would replace an input: name another "
				    "file for the picture", p->svg);
	if (p->svg && !out_replaceable(p->svg, "<?xml"))
		usage_error("--svg %s: that file exists and is not a picture "
			    "ksmscan wrote: remove it or name another file", p->svg);
}

/* --group values, once every input is known; two groups may not share a name. */
static void parse_groups(struct prefs *p)
{
	struct group *g = xcalloc(p->ngroups ? p->ngroups : 1, sizeof(*g));
	char why[256];

	for (size_t i = 0; i < p->ngroups; i++) {
		if (group_parse(p->groups[i], p->inputs, p->ninputs, &g[i], why,
				sizeof(why)) < 0)
			usage_error("%s", why);
		for (size_t j = 0; j < i; j++)
			if (strcmp(g[j].name, g[i].name) == 0)
				usage_error("--group %s given twice", g[i].name + 6);
	}
	p->cfg.ngroups = p->ngroups;
	/* --by and --enable need the processes alive: read them now. */
	if (!p->series_on && !p->count &&
	    units_groups(p->by, p->enable, p->inputs, p->ninputs, &g,
			 &p->cfg.ngroups, why, sizeof(why)) < 0)
		usage_error("%s", why);
	p->cfg.groups = g;
}

/* Whether a report that needs --series is selected: its name, or NULL. */
static const char *series_report(const struct prefs *p)
{
	for (size_t i = 0; i < report_count(); i++)
		if ((p->reports & UINT64_C(1) << i) &&
		    (report_get(i)->needs & REPORT_SERIES))
			return report_get(i)->name;
	return NULL;
}

/* Writes that leave a page's bytes as they were cannot be seen in snapshots;
 * soft-dirty bits would show them, where the kernel has them. Said once,
 * unless --write-rate stands for them. */
static void note_soft_dirty(const struct prefs *p)
{
	int sd = kernel_soft_dirty();

	if (p->series.write_rate > 0)
		return;
	warn("%s: writes of the bytes a page already holds are not seen: this "
	     "kernel %s; give --write-rate to stand for them (ksmscan(1))",
	     p->inputs[0].name,
	     sd == 1 ? "has soft-dirty bits, which ksmscan does not read yet" :
	     sd == 0 ? "has no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is not set)" :
	     "may lack soft-dirty bits (its configuration cannot be read)");
}

/* -r advise and --target go together. */
static void advise_needs(const struct prefs *p)
{
	const struct report *r = report_lookup("advise", 6);
	int asked = 0;

	for (size_t i = 0; i < report_count(); i++)
		if ((p->reports & UINT64_C(1) << i) && report_get(i) == r)
			asked = 1;
	if (asked && !(p->series.advise.seconds > 0))
		usage_error("%s", "-r advise needs --target, such as --target=90%@1h");
	if (!asked && p->series.advise.seconds > 0)
		usage_error("%s", "--target and --max-cpu are for -r advise");
}

/* Whether --policy names @pol. */
static int uses_policy(const struct series_params *sp, enum policy pol)
{
	for (size_t k = 0; k < sp->nothers; k++)
		if (sp->others[k] == pol)
			return 1;
	return sp->policy == pol;
}

/* ksmtuned's host: --host-memory and --host-used, or for live processes
 * this host's /proc/meminfo. */
static void ksmtuned_host(struct prefs *p)
{
	struct ksmtuned_params *t = &p->series.tuned;
	uint64_t total = 0, free = 0;

	if ((!p->host_memory || !p->host_used) &&
	    (p->inputs[0].path || host_meminfo(&total, &free) < 0))
		usage_error("%s", "--policy=ksmtuned and kubevirt need "
			    "--host-memory and --host-used (with files)");
	t->total_kb = p->host_memory ? p->host_memory / 1024 : total;
	t->used_kb = p->host_used ? p->host_used / 1024 : total - free;
	if (t->used_kb > t->total_kb || !t->total_kb)
		usage_error("%s", "--host-used must not exceed --host-memory");
}

/* The processes of a live series in the order they started: KSM's list of
 * memories grows as they register (usually as they start), and ksmd scans
 * in its order. Equal start times keep the command line's order. */
static int start_cmp(const void *a, const void *b)
{
	const struct input *x = a, *y = b;
	double s = proc_start_time(x->pid), t = proc_start_time(y->pid);

	if (s != t)
		return s < t ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* -p PID... --count=N: N snapshots of the processes, --interval apart, each
 * the processes read one after the other. */
static void live_snapshots(struct prefs *p)
{
	size_t np = p->ninputs;

	for (size_t i = 0; i < np; i++)
		if (p->inputs[i].path || p->inputs[i].pid == PID_LIST)
			usage_error("%s", "--count takes -p PID (or -P) and no file");
	if (np > SERIES_PROCS_MAX)
		usage_error("%s", "--count takes at most 64 processes");
	if (np > 1)
		qsort(p->inputs, np, sizeof(*p->inputs), start_cmp);
	for (size_t k = 1; k < p->count; k++)
		for (size_t i = 0; i < np; i++) {
			struct input in = p->inputs[i];

			in.at = (double)k * p->series.interval;
			in.name = xstrdup(in.name);	/* each input frees its own */
			add_input(p, in);
		}
	p->series.nprocs = np;
	/* what a later --check of this forecast counts the kernel's scans from */
	if (ksm_sysfs_signed("full_scans", &p->series.ksm_full_scans) < 0)
		p->series.ksm_full_scans = -1;
	p->cfg.dump.ksmd_pages = 1;
	note_soft_dirty(p);
}

/*
 * --series, or --count: the inputs are snapshots of one memory. ksmd's
 * options and the reports of a series need one; a series takes no group.
 */
static void setup_series(struct prefs *p)
{
	const char *needs = series_report(p);

	if (!p->series_on && !p->count) {
		if (p->series_opt || needs)
			usage_error("%s needs --series (or -p PID --count=N)",
				    p->series_opt ? p->series_opt : needs);
		return;
	}
	if (p->count) {
		live_snapshots(p);
		p->cfg.inputs = p->inputs;
		p->cfg.ninputs = p->ninputs;
	}
	for (size_t i = 0; i < p->ninputs; i++)
		if (!p->inputs[i].path && !p->count)
			usage_error("%s", "a live process is a series with "
				    "-p PID --count=N, not --series");
	if (p->ninputs == 0)
		usage_error("%s", "--series wants snapshot files");
	if (!p->hz_given && !(p->series.hz = kernel_hz()))
		p->series.hz = HZ_DEFAULT;
	if (p->series.revisit_seconds < 0)
		p->series.revisit_seconds = p->series.page_seconds * REVISIT_SHARE_DEFAULT;
	advise_needs(p);
	if (uses_policy(&p->series, POLICY_KSMTUNED) ||
	    uses_policy(&p->series, POLICY_KUBEVIRT))
		ksmtuned_host(p);
	if (p->ngroups || p->by || p->enable)
		usage_error("%s", p->ngroups ? "--group does not apply to a series" :
			    "--by and --enable do not apply to a series");
}

/*
 * The reports of trust domains (exposure, mitigations) need the groups to
 * be domains; -r exposure brings the mitigations with it, except in CSV,
 * which holds one report. --known is for the exposure report.
 */
static void setup_domains(struct prefs *p)
{
	size_t exposure = 0, needs = 0;
	char why[256], msg[300];

	for (size_t i = 0; i < report_count(); i++) {
		if (!(p->reports & UINT64_C(1) << i))
			continue;
		if (strcmp(report_get(i)->name, "exposure") == 0)
			exposure = i + 1;
		if ((report_get(i)->needs & REPORT_DOMAINS) && !needs)
			needs = i + 1;
	}
	if (p->nknown && !exposure)
		usage_error("%s", "--known applies to -r exposure");
	if (!needs)
		return;
	if (groups_domains(p->cfg.groups, p->cfg.ngroups, p->inputs, p->ninputs,
			   why, sizeof(why)) < 0) {
		snprintf(msg, sizeof(msg), "-r %s: %s", report_get(needs - 1)->name,
			 why);
		usage_error("%s", msg);
	}
	if (exposure && strcmp(p->output, "csv") != 0)
		report_name(p, "mitigations", 11);
}

/* The reports without -r: the summary; a series adds its timeline (CSV,
 * which holds one report, has the timeline alone), and a live one the
 * forecast for each process (what --check reads back). */
static void default_reports(struct prefs *p)
{
	if (!p->series_on && !p->count)
		report_name(p, "summary", 7);
	else if (strcmp(p->output, "csv") == 0)
		report_name(p, "timeline", 8);
	else {
		report_name(p, "summary", 7);
		report_name(p, "timeline", 8);
		if (p->count)
			report_name(p, "processes", 9);
	}
}

/* The default number of hashing threads: the online CPUs. */
static unsigned online_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > THREADS_MAX ? THREADS_MAX : (unsigned)cpus;
}

/* Scan the inputs and print the selected reports through @w. */
static int run_scan(struct prefs *p, const struct writer *w)
{
	int status, failed = 0;
	struct svg_bars bars = { 0 };
	struct report_setup rs = {
		.scan = &p->cfg, .out = w, .top = p->top,
		.compressors = p->compressors,
		.ncompressors = p->compress ? p->ncompressors : 0,
		.long_table = p->long_table, .svg = p->svg, .bars = &bars,
		.failed = &failed, .sketch_size = p->sketch_size, .host = p->host,
		.series = p->series_on || p->count ? &p->series : NULL,
		.version = KSMSCAN_VERSION,
		.known = p->known, .nknown = p->nknown,
	};
	struct sink *sinks[REPORTS_MAX + 1];	/* and the picture's */

	if (rs.series && series_fits(&p->cfg) < 0)
		return EXIT_INPUT;
	params_report(&rs);
	for (size_t i = 0; i < report_count(); i++)
		if (p->reports & UINT64_C(1) << i)
			sinks[p->cfg.nsinks++] = report_get(i)->create(&rs);
	if (p->svg)
		sinks[p->cfg.nsinks++] = svg_create(&rs);
	p->cfg.sinks = sinks;
	status = rs.series ? series_run(&p->cfg, rs.series) : scan_run(&p->cfg);
	for (size_t i = 0; i < p->cfg.nsinks; i++)
		sinks[i]->ops->print(sinks[i]);
	w->finish();
	for (size_t i = 0; i < p->cfg.nsinks; i++)
		sinks[i]->ops->free(sinks[i]);
	free(bars.v);
	free(bars.drawings);
	return status | failed;
}

/* --bench: time the algorithms and print the bench report through @w. */
static int run_bench(const struct prefs *p, const struct writer *w)
{
	struct hash_speed *rows = xcalloc(p->cfg.nalgos, sizeof(*rows));
	const struct algo *autopick;
	size_t stream = hash_measure(p->cfg.algos, p->cfg.nalgos, rows, &autopick,
				     p->cfg.progress);

	bench_report(w, rows, p->cfg.nalgos, autopick, stream);
	w->finish();
	free(rows);
	return EXIT_OK;
}

/*
 * --check: the forecast read back and compared with the kernel's figures;
 * 0 within the tolerance, 1 outside, 2 for a file that is not a forecast.
 */
static int run_check(const struct prefs *p, const struct writer *w)
{
	struct forecast f;
	struct forecast_actual a;
	char why[300];
	int status;

	if (p->ninputs)
		usage_error("%s", "--check reads no input: its processes are the "
			    "forecast's");
	if (forecast_read(p->check, &f, why, sizeof(why)) < 0) {
		error("%s: %s", p->check, why);
		return EXIT_USAGE;
	}
	if (forecast_actual(&f, &a) < 0) {
		error("%s: this kernel has no KSM (no /sys/kernel/mm/ksm/full_scans)",
		      p->check);
		status = EXIT_INPUT;
	} else {
		status = check_report(w, p->check, &f, &a,
				      p->tolerance < 0 ? 10 : p->tolerance,
				      !p->long_table && strcmp(w->name, "table") == 0);
		w->finish();
	}
	forecast_free(&f);
	forecast_actual_free(&a);
	return status;
}

/* Run what the command line asked for through @w: the exit status. */
static int dispatch(struct prefs *p, const struct writer *w, int listed)
{
	if (p->algos_help) {
		algos_report(w);
		return EXIT_OK;
	}
	if (p->check)
		return run_check(p, w);
	if (p->bench) {
		if (p->ninputs)
			usage_error("%s", "--bench reads no input");
		/* Without -a, every algorithm is measured. */
		if (!p->algos_given)
			parse_algos(p, "all");
		return run_bench(p, w);
	}
	if (p->ninputs == 0 && listed)
		return EXIT_INPUT;	/* expand_processes() said why */
	if (p->ninputs == 0)
		usage_error("%s", "no input file or process");
	if (!p->cfg.threads)
		p->cfg.threads = online_cpus();
	return run_scan(p, w);
}

/* Free what the command line allocated. */
static void prefs_free(struct prefs *p)
{
	for (size_t i = 0; i < p->ninputs; i++)
		if (!p->inputs[i].path)
			free((char *)p->inputs[i].name);
	free(p->inputs);
	for (size_t g = 0; g < p->cfg.ngroups; g++)
		group_free((struct group *)&p->cfg.groups[g]);
	free((void *)p->cfg.groups);
	free(p->groups);
	for (size_t i = 0; i < p->nknown; i++)
		free((void *)p->known[i]);
	free(p->known);
}

int main(int argc, char **argv)
{
	struct prefs p = {
		.cfg = {
			.dump = { .format = "auto", .range_end = UINT64_MAX },
			.progress = -1,
			.ksm = { .max_page_sharing = 256, .use_zero_pages = 0,
				 .pages_to_scan = 100, .sleep_ms = 20,
				 .smart_scan = 1 },
		},
		.series = { .interval = 60, .page_seconds = PAGE_COST_DEFAULT,
			    .revisit_seconds = -1,	/* a share of page_seconds */
			    .ksm_full_scans = -1,
			    .advisor = { ADVISOR_TARGET_SCAN_TIME, ADVISOR_MAX_CPU,
					 ADVISOR_MIN_PAGES, ADVISOR_MAX_PAGES },
			    /* /etc/ksmtuned.conf's defaults */
			    .tuned = { 60, 300, -50, 64, 1250, 10, 20, 2048, 0, 0 },
			    /* KubeVirt's ksm.go's defaults */
			    .kubevirt = { 180, 300, -50, 64, 1250, 100, 100, 0.2f },
			    .advise = { 0, 0, 100 } },
		.output = "table",
		.tolerance = -1,
		.top = 10,
		.sketch_size = 4096,
	};
	const struct writer *w;
	int status, listed;

	/*
	 * Past a file size limit (ulimit -f), a write fails with EFBIG and is
	 * reported like any other, rather than the signal ending the run with
	 * nothing printed.
	 */
	signal(SIGXFSZ, SIG_IGN);
	hash_init();
	p.cfg.algos[p.cfg.nalgos++] = hash_lookup("xxhash", 6);
	p.cap = (size_t)argc + 1;
	p.inputs = xcalloc(p.cap, sizeof(*p.inputs));
	p.groups = xcalloc(p.cap, sizeof(*p.groups));
	parse_args(&p, argc, argv);
	if (p.tolerance >= 0 && !p.check)
		usage_error("%s", "--tolerance is for --check");
	listed = any_listed(&p);
	expand_processes(&p);
	/* No input, and something on standard input: read it, as xxhsum does. */
	if (!p.ninputs && !listed && !isatty(STDIN_FILENO) && !p.bench &&
	    !p.algos_help && !p.check)
		add_input(&p, (struct input){ .name = "-", .path = "-" });
	for (size_t i = 0; p.label && i < p.ninputs; i++)
		if (p.inputs[i].path && strcmp(p.inputs[i].path, "-") == 0)
			p.inputs[i].name = p.label;
	p.cfg.inputs = p.inputs;
	p.cfg.ninputs = p.ninputs;
	check_outputs(&p);
	parse_groups(&p);
	if (!p.reports)
		default_reports(&p);
	setup_series(&p);
	setup_domains(&p);
	if (p.compress)
		report_name(&p, "compress", 8);
	if (!p.ncompressors)
		compressor_name(&p, "all", 3);
	w = writer_lookup(p.output);
	table_fit(p.long_table ? 0 : 80);
	if (!w)
		usage_error("unknown output format '%s' (table, csv or json)",
			    p.output);
	if (w == writer_lookup("csv") && (p.reports & (p.reports - 1)))
		usage_error("%s", "--csv takes exactly one report");
	status = dispatch(&p, w, listed);
	if (output_close() < 0)
		status = EXIT_INPUT;
	prefs_free(&p);
	return status;
}
