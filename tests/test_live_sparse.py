#!/usr/bin/python3
"""Live scans walk only present memory: the time of a scan follows a process's
resident pages, not its virtual size. Any user can reserve terabytes with
MAP_NORESERVE and touch a few pages; scanning such a process (as
--all-processes and the metrics timer do, every run) once read one pagemap
entry per reserved page (a 16 TiB reserve: 47-120 s). The oracles are the
pages this file's child processes write, and the entry-by-entry walk
(KSMSCAN_TEST_NO_PAGEMAP_SCAN, which also stands for a kernel without
PAGEMAP_SCAN): both ways give the same figures.

Also: a process whose memory changes during the scan is reported at an
address, in hex, not at a decimal "offset".

Each child is the scanning user's own process, so these run as root and as a
normal user alike; they only read, and change no KSM setting.
"""
import csv, io, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, check, eq, run, run_suite, skip, test  # noqa: E402

TIB = 1 << 40

# A child that reserves SIZE bytes (MAP_NORESERVE), writes the pages at the
# offsets given, maps SMALL pages beside it with every page written, prints
# both addresses, and waits for a line on its standard input.
RESERVE = r"""
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
size, small = int(sys.argv[1]), int(sys.argv[2])
offsets = [int(x) for x in sys.argv[3:]]
flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000          # MAP_NORESERVE
a = libc.mmap(None, size, 3, flags, -1, 0)
# Without MAP_NORESERVE, so that the kernel does not merge the two areas.
b = libc.mmap(None, small * 4096, 3, flags & ~0x4000, -1, 0) if small else 0
if a in (None, 2**64 - 1) or b in (None, 2**64 - 1):
    print("mmap failed: errno %d" % ctypes.get_errno(), flush=True)
    sys.exit(0)
for i, off in enumerate(offsets):
    ctypes.memset(a + off, 0x41 + i, 4096)
for i in range(small):
    ctypes.memset(b + i * 4096, 0x61 + i % 5, 4096)
print("%x %x" % (a, b), flush=True)
sys.stdin.readline()
"""


