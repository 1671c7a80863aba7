/* SPDX-License-Identifier: MIT */
/*
 * What a live process belongs to: its cgroup, systemd unit, container and
 * virtual machine, read from /proc/PID/cgroup and /proc/PID/cmdline. Only
 * libc, so that tests/unit_units.c can test the parsers on fixed texts of
 * every cgroup layout (cgroup2 alone, hybrid, v1 only).
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "units.h"

static const char *const kind_names[UNIT_KINDS] = {
	[UNIT_CGROUP] = "cgroup", [UNIT_UNIT] = "unit",
	[UNIT_CONTAINER] = "container", [UNIT_VM] = "vm",
	[UNIT_USER_UNIT] = "user-unit", [UNIT_USER_VM] = "user-vm",
};

const char *unit_kind_name(enum unit_kind k)
{
	return kind_names[k];
}

int unit_kind_lookup(const char *name, size_t len)
{
	for (int k = 0; k < UNIT_KINDS; k++)
		if (strlen(kind_names[k]) == len && strncmp(kind_names[k], name, len) == 0)
			return k;
	return -1;
}

/* Copy @len bytes of @s into @dst (256 bytes), cut if longer. */
static void set_name(char *dst, const char *s, size_t len)
{
	snprintf(dst, 256, "%.*s", (int)(len > 255 ? 255 : len), s);
}

/* "UID:" then @len bytes of @s into @dst (256 bytes), cut if longer: the
 * name of a user's unit or VM (a uid holds no ':'). */
static void set_user_name(char *dst, const char *uid, const char *s, size_t len)
{
	char name[256];

	set_name(name, s, len);
	snprintf(dst, 256, "%s:%.*s", uid, (int)(254 - strlen(uid)), name);
}

/* Whether @s (@len bytes) ends with @suffix. */
static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && strncmp(s + len - n, suffix, n) == 0;
}

/* Whether @len bytes of @s are all hex digits. */
static int all_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return len > 0;
}

/*
 * A container's id in one path component: "docker-ID.scope" (docker with
 * systemd), "libpod-ID.scope" (podman), "cri-containerd-ID.scope",
 * "crio-ID.scope", or the bare ID of the cgroupfs drivers (/docker/ID,
 * /kubepods/.../ID). The conmon monitors ("libpod-conmon-ID") are not the
 * container. Return: the id's start (64 hex digits), or NULL.
 */
static const char *container_id(const char *c, size_t len)
{
	static const char *const prefixes[] = {
		"docker-", "libpod-", "cri-containerd-", "crio-", "containerd-", "",
	};

	if (ends_with(c, len, ".scope"))
		len -= strlen(".scope");
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (len == n + 64 && strncmp(c, prefixes[i], n) == 0 &&
		    all_hex(c + n, 64))
			return c + n;
	}
	return NULL;
}

/* A Kubernetes pod's uid in one component ("kubepods-burstable-podUID.slice"
 * with systemd, underscores for its dashes; "podUID" with cgroupfs), as
 * "podUID" in @out; 0 if none. */
static int pod_uid(const char *c, size_t len, char *out)
{
	const char *p = NULL;

	if (len > 3 && strncmp(c, "pod", 3) == 0)
		p = c + 3;
	for (size_t i = 0; !p && i + 4 < len; i++)
		if (strncmp(c + i, "-pod", 4) == 0)
			p = c + i + 4;
	if (!p)
		return 0;
	len -= (size_t)(p - c);
	if (ends_with(p, len, ".slice"))
		len -= strlen(".slice");
	if (len < 32 || len > 40 || strspn(p, "0123456789abcdef-_") < len)
		return 0;
	set_name(out, "pod", 3);
	for (size_t i = 0; i < len; i++)
		out[3 + i] = p[i] == '_' ? '-' : p[i];
	out[3 + len] = '\0';
	return 1;
}

/*
 * A libvirt domain from its machine scope: "machine-qemu\x2d1\x2dNAME.scope"
 * (systemd escapes '-' as \x2d) or "qemu-1-NAME.libvirt-qemu" (cgroupfs);
 * the name after "qemu-ID-". 0 if @c is not one.
 */
static int libvirt_domain(const char *c, size_t len, char *out)
{
	char plain[256];
	size_t n = 0;
	const char *p;

	if (strncmp(c, "machine-", 8) == 0 && ends_with(c, len, ".scope")) {
		c += 8;
		len -= 8 + strlen(".scope");
	} else if (ends_with(c, len, ".libvirt-qemu")) {
		len -= strlen(".libvirt-qemu");
	} else {
		return 0;
	}
	for (size_t i = 0; i < len && n < sizeof(plain) - 1; i++) {
		unsigned x;

		if (c[i] == '\\' && i + 3 < len && c[i + 1] == 'x' &&
		    sscanf(c + i + 2, "%2x", &x) == 1) {
			plain[n++] = (char)x;
			i += 3;
		} else {
			plain[n++] = c[i];
		}
	}
	plain[n] = '\0';
	if (strncmp(plain, "qemu-", 5) != 0 || !(p = strchr(plain + 5, '-')) ||
	    p == plain + 5 || !p[1])
		return 0;
	set_name(out, p + 1, strlen(p + 1));
	return 1;
}

