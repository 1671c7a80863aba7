#!/usr/bin/python3
"""make bench, part 4: the ksmd replay of --series, and that it is linear.

Writes (once, cached in $KSMSCAN_BENCH_DIR or /tmp/ksmscan-bench/series)
snapshots of one memory of M pages -- 30% zero pages, 20% in duplicate
groups, 50% unique -- each snapshot with 5% of the pages of the one before
rewritten. For N snapshots of M pages it times, interleaved, best of three:
  ksmscan SNAP...                 the snapshots scanned as separate inputs
  ksmscan --series SNAP...        the same, replayed through ksmd
with ksmd set to one wake-up per full scan and one scan per snapshot
(--pages-to-scan=M --sleep-ms=100 --interval=0.1s), so that the replay
visits about N x M pages. The replay's cost is the difference; its pages per
second per snapshot should stay flat as N and M grow (O(N x M)). Then the
memory of 2 and 8 snapshots (it grows with what changes, not with N). Then the
replay at ksmd's real pace (jiffies and the batch's cost) and with
--write-rate, at ksmd's default settings; then --policy=advisor; then a
comparison of policies over 24 h (-r policies) and the searches of -r advise
(fixed settings and the advisor's knobs); then --check of a forecast of 64
processes and 10000 full scans against this kernel.
Benchmarks are not tests.
"""
import csv, io, os, random, subprocess, sys, time

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))
DIR = os.path.join(os.environ.get("KSMSCAN_BENCH_DIR", "/tmp/ksmscan-bench"), "series")
PAGE = 4096


def snapshots(m, n):
    """Paths of n snapshots of m pages (made once)."""
    os.makedirs(DIR, exist_ok=True)
    paths = [os.path.join(DIR, "m%d-%d.img" % (m, k)) for k in range(n)]
    if all(os.path.exists(p) for p in paths):
        return paths
    rnd = random.Random(m)
    groups = [os.urandom(PAGE) for _ in range(max(1, m // 40))]
    pages = []
    for _ in range(m):
        x = rnd.random()
        pages.append(bytes(PAGE) if x < 0.3 else rnd.choice(groups) if x < 0.5
                     else os.urandom(PAGE))
    for k, path in enumerate(paths):
        if k:
            for i in rnd.sample(range(m), m // 20):
                pages[i] = os.urandom(PAGE)
        with open(path + ".tmp", "wb") as f:
            f.write(b"".join(pages))
        os.rename(path + ".tmp", path)
    return paths


def best(cmds, rounds=3):
    times = [float("inf")] * len(cmds)
    for _ in range(rounds):
        for i, c in enumerate(cmds):
            t = time.perf_counter()
            subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
            times[i] = min(times[i], time.perf_counter() - t)
    return times


def main():
    print("series: N snapshots of M pages, the replay's cost "
          "(ksmscan --series less the plain scan of the same files)")
    print("%8s %4s %10s %10s %10s %16s" % ("M pages", "N", "scan s", "series s",
                                            "replay s", "snapshot pages/s"))
    for m, n in ((16384, 2), (16384, 4), (16384, 8), (32768, 4), (65536, 4)):
        paths = snapshots(m, n)
        ksmd = ["--pages-to-scan=%d" % m, "--sleep-ms=100", "--interval=0.1s",
                "--hz=0"]
        plain, series = best([[KSMSCAN] + paths,
                              [KSMSCAN, "--series", "-r", "timeline"] + ksmd + paths])
        replay = max(series - plain, 1e-9)
        print("%8d %4d %10.3f %10.3f %10.3f %15.2fM" % (
            m, n, plain, series, replay, m * n / replay / 1e6))
    print("(snapshot pages replayed per second, N x M / replay s: flat down the "
          "column when the replay is linear in N and M)")
    memory()
    pace()


def spooled(pid, tmpdir):
    """The bytes of the unlinked files process @pid holds open in @tmpdir
    (its spools)."""
    total = 0
    fds = "/proc/%d/fd" % pid
    try:
        for fd in os.listdir(fds):
            try:
                if os.readlink(os.path.join(fds, fd)).startswith(tmpdir + "/"):
                    total += os.stat(os.path.join(fds, fd)).st_size
            except OSError:
                pass
    except OSError:
        pass
    return total


def peak(cmd):
    """A command's maximum RSS (wait4's ru_maxrss), peak anonymous RSS
    (RssAnon, polled every 5 ms: without the file pages of the inputs it
    maps) and peak bytes of its files in $TMPDIR (a directory of its own),
    in bytes."""
    import shutil, tempfile
    tmpdir = tempfile.mkdtemp(prefix="ksmscan-bench-tmp-")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, TMPDIR=tmpdir))
    anon = disk = 0
    while True:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]) * 1024)
        except OSError:
            pass
        disk = max(disk, spooled(p.pid, tmpdir))
        pid, _, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            shutil.rmtree(tmpdir, ignore_errors=True)
            return ru.ru_maxrss * 1024, anon, disk
        time.sleep(0.005)


