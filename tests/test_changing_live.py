#!/usr/bin/python3
"""The ksmd replay of changing memory against the running kernel's ksmd.

Run from the repository root with Debian's Python, as root:

    /usr/bin/python3 tests/test_changing_live.py [-v] [--table]

Changing memory.  A child process maps PAGES anonymous pages, marks them
MADV_MERGEABLE and fills them: 35% copies of a pool of 200 contents, 15%
zero pages (written, so pages of their own), 50% unique.  Every 100 ms it
rewrites a share of its pages, each with new content drawn the same way.
For each share written a second (0.5%, 2%, 10%), ksmd runs at 200 pages
every 20 ms with smart_scan 1 for RUN seconds while the test reads
/sys/kernel/mm/ksm every 50 ms, and `ksmscan -p PID --interval=1s
--count=RUN` takes snapshots of the same minute and replays them.  Steady
state is the mean over the second half of the run.  The replay's steady
pages_sharing and pages_volatile must be within 3% of the kernel's, its time
to 90% of the steady pages_sharing within 10%, its time per full scan
within 5% (the live time per full scan is measured from full_scans; the
load average is printed beside it: the kernel's ksmd is late under load,
and above three tasks a CPU these four figures are a SKIP line with their
values, not a verdict).

Several processes.  Four child processes share contents (a common pool)
besides their own; each is MADV_MERGEABLE in the order they start, and one
also has a private file mapping marked MADV_MERGEABLE, some of whose pages
it wrote (private copies: anonymous pages ksmd scans), and pages it only
read (the zero page: ksmd skips them).  `ksmscan -p A -p B -p C -p D
--interval --count` replays them as one memory: after its first full scan the
replay tracks as many pages (pages_volatile) as the kernel's ksm_rmap_items
of the four, and its steady pages_sharing is within 5% of the kernel's.

The oracle is the kernel.  It changes KSM's settings, so it runs only inside
live.ksm_session() (KSMSCAN_LIVE_TESTS=1, KSM idle; every setting restored,
also on signals; run=2 only after this test started KSM); otherwise one
SKIP.  --table prints the docs' table (docs/changing-memory.md).
"""

import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ksm_live as tk  # noqa: E402
from ksmtest import proc_comm  # noqa: E402
import test_series_live  # noqa: E402
from test_ksm_live import Skip, check, info, skip, finish  # noqa: E402

PAGES = 20000
RUN = int(os.environ.get("KSMSCAN_CHANGING_SECONDS", "40"))
PAGES_TO_SCAN, SLEEP_MS = 200, 20
RATES = tuple(float(r) for r in os.environ.get("KSMSCAN_CHANGING_RATES",
                                              "0.005,0.02,0.10").split(","))
TABLE = "--table" in sys.argv[1:]

# The writer: fills its mapping, then rewrites rate x n pages a second in
# steps of 100 ms until its standard input closes.
WRITER = r"""
import ctypes, mmap, os, random, select, sys
n, rate, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
pool = [rng.randbytes(4096) for _ in range(200)]
zero = bytes(4096)
def content():
    x = rng.random()
    return rng.choice(pool) if x < 0.35 else zero if x < 0.5 else rng.randbytes(4096)
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(n):
    p = content()
    if p == zero:
        m[i * 4096] = 1                  # a page of its own, not the zero page
        m[i * 4096] = 0
    else:
        m[i * 4096:(i + 1) * 4096] = p
m.madvise(mmap.MADV_MERGEABLE)
print(ctypes.addressof(ctypes.c_char.from_buffer(m)), flush=True)
per_step, carry = rate * n / 10.0, 0.0
while not select.select([sys.stdin], [], [], 0.1)[0]:
    carry += per_step
    while carry >= 1:
        carry -= 1
        i = rng.randrange(n)
        p = content()
        if p == zero:
            m[i * 4096] = 1
        m[i * 4096:(i + 1) * 4096] = p
"""