/* A user manager's unit, "user@UID.service": the UID into @uid (16 bytes);
 * 0 if @c is not one. */
static int user_manager(const char *c, size_t len, char *uid)
{
	size_t n = len - strlen("user@.service");

	if (len <= strlen("user@.service") || strncmp(c, "user@", 5) != 0 ||
	    !ends_with(c, len, ".service") || n > 10 ||
	    strspn(c + 5, "0123456789") < n)
		return 0;
	memcpy(uid, c + 5, n);
	uid[n] = '\0';
	return 1;
}

/* The unit of one path component @c (@len bytes): the system's, or below
 * user@UID.service (@uid not empty) the user manager's. */
static void set_unit(struct proc_unit *u, const char *uid, const char *c,
		     size_t len)
{
	if (*uid)
		set_user_name(u->name[UNIT_USER_UNIT], uid, c, len);
	else
		set_name(u->name[UNIT_UNIT], c, len);
}

/* The names in one cgroup path: the innermost of each kind wins. Below a
 * user manager, the units and libvirt scopes are the user's: a user may
 * name what is delegated to it as it likes. */
static void units_of_path(const char *path, size_t plen, struct proc_unit *u)
{
	const char *slice = NULL, *id;
	size_t slice_len = 0;
	char uid[16] = "", vm[256];

	set_name(u->name[UNIT_CGROUP], path, plen);
	for (const char *c = path, *end = path + plen; c < end; ) {
		size_t len = strcspn(c, "/");

		if (len > (size_t)(end - c))
			len = (size_t)(end - c);
		if (!*uid && user_manager(c, len, uid)) {
			set_name(u->name[UNIT_UNIT], c, len);
			slice = NULL;
		} else if (ends_with(c, len, ".service") || ends_with(c, len, ".scope")) {
			set_unit(u, uid, c, len);
		} else if (ends_with(c, len, ".slice")) {
			slice = c;
			slice_len = len;
		}
		if ((id = container_id(c, len)))
			set_name(u->name[UNIT_CONTAINER], id, 12);
		else if (!u->name[UNIT_CONTAINER][0] ||
			 strncmp(u->name[UNIT_CONTAINER], "pod", 3) == 0)
			pod_uid(c, len, u->name[UNIT_CONTAINER]);
		if (libvirt_domain(c, len, vm)) {
			if (*uid)
				set_user_name(u->name[UNIT_USER_VM], uid, vm, strlen(vm));
			else
				set_name(u->name[UNIT_VM], vm, strlen(vm));
		}
		c += len + 1;
	}
	if (*uid && (u->name[UNIT_USER_UNIT][0] || slice))
		u->name[UNIT_UNIT][0] = '\0';	/* in the user's unit only */
	if (!u->name[UNIT_UNIT][0] && !u->name[UNIT_USER_UNIT][0] && slice)
		set_unit(u, uid, slice, slice_len);
}

/* Whether a v1 line's controller list (@len bytes) holds @want. */
static int has_controller(const char *list, size_t len, const char *want)
{
	size_t wl = strlen(want);

	for (const char *p = list, *end = list + len; p < end; ) {
		size_t n = strcspn(p, ",:");

		if (n == wl && strncmp(p, want, wl) == 0)
			return 1;
		p += n + 1;
	}
	return 0;
}

void unit_parse_cgroup(const char *text, struct proc_unit *u)
{
	/* cgroup2's path, name=systemd's, memory's: the first not "/" wins. */
	const char *best[3] = { NULL, NULL, NULL };
	size_t blen[3] = { 0, 0, 0 };

	for (int k = 0; k < UNIT_KINDS; k++)
		u->name[k][0] = '\0';
	for (const char *line = text; *line; ) {
		size_t len = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', len), *c2;
		int which = -1;

		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2 && c2 == c1 + 1 && strncmp(line, "0:", 2) == 0)
			which = 0;
		else if (c2 && has_controller(c1 + 1, (size_t)(c2 - c1 - 1), "name=systemd"))
			which = 1;
		else if (c2 && has_controller(c1 + 1, (size_t)(c2 - c1 - 1), "memory"))
			which = 2;
		if (which >= 0) {
			best[which] = c2 + 1;
			blen[which] = len - (size_t)(c2 + 1 - line);
		}
		line += len + (line[len] == '\n');
	}
	for (int i = 0; i < 3; i++)
		if (best[i] && !(blen[i] == 1 && best[i][0] == '/')) {
			units_of_path(best[i], blen[i], u);
			return;
		}
	set_name(u->name[UNIT_CGROUP], "/", 1);
}

