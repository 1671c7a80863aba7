/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about processes, read in this one file: their state, why
 * reading one's memory is denied, the kernel's own KSM figures per process
 * (smaps, ksm_stat, ksm_merging_pages), which the summary shows beside
 * ksmscan's estimate, and the processes -P REGEX and --all-processes take.
 * The pid reader (proc.c) reads memory; it asks this file everything else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "../util/util.h"
#include "dump.h"
#include "procfs.h"

/* PF_KTHREAD in the flags of /proc/PID/stat (include/linux/sched.h). */
#define PF_KTHREAD 0x00200000u
/* CAP_SYS_PTRACE's bit in the capability sets of /proc/self/status. */
#define CAP_SYS_PTRACE_BIT 19
/* A pagemap entry's page frame number (bits 0-54). */
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)

/* /proc/PID/stat read into @buf: the fields after the command name (which
 * may hold anything, so past its last ')'), or NULL if the process is gone. */
static const char *stat_fields(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p ? p + 1 : NULL;
}

int proc_stat(int pid, char *state, unsigned long *flags)
{
	char buf[1024];
	const char *p = stat_fields(pid, buf, sizeof(buf));

	if (!p || sscanf(p, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -1;
	return 0;
}

/* Whether this process has CAP_SYS_PTRACE in its effective set. */
static int proc_have_ptrace_cap(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps >> CAP_SYS_PTRACE_BIT & 1;
}

/* The number a one-number file (a sysctl, a sysfs knob) holds, or -1. */
static int read_int(const char *path)
{
	int v = -1;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* kernel.yama.ptrace_scope, or -1 without Yama. */
static int proc_yama_scope(void)
{
	return read_int("/proc/sys/kernel/yama/ptrace_scope");
}

static const char *proc_why_denied(void)
{
	int scope = proc_yama_scope();

	if (scope >= 3)
		return "permission denied: kernel.yama.ptrace_scope is 3, which "
		       "lets no process read another's memory, not even root";
	if (geteuid() == 0 && !proc_have_ptrace_cap())
		return "permission denied: this process lacks CAP_SYS_PTRACE, "
		       "which reading another user's memory needs (a container "
		       "started without it?)";
	if (geteuid() == 0)
		return "permission denied although running as root with "
		       "CAP_SYS_PTRACE (a security module such as AppArmor or "
		       "SELinux, or a process in another user namespace)";
	if (scope == 2)
		return "permission denied: kernel.yama.ptrace_scope is 2, which "
		       "leaves reading another process's memory to CAP_SYS_PTRACE "
		       "(root)";
	if (scope == 1)
		return "permission denied (kernel.yama.ptrace_scope is 1: only a "
		       "process's ancestors, or CAP_SYS_PTRACE, may read its "
		       "memory; another user's process needs root)";
	return "permission denied (another user's process needs ptrace "
	       "permission: run as that user or as root)";
}

/*
 * A process with no memory to read (a kernel thread, a zombie) says so
 * whoever asks: its state is checked before the permission, since a normal
 * user is denied a kernel thread's mem as well.
 */
const char *proc_why_unreadable(int pid, int err)
{
	char state;
	unsigned long flags;

	if (proc_stat(pid, &state, &flags) < 0)
		return err == ENOENT || err == ESRCH ? "no such process" :
		       err == EACCES || err == EPERM ? proc_why_denied() :
		       strerror(err);
	if (flags & PF_KTHREAD)
		return "kernel thread, has no user memory";
	if (state == 'Z' || state == 'X' || state == 'x')
		return "zombie process, has no memory";
	if (err == EACCES || err == EPERM)
		return proc_why_denied();
	return strerror(err);
}

int proc_exited(int pid)
{
	char state;
	unsigned long flags;

	return proc_stat(pid, &state, &flags) < 0 || state == 'Z' || state == 'X';
}

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
	memset(st, 0, sizeof(*st));
	st->valid = 1;
	proc_comm(pid, st->command, sizeof(st->command));
	proc_smaps(pid, st);
	st->ksm_merging_pages = proc_number(pid, "ksm_merging_pages", "");
	st->ksm_rmap_items = proc_number(pid, "ksm_stat", "ksm_rmap_items");
}

int ksm_run_value(void)
{
	return read_int("/sys/kernel/mm/ksm/run");
}

int ksm_sysfs_signed(const char *name, int64_t *value)
{
	char path[128];
	long long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%lld", &v) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*value = v;
	return 0;
}

int ksm_advisor_on(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/kernel/mm/ksm/advisor_mode", "re");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[scan-time]") != NULL;	/* the choice in force */
}

int ksm_sysfs(const char *name, uint64_t *value)
{
	int64_t v;

	if (ksm_sysfs_signed(name, &v) < 0)
		return -1;
	*value = v < 0 ? 0 : (uint64_t)v;
	return 0;
}

int proc_ksm_stat(int pid, struct proc_ksm_stat *st)
{
	static const char *const keys[] = {
		"ksm_rmap_items", "ksm_merging_pages", "ksm_zero_pages",
		"ksm_process_profit",
	};
	long long v[4] = { 0 };
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/ksm_stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (size_t k = 0; k < 4; k++) {
			size_t n = strlen(keys[k]);

			if (strncmp(line, keys[k], n) == 0 && line[n] == ' ')
				sscanf(line + n, " %lld", &v[k]);
		}
	fclose(f);
	st->rmap_items = (uint64_t)(v[0] < 0 ? 0 : v[0]);
	st->merging_pages = (uint64_t)(v[1] < 0 ? 0 : v[1]);
	st->zero_pages = (uint64_t)(v[2] < 0 ? 0 : v[2]);
	st->process_profit = v[3];
	return 0;
}

/* One smaps area's figures, in kB, until its VmFlags line. */
struct smaps_area {
	char path[256];
	unsigned long long rss, anon, thp, hugetlb;
};

/* Whether an area's file is shared anonymous memory (shmem, memfd, SysV,
 * /dev/zero, a deleted tmpfs file) rather than a file's own pages. */
static int shmem_like(const char *path)
{
	return !path[0] || strncmp(path, "/memfd:", 7) == 0 ||
	       strncmp(path, "/dev/zero", 9) == 0 || strncmp(path, "/SYSV", 5) == 0 ||
	       strncmp(path, "/dev/shm/", 9) == 0 || strstr(path, " (deleted)") ||
	       strncmp(path, "[anon_shmem", 11) == 0;
}

/* Count one area under its reason, once its VmFlags line is read. */
static void doctor_area(const struct smaps_area *a, const char *flags,
			int ksm_running, struct proc_doctor *d)
{
	int shared = vmflag(flags, "sh") || (vmflag(flags, "ms") && shmem_like(a->path));

	if (vmflag(flags, "io") || vmflag(flags, "pf"))
		d->pages[DOCTOR_IO_MAPPING] += a->rss / 4;
	else if (vmflag(flags, "ht"))
		d->pages[DOCTOR_HUGETLB] += a->hugetlb / 4;
	else if (shared) {
		d->pages[DOCTOR_SHARED_MAPPING] += a->rss / 4;
		if (a->rss && shmem_like(a->path))
			d->shared_memfd = 1;
	} else if (!vmflag(flags, "mg"))
		d->pages[DOCTOR_NOT_MERGEABLE] += a->anon / 4;
	else {
		d->pages[DOCTOR_THP] += a->thp / 4;
		if (!ksm_running)
			d->pages[DOCTOR_KSM_NOT_RUNNING] += (a->anon - a->thp) / 4;
	}
}

int proc_doctor_read(int pid, int ksm_running, struct proc_doctor *d)
{
	char path[64], line[1024];
	struct smaps_area a = { "", 0, 0, 0, 0 };
	unsigned long long kb;
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t word = strcspn(line, " ");

		line[strcspn(line, "\n")] = '\0';
		/* An area's first line: "start-end perms offset dev inode path";
		 * the others are "Key: value". */
		if (memchr(line, '-', word) && !memchr(line, ':', word)) {
			const char *p = line;

			memset(&a, 0, sizeof(a));
			for (int field = 0; field < 5; field++) {
				p += strcspn(p, " ");
				p += strspn(p, " ");
			}
			snprintf(a.path, sizeof(a.path), "%s", p);
		} else if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			a.rss = kb;
		else if (sscanf(line, "Anonymous: %llu kB", &kb) == 1)
			a.anon = kb;
		else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			a.thp = kb;
		else if (sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1 ||
			 sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1)
			a.hugetlb += kb;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			doctor_area(&a, line, ksm_running, d);
	}
	fclose(f);
	return 0;
}