def memory():
    """What --series holds as snapshots are added: 2 and 8 snapshots of M
    pages (each with 5% of the one before's pages rewritten;
    KSMSCAN_BENCH_SERIES_PAGES sets M, 65536 by default), -r summary: the
    maximum RSS and the peak anonymous RSS, and the growth from 2 to 8 in
    bytes a page a snapshot (it was about 30 when every snapshot was kept
    in full; then only the changes, 5% of the pages at 16 bytes; now those
    are on disk), and the peak bytes of the delta spool in $TMPDIR a
    changed page."""
    m = int(os.environ.get("KSMSCAN_BENCH_SERIES_PAGES", "65536"))
    paths = snapshots(m, 8)
    print("series memory: 2 and 8 snapshots of %d pages (%d MiB), 5%% rewritten "
          "between them, -r summary" % (m, m * PAGE >> 20))
    print("%4s %12s %12s %12s" % ("N", "max RSS MB", "anon MB", "TMPDIR MB"))
    got = {}
    # a first run reads the files just written into the page cache (the
    # maximum RSS of a run over pages still being written back is not the
    # series')
    subprocess.run([KSMSCAN, "--series", "--scans=2", "--csv", "-r", "summary"]
                   + paths, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for n in (2, 8):
        got[n] = peak([KSMSCAN, "--series", "--scans=2", "--csv", "-r", "summary"]
                      + paths[:n])
        print("%4d %12.1f %12.1f %12.1f" % (n, got[n][0] / 1e6, got[n][1] / 1e6,
                                             got[n][2] / 1e6))
    print("growth from 2 to 8: %.1f bytes a page a snapshot of maximum RSS, %.1f "
          "of anonymous memory" % tuple((got[8][i] - got[2][i]) / (6.0 * m)
                                        for i in (0, 1)))
    # on disk: each snapshot's changes, then the replay's deltas (the first
    # snapshot's changes are all its pages)
    changed = m + 7 * (m // 20)
    print("on disk in $TMPDIR (the delta spool, compressed) at its peak: %.1f "
          "bytes a changed page (8 snapshots: %d changed pages)"
          % (got[8][2] / changed, changed))


def pace():
    """The replay at ksmd's real pace (HZ=250's jiffies, the batch's cost)
    and with writes snapshots cannot see (--write-rate): ksmd's default
    100 pages every 20 ms over 4 snapshots of 16384 pages, 10 s apart."""
    paths = snapshots(16384, 4)
    print("series at ksmd's pace: 4 snapshots of 16384 pages, 10 s apart, "
          "100 pages every 20 ms")
    print("%-28s %10s %10s" % ("replay", "series s", "scans"))
    for name, extra in (("every --sleep-ms (--hz=0)", ["--hz=0"]),
                        ("HZ=250, 3us a page", ["--hz=250", "--page-cost=3us"]),
                        ("and --write-rate=2%", ["--hz=250", "--page-cost=3us",
                                                 "--write-rate=2%"])):
        cmd = [KSMSCAN, "--series", "-r", "timeline", "--csv", "--interval=10s"] + \
            extra + paths
        t, = best([cmd])
        out = subprocess.run(cmd, capture_output=True, check=True).stdout
        print("%-28s %10.3f %10d" % (name, t, out.count(b"\n") - 1))
    advisor()


def advisor():
    """--policy=advisor on the fixture guest over 10 minutes: the kernel's
    advisor drives a memory this small to advisor_max_pages_to_scan (its
    10% CPU floor, with scans under a second), so ksmd visits about a
    million pages a second and so does the replay."""
    guest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                         "fixtures", "guest-b.elf.zst")
    cmd = [KSMSCAN, "--series", guest, guest, "--interval=5m", "--policy=advisor",
           "--hz=250", "--csv", "-r", "timeline"]
    t, = best([cmd], rounds=1)
    out = subprocess.run(cmd, capture_output=True, check=True).stdout.splitlines()
    last = out[-1].split(b",")
    print("advisor, fixture guest, 10 min: %.2f s, %d full scans, pages_to_scan %s"
          % (t, len(out) - 1, last[11].decode()))
    cmd = [KSMSCAN, "--series", guest, guest, "--interval=12h", "--policy=ksmtuned",
           "--host-memory=200M", "--host-used=170M", "--hz=250", "--csv", "-r",
           "timeline"]
    t, = best([cmd], rounds=1)
    out = subprocess.run(cmd, capture_output=True, check=True).stdout.splitlines()
    last = out[-1].split(b",")
    print("ksmtuned, fixture guest on a 200 MiB host, 24 h: %.2f s, %d rows, "
          "ended at %s s with pages_sharing %s" % (t, len(out) - 1, last[2].decode(),
                                                   last[4].decode()))

    policies(guest)


def policies(guest):
    """-r policies over 24 h: the fixture guest taken twice, 12 h apart, on
    a host of 200 MiB with 170 MiB used, replayed under fixed settings
    (ksmd's default, about 9700 full scans in 24 h) and ksmtuned. The
    advisor is left out of the 24 h run: at 30000 pages a batch it scans
    this guest every 0.1 s, 864000 full scans in 24 h, past the replay's
    bound; its 10-minute run is above."""
    cmd = [KSMSCAN, "--series", guest, guest, "--interval=12h", "--hz=250",
           "--policy=fixed,ksmtuned", "--host-memory=200M", "--host-used=170M",
           "--csv", "-r", "policies"]
    t, = best([cmd], rounds=1)
    out = subprocess.run(cmd, capture_output=True, check=True).stdout.splitlines()
    starts = ", ".join("%s starts at %s s" % (x.split(b",")[1].decode(),
                                             x.split(b",")[2].decode())
                       for x in out[1:])
    print("policies fixed,ksmtuned, fixture guest, 24 h: %.2f s (%s)" % (t, starts))
    advise(guest)
    search_cost()
    check_forecast()


def check_forecast():
    """--check: a forecast as a live series of 64 processes writes it, with a
    timeline of 10000 full scans, read and compared with this kernel (its
    counters, each process's ksm_stat, every process's ksm_merging_pages)."""
    import json
    if not os.path.exists("/sys/kernel/mm/ksm/full_scans"):
        print("check: no KSM in this kernel")
        return
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:64]
    tl = [{"input": "pid:1+63", "scan": k, "seconds": 0.5 * k, "pages_shared": 10,
           "pages_sharing": 100, "ksm_zero_pages": 0, "general_profit": 400000}
          for k in range(1, 10001)]
    ps = [{"input": "pid:%d" % p, "pid": p, "start_time": 0, "command": "x",
           "scan": 10000, "seconds": 5000.0, "ksm_rmap_items": 0,
           "ksm_merging_pages": 0, "ksm_zero_pages": 0, "ksm_process_profit": 0}
          for p in pids]
    par = {"pages_to_scan": 100, "sleep_ms": 20, "use_zero_pages": 0,
           "max_page_sharing": 256, "smart_scan": 1, "policy": "fixed",
           "ksm_full_scans": 0}
    path = os.path.join(DIR, "forecast.json")
    os.makedirs(DIR, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"parameters": par, "timeline": tl, "processes": ps}, f)
    cmd = [KSMSCAN, "--check=" + path, "-q", "--csv"]
    times = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    print("check: forecast of %d processes, 10000 full scans (%.1f MB), against "
          "this kernel and its %d processes: %.3f s"
          % (len(ps), os.path.getsize(path) / 1e6, len(os.listdir("/proc")),
             min(times)))


