#!/usr/bin/python3
"""Units of work (docs/units.md) without changing the kernel: --by and
--enable, the doctor, thp and numa reports, and -o openmetrics.

Live processes are children of this test (Python, each told what to map);
nothing here writes to /sys, and KSM need not run. The oracles:

- --by: the cgroup path read here from /proc/PID/cgroup by the layout rule
  (cgroup2's line unless it is the root, then name=systemd, then memory);
  the VM name from the child's own -name argument (user-vm:UID:, its
  executable being Python's, whatever its argv[0]); a row's pages and kernel
  columns are the sums of its processes' rows; a group holding every input
  saves what "*" saves.
- --enable: a VM's process and the plain child it started (its
  descendant), not the other child: the row's pages are those two rows'.
- doctor: the children's own mappings (8 pages MAP_SHARED, 6 pages of a
  memfd, a 2 MiB MADV_HUGEPAGE area, 5 mlocked mergeable pages, private
  pages never marked mergeable, hugetlb where the host has huge pages)
  and each area's kernel figures (smaps) classified here in Python.
- thp: three 2 MiB huge pages (the kernel's AnonHugePages says they are)
  with known contents: which of them have a page with a copy, and the
  saving with and without them, computed here with ksm_group().
- numa: KSMSCAN_TEST_NODES=2 (test-only: node = address / 4096 % 2) and
  the contents written here; without it, this host's node count.
- openmetrics: prometheus_client's OpenMetrics parser accepts the output,
  every family has HELP and TYPE, values equal the CSV's, and label values
  with quote, backslash and newline come back unchanged.
"""
import collections
import json
import os
import random
import select
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_ksm_live import stop_child  # noqa: E402
from ksmtest import (KSMSCAN, PAGE, Skip, as_int, check, eq,  # noqa: E402
                     ksm_group, parse_csv, run, run_suite, skip, test, tmp)

HUGE = 2 << 20
M = 256

# A child: maps what its JSON argument asks for, writes the pages it reads
# from stdin, prints the addresses as JSON, and waits until stdin closes.
CHILD = r"""
import ctypes, json, mmap, os, subprocess, sys
spec = json.loads(sys.argv[sys.argv.index("--spec") + 1])
libc = ctypes.CDLL(None, use_errno=True)
keep, out = [], {}
def addr(m):
    return ctypes.addressof(ctypes.c_char.from_buffer(m))
def touch(m, n, seed):
    for i in range(n):
        m[i * 4096:i * 4096 + 8] = (seed * 1000003 + i + 1).to_bytes(8, "little")
def area(name, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, fd=-1):
    m = mmap.mmap(fd, size, flags=flags)
    keep.append(m)
    out[name] = addr(m)
    return m
def aligned(name, size):
    # A 2 MiB-aligned area of size bytes inside a larger mapping.
    m = area(name + "_map", size + (2 << 20))
    off = (-addr(m)) % (2 << 20)
    out[name] = addr(m) + off
    return m, off
for what in spec.get("doctor", []):
    if what == "map_shared":
        touch(area("map_shared", 8 * 4096, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS), 8, 1)
    elif what == "memfd":
        fd = os.memfd_create("ksmscan-test")
        os.ftruncate(fd, 6 * 4096)
        touch(area("memfd", 6 * 4096, mmap.MAP_SHARED, fd), 6, 2)
    elif what == "hugetlb":
        try:
            m = area("hugetlb", 2 << 20, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000)
            touch(m, 1, 3)
        except OSError as e:
            out["hugetlb_error"] = str(e)
    elif what == "mlock":
        m = area("mlock", 5 * 4096)
        touch(m, 5, 4)
        m.madvise(mmap.MADV_MERGEABLE)
        if libc.mlock(ctypes.c_void_p(out["mlock"]), ctypes.c_size_t(5 * 4096)):
            out["mlock_error"] = os.strerror(ctypes.get_errno())
    elif what == "thp":
        m, off = aligned("thp", 2 << 20)
        m.madvise(mmap.MADV_HUGEPAGE, off, 2 << 20)
        m.madvise(mmap.MADV_MERGEABLE, off, 2 << 20)
        for i in range(512):
            m[off + i * 4096:off + i * 4096 + 8] = (i + 77).to_bytes(8, "little")
    elif what == "private":
        touch(area("private", 7 * 4096), 7, 5)
if "pages" in spec:
    # Known pages: spec["pages"] 4 KiB pages from stdin, at a 2 MiB-aligned
    # address; the first spec["huge"] * 512 in MADV_HUGEPAGE memory.
    n, huge = spec["pages"], spec.get("huge", 0)
    m, off = aligned("pages", n * 4096)
    if huge:
        m.madvise(mmap.MADV_HUGEPAGE, off, huge << 21)
    if n > huge * 512:
        m.madvise(mmap.MADV_NOHUGEPAGE, off + (huge << 21), (n - huge * 512) * 4096)
    data = sys.stdin.buffer.read(n * 4096)
    m[off:off + n * 4096] = data
if spec.get("spawn"):
    p = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                         stdin=subprocess.PIPE)
    out["spawned"] = p.pid
    keep.append(p)
sys.stdout.write(json.dumps(out) + "\n")
sys.stdout.flush()
sys.stdin.buffer.read()
"""


