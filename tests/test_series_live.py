#!/usr/bin/python3
"""ksmscan's ksmd replay (--series) against the running kernel's ksmd, scan by scan.

Run from the repository root with Debian's Python, as root:

    /usr/bin/python3 tests/test_series_live.py [-v]

Static memory.  A child process fills a private anonymous mapping with known
pages (groups of identical pages around max_page_sharing, zero pages, unique
pages: test_ksm_live's layout) and marks it MADV_MERGEABLE.  ksmscan takes
two snapshots of it with `-p PID --interval --count=2` and replays ksmd over
them for 8 full scans.  Then the kernel's ksmd runs on the same child with a
pages_to_scan larger than the mapping (so that every wake-up is one full
scan) and a long sleep, and after each of its first 8 full scans the test
reads /sys/kernel/mm/ksm: pages_shared, pages_sharing, pages_unshared,
pages_volatile, pages_skipped (from the start), ksm_zero_pages and
general_profit must equal the replay's row for that scan, exactly.  Four
phases: smart_scan 0 and 1, each with use_zero_pages 0 and 1 (-z).

Changing memory.  The child then rewrites a known set of pages (some of them
duplicates) every few milliseconds while ksmd runs, and `ksmscan -p PID
--interval --count` snapshots it at the pace of ksmd's full scans; at the last
snapshot, pages_volatile and pages_sharing of the replay must be within 5% of
the kernel's.

The oracle is the kernel.  It changes KSM's settings, so it runs only inside
live.ksm_session() (KSMSCAN_LIVE_TESTS=1, KSM idle; every setting restored,
also on signals, run=2 only after this test started KSM); otherwise one SKIP.
"""

import csv
import io
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import live  # noqa: E402
import test_ksm_live as tk  # noqa: E402
from test_ksm_live import Skip, check, eq, info, skip, finish  # noqa: E402

SCANS = 8                # full scans compared one by one
SLEEP_MS = 250           # ksmd's sleep: the test reads the counters meanwhile
PAGES_TO_SCAN = 10000    # larger than the mapping: one wake-up, one full scan
CHANGE_SNAPS = 16        # snapshots of the changing memory
PAGES_TO_SCAN_GUEST = 100000     # more than the guest's 36896 pages
TMP = tempfile.mkdtemp(prefix="ksmscan-series-live-")
COUNTERS = ("pages_shared", "pages_sharing", "pages_unshared", "pages_volatile",
            "pages_skipped", "ksm_zero_pages", "general_profit")


def replay(cmd, pid, start, end, smart, z, extra):
    """The replay's timeline rows of the child's mapping ({column: int})."""
    args = cmd + ["-p", str(pid), "--range=0x%x-0x%x" % (start, end),
                  "-m", str(tk.M), "--pages-to-scan=%d" % PAGES_TO_SCAN,
                  "--sleep-ms=%d" % SLEEP_MS, "--smart-scan=%d" % smart,
                  "-r", "timeline", "--csv"] + (["-z"] if z else []) + extra
    r = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=tk.TIMEOUT + 60)
    if not check(r.returncode == 0, "`%s` exits 0" % " ".join(args),
                 r.stderr.decode("utf-8", "replace")[-400:]):
        return None
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode(), newline="")))
    return [{k: int(v) for k, v in row.items() if k in COUNTERS or k == "scan"}
            for row in rows]


def kernel_scans(n, skipped0, f, timeout=60):
    """The counters after each of ksmd's n full scans after full scan f (read
    before run=1: ksmd's first scan of a small area is over in microseconds,
    and its counters are read in the sleep that follows it)."""
    out = []
    deadline = time.time() + timeout
    while len(out) < n and time.time() < deadline:
        now = tk.kread("full_scans")
        if now == f:
            time.sleep(0.002)
            continue
        if now != f + 1:
            raise RuntimeError("missed a full scan (%d -> %d): the test read "
                               "too late" % (f, now))
        f = now
        row = {k: tk.kread(k) for k in COUNTERS}
        row["pages_skipped"] -= skipped0
        if tk.kread("full_scans") != f:
            raise RuntimeError("ksmd scanned again while the test read")
        out.append(row)
    return out


