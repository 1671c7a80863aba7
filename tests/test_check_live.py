#!/usr/bin/python3
"""--check against the running kernel: a forecast taken before KSM runs,
then the kernel's own counters afterwards (KSMSCAN_LIVE_TESTS=1, and only
while KSM is idle: tests/live.py restores every setting, also on signals,
and unmerges only what this test merged).

Two children hold known pages (contents shared within and across them,
written zero pages, unique pages) in MADV_MERGEABLE memory. With KSM
stopped, `ksmscan -p A -p B --count=2 -o json` writes the forecast; the
test checks it against what it computes from the pages it wrote (KSM
merges every content held twice or more: one KSM page each, the further
copies sharing it; each process's ksm_merging_pages is its pages of such
contents) and checks parameters.ksm_full_scans against the kernel.

- Before KSM runs, `--check` finds nothing merged: exit 1.
- KSM runs with the forecast's settings until its counters settle; then
  `--check --tolerance=5` exits 0, and every actual figure it prints is the
  one this test reads from /sys/kernel/mm/ksm and /proc/PID/ksm_stat.
- One child exits: `--check` says so and exits 1.
"""
import csv
import io
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live  # noqa: E402
import test_ksm_live as kl  # noqa: E402
from ksmtest import KSMSCAN, tmp  # noqa: E402,F401
from test_ksm_live import check, eq, skip  # noqa: E402

PAGE = 4096
TOLERANCE = 5           # percent, the tolerance the test states
SETTLE_TIMEOUT = 60     # seconds for KSM to do the forecast's scans
SETTINGS = {"pages_to_scan": 100, "sleep_millisecs": 20}


def layouts(rng):
    """Two processes' pages, [(key, bytes)] each: X in both, Y twice in A and
    once in B, W in A only, Z in B only, zero pages in A, unique pages."""
    x, y, w, z = (rng.randbytes(PAGE) for _ in range(4))
    a = [("X", x)] * 40 + [("Y", y)] * 10 + [("W", w)] * 3 + \
        [("zero", bytes(PAGE))] * 8
    b = [("X", x)] * 20 + [("Y", y)] + [("Z", z)] * 30
    a += [("u", rng.randbytes(PAGE)) for _ in range(60)]
    b += [("u", rng.randbytes(PAGE)) for _ in range(40)]
    rng.shuffle(a)
    rng.shuffle(b)
    return a, b


def expected(a, b):
    """KSM's figures once settled (counts under max_page_sharing)."""
    count = {}
    for k, page in a + b:
        count[page] = count.get(page, 0) + 1
    dup = {p for p, c in count.items() if c >= 2}
    host = {"pages_shared": len(dup),
            "pages_sharing": sum(c - 1 for c in count.values() if c >= 2)}
    procs = [{"ksm_rmap_items": len(x),
              "ksm_merging_pages": sum(1 for _, p in x if p in dup)} for x in (a, b)]
    return host, procs


