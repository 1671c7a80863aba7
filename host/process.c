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
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/util.h"
#include "host.h"
#include "process.h"

/* PF_EXITING and PF_KTHREAD in the flags of /proc/PID/stat
 * (include/linux/sched.h). */
#define PF_EXITING 0x00000004u
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
	if (flags & PF_EXITING)
		return "process exiting, its memory released";
	if (err == EACCES || err == EPERM)
		return proc_why_denied();
	return strerror(err);
}

/* The names of enum proc_memory_file's files under /proc/PID. */
static const char *const memory_files[] = {
	[PROC_MAPS] = "maps", [PROC_MEM] = "mem", [PROC_PAGEMAP] = "pagemap",
};

int proc_memory_open(int pid, enum proc_memory_file which)
{
	return host_open("/proc/%d/%s", pid, memory_files[which]);
}

const char *proc_memory_path(int pid, enum proc_memory_file which, char *buf,
			     size_t len)
{
	snprintf(buf, len, "/proc/%d/%s", pid, memory_files[which]);
	return buf;
}

/*
 * A process that exits sets PF_EXITING first and releases its memory next,
 * while its state still reads R or D: from then on /proc/PID/mem answers
 * ESRCH, well before the process becomes a zombie.
 */
int proc_exited(int pid)
{
	char state;
	unsigned long flags;

	return proc_stat(pid, &state, &flags) < 0 || state == 'Z' ||
	       state == 'X' || (flags & PF_EXITING);
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
	size_t n;

	f = host_fopen("/proc/%d/comm", pid);
	if (!f)
		return -1;
	/* The kernel ends the name with a line break; one within it is its
	 * own (prctl(PR_SET_NAME) takes any byte but NUL). */
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	if (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

/*
 * Whether this user may read the process's memory: opening /proc/PID/mem
 * makes the kernel's ptrace access check. 1 yes, 0 refused, -1 gone.
 */
static int proc_readable(int pid)
{
	int fd;

	fd = host_open("/proc/%d/mem", pid);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EACCES || errno == EPERM ? 0 : -1;
}

/*
 * The processes procs_list() left out because their memory may not be read,
 * said in one line however many they are (a normal user's --all-processes
 * meets dozens): for one, its pid and command too. -q keeps it: without
 * it, the rows of what could be read pass for the whole host.
 */
static void warn_denied(size_t n, int pid, const char *comm)
{
	int scope = proc_yama_scope();

	if (n == 0)
		return;
	if (n == 1)
		warn_kept("pid:%d (%s) could not be read: %s", pid, comm, proc_why_denied());
	else if (geteuid() != 0 && scope < 3)
		warn_kept("%zu processes could not be read (permission denied): run as root", n);
	else
		warn_kept("%zu processes could not be read: %s", n, proc_why_denied());
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

/* What the child that matches -P's pattern sends first: regcomp()'s result
 * and, if it failed, why; then a struct procs_denied, then the pids. */
struct match_head {
	int rc;
	char msg[128];
};

/* The processes left out because their memory may not be read. */
struct procs_denied {
	size_t n;
	int pid;		/* the first of them */
	char comm[64];		/* its command */
};

/* The address space the child may add to what it has: PROCS_MATCH_BYTES. */
static void limit_memory(void)
{
	unsigned long long pages = 0;
	struct rlimit r;
	/* ksmscan's own size now, not the host's: no host root here. */
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return;
	if (fscanf(f, "%llu", &pages) == 1) {
		r.rlim_cur = r.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
					  PROCS_MATCH_BYTES;
		setrlimit(RLIMIT_AS, &r);
	}
	fclose(f);
}

/*
 * Keep those of the @n pids (ascending, kept so) that -P's compiled @re (or
 * NULL: every one) takes, ksmscan (@self) left out; count in @d those that
 * may not be read. Return: how many, or -1 when matching ran out of memory.
 */
static ssize_t procs_keep(const regex_t *re, int *pids, size_t n, int self,
			  struct procs_denied *d)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		char comm[64], state;
		unsigned long flags;
		int rc;

		if (pids[i] == self || proc_stat(pids[i], &state, &flags) < 0 ||
		    (flags & PF_KTHREAD) || state == 'Z' || state == 'X' ||
		    proc_comm(pids[i], comm, sizeof(comm)) < 0)
			continue;
		if ((rc = re ? regexec(re, comm, 0, NULL, 0) : 0) == REG_ESPACE)
			return -1;
		if (rc != 0)
			continue;
		/* One that exits as it is listed may refuse its own user. */
		if ((rc = proc_readable(pids[i])) == 0 && proc_exited(pids[i]))
			rc = -1;
		if (rc <= 0) {
			if (rc == 0 && d->n++ == 0) {
				d->pid = pids[i];
				memcpy(d->comm, comm, sizeof(comm));
			}
			continue;
		}
		pids[kept++] = pids[i];
	}
	return (ssize_t)kept;
}

/* Write all @len bytes at @p to @fd, or end the (child) process. */
static void write_all(int fd, const void *p, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const char *)p + done, len - done);

		if (w <= 0)
			_exit(1);
		done += (size_t)w;
	}
}