def advise(guest):
    """-r advise: the search of fixed settings (five sleeps, a bisection of
    replays each) and of the scan-time advisor's knobs (a bisection over
    advisor_target_scan_time per advisor_max_cpu, its replays stopping once
    they reach the target) for 90% of the fixture guest's saving within 10
    minutes, and, where the advisor's bisection runs in full, within 15 s
    at 100 us a page; the replays each search ran."""
    for what, extra in (("90%@10m", ["--target=90%@10m", "--max-cpu=5"]),
                        ("90%@15s at 100 us a page",
                         ["--target=90%@15s", "--max-cpu=70", "--page-cost=100us"])):
        cmd = [KSMSCAN, "--series", guest, "--hz=250", "--csv", "-r", "advise"] + extra
        t, = best([cmd], rounds=1)
        out = subprocess.run(cmd, capture_output=True, check=True, text=True).stdout
        rows = list(csv.DictReader(io.StringIO(out)))
        replays = {p: sum(int(r["replays"]) for r in rows if r["policy"] == p)
                   for p in ("fixed", "advisor")}
        first = {p: next(r for r in rows if r["policy"] == p)
                 for p in ("fixed", "advisor")}
        f, a = first["fixed"], first["advisor"]
        print("advise %s, fixture guest: %.2f s, %d replays fixed, %d advisor "
              "(%s pages every %s ms; advisor %s s at %s%%, %s%% CPU, %s)"
              % (what, t, replays["fixed"], replays["advisor"], f["pages_to_scan"],
                 f["sleep_ms"], a["advisor_target_scan_time"], a["advisor_max_cpu"],
                 a["ksmd_cpu_percent_mean"],
                 "reaches" if a["reaches_target"] == "1" else "does not reach"))


