/* SPDX-License-Identifier: MIT */
/*
 * --check: a forecast read back, and the kernel's figures now. The JSON is
 * parsed by Jansson (a library does it; its depth limit keeps a hostile
 * file from exhausting the stack); the file is read whole, up to
 * FORECAST_BYTES_MAX, and checked key by key: a value of the wrong kind is
 * named by its place ("timeline"[3].pages_sharing), as Jansson keeps no
 * offsets of values; malformed JSON is named by its byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/file.h"
#include "../util/util.h"
#include "../util/version.h"
#include "forecast.h"

/* What a forecast without its processes is missing, in words. */
#define NOT_LIVE "not the JSON of a live series (ksmscan -p PID... --count=N -o json)"

/* The whole file, at most FORECAST_BYTES_MAX; NULL with @why set. Only a
 * regular file is opened: a FIFO, a socket or a device could block or
 * never end, and is refused from its stat alone, before any read. */
static char *read_all(const char *path, size_t *n, char *why, size_t len)
{
	struct stat st;
	char *buf = NULL;
	size_t cap;
	ssize_t r = 0;
	int fd;

	*n = 0;
	if (stat(path, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "not a regular file (%s): a forecast is the "
			 "JSON file a live series wrote", file_kind(st.st_mode));
		return NULL;
	}
	if ((uint64_t)st.st_size > FORECAST_BYTES_MAX) {
		snprintf(why, len, "larger than %llu MiB: not a forecast, at offset %llu",
			 (unsigned long long)(FORECAST_BYTES_MAX >> 20),
			 (unsigned long long)FORECAST_BYTES_MAX);
		return NULL;
	}
	/* O_NONBLOCK: should it have become a FIFO since, opening it must not
	 * wait for a writer; fstat() then refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s", fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	cap = (size_t)st.st_size + 1;	/* a file that grows is read to the cap */
	buf = xmalloc(cap + 1);
	do {
		if (*n == cap && cap <= FORECAST_BYTES_MAX) {
			cap = 2 * cap;
			buf = xreallocarray(buf, cap + 1, 1);
		}
		r = read(fd, buf + *n, cap - *n);
		if (r > 0)
			*n += (size_t)r;
	} while ((r > 0 || (r < 0 && errno == EINTR)) && *n <= FORECAST_BYTES_MAX);
	if (r < 0)
		snprintf(why, len, "%s, at offset %zu", strerror(errno), *n);
	else if (*n > FORECAST_BYTES_MAX)
		snprintf(why, len, "larger than %llu MiB: not a forecast, at offset %llu",
			 (unsigned long long)(FORECAST_BYTES_MAX >> 20),
			 (unsigned long long)FORECAST_BYTES_MAX);
	close(fd);
	if (r < 0 || *n > FORECAST_BYTES_MAX) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Jansson's memory, counted: a file's shape (many small objects) can cost
 * far more than its bytes, so the parser gets a budget of its own and
 * fails when it is spent. Each block carries its size before it.
 */
static size_t parser_used;
static int parser_spent;	/* a request was refused */

static void *budget_malloc(size_t n)
{
	size_t *b;

	if (n > FORECAST_PARSER_MAX - parser_used - sizeof(size_t) ||
	    parser_used + sizeof(size_t) > FORECAST_PARSER_MAX) {
		parser_spent = 1;
		return NULL;
	}
	b = malloc(sizeof(size_t) + n);
	if (!b)
		return NULL;
	*b = n;
	parser_used += sizeof(size_t) + n;
	return b + 1;
}

static void budget_free(void *p)
{
	size_t *b = p;

	if (!b)
		return;
	parser_used -= sizeof(size_t) + b[-1];
	free(b - 1);
}

/* @o's @key as a whole number at least @min; -1 with @why naming @where. */
static int get_int(json_t *o, const char *where, const char *key, int64_t min,
		   int64_t *v, char *why, size_t len)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < min) {
		snprintf(why, len, "%s.%s is %s", where, key,
			 j ? (min < 0 ? "not a whole number" :
			      "not a whole number of at least 0") : "missing");
		return -1;
	}
	*v = json_integer_value(j);
	return 0;
}

/* get_int() of a count. */
static int get_u64(json_t *o, const char *where, const char *key, uint64_t *v,
		   char *why, size_t len)
{
	int64_t x;

	if (get_int(o, where, key, 0, &x, why, len) < 0)
		return -1;
	*v = (uint64_t)x;
	return 0;
}

/* The major number of a version "X.Y.Z". */
static long major_of(const char *v)
{
	return strtol(v, NULL, 10);
}

/* A forecast of a newer major version may mean its figures otherwise: it is
 * not read. One without a version (written by hand) is read. */
