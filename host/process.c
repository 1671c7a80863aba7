/* SPDX-License-Identifier: MIT */
/*
 * Live processes beyond their memory (process.h): their state, why one
 * cannot be read, the kernel's KSM figures for one, and the list of
 * processes -P and --all-processes take.
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
#include "host.h"
#include "process.h"

/* PF_KTHREAD in the flags of /proc/PID/stat (include/linux/sched.h). */
#define PF_KTHREAD 0x00200000u
/* CAP_SYS_PTRACE's bit in the capability sets of /proc/self/status. */
#define CAP_SYS_PTRACE_BIT 19

/* /proc/PID/stat read into @buf: the fields after the command name (which
 * may hold anything, so past its last ')'), or NULL if the process is gone. */
static const char *stat_fields(int pid, char *buf, size_t len)
{
	FILE *f;
	size_t n;
	char *p;

	f = host_fopen("/proc/%d/stat", pid);
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

/* The parent of @pid (/proc/PID/stat), or 0. */
static int proc_parent(int pid)
{
	char buf[1024], state;
	const char *p = stat_fields(pid, buf, sizeof(buf));
	int ppid;

	if (!p || sscanf(p, " %c %d", &state, &ppid) != 2)
		return 0;
	return ppid;
}

int proc_family(int pid)
{
	char comm[64], up[64];

	if (proc_comm(pid, comm, sizeof(comm)) < 0)
		return pid;
	/* At most a few hundred generations: a pid cycle cannot hold it. */
	for (int depth = 0; depth < 256; depth++) {
		int parent = proc_parent(pid);

		if (parent <= 1 || proc_comm(parent, up, sizeof(up)) < 0 ||
		    strcmp(up, comm) != 0)
			break;
		pid = parent;
	}
	return pid;
}

/* Whether this process has CAP_SYS_PTRACE in its effective set. */
static int proc_have_ptrace_cap(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = host_fopen("/proc/self/status");

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps >> CAP_SYS_PTRACE_BIT & 1;
}

/* kernel.yama.ptrace_scope, or -1 without Yama. */
static int proc_yama_scope(void)
{
	return host_read_int("/proc/sys/kernel/yama/ptrace_scope");
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
	char line[256];
	unsigned long long v = 0;
	size_t klen = strlen(key);
	FILE *f;

	f = host_fopen("/proc/%d/%s", pid, name);
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
int smaps_vmflag(const char *line, const char *flag)
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
	char line[1024];
	unsigned long long rss = 0, kb;
	FILE *f;

	f = host_fopen("/proc/%d/smaps", pid);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			rss = kb;
		else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			st->thp_pages += kb / 4;
		else if (strncmp(line, "VmFlags:", 8) == 0 && smaps_vmflag(line, "mg"))
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

int proc_ksm_stat(int pid, struct proc_ksm_stat *st)
{
	static const char *const keys[] = {
		"ksm_rmap_items", "ksm_merging_pages", "ksm_zero_pages",
		"ksm_process_profit",
	};
	long long v[4] = { 0 };
	char line[256];
	FILE *f;

	f = host_fopen("/proc/%d/ksm_stat", pid);
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

int proc_comm(int pid, char *buf, size_t len)
{
	FILE *f;

	f = host_fopen("/proc/%d/comm", pid);
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
	int fd;

	fd = host_open("/proc/%d/mem", pid);
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

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The pids in /proc, ascending; *n set to how many. */
int *procs_pids(size_t *n)
{
	DIR *dir = host_opendir("/proc");
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

int *procs_list(const char *regex, size_t *n, char *why, size_t len)
{
	regex_t re;
	size_t npids;
	int *pids, rc;

	*n = 0;
	if (regex && (rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) != 0) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		snprintf(why, len, "bad regular expression '%.60s': %s", regex, msg);
		return NULL;
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
		pids[(*n)++] = pids[i];	/* kept in place: ascending still */
	}
	if (regex)
		regfree(&re);
	return pids;
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

uint64_t proc_resident_pages(int pid)
{
	unsigned long long size, resident;
	FILE *f;
	int n;

	if (!(f = host_fopen("/proc/%d/statm", pid)))
		return 0;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return n == 2 ? (uint64_t)resident : 0;
}