def ksm_setup(ks, smart, z):
    """Unmerge what this test merged, and set ksmd's knobs (KSM stopped)."""
    if not ks.unmerge():
        raise Skip("KSM started merging outside this test: %r" % tk.counters())
    ks.set("run", 0)
    ks.set("max_page_sharing", tk.M)
    ks.set("use_zero_pages", z)
    ks.set("merge_across_nodes", 1)
    ks.set("smart_scan", smart)
    ks.set("advisor_mode", "none")
    ks.set("pages_to_scan", PAGES_TO_SCAN)
    ks.set("sleep_millisecs", SLEEP_MS)


def static_phase(ks, cmd, layout, smart, z):
    label = "static memory, smart_scan=%d use_zero_pages=%d" % (smart, z)
    ksm_setup(ks, smart, z)
    child = None
    try:
        child, start = tk.start_child(layout)
        end = start + len(layout) * tk.PAGE
        model = replay(cmd, child.pid, start, end, smart, z,
                       ["--interval=0.05s", "--count=2", "--scans=%d" % SCANS])
        if model is None:
            return
        eq(len(model), SCANS, "%s: the replay has %d full scans" % (label, SCANS))
        skipped0 = tk.kread("pages_skipped") if tk.has("pages_skipped") else 0
        f0 = tk.kread("full_scans")
        ks.set("run", 1)
        kernel = kernel_scans(SCANS, skipped0, f0)
        eq(len(kernel), SCANS, "%s: the kernel made %d full scans" % (label, SCANS))
        for i, (k, m) in enumerate(zip(kernel, model)):
            info("%s scan %d: kernel %r, replay %r" % (label, i + 1, k, m))
            for name in COUNTERS:
                eq(m[name], k[name], "%s: scan %d: %s" % (label, i + 1, name),
                   "kernel %r; replay %r" % (k, m))
    finally:
        tk.stop_child(child)


# The child of test_ksm_live, which then rewrites the pages its arguments name
# (a counter in their first 8 bytes) every 2 ms until its standard input closes.
REWRITER = tk.CHILD.replace('sys.stdin.buffer.read()                 # until the test closes our stdin', '''
import os, select, struct, time
rewrite = [int(a) for a in sys.argv[2:]]
k = 0
while not select.select([sys.stdin], [], [], 0.002)[0]:
    k += 1
    for i in rewrite:
        m[i * 4096:i * 4096 + 8] = struct.pack("<Q", k * 100003 + i)
''')


