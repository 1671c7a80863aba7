#!/usr/bin/python3
"""make bench: a live scan follows resident pages, not virtual size.

One process reserves 16 TiB with MAP_NORESERVE (any user may) and writes 3
pages of it; ksmscan -p scans it, once finding the next present page with
the kernel's PAGEMAP_SCAN (Linux 6.7 and later) and once reading every
pagemap entry, as ksmscan did before and still does where the kernel has no
PAGEMAP_SCAN and smaps shows the area resident (KSMSCAN_TEST_NO_PAGEMAP_SCAN).
The bound: the first under 1 s (it is milliseconds); the second is timed
once, stopped at 300 s. Benchmarks are not tests (tests/test_live_sparse.py
holds the bound of 20 s).
"""
import os, subprocess, sys, time

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))
SIZE = 16 << 40

CHILD = r"""
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
size = int(sys.argv[1])
a = libc.mmap(None, size, 3, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)
if a in (None, 2**64 - 1):
    print("0", flush=True)
    sys.exit(0)
for off in (0, size // 2, size - 4096):
    ctypes.memset(a + off, 0x41 + off % 7, 4096)
print("%x" % a, flush=True)
sys.stdin.readline()
"""


def timed(args, env, timeout):
    t = time.perf_counter()
    try:
        r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None
    rows = r.stdout.splitlines()
    return time.perf_counter() - t, rows[1].split(",")[3] if len(rows) > 1 else "?"


def main():
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(SIZE)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        a = int(p.stdout.readline(), 16)
        if not a:
            print("sparse: this kernel refused a 16 TiB reserve; skipped")
            return
        args = [KSMSCAN, "--csv", "-j1", "-p", str(p.pid),
                "--range=%#x-%#x" % (a, a + SIZE)]
        env = dict(os.environ)
        env.pop("KSMSCAN_TEST_NO_PAGEMAP_SCAN", None)
        fast = min((timed(args, env, 60) for _ in range(3)), key=lambda x: x[0] or 1e9)
        slow = timed(args, dict(env, KSMSCAN_TEST_NO_PAGEMAP_SCAN="1"), 300)
        print("sparse: -p of a 16 TiB MAP_NORESERVE reserve with 3 pages written")
        print("  %-34s %8.3f s  %s pages  (bound: 1 s, %s)" % (
            "PAGEMAP_SCAN", fast[0], fast[1], "met" if fast[0] < 1 else "MISSED"))
        print("  %-34s %8s    %s pages" % (
            "every pagemap entry (before)",
            "%.1f s" % slow[0] if slow[0] else "> 300 s", slow[1] or "?"))
    finally:
        p.kill()
        p.wait()


if __name__ == "__main__":
    main()