def ksm_setup(ks, smart=1):
    if not ks.unmerge():
        raise Skip("KSM started merging outside this test: %r" % tk.counters())
    ks.set("run", 0)
    ks.set("max_page_sharing", 256)
    ks.set("use_zero_pages", 0)
    ks.set("merge_across_nodes", 1)
    ks.set("smart_scan", smart)
    ks.set("advisor_mode", "none")
    ks.set("pages_to_scan", PAGES_TO_SCAN)
    ks.set("sleep_millisecs", SLEEP_MS)


def ksmd_runtime():
    """ksmd's CPU time so far (ns, /proc/PID/schedstat), or 0 if unknown."""
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and proc_comm(pid) == b"ksmd":
                return int(open("/proc/%s/schedstat" % pid).read().split()[0])
        except (OSError, ValueError):
            pass
    return 0


def sample(seconds):
    """The kernel's counters every 10 ms for @seconds after run=1 (given):
    [(t, full_scans, pages_sharing, pages_volatile, pages_unshared)]."""
    out, t0 = [], time.time()
    while time.time() - t0 < seconds:
        out.append((time.time() - t0, tk.kread("full_scans"), tk.kread("pages_sharing"),
                    tk.kread("pages_volatile"), tk.kread("pages_unshared")))
        time.sleep(0.01)
    return out


def per_scan(samples):
    """{full scan: (t, sharing, volatile, unshared)}: the first sample after
    each full scan ended (within 10 ms of it: a batch or two of the next).
    smart_scan moves pages between unshared and volatile from one scan to
    the next, so the replay's rows are compared scan by scan."""
    out = {}
    for t, f, sh, vol, un in samples:
        if f >= 1 and f not in out:
            out[f] = (t, sh, vol, un)
    return out


def replay_rows(proc, what):
    out, err = proc.communicate(timeout=RUN + 120)
    if not check(proc.returncode == 0, "%s: ksmscan exits 0" % what,
                 err.decode("utf-8", "replace")[-400:]):
        return None
    return [{k: float(v) for k, v in r.items() if k != "input"}
            for r in csv.DictReader(io.StringIO(out.decode(), newline=""))]


def steady(points, lo, hi):
    """The mean of (t, value) points with lo <= t <= hi."""
    vals = [v for t, v in points if lo <= t <= hi]
    return sum(vals) / len(vals) if vals else float("nan")


def to_90(points, level):
    return next((t for t, v in points if v >= 0.9 * level), float("nan"))


# Of the writer's writes, the share that leaves a page's bytes as they were
# (a zero page over a zero page, a pool copy over the same one): the
# snapshots cannot see them; --write-rate is told of them.
SAME_BYTES = 0.15 ** 2 + 0.35 ** 2 / 200
UNSEEN = os.environ.get("KSMSCAN_CHANGING_UNSEEN", "1") == "1"


def ksmscan_args(cmd, pids, interval, count, write_rate=0.0):
    args = list(cmd) + (["--write-rate=%.6f" % write_rate] if write_rate else [])
    for pid in pids:
        args += ["-p", str(pid)]
    return args + ["--interval=%gs" % interval, "--count=%d" % count, "-q",
                   "--pages-to-scan=%d" % PAGES_TO_SCAN, "--sleep-ms=%d" % SLEEP_MS,
                   "--smart-scan=1", "-r", "timeline", "--csv"]


# Above this 1-minute load average (3 tasks a CPU) the pace is not compared.
LOAD_MAX = 3.0 * (os.cpu_count() or 1)


def within(got, exp, pct, what, detail=""):
    ok = abs(got - exp) <= pct / 100.0 * abs(exp)
    return check(ok, "%s: replay %.4g, kernel %.4g, within %g%%" % (what, got, exp, pct),
                 detail)