int proc_comm(int pid, char *buf, size_t len)
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

uint64_t ksm_merging_elsewhere(const int *skip, size_t nskip, size_t *procs)
{
	size_t n;
	int *pids = procs_pids(&n);
	uint64_t pages = 0;

	*procs = 0;
	for (size_t i = 0; i < n; i++) {
		struct proc_ksm_stat st;
		size_t k = 0;

		while (k < nskip && skip[k] != pids[i])
			k++;
		if (k < nskip || proc_ksm_stat(pids[i], &st) < 0 ||
		    !st.merging_pages)
			continue;
		pages += st.merging_pages;
		(*procs)++;
	}
	free(pids);
	return pages;
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

/*
 * The values of @n keys of /proc/meminfo, in kB (0 for a key it lacks).
 * Return: a bit per key found, or -1 if the file cannot be read.
 */
static int meminfo_kb(const char *const *keys, unsigned long long *kb, size_t n)
{
	char line[256], key[64];
	unsigned long long v;
	int found = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	memset(kb, 0, n * sizeof(*kb));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %llu", key, &v) != 2)
			continue;
		for (size_t k = 0; k < n; k++)
			if (strcmp(key, keys[k]) == 0) {
				kb[k] = v;
				found |= 1 << k;
			}
	}
	fclose(f);
	return found;
}