def run_tool(args):
    import subprocess
    p = subprocess.run(KSMSCAN + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def rows_of(out):
    return list(csv.DictReader(io.StringIO(out)))


def kernel_figures(pids):
    """{(input, figure): value} as the kernel has them, read here."""
    out = {("*", n): kl.kread(n) for n in ("pages_shared", "pages_sharing",
                                           "general_profit")}
    for pid in pids:
        st = kl.ksm_stat(pid)
        for n in ("ksm_rmap_items", "ksm_merging_pages", "ksm_process_profit"):
            out[("pid:%d" % pid, n)] = st.get(n)
    return out


def settle(ks, f0, scans):
    """run=1 until full_scans passed the forecast's scans and the counters
    stood still for two scans."""
    ks.set("run", 1)
    t0, last, since = time.time(), None, f0
    while time.time() - t0 < SETTLE_TIMEOUT:
        f = kl.kread("full_scans")
        now = kl.counters()
        if now != last:
            last, since = now, f
        if f >= f0 + scans + 1 and f >= since + 2:
            return True
        time.sleep(0.05)
    return False


def forecast_checks(d, f0, host, procs, pids):
    eq(d["parameters"].get("ksm_full_scans"), f0,
       "parameters.ksm_full_scans is the kernel's full_scans as it began")
    last = d["timeline"][-1]
    for n, v in host.items():
        eq(last[n], v, "forecast: the host's %s once settled (computed here)" % n)
    got = {p["pid"]: p for p in d.get("processes", [])}
    for pid, want in zip(pids, procs):
        for n, v in want.items():
            eq(got.get(pid, {}).get(n), v,
               "forecast: pid %d's %s (computed here)" % (pid, n))


def check_after(path, pids):
    rc, out, err = run_tool(["--check=" + path, "--tolerance=%d" % TOLERANCE,
                             "-o", "csv"])
    k = kernel_figures(pids)
    rows = rows_of(out)
    eq(rc, 0, "after KSM settled: --check within %d%%: exit 0 (%s)" % (TOLERANCE, err))
    eq(len(rows), 3 + 3 * len(pids), "one row per figure")
    for r in rows:
        key = (r["input"], r["figure"])
        eq(int(float(r["actual"])), k.get(key), "%s %s: actual is the kernel's" % key)
        check(abs(float(r["error_percent"])) <= TOLERANCE,
              "%s %s within %d%%" % (key + (TOLERANCE,)), repr(r))


def check_row_k(d, pids):
    """A copy of the forecast whose full_scans is one below the kernel's:
    its first timeline row (made the kernel's counters now) is the one
    compared, not its others (made wrong)."""
    d = json.loads(json.dumps(d))
    now = kl.kread("full_scans")
    d["parameters"]["ksm_full_scans"] = now - 1
    first = dict(d["timeline"][0])
    for n in ("pages_shared", "pages_sharing", "general_profit"):
        first[n] = kl.kread(n)
    wrong = dict(first, pages_shared=first["pages_shared"] * 3 + 7)
    d["timeline"] = [first] + [dict(wrong, scan=i + 2) for i in range(3)]
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        "ksmscan-check-live-k-%d.json" % os.getpid())
    with open(path, "w") as f:
        json.dump(d, f)
    rc, out, err = run_tool(["--check=" + path, "-o", "csv"])
    rows = [r for r in rows_of(out) if r["input"] == "*"]
    check(rc == 0 and rows and all(r["scan"] == "1" for r in rows) and
          kl.kread("full_scans") == now,
          "one full scan since the forecast: its first row is compared, exit 0",
          "%r %r %r" % (rc, rows, err))
    os.unlink(path)


def with_children(ks, a, b):
    host, procs = expected(a, b)
    ca = cb = None
    try:
        ca, _ = kl.start_child(a)
        cb, _ = kl.start_child(b)
        pids = [ca.pid, cb.pid]
        f0 = kl.kread("full_scans")
        rc, out, err = run_tool(["-p", str(ca.pid), "-p", str(cb.pid), "--count=2",
                                 "--interval=0.5s", "--pages-to-scan=%d" %
                                 SETTINGS["pages_to_scan"], "--sleep-ms=%d" %
                                 SETTINGS["sleep_millisecs"], "-o", "json"])
        eq(rc, 0, "the forecast: exit 0 (%s)" % err.strip()[:200])
        d = json.loads(out)
        forecast_checks(d, f0, host, procs, pids)
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            "ksmscan-check-live-%d.json" % os.getpid())
        with open(path, "w") as f:
            f.write(out)
        rc, out, err = run_tool(["--check=" + path, "-o", "csv"])
        eq(rc, 1, "before KSM runs: the forecast is not met: exit 1")
        check(settle(ks, f0, d["timeline"][-1]["scan"]), "KSM settles",
              repr(kl.counters()))
        check_after(path, pids)
        ks.set("run", 0)        # ksmd stops, its counters stay: full_scans holds
        check_row_k(d, pids)
        kl.stop_child(cb)
        cb = None
        rc, out, err = run_tool(["--check=" + path])
        check(rc == 1 and "pid:%d has exited" % pids[1] in err,
              "a child gone: exit 1, said on stderr", "%r %r" % (rc, err))
        os.unlink(path)
    finally:
        kl.stop_child(ca)
        kl.stop_child(cb)


def main():
    if not live.live_enabled():
        skip("KSMSCAN_LIVE_TESTS is not 1: KSM is left alone")
        return
    try:
        kl.preflight()
        session = live.ksm_session()
    except (kl.Skip, live.NotAllowed) as e:
        skip(str(e))
        return
    with session as ks:
        ks.plain(**SETTINGS)
        with_children(ks, *layouts(random.Random(25)))
    check(not ks.changed(), "KSM settings restored", repr(ks.changed()))


if __name__ == "__main__":
    kl.run_main(main)
