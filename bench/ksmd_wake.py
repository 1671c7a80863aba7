#!/usr/bin/python3
"""ksmd's CPU per wake-up and per page, measured on the running kernel
(live, opt-in), against the replay's ksmd_cpu_percent_mean.

    KSMSCAN_LIVE_TESTS=1 /usr/bin/python3 bench/ksmd_wake.py [PAGES] [SECONDS] [reverse]

A child fills PAGES (default 16384: 64 MiB) with bench/ksmd_cpu.py's mix
and marks it MADV_MERGEABLE.  KSM merges it (smart_scan 1), then for each
sleep_millisecs in 20, 50, 100, 200 and pages_to_scan in 10, 100, 1000 this
reads, over SECONDS (default 5), ksmd's CPU (sum_exec_runtime, the first
field of /proc/PID/schedstat; utime+stime too), its runs on a CPU (the
third: one a wake-up) and /sys/kernel/mm/ksm/pages_scanned.  A least-squares
fit of CPU = W * wake-ups + C * pages gives W, the cost of a wake-up with
no page, and C, a page's; the replay (ksmscan -r timeline at that setting,
16 full scans) gives its CPU over its last 8 (steady state, as the kernel's
is measured), printed beside the kernel's, with --wake-cost's default and
with --wake-cost=0 (pages%); and a fit of the kernel's CPU to the
replay's pages' and its wake-ups gives the --wake-cost of this host.
Runs only inside live.ksm_session() (KSM idle; settings restored).  A
measurement, not a test.
"""
import csv, io, os, random, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import live  # noqa: E402
import test_ksm_live as tk  # noqa: E402
import advice_live  # noqa: E402
from ksmd_cpu import layout  # noqa: E402

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
SLEEPS = (20, 50, 100, 200)
PTS = (10, 100, 1000)


def ksmd():
    """The ksmd thread's pid (tests/advice_live.py), or the bench ends."""
    pid = advice_live.ksmd_pid()
    if pid is None:
        raise SystemExit("no ksmd thread")
    return pid


def reading(pid, ks):
    """(time, CPU seconds, runs, ticks, pages_scanned) now."""
    with open("/proc/%d/schedstat" % pid) as f:
        run_ns, _, runs = (int(x) for x in f.read().split()[:3])
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (time.time(), run_ns * 1e-9, runs, int(st[11]) + int(st[12]),
            ks.read("pages_scanned"))


def replay_cpu(pid, start, end, pts, sleep, *more):
    out = subprocess.run(tk.ksmscan_cmd() + list(more) + [
        "-p", str(pid), "--range=0x%x-0x%x" % (start, end), "--count=2",
        "--interval=0.1s",
        "--pages-to-scan=%d" % pts, "--sleep-ms=%d" % sleep, "--smart-scan=1",
        "-r", "timeline", "--csv", "--scans=%d" % 16], capture_output=True,
        check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out.decode())))
    # steady state, as the kernel is measured: the CPU of the last half of
    # the scans (the mean to a row times its time is the CPU to then)
    a, b = rows[len(rows) // 2], rows[-1]
    ta, tb = float(a["seconds"]), float(b["seconds"])
    return (float(b["ksmd_cpu_percent_mean"]) * tb -
            float(a["ksmd_cpu_percent_mean"]) * ta) / (tb - ta)


def fit(rows):
    """W, C of cpu = W * wakes + C * pages, least squares (each row
    weighed by 1 / cpu: relative errors, the settings spanning 100 times)."""
    rows = [(w / c, p / c, 1.0) for w, p, c in rows if c > 0]
    a = sum(w * w for w, p, c in rows); b = sum(w * p for w, p, c in rows)
    d = sum(p * p for w, p, c in rows)
    e = sum(w * c for w, p, c in rows); f = sum(p * c for w, p, c in rows)
    det = a * d - b * b
    return (e * d - b * f) / det, (a * f - b * e) / det


def main():
    try:
        session = live.ksm_session()
    except live.NotAllowed as e:
        raise SystemExit("not measured: %s" % e)
    if not os.path.exists("/sys/kernel/mm/ksm/pages_scanned"):
        raise SystemExit("not measured: no pages_scanned (a kernel before 6.1)")
    hz = os.sysconf("SC_CLK_TCK")
    pid = ksmd()
    pages = layout(PAGES, random.Random(1))
    out = []
    with session as ks:
        ks.plain(smart_scan=1)
        child, start = tk.start_child(pages)
        try:
            end = start + PAGES * tk.PAGE
            pred = {(s, p): replay_cpu(child.pid, start, end, p, s)
                    for s in SLEEPS for p in PTS}
            bare = {(s, p): replay_cpu(child.pid, start, end, p, s, "--wake-cost=0")
                    for s in SLEEPS for p in PTS}
            ks.set("pages_to_scan", 1000); ks.set("sleep_millisecs", 20)
            ks.set("run", 1)
            deadline = time.time() + 60
            while ks.read("full_scans") < 6 and time.time() < deadline:
                time.sleep(0.1)
            # the settings in order, or (a third argument "reverse") from the
            # longest sleep: whether the order, not the setting, moves a figure
            rev = len(sys.argv) > 3 and sys.argv[3] == "reverse"
            for sleep in (SLEEPS[::-1] if rev else SLEEPS):
                for pts in PTS:
                    ks.set("sleep_millisecs", sleep); ks.set("pages_to_scan", pts)
                    time.sleep(max(0.5, 2 * sleep / 1000.0))
                    a = reading(pid, ks)
                    time.sleep(SECONDS)
                    b = reading(pid, ks)
                    dt = b[0] - a[0]
                    out.append((sleep, pts, dt, b[1] - a[1], b[2] - a[2],
                                (b[3] - a[3]) / hz, b[4] - a[4]))
        finally:
            tk.stop_child(child)
            ks.unmerge()
    w, c = fit([(o[4], o[6], o[3]) for o in out])
    # the wake-up's cost besides the replay's pages: kernel CPU less the
    # replay's at --wake-cost=0, over the wake-ups
    wr, kr = fit([(o[4], bare[o[:2]] / 100 * o[2], o[3]) for o in out])
    print("ksmd over %d pages (%d MiB), smart_scan 1, %g s a setting"
          % (PAGES, PAGES // 256, SECONDS))
    print("kernel alone: %.1f us a wake-up, %.3f us a page scanned" % (w * 1e6, c * 1e6))
    print("beside the replay's pages: --wake-cost=%.0fus, the pages' CPU times %.2f"
          % (wr * 1e6, kr))
    print("%6s %6s %8s %8s %8s %8s %8s %8s %8s %7s" % (
        "sleep", "pts", "wakes/s", "pages/s", "us/wake", "kern%", "ticks%",
        "pages%", "replay%", "err%"))
    errs = []
    for sleep, pts, dt, cpu, runs, ticks, scanned in out:
        kern, rep = 100 * cpu / dt, pred[(sleep, pts)]
        errs.append(abs(rep - kern) / kern)
        print("%6d %6d %8.1f %8.0f %8.1f %8.3f %8.3f %8.3f %8.3f %+7.0f" % (
            sleep, pts, runs / dt, scanned / dt, 1e6 * cpu / max(runs, 1),
            kern, 100 * ticks / dt, bare[(sleep, pts)], rep, 100 * (rep - kern) / kern))
    print("replay against the kernel: at worst %.0f%% off, median %.0f%%" % (
        100 * max(errs), 100 * sorted(errs)[len(errs) // 2]))


if __name__ == "__main__":
    main()
