#!/usr/bin/python3
"""What counting live pages by frame costs (`make bench`).

A parent fills PAGES pages (default 65536: 256 MiB) with contents of which
half repeat, then forks 3 children that keep its frames and rewrite an
eighth of them each. `ksmscan -p PARENT -p CHILD...` reads the four
processes; printed per run: the pages read, the run's time and its time per
page, the freed_bytes of `*` and its status. As root the frames are read
from pagemap; without CAP_SYS_ADMIN (setpriv) they are estimated; frames
cost 16 bytes a page noted, sorted once per process and once for `*`. No
kernel setting is changed.
"""
import csv
import io
import os
import random
import subprocess
import sys
import time

KSMSCAN = os.environ.get("KSMSCAN", "./ksmscan").split()
PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
PAGE = 4096

CHILD = r"""
import mmap, os, random, sys, time
n = int(sys.argv[1])
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
rng = random.Random(1)
pool = [rng.randbytes(4096) for _ in range(n // 16)]
for i in range(n):
    m[i * 4096:(i + 1) * 4096] = rng.choice(pool) if i % 2 else rng.randbytes(4096)
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        r = random.Random(k + 2)
        for i in range(0, n, 8):
            j = r.randrange(n)
            m[j * 4096:j * 4096 + 8] = r.randbytes(8)
        print(os.getpid(), flush=True)
        sys.stdin.read()
        os._exit(0)
    kids.append(pid)
time.sleep(0.5)
print(os.getpid(), flush=True)
sys.stdin.read()
for pid in kids:
    os.kill(pid, 9)
"""


def timed(args, prefix=()):
    t = time.perf_counter()
    p = subprocess.run(list(prefix) + KSMSCAN + args, capture_output=True, text=True)
    dt = time.perf_counter() - t
    rows = {r["input"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
    return dt, rows, p


def main():
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(PAGES)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(child.stdout.readline()) for _ in range(4)]
        args = sum((["-p", str(p)] for p in pids), []) + ["--csv"]
        print("who: pages run_s ns_per_page freed_bytes status  (%d processes, %d pages each)"
              % (len(pids), PAGES))
        for who, prefix in (("root", ()), ("estimate", ("setpriv", "--bounding-set",
                                                        "-sys_admin", "--"))):
            if who == "root" and os.geteuid() != 0:
                continue
            dt, rows, p = timed(args, prefix)
            star = rows.get("*")
            if not star:
                print("%s: no * row: %s" % (who, p.stderr.strip()[-200:]))
                continue
            pages = int(star["pages"])
            print("%s: %d %.3f %.0f freed=%s status=%s" % (
                who, pages, dt, dt * 1e9 / pages, star["freed_bytes"], star["status"]))
    finally:
        child.stdin.close()
        child.wait()


if __name__ == "__main__":
    main()
