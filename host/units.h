/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_UNITS_H
#define KSMSCAN_UNITS_H

#include <stddef.h>

/*
 * The units of work a live process belongs to (units.c): its cgroup, the
 * systemd unit, the container and the virtual machine, as /proc/PID/cgroup
 * and /proc/PID/cmdline name them. These are what operators configure KSM
 * for (MemoryKSM= per unit, a container, a libvirt domain), so --by and
 * --enable count processes by them. Only libc: tests/unit_units.c includes
 * this file's code as it is.
 */

/*
 * The kinds of unit, as --by names them and their rows are prefixed. A
 * user manager's unit (below user@UID.service) is a "user-unit", named
 * "UID:UNIT", never a system "unit"; a virtual machine whose name the
 * system cannot vouch for (unit_read()) is a "user-vm", "UID:NAME". A uid
 * holds no ':', so the first ':' of such a name ends it.
 */
enum unit_kind {
	UNIT_CGROUP, UNIT_UNIT, UNIT_CONTAINER, UNIT_VM, UNIT_USER_UNIT,
	UNIT_USER_VM, UNIT_KINDS
};

/* What a process belongs to; an empty name: none of that kind. */
struct proc_unit {
	char name[UNIT_KINDS][256];	/* by enum unit_kind */
	int ppid;			/* its parent (0 if unknown) */
	int vmm;			/* a virtual machine monitor (QEMU) */
};

/**
 * unit_kind_name() - "cgroup", "unit", "container", "vm", "user-unit" or
 * "user-vm".
 * @k: the kind
 */
const char *unit_kind_name(enum unit_kind k);

/**
 * unit_kind_lookup() - a kind by its name.
 * @name: the name, not necessarily NUL-terminated
 * @len: its length
 *
 * Return: the kind, or -1.
 */
int unit_kind_lookup(const char *name, size_t len);

/**
 * unit_parse_cgroup() - the cgroup, systemd unit and container of a
 * process from the text of its /proc/PID/cgroup. The cgroup is cgroup2's
 * ("0::PATH"), unless that is the root and a v1 hierarchy says more (the
 * hybrid layout: name=systemd, then memory); on a v1-only host the same
 * two. The unit is the innermost ".service" or ".scope" of that path (a
 * slice alone when there is none); below a user manager's
 * "user@UID.service" it is a user-unit "UID:UNIT" instead (a user names
 * what it delegates as it likes), and a libvirt scope there a user-vm
 * "UID:NAME"; the container is the id of a docker,
 * podman, containerd or CRI-O container in it (12 hex digits, as docker
 * ps shows), or a Kubernetes pod's uid ("pod" UID) when no container
 * is named; a libvirt machine scope names a virtual machine.
 * @text: the file's text, NUL-terminated
 * @u: its names are set (ppid and vmm untouched)
 */
void unit_parse_cgroup(const char *text, struct proc_unit *u);

/**
 * unit_parse_cmdline() - the virtual machine a QEMU process runs, from its
 * command line: "-name guest=NAME,..." or "-name NAME" (",," stands for a
 * comma, as in QEMU's options). A process whose program is not QEMU is
 * left as it is.
 * @args: the NUL-separated arguments of /proc/PID/cmdline
 * @len: their bytes, the last a NUL (else nothing is read)
 * @u: vmm and the vm name are set for QEMU
 */
void unit_parse_cmdline(const char *args, size_t len, struct proc_unit *u);

/**
 * unit_read() - what process @pid belongs to, from /proc. A VM's name from
 * a command line is trusted only when /proc/PID/exe is a VMM's binary
 * owned by root and writable by no one else (unit_trusted_exe()) and the
 * process runs in a system unit outside user.slice or a libvirt machine
 * scope; else the name is a user-vm's, "UID:NAME", UID the process's real
 * uid ("?" if unreadable).
 * @pid: the process
 * @u: filled in
 *
 * Return: 0, or -1 if the process is gone (@u is then empty).
 */
int unit_read(int pid, struct proc_unit *u);

/**
 * unit_trusted_exe() - whether a process's executable, as stat() of
 * /proc/PID/exe sees it, is a VMM binary of the system: a regular file
 * owned by root, writable by neither group nor others, whose name
 * (readlink, " (deleted)" aside) starts with qemu, cloud-hypervisor,
 * firecracker or crosvm. argv[0] counts for nothing.
 * @pid: the process
 */
int unit_trusted_exe(int pid);

#endif
