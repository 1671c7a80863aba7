#!/usr/bin/python3
"""Frames (docs/model.md, "Frames"): live pages counted by physical frame,
without root and without touching the kernel.

Each test writes a tree of files in a temporary folder, a /proc with
processes (maps, mem holding the pages at their addresses, pagemap with
the frame numbers and exclusive bits chosen here, stat and comm saying who
forked whom, kpageflags marking KSM frames) and runs ksmscan on it with
$KSMSCAN_HOST_ROOT pointing there. The oracle is written here from the
kernel's rule (mm/ksm.c never merges a page with itself): per content, F
distinct frames and M mappings; F = 1 and no KSM frame: nothing merges;
otherwise the M mappings merge as ksm_group() says (max_page_sharing
chains included); freed = F less the KSM pages and an unmerged leftover.
"""
import collections
import csv
import io
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (PAGE, Skip, check, eq, ksm_group, run, run_suite,  # noqa: E402
                     test, tmp, zero_page_mapped)

BASE = 0x10000000  # sparse files: mem holds pages at their addresses
PM_PRESENT, PM_EXCLUSIVE = 1 << 63, 1 << 56
KPF_KSM = 1 << 21
KPF_THP, KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL = 1 << 22, 1 << 15, 1 << 16
KPF_ZERO_PAGE = 1 << 24
ZERO = bytes(PAGE)


