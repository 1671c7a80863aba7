/* SPDX-License-Identifier: MIT */
/*
 * The table of options (optable.h): one row per option, in --help's order,
 * with the handlers of the options that are more than a value in a field.
 * Defaults are in prefs_init(), named where their models are.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dump/dump.h"
#include "../model/replay.h"
#include "../report/report.h"
#include "../report/write/writer.h"
#include "../util/util.h"
#include "cli.h"
#include "optable.h"
#include "options.h"
#include "usage.h"

/* Limits of --top, -j and --sketch-size (the index's most distinct
 * contents). */
#define TOP_MAX 10000
#define THREADS_MAX 256
/* ksmfleet's bound on a host name (HOST_MAX in fleet/ksmfleet/read.py):
 * an export ksmscan writes is one ksmfleet reads. */
#define HOST_NAME_MAX_BYTES 4096
#define SKETCH_MAX ((1u << 28) - 1)
/* Limits of --count, --tolerance-pages and --hz. */
#define COUNT_MAX 100000
#define TOLERANCE_PAGES_MAX 1000000000000ULL	/* 4 PiB of 4 KiB pages */
#define HZ_MAX 10000
#define SAMPLE_MAX 65536	/* --sample=1/N: N at most */
/* Limit of --host-memory and --host-used: 4 PiB, all that a 52-bit
 * physical address (x86-64's and arm64's widest) can reach. */
#define HOST_BYTES_MAX 4503599627370496.0
/* ksmd's time per page it visits, without --page-cost: its CPU time
 * (/proc/PID/schedstat) per page scanned, measured with Linux 6.18 on a
 * 2-CPU virtual machine: 2.2 us on static memory, 2.9 us on memory being
 * written (docs/changing-memory.md). */
#define PAGE_COST_DEFAULT 3e-6
/* ... per page it merges into a KSM page, on top of its visit, without
 * --merge-cost: measured by bench/merge_cost.py (docs/changing-memory.md)
 * with Linux 6.18 on a 2-CPU virtual machine: 1.3 to 2.8 us, median 2.7 us. */
#define MERGE_COST_DEFAULT 3e-6
/* ... per wake-up, besides its pages, without --wake-cost: ksmd's CPU
 * time (/proc/PID/schedstat) against its runs and pages_scanned at 20 to
 * 200 ms and 10 to 1000 pages, least squares, measured by
 * bench/ksmd_wake.py with Linux 6.18 on a 2-CPU virtual machine. */
#define WAKE_COST_DEFAULT 60e-6

/* Where a field is in struct prefs, for a row. */
#define AT(field) offsetof(struct prefs, field)

struct input pid_input(int pid, int listed)
{
	char name[32];

	snprintf(name, sizeof(name), "pid:%d", pid);
	return (struct input){ .name = xstrdup(name), .pid = pid, .listed = listed };
}

void prefs_add_input(struct prefs *p, struct input in)
{
	if (p->ninputs + 1 >= p->cap) {
		p->cap = 2 * p->cap + 16;
		p->inputs = xreallocarray(p->inputs, p->cap, sizeof(*p->inputs));
	}
	p->inputs[p->ninputs++] = in;
}

/* A share: 0.9 or 90%, within (0, @most] ([0, @most] with @zero); -1 if
 * it is not one. */
static double share(const char *arg, double most, int zero)
{
	double v;
	int sign;

	if (parse_percent(arg, &v, &sign) < 0)
		return -1;
	if (sign)
		v /= 100;
	if (!(v > 0 || (zero && v == 0)) || !(v <= most))
		return -1;
	return v;
}

/* A percent of the row's range: "5" and "5%" are both 5 percent; 0 only
 * when the row's range starts at 0 (its lo is the flag, hi the most). */
static double percent(const struct opt_row *r, const char *arg)
{
	double d = share(arg, r->hi, r->lo == 0);

	if (d < 0)
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
	return strchr(arg, '%') ? d * 100 : d;
}

