#!/usr/bin/python3
"""Names are data, never syntax (docs/units.md): a unit's, cgroup's or VM's
name reaches every row and printed command whole, and a name is the one of
the manager that owns it. Fake processes in a tree of files
($KSMSCAN_HOST_ROOT, as tests/test_host.py writes them), so each name is the
test's own:

- --enable with a cgroup and unit named `x+unit:sshd.service`: one
  `systemctl set-property -- x+unit:sshd.service MemoryKSM=yes`, never one
  for sshd.service; the commands' words read back with shlex, the whole note
  block checked by `sh -n`;
- a unit named `-Hx.service` (and one with a quote, a space and a `$`): `--`
  before it, so systemctl's getopt cannot read it as `-H x.service`;
- a process below user@1000.service is `user-unit:1000:NAME`, never
  `unit:NAME`; --enable of it prints `systemctl --user -M 1000@ ...`;
  `--enable=unit:NAME` finds no such system unit;
- `vm:NAME` only from a VMM binary of the system (the fake /proc/PID/exe
  links to a root-owned binary named qemu-system-x86_64) in a libvirt scope
  or a system unit; the same name from a session scope, from a binary that
  is not QEMU (`exec -a`), or from a binary others may write, is
  `user-vm:UID:NAME` with the process's uid from its status file;
- `--by=unit` where no process is in a unit: one line on stderr that says so;
- `-r exposure --by=process`: each process its own trust domain, the same
  figures as the two `--group`s of one process each.

Closing line: N passed, N failed.
"""
import csv
import io
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ksmtest  # noqa: E402
from ksmtest import check, eq, run, run_suite, skip, test, tmp  # noqa: E402
from test_host import A, B, fake_ksm, fake_process  # noqa: E402

USER_SSHD = "/user.slice/user-1000.slice/user@1000.service/app.slice/sshd.service"
ODD = "a b'c$x.service"


def ksmscan(root, *args):
    return run(list(args), env=dict(os.environ, KSMSCAN_HOST_ROOT=root))


def inputs(r):
    return [x["input"] for x in csv.DictReader(io.StringIO(r.out))]


def commands(out):
    """The pasted commands of a table's notes (lines of "systemctl ..."),
    as sh would split them."""
    return [shlex.split(line) for line in out.splitlines()
            if line.strip().startswith("systemctl ")]


def sh_n(text):
    p = subprocess.run(["sh", "-n"], input=text.encode(), capture_output=True)
    return p.returncode == 0, p.stderr.decode()


def units_tree():
    root = tmp("units")
    if not os.path.isdir(root):
        fake_process(root, 4242, "alpha", 1000, A, "/system.slice/x+unit:sshd.service")
        fake_process(root, 4343, "beta", 2000, B, USER_SSHD)
        fake_process(root, 4444, "gamma", 3000, B, "/system.slice/-Hx.service")
        fake_process(root, 4545, "delta", 4000, B, "/system.slice/" + ODD)
        fake_ksm(root, 1)
    return root


def name_after_dashes(words):
    """The word after "--" of a set-property command, or None."""
    if "set-property" not in words or "--" not in words:
        return None
    i = words.index("--")
    return words[i + 1] if i + 1 < len(words) else None


@test("enable")
def plus_in_a_name():
    root = units_tree()
    r = ksmscan(root, "-p", "4242", "--enable=unit:x+unit:sshd.service")
    cmds = commands(r.out)
    eq(r.rc, 0, "--enable of a unit named x+unit:sshd.service runs (%s)"
       % r.err.strip())
    eq([name_after_dashes(c) for c in cmds], ["x+unit:sshd.service"],
       "one command, for the whole name after --")
    check(not any("sshd.service" in c for c in cmds),
          "no command names sshd.service alone", repr(cmds))
    check("/etc/systemd/system/x+unit:sshd.service.d/" in r.out,
          "the drop-in is the whole name's", r.out[-600:])
    r = ksmscan(root, "-p", "4242", "--enable=cgroup:/system.slice/x+unit:sshd.service")
    check(r.rc == 0 and not commands(r.out),
          "--enable of the cgroup of that name: no systemctl command at all",
          r.brief())