uint64_t mem_available(void)
{
	static const char *const keys[] = { "MemAvailable" };
	const char *env = getenv("KSMSCAN_MEM_AVAILABLE");
	unsigned long long kb;

	if (env && *env)
		return strtoull(env, NULL, 0);
	if (meminfo_kb(keys, &kb, 1) != 1)
		return UINT64_MAX;	/* it does not say */
	return (uint64_t)kb * 1024;
}

uint64_t proc_resident_pages(int pid)
{
	char path[64];
	unsigned long long size, resident;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return n == 2 ? (uint64_t)resident : 0;
}

/* KSMSCAN_TEST_NODES: a fake host of that many nodes (tests only); 0 unset. */
static int test_nodes(void)
{
	const char *v = getenv("KSMSCAN_TEST_NODES");
	int n = v ? atoi(v) : 0;

	return n > 0 && n <= 1024 ? n : 0;
}

int numa_host_nodes(void)
{
	char buf[256];
	int nodes = 0, a, b, used;
	FILE *f;

	if (test_nodes())
		return test_nodes();
	f = fopen("/sys/devices/system/node/online", "re");
	if (!f)
		return 1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	/* A list of ranges: "0", "0-3", "0,2-3". */
	for (const char *p = buf; sscanf(p, "%d%n", &a, &used) == 1; ) {
		p += used;
		b = a;
		if (*p == '-' && sscanf(p + 1, "%d%n", &b, &used) == 1)
			p += 1 + used;
		nodes += b >= a ? b - a + 1 : 1;
		if (*p != ',')
			break;
		p++;
	}
	return nodes ? nodes : 1;
}

/* Pages per move_pages() query. */
#define NODE_BATCH 1024

int proc_page_nodes(int pid, const uint64_t *addrs, size_t n, int *nodes)
{
	void *pages[NODE_BATCH];
	int fake = test_nodes();

	for (size_t i = 0; i < n; i += NODE_BATCH) {
		size_t m = n - i < NODE_BATCH ? n - i : NODE_BATCH;

		if (fake) {
			for (size_t j = 0; j < m; j++)
				nodes[i + j] = (int)(addrs[i + j] / 4096 % (uint64_t)fake);
			continue;
		}
		for (size_t j = 0; j < m; j++)
			pages[j] = (void *)(uintptr_t)addrs[i + j];
		/* No target nodes: a query; each status is a node or -errno. */
		if (syscall(SYS_move_pages, pid, (unsigned long)m, pages, NULL,
			    nodes + i, 0) < 0)
			return -1;
		for (size_t j = 0; j < m; j++)
			if (nodes[i + j] < 0)
				nodes[i + j] = -1;
	}
	return 0;
}

