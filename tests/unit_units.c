/* SPDX-License-Identifier: MIT */
/*
 * Unit test of host/units.c's parsers on fixed texts of /proc/PID/cgroup
 * (cgroup2 alone, the hybrid layout, v1 only, with docker, podman,
 * containerd, CRI-O, Kubernetes and libvirt paths) and of QEMU command
 * lines. The expected names are written by hand from the paths' formats;
 * prints the failures and last "N passed, N failed", like the Python suites.
 */
#include <stdio.h>
#include <string.h>

#include "../host/root.c"
#include "../host/units.c"

static unsigned long passed, failed;

static void eq(const char *got, const char *exp, const char *what)
{
	if (strcmp(got, exp) == 0) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL %s: got '%s', expected '%s'\n", what, got, exp);
}

/* One cgroup file: its expected cgroup, unit, container and vm. */
static void cgroup_case(const char *what, const char *text, const char *cg,
			const char *unit, const char *container, const char *vm)
{
	const char *exp[UNIT_KINDS] = {
		[UNIT_CGROUP] = cg, [UNIT_UNIT] = unit,
		[UNIT_CONTAINER] = container, [UNIT_VM] = vm,
	};
	struct proc_unit u;
	char w[128];

	memset(&u, 0x55, sizeof(u));	/* every name must be set */
	unit_parse_cgroup(text, &u);
	for (int k = 0; k < UNIT_KINDS; k++) {
		snprintf(w, sizeof(w), "%s: %s", what, unit_kind_name(k));
		eq(u.name[k], exp[k] ? exp[k] : "", w);	/* the user's: none */
	}
}

/* One cgroup file below a user manager: its system unit, the user's unit
 * ("UID:NAME") and the user's VM. */
static void user_case(const char *what, const char *text, const char *unit,
		      const char *user_unit, const char *user_vm)
{
	struct proc_unit u;
	char w[128];

	memset(&u, 0x55, sizeof(u));
	unit_parse_cgroup(text, &u);
	snprintf(w, sizeof(w), "%s: unit", what);
	eq(u.name[UNIT_UNIT], unit, w);
	snprintf(w, sizeof(w), "%s: user-unit", what);
	eq(u.name[UNIT_USER_UNIT], user_unit, w);
	snprintf(w, sizeof(w), "%s: vm", what);
	eq(u.name[UNIT_VM], "", w);
	snprintf(w, sizeof(w), "%s: user-vm", what);
	eq(u.name[UNIT_USER_VM], user_vm, w);
}

/* A user manager's units are the user's, whatever they are called. */
static void user_managers(void)
{
	user_case("user service", "0::/user.slice/user-1000.slice/user@1000.service/"
		  "app.slice/sshd.service\n", "", "1000:sshd.service", "");
	user_case("user manager itself", "0::/user.slice/user-1000.slice/"
		  "user@1000.service/init.scope\n", "", "1000:init.scope", "");
	user_case("user slice only", "0::/user.slice/user-1000.slice/"
		  "user@1000.service/app.slice\n", "", "1000:app.slice", "");
	user_case("the manager's cgroup", "0::/user.slice/user-1000.slice/"
		  "user@1000.service\n", "user@1000.service", "", "");
	user_case("session scope is the system's", "0::/user.slice/user-1000.slice/"
		  "session-4.scope\n", "session-4.scope", "", "");
	user_case("a libvirt scope a user made", "0::/user.slice/user-1000.slice/"
		  "user@1000.service/machine-qemu\\x2d1\\x2dprod\\x2ddb.scope\n", "",
		  "1000:machine-qemu\\x2d1\\x2dprod\\x2ddb.scope", "1000:prod-db");
	user_case("not a uid", "0::/system.slice/user@x.service/a.service\n",
		  "a.service", "", "");
	user_case("a second user@ inside", "0::/user.slice/user@1000.service/"
		  "user@0.service/b.service\n", "", "1000:b.service", "");
}

