/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_OPTIONS_H
#define KSMSCAN_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "../compress/compress.h"
#include "../scan/scan.h"
#include "../scan/series.h"
#include "usage.h"

struct writer;

/*
 * The command line (options.c, optparse.c, setup.c): one table of options
 * (options.c) fills a struct prefs; getopt_long()'s arrays, --help, the
 * usage line and the range errors are made from that table (optparse.c);
 * the rules between options run afterwards on facts about the host that
 * are handed in (setup.c), so none of it needs a kernel to be tested.
 * ksmscan.c then runs what the prefs ask for.
 */

#include "../util/version.h"	/* KSMSCAN_VERSION */

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
	int by_process;			/* --by names process: metrics keep
					 * the rows of listed processes */
	const char *enable;		/* --enable's list, or NULL */
	size_t sketch_size;		/* --sketch-size */
	const char *host;		/* --host, or NULL: gethostname() */
	const struct writer *output;	/* -o: the format (the writers' row) */
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
	int host_memory_given, host_used_given;	/* ... were given (0 is a value) */
	int bench;			/* --bench */
	const char *check;		/* --check: the forecast's file */
	double tolerance;		/* --tolerance, percent; -1: not given */
	uint64_t tolerance_pages;	/* --tolerance-pages; UINT64_MAX: not
					 * given */
	int algos_given;		/* -a was given */
	int algos_help;			/* -a help */
	int compress;			/* -c or -r compress: the compress report */
	int long_table;			/* -l */
	int listed;			/* -P or --all-processes was given */
	size_t ndomains;		/* the trust domains: the first of
					 * cfg.groups (setup_domains()) */
	int help;			/* -h: the parser prints --help at once */
};

/*
 * What the rules between options need to know of the live host, handed in
 * so that they can be tried on any facts (ksmscan.c passes host/'s).
 */
struct proc_unit;

struct host_facts {
	/** hz() - the kernel's HZ, 0 if unknown. */
	unsigned (*hz)(void);
	/** meminfo() - MemTotal and MemFree+Buffers+Cached in kB; -1 if unknown. */
	int (*meminfo)(uint64_t *total_kb, uint64_t *free_kb);
	/** full_scans() - KSM's full_scans now; -1 if the kernel has no KSM. */
	int (*full_scans)(int64_t *value);
	/** start_time() - a process's start time in clock ticks, -1 if gone. */
	double (*start_time)(int pid);
	/** soft_dirty() - 1 the kernel has soft-dirty bits, 0 not, -1 unknown. */
	int (*soft_dirty)(void);
	/** processes() - the pids -P @regex (NULL: every process) takes; NULL
	 * with @why for a pattern that is refused. */
	int *(*processes)(const char *regex, size_t *n, char *why, size_t len);
	/** unit() - what process @pid belongs to (its cgroup, systemd unit,
	 * container, VM) and its parent, for --by and --enable; -1 if gone. */
	int (*unit)(int pid, struct proc_unit *u);
};

/**
 * prefs_init() - the defaults of every option.
 * @p: filled in
 * @argc: the number of arguments (bounds the inputs and groups)
 */
void prefs_init(struct prefs *p, int argc);

/**
 * prefs_free() - free what the command line allocated.
 * @p: the preferences
 */
void prefs_free(struct prefs *p);

/**
 * options_parse() - read the whole command line into @p by the table of
 * options. A usage error ends the run (exit 2).
 * @p: from prefs_init()
 * @argc: as main() has it
 * @argv: as main() has it
 */
void options_parse(struct prefs *p, int argc, char **argv);

/**
 * options_setup() - the rules between options, once all are read: -P and
 * --all-processes expanded, standard input taken when nothing is named,
 * groups, series, trust domains, default reports. A usage error ends the
 * run (exit 2).
 * @p: the parsed preferences
 * @host: what the rules may ask of the host
 */
void options_setup(struct prefs *p, const struct host_facts *host);

/**
 * options_help() - print --help: the usage line and every option of the
 * table, within 80 columns.
 */
void options_help(void);

/**
 * prefs_report() - select a report by name (as -r does).
 * @p: the preferences
 * @name: its name
 */
void prefs_report(struct prefs *p, const char *name);

/**
 * prefs_algos() - select checksums by a comma list (as -a does).
 * @p: the preferences
 * @list: the names, or "all"
 */
void prefs_algos(struct prefs *p, const char *list);

/**
 * prefs_add_input() - append an input, growing the array.
 * @p: the preferences
 * @in: the input
 */
void prefs_add_input(struct prefs *p, struct input in);

/**
 * pid_input() - a live process as an input, named "pid:PID".
 * @pid: the process
 * @listed: taken by -P or --all-processes (its warnings follow -q)
 */
struct input pid_input(int pid, int listed);

/* Marks -P REGEX (name: the regex) and --all-processes (name NULL) among
 * the inputs until options_setup() lists their processes. */
#define PID_LIST (-1)

/**
 * prefs_reports_list() - -r LIST: the reports, replacing those selected.
 * @p: the preferences
 * @list: comma list of report names
 */
void prefs_reports_list(struct prefs *p, const char *list);

/**
 * prefs_compressors_list() - -c LIST: zram's compressors, and the compress
 * report.
 * @p: the preferences
 * @list: comma list of compressor names, or "all"
 */
void prefs_compressors_list(struct prefs *p, const char *list);

/**
 * prefs_compressors_all() - every compressor, for the summary's zram
 * figures, without selecting the compress report.
 * @p: the preferences
 */
void prefs_compressors_all(struct prefs *p);

/**
 * prefs_known_list() - --known=FILE,...: files whose pages are known.
 * @p: the preferences
 * @list: comma list of files (standard input refused)
 */
void prefs_known_list(struct prefs *p, const char *list);

#endif
