#!/usr/bin/python3
"""--check=FORECAST.json without changing the kernel: forecasts written by
this test, compared by ksmscan with the kernel's figures as they are, which
the test reads itself (/sys/kernel/mm/ksm, /proc/PID/ksm_stat, the start
time in /proc/PID/stat) and computes the errors from:

- a forecast equal to the kernel now: every error 0, exit 0; the host's row
  is the timeline's full scan that the kernel's full_scans less the
  forecast's says (0: before any, all zero; past the last: the last);
- a forecast off by a known amount: error_percent as computed here, exit 1
  at the default tolerance and 0 at one that covers it;
- a process that has exited, and one whose pid a later process took
  (another start time): a warning each, no actual figure, exit 1;
- the kernel's full_scans below the forecast's: one error line, exit 3
  (the kernel cannot be compared), even with -q;
- files that could block or never end (a FIFO with a writer that writes
  nothing, a character device, a socket) refused before any read; a file
  whose JSON would take more than 256 MiB to parse (many small objects)
  refused within that memory; a process named twice; a policy that is not
  a word;
- on a tree of files standing for /proc and /sys ($KSMSCAN_HOST_ROOT):
  exit 0 within the tolerance, 1 outside or a process gone, 3 without KSM,
  and one warning naming both counts when ksmd did more full scans than
  the forecast covers; --tolerance-pages around the pages a process's
  figures are off by (a profit counted in pages, rounded);
- settings the kernel does not run: a warning naming them;
- files that are not forecasts (missing, a folder, too large, malformed
  JSON with its offset, a file series' JSON, a value of the wrong kind):
  one line each, exit 2; and the options' usage errors;
- a real forecast of a child process (a live series, -p PID --count=2):
  its processes report names the child's pid and start time, and
  parameters.ksm_full_scans is the kernel's full_scans.

The forecast against a kernel that ran KSM is tests/test_check_live.py.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import Skip, check, eq, proc_stat_fields, run, run_suite, test, tmp  # noqa: E402
from test_ksm_live import ksm_stat  # noqa: E402

KSM = "/sys/kernel/mm/ksm"
COLS = ["input", "figure", "forecast", "actual", "error_percent", "scan",
        "within_tolerance"]
HOST = ["pages_shared", "pages_sharing", "general_profit"]
PROC = ["ksm_rmap_items", "ksm_merging_pages", "ksm_process_profit"]
STAT_KEYS = {"ksm_rmap_items": "ksm_rmap_items",
             "ksm_merging_pages": "ksm_merging_pages",
             "ksm_process_profit": "ksm_process_profit"}


def kread(name):
    with open(os.path.join(KSM, name)) as f:
        return int(f.read().split()[0])


def kernel():
    """The host's figures and settings, as the test reads them."""
    if not os.path.exists(os.path.join(KSM, "full_scans")):
        raise Skip("this kernel has no KSM")
    k = {n: kread(n) for n in ["full_scans", "pages_shared", "pages_sharing",
                               "pages_to_scan", "sleep_millisecs",
                               "use_zero_pages", "max_page_sharing"]}
    k["general_profit"] = kread("general_profit") \
        if os.path.exists(os.path.join(KSM, "general_profit")) else 0
    k["smart_scan"] = kread("smart_scan") \
        if os.path.exists(os.path.join(KSM, "smart_scan")) else 0
    return k


def start_time(pid):
    return int(proc_stat_fields(pid)[19])      # field 22


def figures(k, pid):
    """The child's start time, its ksm_stat, the forecast figures equal to
    them, and the host's figures equal to the kernel's now (k)."""
    st, stat = start_time(pid), ksm_stat(pid)
    stat.setdefault("ksm_process_profit", 0)
    stat.setdefault("ksm_rmap_items", 0)
    return (st, stat, {n: stat[STAT_KEYS[n]] for n in PROC},
            {n: k[n] for n in HOST})


CHILD = "import sys; sys.stdout.write('x\\n'); sys.stdout.flush(); sys.stdin.read()"


