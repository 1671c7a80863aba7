#!/usr/bin/python3
"""--by and --enable against the running kernel (docs/units.md).

Only with KSMSCAN_LIVE_TESTS=1, as root: the test makes two cgroups in the
cgroup2 hierarchy (/sys/fs/cgroup/unified in the hybrid layout, else
/sys/fs/cgroup when that is cgroup2) and moves its children there: A1 and
A2 into "a", B1 into "b", and D, a child A1 started, into "b" as well.
Leaving (normally, by an exception, or on SIGTERM, SIGINT, SIGHUP) ends the
children and removes both cgroups. (Transient systemd units would be the
same with systemd-run; this test uses cgroups, which need no systemd.)

- --by=cgroup: each cgroup's row has the pages and kernel columns of its
  processes' rows, summed; the cgroups are the ones made here.
- --enable=cgroup:PATH-of-a: the row holds A1, A2 and D (D is A1's
  descendant, though in "b"), not B1.
- Then, inside tests/live.py's KSM session (KSM idle before, every setting
  restored after; without it the children call no prctl, since KSM may be
  someone else's): A1 and A2 called prctl(PR_SET_MEMORY_MERGE) at their
  start and D inherited it; B1 did not (their ksm_merge_any says so). Each
  child holds 300 known pages at one fixed address, which --range selects
  in all. ksmd runs until its counters settle; then the kernel's page
  tables (pagemap, kpageflags' KSM bit) give the KSM pages of those pages
  and their further mappings, which equal the --enable row's pages_shared
  and pages_sharing; none of B1's is merged. A2's pages are mlocked: KSM
  merges them all the same (which is why the doctor has no "locked" reason).
"""
import atexit
import csv
import io
import json
import os
import select
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import live  # noqa: E402
import test_ksm_live as kl  # noqa: E402
from ksmtest import KSMSCAN  # noqa: E402
from test_ksm_live import check, eq, skip  # noqa: E402

M = 256

# The known pages sit at the same address in every child, so that one
# --range selects them in all (the interpreters' own memory differs).
ADDR = 0x300000000000
NPAGES = 300

CHILD = r"""
import ctypes, json, os, random, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
merge, spawn, seed = sys.argv[1] == "1", sys.argv[2] == "1", int(sys.argv[3])
addr, n = int(sys.argv[5]), int(sys.argv[6])
out = {}
if merge and libc.prctl(67, 1, 0, 0, 0):     # PR_SET_MEMORY_MERGE
    out["error"] = os.strerror(ctypes.get_errno())
# Private anonymous, at addr exactly (MAP_FIXED_NOREPLACE), no huge pages.
got = libc.mmap(addr, n * 4096, 3, 0x02 | 0x20 | 0x100000, -1, 0)
if got != addr:
    out["error"] = "mmap at 0x%x: %s" % (addr, os.strerror(ctypes.get_errno()))
libc.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(n * 4096), 15)
pool = [random.Random(26 + i).randbytes(4096) for i in range(40)]
rng = random.Random(seed)
for i in range(n):
    ctypes.memmove(addr + i * 4096, pool[rng.randrange(40)], 4096)
if len(sys.argv) > 7 and libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(n * 4096)):
    out["error"] = "mlock: " + os.strerror(ctypes.get_errno())
if spawn:
    p = subprocess.Popen([sys.executable, "-c", sys.argv[4], "0", "0",
                          str(seed + 100), sys.argv[4], sys.argv[5], sys.argv[6]],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out["spawned"] = p.pid
    p.stdout.readline()
sys.stdout.write(json.dumps(out) + "\n")
sys.stdout.flush()
sys.stdin.buffer.read()
"""


def cgroup2_root():
    for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        if os.path.exists(os.path.join(root, "cgroup.procs")) and \
                os.path.exists(os.path.join(root, "cgroup.controllers")):
            return root
    return None


class Cgroups:
    """Cgroups made for the test; leaving ends the children, removes them."""

    def __init__(self, root, names):
        self.root, self.children, self.paths = root, [], {}
        self.old = {s: signal.getsignal(s) for s in live.SIGNALS}
        for s in live.SIGNALS:
            signal.signal(s, self._on_signal)
        atexit.register(self.leave)
        for n in names:
            rel = "/ksmscan-test-%d-%s" % (os.getpid(), n)
            os.mkdir(root + rel)
            self.paths[n] = rel

    def move(self, pid, name):
        with open(self.root + self.paths[name] + "/cgroup.procs", "w") as f:
            f.write("%d\n" % pid)

    def _on_signal(self, signum, frame):
        self.leave()
        old = self.old.get(signum)
        if callable(old):
            old(signum, frame)
        sys.exit(128 + signum)

    def leave(self):
        for p in self.children:
            kl.stop_child(p)
        self.children = []
        for rel in list(self.paths.values()):
            path = self.root + rel
            try:
                with open(path + "/cgroup.procs") as f:
                    left = f.read().split()
                for pid in left:        # a grandchild still ending: back to the root
                    with open(self.root + "/cgroup.procs", "w") as f:
                        f.write(pid + "\n")
                os.rmdir(path)
            except OSError:
                pass
        self.paths = {}
        for s, h in self.old.items():
            signal.signal(s, h)