class Tree:
    """A fake /proc: processes with pages (address, content, pfn, exclusive)."""

    def __init__(self, name):
        self.root = tmp(name)
        self.procs = {}          # pid -> (ppid, comm, pages)
        self.ksm_pfns = set()
        self.pfn_flags = {}      # pfn -> other kpageflags bits

    def proc(self, pid, ppid, comm, pages, ksm_merging=0):
        self.procs[pid] = (ppid, comm, pages, ksm_merging)

    def write(self, hide_pfn=False):
        for pid, (ppid, comm, pages, ksm_merging) in self.procs.items():
            d = os.path.join(self.root, "proc", str(pid))
            os.makedirs(d, exist_ok=True)
            with open(d + "/comm", "w") as f:
                f.write(comm + "\n")
            with open(d + "/stat", "w") as f:
                f.write("%d (%s) S %d %d 0 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
                        "%d 0 0\n" % (pid, comm, ppid, pid, 100 + pid))
            with open(d + "/ksm_merging_pages", "w") as f:
                f.write("%d\n" % ksm_merging)
            lo = min(a for a, *_ in pages)
            hi = max(a for a, *_ in pages) + PAGE
            with open(d + "/maps", "w") as f:
                f.write("%x-%x rw-p 00000000 00:00 0 \n" % (lo, hi))
            with open(d + "/mem", "wb") as f:
                for a, data, _, _ in pages:
                    f.seek(a)
                    f.write(data)
            with open(d + "/pagemap", "wb") as f:
                for a, _, pfn, excl in pages:
                    f.seek(a // PAGE * 8)
                    f.write(struct.pack("<Q", PM_PRESENT | (PM_EXCLUSIVE if excl else 0)
                                        | (0 if hide_pfn else pfn)))
        if (self.ksm_pfns or self.pfn_flags) and not hide_pfn:
            # kpageflags has a word for every frame of the machine
            top = max(pfn for _, _, pages, _ in self.procs.values()
                      for _, _, pfn, _ in pages) + 1
            flags = bytearray(8 * top)
            for pfn in self.ksm_pfns:
                struct.pack_into("<Q", flags, 8 * pfn, KPF_KSM)
            for pfn, bits in self.pfn_flags.items():
                struct.pack_into("<Q", flags, 8 * pfn, bits)
            with open(os.path.join(self.root, "proc", "kpageflags"), "wb") as f:
                f.write(bytes(flags))
        return self

    def ksmscan(self, args):
        env = dict(os.environ, KSMSCAN_HOST_ROOT=self.root)
        old = os.environ.get("KSMSCAN_HOST_ROOT")
        os.environ.update(env)
        try:
            return run(args)
        finally:
            if old is None:
                del os.environ["KSMSCAN_HOST_ROOT"]
            else:
                os.environ["KSMSCAN_HOST_ROOT"] = old


def oracle(pages, m=256, z=False):
    """KSM's steady state of pages [(content, frame, is_ksm)] counted by frame;
    a frame None maps the kernel's zero page: no memory of the process (not
    in its pages) and no page ksmd visits (no rmap_item, never merged)."""
    by = collections.defaultdict(lambda: [0, set(), False])
    mappings = sum(1 for _, frame, _ in pages if frame is None)
    pages = [p for p in pages if p[1] is not None]
    for content, frame, ksm in pages:
        e = by[content]
        e[0] += 1
        e[1].add(frame)
        e[2] |= ksm
    out = dict(pages_shared=0, pages_sharing=0, ksm_zero_pages=0, freed=0)
    for content, (c, frames, ksm) in by.items():
        f = len(frames)
        if z and content == ZERO:
            out["ksm_zero_pages"] += c
            out["freed"] += f
            continue
        if c >= 2 and (f >= 2 or ksm):
            s, sh = ksm_group(c, m)
            out["pages_shared"] += s
            out["pages_sharing"] += sh
            out["freed"] += max(f - s - (c % m == 1), 0)
    n = len(pages)
    out["pages"] = n
    out["zero_page_mappings"] = mappings
    out["general_profit"] = (out["pages_sharing"] + out["ksm_zero_pages"]) * PAGE - \
        (n - out["ksm_zero_pages"]) * 64
    return out


def family_tree(rng, nchildren=3, npages=60, pool=12, p_fork=0.6, ksm=()):
    """A parent and its forked children (same command) and one unrelated
    process; contents from a small pool so that many repeat. Returns the
    tree and each process's pages as (content, frame, is_ksm)."""
    t = Tree("tree-%d" % rng.randrange(1 << 30))
    contents = [bytes([i]) * PAGE if i else ZERO for i in range(pool)]
    next_pfn = [1000]

    def pfn():
        next_pfn[0] += 1
        return next_pfn[0]
    parent = []
    for i in range(npages):
        parent.append([BASE + i * PAGE, rng.choice(contents), pfn(), True])
    kids = []
    for k in range(nchildren):
        pages = []
        for a, data, f, _ in parent:
            if rng.random() < p_fork:
                pages.append([a, data, f, False])      # still the parent's frame
            else:
                pages.append([a, rng.choice(contents), pfn(), True])  # written since
        kids.append(pages)
    # A frame several processes map is not exclusive in any of them.
    users = collections.Counter(f for pages in [parent] + kids for _, _, f, _ in pages)
    for pages in [parent] + kids:
        for p in pages:
            p[3] = users[p[2]] == 1
    other = [[BASE + i * PAGE, rng.choice(contents), pfn(), True] for i in range(npages // 2)]
    for f in ksm:
        t.ksm_pfns.add(f)
    t.proc(500, 1, "server", [tuple(p) for p in parent])
    for k, pages in enumerate(kids):
        t.proc(501 + k, 500, "server", [tuple(p) for p in pages])
    t.proc(600, 1, "other", [tuple(p) for p in other])
    procs = {500: parent, 600: other}
    for k, pages in enumerate(kids):
        procs[501 + k] = pages
    marked = {pid: [(d, f, f in t.ksm_pfns) for _, d, f, _ in pages]
              for pid, pages in procs.items()}
    return t, marked


def rows_of(r):
    return {x["input"]: x for x in csv.DictReader(io.StringIO(r.out))}


def compare(row, exp, what):
    for k in ("pages", "pages_shared", "pages_sharing", "ksm_zero_pages", "general_profit",
              "zero_page_mappings"):
        eq(int(row[k]), exp[k], "%s: %s" % (what, k))
    eq(int(row["freed_bytes"]), exp["freed"] * PAGE, "%s: freed_bytes" % what)


def scan_and_compare(t, marked, args, m=256, z=False, hidden=False):
    pids = sorted(marked)
    r = t.ksmscan(["--csv", "-m", str(m)] + (["-z"] if z else []) + args +
                  sum((["-p", str(p)] for p in pids), []))
    if not check(r.rc == 0, "ksmscan ran", r.brief()):
        return None
    rows = rows_of(r)
    for p in pids:
        compare(rows["pid:%d" % p], oracle(marked[p], m, z), "pid:%d" % p)
    compare(rows["*"], oracle(sum((marked[p] for p in pids), []), m, z), "*")
    want = "estimate" if hidden else "ok"
    eq({x["status"] for x in rows.values()}, {want}, "status")
    warned = r.err.count("run as root to count frames")
    eq(warned, 1 if hidden else 0, "the estimate's one warning")
    return rows


@test("frames")
def forked_contents_on_one_frame_never_merge():
    # Two processes map one frame of content A since fork: nothing merges.
    # Content B is on two frames: its two mappings merge.
    a, b = b"A" * PAGE, b"B" * PAGE
    t = Tree("one-frame")
    t.proc(100, 1, "srv", [(BASE, a, 11, False), (BASE + PAGE, b, 12, True)])
    t.proc(101, 100, "srv", [(BASE, a, 11, False), (BASE + PAGE, b, 22, True)])
    t.write()
    r = t.ksmscan(["--csv", "-p", "100", "-p", "101"])
    rows = rows_of(r)
    eq((rows["*"]["pages_shared"], rows["*"]["pages_sharing"], rows["*"]["freed_bytes"]),
       ("1", "1", str(PAGE)), "one frame merges nothing, two frames merge")
    # The same pages as a file, where each page is a frame: A merges too.
    img = tmp("one-frame.raw")
    with open(img, "wb") as f:
        f.write(a + b + a + b)
    rows = rows_of(run(["--csv", "-f", "raw", img]))
    eq((rows[img]["pages_sharing"], rows[img]["freed_bytes"]), ("2", str(2 * PAGE)),
       "a file: every page a frame")


@test("frames")
def random_trees_match_the_oracle():
    rng = random.Random(7)
    for trial in range(6):
        t, marked = family_tree(rng, nchildren=rng.randrange(1, 4),
                                p_fork=rng.choice([0.2, 0.6, 0.95]))
        t.write()
        m = rng.choice([2, 3, 256])
        z = trial % 3 == 2
        scan_and_compare(t, marked, [], m=m, z=z)


@test("frames")
def matrix_counts_frames():
    # -r matrix: each pair's saving together, by frame: a parent and a
    # child share frames, so that a content both map on one frame is not
    # merged by putting them together.
    rng = random.Random(13)
    for z in (False, True):
        t, marked = family_tree(rng, nchildren=2, p_fork=0.7)
        t.write()
        pids = sorted(marked)
        r = t.ksmscan(["--csv", "-r", "matrix"] + (["-z"] if z else []) +
                      sum((["-p", str(p)] for p in pids), []))
        got = {(x["input_a"], x["input_b"]): int(x["saved_together_bytes"])
               for x in csv.DictReader(io.StringIO(r.out))}
        if not eq(len(got), len(pids) * (len(pids) - 1) // 2, "a row per pair"):
            continue

        def saved(pages):
            o = oracle(pages, z=z)
            return o["pages_sharing"] + o["ksm_zero_pages"]
        for i, a in enumerate(pids):
            for b in pids[i + 1:]:
                want = (saved(marked[a] + marked[b]) - saved(marked[a]) -
                        saved(marked[b])) * PAGE
                eq(got.get(("pid:%d" % a, "pid:%d" % b)), want,
                   "pid:%d and pid:%d together%s" % (a, b, " -z" if z else ""))


@test("frames")
def ksm_frames_are_merged_already():
    # A frame that kpageflags marks KSM is merged though it is one frame.
    rng = random.Random(3)
    t, marked = family_tree(rng, nchildren=2, p_fork=0.9)
    parent_frames = [f for _, f, _ in marked[500]]
    ksm = set(parent_frames[:5])
    t, marked = family_tree(random.Random(3), nchildren=2, p_fork=0.9, ksm=ksm)
    for pid in (500, 501, 502):
        ppid, comm, pages, _ = t.procs[pid]
        t.procs[pid] = (ppid, comm, pages, 5)    # the kernel's ksm_merging_pages
    t.write()
    scan_and_compare(t, marked, [])
    # Without KSM frames marked (the process says it has none) they are not.
    for pid in t.procs:
        ppid, comm, pages, _ = t.procs[pid]
        t.procs[pid] = (ppid, comm, pages, 0)
    t.write()
    plain = {p: [(d, f, False) for d, f, _ in v] for p, v in marked.items()}
    scan_and_compare(t, plain, [])


@test("frames")
def groups_count_frames_within_the_group():
    rng = random.Random(11)
    t, marked = family_tree(rng, nchildren=2, p_fork=0.7)
    t.write()
    r = t.ksmscan(["--csv", "--group=fam=pid:500,pid:501", "-p", "500", "-p", "501",
                   "-p", "502", "-p", "600"])
    rows = rows_of(r)
    if check("group:fam" in rows, "the group's row", r.brief()):
        compare(rows["group:fam"], oracle(marked[500] + marked[501]), "group:fam")


@test("estimate")
def hidden_frames_are_estimated():
    # pfn 0 everywhere (not root): the estimate from the exclusive bit and
    # the family finds the same frames on a tree where forked pages sit at
    # the same address in parent and child.
    rng = random.Random(5)
    for trial in range(3):
        t, marked = family_tree(rng, nchildren=2, p_fork=0.7)
        t.write(hide_pfn=True)
        scan_and_compare(t, marked, [], hidden=True)


@test("estimate")
def estimate_needs_the_family():
    # The same address and content, not exclusive, in two processes that
    # are not parent and child (different commands): two frames, merged.
    a = b"A" * PAGE
    t = Tree("no-family")
    t.proc(100, 1, "one", [(BASE, a, 0, False)])
    t.proc(101, 1, "two", [(BASE, a, 0, False)])
    t.write(hide_pfn=True)
    rows = rows_of(t.ksmscan(["--csv", "-p", "100", "-p", "101"]))
    eq(rows["*"]["pages_sharing"], "1", "unrelated processes: two frames")
    t.proc(101, 100, "one", [(BASE, a, 0, False)])
    t.write(hide_pfn=True)
    rows = rows_of(t.ksmscan(["--csv", "-p", "100", "-p", "101"]))
    eq(rows["*"]["pages_sharing"], "0", "parent and child: one frame")


@test("series")
def replay_settles_on_the_frame_count():
    # A live series of a static tree: the replay's last scan reads what
    # the oracle says the kernel settles at; -r processes has each
    # process's frames and its pages another process maps.
    rng = random.Random(9)
    t, marked = family_tree(rng, nchildren=2, npages=40, p_fork=0.6)
    t.write()
    pids = sorted(marked)
    r = t.ksmscan(["--json", "-r", "summary,processes", "--interval=0.1s", "--count=2",
                   "--pages-to-scan=1000"] + sum((["-p", str(p)] for p in pids), []))
    if not check(r.rc == 0, "series ran", r.brief()):
        return
    doc = json.loads(r.out)
    exp = oracle(sum((marked[p] for p in pids), []))
    row = doc["summary"][0]
    compare(row, exp, "series")
    frames = collections.Counter(f for p in pids for _, f, _ in marked[p])
    owners = collections.defaultdict(set)
    for p in pids:
        for _, f, _ in marked[p]:
            owners[f].add(p)
    for x in doc["processes"]:
        p = x["pid"]
        eq(x["frames"], len({f for _, f, _ in marked[p]}), "pid %d frames" % p)
        eq(x["fork_shared_pages"], sum(1 for _, f, _ in marked[p] if len(owners[f]) > 1),
           "pid %d fork_shared_pages" % p)
    check(frames, "frames counted")


@test("pace")
def merge_cost_is_charged_per_page_merged():
    # Static memory of 50 contents, 4 copies each, replayed with no cost
    # per visit: ksmd's CPU is the merge cost times the pages that joined a
    # KSM page (pages_shared + pages_sharing at the end: none ever leaves).
    img = tmp("fours.raw")
    rng = random.Random(2)
    pages = [rng.randbytes(PAGE) for _ in range(50)] * 4
    rng.shuffle(pages)
    with open(img, "wb") as f:
        f.write(b"".join(pages))
    for cost in (1e-3, 0.0):
        r = run(["--series", img, img, "-f", "raw", "--interval=10s", "--page-cost=0",
                 "--revisit-cost=0", "--wake-cost=0", "--merge-cost=%gus" % (cost * 1e6), "--csv",
                 "-r", "policies", "--pages-to-scan=20"])
        rows = list(csv.DictReader(io.StringIO(r.out)))
        tl = run(["--series", img, img, "-f", "raw", "--interval=10s", "--page-cost=0",
                  "--revisit-cost=0", "--wake-cost=0", "--merge-cost=%gus" % (cost * 1e6), "--csv",
                  "-r", "timeline", "--pages-to-scan=20"])
        trows = list(csv.DictReader(io.StringIO(tl.out)))
        if not check(rows and trows, "policies and timeline", r.brief() + tl.brief()):
            return
        last = trows[-1]
        merged = int(last["pages_shared"]) + int(last["pages_sharing"])
        eq(merged, 200, "every page merged")
        want = 100 * merged * cost / float(last["seconds"])
        got = float(rows[0]["ksmd_cpu_percent_mean"])
        check(abs(got - want) <= 1e-4 + 1e-3 * want, "--merge-cost=%gus: ksmd's mean "
              "CPU %.4f%% (computed here)" % (cost * 1e6, want), "got %r" % got)
    r = run(["--series", img, img, "-f", "raw", "--merge-cost=2"])
    check(r.rc == 2 and "--merge-cost" in r.err, "--merge-cost=2 (seconds): exit 2, "
          "named", r.brief())
    r = run(["-f", "raw", img, "--merge-cost=3us"])
    check(r.rc == 2 and "needs --series" in r.err, "--merge-cost without a series: "
          "exit 2", r.brief())


# A live parent that writes pages, forks, and a child that rewrites some:
# the child keeps the parent's frames for the rest.
FORKED = r"""
import mmap, os, random, sys
n = int(sys.argv[1])
rng = random.Random(4)
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
ro = mmap.mmap(-1, 64 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for area in (m, ro):              # plain pages: khugepaged leaves them be
    area.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(64):               # read only: each maps the zero page
    ro[i * 4096]
for i in range(0, 64, 2):         # and zero pages of their own
    ro[i * 4096] = 1
    ro[i * 4096] = 0
pool = [rng.randbytes(4096) for _ in range(n // 8)]
for i in range(n):
    m[i * 4096:(i + 1) * 4096] = rng.choice(pool) if i % 3 else rng.randbytes(4096)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    for i in range(0, n, 5):      # copy on write: frames of its own
        m[i * 4096:(i + 1) * 4096] = rng.choice(pool)
    os.write(w, b"x")
    sys.stdin.read()
    os._exit(0)
os.read(r, 1)
print(os.getpid(), pid, flush=True)
sys.stdin.read()
os.waitpid(pid, 0)
"""


def zero_pfn():
    """The kernel's zero page's frame: what a private anonymous page only
    read maps (root; on a kernel that maps no zero page there, a frame of
    its own that no other process maps). test_apps_live.py counts by it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, PAGE, 1, 0x02 | 0x20, -1, 0)   # PROT_READ, PRIVATE|ANON
    ctypes.string_at(addr, 1)
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(addr // PAGE * 8)
        e = struct.unpack("<Q", f.read(8))[0]
    return e & ((1 << 55) - 1)


def zero_frames(pfns):
    """The frames of @pfns that kpageflags marks KPF_ZERO_PAGE (root): the
    kernel's zero page and huge zero page."""
    out = set()
    with open("/proc/kpageflags", "rb") as f:
        for pfn in pfns:
            f.seek(pfn * 8)
            if struct.unpack("<Q", f.read(8))[0] & KPF_ZERO_PAGE:
                out.add(pfn)
    return out


def live_pages(pid):
    """[(content digest, frame, False)] of a live process's private
    anonymous pages, read here from /proc/PID/maps, pagemap and mem (root);
    frame None for a mapping of a zero page (kpageflags)."""
    import xxhash
    out = []
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read().splitlines()
    with open("/proc/%d/pagemap" % pid, "rb") as pm, \
            open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for line in maps:
            parts = line.split()
            path = parts[5] if len(parts) > 5 else ""
            if parts[1][0] != "r" or parts[1][3] != "p" or parts[4] != "0" or \
                    (path and not path.startswith("[")) or \
                    path in ("[vvar]", "[vdso]", "[vsyscall]", "[vvar_vclock]"):
                continue
            s, e = (int(x, 16) for x in parts[0].split("-"))
            pm.seek(s // PAGE * 8)
            ents = struct.unpack("<%dQ" % ((e - s) // PAGE), pm.read((e - s) // PAGE * 8))
            for i, v in enumerate(ents):
                if not v >> 63:
                    continue
                mem.seek(s + i * PAGE)
                data = mem.read(PAGE)
                pfn = v & ((1 << 55) - 1)
                key = ZERO if data == ZERO else xxhash.xxh3_128_digest(data)
                out.append((key, pfn, False))
    zero = zero_frames({pfn for key, pfn, _ in out if key == ZERO})
    return [(key, None if pfn in zero else pfn, ksm) for key, pfn, ksm in out]


@test("live")
def forked_process_as_root():
    # As root, on a real parent and child (nothing in the kernel changed):
    # ksmscan's figures against the oracle over the frames pagemap gives
    # this test. The pages are read while both processes wait.
    if os.geteuid() != 0:
        raise Skip("needs root (frame numbers)")
    import subprocess
    p = subprocess.Popen([sys.executable, "-c", FORKED, "2000"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        parent, child = (int(x) for x in p.stdout.readline().split())
        for z in (False, True):
            # The kernel may move an idle process's pages (a huge page
            # split maps zero-filled ones to the zero page): the pages are
            # read before and after ksmscan, and compared when they held.
            for attempt in range(3):
                mine = {pid: live_pages(pid) for pid in (parent, child)}
                r = run(["--csv", "-p", str(parent), "-p", str(child)] +
                        (["-z"] if z else []))
                if mine == {pid: live_pages(pid) for pid in (parent, child)}:
                    break
            rows = rows_of(r)
            if not check("*" in rows, "ksmscan ran", r.brief()):
                return
            both = mine[parent] + mine[child]
            for pid in (parent, child):
                compare(rows["pid:%d" % pid], oracle(mine[pid], z=z),
                        "pid:%d%s" % (pid, " -z" if z else ""))
            compare(rows["*"], oracle(both, z=z), "*" + (" -z" if z else ""))
        shared = len({f for _, f, _ in mine[parent]} & {f for _, f, _ in mine[child]})
        check(shared > 1000, "the child maps most of its parent's frames", str(shared))
        check(int(rows["*"]["pages_sharing"]) < oracle(
            [(c, i, False) for i, (c, _, _) in enumerate(both)])["pages_sharing"],
            "fewer merge by frame than by page")
        if not zero_page_mapped():
            raise Skip("this kernel gives a page only read a frame of its own "
                       "(no shared zero page): the parent's zero-page mappings "
                       "cannot be checked here")
        zeros = sum(1 for _, f, _ in mine[parent] if f is None)
        check(zeros >= 32, "the parent maps the zero page", str(zeros))
    finally:
        p.stdin.close()
        p.wait()


@test("zero page")
def zero_page_mappings_are_not_memory():
    # Pages that map the kernel's zero page (pfn 7, KPF_ZERO_PAGE) or the
    # huge zero page (pfns 1024-1535, a compound THP) are no memory: not in
    # pages, zero_pages or the contents export, counted in
    # zero_page_mappings; zero-filled pages on frames of their own are.
    a, b = b"A" * PAGE, b"B" * PAGE
    t = Tree("zeropage")
    pages1 = [(a, 10), (a, 11), (b, 12), (ZERO, 20), (ZERO, 21),
              (ZERO, 7), (ZERO, 7), (ZERO, 7), (ZERO, 1024), (ZERO, 1025),
              (ZERO, 1535), (a, 13)]
    pages2 = [(ZERO, 7), (a, 30), (ZERO, 1100), (ZERO, 31)]
    t.proc(100, 1, "one", [(BASE + i * PAGE, d, f, f >= 10 and f < 1024)
                           for i, (d, f) in enumerate(pages1)])
    t.proc(200, 1, "two", [(BASE + i * PAGE, d, f, f >= 10 and f < 1024)
                           for i, (d, f) in enumerate(pages2)])
    t.pfn_flags[7] = KPF_ZERO_PAGE
    t.pfn_flags[1024] = KPF_ZERO_PAGE | KPF_THP | KPF_COMPOUND_HEAD
    for f in range(1025, 1536):
        t.pfn_flags[f] = KPF_ZERO_PAGE | KPF_THP | KPF_COMPOUND_TAIL
    t.write()
    marked = {pid: [(d, None if f in t.pfn_flags else f, False) for d, f in pages]
              for pid, pages in ((100, pages1), (200, pages2))}
    if scan_and_compare(t, marked, [], z=True) is None:
        return
    rows = scan_and_compare(t, marked, [])
    if rows is None:
        return
    eq([int(rows[k]["zero_page_mappings"]) for k in ("pid:100", "pid:200", "*")],
       [6, 2, 8], "zero_page_mappings: 3 + 3 huge, 1 + 1 huge, their sum")
    eq([int(rows[k]["zero_pages"]) for k in ("pid:100", "pid:200", "*")],
       [2, 1, 3], "zero_pages: the zero-filled frames only, summed in *")
    eq([int(rows[k]["pages"]) for k in ("pid:100", "pid:200", "*")], [6, 2, 8], "pages")
    eq(float(rows["pid:100"]["saved_percent"]), 100.0 * 3 / 6,
       "saved_percent over the 6 pages of memory (A x3 saves 2, zero x2 saves 1)")
    r = t.ksmscan(["--csv", "-r", "contents", "-p", "100", "-p", "200"])
    got = {(x["input"], int(x["zero"])): int(x["pages"])
           for x in csv.DictReader(io.StringIO(r.out)) if x["zero"] == "1"}
    eq(got, {("pid:100", 1): 2, ("pid:200", 1): 1}, "contents: zero rows count frames")
    # Without root pagemap hides the frames: nothing tells a mapping of the
    # zero page from a zero-filled page, and every zero page is read.
    t.write(hide_pfn=True)
    rows = rows_of(t.ksmscan(["--csv", "-p", "100"]))
    eq((int(rows["pid:100"]["pages"]), int(rows["pid:100"]["zero_page_mappings"])),
       (12, 0), "no frame numbers: every page read, no mapping told apart")


# A process with N pages in a MADV_MERGEABLE area, the first Z zero-filled
# (written: frames of their own), the rest 7 contents; it prints its pid.
MERGEABLE = r"""
import mmap, os, sys
n, z = int(sys.argv[1]), int(sys.argv[2])
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(n):
    m[i * 4096:(i + 1) * 4096] = bytes(4096) if i < z else bytes([i % 7 + 1]) * 4096
m.madvise(mmap.MADV_MERGEABLE)
print(os.getpid(), flush=True)
sys.stdin.read()
"""


@test("series")
def combined_row_sums_zero_pages():
    # Two live processes forecast together: the series row is both of them,
    # its zero_pages the sum of each one's (40 + 70 by construction), as
    # each forecast alone gives it.
    import subprocess
    procs = [subprocess.Popen([sys.executable, "-c", MERGEABLE, str(n), str(z)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for n, z in ((300, 40), (200, 70))]
    try:
        pids = [int(p.stdout.readline()) for p in procs]

        def summary(ps):
            r = run(sum((["-p", str(x)] for x in ps), []) +
                    ["--count=2", "--interval=0.2s", "-o", "json"])
            if not check(r.rc == 0, "the forecast ran", r.brief()):
                return None
            return json.loads(r.out)["summary"][0]
        both, one, two = summary(pids), summary(pids[:1]), summary(pids[1:])
        if None in (both, one, two):
            return
        # (a KSM running here with use_zero_pages may map some of the zero
        # pages to the kernel's zero page meanwhile: then mappings, not pages)
        eq([x["zero_pages"] + x["zero_page_mappings"] for x in (one, two)], [40, 70],
           "each process's zero pages")
        eq(both["zero_pages"] + both["zero_page_mappings"],
           sum(x["zero_pages"] + x["zero_page_mappings"] for x in (one, two)),
           "the combined row's zero pages: the sum of each process's (110)")
        eq(both["pages"] + both["zero_page_mappings"], 500, "the combined row's pages")
    finally:
        for p in procs:
            p.stdin.close()
            p.wait()


@test("errors")
def short_pagemap_is_said():
    # A pagemap that ends early: the pages past it are not read, the run says so.
    a = b"A" * PAGE
    t = Tree("short")
    t.proc(100, 1, "srv", [(BASE + i * PAGE, a, 10 + i, True) for i in range(4)])
    t.write()
    pm = os.path.join(t.root, "proc", "100", "pagemap")
    with open(pm, "r+b") as f:
        f.truncate((BASE // PAGE + 2) * 8)
    r = t.ksmscan(["--csv", "-p", "100"])
    rows = rows_of(r)
    check("pid:100" in rows and r.err.count("ksmscan:") >= 1,
          "a short pagemap: said on stderr, what was read reported", r.brief())


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-frames-"))