/* pagemap: bit 63 present, bits 0-54 the frame (zero unless root). */
#ifndef PM_PRESENT
#define PM_PRESENT (1ull << 63)
#endif
/* /proc/kpageflags: the page is part of a transparent huge page. */
#define KPF_THP (1ull << 22)

/* Whether frame @pfn is in a transparent huge page; -1 on a read error. */
static int pfn_thp(int kpf, uint64_t pfn)
{
	uint64_t flags;

	if (pread(kpf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
	    (ssize_t)sizeof(flags))
		return -1;
	return (flags & KPF_THP) != 0;
}

int proc_page_thp(int pid, const uint64_t *addrs, size_t n, unsigned char *thp)
{
	char path[64];
	uint64_t pm[512];
	int fd, kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	if (kpf < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		close(kpf);
		return -1;
	}
	for (size_t i = 0; i < n; ) {
		size_t run = 1;

		/* One read for a run of consecutive pages. */
		while (i + run < n && run < 512 && addrs[i + run] == addrs[i] + run * 4096)
			run++;
		if (pread(fd, pm, run * sizeof(*pm), (off_t)(addrs[i] / 4096 * 8)) !=
		    (ssize_t)(run * sizeof(*pm)))
			memset(pm, 0, sizeof(pm));
		for (size_t j = 0; j < run; j++)
			thp[i + j] = (pm[j] & PM_PRESENT) && (pm[j] & PM_PFN_MASK) &&
				     pfn_thp(kpf, pm[j] & PM_PFN_MASK) == 1;
		i += run;
	}
	close(fd);
	close(kpf);
	return 0;
}

size_t proc_mergeable_areas(int pid, uint64_t **area)
{
	char path[64], line[1024];
	unsigned long long start, end;
	size_t n = 0, cap = 0;
	FILE *f;

	*area = NULL;
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	start = end = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		int pos = 0;

		/* An area's first line is its maps line ("start-end perms"),
		 * VmFlags its last; other lines are "Name: value". */
		if (sscanf(line, "%llx-%llx %n", &a, &b, &pos) == 2 && pos) {
			start = a;
			end = b;
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) != 0 || !vmflag(line, "mg"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			*area = xreallocarray(*area, cap, 2 * sizeof(**area));
		}
		(*area)[2 * n] = start;
		(*area)[2 * n + 1] = end;
		n++;
	}
	fclose(f);
	return n;
}

uint64_t proc_zero_pfn(void)
{
	static uint64_t pfn = UINT64_MAX;
	volatile const unsigned char *page;
	uint64_t entry = 0;
	int fd;

	if (pfn != UINT64_MAX)
		return pfn;
	pfn = 0;
	/* A private anonymous page that is only read maps the zero page. */
	page = mmap(NULL, PAGE_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return pfn;
	(void)page[0];
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, &entry, sizeof(entry),
			     (off_t)((uintptr_t)page / PAGE_BYTES * sizeof(entry))) ==
	    (ssize_t)sizeof(entry) && (entry >> 63))
		pfn = entry & PM_PFN_MASK;	/* 0 unless CAP_SYS_ADMIN */
	if (fd >= 0)
		close(fd);
	munmap((void *)page, PAGE_BYTES);
	return pfn;
}

double proc_start_time(int pid)
{
	char buf[1024];
	unsigned long long start;
	const char *p = stat_fields(pid, buf, sizeof(buf));

	/* field 22, starttime */
	if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %*u %*u %*d %*d %*d %*d %*d %*d %llu", &start) != 1)
		return -1;
	return (double)start;
}

/* The most configuration text read: a kernel's .config is about 300 KB. */
#define CONFIG_MAX (8u << 20)

/* The whole of a small file, or NULL. */
static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "re");

	*len = 0;
	if (!f)
		return NULL;
	while (!feof(f) && !ferror(f) && cap < CONFIG_MAX) {
		cap = cap ? 2 * cap : 65536;
		buf = xreallocarray(buf, cap + 1, 1);
		*len += fread(buf + *len, 1, cap - *len, f);
	}
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* The running kernel's configuration as text: /proc/config.gz inflated, or
 * /boot/config-RELEASE; NULL if neither can be read. */