def changing_phase(ks, cmd, rate, table):
    label = "writing %g%%/s" % (100 * rate)
    ksm_setup(ks)
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(PAGES), str(rate), "7"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        int(child.stdout.readline())
        proc = subprocess.Popen(ksmscan_args(cmd, [child.pid], 1.0, RUN,
                                             rate * SAME_BYTES if UNSEEN else 0.0),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        cpu0, scanned0 = ksmd_runtime(), tk.kread("pages_scanned")
        ks.set("run", 1)
        samples = sample(RUN)
        cpu = (ksmd_runtime() - cpu0) / max(1, tk.kread("pages_scanned") - scanned0)
        rows = replay_rows(proc, label)     # ksmd runs on: run=2 ends it
    finally:
        tk.stop_child(child)
    if not rows:
        return
    load = open("/proc/loadavg").read().split()[0]
    lo, hi = RUN / 2.0, RUN - 1.0
    live = per_scan(samples)
    rep = {int(r["scan"]): (r["seconds"], r["pages_sharing"], r["pages_volatile"],
                            r["pages_unshared"]) for r in rows}
    scans = [f for f in sorted(live) if lo <= live[f][0] <= hi and f in rep]
    if not check(len(scans) >= 3, "%s: the kernel and the replay both made full "
                 "scans in the second half" % label, "%r" % scans):
        return

    def mean(d, k):
        return sum(d[f][k] for f in scans) / len(scans)
    live_sh, live_vol, live_un = mean(live, 1), mean(live, 2), mean(live, 3)
    rep_sh, rep_vol, rep_un = mean(rep, 1), mean(rep, 2), mean(rep, 3)
    live_90 = to_90([(v[0], v[1]) for _, v in sorted(live.items())], live_sh)
    rep_90 = to_90([(v[0], v[1]) for _, v in sorted(rep.items())], rep_sh)
    live_scan = (live[scans[-1]][0] - live[scans[0]][0]) / (scans[-1] - scans[0])
    rep_scan = (rep[scans[-1]][0] - rep[scans[0]][0]) / (scans[-1] - scans[0])
    detail = ("pages_sharing %.0f -> %.0f, pages_volatile %.0f -> %.0f, to 90%% "
              "%.1f / %.1f s, per full scan %.3f / %.3f s, load %s; pages_unshared "
              "%.0f -> %.0f" % (live_sh, rep_sh, live_vol, rep_vol, live_90, rep_90,
                                live_scan, rep_scan, load, live_un, rep_un))
    detail += "; ksmd's CPU %.2f us per page scanned" % (cpu / 1000.0)
    info(label + ": " + detail)
    table.append((rate, live_sh, rep_sh, live_vol, rep_vol, live_90, rep_90,
                  live_scan, rep_scan, load))
    if float(load) > LOAD_MAX:
        # The replay takes the host's load as it was while the snapshots
        # were read; a host much busier than that (other builds, other
        # tests) makes ksmd late in ways no snapshot saw.
        skip("%s: the load average %s is above %g: ksmd's pace is not "
             "compared (%s)" % (label, load, LOAD_MAX, detail))
        return
    within(rep_sh, live_sh, 3, "%s: steady pages_sharing" % label, detail)
    within(rep_vol, live_vol, 3, "%s: steady pages_volatile" % label, detail)
    within(rep_90, live_90, 10, "%s: time to 90%%" % label, detail)
    within(rep_scan, live_scan, 5, "%s: time per full scan" % label, detail)


# A process of the shared service: a mapping of its own contents and of a
# pool common to all, MADV_MERGEABLE; the first also maps a file privately,
# writes some of its pages (private copies) and only reads others.
SERVICE = r"""
import ctypes, mmap, os, random, select, sys
n, k, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
common = random.Random(1)
pool = [common.randbytes(4096) for _ in range(400)]
rng = random.Random(100 + k)
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(n):
    m[i * 4096:(i + 1) * 4096] = pool[i % 400] if i < 0.6 * n else rng.randbytes(4096)
reads = 0
m.madvise(mmap.MADV_MERGEABLE)
z = mmap.mmap(-1, 256 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
z.madvise(mmap.MADV_NOHUGEPAGE)
z.madvise(mmap.MADV_MERGEABLE)
for i in range(0, 256, 2):
    reads += z[i * 4096]                     # maps the zero page
for i in range(1, 256, 4):
    z[i * 4096:(i + 1) * 4096] = pool[i]      # anonymous pages
if k == 0:
    f = open(path, "rb")
    fm = mmap.mmap(f.fileno(), 512 * 4096, flags=mmap.MAP_PRIVATE,
                   prot=mmap.PROT_READ | mmap.PROT_WRITE)
    fm.madvise(mmap.MADV_MERGEABLE)
    for i in range(512):
        reads += fm[i * 4096]                 # page cache pages: not scanned
    for i in range(0, 512, 2):
        fm[i * 4096:(i + 1) * 4096] = pool[i % 400]   # private copies: scanned
print(os.getpid(), flush=True)
sys.stdin.buffer.read()
"""


def rmap_items(pids):
    total = 0
    for pid in pids:
        stat = tk.ksm_stat(pid)
        total += stat.get("ksm_rmap_items", 0)
    return total


def processes_phase(ks, cmd):
    label = "four processes"
    ksm_setup(ks)
    tmp = tempfile.NamedTemporaryFile(prefix="ksmscan-changing-", delete=False)
    tmp.write(os.urandom(512 * 4096))
    tmp.close()
    children = []
    try:
        for k in range(4):
            c = subprocess.Popen([sys.executable, "-c", SERVICE, "3000", str(k), tmp.name],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            children.append(c)
            int(c.stdout.readline())
        pids = [c.pid for c in children]
        seconds = 20
        proc = subprocess.Popen(ksmscan_args(cmd, pids[::-1], 1.0, seconds),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ks.set("run", 1)
        t0 = time.time()
        while tk.kread("full_scans") < 1 and time.time() - t0 < 30:
            time.sleep(0.01)
        first_rmap = rmap_items(pids)
        samples = sample(seconds - (time.time() - t0))
        rows = replay_rows(proc, label)
    finally:
        for c in children:
            tk.stop_child(c)
        os.unlink(tmp.name)
    if not rows:
        return
    first = rows[0]
    tracked = first["pages_volatile"] + first["pages_unshared"] + \
        first["pages_shared"] + first["pages_sharing"]
    check(tracked == first_rmap, "%s: after the first full scan the replay tracks "
          "the kernel's ksm_rmap_items (%d)" % (label, first_rmap),
          "replay %d" % tracked)
    live_sh = steady([(t, s) for t, _, s, _, _ in samples], seconds / 2.0, seconds)
    rep_sh = steady([(r["seconds"], r["pages_sharing"]) for r in rows], seconds / 2.0,
                    seconds)
    info("%s: pages_sharing %.0f -> %.0f" % (label, live_sh, rep_sh))
    within(rep_sh, live_sh, 5, "%s: steady pages_sharing across them" % label)


def print_table(table):
    print("| written per second | pages_sharing live -> replay | error | "
          "pages_volatile live -> replay | error | time to 90% live / replay | "
          "s per full scan live / replay | load |")
    print("|---|---|---|---|---|---|---|---|")
    for rate, ls, rs, lv, rv, l90, r90, lsc, rsc, load in table:
        print("| %g%% | %.0f -> %.0f | %+.1f%% | %.0f -> %.0f | %+.1f%% | %.1f / %.1f s "
              "| %.3f / %.3f | %s |" % (100 * rate, ls, rs, 100 * (rs - ls) / ls, lv, rv,
                                        100 * (rv - lv) / lv, l90, r90, lsc, rsc, load))


def main():
    session = test_series_live.smart_scan_session()
    cmd = tk.ksmscan_cmd()
    table = []
    with session as ks:
        try:
            for rate in RATES:
                changing_phase(ks, cmd, rate, table)
            if not os.environ.get("KSMSCAN_CHANGING_RATES"):
                processes_phase(ks, cmd)
        except Skip as e:
            skip(str(e))
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
    check(not ks.problems, "every KSM setting restored", repr(ks.problems))
    check(ks.changed() == [], "KSM settings as before the test", repr(ks.changed()))
    if TABLE:
        print_table(table)
    shutil.rmtree(test_series_live.TMP, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
