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

/* The kinds of unit, as --by names them and their rows are prefixed. */
enum unit_kind { UNIT_CGROUP, UNIT_UNIT, UNIT_CONTAINER, UNIT_VM, UNIT_KINDS };

/* What a process belongs to; an empty name: none of that kind. */
struct proc_unit {
	char name[UNIT_KINDS][256];	/* by enum unit_kind */
	int ppid;			/* its parent (0 if unknown) */
	int vmm;			/* a virtual machine monitor (QEMU) */
};

/**
 * unit_kind_name() - "cgroup", "unit", "container" or "vm".
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
 * slice alone when there is none); the container is the id of a docker,
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
 * unit_read() - what process @pid belongs to, from /proc.
 * @pid: the process
 * @u: filled in
 *
 * Return: 0, or -1 if the process is gone (@u is then empty).
 */
int unit_read(int pid, struct proc_unit *u);

#endif