static int read_version(json_t *p, char *why, size_t len)
{
	json_t *j = json_object_get(p, "version");
	const char *v = json_string_value(j);

	if (!j)
		return 0;
	if (!v || !*v || !strchr("0123456789", v[0])) {
		snprintf(why, len, "parameters.version is not a version (X.Y.Z)");
		return -1;
	}
	if (major_of(v) > major_of(KSMSCAN_VERSION)) {
		snprintf(why, len, "written by ksmscan %.20s, a newer major version "
			 "than this %s: not read (its figures may mean other things)",
			 v, KSMSCAN_VERSION);
		return -1;
	}
	return 0;
}

/* The settings the forecast replayed, from "parameters". */
static int read_params(json_t *p, struct forecast *f, char *why, size_t len)
{
	static const char *const keys[] = {
		"pages_to_scan", "sleep_ms", "use_zero_pages",
		"max_page_sharing", "smart_scan",
	};
	uint64_t *vals[] = {
		&f->set.pages_to_scan, &f->set.sleep_ms, &f->set.use_zero_pages,
		&f->set.max_page_sharing, &f->set.smart_scan,
	};
	json_t *jpol = json_object_get(p, "policy");
	const char *pol = json_string_value(jpol);

	if (!json_is_object(p)) {
		snprintf(why, len, "no \"parameters\": %s", NOT_LIVE);
		return -1;
	}
	if (jpol && !pol) {
		snprintf(why, len, "parameters.policy is not a string (fixed, "
			 "advisor, ksmtuned or kubevirt)");
		return -1;
	}
	if (!json_object_get(p, "ksm_full_scans")) {
		snprintf(why, len, "no parameters.ksm_full_scans: %s", NOT_LIVE);
		return -1;
	}
	if (read_version(p, why, len) < 0 ||
	    get_u64(p, "parameters", "ksm_full_scans", &f->full_scans, why, len) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (get_u64(p, "parameters", keys[i], vals[i], why, len) < 0)
			return -1;
	/* --policy=a,b,...: the timeline is the first's */
	snprintf(f->set.policy, sizeof(f->set.policy), "%.*s",
		 pol ? (int)strcspn(pol, ",") : 5, pol ? pol : "fixed");
	return 0;
}

/* The rows of report @name (a JSON array of at least one), or 0 with @why. */
static size_t report_rows(json_t *t, const char *name, char *why, size_t len)
{
	size_t n = json_array_size(t);

	if (!json_is_array(t) || !n)
		snprintf(why, len, "no \"%s\" rows: %s", name, NOT_LIVE);
	return json_is_array(t) ? n : 0;
}

/* The timeline: full scans 1, 2, ... in order, into f->scans[1...]. */
static int read_timeline(json_t *t, struct forecast *f, char *why, size_t len)
{
	size_t n = report_rows(t, "timeline", why, len);

	if (!n)
		return -1;
	f->scans = xcalloc(n + 1, sizeof(*f->scans));
	f->nscans = n + 1;
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(t, i);
		struct forecast_scan *s = &f->scans[i + 1];
		char where[48];

		snprintf(where, sizeof(where), "timeline[%zu]", i);
		if (get_u64(r, where, "scan", &s->scan, why, len) < 0 ||
		    get_u64(r, where, "pages_shared", &s->pages_shared, why, len) < 0 ||
		    get_u64(r, where, "pages_sharing", &s->pages_sharing, why, len) < 0 ||
		    get_u64(r, where, "ksm_zero_pages", &s->ksm_zero_pages, why, len) < 0 ||
		    get_int(r, where, "general_profit", INT64_MIN, &s->general_profit,
			    why, len) < 0)
			return -1;
		if (s->scan != i + 1) {
			snprintf(why, len, "%s.scan is %llu, not %zu: the full scans "
				 "of one replay, in order, are expected", where,
				 (unsigned long long)s->scan, i + 1);
			return -1;
		}
	}
	return 0;
}

/* The input name of process @pid, as a live series names it. */
static const char *pid_name(int pid, char *buf, size_t len)
{
	snprintf(buf, len, "pid:%d", pid);
	return buf;
}