def start(cg, merge, spawn, seed, lock=False):
    p = subprocess.Popen([sys.executable, "-c", CHILD, "1" if merge else "0",
                          "1" if spawn else "0", str(seed), CHILD, str(ADDR),
                          str(NPAGES)] + (["mlock"] if lock else []),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    cg.children.append(p)
    ready, _, _ = select.select([p.stdout], [], [], 30)
    info = json.loads(p.stdout.readline() if ready else b"{}")
    if "error" in info:
        raise RuntimeError("prctl(PR_SET_MEMORY_MERGE): %s" % info["error"])
    return p.pid, info


def ksm_stat(pid):
    out = {}
    try:
        for line in open("/proc/%d/ksm_stat" % pid):
            k, _, v = line.partition(" ")
            out[k.rstrip(":")] = v.strip()
    except OSError:
        pass
    return out


def scan(args):
    args = args + ["--range=0x%x-0x%x" % (ADDR, ADDR + NPAGES * kl.PAGE)]
    r = subprocess.run(KSMSCAN + ["--csv", "-l", "-q"] + args, capture_output=True,
                       text=True, timeout=300)
    check(r.returncode == 0, "ksmscan %s: exit 0" % " ".join(args), r.stderr[-400:])
    return {row["input"]: row for row in csv.DictReader(io.StringIO(r.stdout))}


def sums(rows, pids, col):
    return sum(int(rows["pid:%d" % p][col]) for p in pids)


def units_checks(cg, procs):
    a1, a2, d, b1 = procs
    args = sum([["-p", str(p)] for p in procs], [])
    rows = scan(args + ["--by=cgroup", "--enable=cgroup:" + cg.paths["a"]])
    members = {"a": [a1, a2], "b": [b1, d]}
    for n, pids in members.items():
        row = rows.get("cgroup:" + cg.paths[n])
        if not check(row, "a row for cgroup %s" % cg.paths[n], sorted(rows)):
            continue
        for col in ("pages", "mergeable_pages", "thp_pages", "ksm_merging_pages",
                    "ksm_rmap_items"):
            eq(int(row[col]), sums(rows, pids, col), "cgroup %s: %s summed" % (n, col))
    en = rows.get("enable:cgroup:" + cg.paths["a"])
    if check(en, "an enable row", sorted(rows)):
        eq(int(en["pages"]), sums(rows, [a1, a2, d], "pages"),
           "--enable: A1, A2 and A1's descendant D (in b), not B1")
    return en


def ksm_checks(ks, procs, en):
    a1, a2, d, b1 = procs
    kl.M = M
    for p, exp in ((a1, "yes"), (a2, "yes"), (d, "yes"), (b1, "no")):
        eq(ksm_stat(p).get("ksm_merge_any"), exp,
           "pid %d: ksm_merge_any (prctl, inherited by D only)" % p)
    settled, now, _, secs, scans = kl.run_ksm_until_settled(ks, 0, a1)
    check(settled, "KSM settles", repr(now))
    eq(int(ksm_stat(b1).get("ksm_merging_pages", "0")), 0,
       "B1 (not enabled) has no merged page")
    # What KSM made of the known pages, from the kernel's page tables: one
    # KSM page per distinct KSM frame; the further mappings are sharing.
    frames, mappings = set(), 0
    for p in (a1, a2, d, b1):
        pm = kl.pagemap(p, ADDR, NPAGES)
        present = [e & kl.PFN_MASK for e in pm if e & kl.PM_PRESENT]
        flags = kl.kpageflags(present)
        ksm = [f for f in present if flags[f] & kl.KPF_KSM]
        if p == b1:
            eq(ksm, [], "B1's pages: none merged")
        if p == a2:
            check(len(ksm) > NPAGES // 2, "A2's mlocked pages are merged too",
                  "%d of %d" % (len(ksm), NPAGES))
        frames |= set(ksm)
        mappings += len(ksm)
    eq(len(frames), int(en["pages_shared"]),
       "KSM pages of the known pages (kernel) == the --enable row's pages_shared")
    eq(mappings - len(frames), int(en["pages_sharing"]),
       "further mappings of them (kernel) == the --enable row's pages_sharing")


def run_children(root, ks):
    """The cgroups and children; with a KSM session, prctl and ksmd too."""
    cg = Cgroups(root, ["a", "b"])
    try:
        # Without the session KSM may be someone else's: no prctl then.
        a1, info = start(cg, ks is not None, True, 1)
        d = info["spawned"]
        a2, _ = start(cg, ks is not None, False, 2, lock=True)
        b1, _ = start(cg, False, False, 3)
        for p, n in ((a1, "a"), (a2, "a"), (b1, "b"), (d, "b")):
            cg.move(p, n)
        procs = [a1, a2, d, b1]
        en = units_checks(cg, procs)
        if en and ks is not None:
            ksm_checks(ks, procs, en)
    finally:
        cg.leave()
    check(not any(os.path.exists(root + "/ksmscan-test-%d-%s" % (os.getpid(), n))
                  for n in "ab"), "the test's cgroups are gone")


def main():
    if not live.live_enabled():
        skip("KSMSCAN_LIVE_TESTS is not 1: cgroups and KSM are left alone")
        return
    root = cgroup2_root()
    if os.geteuid() != 0 or not root:
        skip("needs root and a cgroup2 hierarchy (found %r)" % root)
        return
    try:
        kl.preflight()
        session = live.ksm_session()
    except (kl.Skip, live.NotAllowed) as e:
        skip("KSM part: %s" % e)
        run_children(root, None)
        return
    with session as ks:
        run_children(root, ks)
    check(not ks.changed(), "KSM settings restored", repr(ks.changed()))

if __name__ == "__main__":
    kl.run_main(main, (OSError, RuntimeError))
