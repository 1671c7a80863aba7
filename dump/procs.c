/* SPDX-License-Identifier: MIT */
/*
 * A whole host: the processes -P REGEX and --all-processes take, and the
 * kernel's own KSM figures per process (smaps, ksm_stat, ksm_merging_pages),
 * which the summary shows beside ksmscan's estimate.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "dump.h"
#include "procfs.h"

/* PF_KTHREAD in the flags of /proc/PID/stat (include/linux/sched.h). */
#define PF_KTHREAD 0x00200000u

/* The first number of /proc/PID/NAME after @key ("" for the file's first). */
static uint64_t proc_number(int pid, const char *name, const char *key)
{
	char path[64], line[256];
	unsigned long long v = 0;
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 &&
		    sscanf(line + klen, " %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Whether a smaps VmFlags line holds the two-letter flag @flag. */
static int vmflag(const char *line, const char *flag)
{
	for (const char *p = line + strlen("VmFlags:"); *p; ) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n == 2 && strncmp(p, flag, 2) == 0)
			return 1;
		p += n;
	}
	return 0;
}

/*
 * Sum the resident pages of VM_MERGEABLE areas and the transparent huge
 * pages from /proc/PID/smaps: each area's Rss comes before its VmFlags.
 */
static void proc_smaps(int pid, struct proc_stats *st)
{
	char path[64], line[1024];
	unsigned long long rss = 0, kb;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			rss = kb;
		else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			st->thp_pages += kb / 4;
		else if (strncmp(line, "VmFlags:", 8) == 0 && vmflag(line, "mg"))
			st->mergeable_pages += rss / 4;
	}
	fclose(f);
}

void proc_stats_read(int pid, struct proc_stats *st)
{
	char path[64];
	FILE *f;

	memset(st, 0, sizeof(*st));
	st->valid = 1;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(st->command, sizeof(st->command), f))
			st->command[strcspn(st->command, "\n")] = '\0';
		fclose(f);
	}
	proc_smaps(pid, st);
	st->ksm_merging_pages = proc_number(pid, "ksm_merging_pages", "");
	st->ksm_rmap_items = proc_number(pid, "ksm_stat", "ksm_rmap_items");
}

/* A process's command name; 0, or -1 if it is gone. */
static int proc_comm(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Whether this user may read the process's memory: opening /proc/PID/mem
 * makes the kernel's ptrace access check. 1 yes, 0 refused (warned), -1 gone.
 */
static int proc_readable(int pid, const char *comm)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == EACCES || errno == EPERM) {
		warn("pid:%d (%s): skipped: %s", pid, comm, proc_why_denied());
		return 0;
	}
	return -1;
}

/* Append "pid:PID" to the inputs. */
static void procs_append(int pid, struct input **inputs, size_t *n, size_t *cap)
{
	char name[32];

	if (*n + 1 >= *cap) {
		*cap = *cap * 2 + 16;
		*inputs = xreallocarray(*inputs, *cap, sizeof(**inputs));
	}
	snprintf(name, sizeof(name), "pid:%d", pid);
	(*inputs)[(*n)++] = (struct input){ .name = xstrdup(name),
					      .pid = pid, .listed = 1 };
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The pids in /proc, ascending; *n set to how many. */
static int *procs_pids(size_t *n)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	size_t cap = 256;
	int *pids = xcalloc(cap, sizeof(*pids));

	*n = 0;
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    strspn(e->d_name, "0123456789") != strlen(e->d_name))
			continue;
		if (*n == cap) {
			cap *= 2;
			pids = xreallocarray(pids, cap, sizeof(*pids));
		}
		pids[(*n)++] = atoi(e->d_name);
	}
	if (dir)
		closedir(dir);
	qsort(pids, *n, sizeof(*pids), cmp_int);
	return pids;
}

long procs_list(const char *regex, struct input **inputs, size_t *n,
		size_t *cap, char *why, size_t len)
{
	regex_t re;
	size_t npids;
	int *pids, rc;
	long added = 0;

	if (regex && (rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) != 0) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		snprintf(why, len, "bad regular expression '%.60s': %s", regex, msg);
		return -1;
	}
	pids = procs_pids(&npids);
	for (size_t i = 0; i < npids; i++) {
		char comm[64], state;
		unsigned long flags;

		if (pids[i] == getpid() || proc_stat(pids[i], &state, &flags) < 0 ||
		    (flags & PF_KTHREAD) || state == 'Z' || state == 'X' ||
		    proc_comm(pids[i], comm, sizeof(comm)) < 0)
			continue;
		if (regex && regexec(&re, comm, 0, NULL, 0) != 0)
			continue;
		if (proc_readable(pids[i], comm) <= 0)
			continue;
		procs_append(pids[i], inputs, n, cap);
		added++;
	}
	free(pids);
	if (regex)
		regfree(&re);
	return added;
}