/* One process's row of "processes". */
static int read_proc(json_t *r, size_t i, struct forecast_proc *p, char *why,
		     size_t len)
{
	char where[48], pname[32];
	const char *in = json_string_value(json_object_get(r, "input"));
	json_t *start = json_object_get(r, "start_time");
	int64_t pid, profit;

	snprintf(where, sizeof(where), "processes[%zu]", i);
	if (!in || strlen(in) >= sizeof(p->input)) {
		snprintf(why, len, "%s.input is missing or too long", where);
		return -1;
	}
	snprintf(p->input, sizeof(p->input), "%s", in);
	if (get_int(r, where, "pid", 1, &pid, why, len) < 0)
		return -1;
	if (pid > INT32_MAX || !json_is_number(start) ||
	    json_number_value(start) < 0) {
		snprintf(why, len, "%s.pid or .start_time is not a process's", where);
		return -1;
	}
	if (get_u64(r, where, "scan", &p->scan, why, len) < 0 ||
	    get_u64(r, where, "ksm_rmap_items", &p->ksm.rmap_items, why, len) < 0 ||
	    get_u64(r, where, "ksm_merging_pages", &p->ksm.merging_pages, why, len) < 0 ||
	    get_u64(r, where, "ksm_zero_pages", &p->ksm.zero_pages, why, len) < 0 ||
	    get_int(r, where, "ksm_process_profit", INT64_MIN, &profit, why, len) < 0)
		return -1;
	p->pid = (int)pid;
	if (strcmp(p->input, pid_name((int)pid, pname, sizeof(pname))) != 0) {
		snprintf(why, len, "%s.input is \"%s\", not %s: a row names its own "
			 "process", where, p->input, pname);
		return -1;
	}
	p->start_time = json_number_value(start);
	p->ksm.process_profit = profit;
	return 0;
}

/* The processes, one per row. */
static int read_procs(json_t *t, struct forecast *f, char *why, size_t len)
{
	size_t n = report_rows(t, "processes", why, len);

	if (!n)
		return -1;
	if (n > FORECAST_PROCS_MAX) {
		snprintf(why, len, "%zu processes: a live series has at most %d",
			 n, FORECAST_PROCS_MAX);
		return -1;
	}
	f->procs = xcalloc(n, sizeof(*f->procs));
	f->nprocs = n;
	for (size_t i = 0; i < n; i++) {
		if (read_proc(json_array_get(t, i), i, &f->procs[i], why, len) < 0)
			return -1;
		for (size_t k = 0; k < i; k++)
			if (f->procs[k].pid == f->procs[i].pid) {
				snprintf(why, len, "processes[%zu] names pid %d, as "
					 "processes[%zu] did: a process is forecast "
					 "once", i, f->procs[i].pid, k);
				return -1;
			}
	}
	return 0;
}

/* Bytes no JSON text holds, said at their offset: a NUL (Jansson would
 * name the byte after it) and a byte order mark (RFC 8259 forbids one). */
static int not_text(const char *buf, size_t n, char *why, size_t len)
{
	const char *nul = memchr(buf, '\0', n);

	if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		snprintf(why, len, "not JSON (it begins with a byte order mark), "
			 "at offset 0");
	else if (nul)
		snprintf(why, len, "not JSON (a NUL byte), at offset %zu",
			 (size_t)(nul - buf));
	return why[0] != '\0';
}

int forecast_read(const char *path, struct forecast *f, char *why, size_t len)
{
	size_t n;
	char *buf;
	int r;

	memset(f, 0, sizeof(*f));
	why[0] = '\0';
	buf = read_all(path, &n, why, len);
	if (!buf)
		return -1;
	r = forecast_parse(buf, n, f, why, len);
	free(buf);
	return r;
}

int forecast_parse(const char *buf, size_t n, struct forecast *f, char *why,
		   size_t len)
{
	json_error_t err;
	json_t *root;
	int r = -1;

	memset(f, 0, sizeof(*f));
	why[0] = '\0';
	parser_used = 0;
	parser_spent = 0;
	if (not_text(buf, n, why, len))
		return -1;
	json_set_alloc_funcs(budget_malloc, budget_free);
	root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		if (parser_spent)
			snprintf(why, len, "its JSON needs more than %llu MiB to "
				 "parse: not a forecast, at offset %d",
				 (unsigned long long)(FORECAST_PARSER_MAX >> 20),
				 err.position);
		else
			snprintf(why, len, "not JSON (%s), at offset %d", err.text,
				 err.position);
		json_set_alloc_funcs(malloc, free);
		return -1;
	}
	if (!json_is_object(root))
		snprintf(why, len, "not a JSON object: %s", NOT_LIVE);
	else if (read_params(json_object_get(root, "parameters"), f, why, len) == 0 &&
		 read_timeline(json_object_get(root, "timeline"), f, why, len) == 0 &&
		 read_procs(json_object_get(root, "processes"), f, why, len) == 0)
		r = 0;
	json_decref(root);
	json_set_alloc_funcs(malloc, free);
	if (r < 0)
		forecast_free(f);
	return r;
}

void forecast_free(struct forecast *f)
{
	free(f->scans);
	free(f->procs);
	memset(f, 0, sizeof(*f));
}
