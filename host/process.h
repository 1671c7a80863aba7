/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HOST_PROCESS_H
#define KSMSCAN_HOST_PROCESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Live processes beyond their memory (process.c): their state, why one
 * cannot be read, the kernel's own KSM figures for a process, and the
 * processes -P and --all-processes take.
 */

/* A live process's KSM state as the kernel reports it, read at its open. */
struct proc_stats {
	int valid;			/* 1: a live process, the rest was read */
	char command[64];		/* /proc/PID/comm, without its newline */
	uint64_t mergeable_pages;	/* resident pages (Rss) of the areas whose
					 * smaps VmFlags hold "mg" (VM_MERGEABLE) */
	uint64_t thp_pages;		/* AnonHugePages in smaps, in 4 KiB pages:
					 * inside transparent huge pages, which
					 * KSM splits to merge */
	uint64_t ksm_merging_pages;	/* /proc/PID/ksm_merging_pages */
	uint64_t ksm_rmap_items;	/* ksm_rmap_items in /proc/PID/ksm_stat */
};

/* A process's KSM figures as /proc/PID/ksm_stat has them (Linux 6.1+). */
struct proc_ksm_stat {
	uint64_t rmap_items;		/* ksm_rmap_items */
	uint64_t merging_pages;		/* ksm_merging_pages */
	uint64_t zero_pages;		/* ksm_zero_pages (6.10+; else 0) */
	int64_t process_profit;		/* ksm_process_profit (6.4+) */
};

/**
 * proc_stats_read() - read a process's KSM state. Files this kernel lacks
 * (ksm_stat before Linux 6.1) leave their figures 0.
 * @pid: the process
 * @st: filled in; valid is 1 even if some files could not be read
 */
void proc_stats_read(int pid, struct proc_stats *st);

/**
 * proc_ksm_stat() - read a process's /proc/PID/ksm_stat.
 * @pid: the process
 * @st: filled in; figures the file lacks are 0
 *
 * Return: 0, or -1 if the process or the file is gone.
 */
int proc_ksm_stat(int pid, struct proc_ksm_stat *st);

/**
 * proc_stat() - the state letter and flags of /proc/PID/stat.
 * @pid: the process
 * @state: its state letter (R, S, Z, ...)
 * @flags: its task flags (PF_KTHREAD for a kernel thread)
 *
 * Return: 0, or -1 if the process is gone.
 */
int proc_stat(int pid, char *state, unsigned long *flags);

/**
 * proc_family() - the process a process was forked from, as far as the
 * fork shares memory: its parent, its parent's parent... while they run
 * the same command (/proc/PID/comm), the oldest of them. A prefork
 * server's workers and its master are one family; an unrelated process
 * is a family of its own.
 * @pid: the process
 *
 * Return: the family's oldest process (@pid itself if its parent runs
 * another command or cannot be read).
 */
int proc_family(int pid);

/**
 * proc_comm() - a process's command name (/proc/PID/comm).
 * @pid: the process
 * @buf: set to the name, without its newline ("" if unreadable)
 * @len: size of @buf
 *
 * Return: 0, or -1 if the process is gone.
 */
int proc_comm(int pid, char *buf, size_t len);

/* The files of a process's memory that its reader opens (proc(5)). */
enum proc_memory_file { PROC_MAPS, PROC_MEM, PROC_PAGEMAP };

/**
 * proc_memory_open() - open a process's maps, mem or pagemap read-only.
 * @pid: the process
 * @which: the file
 *
 * Return: the descriptor, or -1 with errno (proc_why_unreadable() says
 * why in words).
 */
int proc_memory_open(int pid, enum proc_memory_file which);

/**
 * proc_memory_path() - the file's path as a message names it:
 * "/proc/PID/maps", whatever root the host is read under.
 * @pid: the process
 * @which: the file
 * @buf: filled in
 * @len: its size
 *
 * Return: @buf.
 */
const char *proc_memory_path(int pid, enum proc_memory_file which, char *buf,
			     size_t len);

/**
 * proc_exited() - whether a process is gone, a zombie or exiting (no memory
 * left, or about to have none).
 * @pid: the process
 */
int proc_exited(int pid);

/**
 * proc_why_unreadable() - why a process's /proc files could not be opened,
 * in words: no such process, a kernel thread, a zombie or an exiting process
 * (whoever asks),
 * or why reading another process's memory was refused (Yama, a missing
 * CAP_SYS_PTRACE, another user).
 * @pid: the process
 * @err: the errno of the failed open()
 */
const char *proc_why_unreadable(int pid, int err);

/**
 * proc_start_time() - when a process started (/proc/PID/stat starttime,
 * in clock ticks after boot), or -1 if it is gone.
 * @pid: the process
 */
double proc_start_time(int pid);

/**
 * proc_resident_pages() - a process's resident pages (/proc/PID/statm).
 * @pid: the process
 *
 * Return: the pages, or 0 if it cannot be read.
 */
uint64_t proc_resident_pages(int pid);

/* What matching -P's pattern against every process may take. */
#define PROCS_MATCH_BYTES (64 << 20)
#define PROCS_MATCH_SECONDS 5

/**
 * procs_list() - the processes -P REGEX or --all-processes take, in
 * ascending pid order. Kernel threads, zombies, ksmscan itself and
 * processes that vanish while they are listed are left out silently; those
 * whose memory this user may not read are left out with one warning for
 * all of them: how many and why (for one, its pid and command).
 * @regex: a POSIX extended regular expression matched against the command
 *	name (/proc/PID/comm; unanchored, as grep -E), or NULL for every process
 * @n: set to how many
 * @why: for a bad regular expression, what is wrong (at most @len bytes)
 * @len: size of @why
 *
 * The pattern is compiled and matched in a child process under a limit of
 * PROCS_MATCH_BYTES more memory and PROCS_MATCH_SECONDS: past either, it is
 * refused (@why says so).
 *
 * Return: the pids (free them), or NULL for a bad or refused regular
 * expression.
 */
int *procs_list(const char *regex, size_t *n, char *why, size_t len);

/**
 * procs_pids() - every pid /proc lists, ascending.
 * @n: set to how many
 *
 * Return: the pids (free them).
 */
int *procs_pids(size_t *n);

/**
 * smaps_vmflag() - whether a smaps "VmFlags:" line holds a flag.
 * @line: the line
 * @flag: the two-letter flag, as "mg" (VM_MERGEABLE)
 */
int smaps_vmflag(const char *line, const char *flag);

#endif
