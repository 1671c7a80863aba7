#!/usr/bin/python3
"""--policy=advisor against the running kernel's scan-time advisor. Run by
hand (not a test_*.py suite): its pages_to_scan check cannot pass on every
scan, since the kernel does not repeat itself within 10% on this memory
(docs/policies.md, "Against the kernel's advisor").

Run from the repository root with Debian's Python, as root:

    /usr/bin/python3 tests/advisor_live_check.py [-v]

The fixture guest's 36896 pages in a child (test_series_live's), marked
MADV_MERGEABLE.  First ksmd runs with fixed settings (100 pages every 20 ms
would take minutes: 2000 pages every 20 ms) for SCANS full scans, and the
test measures ksmd's CPU time per page scanned (/proc/PID/schedstat over
pages_scanned), apart for the KSM pages it revisits: the replay's
--page-cost and --revisit-cost, as a user would measure them.  Then
`ksmscan -p PID --interval=1s --count=2 --policy=advisor
--advisor-target-scan-time=T --scans=SCANS` replays the advisor, and the
kernel runs with advisor_mode=scan-time and the same target; after each of
its full scans the test reads /sys/kernel/mm/ksm.  The counters after each
full scan must equal the replay's (static memory: they do not depend on the
pace), pages_to_scan after each full scan must be within 10% of the
kernel's (the advisor reacts to measured time and CPU, in whole seconds and
whole percents), and the time per full scan within 5% (the load average is
printed beside it).

The oracle is the kernel.  It changes KSM's settings, so it runs only inside
live.ksm_session() (KSMSCAN_LIVE_TESTS=1, KSM idle, a kernel with
advisor_mode: Linux 6.9+; every setting restored); otherwise one SKIP.
"""

import csv
import io
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import random  # noqa: E402
import test_ksm_live as tk  # noqa: E402
import test_series_live as tsl  # noqa: E402
import test_changing_live as tcl  # noqa: E402
from test_ksm_live import Skip, check, eq, info, skip, finish  # noqa: E402

SCANS = int(os.environ.get("KSMSCAN_ADVISOR_SCANS", "10"))
TARGET = 2              # advisor_target_scan_time, seconds
CALIBRATE_PTS = 2000
CALIBRATE_SCANS = 10
COUNTERS = ("pages_shared", "pages_sharing", "pages_unshared", "pages_volatile",
            "ksm_zero_pages")