static void on_algo(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	if (strcmp(arg, "help") == 0) {
		p->algos_help = 1;
		return;
	}
	prefs_algos(p, arg);
	p->algos_given = 1;
}

static void on_tolerance(struct prefs *p, const struct opt_row *r, const char *arg)
{
	p->tolerance = percent(r, arg);
}

/* --thp: the host's layout of a dump's memory, which the dump cannot show. */
static void on_thp(struct prefs *p, const struct opt_row *r, const char *arg)
{
	if (strcmp(arg, "never") && strcmp(arg, "always"))
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
	p->cfg.thp_always = strcmp(arg, "always") == 0;
}

static void on_compress(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	prefs_compressors_list(p, arg);
}

static void on_format(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	if (!dump_format_known(arg))
		usage_error("unknown format '%s'", arg);
	p->cfg.dump.format = arg;
}

/* -o FMT: the format's row of the writers' table, looked up here once. */
static void on_output(struct prefs *p, const struct opt_row *r, const char *arg)
{
	char names[256] = "";

	(void)r;
	p->output = writer_lookup(arg);
	if (p->output)
		return;
	for (size_t i = 0, n = 0; writer_name(i); i++)
		n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0,
				      "%s%s", i ? ", " : "", writer_name(i));
	usage_error("unknown output format '%s' (%s)", arg, names);
}

/* --csv, --json: -o with the option's name, which is the format's. */
static void on_csv(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)arg;
	on_output(p, r, r->name);
}

static void on_pid(struct prefs *p, const struct opt_row *r, const char *arg)
{
	uint64_t pid;

	(void)r;
	if (parse_u64(arg, &pid) < 0 || pid == 0 || pid > INT32_MAX ||
	    strspn(arg, "0123456789") != strlen(arg))
		usage_error("not a process id: '%s'", arg);
	prefs_add_input(p, pid_input((int)pid, 0));
}

/* -P REGEX (@arg) and --all-processes (NULL): listed when all is read. */
static void on_listed(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	prefs_add_input(p, (struct input){ .name = arg, .pid = PID_LIST,
					   .listed = 1 });
	p->listed = 1;
}

static void on_group(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	p->groups = xreallocarray(p->groups, p->ngroups + 1, sizeof(*p->groups));
	p->groups[p->ngroups++] = arg;
}

static void on_known(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	prefs_known_list(p, arg);
}

static void on_by(struct prefs *p, const struct opt_row *r, const char *arg)
{
	char why[256];

	(void)r;
	if (units_by_parse(arg, &p->by, why, sizeof(why)) < 0)
		usage_error("%s", why);
	/* A word of the list, whole: units_by_parse() took it as valid. */
	for (const char *s = arg; *s; s += strcspn(s, ","), s += *s == ',')
		if (strncmp(s, "process", 7) == 0 && (s[7] == ',' || !s[7]))
			p->by_process = 1;
}

static void on_hz(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r, (void)arg;
	p->hz_given = 1;
}

static void on_write_rate(struct prefs *p, const struct opt_row *r, const char *arg)
{
	/* a share of the pages per second, at most 1 */
	p->series.write_rate = share(arg, 1, 1);
	if (p->series.write_rate < 0)
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
}

/* --sample=1/N (or N): replay the contents whose digest is 0 modulo N. */
static void on_sample(struct prefs *p, const struct opt_row *r, const char *arg)
{
	uint64_t n;

	if (strncmp(arg, "1/", 2) == 0)
		arg += 2;
	if (parse_u64(arg, &n) < 0 || n < 1 || n > SAMPLE_MAX)
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
	p->series.sample = (uint32_t)n;
}

static void on_host_size(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)arg;
	if (r->offset == AT(host_memory))
		p->host_memory_given = 1;
	else
		p->host_used_given = 1;
}

