"""What ksmscan holds in memory, for the tests that bound it (test_series,
test_record): its peak anonymous resident memory, and two snapshots of one
memory that differ in a few pages."""
import random
import subprocess
import time

from ksmtest import KSMSCAN, PAGE, tmp


def peak_anon_kib(args, stdout=subprocess.DEVNULL):
    """ksmscan's peak anonymous resident memory (RssAnon, polled every 5
    ms), in KiB, and its exit status: the memory it holds, apart from the
    file pages it maps (the snapshots' bytes, which the kernel may drop).
    Its output goes to @stdout (a file), or nowhere."""
    p = subprocess.Popen(KSMSCAN + args, stdout=stdout,
                         stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    return p.returncode, peak


def two_memories(n, name, seed=44):
    """Two raw snapshots of one memory of @n pages (a tenth zero pages, the
    others distinct), the second with 5% of the pages rewritten: their
    paths, tmp() files named after @name."""
    rng = random.Random(seed)
    mem = bytearray(n * PAGE)
    for i in range(n):
        if i % 10:
            mem[i * PAGE:i * PAGE + 8] = (i + 1).to_bytes(8, "little")
    a, b = tmp(name + "-a.raw"), tmp(name + "-b.raw")
    with open(a, "wb") as f:
        f.write(mem)
    for k, i in enumerate(rng.sample(range(n), n // 20)):
        mem[i * PAGE:i * PAGE + 8] = (n + 1 + k).to_bytes(8, "little")
    with open(b, "wb") as f:
        f.write(mem)
    return a, b


def release_build():
    """Whether KSMSCAN is a release build (sanitizers add shadow memory,
    which peak memory must not count)."""
    return not any(x in KSMSCAN[0] for x in ("build-check", "build-tsan"))
