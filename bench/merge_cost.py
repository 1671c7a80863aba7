#!/usr/bin/python3
"""ksmd's CPU time per merge, measured on this host (live, opt-in).

    KSMSCAN_LIVE_TESTS=1 /usr/bin/python3 bench/merge_cost.py [PAGES [ROUNDS]]

ksmscan's replay charges ksmd's time per page it visits (--page-cost), per
KSM page it revisits (--revisit-cost) and per page it merges into a KSM page
(--merge-cost). This measures the last one as the kernel spends it: two
children of PAGES pages each (default 20000) in MADV_MERGEABLE memory, one
all unique (U), one in pairs of equal pages (D). KSM runs on each alone
(pages_to_scan 1000, sleep 20 ms, smart_scan 0), and ksmd's own CPU time
(/proc/KSMD/schedstat, first field: nanoseconds on a CPU, whatever else the
host runs) is sampled at each full scan's end. The second full scan is the
one that merges (the first records each page's checksum): in D every page joins a KSM page (PAGES merges), in U every
page is inserted in the unstable tree instead. The merge cost is

    (CPU of D's second scan - CPU of U's second scan) / merged pages

taken as the median of ROUNDS rounds (default 3). Runs only inside
live.ksm_session() (KSM idle; settings restored; what it merged unmerged).
A measurement, not a test.
"""
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import live  # noqa: E402
import test_ksm_live as tk  # noqa: E402
import advice_live  # noqa: E402

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
PTS, SLEEP = 1000, 20


def ksmd_pid():
    """The ksmd thread's pid (tests/advice_live.py), or the bench ends."""
    pid = advice_live.ksmd_pid()
    if pid is None:
        raise SystemExit("no ksmd thread")
    return pid


def ksmd_ns(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def scan_cpu(ks, layout, scans=3):
    """Run KSM on a child holding @layout; ksmd's CPU in each full scan."""
    child, _ = tk.start_child(layout)
    pid = ksmd_pid()
    try:
        f = tk.kread("full_scans")
        ks.set("run", 1)
        # the scan in progress when KSM starts is cut short: count from the next
        while tk.kread("full_scans") == f:
            time.sleep(0.002)
        f, t = tk.kread("full_scans"), ksmd_ns(pid)
        out = []
        while len(out) < scans:
            time.sleep(0.002)
            g = tk.kread("full_scans")
            if g != f:
                now = ksmd_ns(pid)
                out.append((now - t) * 1e-9)
                f, t = g, now
        merged = tk.kread("pages_shared") + tk.kread("pages_sharing")
    finally:
        ks.set("run", 0)
        ks.unmerge()
        ks.set("run", 0)
        tk.stop_child(child)
    return out, merged


def main():
    try:
        session = live.ksm_session()
    except live.NotAllowed as e:
        raise SystemExit("not measured: %s" % e)
    rng = random.Random(1)
    unique = [("u", rng.randbytes(tk.PAGE)) for _ in range(PAGES)]
    pairs = []
    for _ in range(PAGES // 2):
        p = rng.randbytes(tk.PAGE)
        pairs += [("d", p), ("d", p)]
    rng.shuffle(pairs)
    costs = []
    with session as ks:
        for k, v in (("max_page_sharing", 256), ("use_zero_pages", 0),
                     ("smart_scan", 0), ("advisor_mode", "none"),
                     ("merge_across_nodes", 1),
                     ("pages_to_scan", PTS), ("sleep_millisecs", SLEEP)):
            ks.set(k, v)
        for r in range(ROUNDS):
            cu, _ = scan_cpu(ks, unique)
            cd, merged = scan_cpu(ks, pairs)
            # counted from the end of the first full scan, which recorded
            # the checksums: the first counted one merges
            cost = (cd[0] - cu[0]) / merged if merged else float("nan")
            costs.append(cost)
            print("round %d: unique %s s, pairs %s s per full scan; %d merged; "
                  "%.2f us per merge, %.2f us per page visited (unique, scan 2)"
                  % (r + 1, ["%.4f" % x for x in cu], ["%.4f" % x for x in cd],
                     merged, cost * 1e6, cu[0] / PAGES * 1e6), flush=True)
    print("merge cost: median %.2f us over %d rounds (load %.2f per CPU)"
          % (statistics.median(costs) * 1e6, ROUNDS,
             os.getloadavg()[0] / os.cpu_count()))


if __name__ == "__main__":
    main()