static void on_target(struct prefs *p, const struct opt_row *r, const char *arg)
{
	struct advise_params *a = &p->series.advise;
	const char *at = strchr(arg, '@');
	char frac[64];

	if (at && (size_t)(at - arg) < sizeof(frac)) {
		snprintf(frac, sizeof(frac), "%.*s", (int)(at - arg), arg);
		a->fraction = share(frac, 1, 0);
	}
	if (!at || (size_t)(at - arg) >= sizeof(frac) || a->fraction < 0 ||
	    parse_duration(at + 1, &a->seconds) < 0 ||
	    !(a->seconds >= DURATION_MIN))
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
}

static void on_max_cpu(struct prefs *p, const struct opt_row *r, const char *arg)
{
	p->series.advise.max_cpu = percent(r, arg);
}

/* One policy's name, from @s to a comma or the end. */
static const struct policy_ops *policy_word(const char *s, size_t len)
{
	const struct policy_ops *ops = policy_lookup(s, len);
	char word[64], names[200];

	if (ops)
		return ops;
	snprintf(word, sizeof(word), "%.*s", (int)(len < 60 ? len : 60), s);
	policy_names(0, "or", names, sizeof(names));
	usage_error("--policy wants %s (or a comma list of them), not '%s'", names,
		    word);
}

/* --policy=a,b,...: the first is the series' policy, the others are
 * replayed beside it (the policies report), each once. */
static void parse_policies(struct series_params *sp, const char *arg)
{
	size_t n = 0;

	sp->nothers = 0;
	for (const char *s = arg;; n++) {
		size_t len = strcspn(s, ",");
		const struct policy_ops *pol = policy_word(s, len);

		if (n > POLICIES_MAX)
			usage_error("--policy takes at most %d policies", POLICIES_MAX + 1);
		for (size_t k = 0; k < n; k++)
			if ((k ? sp->others[k - 1] : sp->policy) == pol)
				usage_error("--policy names %s twice", pol->name);
		if (n)
			sp->others[sp->nothers++] = pol;
		else
			sp->policy = pol;
		if (!s[len])
			break;
		s += len + 1;
	}
}

static void on_policy(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	parse_policies(&p->series, arg);
}

static void on_report(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	prefs_reports_list(p, arg);
}

static void on_range(struct prefs *p, const struct opt_row *r, const char *arg)
{
	if (parse_range(arg, &p->cfg.dump.range_start, &p->cfg.dump.range_end) < 0)
		usage_error("--%s wants %s, not '%s'", r->name, r->wants, arg);
}

static void on_host(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)r;
	if (!*arg || strlen(arg) > HOST_NAME_MAX_BYTES)
		usage_error("--host wants a name of 1 to %d bytes (as ksmfleet "
			    "reads it), not one of %zu", HOST_NAME_MAX_BYTES,
			    strlen(arg));
	p->host = arg;
}

static void on_quiet(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)p, (void)r, (void)arg;
	msg_quiet = 1;
}

static void on_version(struct prefs *p, const struct opt_row *r, const char *arg)
{
	(void)p, (void)r, (void)arg;
	print_version();
	exit(output_close() < 0 ? EXIT_INPUT : EXIT_OK);
}

/* Rows, by kind: a flag, a value in a field, a handler. */
#define FLAG(n, k, f, v, h, forms) \
	{ n, k, NULL, OK_FLAG, OF_INT, AT(f), v, v, NULL, NULL, h, forms, 0 }
#define STRING(n, k, a, f, h, forms) \
	{ n, k, a, OK_STRING, OF_STRING, AT(f), 0, 0, NULL, NULL, h, forms, 0 }
#define VALUE(n, k, a, kind, type, f, lo, hi, w, h, forms, ksmd) \
	{ n, k, a, kind, type, AT(f), lo, hi, NULL, w, h, forms, ksmd }
#define CALL(n, k, a, fn, w, h, forms, ksmd) \
	{ n, k, a, OK_HANDLER, OF_INT, 0, 0, 0, fn, w, h, forms, ksmd }
