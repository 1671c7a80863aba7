#!/usr/bin/python3
"""The live host read from a tree of files ($KSMSCAN_HOST_ROOT): everything
ksmscan reads of /proc and /sys goes through host/, so a test can write the
kernel's files itself and know every answer. Here two fake processes, their
maps, pagemap, memory, smaps, cgroup and stat, and KSM's sysfs folder:

- `-p PID`: the pages the test wrote, counted by a Python model of the
  summary (pages, zero pages, distinct contents, KSM's saving), and the
  process's command and KSM figures from its files;
- `-r doctor`: each smaps area under the reason the test gave it;
- `--by=unit`: the systemd unit of /proc/PID/cgroup;
- -P REGEX: the processes whose comm matches, from the tree's /proc;
- `-r exposure --by=unit`: the units are the trust domains when no --group
  is given (--enable's row never is one); with --group, the groups are;
- a process the tree does not have: one error line naming it.

Closing line: N passed, N failed.
"""
import csv
import io
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import check, eq, ksm_group, run, run_suite, test, tmp  # noqa: E402

PAGE = 4096
PM_PRESENT = 1 << 63


def page(v):
    """A page of content @v (0: the zero page)."""
    if v == 0:
        return bytes(PAGE)
    return (struct.pack("<Q", v) * (PAGE // 8))[:PAGE - 1] + bytes([v & 0xff])


def fake_process(root, pid, comm, start, areas, cgroup, ksm_stat=None):
    """/proc/PID of a process with @areas: (address, [content], mergeable)."""
    d = os.path.join(root, "proc", str(pid))
    os.makedirs(d, exist_ok=True)
    maps, smaps = [], []
    top = max(a + len(c) * PAGE for a, c, _ in areas)
    with open(os.path.join(d, "mem"), "wb") as mem, \
            open(os.path.join(d, "pagemap"), "wb") as pm:
        mem.truncate(top)
        pm.truncate(top // PAGE * 8)
        for addr, contents, mg in areas:
            end = addr + len(contents) * PAGE
            line = "%08x-%08x rw-p 00000000 00:00 0" % (addr, end)
            maps.append(line)
            kb = len(contents) * 4
            smaps.append("%s\nRss: %d kB\nAnonymous: %d kB\nAnonHugePages: 0 kB\n"
                         "VmFlags: rd wr mr mw me ac%s\n" % (line, kb, kb,
                                                            " mg" if mg else ""))
            for i, v in enumerate(contents):
                mem.seek(addr + i * PAGE)
                mem.write(page(v))
                pm.seek((addr // PAGE + i) * 8)
                pm.write(struct.pack("<Q", PM_PRESENT))
    files = {"maps": "\n".join(maps) + "\n", "smaps": "".join(smaps),
             "comm": comm + "\n", "cgroup": "0::%s\n" % cgroup,
             "cmdline": comm + "\0",
             "stat": "%d (%s) S 1 %d %d 0 -1 4194304 %s\n" % (
                 pid, comm, pid, pid, " ".join(["0"] * 12 + [str(start)] + ["0"] * 10)),
             "statm": "100 %d 0 0 0 0 0\n" % sum(len(c) for _, c, _ in areas),
             "ksm_merging_pages": "%d\n" % (ksm_stat or {}).get("ksm_merging_pages", 0),
             "ksm_stat": "".join("%s %d\n" % kv for kv in (ksm_stat or {}).items())}
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def fake_ksm(root, run_value):
    d = os.path.join(root, "sys/kernel/mm/ksm")
    os.makedirs(d, exist_ok=True)
    for name, v in (("run", run_value), ("full_scans", 0), ("pages_shared", 0),
                    ("pages_sharing", 0), ("max_page_sharing", 256)):
        with open(os.path.join(d, name), "w") as f:
            f.write("%d\n" % v)


# Two processes: A holds 1, 1, 2, 0 in a mergeable area and 3, 3 in
# another; B holds 1, 4, 0, 0 in one area that is not mergeable.
A = [(0x10000, [1, 1, 2, 0], True), (0x40000, [3, 3], False)]
B = [(0x20000, [1, 4, 0, 0], False)]


def tree(run_value=1):
    root = tmp("host%d" % run_value)
    if not os.path.isdir(root):
        fake_process(root, 4242, "alpha", 1000, A, "/system.slice/alpha.service",
                     {"ksm_rmap_items": 4, "ksm_merging_pages": 2})
        fake_process(root, 4343, "beta", 2000, B, "/system.slice/beta.service")
        fake_ksm(root, run_value)
    return root


def ksmscan(root, *args):
    return run(list(args), env=dict(os.environ, KSMSCAN_HOST_ROOT=root))


def rows(r):
    return list(csv.DictReader(io.StringIO(r.out)))


def model(contents):
    """The summary's figures of pages with @contents, by KSM's rules."""
    shared = sharing = 0
    for v in set(contents):
        s, sh = ksm_group(contents.count(v), 256)
        shared, sharing = shared + s, sharing + sh
    return {"pages": len(contents), "zero_pages": contents.count(0),
            "distinct_pages": len(set(contents)), "pages_shared": shared,
            "pages_sharing": sharing, "saved_bytes": sharing * PAGE}


@test("process")
def pages_of_a_fake_process():
    root = tree()
    r = ksmscan(root, "-p", "4242", "-p", "4343", "--csv", "-q")
    got = {x["input"]: x for x in rows(r)}
    eq(r.rc, 0, "exit 0 on the fake tree (%s)" % r.err.strip())
    a = [v for _, c, _ in A for v in c]
    b = [v for _, c, _ in B for v in c]
    for name, contents in (("pid:4242", a), ("pid:4343", b), ("*", a + b)):
        want = model(contents)
        for col, v in want.items():
            eq(int(got.get(name, {}).get(col, -1)), v, "%s %s" % (name, col))
    eq(int(got["pid:4242"]["mergeable_pages"]), 4, "mergeable_pages: smaps "
       "Rss of the areas marked mg")
    eq(int(got["pid:4242"]["ksm_merging_pages"]), 2, "ksm_merging_pages from "
       "the tree's file")
    r = ksmscan(root, "-p", "4545")
    check(r.rc == 1 and "pid:4545" in r.err and "no such process" in r.err,
          "a pid the tree lacks: exit 1, named, no such process", r.brief())


@test("doctor")
def doctor_of_fake_processes():
    for run_value, reason in ((1, None), (0, "ksm_not_running")):
        root = tree(run_value)
        r = ksmscan(root, "-p", "4242", "-p", "4343", "-r", "doctor", "--csv", "-q")
        got = {(x["input"], x["reason"]): int(x["pages"]) for x in rows(r)}
        eq(got.get(("pid:4343", "not_mergeable")), 4,
           "run=%d: beta's 4 pages are not mergeable" % run_value)
        eq(got.get(("pid:4242", "not_mergeable")), 2,
           "run=%d: alpha's second area is not mergeable" % run_value)
        eq(got.get(("pid:4242", "ksm_not_running")), 4 if reason else None,
           "run=%d: alpha's mergeable area waits for ksmd only when it is "
           "stopped" % run_value)


@test("units")
def units_of_fake_processes():
    root = tree()
    r = ksmscan(root, "-p", "4242", "-p", "4343", "--by=unit", "--csv", "-q")
    names = {x["input"] for x in rows(r)}
    check({"unit:alpha.service", "unit:beta.service"} <= names,
          "--by=unit names the units of the tree's cgroup files", repr(names))


@test("units")
def units_as_trust_domains():
    """-r exposure takes the --by rows as trust domains without --group:
    pages crossing are the pages of both units whose content both hold."""
    root = tree()
    a = [v for _, c, _ in A for v in c]
    b = [v for _, c, _ in B for v in c]
    crossing = sum(1 for v in a + b if v in a and v in b)
    zero = sum(1 for v in a + b if v == 0)
    for extra, names in (([], ("unit:alpha.service", "unit:beta.service")),
                         (["--enable=alpha.service"],
                          ("unit:alpha.service", "unit:beta.service")),
                         (["--group=g1=pid:4242", "--group=g2=pid:4343"], ("g1", "g2"))):
        r = ksmscan(root, "-p", "4242", "-p", "4343", "--by=unit", "-r",
                    "exposure", "--csv", *extra)
        got = rows(r)
        check(r.rc == 0 and len(got) == 1 and
              (got[0]["domain_a"], got[0]["domain_b"]) == names and
              int(got[0]["pages_crossing"]) == crossing and
              int(got[0]["zero_pages"]) == zero,
              "%s: one pair of domains %r, %d pages crossing, %d zero" %
              (" ".join(extra) or "--by=unit alone", names, crossing, zero),
              r.brief())
    r = ksmscan(root, "-p", "4242", "-p", "4343", "--by=unit,cgroup", "-r", "exposure")
    check(r.rc == 2 and "may not overlap" in r.err,
          "--by=unit,cgroup: overlapping domains are a usage error", r.brief())


@test("process")
def list_of_fake_processes():
    root = tree()
    r = ksmscan(root, "-P", "^al", "--csv", "-q")
    eq([x["input"] for x in rows(r)], ["pid:4242"],
       "-P '^al' takes alpha alone, from the tree's /proc")
    r = ksmscan(root, "--all-processes", "--csv", "-q")
    eq([x["input"] for x in rows(r)], ["pid:4242", "pid:4343", "*"],
       "--all-processes takes both, in pid order")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-host-"))