/* QEMU's -name value: "guest=NAME,..." or "NAME,...", ",," a comma. */
static void qemu_name(const char *v, char *out)
{
	char opt[256];
	int first = 1;

	while (*v) {
		size_t n = 0;

		for (; *v && !(*v == ',' && v[1] != ','); v++) {
			if (*v == ',')
				v++;	/* ",," */
			if (n < sizeof(opt) - 1)
				opt[n++] = *v;
		}
		opt[n] = '\0';
		if (*v)
			v++;
		if (strncmp(opt, "guest=", 6) == 0) {
			set_name(out, opt + 6, n - 6);
			return;
		}
		if (first && !strchr(opt, '='))
			set_name(out, opt, n);
		first = 0;
	}
}

/* Whether a program's path names a virtual machine monitor. */
static int vmm_program(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "qemu", 4) == 0 ||
	       strncmp(base, "cloud-hypervisor", 16) == 0 ||
	       strncmp(base, "firecracker", 11) == 0 || strncmp(base, "crosvm", 6) == 0;
}

void unit_parse_cmdline(const char *args, size_t len, struct proc_unit *u)
{
	const char *end = args + len;

	/* Every argument ends with a NUL before @end, or none is read. */
	if (!len || args[len - 1] != '\0' || !vmm_program(args))
		return;
	u->vmm = 1;
	for (const char *a = args; a < end; a += strlen(a) + 1) {
		const char *v = a + strlen(a) + 1;

		if ((strcmp(a, "-name") == 0 || strcmp(a, "--name") == 0) && v < end) {
			qemu_name(v, u->name[UNIT_VM]);
			return;
		}
	}
}

/* Up to @cap - 1 bytes of /proc/PID/@what, NUL-terminated; the length, or -1. */
static long read_proc(int pid, const char *what, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t got;
	int fd = host_open("/proc/%d/%s", pid, what);
	if (fd < 0)
		return -1;
	while (n < cap - 1 && (got = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

int unit_trusted_exe(int pid)
{
	char path[4096], target[4096];
	struct stat st;
	ssize_t n;

	host_path(path, sizeof(path), "/proc/%d/exe", pid);
	/* stat() follows the link to the binary itself, in whatever mount
	 * namespace it lives; its name comes from the link. */
	if (!path[0] || stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (n = readlink(path, target, sizeof(target) - 1)) <= 0)
		return 0;
	target[n] = '\0';
	if (ends_with(target, (size_t)n, " (deleted)"))
		target[n - strlen(" (deleted)")] = '\0';
	return vmm_program(target);
}

/* The real uid of process @pid as text ("?" if unreadable), 16 bytes. */
static void process_uid(int pid, char *uid)
{
	char line[256];
	unsigned v;
	FILE *f = host_fopen("/proc/%d/status", pid);

	snprintf(uid, 16, "?");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u", &v) == 1) {
			snprintf(uid, 16, "%u", v);
			break;
		}
	if (f)
		fclose(f);
}

/*
 * The VM name of a command line (@u's vm, set by unit_parse_cmdline()) is
 * the system's only from a VMM binary of the system run by the system's
 * manager: a libvirt scope (@cg_vm) or a system unit outside user.slice.
 * Else it is a user-vm's, and the cgroup's name (@cg_vm) stays the vm's.
 */
static void vm_trust(int pid, struct proc_unit *u, const char *cg_vm)
{
	int by_system = *cg_vm || (u->name[UNIT_UNIT][0] &&
		!u->name[UNIT_USER_UNIT][0] &&
		strncmp(u->name[UNIT_CGROUP], "/user.slice", 11) != 0);
	char uid[16];

	if (!u->name[UNIT_VM][0]) {
		set_name(u->name[UNIT_VM], cg_vm, strlen(cg_vm));
		return;
	}
	if (by_system && unit_trusted_exe(pid))
		return;
	process_uid(pid, uid);
	set_user_name(u->name[UNIT_USER_VM], uid, u->name[UNIT_VM],
		      strlen(u->name[UNIT_VM]));
	set_name(u->name[UNIT_VM], cg_vm, strlen(cg_vm));
}

int unit_read(int pid, struct proc_unit *u)
{
	static char buf[65536];
	char cg_vm[256];
	const char *p;
	long n;

	memset(u, 0, sizeof(*u));
	if (read_proc(pid, "cgroup", buf, sizeof(buf)) < 0)
		return -1;
	unit_parse_cgroup(buf, u);
	memcpy(cg_vm, u->name[UNIT_VM], sizeof(cg_vm));
	u->name[UNIT_VM][0] = '\0';
	n = read_proc(pid, "cmdline", buf, sizeof(buf));
	if (n > 0) {
		buf[n - 1] = '\0';	/* a cut last argument ends too */
		unit_parse_cmdline(buf, (size_t)n, u);
	}
	vm_trust(pid, u, cg_vm);
	/* The parent from /proc/PID/stat: the name in parentheses may hold
	 * anything, so the fields start after its last ')'. */
	if (read_proc(pid, "stat", buf, 1024) > 0 && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &u->ppid);
	return 0;
}