#define SCAN FORM_SCAN
#define KSMD FORM_SERIES

static const struct opt_row table[] = {
	CALL("algo", 'a', "LIST", on_algo, NULL,
	     "checksums: comma list, 'all', 'auto' (the faster\n"
	     "of crc32c and xxhash here) or 'help' (default\nxxhash)",
	     SCAN | FORM_BENCH, 0),
	FLAG("bench", 0, bench, 1,
	     "measure the checksums instead of reading inputs", 0),
	STRING("check", 0, "FILE", check,
	       "instead of reading inputs, compare a live\n"
	       "series' forecast (its JSON) with the kernel\n"
	       "now; exit 1 outside --tolerance", 0),
	{ "tolerance", 0, "P", OK_HANDLER, OF_INT, 0, 0, 1e6, on_tolerance,
	  "a percent, such as 10 or 10%",
	  "--check's largest error, percent (default 10)", FORM_CHECK, 0 },
	VALUE("tolerance-pages", 0, "N", OK_COUNT, OF_U64, tolerance_pages, 0,
	      TOLERANCE_PAGES_MAX, NULL,
	      "--check: a figure N pages or fewer from its\n"
	      "forecast is within too (default 0)", FORM_CHECK, 0),
	CALL("compress", 'c', "LIST", on_compress, NULL,
	     "zram's compressors: lz4, lzo, lzo-rle, zstd or\n"
	     "'all'; selects the compress report too", SCAN, 0),
	CALL("format", 'f', "FMT", on_format, NULL, NULL, SCAN | FORM_SERIES, 0),
	VALUE("max-page-sharing", 'm', "N", OK_COUNT, OF_U64,
	      cfg.ksm.max_page_sharing, 2, UINT32_MAX, NULL,
	      "KSM's max_page_sharing, N >= 2 (default 256)", SCAN | KSMD, 0),
	CALL("output", 'o', "FMT", on_output, NULL, NULL,
	     SCAN | FORM_BENCH | FORM_CHECK, 0),
	CALL("csv", 0, NULL, on_csv, NULL, "short for -o csv", 0, 0),
	CALL("json", 0, NULL, on_csv, NULL, "short for -o json", 0, 0),
	CALL("pid", 'p', "PID", on_pid, NULL,
	     "a live process as input (repeatable)", SCAN, 0),
	FLAG("all-mappings", 0, cfg.dump.all_mappings, 1,
	     "with -p: also file-backed and shared memory", SCAN),
	FLAG("no-decompress", 0, cfg.dump.no_decompress, 1,
	     "read files' bytes as they are, compressed or not", SCAN),
	CALL("process", 'P', "REGEX", on_listed, NULL,
	     "every process whose command name matches the\n"
	     "extended regular expression, as pid:PID inputs", SCAN, 0),
	CALL("all-processes", 0, NULL, on_listed, NULL,
	     "every process (not kernel threads)", SCAN, 0),
	CALL("group", 0, "NAME=INPUT,...", on_group, NULL,
	     "also the inputs' sharing within this group\n"
	     "only (repeatable): summary rows group:NAME;\n"
	     "the trust domains of -r exposure", SCAN, 0),
	CALL("known", 0, "FILE,...", on_known, NULL,
	     "with -r exposure: pages equal to a page of\n"
	     "these files (a kernel image, a library)", SCAN, 0),
	CALL("by", 0, "KIND", on_by, NULL,
	     "live processes also counted by unit, cgroup,\n"
	     "container or vm (comma list; process: the\n"
	     "processes' rows, own trust domains, and with\n"
	     "-o openmetrics a series each, at most 500):\n"
	     "rows KIND:NAME (a user's user-unit:UID:NAME,\n"
	     "user-vm:UID:NAME); the trust domains of\n"
	     "-r exposure without --group", SCAN, 0),
	STRING("enable", 0, "NAME,...", enable,
	       "the saving if only these --by rows' processes\n"
	       "and their children had KSM on: row enable:...;\n"
	       "with -r advise of a live series, advise as if\n"
	       "they were marked mergeable", SCAN),
	FLAG("series", 0, series_on, 1,
	     "the inputs are snapshots of one memory, oldest\n"
	     "first: replay KSM's scanner over them", 0),
	VALUE("interval", 0, "D", OK_DURATION, OF_DOUBLE, series.interval,
	      DURATION_MIN, DURATION_MAX, "a duration from 1ms to 1000h, such as 60s, 0.5s or 2m",
	      "between snapshots: seconds, or with s, ms, m, h\n(default 60s)",
	      FORM_SERIES, 1),
	STRING("record", 0, "FILE", series.record,
	       "also write the series to FILE (compressed),\n"
	       "which ksmscan FILE later replays, anywhere", FORM_SERIES | FORM_LIVE),
	VALUE("count", 0, "N", OK_COUNT, OF_SIZE_T, count, 2, COUNT_MAX, NULL,
	      "with -p (one or more): take N snapshots,\n"
	      "--interval apart, of the pages ksmd scans", 0, 1),
	VALUE("pages-to-scan", 0, "N", OK_COUNT, OF_U64, cfg.ksm.pages_to_scan,
	      1, KSMD_SETTING_MAX, NULL, "ksmd's pages per wake-up (default 100)", KSMD, 1),
	VALUE("sleep-ms", 0, "N", OK_COUNT, OF_U64, cfg.ksm.sleep_ms, 1, KSMD_SETTING_MAX,
	      NULL, "ksmd's sleep between wake-ups (default 20)", KSMD, 1),
	VALUE("smart-scan", 0, "0|1", OK_COUNT, OF_INT, cfg.ksm.smart_scan, 0, 1,
	      "0 or 1", "ksmd skips pages that do not merge (default 1)", KSMD, 1),
	VALUE("scans", 0, "N", OK_COUNT, OF_U64, series.scans, 1, REPLAY_SCANS_MAX,
	      NULL, "replay exactly N full scans (default: past the\n"
	      "last snapshot, until the counters settle)", KSMD, 1),
	{ "hz", 0, "N", OK_COUNT, OF_UNSIGNED, AT(series.hz), 0, HZ_MAX, on_hz,
	  NULL, "the kernel's HZ: ksmd wakes on jiffies (default:\n"
	  "this kernel's; 0: exactly every --sleep-ms)", KSMD, 1 },
	VALUE("page-cost", 0, "D", OK_DURATION, OF_DOUBLE, series.page_seconds,
	      0, 1, "a duration such as 2.5us",
	      "ksmd's time per page it visits (default 3us)", KSMD, 1),
	VALUE("revisit-cost", 0, "D", OK_DURATION, OF_DOUBLE,
	      series.revisit_seconds, 0, 1, "a duration such as 0.5us",
	      "... that is a KSM page already (default a sixth\nof --page-cost)",
	      KSMD, 1),
	VALUE("merge-cost", 0, "D", OK_DURATION, OF_DOUBLE,
	      series.merge_seconds, 0, 1, "a duration such as 3us",
	      "... more per page it merges (default 3us)", KSMD, 1),
	VALUE("wake-cost", 0, "D", OK_DURATION, OF_DOUBLE,
	      series.wake_seconds, 0, 1, "a duration such as 60us",
	      "... per wake-up besides its pages (default 60us)", KSMD, 1),
	CALL("write-rate", 0, "R", on_write_rate,
	     "a share of the pages per second from 0 to 1, such as 0.02 or 2%",
	     "writes snapshots cannot see: a share of the\n"
	     "pages per second, 0.02 or 2% (default 0)", KSMD, 1),
	CALL("thp", 0, "WHEN", on_thp, "never or always",
	     "a dump's host kept it in 2 MiB transparent huge\n"
	     "pages: always (a QEMU guest on a host with THP\n"
	     "enabled=madvise or always) or never (default)", KSMD, 1),
	CALL("sample", 0, "1/N", on_sample, "1/N with N from 1 to 65536, such as 1/64",
	     "replay the contents whose digest is 0 mod N\n"
	     "(and every zero page): N times less memory, the\n"
	     "figures scaled by N with their error stated\n"
	     "(default 1/1: every page)", KSMD, 1),
	CALL("policy", 0, "P", on_policy, NULL,
	     "who sets pages_to_scan: fixed (default),\n"
	     "advisor (the kernel's advisor_mode=scan-time)\n"
	     "ksmtuned (by the host's free memory) or\n"
	     "kubevirt (KubeVirt's KSM handler); a comma\n"
	     "list compares them (-r policies)", KSMD, 1),
	{ "host-memory", 0, "SIZE", OK_SIZE, OF_U64, AT(host_memory), 1,
	  HOST_BYTES_MAX, on_host_size, "a size from 1 to 4096T, such as 64G or 1.8T",
	  "ksmtuned's and kubevirt's host: its memory\n(live: MemTotal)", KSMD, 1 },
	{ "host-used", 0, "SIZE", OK_SIZE, OF_U64, AT(host_used), 0,
	  HOST_BYTES_MAX, on_host_size, "a size up to 4096T, such as 48G or 1.5T",
	  "and what is used before KSM (live: MemTotal\n"
	  "less MemFree, Buffers and Cached)", KSMD, 1 },
	CALL("target", 0, "F@D", on_target,
	     "a share of the saving and a time from 1ms to 1000h, "
	     "such as 90%@1h",
	     "-r advise: a share of the saving by a time,\nsuch as 90%@1h", KSMD, 1),
	{ "max-cpu", 0, "P", OK_HANDLER, OF_INT, 0, 1, 100, on_max_cpu,
	  "a percent of a CPU above 0, such as 5 or 5%",
	  "-r advise: ksmd's mean CPU, percent (default\n"
	  "100); the advisor_max_cpu tried besides 10", KSMD, 1 },
	CALL("report", 'r', "LIST", on_report, NULL, NULL,
	     SCAN | FORM_SERIES | FORM_LIVE, 0),
	VALUE("top", 0, "N", OK_COUNT, OF_SIZE_T, top, 0, TOP_MAX, NULL,
	      "rows per input in the top report (default 10)", SCAN, 0),
	VALUE("sketch-size", 0, "K", OK_COUNT, OF_SIZE_T, sketch_size, 1,
	      SKETCH_MAX, NULL, "contents per input in the sketch report\n"
	      "(default 4096)", SCAN, 0),
	CALL("host", 0, "NAME", on_host, NULL,
	     "the host column of contents and sketch\n"
	     "(default: this machine's host name)", SCAN, 0),
	VALUE("threads", 'j', "N", OK_COUNT, OF_UNSIGNED, cfg.threads, 1,
	      THREADS_MAX, NULL, "hashing threads (default: online CPUs)", SCAN, 0),
	FLAG("progress", 0, cfg.progress, 1,
	     "progress on stderr (default: if it is a terminal)", SCAN),
	FLAG("no-progress", 0, cfg.progress, 0, "no progress on stderr", SCAN),
	CALL("range", 0, "START-END", on_range,
	     "START-END with START < END, such as 0x100000-1.5G",
	     "only pages with address in [START, END);\n"
	     "decimal or 0x hex, K/M/G/T suffixes (1.5G)", SCAN, 0),
	FLAG("use-zero-pages", 'z', cfg.ksm.use_zero_pages, 1,
	     "model KSM with use_zero_pages=1", SCAN | KSMD),
	FLAG("long", 'l', long_table, 1,
	     "tables with every column, as CSV has them", SCAN | KSMD),
	STRING("label", 0, "NAME", label,
	       "the name of standard input in reports ('-')", SCAN),
	STRING("svg", 0, "FILE", svg,
	       "also a picture: histograms and address maps", SCAN | KSMD),
	CALL("quiet", 'q', NULL, on_quiet, NULL,
	     "no warnings, but that processes could not be read",
	     SCAN | KSMD | FORM_CHECK, 0),
	FLAG("help", 'h', help, 1, "this help", SCAN),
	CALL("version", 'V', NULL, on_version, NULL, "version", SCAN, 0),
};