@test("enable")
def dash_and_quotes_in_a_name():
    root = units_tree()
    r = ksmscan(root, "-p", "4444", "-p", "4545",
                "--enable=unit:-Hx.service,unit:" + ODD)
    cmds = commands(r.out)
    eq(r.rc, 0, "--enable of -Hx.service and %r runs (%s)" % (ODD, r.err.strip()))
    eq(sorted(name_after_dashes(c) or "" for c in cmds), sorted(["-Hx.service", ODD]),
       "each name arrives whole after --")
    for c in cmds:
        eq(c[-1], "MemoryKSM=yes", "the assignment after the name: %r" % c)
    script = "\n".join(line.strip() for line in r.out.splitlines()
                       if line.strip().startswith("systemctl "))
    ok, why = sh_n(script)
    check(ok and script, "sh -n reads the printed commands", why + script)


@test("enable")
def user_manager_units():
    root = units_tree()
    r = ksmscan(root, "-p", "4242", "-p", "4343", "--by=unit", "--csv", "-q")
    got = inputs(r)
    check("user-unit:1000:sshd.service" in got and "unit:sshd.service" not in got,
          "a unit below user@1000.service is user 1000's, not the system's",
          repr(got))
    r = ksmscan(root, "-p", "4343", "--enable=user-unit:1000:sshd.service")
    cmds = commands(r.out)
    eq([c[:5] for c in cmds],
       [["systemctl", "--user", "-M", "1000@", "set-property"]],
       "the user manager's command (%s)" % r.err.strip())
    eq([name_after_dashes(c) for c in cmds], ["sshd.service"], "its unit after --")
    r = ksmscan(root, "-p", "4343", "--enable=unit:sshd.service")
    check(r.rc == 2 and "no process is in a unit named 'sshd.service'" in r.err,
          "--enable=unit:sshd.service finds no system unit of that name",
          r.brief())


def vm_process(root, pid, cgroup, exe, uid):
    """A fake QEMU process: -name guest=prod-db, its status's uid, and
    /proc/PID/exe a link to @exe through a link named qemu-system-x86_64
    (readlink names it so; stat() reaches @exe)."""
    fake_process(root, pid, "qemu", 3000, B, cgroup)
    d = os.path.join(root, "proc", str(pid))
    with open(os.path.join(d, "cmdline"), "w") as f:
        f.write("qemu-system-x86_64\0-name\0guest=prod-db,debug-threads=on\0")
    with open(os.path.join(d, "status"), "w") as f:
        f.write("Name:\tqemu\nUid:\t%d\t%d\t%d\t%d\n" % ((uid,) * 4))
    bindir = os.path.join(root, "bin%d" % pid)
    os.makedirs(bindir)
    interpreter = os.path.realpath(exe) == os.path.realpath(sys.executable)
    link = os.path.join(bindir, os.path.basename(exe) if interpreter
                        else "qemu-system-x86_64")
    os.symlink(exe, link)
    os.symlink(link, os.path.join(d, "exe"))