static char *config_text(void)
{
	size_t len, cap = CONFIG_MAX;
	unsigned char *gz = slurp("/proc/config.gz", &len);
	char *text, path[320];
	struct utsname u;
	z_stream z;

	if (!gz) {
		if (uname(&u) < 0)
			return NULL;
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		return (char *)slurp(path, &len);
	}
	memset(&z, 0, sizeof(z));
	text = xmalloc(cap + 1);
	/* 16 + window bits: the gzip wrapper */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(gz);
		free(text);
		return NULL;
	}
	z.next_in = gz;
	z.avail_in = (uInt)len;
	z.next_out = (unsigned char *)text;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_FINISH);
	text[cap - z.avail_out] = '\0';
	inflateEnd(&z);
	free(gz);
	return text;
}

/* A line of the running kernel's configuration: 1 and its value in @val,
 * 0 if it is not set, -1 if the configuration cannot be read. */
static int kernel_config(const char *name, char *val, size_t len)
{
	char *text = config_text();
	size_t nlen = strlen(name);
	int found = 0;

	if (!text)
		return -1;
	for (const char *line = text; *line && !found;
	     line += strcspn(line, "\n"), line += *line == '\n') {
		if (strncmp(line, name, nlen) == 0 && line[nlen] == '=') {
			snprintf(val, len, "%.*s", (int)strcspn(line + nlen + 1, "\n"),
				 line + nlen + 1);
			found = 1;
		}
	}
	free(text);
	return found;
}

/* "now at N nsecs" and the first "jiffies: J" of /proc/timer_list. */
static int timer_list(double *seconds, unsigned long long *jiffies)
{
	char line[256];
	unsigned long long ns;
	int have = 0;
	FILE *f = fopen("/proc/timer_list", "re");

	if (!f)
		return -1;
	while (have != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "now at %llu nsecs", &ns) == 1) {
			*seconds = (double)ns * 1e-9;
			have |= 1;
		} else if (sscanf(line, "jiffies: %llu", jiffies) == 1) {
			have |= 2;
		}
	}
	fclose(f);
	return have == 3 ? 0 : -1;
}

unsigned kernel_hz(void)
{
	static const unsigned known[] = { 100, 250, 300, 1000 };
	char val[32];
	double t0, t1;
	unsigned long long j0, j1;
	unsigned best = 0;

	if (kernel_config("CONFIG_HZ", val, sizeof(val)) == 1 && atoi(val) > 0)
		return (unsigned)atoi(val);
	/* No configuration: count the jiffies of 100 ms (root only). */
	if (timer_list(&t0, &j0) < 0)
		return 0;
	sleep_until(now_seconds() + 0.1);
	if (timer_list(&t1, &j1) < 0 || t1 - t0 < 0.05)
		return 0;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		double hz = (double)(j1 - j0) / (t1 - t0);

		if (!best || fabs(hz - known[i]) < fabs(hz - best))
			best = known[i];
	}
	return best;
}

int kernel_soft_dirty(void)
{
	char val[8];
	int r = kernel_config("CONFIG_MEM_SOFT_DIRTY", val, sizeof(val));

	return r < 0 ? -1 : r == 1 && val[0] == 'y';
}

double ksmd_cpu_seconds(void)
{
	size_t n;
	int *pids = procs_pids(&n);
	double cpu = 0;

	for (size_t i = 0; i < n && !cpu; i++) {
		char comm[32], path[64];
		unsigned long long ns;
		FILE *f;

		if (proc_comm(pids[i], comm, sizeof(comm)) < 0 || strcmp(comm, "ksmd"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/schedstat", pids[i]);
		f = fopen(path, "re");
		if (f && fscanf(f, "%llu", &ns) == 1)
			cpu = (double)ns * 1e-9;
		if (f)
			fclose(f);
	}
	free(pids);
	return cpu;
}

int host_meminfo(uint64_t *total_kb, uint64_t *free_kb)
{
	/* ksmtuned's free memory: MemFree + Buffers + Cached. */
	static const char *const keys[] = { "MemTotal", "MemFree", "Buffers", "Cached" };
	unsigned long long kb[4];
	int found = meminfo_kb(keys, kb, 4);

	if (found < 0 || !(found & 1))
		return -1;
	*total_kb = kb[0];
	*free_kb = kb[1] + kb[2] + kb[3];
	return 0;
}