#define NROWS (sizeof(table) / sizeof(table[0]))
#define KNOBS_MAX (TUNERS_MAX * TUNER_KNOBS_MAX)

/* A tuner's knob as an option: a value in its slot of series.tuning. */
static struct opt_row knob_row(size_t tuner, const struct policy_knob *k)
{
	return (struct opt_row){ k->name, 0, k->arg,
		k->duration ? OK_DURATION : OK_COUNT, OF_U64,
		AT(series.tuning) + tuner * sizeof(struct policy_params) + k->offset,
		k->lo, k->hi, NULL, k->wants, k->help, KSMD, 1 };
}

/* The table with every tuner's knobs after --policy's row, into @all. */
static size_t with_knobs(struct opt_row *all)
{
	const struct policy_ops *ops;
	size_t n = 0;

	for (size_t i = 0; i < NROWS; i++) {
		all[n++] = table[i];
		if (strcmp(table[i].name, "policy"))
			continue;
		for (size_t t = 0; (ops = policy_at(t)); t++)
			for (size_t k = 0; k < ops->nknobs; k++)
				all[n++] = knob_row(t, &ops->knobs[k]);
	}
	return n;
}

const struct opt_row *opt_table(size_t *n)
{
	/* made once: the tuners' tables are constant */
	static struct opt_row all[NROWS + KNOBS_MAX];
	static size_t nall;

	if (!nall)
		nall = with_knobs(all);
	*n = nall;
	return all;
}