def as_nobody():
    os.setgid(65534)
    os.setuid(65534)


class Child:
    """A child process; .pid, .info (its addresses); close() ends it."""

    def __init__(self, spec, data=b"", argv0=None, extra=(), nobody=False):
        prog = sys.executable
        if argv0:
            prog = tmp(argv0)
            if not os.path.exists(prog):
                os.symlink(sys.executable, prog)
        self.p = subprocess.Popen([prog, "-c", CHILD, "--spec", json.dumps(spec)]
                                  + list(extra), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  preexec_fn=as_nobody if nobody else None)
        self.pid = self.p.pid
        if data:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        ready, _, _ = select.select([self.p.stdout], [], [], 30)
        line = self.p.stdout.readline() if ready else b""
        if not line:
            self.close()
            raise RuntimeError("child did not start")
        self.info = json.loads(line)

    def close(self):
        stop_child(self.p)


def csv_rows(args, what, cols):
    r = run(["--csv", "-q"] + args)
    if not check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return None
    return parse_csv(r, what, cols)


def cgroup_path(pid):
    """The cgroup --by=cgroup names, by the rule of docs/units.md."""
    lines = open("/proc/%d/cgroup" % pid).read().splitlines()
    v2 = [ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")]
    sysd = [ln.split(":", 2)[2] for ln in lines if ":name=systemd:" in ln]
    mem = [ln.split(":", 2)[2] for ln in lines
           if len(ln.split(":", 2)) == 3 and "memory" in ln.split(":", 2)[1].split(",")]
    for cands in (v2, sysd, mem):
        if cands and cands[0] != "/":
            return cands[0]
    return "/"


SUMMARY = ["input", "format", "algo", "pages"]
PROC = ["mergeable_pages", "thp_pages", "ksm_merging_pages", "ksm_rmap_items"]


# --- --by and --enable ---------------------------------------------------------
@test("by")
def by_rows():
    a = Child({"doctor": ["private"]})
    b = Child({"doctor": ["map_shared"], "spawn": True}, argv0="qemu-system-x86_64",
              extra=["-name", "guest=web-01,debug-threads=on"])
    try:
        g = b.info["spawned"]
        pids = [a.pid, b.pid, g]
        args = sum([["-p", str(p)] for p in pids], [])
        rows = csv_rows(args + ["--by=cgroup,vm,unit,container,process"], "--by",
                        SUMMARY)
        if rows is None:
            return
        by = {r["input"]: r for r in rows}
        for p in pids:
            check("pid:%d" % p in by, "pid:%d keeps its row" % p)
        cg = {}
        for p in pids:
            cg.setdefault(cgroup_path(p), []).append(p)
        for path, members in cg.items():
            row = by.get("cgroup:" + path)
            if not check(row is not None, "a row cgroup:%s" % path, sorted(by)):
                continue
            for col in ["pages"] + PROC:
                eq(as_int(row[col]), sum(as_int(by["pid:%d" % p][col]) for p in members),
                   "cgroup:%s %s is its processes' sum" % (path, col))
            if len(members) == 3:
                eq(row["saved_bytes"], by["*"]["saved_bytes"],
                   "one cgroup of every input saves what * saves")
        # Named qemu-system-x86_64 by argv[0] alone (its executable is
        # Python's): a VM of this test's uid, never the system's vm:web-01.
        user_vm = "user-vm:%d:web-01" % os.getuid()
        vm = by.get(user_vm)
        if check(vm is not None, "a row %s (QEMU's -name guest=)" % user_vm, sorted(by)):
            eq(vm["pages"], by["pid:%d" % b.pid]["pages"], "vm row: the VMM's pages")
        eq(sorted(k for k in by if "vm:" in k), [user_vm],
           "only the QEMU process is a VM (not its plain child), and not vm:web-01")
        rows = csv_rows(args + ["--enable=" + user_vm], "--enable", SUMMARY)
        en = [r for r in rows or [] if r["input"].startswith("enable:")]
        if check(len(en) == 1, "one enable row", repr([r["input"] for r in rows or []])):
            byp = {r["input"]: r for r in rows}
            eq(as_int(en[0]["pages"]), as_int(byp["pid:%d" % b.pid]["pages"]) +
               as_int(byp["pid:%d" % g]["pages"]),
               "enable row: the VM's process and its descendant, not the other child")
    finally:
        a.close()
        b.close()


@test("by")
def by_errors():
    c = Child({})
    try:
        for args, what in ((["--by=pods"], "unknown --by kind"),
                           (["--enable=no-such.service"], "--enable of no process")):
            r = run(["-p", str(c.pid)] + args)
            eq(r.rc, 2, what + ": exit status 2")
            check(r.err.startswith("ksmscan: ") and r.out == "", what + ": message",
                  r.brief())
        r = run(["-p", str(c.pid), "--count=2", "--interval=0.1", "--by=cgroup"])
        eq(r.rc, 2, "--by with a series: exit status 2")
    finally:
        c.close()
    page = tmp("one-page.img")      # a file (a device such as /dev/null is refused;
    with open(page, "wb") as f:     # an empty file is no memory, an error)
        f.write(bytes(4096))
    r = run(["--csv", "--by=cgroup", "-r", "summary", page])
    eq(r.rc, 0, "--by with a file only: no group, exit 0")


@test("by")
def by_table_fits():
    c = Child({})
    try:
        r = run(["-p", str(c.pid), "--by=cgroup", "-r", "summary,doctor,thp,numa"])
        eq(r.rc, 0, "people's tables: exit 0")
        wide = [ln for ln in r.out.splitlines() if len(ln) > 80]
        check(not wide, "people's tables fit 80 columns", repr(wide[:2]))
    finally:
        c.close()


@test("by")
def group_sharing():
    """A group's sharing with the other inputs, in the table's sentence."""
    rng = random.Random(3)
    pool = [rng.randbytes(PAGE) for _ in range(30)]
    files = []
    for k in range(3):
        pages = [pool[rng.randrange(30)] for _ in range(100)]
        path = tmp("share%d.img" % k)
        with open(path, "wb") as f:
            f.write(b"".join(pages))
        files.append((path, pages))
    grp = files[0][1] + files[1][1]
    rest = files[2][1]
    exp = saved(grp + rest) - saved(grp) - saved(rest)
    r = run([p for p, _ in files] + ["--group=g=%s,%s" % (files[0][0], files[1][0])])
    eq(r.rc, 0, "three files, a group: exit 0")
    text = " ".join(r.out.split())
    want = "group:g: saves %s on its own and %s more together" % (
        human(saved(grp)), human(exp))
    check(want in text, "the group's sharing with the others", "%r not in %r" % (
        want, text[-600:]))


def human(n):
    """A size as tables print it (units of 1024, one decimal)."""
    for unit in ("", "K", "M", "G"):
        if n < 1024 or unit == "G":
            return "%d" % n if not unit else "%.1f%s" % (n, unit)
        n /= 1024.0


# --- doctor ----------------------------------------------------------------------
def smaps_areas(pid):
    """[(start, path, {key: kB}, flags)] of /proc/PID/smaps."""
    areas = []
    for line in open("/proc/%d/smaps" % pid):
        first = line.split(" ", 1)[0]
        if "-" in first and ":" not in first:
            f = line.split(None, 5)
            areas.append([int(first.split("-")[0], 16), f[5].strip() if len(f) > 5 else "",
                          {}, set()])
        elif line.startswith("VmFlags:"):
            areas[-1][3] = set(line.split()[1:])
        else:
            k, _, v = line.partition(":")
            if v.strip().endswith("kB"):
                areas[-1][2][k] = int(v.split()[0])
    return areas


def doctor_oracle(pid, ksm_runs):
    """Pages per reason, from the kernel's smaps, by docs/units.md's rules."""
    out = collections.Counter()
    for _, path, kb, flags in smaps_areas(pid):
        shmem = (path == "" or path.startswith(("/memfd:", "/dev/zero", "/SYSV",
                                                "/dev/shm/", "[anon_shmem"))
                 or " (deleted)" in path)
        if flags & {"io", "pf"}:
            out["io_mapping"] += kb.get("Rss", 0) // 4
        elif "ht" in flags:
            out["hugetlb"] += (kb.get("Shared_Hugetlb", 0) + kb.get("Private_Hugetlb", 0)) // 4
        elif "sh" in flags or ("ms" in flags and shmem):
            out["shared_mapping"] += kb.get("Rss", 0) // 4
        elif "mg" not in flags:
            out["not_mergeable"] += kb.get("Anonymous", 0) // 4
        else:
            out["thp"] += kb.get("AnonHugePages", 0) // 4
            if not ksm_runs:
                out["ksm_not_running"] += (kb.get("Anonymous", 0) - kb.get("AnonHugePages", 0)) // 4
    return {k: v for k, v in out.items() if v}


DOCTOR = ["input", "reason", "pages", "bytes", "fix"]


def ksm_run():
    try:
        return open("/sys/kernel/mm/ksm/run").read().strip()
    except OSError:
        return "missing"


@test("doctor")
def doctor_kinds():
    # Mergeable areas only while KSM is stopped: a running ksmd (someone
    # else's) would merge them, and its owner's counters would move. While
    # the child has them, tests/live.py's guards keep others from starting it.
    run0 = ksm_run()
    kinds = ["map_shared", "memfd", "hugetlb", "private"]
    if run0 == "0":
        kinds += ["mlock", "thp"]
    else:
        skip("KSM's run is %s: no mergeable area (mlock, thp) made" % run0)
    c = Child({"doctor": kinds}, argv0="qemu-system-x86_64", extra=["-name", "doc"])
    try:
        rows = csv_rows(["-p", str(c.pid), "-r", "doctor"], "doctor", DOCTOR)
        exp = doctor_oracle(c.pid, ksm_run() == "1")
        if ksm_run() != run0:
            raise Skip("KSM's run changed during the check (%s, then %s)"
                       % (run0, ksm_run()))
        if rows is None:
            return
        got = {r["reason"]: as_int(r["pages"]) for r in rows if r["input"] == "pid:%d" % c.pid}
        eq(got, exp, "doctor's pages per reason = the smaps areas classified here")
        for r in rows:
            eq(as_int(r["bytes"]), as_int(r["pages"]) * PAGE, "%s: bytes" % r["reason"])
        check(got.get("shared_mapping", 0) >= 14,
              "MAP_SHARED (8) and memfd (6) pages are shared_mapping", repr(got))
        check(got.get("not_mergeable", 0) >= 7, "private unmarked pages", repr(got))
        shared = [r for r in rows if r["reason"] == "shared_mapping"]
        check(shared and "share=on" in shared[0]["fix"] and "memfd" in shared[0]["fix"],
              "a VMM's shared memory names the guest options", repr(shared[:1]))
        if "hugetlb_error" in c.info:
            skip("hugetlb: MAP_HUGETLB failed (%s; vm.nr_hugepages is %s)"
                 % (c.info["hugetlb_error"], open("/proc/sys/vm/nr_hugepages").read().strip()))
        else:
            eq(got.get("hugetlb"), 512, "the hugetlb page (2 MiB) is hugetlb")
        if run0 != "0":
            return
        if "mlock_error" in c.info:
            raise Skip("mlock: %s" % c.info["mlock_error"])
        # KSM merges mlocked pages (it moves the lock to the KSM page), so
        # mlock is no reason: the 5 pages are mergeable like the others.
        check("locked" not in got, "no 'locked' row: mlocked pages merge", repr(got))
        check(got.get("ksm_not_running", 0) >= 5,
              "mergeable pages (mlocked ones too) while ksmd is stopped", repr(got))
        thp_kb = [kb.get("AnonHugePages", 0) for s, _, kb, _ in smaps_areas(c.pid)
                  if s <= c.info["thp"] < s + (4 << 20)]
        if thp_kb and thp_kb[0]:
            check(got.get("thp", 0) >= 512, "the MADV_HUGEPAGE area is thp", repr(got))
        else:
            skip("thp: the kernel gave the MADV_HUGEPAGE area no huge page")
    finally:
        c.close()


@test("doctor")
def doctor_files():
    page = tmp("one-page-doctor.img")   # an empty file is no memory, an error
    with open(page, "wb") as f:
        f.write(bytes(4096))
    r = run(["--csv", "-r", "doctor", page])
    eq(r.rc, 0, "doctor on a file: exit 0")
    eq(r.out.splitlines(), [",".join(DOCTOR)], "doctor on a file: no row")


# --- thp ------------------------------------------------------------------------
THP = ["input", "huge_pages", "huge_pages_split", "saved_bytes",
       "saved_bytes_without_split"]


def saved(pages):
    return sum(ksm_group(c, M)[1] for c in collections.Counter(pages).values()) * PAGE


@test("thp")
def thp_split():
    if not os.access("/proc/kpageflags", os.R_OK):
        raise Skip("/proc/kpageflags unreadable (not root): which pages are huge is unknown")
    rng = random.Random(26)
    pages = [rng.randbytes(PAGE) for _ in range(3 * 512 + 4)]
    pages[512 + 1] = pages[512]            # huge page 1: a copy inside it
    pages[3 * 512] = pages[2 * 512 + 3]     # huge page 2: a copy outside
    pages[3 * 512 + 2] = pages[3 * 512 + 1]  # a pair in small pages
    c = Child({"pages": len(pages), "huge": 3}, b"".join(pages))
    try:
        start = c.info["pages"]
        kb = sum(k.get("AnonHugePages", 0) for s, _, k, _ in smaps_areas(c.pid)
                 if start <= s < start + 3 * HUGE)
        if kb != 3 * 2048:
            raise Skip("the kernel backed %d kB of the 6 MiB MADV_HUGEPAGE area with "
                       "huge pages (THP %s)" % (kb, open(
                           "/sys/kernel/mm/transparent_hugepage/enabled").read().strip()))
        rows = csv_rows(["-p", str(c.pid), "-r", "thp", "--range=0x%x-0x%x" % (
            start, start + len(pages) * PAGE)], "thp", THP)
        if not rows:
            return
        row = rows[0]
        eq(as_int(row["huge_pages"]), 3, "three huge pages")
        eq(as_int(row["huge_pages_split"]), 2, "two have a page with a copy")
        eq(as_int(row["saved_bytes"]), saved(pages), "saved_bytes")
        eq(as_int(row["saved_bytes_without_split"]), saved(pages[3 * 512:]),
           "saved_bytes_without_split: only the small pages")
    finally:
        c.close()


@test("thp")
def thp_not_root():
    """Without root, /proc/kpageflags is closed: one warning, smaps' count."""
    if os.geteuid() != 0:
        raise Skip("needs root to run the child and ksmscan as nobody")
    rng = random.Random(4)
    pages = [rng.randbytes(PAGE) for _ in range(512)]
    c = Child({"pages": len(pages), "huge": 1}, b"".join(pages), nobody=True)
    try:
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                           + KSMSCAN + ["--csv", "-r", "thp", "-p", str(c.pid)],
                           capture_output=True, text=True, timeout=300)
        kb = sum(k.get("AnonHugePages", 0) for _, _, k, _ in smaps_areas(c.pid))
        if not kb:
            raise Skip("the kernel gave the MADV_HUGEPAGE area no huge page")
        eq(r.returncode, 0, "thp as nobody: exit 0")
        warns = [ln for ln in r.stderr.splitlines() if "kpageflags" in ln and "root" in ln]
        eq(len(warns), 1, "one warning: which pages are huge needs root")
        rows = list(__import__("csv").DictReader(r.stdout.splitlines()))
        if check(len(rows) == 1, "one row (no *, which would sum unknowns)", r.stdout):
            eq(as_int(rows[0]["huge_pages"]), kb // 2048, "huge_pages: smaps' AnonHugePages")
            eq((rows[0]["huge_pages_split"], rows[0]["saved_bytes_without_split"]),
               ("", ""), "what needs the frames is empty")
    finally:
        c.close()


# --- numa -----------------------------------------------------------------------
NUMA = ["input", "nodes", "saved_bytes_across_nodes", "saved_bytes_within_nodes"]


@test("numa")
def numa_fake_nodes():
    rng = random.Random(5)
    uniq = [rng.randbytes(PAGE) for _ in range(40)]
    pages = [uniq[rng.randrange(12)] for _ in range(200)] + uniq[12:]
    c = Child({"pages": len(pages)}, b"".join(pages))
    try:
        start = c.info["pages"]
        rng_arg = "--range=0x%x-0x%x" % (start, start + len(pages) * PAGE)
        env = dict(os.environ, KSMSCAN_TEST_NODES="2")
        r = subprocess.run(KSMSCAN + ["--csv", "-r", "numa", "-p",
                           str(c.pid), rng_arg], env=env, capture_output=True, text=True)
        eq(r.returncode, 0, "numa with a fake two-node host: exit 0")
        rows = list(__import__("csv").DictReader(r.stdout.splitlines()))
        if not check(rows, "numa: a row", r.stdout + r.stderr):
            return
        nodes = [(start // PAGE + i) % 2 for i in range(len(pages))]
        within = sum(saved([p for p, n in zip(pages, nodes) if n == k]) for k in (0, 1))
        eq(as_int(rows[0]["nodes"]), 2, "two nodes")
        eq(as_int(rows[0]["saved_bytes_across_nodes"]), saved(pages), "across nodes")
        eq(as_int(rows[0]["saved_bytes_within_nodes"]), within, "within nodes")
        check(within < saved(pages), "the fake nodes cost something", repr(within))
        online = open("/sys/devices/system/node/online").read().strip()
        host = sum(int(b) - int(a) + 1 for a, _, b in
                   (x.partition("-") if "-" in x else (x, "", x) for x in online.split(",")))
        rows = csv_rows(["-r", "numa", "-p", str(c.pid), rng_arg], "numa here", NUMA)
        if rows and host == 1:
            eq(rows[0]["saved_bytes_within_nodes"], rows[0]["saved_bytes_across_nodes"],
               "one node here: the same saving")
            eq(as_int(rows[0]["nodes"]), 1, "one node here")
            t = run(["-r", "numa", "-p", str(c.pid), rng_arg])
            check("one NUMA node" in t.out, "the table says the host has one node", t.out)
    finally:
        c.close()


# --- openmetrics -----------------------------------------------------------------
@test("openmetrics")
def openmetrics_parses():
    try:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    except ImportError:
        raise Skip("python3-prometheus-client missing: run scripts/install-deps")
    rng = random.Random(7)
    pages = [rng.randbytes(PAGE) for _ in range(5)]
    data = b"".join(pages + pages[:3] + [bytes(PAGE)] * 2)
    label = 'we"ird\\name\nx'
    c = Child({})
    try:
        args = ["-o", "openmetrics", "--label", label, "-p", str(c.pid),
                "--by=cgroup", "-r", "summary,doctor,numa,thp", "-"]
        r = run(args, input=data)
        eq(r.rc, 0, "openmetrics: exit 0")
        check(r.out.endswith("# EOF\n"), "ends with # EOF", r.out[-40:])
        try:
            fams = list(text_string_to_metric_families(r.out))
        except Exception as e:   # the parser's own error types vary
            check(False, "the OpenMetrics parser accepts the output", repr(e))
            return
        names = {f.name for f in fams}
        for f in fams:
            check(f.name.startswith("ksmscan_"), "%s: prefix" % f.name)
            check(f.documentation, "%s has HELP" % f.name)
            eq(f.type, "gauge", "%s: TYPE" % f.name)
        lines = r.out.splitlines()
        for n in names:
            check("# HELP %s " % n in "\n".join(lines) and "# TYPE %s gauge" % n in lines,
                  "%s: HELP and TYPE lines" % n)
        fam = {f.name: f for f in fams}
        sb = fam.get("ksmscan_saved_bytes")
        pg = fam.get("ksmscan_pages")
        if not check(sb and pg, "ksmscan_saved_bytes and ksmscan_pages", sorted(names)):
            return
        byin = {s.labels["input"]: s.value for s in sb.samples}
        exp = saved(pages + pages[:3] + [bytes(PAGE)] * 2)
        eq(byin.get(label), exp, "the escaped label comes back, with its saving")
        eq({s.labels["input"]: s.value for s in pg.samples}.get(label), 10, "its pages")
        units = [s for s in sb.samples if s.labels["input"].startswith("cgroup:")]
        check(units and all(s.labels.get("unit_kind") == "cgroup" and
                            s.labels["input"] == "cgroup:" + s.labels["unit"]
                            for s in units), "--by rows carry unit_kind and unit labels",
              repr([s.labels for s in units]))
        om_pages = {s.labels["input"]: s.value for s in pg.samples}
        check(om_pages.get("pid:%d" % c.pid, 0) > 0, "the process has pages", repr(om_pages))
        en = run(["-o", "openmetrics", "-p", str(c.pid), "--enable=cgroup:" +
                  cgroup_path(c.pid)])
        pol = [ln for ln in en.out.splitlines() if ln.startswith("ksmscan_saved_bytes{")
               and 'policy="enable:cgroup:' in ln]
        check(pol, "the enable row has a policy label", en.out[-500:])
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-units-"))