/* In the child: compile @regex, match every process, send the result to
 * @fd; never returns. */
static void procs_match(const char *regex, int fd)
{
	struct match_head h = { 0 };
	struct procs_denied d = { 0 };
	size_t npids;
	ssize_t kept;
	int *pids;
	regex_t re;

	/* Nothing here speaks: an allocator that runs out of memory and says
	 * so at length (a sanitizer's) would be more than the one line. */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (null >= 0)
		dup2(null, STDERR_FILENO);
	limit_memory();
	alarm(PROCS_MATCH_SECONDS);
	if ((h.rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) != 0)
		regerror(h.rc, &re, h.msg, sizeof(h.msg));
	write_all(fd, &h, sizeof(h));
	if (h.rc)
		_exit(h.rc == REG_ESPACE ? 3 : 0);
	pids = procs_pids(&npids);
	kept = procs_keep(&re, pids, npids, getppid(), &d);
	if (kept < 0)
		_exit(3);
	write_all(fd, &d, sizeof(d));
	write_all(fd, pids, (size_t)kept * sizeof(int));
	_exit(0);
}

/* All that @fd gives until its end, in *@len bytes. */
static unsigned char *read_all(int fd, size_t *len)
{
	size_t cap = 4096;
	unsigned char *buf = xmalloc(cap);
	ssize_t n;

	*len = 0;
	for (;;) {
		if (*len == cap)
			buf = xreallocarray(buf, cap *= 2, 1);
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return buf;
		*len += (size_t)n;
	}
}

/* Run procs_match() in a child; what it sent in *@got bytes (free it), or
 * NULL with @why. */
static unsigned char *procs_match_child(const char *regex, size_t *got,
					char *why, size_t len)
{
	struct match_head h;
	unsigned char *buf;
	int fds[2], status = 0;
	pid_t child;

	fflush(stderr);
	if (pipe(fds) < 0 || (child = fork()) < 0) {
		snprintf(why, len, "-P: cannot start matching: %s", strerror(errno));
		return NULL;
	}
	if (child == 0) {
		close(fds[0]);
		procs_match(regex, fds[1]);
	}
	close(fds[1]);
	buf = read_all(fds[0], got);
	close(fds[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (*got >= sizeof(h))
		memcpy(&h, buf, sizeof(h));
	if (*got >= sizeof(h) && h.rc && h.rc != REG_ESPACE)
		snprintf(why, len, "bad regular expression '%.60s': %s", regex, h.msg);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) ||
		 *got < sizeof(h) + sizeof(struct procs_denied))
		snprintf(why, len, "-P '%.60s'%s: the pattern needs more than %d MiB "
			 "or %d s to match the processes' names: refused", regex,
			 strlen(regex) > 60 ? "..." : "", PROCS_MATCH_BYTES >> 20,
			 PROCS_MATCH_SECONDS);
	else
		return buf;
	free(buf);
	return NULL;
}

int *procs_list(const char *regex, size_t *n, char *why, size_t len)
{
	struct procs_denied d = { 0 };
	unsigned char *buf;
	size_t got, at = sizeof(struct match_head) + sizeof(d);
	int *pids;

	*n = 0;
	if (!regex) {
		pids = procs_pids(&got);
		*n = (size_t)procs_keep(NULL, pids, got, getpid(), &d);
		warn_denied(d.n, d.pid, d.comm);
		return pids;
	}
	/* Matching is done in a child under a memory limit and a timer: a
	 * pattern such as ((a{99}){99}){99} compiles to gigabytes. */
	if (!(buf = procs_match_child(regex, &got, why, len)))
		return NULL;
	memcpy(&d, buf + sizeof(struct match_head), sizeof(d));
	*n = (got - at) / sizeof(int);
	pids = xcalloc(*n + 1, sizeof(int));
	memcpy(pids, buf + at, *n * sizeof(int));
	free(buf);
	warn_denied(d.n, d.pid, d.comm);
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