void prefs_init(struct prefs *p, int argc)
{
	memset(p, 0, sizeof(*p));
	p->cfg.dump = (struct dump_options){ .format = "auto",
					     .range_end = UINT64_MAX };
	p->cfg.progress = -1;
	p->cfg.ksm = (struct ksm_params){ .max_page_sharing = 256,
		.pages_to_scan = 100, .sleep_ms = 20, .smart_scan = 1 };
	p->series = (struct series_params){
		.interval = 60, .page_seconds = PAGE_COST_DEFAULT,
		.revisit_seconds = -1,	/* a share of page_seconds */
		.merge_seconds = MERGE_COST_DEFAULT,
		.wake_seconds = WAKE_COST_DEFAULT,
		.ksm_full_scans = -1,
		.policy = policy_at(0),
		.advise = { .max_cpu = 100 },
	};
	for (size_t t = 0; policy_at(t); t++)
		if (policy_at(t)->defaults)
			policy_at(t)->defaults(&p->series.tuning[t]);
	p->output = writer_default();
	p->tolerance = -1;
	p->tolerance_pages = UINT64_MAX;
	p->top = 10;
	p->sketch_size = 4096;
	p->cap = (size_t)argc + 1;
	p->inputs = xcalloc(p->cap, sizeof(*p->inputs));
	prefs_algos(p, "xxhash");
}

void prefs_free(struct prefs *p)
{
	for (size_t i = 0; i < p->ninputs; i++)
		if (!p->inputs[i].path)
			free((char *)p->inputs[i].name);
	free(p->inputs);
	for (size_t g = 0; g < p->cfg.ngroups; g++)
		group_free((struct group *)&p->cfg.groups[g]);
	free((void *)p->cfg.groups);
	if (p->series.enable) {	/* -r advise --enable's one group */
		group_free((struct group *)p->series.enable);
		free((void *)p->series.enable);
	}
	free(p->groups);
	for (size_t i = 0; i < p->nknown; i++)
		free((void *)p->known[i]);
	free(p->known);
	free((char *)p->series_opt);
}
