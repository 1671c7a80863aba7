#!/usr/bin/python3
"""ksmd's real CPU against the replay's ksmd_cpu_percent (live, opt-in).

    KSMSCAN_LIVE_TESTS=1 /usr/bin/python3 bench/ksmd_cpu.py [PAGES]

A child fills PAGES (default 65536: 256 MiB) of private memory with a mix
(30% zero pages, 20% in duplicate groups, 50% unique) and marks it
MADV_MERGEABLE; with every knob at its default but smart_scan, ksmd runs
on it for 40 s while this script samples ksmd's utime + stime
(/proc/PID/stat of the ksmd thread). ksmscan snapshots the child and replays
ksmd with the same settings. Printed side by side, per phase: the kernel's
CPU over the wall time, and the mean ksmd_cpu_percent of the replay's scans
in that phase. Runs only inside live.ksm_session() (KSM idle; settings
restored). A measurement, not a test.
"""
import csv, io, os, random, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import live  # noqa: E402
import test_ksm_live as tk  # noqa: E402

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
SECONDS = 40
PTS, SLEEP = 100, 20          # the kernel's defaults


def layout(n, rng):
    groups = [rng.randbytes(tk.PAGE) for _ in range(max(1, n // 50))]
    out = []
    for _ in range(n):
        x = rng.random()
        p = bytes(tk.PAGE) if x < 0.3 else rng.choice(groups) if x < 0.5 \
            else rng.randbytes(tk.PAGE)
        out.append(("", p))
    return out


def ksmd_ticks():
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and open("/proc/%s/comm" % pid).read().strip() == "ksmd":
                f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
                return int(f[11]) + int(f[12])      # utime + stime
        except OSError:
            pass
    raise SystemExit("no ksmd thread")


def main():
    try:
        session = live.ksm_session()
    except live.NotAllowed as e:
        raise SystemExit("not measured: %s" % e)
    hz = os.sysconf("SC_CLK_TCK")
    pages = layout(PAGES, random.Random(1))
    with session as ks:
        for k, v in (("max_page_sharing", 256), ("use_zero_pages", 0),
                     ("smart_scan", 1), ("advisor_mode", "none"),
                     ("pages_to_scan", PTS), ("sleep_millisecs", SLEEP)):
            ks.set(k, v)
        child, start = tk.start_child(pages)
        try:
            end = start + PAGES * tk.PAGE
            out = subprocess.run(tk.ksmscan_cmd() + [
                "-p", str(child.pid), "--range=0x%x-0x%x" % (start, end),
                "--count=2", "--interval=0.1s", "--pages-to-scan=%d" % PTS,
                "--sleep-ms=%d" % SLEEP, "--smart-scan=1", "-r", "timeline",
                "--csv", "--scans=40"], capture_output=True, check=True).stdout
            rows = list(csv.DictReader(io.StringIO(out.decode())))
            t0, c0 = time.time(), ksmd_ticks()
            ks.set("run", 1)
            marks = []
            while time.time() - t0 < SECONDS:
                time.sleep(1)
                marks.append((time.time() - t0, ksmd_ticks() - c0))
        finally:
            tk.stop_child(child)
            ks.unmerge()
    print("ksmd over %d pages (%d MiB), %d pages every %d ms, smart_scan 1"
          % (PAGES, PAGES // 256, PTS, SLEEP))
    print("%-22s %12s %12s" % ("phase", "kernel %CPU", "replay %CPU"))
    for lo, hi in ((0, 20), (20, 40)):
        a = [m for m in marks if m[0] <= lo + 1.01][-1] if lo else (0.0, 0)
        b = [m for m in marks if m[0] <= hi + 0.01][-1]
        kern = 100.0 * (b[1] - a[1]) / hz / (b[0] - a[0])
        sel = [float(r["ksmd_cpu_percent"]) for r in rows
               if lo <= float(r["seconds"]) < hi] or [float(rows[-1]["ksmd_cpu_percent"])]
        print("%-22s %12.2f %12.2f" % ("%d-%d s" % (lo, hi), kern, sum(sel) / len(sel)))


if __name__ == "__main__":
    main()