def start_guest():
    pages, _ = tsl.guest_layout(random.Random(1))
    child = subprocess.Popen([sys.executable, "-c", tsl.WRITER, str(len(pages))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    child.stdin.write(b"".join(pages))
    child.stdin.flush()
    int(child.stdout.readline())
    return child, len(pages)


def after_scans(n, timeout=300):
    """[(t, counters, pages_to_scan)] read just after each of n full scans."""
    out, f, t0 = [], tk.kread("full_scans"), time.time()
    while len(out) < n and time.time() - t0 < timeout:
        now = tk.kread("full_scans")
        if now != f:
            f = now
            row = {k: tk.kread(k) for k in COUNTERS}
            out.append((time.time() - t0, row, tk.kread("pages_to_scan")))
        time.sleep(0.002)
    return out


def calibrate(ks):
    """ksmd's CPU seconds per page it checksums and per KSM page it revisits,
    on this memory with fixed settings: per full scan, the CPU time
    (/proc/PID/schedstat) and pages_scanned; the KSM pages' addresses at a
    scan's start are the last scan's pages_shared + pages_sharing. Scans
    that only revisited (smart_scan passed every unmerged page) give the
    revisit's cost; the rest of the CPU is the other pages'."""
    tcl.ksm_setup(ks)                       # advisor_mode none, 20 ms
    ks.set("pages_to_scan", CALIBRATE_PTS)
    f, cpu, scanned = tk.kread("full_scans"), tcl.ksmd_runtime(), tk.kread("pages_scanned")
    merged, rows = 0, []
    ks.set("run", 1)
    while len(rows) < CALIBRATE_SCANS:
        while tk.kread("full_scans") == f:
            time.sleep(0.001)
        f = tk.kread("full_scans")
        c2, s2 = tcl.ksmd_runtime(), tk.kread("pages_scanned")
        rows.append(((c2 - cpu) / 1e9, s2 - scanned, merged))
        merged = tk.kread("pages_shared") + tk.kread("pages_sharing")
        cpu, scanned = c2, s2
    only = [(c, n) for c, n, m in rows if n == m and m]
    revisit = sum(c for c, _ in only) / max(1, sum(n for _, n in only))
    rest = [(c - revisit * m, n - m) for c, n, m in rows if n > m]
    cost = sum(c for c, _ in rest) / max(1, sum(n for _, n in rest))
    info("ksmd's CPU: %.2f us per page checksummed, %.2f us per KSM page "
         "revisited (%d scans of revisits only)" % (cost * 1e6, revisit * 1e6,
                                                    len(only)))
    return cost, revisit


def advisor_phase(ks, cmd, pid, costs):
    cost, revisit = costs
    tcl.ksm_setup(ks)
    args = cmd + ["-p", str(pid), "--interval=1s", "--count=2", "-q", "--csv",
                  "-r", "timeline", "--policy=advisor", "--sleep-ms=20",
                  "--advisor-target-scan-time=%ds" % TARGET,
                  "--page-cost=%.3fus" % (cost * 1e6),
                  "--revisit-cost=%.3fus" % (revisit * 1e6), "--scans=%d" % SCANS]
    r = subprocess.run(args, capture_output=True, timeout=600)
    if not check(r.returncode == 0, "ksmscan --policy=advisor exits 0", r.stderr[-300:]):
        return
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode(), newline="")))
    ks.set("advisor_target_scan_time", TARGET)
    ks.set("advisor_mode", "scan-time")     # pages_to_scan = advisor_min_pages_to_scan
    eq(tk.kread("pages_to_scan"), 500, "the advisor starts at advisor_min_pages_to_scan")
    ks.set("run", 1)
    kernel = after_scans(SCANS)
    load = open("/proc/loadavg").read().split()[0]
    if not eq(len(kernel), SCANS, "the kernel made %d full scans" % SCANS):
        return
    for i, ((t, k, pts), m) in enumerate(zip(kernel, rows)):
        info("scan %d: kernel %.2f s pages_to_scan %d %r; replay %s s pages_to_scan %s"
             % (i + 1, t, pts, k, m["seconds"], m["pages_to_scan"]))
        for name in COUNTERS:
            eq(int(m[name]), k[name], "scan %d: %s" % (i + 1, name))
        got = int(m["pages_to_scan"])
        check(abs(got - pts) <= 0.1 * pts, "scan %d: pages_to_scan within 10%%: "
              "replay %d, kernel %d" % (i + 1, got, pts))
    live_scan = (kernel[-1][0] - kernel[0][0]) / (SCANS - 1)
    rep_scan = (float(rows[SCANS - 1]["seconds"]) - float(rows[0]["seconds"])) / (SCANS - 1)
    check(abs(rep_scan - live_scan) <= 0.05 * live_scan, "time per full scan within "
          "5%%: replay %.3f s, kernel %.3f s (load %s)" % (rep_scan, live_scan, load))


def main():
    session = tsl.smart_scan_session()
    if not tk.has("advisor_mode"):
        skip("this kernel's KSM has no advisor_mode (Linux < 6.9)")
        finish()
    cmd = tk.ksmscan_cmd()
    with session as ks:
        child = None
        try:
            child, _ = start_guest()
            costs = calibrate(ks)
            advisor_phase(ks, cmd, child.pid, costs)
        except Skip as e:
            skip(str(e))
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
        finally:
            tk.stop_child(child)
    check(not ks.problems, "every KSM setting restored", repr(ks.problems))
    check(ks.changed() == [], "KSM settings as before the test", repr(ks.changed()))
    finish()


if __name__ == "__main__":
    main()