@test("vm")
def vm_names_need_the_system():
    system_bin = os.path.realpath(shutil.which("true") or "/bin/true")
    st = os.stat(system_bin)
    if st.st_uid != 0 or st.st_mode & 0o022:
        skip("%s is not a root-owned binary others cannot write" % system_bin)
        return
    root = tmp("vms")
    writable = os.path.join(root, "qemu-copy")
    os.makedirs(root)
    shutil.copy(system_bin, writable)
    os.chmod(writable, 0o757)
    python = os.path.join(root, "interpreter")
    os.symlink(os.path.realpath(sys.executable), python)
    cases = [  # pid, cgroup, exe, uid, expected row
        (5001, "/machine.slice/machine-qemu\\x2d1\\x2dprod\\x2ddb.scope/libvirt/emulator",
         system_bin, 64055, "vm:prod-db"),
        (5002, "/system.slice/qemu-prod.service", system_bin, 0, "vm:prod-db"),
        (5003, "/user.slice/user-1000.slice/session-3.scope", system_bin, 1000,
         "user-vm:1000:prod-db"),
        (5004, "/system.slice/evil.service", python, 1001, "user-vm:1001:prod-db"),
        (5005, "/system.slice/evil2.service", writable, 0, "user-vm:0:prod-db"),
    ]
    for pid, cgroup, exe, uid, _ in cases:
        vm_process(root, pid, cgroup, exe, uid)
    fake_ksm(root, 1)
    for pid, cgroup, exe, uid, want in cases:
        r = ksmscan(root, "-p", str(pid), "--by=vm", "--csv", "-q")
        got = [n for n in inputs(r) if "vm:" in n]
        eq(got, [want], "pid %d (%s, exe %s, uid %d)" % (
            pid, cgroup, os.path.basename(exe), uid))
    r = ksmscan(root, *sum([["-p", str(c[0])] for c in cases], []),
                "--by=vm", "--csv", "-q")
    rows = {x["input"]: x for x in csv.DictReader(io.StringIO(r.out))}
    eq(int(rows.get("vm:prod-db", {}).get("pages", -1)),
       int(rows["pid:5001"]["pages"]) + int(rows["pid:5002"]["pages"]),
       "vm:prod-db holds the libvirt guest and the system unit's alone")


@test("by")
def by_unit_without_systemd():
    root = tmp("nosystemd")
    fake_process(root, 4242, "alpha", 1000, A, "/")
    fake_process(root, 4343, "beta", 2000, B, "/")
    fake_ksm(root, 1)
    r = ksmscan(root, "-p", "4242", "-p", "4343", "--by=unit", "--csv")
    lines = [x for x in r.err.splitlines() if "--by=unit" in x]
    check(r.rc == 0 and len(lines) == 1 and "systemd" in lines[0],
          "--by=unit with no process in a unit: one line that says so", r.brief())
    eq([n for n in inputs(r) if n.startswith("unit:")], [], "and no unit rows")
    r = ksmscan(units_tree(), "-p", "4242", "--by=unit", "--csv")
    check(not any("--by=unit" in x for x in r.err.splitlines()),
          "no such line where a process is in a unit", r.brief())


@test("by")
def by_process_trust_domains():
    root = units_tree()
    common = ["-p", "4242", "-p", "4343", "--csv"]
    r = ksmscan(root, *common, "-r", "exposure", "--by=process")
    g = ksmscan(root, *common, "-r", "exposure", "--group=a=pid:4242",
                "--group=b=pid:4343")
    got = list(csv.DictReader(io.StringIO(r.out)))
    want = list(csv.DictReader(io.StringIO(g.out)))
    check(r.rc == 0 and len(got) == 1, "-r exposure --by=process: one pair",
          r.brief())
    if got and want:
        eq((got[0]["domain_a"], got[0]["domain_b"]),
           ("process:pid:4242", "process:pid:4343"), "the domains are the processes")
        for col in want[0]:
            if not col.startswith("domain"):
                eq(got[0][col], want[0][col], "%s as with a --group per process" % col)
    r = ksmscan(root, *common, "-r", "mitigations", "--by=process")
    m = ksmscan(root, *common, "-r", "mitigations", "--group=a=pid:4242",
                "--group=b=pid:4343")
    eq((r.rc, r.out), (0, m.out), "-r mitigations --by=process as with the groups")
    r = ksmscan(root, *common, "--by=process")
    eq(inputs(r), ["pid:4242", "pid:4343", "*"],
       "--by=process alone: the inputs' rows, nothing more")


if __name__ == "__main__":
    # Importing test_host registered its tests too: run this file's alone.
    ksmtest.TESTS[:] = [t for t in ksmtest.TESTS if t[2].__module__ == __name__]
    sys.exit(run_suite("ksmscan-unit-names-"))