static void cmdline_case(const char *what, const char *args, size_t len,
			 int vmm, const char *vm)
{
	struct proc_unit u;
	char w[128];

	memset(&u, 0, sizeof(u));
	unit_parse_cmdline(args, len, &u);
	snprintf(w, sizeof(w), "%s: vm", what);
	eq(u.name[UNIT_VM], vm, w);
	snprintf(w, sizeof(w), "%s: vmm", what);
	eq(u.vmm ? "yes" : "no", vmm ? "yes" : "no", w);
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void cgroups(void)
{
	cgroup_case("cgroup2 service", "0::/system.slice/nginx.service\n",
		    "/system.slice/nginx.service", "nginx.service", "", "");
	cgroup_case("cgroup2 user scope",
		    "0::/user.slice/user-1000.slice/session-2.scope\n",
		    "/user.slice/user-1000.slice/session-2.scope", "session-2.scope", "", "");
	cgroup_case("cgroup2 slice only", "0::/user.slice/user-1000.slice\n",
		    "/user.slice/user-1000.slice", "user-1000.slice", "", "");
	cgroup_case("cgroup2 root", "0::/\n", "/", "", "", "");
	cgroup_case("empty file", "", "/", "", "", "");
	cgroup_case("no newline", "0::/system.slice/a.service",
		    "/system.slice/a.service", "a.service", "", "");
	cgroup_case("hybrid, unified path",
		    "12:memory:/system.slice/b.service\n1:name=systemd:/system.slice/b.service\n"
		    "0::/system.slice/b.service\n",
		    "/system.slice/b.service", "b.service", "", "");
	cgroup_case("hybrid, unified root",
		    "9:name=systemd:/system.slice/c.service\n4:memory:/mem/x\n0::/\n",
		    "/system.slice/c.service", "c.service", "", "");
	cgroup_case("v1 only, name=systemd",
		    "11:cpu,cpuacct:/\n2:memory:/\n1:name=systemd:/system.slice/d.service\n",
		    "/system.slice/d.service", "d.service", "", "");
	cgroup_case("v1 only, memory with others",
		    "5:memory,hugetlb:/batch/job1\n1:name=systemd:/\n",
		    "/batch/job1", "", "", "");
	cgroup_case("docker with systemd",
		    "0::/system.slice/docker-" ID64 ".scope\n",
		    "/system.slice/docker-" ID64 ".scope", "docker-" ID64 ".scope",
		    "0123456789ab", "");
	cgroup_case("docker cgroupfs", "0::/docker/" ID64 "\n", "/docker/" ID64, "",
		    "0123456789ab", "");
	cgroup_case("podman", "0::/machine.slice/libpod-" ID64 ".scope/container\n",
		    "/machine.slice/libpod-" ID64 ".scope/container",
		    "libpod-" ID64 ".scope", "0123456789ab", "");
	cgroup_case("podman conmon", "0::/machine.slice/libpod-conmon-" ID64 ".scope\n",
		    "/machine.slice/libpod-conmon-" ID64 ".scope",
		    "libpod-conmon-" ID64 ".scope", "", "");
	cgroup_case("kubernetes containerd, systemd",
		    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
		    "pod12345678_9abc_def0_1234_56789abcdef0.slice/cri-containerd-" ID64
		    ".scope\n",
		    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
		    "pod12345678_9abc_def0_1234_56789abcdef0.slice/cri-containerd-" ID64
		    ".scope", "cri-containerd-" ID64 ".scope", "0123456789ab", "");
	cgroup_case("kubernetes pod only",
		    "0::/kubepods.slice/kubepods-pod12345678_9abc_def0_1234_56789abcdef0.slice\n",
		    "/kubepods.slice/kubepods-pod12345678_9abc_def0_1234_56789abcdef0.slice",
		    "kubepods-pod12345678_9abc_def0_1234_56789abcdef0.slice",
		    "pod12345678-9abc-def0-1234-56789abcdef0", "");
	cgroup_case("kubernetes cgroupfs, cri-o",
		    "0::/kubepods/besteffort/pod12345678-9abc-def0-1234-56789abcdef0/crio-"
		    ID64 "\n",
		    "/kubepods/besteffort/pod12345678-9abc-def0-1234-56789abcdef0/crio-" ID64,
		    "", "0123456789ab", "");
	cgroup_case("libvirt with systemd",
		    "0::/machine.slice/machine-qemu\\x2d3\\x2dweb\\x2d01.scope/libvirt/emulator\n",
		    "/machine.slice/machine-qemu\\x2d3\\x2dweb\\x2d01.scope/libvirt/emulator",
		    "machine-qemu\\x2d3\\x2dweb\\x2d01.scope", "", "web-01");
	cgroup_case("libvirt cgroupfs",
		    "4:memory:/machine/qemu-7-db.libvirt-qemu/emulator\n0::/\n",
		    "/machine/qemu-7-db.libvirt-qemu/emulator", "", "", "db");
	cgroup_case("malformed lines", "garbage\n::\n0:\n3:memory\n", "/", "", "", "");
}

static void cmdlines(void)
{
	static const char a[] = "/usr/bin/qemu-system-x86_64\0-name\0"
				"guest=web01,debug-threads=on\0-m\0" "1024";
	static const char b[] = "qemu-kvm\0-m\0" "512\0-name\0vm,,a,process=x";
	static const char c[] = "/usr/bin/python3\0-name\0guest=x";
	static const char d[] = "qemu-system-aarch64\0-m\0" "1G";
	static const char e[] = "qemu-system-x86_64\0-name\0process=p,guest=g2";
	static const char f[] = "qemu-system-x86_64\0-name";

	cmdline_case("libvirt's guest=", a, sizeof(a), 1, "web01");
	cmdline_case("bare name with ,,", b, sizeof(b), 1, "vm,a");
	cmdline_case("not qemu", c, sizeof(c), 0, "");
	cmdline_case("qemu without -name", d, sizeof(d), 1, "");
	cmdline_case("guest= after others", e, sizeof(e), 1, "g2");
	cmdline_case("-name last", f, sizeof(f), 1, "");
}

int main(void)
{
	cgroups();
	user_managers();
	cmdlines();
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}