class Child:
    """A RESERVE child: .pid, .reserve (its address), .small (its address);
    None addresses if this kernel refused the reserve."""

    def __init__(self, size, offsets, small=0):
        self.size = size
        self.p = subprocess.Popen([sys.executable, "-c", RESERVE, str(size), str(small)]
                                  + [str(o) for o in offsets],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        line = self.p.stdout.readline().split()
        self.why = " ".join(line)
        self.reserve = self.small = None
        if len(line) == 2 and not line[0].startswith("mmap"):
            self.reserve, self.small = int(line[0], 16), int(line[1], 16)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.kill()
        self.p.wait()


def scan(child, args=(), seek=True, timeout=300):
    """ksmscan --csv of the child; (seconds, first row, the run)."""
    env = dict(os.environ)
    env.pop("KSMSCAN_TEST_NO_PAGEMAP_SCAN", None)
    if not seek:
        env["KSMSCAN_TEST_NO_PAGEMAP_SCAN"] = "1"
    t = time.monotonic()
    r = run(["--csv", "-j1", "-p", str(child.pid)] + list(args), timeout=timeout, env=env)
    took = time.monotonic() - t
    rows = list(csv.DictReader(io.StringIO(r.out))) if r.rc == 0 else []
    return took, rows[0] if rows else {}, r


# What does not depend on how the pages were found.
FIGURES = ("pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing",
           "ksm_zero_pages", "saved_bytes", "general_profit", "status")


def only_range(child, size):
    return ["--range=%#x-%#x" % (child.reserve, child.reserve + size)]


@test("sparse")
def reserve_16tib_three_pages():
    """A 16 TiB MAP_NORESERVE reserve with 3 pages written: the scan reports
    3 pages and takes well under 20 s (it took 47 s and more)."""
    size = 16 * TIB
    with Child(size, [0, size // 2, size - PAGE]) as c:
        if c.reserve is None:
            skip("this kernel refused a 16 TiB reserve (%s)" % c.why)
            return
        took, row, r = scan(c, only_range(c, size), timeout=60)
        eq(r.rc, 0, "16 TiB reserve: exit 0 (%s)" % r.err.strip())
        eq(row.get("pages"), "3", "16 TiB reserve: the 3 pages written")
        eq(row.get("distinct_pages"), "3", "16 TiB reserve: 3 contents")
        check(took < 20, "16 TiB reserve with 3 pages: scanned in under 20 s "
              "(took %.1f s)" % took)


@test("sparse")
def untouched_reserve_skipped_either_way():
    """A 16 TiB reserve never written, beside 40 written pages: the scan is
    fast with PAGEMAP_SCAN and without it (smaps gives the reserve no
    resident page, so it is not walked), and counts the 40 pages."""
    with Child(16 * TIB, [], small=40) as c:
        if c.reserve is None:
            skip("this kernel refused a 16 TiB reserve (%s)" % c.why)
            return
        for seek in (True, False):
            how = "PAGEMAP_SCAN" if seek else "smaps' Rss"
            took, row, r = scan(c, seek=seek, timeout=60)
            eq(r.rc, 0, "%s: exit 0 (%s)" % (how, r.err.strip()))
            check(int(row.get("pages", 0)) >= 40, "%s: at least the 40 pages written (%s)"
                  % (how, row.get("pages")))
            check(took < 20, "%s: an untouched 16 TiB reserve is not walked (took %.1f s)"
                  % (how, took))
            took, row, r = scan(c, ["--range=%#x-%#x" % (c.small, c.small + 40 * PAGE)],
                                seek=seek)
            eq((row.get("pages"), row.get("distinct_pages")), ("40", "5"),
               "%s: the 40 written pages, 5 contents" % how)


@test("sparse")
def same_figures_both_ways():
    """A 1 GiB reserve with pages written here and there (runs across batch
    boundaries, lone pages, repeated contents), and the whole process: the
    same figures whether the next present page is found by the kernel or by
    reading every entry."""
    size = 1 << 30
    offs = sorted({(i * 7919 * PAGE) % size for i in range(300)}
                  | {(size // 3) // PAGE * PAGE + k * PAGE for k in range(600)}
                  | {255 * PAGE, 256 * PAGE, 257 * PAGE, size - PAGE})
    with Child(size, offs, small=3) as c:
        if c.reserve is None:
            skip("this kernel refused a 1 GiB reserve (%s)" % c.why)
            return
        for args in (only_range(c, size), []):
            what = "the reserve" if args else "the whole process"
            _, fast, r1 = scan(c, args)
            _, slow, r2 = scan(c, args, seek=False)
            eq((r1.rc, r2.rc), (0, 0), "%s: both ways exit 0" % what)
            eq({k: fast.get(k) for k in FIGURES}, {k: slow.get(k) for k in FIGURES},
               "%s: the same figures both ways" % what)
            if args:
                eq(fast.get("pages"), str(len(offs)), "the reserve: every page written")


# A child whose maps change all the time: a mapping of one, two or three
# pages, made before the one before it is unmapped, over and over.
CHURN = r"""
import mmap, sys
keep = [mmap.mmap(-1, 4096 * 64, flags=mmap.MAP_PRIVATE) for _ in range(32)]
for m in keep:
    m.write(b"k" * len(m))
print("ready", flush=True)
n, prev = 0, None
while True:
    m = mmap.mmap(-1, 4096 * (1 + n % 3), flags=mmap.MAP_PRIVATE)
    m.write(b"x" * len(m))
    if prev is not None:
        prev.close()
    prev = m
    n += 1
"""


@test("message")
def changed_memory_at_hex_address():
    """Memory that changes while it is read is reported at an address, in
    hex: "at address 0x...", never a decimal "at offset"."""
    for attempt in range(20):
        p = subprocess.Popen([sys.executable, "-c", CHURN], stdout=subprocess.PIPE, text=True)
        try:
            p.stdout.readline()
            r = run(["--csv", "-j1", "-p", str(p.pid)], timeout=60)
        finally:
            p.kill()
            p.wait()
        lines = [l for l in r.err.splitlines() if "memory changed during the scan" in l]
        if lines:
            check(re.search(r", at address 0x[0-9a-f]+$", lines[0]) is not None
                  and "offset" not in lines[0],
                  "the place of a live process is an address in hex", lines[0])
            eq(r.rc, 0, "memory changed during the scan: exit 0")
            return
    skip("the maps never changed during 20 scans")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-live-sparse-"))