class Child:
    """A process of the test's (plain memory, never marked mergeable)."""

    def __enter__(self):
        self.p = subprocess.Popen([sys.executable, "-c", CHILD],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.p.stdout.readline()
        self.pid = self.p.pid
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait()


def forecast(k, procs, full_scans, timeline, **params):
    """A forecast as a live series writes it: parameters like the kernel's
    (or @params), timeline rows of @timeline (dicts of HOST figures), and a
    processes row per (pid, start, figures)."""
    par = {"pages_to_scan": k["pages_to_scan"], "sleep_ms": k["sleep_millisecs"],
           "use_zero_pages": k["use_zero_pages"],
           "max_page_sharing": k["max_page_sharing"],
           "smart_scan": k["smart_scan"], "policy": "fixed",
           "ksm_full_scans": full_scans}
    if os.path.exists(os.path.join(KSM, "advisor_mode")):
        with open(os.path.join(KSM, "advisor_mode")) as f:
            if "[scan-time]" in f.read():
                par["policy"] = "advisor"
    par.update(params)
    rows = [dict(input="pid:1+1", scan=i + 1, seconds=i + 1.0,
                 ksm_zero_pages=0, **t) for i, t in enumerate(timeline)]
    ps = [dict(input="pid:%d" % pid, pid=pid, start_time=st, command="child",
               scan=len(timeline), seconds=1.0, ksm_zero_pages=0, **fig)
          for pid, st, fig in procs]
    return {"parameters": par, "summary": [], "timeline": rows, "processes": ps}


def write(name, obj):
    path = tmp(name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def check_csv(path, *extra):
    """Run --check -o csv; (run, rows, kernel) with KSM's figures unchanged
    around it (retried while they move on a host where KSM runs). Only
    full_scans may move meanwhile (on a host where ksmd merges a few pages a
    full scan takes one wake-up): the kernel returned then carries
    "full_scans_after" too, and host_want() accepts either scan."""
    for _ in range(20):
        before = kernel()
        r = run(["--check=" + path, "-o", "csv"] + list(extra))
        after = kernel()
        if all(after[n] == before[n] for n in before if n != "full_scans"):
            rows = list(csv.DictReader(io.StringIO(r.out)))
            before["full_scans_after"] = after["full_scans"]
            return r, rows, before
        time.sleep(0.2)
    raise Skip("KSM's figures kept changing while the checks ran")


def error_percent(fc, actual):
    if fc == 0:
        return 0.0 if actual == 0 else math.copysign(math.inf, actual)
    return 100.0 * (actual - fc) / abs(fc)


def same_rows(rows, want, what):
    """rows as CSV gave them against want: [(input, figure, forecast,
    actual or None, scan)], errors as computed here."""
    eq([(r["input"], r["figure"]) for r in rows],
       [(w[0], w[1]) for w in want], "%s: the rows, in order" % what)
    for r, (inp, fig, fc, actual, scan) in zip(rows, want):
        tag = "%s: %s %s" % (what, inp, fig)
        eq(float(r["forecast"]), float(fc), tag + ": forecast")
        eq(int(r["scan"]), scan, tag + ": scan")
        if actual is None:
            check(r["actual"] == "nan" and r["error_percent"] == "nan",
                  tag + ": no actual figure (nan)", repr(r))
            eq(r["within_tolerance"], "0", tag + ": outside")
            continue
        eq(float(r["actual"]), float(actual), tag + ": actual (the kernel's)")
        e = error_percent(fc, actual)
        got = float(r["error_percent"])
        check(got == e or abs(got - e) <= 0.0005, tag + ": error_percent",
              "expected %r, got %r" % (e, got))


def host_want(k, forecast_scans, timeline, rows):
    """The host's rows: the timeline's row at the full scans the kernel did
    since the forecast (0: before any, all zero; past the last: the last).
    Where full_scans moved during the run (KSM running), the scan that
    ksmscan read must be one the kernel had meanwhile."""
    lo = k["full_scans"] - forecast_scans
    hi = k.get("full_scans_after", k["full_scans"]) - forecast_scans
    said = [int(r["scan"]) for r in rows if r["input"] == "*"][:1]
    scan = min(lo, len(timeline))
    if said and lo < hi and min(lo, len(timeline)) <= said[0] <= min(hi, len(timeline)):
        scan = said[0]
    fc_row = timeline[scan - 1] if scan > 0 else {}
    return [("*", n, fc_row.get(n, 0), k[n], scan) for n in HOST]


def host_ok(k, forecast_scans, timeline, rows):
    """Whether the host's rows are all within any tolerance (equal)."""
    return all(fc == actual for _, _, fc, actual, _ in
               host_want(k, forecast_scans, timeline, rows))


def proc_want(pid, fig, stat, scan):
    return [("pid:%d" % pid, n, fig[n], None if stat is None else stat[STAT_KEYS[n]],
             scan) for n in PROC]


@test("check")
def equal_forecast():
    """A forecast equal to the kernel now, at the full scan it says."""
    k = kernel()
    with Child() as c:
        st, stat, fig, host = figures(k, c.pid)
        other = {"pages_shared": 1, "pages_sharing": 2, "general_profit": 3}
        # full_scans equal: before the first scan, all zero
        fs = k["full_scans"]
        path = write("zero.json", forecast(k, [(c.pid, st, fig)], fs, [host]))
        r, rows, k = check_csv(path)
        check(r.out.splitlines()[:1] == [",".join(COLS)], "the CSV header",
              r.out.splitlines()[:1])
        same_rows(rows, host_want(k, fs, [host], rows) + proc_want(c.pid, fig, stat, 1),
                  "no scan since the forecast")
        eq(r.rc, 0 if host_ok(k, fs, [host], rows) else 1,
           "no scan since: exit 0 if the host has nothing merged")
        if k["full_scans"] < 2:
            raise Skip("the kernel has done fewer than 2 full scans: the "
                       "forecast's later rows are checked live only")
        # full_scans one less than the kernel's: the first row of two
        fs = k["full_scans"] - 1
        path = write("equal.json", forecast(k, [(c.pid, st, fig)], fs, [host, other]))
        r, rows, k = check_csv(path)
        eq(r.rc, 0 if host_ok(k, fs, [host, other], rows) else 1,
           "equal forecast: exit 0 (where KSM did not scan meanwhile)")
        same_rows(rows, host_want(k, fs, [host, other], rows) +
                  proc_want(c.pid, fig, stat, 2), "equal forecast")
        # the kernel's full_scans past the last row: the last row
        fs = max(0, k["full_scans"] - 5)
        path = write("past.json", forecast(k, [(c.pid, st, fig)], fs, [other, host]))
        r, rows, k = check_csv(path)
        same_rows(rows, host_want(k, fs, [other, host], rows) +
                  proc_want(c.pid, fig, stat, 2), "past the forecast's last scan")


@test("check")
def off_forecast():
    """A forecast off by a known amount, and the tolerance."""
    k = kernel()
    with Child() as c:
        st, stat, fig, host = figures(k, c.pid)
        fig["ksm_merging_pages"] = stat["ksm_merging_pages"] + 100
        fig["ksm_rmap_items"] = stat["ksm_rmap_items"] + 50
        fs = k["full_scans"]
        path = write("off.json", forecast(k, [(c.pid, st, fig)], fs, [host]))
        r, rows, k = check_csv(path)
        eq(r.rc, 1, "forecast off: exit 1 at the default tolerance (10%)")
        same_rows(rows, host_want(k, fs, [host], rows) + proc_want(c.pid, fig, stat, 1),
                  "forecast off")
        worst = max(abs(error_percent(fig[n], stat[STAT_KEYS[n]])) for n in PROC)
        for tol, rc in ((worst, 0), (worst * 0.99, 1)):
            r, rows, k = check_csv(path, "--tolerance=%r" % tol)
            eq(r.rc, rc if host_ok(k, fs, [host], rows) else 1,
               "--tolerance=%g around the worst error %g" % (tol, worst))
        r = run(["--check=" + path, "--tolerance=%r%%" % worst])
        check("within +-%g%%" % worst in r.out or "outside +-%g%%" % worst in r.out,
              "--tolerance=P% is taken as P percent", r.brief())
        r = run(["--check=" + path])
        check(" no\n" in r.out and "outside +-10%." in r.out,
              "the table says which rows are outside, and how many", r.out)
        check(all(len(line) <= 80 for line in r.out.splitlines()),
              "the table for people fits 80 columns", r.out)


@test("check")
def gone_processes():
    """An exited process, and a pid a later process took."""
    k = kernel()
    with Child() as c:
        dead_pid = c.pid
    with Child() as c:
        st, stat, fig, host = figures(k, c.pid)
        fs = k["full_scans"]
        path = write("gone.json", forecast(
            k, [(dead_pid, st, fig), (c.pid, st - 1, fig)], fs, [host]))
        r, rows, k = check_csv(path)
        eq(r.rc, 1, "gone processes: exit 1")
        same_rows(rows, host_want(k, fs, [host], rows) + proc_want(dead_pid, fig, None, 1) +
                  proc_want(c.pid, fig, None, 1), "gone processes")
        check("pid:%d has exited since the forecast" % dead_pid in r.err,
              "a warning: the process has exited", r.err)
        check("pid:%d is another process" % c.pid in r.err,
              "a warning: the pid is another process's", r.err)
        r = run(["--check=" + path])
        check(" none " in r.out and "none: 2 processes have exited (or their pid "
              "is another's) and 0 could not be read" in " ".join(r.out.split()),
              "the table for people says none, and why, under it", r.out)


@test("check")
def unreadable_process():
    """A process that runs but whose ksm_stat this user may not read (another
    user's: the file is its owner's and root's) is said to be unreadable,
    never "has exited". As root the check runs as nobody on a process of
    root's; as another user, on pid 1 (root's)."""
    k = kernel()
    fig = {n: 0 for n in PROC}
    cmd = ["--check=%s"]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    with Child() as c:
        pid = c.pid if os.geteuid() == 0 else 1
        if os.stat("/proc/%d" % pid).st_uid == (65534 if os.geteuid() == 0 else os.geteuid()):
            raise Skip("pid 1 is this user's: no process of another user to read")
        path = write("unreadable.json", forecast(k, [(pid, start_time(pid), fig)],
                                                 k["full_scans"], [{n: 0 for n in HOST}]))
        os.chmod(path, 0o644)
        os.chmod(os.path.dirname(path), 0o755)
        full = (cmd if os.geteuid() == 0 else []) + __import__("ksmtest").KSMSCAN + \
            ["--check=" + path]
        p = subprocess.run(full, capture_output=True, text=True, timeout=60)
        check(p.returncode == 1 and "pid:%d runs, but its ksm_stat cannot be read by "
              "this user (run as root)" % pid in p.stderr and "exited" not in p.stderr,
              "unreadable, not exited: exit 1 and a warning naming it",
              p.stderr[-400:])
        check("0 processes have exited (or their pid is another's) and 1 could not be "
              "read by this user (run as root)" in " ".join(p.stdout.split()),
              "the table says it could not be read", p.stdout[-600:])


@test("check")
def restarted_and_settings():
    """full_scans below the forecast's; settings the kernel does not run."""
    k = kernel()
    with Child() as c:
        st, stat, fig, host = figures(k, c.pid)
        path = write("restart.json", forecast(k, [(c.pid, st, fig)],
                                              k["full_scans"] + 1000, [host]))
        r = run(["--check=" + path])
        lines = r.err.strip().splitlines()
        check(r.rc == 3 and len(lines) == 1 and "unmerged (run=2)" in lines[0] and
              "cannot be compared" in lines[0] and
              lines[0].startswith("ksmscan: " + path), "full_scans went back: "
              "one line, exit 3 (the kernel cannot be compared)", r.brief())
        r = run(["--check=" + path, "-q", "-o", "json"])
        check(r.rc == 3 and "unmerged (run=2)" in r.err,
              "with -q -o json the reason still reaches stderr", r.brief())
        path = write("settings.json", forecast(
            k, [(c.pid, st, fig)], k["full_scans"], [host],
            pages_to_scan=k["pages_to_scan"] + 7, policy="fixed"))
        r, rows, k = check_csv(path)
        check("the forecast replayed %d" % (k["pages_to_scan"] + 7) in r.err or
              "the kernel runs advisor" in r.err,
              "a warning names the pages_to_scan replayed", r.err)


@test("errors")
def not_forecasts():
    """Files that are not forecasts: one line each, exit 2."""
    k = kernel()
    good = forecast(k, [(1, 0, {n: 0 for n in PROC})], 0, [{n: 0 for n in HOST}])
    trunc = json.dumps(good)[:40]
    bad_type = json.loads(json.dumps(good))
    bad_type["timeline"][0]["pages_sharing"] = "many"
    no_procs = json.loads(json.dumps(good))
    del no_procs["processes"]
    bad_pid = json.loads(json.dumps(good))
    bad_pid["processes"][0]["pid"] = -4
    other_pid = json.loads(json.dumps(good))
    other_pid["processes"][0]["input"] = "pid:2"
    ours = run(["-V"]).out.split()[1]       # "ksmscan X.Y.Z"
    newer = json.loads(json.dumps(good))
    newer["parameters"]["version"] = "%d.0.0" % (int(ours.split(".")[0]) + 1)
    bad_version = json.loads(json.dumps(good))
    bad_version["parameters"]["version"] = ["1"]
    big = tmp("big.json")
    with open(big, "w") as f:
        f.truncate(257 << 20)               # sparse: nothing is written
    with open(tmp("trunc.json"), "w") as f:
        f.write(trunc)
    cases = [
        (tmp("absent.json"), "No such file"),
        (os.path.dirname(big), "not a regular file (a directory)"),
        (big, "larger than 256 MiB"),
        (tmp("trunc.json"), "not JSON (", ", at offset %d" % len(trunc)),
        (write("type.json", bad_type), "timeline[0].pages_sharing is not a whole"),
        (write("noprocs.json", no_procs), "not the JSON of a live series"),
        (write("badpid.json", bad_pid), "processes[0].pid"),
        (write("array.json", []), "not a JSON object"),
        (write("otherpid.json", other_pid), "processes[0].input is \"pid:2\", not pid:1"),
        (write("newer.json", newer), "a newer major version than this"),
        (write("badversion.json", bad_version), "parameters.version is not a version"),
    ]
    for path, *says in cases:
        r = run(["--check=" + path])
        lines = r.err.strip().splitlines()
        check(r.rc == 2 and len(lines) == 1 and
              lines[0].startswith("ksmscan: %s: " % path) and
              all(s in lines[0] for s in says) and r.out == "",
              "%s: exit 2, one line naming %r" % (os.path.basename(path), says),
              r.brief())
    same = json.loads(json.dumps(good))
    same["parameters"]["version"] = ours
    r = run(["--check=" + write("same.json", same)])
    check(r.rc != 2, "a forecast of this version is read", r.brief())
    # bytes no JSON text holds, named at their own offset, never echoed
    for name, data, off, says in (("nul.json", bytes(100), 0, "a NUL byte"),
                                  ("late-nul.json", b'{"a": 1}\0\0', 8, "a NUL byte"),
                                  ("bom.json", b"\xef\xbb\xbf{}", 0, "byte order mark")):
        path = tmp(name)
        with open(path, "wb") as f:
            f.write(data)
        r = run(["--check=" + path])
        check(r.rc == 2 and r.err == "ksmscan: %s: not JSON (%s), at offset %d\n" % (
              path, "a NUL byte" if "NUL" in says else "it begins with a byte order mark",
              off), "%s: exit 2, one line at offset %d" % (name, off), r.brief())
    snap = tmp("one.raw")
    with open(snap, "wb") as f:
        f.write(bytes(4096) + b"\1" * 4096)
    r = run(["--series", snap, snap, "-o", "json"])
    path = write("files.json", json.loads(r.out))
    r = run(["--check=" + path])
    check(r.rc == 2 and "not the JSON of a live series" in r.err,
          "a series of files' JSON: exit 2, it is not a live series", r.brief())


@test("errors")
def files_that_block_or_swell():
    """A FIFO held open by a writer that writes nothing, a character device
    and a socket are refused from their stat, before a read could block;
    JSON whose parse would need more than 256 MiB is refused within it."""
    import resource
    import socket
    import threading
    fifo = tmp("held.fifo")
    os.mkfifo(fifo)
    holder = threading.Thread(target=lambda: open(fifo, "w").close(), daemon=True)
    holder.start()                          # blocks in open() until a reader
    sock_path = tmp("s.sock")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    for path, kind in ((fifo, "a FIFO"), ("/dev/null", "a character device"),
                       ("/dev/zero", "a character device"), (sock_path, "a socket")):
        t0 = time.time()
        r = run(["--check=" + path])
        lines = r.err.strip().splitlines()
        check(r.rc == 2 and len(lines) == 1 and kind in lines[0] and
              time.time() - t0 < 30, "%s: refused at once, exit 2, '%s'" %
              (path, kind), r.brief())
    sock.close()
    try:                                    # let the holder's open() return
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass
    k = kernel()
    # About 6 million empty objects in 18 MB: a parse costs far more
    # than the file (Jansson's objects and its hash tables).
    swell = tmp("swell.json")
    with open(swell, "w") as f:
        f.write('{"parameters": {}, "timeline": [')
        f.write("{}," * (6 << 20))
        f.write("{}]}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = run(["--check=" + swell])
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(r.rc == 2 and "needs more than 256 MiB to parse" in r.err,
          "JSON of many small objects: exit 2, refused past 256 MiB of "
          "parser memory", r.brief())
    # Under AddressSanitizer every block carries red zones and freed ones
    # wait in quarantine: the budget holds, the process's size does not.
    if not os.environ.get("ASAN_OPTIONS"):
        check(rss < 400 << 10 or rss == before, "its parse stayed within the "
              "bound (peak RSS %d MiB)" % (rss >> 10))
    twice = forecast(k, [(1, 0, {n: 0 for n in PROC}), (7, 0, {n: 0 for n in PROC}),
                         (1, 0, {n: 0 for n in PROC})], 0, [{n: 0 for n in HOST}])
    r = run(["--check=" + write("twice.json", twice)])
    check(r.rc == 2 and "processes[2] names pid 1, as processes[0] did" in r.err
          and r.err.count("\n") == 1, "a process named twice: exit 2, one line",
          r.brief())
    for bad in (7, ["fixed"], None):
        f = forecast(k, [(1, 0, {n: 0 for n in PROC})], 0, [{n: 0 for n in HOST}])
        f["parameters"]["policy"] = bad
        r = run(["--check=" + write("policy.json", f)])
        check(r.rc == 2 and "parameters.policy is not a string" in r.err,
              "policy %r: exit 2, named" % (bad,), r.brief())


def fake_host(root, ksm, procs):
    """A tree standing for /sys/kernel/mm/ksm (@ksm: name -> value, or None
    for a kernel without KSM) and /proc/PID/{stat,ksm_stat} (@procs: pid ->
    (start time, {ksm_stat key: value}))."""
    if ksm is not None:
        os.makedirs(os.path.join(root, "sys/kernel/mm/ksm"), exist_ok=True)
        for name, value in ksm.items():
            with open(os.path.join(root, "sys/kernel/mm/ksm", name), "w") as f:
                f.write("%s\n" % value)
    for pid, (start, stat) in procs.items():
        d = os.path.join(root, "proc", str(pid))
        os.makedirs(d, exist_ok=True)
        fields = ["S"] + ["0"] * 18 + [str(start)] + ["0"] * 10
        with open(os.path.join(d, "stat"), "w") as f:
            f.write("%d (fake) %s\n" % (pid, " ".join(fields)))
        with open(os.path.join(d, "ksm_stat"), "w") as f:
            f.write("".join("%s %d\n" % kv for kv in stat.items()))


@test("tree")
def statuses_on_a_fixed_tree():
    """Every exit status of --check on kernels written by the test."""
    settings = {"pages_to_scan": 100, "sleep_millisecs": 20, "use_zero_pages": 0,
                "max_page_sharing": 256, "smart_scan": 1, "run": 1,
                "advisor_mode": "[none] scan-time"}
    k = {"pages_to_scan": 100, "sleep_millisecs": 20, "use_zero_pages": 0,
         "max_page_sharing": 256, "smart_scan": 1}
    stat = {"ksm_rmap_items": 300, "ksm_merging_pages": 200,
            "ksm_zero_pages": 0, "ksm_process_profit": 5000}
    fig = {n: stat[n] for n in PROC}
    rows = [{"pages_shared": 10 * i, "pages_sharing": 100 * i,
             "general_profit": 1000 * i} for i in (1, 2, 3)]
    fc = write("tree.json", forecast(k, [(4242, 777, fig)], 40, rows))
    cases = [   # (full_scans, counters, pid's stat, status, words on stderr)
        (42, rows[1], stat, 0, []),
        (42, dict(rows[1], pages_sharing=150), stat, 1, []),
        (41, rows[0], None, 1, ["pid:4242 has exited"]),
        (50, rows[2], stat, 0, ["has done 10 full scans", "covers 3"]),
        (39, rows[0], stat, 3, ["cannot be compared"]),
        (None, None, stat, 3, ["has no KSM", "cannot be compared"]),
    ]
    for n, (scans, counters, st, status, says) in enumerate(cases):
        root = tmp("root%d" % n)
        ksm = None if scans is None else dict(settings, full_scans=scans, **counters)
        fake_host(root, ksm, {4242: (777, st)} if st else {})
        r = run(["--check=" + fc, "-o", "csv"],
                env=dict(os.environ, KSMSCAN_HOST_ROOT=root))
        check(r.rc == status and all(w in r.err for w in says),
              "fixed tree %d: exit %d, stderr names %r" % (n, status, says),
              r.brief())
        if status == 3:
            check(r.out == "", "fixed tree %d: no rows when nothing compares" % n)
            continue
        got = {(x["input"], x["figure"]): x for x in csv.DictReader(io.StringIO(r.out))}
        want_scan = min(scans - 40, 3)
        for name in HOST:
            fcv, act = rows[want_scan - 1][name], counters[name]
            row = got.get(("*", name), {})
            check(row.get("scan") == str(want_scan) and
                  float(row.get("forecast", "nan")) == fcv and
                  float(row.get("actual", "nan")) == act,
                  "fixed tree %d: %s compared at scan %d" % (n, name, want_scan),
                  repr(row))


@test("tree")
def tolerance_in_pages():
    """--tolerance-pages: a row a few pages off is within whatever its
    percent; a profit in bytes counts its difference in pages, rounded to
    the nearest; one page more than allowed is outside."""
    page = os.sysconf("SC_PAGESIZE")
    k = {"pages_to_scan": 100, "sleep_millisecs": 20, "use_zero_pages": 0,
         "max_page_sharing": 256, "smart_scan": 1}
    fig = {"ksm_rmap_items": 100, "ksm_merging_pages": 60,
           "ksm_process_profit": 60 * page - 100 * 64}
    # 4 pages fewer merged, one rmap_item more: as PostgreSQL's drift was
    stat = {"ksm_rmap_items": 101, "ksm_merging_pages": 56, "ksm_zero_pages": 0,
            "ksm_process_profit": 56 * page - 101 * 64}
    host = {"pages_shared": 1000, "pages_sharing": 5000, "general_profit": 10 ** 7}
    fc = write("pages.json", forecast(k, [(4243, 777, fig)], 40, [host]))
    root = tmp("pages-root")
    fake_host(root, dict(k, run=1, full_scans=41, advisor_mode="[none] scan-time",
                         **host), {4243: (777, stat)})
    env = dict(os.environ, KSMSCAN_HOST_ROOT=root)
    diffs = {n: abs(stat[n] - fig[n]) for n in PROC}
    diffs["ksm_process_profit"] = round(diffs["ksm_process_profit"] / page)
    need = max(diffs.values())
    for pages in (0, need - 1, need, need + 10):
        r = run(["--check=" + fc, "--tolerance=3", "--tolerance-pages=%d" % pages,
                 "-o", "csv"], env=env)
        rows = {(x["input"], x["figure"]): x for x in csv.DictReader(io.StringIO(r.out))}
        for n in PROC:
            want = abs(error_percent(fig[n], stat[n])) <= 3 or diffs[n] <= pages
            got = rows.get(("pid:4243", n), {}).get("within_tolerance")
            eq(got, str(int(want)), "--tolerance-pages=%d: %s %d pages off" % (
                pages, n, diffs[n]))
        check(r.rc == (0 if pages >= need else 1),
              "--tolerance-pages=%d: exit status (%d pages needed)" % (pages, need),
              r.brief())
    r = run(["--check=" + fc, "--tolerance=3", "--tolerance-pages=%d" % need],
            env=env)
    check("within +-3%% or %d pages." % need in r.out,
          "the table's note names both tolerances", r.out)


@test("errors")
def usage():
    k = kernel()
    path = write("u.json", forecast(k, [], 0, [{n: 0 for n in HOST}]))
    for args, says in ((["--tolerance=5", path], "--tolerance"),
                       (["--tolerance-pages=5", path], "--tolerance-pages"),
                       (["--check=" + path, "--tolerance-pages=x"], "--tolerance-pages"),
                       (["--check=" + path, "--tolerance-pages=-1"], "--tolerance-pages"),
                       (["--check=" + path, "--tolerance=x"], "--tolerance"),
                       (["--check=" + path, "--tolerance=-1"], "--tolerance"),
                       (["--check=" + path, "/dev/null"], "--check")):
        r = run(args)
        first = r.err.strip().splitlines()[:1]
        check(r.rc == 2 and first and first[0].startswith("ksmscan: ") and
              says in first[0], "%s: exit 2, names %s" % (" ".join(args), says),
              r.brief())


@test("forecast")
def live_forecast_of_a_child():
    """A real forecast of a child: its pid, start time, the kernel's scans."""
    with Child() as c:
        before = kernel()["full_scans"]
        r = run(["-p", str(c.pid), "--count=2", "--interval=0.2s", "-o", "json"])
        after = kernel()["full_scans"]
        try:
            d = json.loads(r.out)
        except ValueError:
            check(False, "the forecast is JSON", r.brief())
            return
        eq(r.rc, 0, "the forecast: exit 0")
        check(before <= d["parameters"].get("ksm_full_scans", -1) <= after,
              "parameters.ksm_full_scans is the kernel's full_scans",
              "%r <= %r <= %r" % (before, d["parameters"].get("ksm_full_scans"),
                                  after))
        ps = d.get("processes", [])
        eq([(p["pid"], p["start_time"], p["input"]) for p in ps],
           [(c.pid, start_time(c.pid), "pid:%d" % c.pid)],
           "processes: the child's pid and start time (/proc/PID/stat)")
        last = d["timeline"][-1]
        eq([p["scan"] for p in ps], [last["scan"]],
           "processes: at the timeline's last full scan")
        if ps:
            # one process: its merging pages are the host's shared + sharing
            eq(ps[0]["ksm_merging_pages"], last["pages_shared"] + last["pages_sharing"],
               "one process: ksm_merging_pages = pages_shared + pages_sharing")
        r = run(["-p", str(c.pid), "--count=2", "--interval=0.2s", "-o", "csv"])
        check(r.out.startswith("input,scan,"), "CSV keeps the timeline alone",
              r.out[:80])
        r = run(["-p", str(c.pid), "--count=2", "--interval=0.2s"])
        check("pid:%d  python" % c.pid in r.out and
              all(len(line) <= 80 for line in r.out.splitlines()),
              "for people: the processes table, within 80 columns", r.out)


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-check-"))
