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

#include "../host/ksm.h"
#include "../host/process.h"
#include "../util/util.h"
#include "forecast.h"

/* What a forecast without its processes is missing, in words. */
#define NOT_LIVE "not the JSON of a live series (ksmscan -p PID... --count=N -o json)"

/* The whole file, at most FORECAST_BYTES_MAX; NULL with @why set. */
static char *read_all(const char *path, size_t *n, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t r;

	*n = 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		snprintf(why, len, "not a file");
		close(fd);
		return NULL;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > FORECAST_BYTES_MAX) {
		snprintf(why, len, "larger than %llu MiB: not a forecast, at offset %llu",
			 (unsigned long long)(FORECAST_BYTES_MAX >> 20),
			 (unsigned long long)FORECAST_BYTES_MAX);
		close(fd);
		return NULL;
	}
	fcntl(fd, F_SETFL, 0);	/* blocking again: a pipe is read to its end */
	do {
		if (*n == cap) {
			cap = cap ? 2 * cap : 65536;
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
	const char *pol = json_string_value(json_object_get(p, "policy"));

	if (!json_is_object(p)) {
		snprintf(why, len, "no \"parameters\": %s", NOT_LIVE);
		return -1;
	}
	if (!json_object_get(p, "ksm_full_scans")) {
		snprintf(why, len, "no parameters.ksm_full_scans: %s", NOT_LIVE);
		return -1;
	}
	if (get_u64(p, "parameters", "ksm_full_scans", &f->full_scans, why, len) < 0)
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

/* One process's row of "processes". */
static int read_proc(json_t *r, size_t i, struct forecast_proc *p, char *why,
		     size_t len)
{
	char where[48];
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
	f->procs = xcalloc(n, sizeof(*f->procs));
	f->nprocs = n;
	for (size_t i = 0; i < n; i++)
		if (read_proc(json_array_get(t, i), i, &f->procs[i], why, len) < 0)
			return -1;
	return 0;
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
	root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		snprintf(why, len, "not JSON (%s), at offset %d", err.text,
			 err.position);
		return -1;
	}
	if (!json_is_object(root))
		snprintf(why, len, "not a JSON object: %s", NOT_LIVE);
	else if (read_params(json_object_get(root, "parameters"), f, why, len) == 0 &&
		 read_timeline(json_object_get(root, "timeline"), f, why, len) == 0 &&
		 read_procs(json_object_get(root, "processes"), f, why, len) == 0)
		r = 0;
	json_decref(root);
	if (r < 0)
		forecast_free(f);
	return r;
}

/* The kernel's settings now, as a forecast names them. */
static void actual_settings(struct forecast_settings *s)
{
	ksm_sysfs("pages_to_scan", &s->pages_to_scan);
	ksm_sysfs("sleep_millisecs", &s->sleep_ms);
	ksm_sysfs("use_zero_pages", &s->use_zero_pages);
	ksm_sysfs("max_page_sharing", &s->max_page_sharing);
	if (ksm_sysfs("smart_scan", &s->smart_scan) < 0)
		s->smart_scan = 0;	/* before Linux 6.7: every page, every scan */
	snprintf(s->policy, sizeof(s->policy), "%s",
		 ksm_advisor_on() == 1 ? "advisor" : "fixed");
}

int forecast_actual(const struct forecast *f, struct forecast_actual *a)
{
	int *pids = xcalloc(f->nprocs + 1, sizeof(*pids));

	memset(a, 0, sizeof(*a));
	a->procs = xcalloc(f->nprocs + 1, sizeof(*a->procs));
	a->gone = xcalloc(f->nprocs + 1, sizeof(*a->gone));
	if (ksm_sysfs("full_scans", &a->full_scans) < 0) {
		free(pids);
		return -1;
	}
	ksm_sysfs("pages_shared", &a->now.pages_shared);
	ksm_sysfs("pages_sharing", &a->now.pages_sharing);
	if (ksm_sysfs("ksm_zero_pages", &a->now.ksm_zero_pages) < 0)
		a->now.ksm_zero_pages = 0;	/* before Linux 6.10 */
	ksm_sysfs_signed("general_profit", &a->now.general_profit);
	actual_settings(&a->set);
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct forecast_proc *p = &f->procs[i];
		double start = proc_start_time(p->pid);

		pids[i] = p->pid;
		if (start < 0 || proc_ksm_stat(p->pid, &a->procs[i]) < 0)
			a->gone[i] = 1;
		else if (start != p->start_time)
			a->gone[i] = 2;
	}
	a->elsewhere = ksm_merging_elsewhere(pids, f->nprocs, &a->elsewhere_procs);
	free(pids);
	return 0;
}

void forecast_free(struct forecast *f)
{
	free(f->scans);
	free(f->procs);
	memset(f, 0, sizeof(*f));
}

void forecast_actual_free(struct forecast_actual *a)
{
	free(a->procs);
	free(a->gone);
	memset(a, 0, sizeof(*a));
}