def start_rewriter(layout, rewrite):
    p = subprocess.Popen([sys.executable, "-c", REWRITER, str(len(layout))] +
                         [str(i) for i in rewrite],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(b"".join(pg for _, pg in layout))
    p.stdin.flush()
    return p, int(p.stdout.readline())


def within(got, exp, pct, what, detail):
    return check(abs(got - exp) <= pct / 100.0 * max(exp, 1), what,
                 "kernel %d, replay %d (more than %d%% apart); %s"
                 % (exp, got, pct, detail))


def changing_phase(ks, cmd, layout, rng):
    label = "changing memory, smart_scan=1"
    assert "rewrite = " in REWRITER, "the child's rewriting loop is in place"
    ksm_setup(ks, 1, 0)
    # A tenth of the pages, duplicates among them, rewritten all the time.
    rewrite = sorted(rng.sample(range(len(layout)), len(layout) // 10))
    dups = sum(1 for i in rewrite if layout[i][0] not in ("unique",))
    child = None
    try:
        child, start = start_rewriter(layout, rewrite)
        end = start + len(layout) * tk.PAGE
        interval = SLEEP_MS / 1000.0
        args = cmd + ["-p", str(child.pid), "--range=0x%x-0x%x" % (start, end),
                      "-m", str(tk.M), "--pages-to-scan=%d" % PAGES_TO_SCAN,
                      "--sleep-ms=%d" % SLEEP_MS, "--smart-scan=1",
                      "--interval=%gs" % interval, "--count=%d" % CHANGE_SNAPS,
                      "--scans=%d" % (2 * CHANGE_SNAPS), "-r", "timeline", "--csv"]
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        skipped0 = tk.kread("pages_skipped")
        ks.set("run", 1)                 # full_scans counts from 0 after run=2
        out, err = proc.communicate(timeout=tk.TIMEOUT + 60)
        # The counters between two scans, and which scan they follow: the
        # replay's row of that scan is compared (smart_scan's skips make
        # pages_unshared and pages_volatile alternate from scan to scan).
        kernel = kernel_scans(1, skipped0, tk.kread("full_scans"))[0]
        scan = tk.kread("full_scans")
        if not check(proc.returncode == 0, "%s: ksmscan exits 0" % label,
                     err.decode("utf-8", "replace")[-400:]):
            return
        rows = list(csv.DictReader(io.StringIO(out.decode(), newline="")))
        if not check(0 < scan <= len(rows), "%s: the replay reaches the kernel's "
                     "scan %d" % (label, scan), "%d rows" % len(rows)):
            return
        last = {k: int(v) for k, v in rows[scan - 1].items() if k in COUNTERS}
        detail = "%d of %d pages rewritten (%d duplicates); after full scan %d: " \
            "kernel %r, replay %r" % (len(rewrite), len(layout), dups, scan,
                                      kernel, last)
        info(label + ": " + detail)
        check(kernel["pages_volatile"] >= len(rewrite) // 2,
              "%s: the kernel sees the rewritten pages as volatile" % label, detail)
        for name in ("pages_volatile", "pages_sharing"):
            within(last[name], kernel[name], 5, "%s: %s after the last snapshot"
                   % (label, name), detail)
    finally:
        tk.stop_child(child)


# A child that holds pages and, on each command from its standard input (a
# 4-byte count, then per page a 4-byte index and 4096 bytes), writes them;
# it answers "ok" when they are written.
WRITER = tk.CHILD.replace('sys.stdin.buffer.read()                 # until the test closes our stdin', '''
import struct
while True:
    head = sys.stdin.buffer.read(4)
    if len(head) < 4:
        break
    for _ in range(struct.unpack("<I", head)[0]):
        i = struct.unpack("<I", sys.stdin.buffer.read(4))[0]
        page = sys.stdin.buffer.read(4096)
        if page == zero:
            m[i * 4096] = 1
        m[i * 4096:(i + 1) * 4096] = page
    sys.stdout.write("ok\\n")
    sys.stdout.flush()
''')


def guest_layout(rng):
    """The fixture guest's pages, and a tenth of them changed (a byte flipped)."""
    import zstandard
    import test_series
    from ksmtest import fixture
    elf = zstandard.ZstdDecompressor().stream_reader(
        open(fixture("guest-b.elf.zst"), "rb")).read()
    pages = [p for _, p in sorted(test_series.elf_pages(elf).items())]
    changed = {}
    for i in rng.sample(range(len(pages)), len(pages) // 10):
        k = rng.randrange(tk.PAGE)
        p = bytearray(pages[i])
        p[k] ^= 0xff
        changed[i] = bytes(p)
    return pages, changed


def write_raw(path, pages):
    with open(path, "wb") as f:
        f.write(b"".join(pages))


def guest_phase(ks, cmd, pages, changed, smart, before=4, after=6):
    """The guest, then the guest with 10% changed between two full scans."""
    label = "guest +10%%, smart_scan=%d" % smart
    ksm_setup(ks, smart, 0)
    second = list(pages)
    for i, p in changed.items():
        second[i] = p
    snaps = [os.path.join(TMP, "guest-%d.raw" % k) for k in (1, 2)]
    write_raw(snaps[0], pages)
    write_raw(snaps[1], second)
    # One wake-up per full scan: scan k runs at (k - 1) x sleep (--hz=0: the
    # test, not the timer, decides when ksmd scans), so the second snapshot
    # holds from scan before + 1 on.
    args = cmd + ["--series", "--hz=0", "--interval=%gs" % (before * SLEEP_MS / 1000.0),
                  "-m", str(tk.M), "--pages-to-scan=%d" % PAGES_TO_SCAN_GUEST,
                  "--sleep-ms=%d" % SLEEP_MS, "--smart-scan=%d" % smart,
                  "--scans=%d" % (before + after), "-r", "timeline", "--csv"] + snaps
    r = subprocess.run(args, capture_output=True, timeout=tk.TIMEOUT + 60)
    if not check(r.returncode == 0, "%s: ksmscan exits 0" % label, r.stderr.decode()[-300:]):
        return
    model = [{k: int(v) for k, v in row.items() if k in COUNTERS}
             for row in csv.DictReader(io.StringIO(r.stdout.decode(), newline=""))]
    ks.set("pages_to_scan", PAGES_TO_SCAN_GUEST)
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(len(pages))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        child.stdin.write(b"".join(pages))
        child.stdin.flush()
        int(child.stdout.readline())
        skipped0 = tk.kread("pages_skipped")
        f0 = tk.kread("full_scans")
        ks.set("run", 1)
        kernel = kernel_scans(before, skipped0, f0)
        ks.set("run", 0)                 # between two scans: ksmd waits
        if tk.kread("full_scans") != f0 + before:
            raise RuntimeError("ksmd went on past scan %d" % before)
        child.stdin.write(struct.pack("<I", len(changed)) + b"".join(
            struct.pack("<I", i) + p for i, p in sorted(changed.items())))
        child.stdin.flush()
        check(child.stdout.readline() == b"ok\n", "%s: the child wrote" % label)
        ks.set("run", 1)
        kernel += kernel_scans(after, skipped0, f0 + before)
    finally:
        tk.stop_child(child)
    eq(len(kernel), before + after, "%s: the kernel made %d full scans"
       % (label, before + after))
    for i, (k, m) in enumerate(zip(kernel, model)):
        info("%s scan %d: kernel %r, replay %r" % (label, i + 1, k, m))
        for name in COUNTERS:
            eq(m[name], k[name], "%s: scan %d: %s" % (label, i + 1, name),
               "kernel %r; replay %r" % (k, m))


def smart_scan_session():
    """live.ksm_session() on a kernel with smart_scan, or one SKIP and the end."""
    try:
        tk.preflight()
        if not tk.has("smart_scan") or not tk.has("pages_skipped"):
            raise Skip("this kernel's KSM has no smart_scan (Linux < 6.7)")
        return live.ksm_session()
    except (Skip, live.NotAllowed) as e:
        skip(str(e))
        finish()


def main():
    session = smart_scan_session()
    cmd = tk.ksmscan_cmd()
    seed = int.from_bytes(os.urandom(8), "little")
    rng = random.Random(seed)
    layout = tk.make_layout(rng)
    with session as ks:
        try:
            for smart in (0, 1):
                for z in (0, 1):
                    static_phase(ks, cmd, layout, smart, z)
            changing_phase(ks, cmd, layout, rng)
            pages, changed = guest_layout(rng)
            for smart in (0, 1):
                guest_phase(ks, cmd, pages, changed, smart)
        except Skip as e:
            skip(str(e))
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
    check(ks.saved, "the test changed KSM settings (so the restore below is tested)")
    check(not ks.problems, "every KSM setting restored", repr(ks.problems))
    eq(ks.changed(), [], "KSM settings as before the test")
    eq(tk.counters(), {k: 0 for k in tk.counters()}, "no KSM pages left after the test")
    if tk.STATE["failed"]:
        print("(seed %d)" % seed)
    shutil.rmtree(TMP, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