def search_cost():
    """-r advise (90% in 10 minutes) and -r policies (fixed, advisor,
    ksmtuned, kubevirt) against one replay of the same input (-r timeline,
    ksmd's default settings): one snapshot of 256 MiB, 512 MiB and 1 GiB,
    and a series of three 256 MiB snapshots 60 s apart; each as a ratio to
    the replay, and per GiB (docs/policies.md gives these figures)."""
    print("search cost: -r advise --target=90%@10m and -r policies (4 policies), "
          "as a ratio to one --series replay of the same input")
    print("%-22s %9s %9s %7s %9s %7s %10s" % ("input", "replay s", "advise s",
                                             "ratio", "polic. s", "ratio",
                                             "advise s/GiB"))
    host = ["--host-memory=4G", "--host-used=3G"]
    for m, n in ((65536, 1), (131072, 1), (262144, 1), (65536, 3)):
        paths = snapshots(m, n)[:n] if n > 1 else [snapshots(m, 1)[0]]
        base = [KSMSCAN, "--series"] + paths + ["--csv"]
        # best of 2: the first round also reads the files into the page
        # cache (they were just written), which the replay alone would pay
        replay, adv, pol = best([base + ["-r", "timeline"],
                                 base + ["-r", "advise", "--target=90%@10m"],
                                 base + ["-r", "policies",
                                         "--policy=fixed,advisor,ksmtuned,kubevirt"]
                                 + host], rounds=2)
        gib = m * n * PAGE / float(1 << 30)
        print("%-22s %9.2f %9.2f %6.1fx %9.2f %6.1fx %10.2f" % (
            "%d MiB x %d snapshot%s" % (m * PAGE >> 20, n, "s" if n > 1 else ""),
            replay, adv, adv / replay, pol, pol / replay, adv / gib))


if __name__ == "__main__":
    sys.exit(main())
