#!/usr/bin/python3
"""--series (docs/over-time.md) offline: the timeline and volatility reports
against oracles written here, not taken from ksmscan.

- Static memory: the counters after each full scan follow from the contents
  alone, by mm/ksm.c's rules as this file states them (first visit: the
  checksum is recorded and nothing merges; second visit: merging, as docs/over-time.md says
  section 4's groups; a page that never merges is skipped by smart_scan at
  ages 4, 6, 7, 9-12, 14-21, ...; ksm_do_scan() ends a batch at the end of a
  full scan, so scan k ends at a known wake-up), checked scan by scan for
  smart_scan 0 and 1 and use_zero_pages 0 and 1. (tests/test_series_live.py
  checks the same rules against the live kernel.)
- Two raw snapshots built here (a fraction of the pages changed, some of them
  duplicates; pages gone and new): the volatility report equals this file's
  count, and so does it for the fixture guest and a copy with 10% of its
  pages changed.
- A series of identical snapshots ends with the static summary's figures.
- Memory: 2 and 8 snapshots of one memory hold about the same (what a
  series holds grows with the pages that change, not with snapshots).
- The command line: defaults, errors (exit 2), a missing snapshot (exit 1).
"""
import collections
import csv
import hashlib
import io
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, ZERO, as_int, check, elf_pages, eq, fixture,  # noqa: E402
                     ksm_group, parse_csv, proc_stat_fields, run, run_suite, test, tmp)
from ksmtest import run_without_merge_cost as run  # noqa: E402
import xxhash  # noqa: E402
import zstandard  # noqa: E402

TIMELINE = ["input", "scan", "seconds", "pages_shared", "pages_sharing",
            "pages_unshared", "pages_volatile", "pages_skipped", "ksm_zero_pages",
            "general_profit", "ksmd_cpu_percent", "cow_ksm", "pages_scanned",
            "pages_skipped_scan"]
VOLATILITY = ["input", "from", "to", "pages", "unchanged_pages", "changed_pages",
              "new_pages", "gone_pages", "merges_broken"]
COUNTERS = TIMELINE[3:10]
PER_SCAN = TIMELINE[11:]


def csv_rows(args, what, cols):
    r = run(["--csv"] + args)
    if not check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return None
    return parse_csv(r, what, cols)


def ints(row, cols):
    return {k: as_int(row[k]) for k in cols}


# --- static memory: the oracle ------------------------------------------------
def skipped_at(scan):
    """Whether smart_scan skips, at full scan number `scan` (from 1), a page
    that never merges: should_skip_rmap_item() with age = scan - 1."""
    skips = 0
    for s in range(1, scan + 1):
        age = s - 1
        if age < 3:
            continue
        if not skips:
            skips = 1 if age <= 3 else 2 if age <= 5 else 4 if age <= 8 else 8
            if s == scan:
                return False
            continue
        skips -= 1
        if s == scan:
            return True
    return False


def wake_period(sleep_ms, hz, batch_seconds=0.0):
    """Seconds from one wake-up of ksmd to the next, by the kernel's rules:
    schedule_timeout(msecs_to_jiffies(sleep)) armed in the jiffy the batch
    ended in, on the timer wheel, whose level for a timeout of n jiffies has
    a granularity of 8**level (level 0 below 63 jiffies, level 1 below 504,
    ...) and fires at the first bucket after the expiry; the wake-up itself
    comes at a bucket. hz 0: sleep_ms exactly."""
    if not hz:
        return sleep_ms / 1000.0
    n = -(-sleep_ms * hz // 1000)
    level = 0
    while n >= 63 * 8 ** level:
        level += 1
    gran = 8 ** level
    ended = int(batch_seconds * hz)
    return ((ended + n) // gran + 1) * gran / hz


def static_oracle(pages, m, z, smart, pts, sleep_ms, scans, hz=250, cost=0.0):
    """The timeline of unchanging memory, scan by scan ({column: value}), at
    HZ hz with ksmd's time per page visited cost (with cost, every batch but
    the one a scan ends in is pts pages)."""
    counts = collections.Counter(pages)
    shared = sharing = never = 0
    for content, c in counts.items():
        if z and content == ZERO:
            continue
        a, b = ksm_group(c, m)
        shared, sharing = shared + a, sharing + b
        never += c - a - b            # unshared in the end: singles, leftovers
    zero = counts[ZERO] if z else 0
    n, rows, batch, skipped, now, left = len(pages), [], 0, 0, 0.0, pts
    for s in range(1, scans + 1):
        present = n if s <= 2 else n - zero
        skip = smart and s >= 2 and skipped_at(s)
        skipped += never if skip else 0
        visits = present - (never if skip else 0)
        end = batch + visits // pts           # the end is found in this wake-up
        for v in range(visits):               # ksmd's time: batch by batch
            if not left:
                now += wake_period(sleep_ms, hz, pts * cost)
                left = pts
            left -= 1
        if s == 1:
            row = dict(zip(COUNTERS, (0, 0, 0, n, 0, 0, -64 * n)))
        else:
            rmap = n - (zero if s >= 3 else 0)
            unshared = 0 if skip else never
            row = {"pages_shared": shared, "pages_sharing": sharing,
                   "pages_unshared": unshared,
                   "pages_volatile": rmap - shared - sharing - unshared,
                   "pages_skipped": skipped, "ksm_zero_pages": zero,
                   "general_profit": (sharing + zero) * PAGE - 64 * rmap}
        if not left:                          # the end is found by the next call
            now += wake_period(sleep_ms, hz, pts * cost)
            left = pts
        assert cost or abs(now - end * wake_period(sleep_ms, hz)) < 1e-9
        row.update(scan=s, seconds=round(now, 3), cow_ksm=0, pages_scanned=visits,
                   pages_skipped_scan=never if skip else 0)
        rows.append(row)
        batch = end + 1                       # and the batch ends there
        now += wake_period(sleep_ms, hz, (pts - left) * cost)
        left = pts
    return rows


def static_pages(rng):
    """Groups around M = 4, zero pages, unique pages, shuffled."""
    pages = []
    for c in (2, 3, 4, 5, 6, 9, 13):
        pages += [rng.randbytes(PAGE)] * c
    pages += [ZERO] * 9
    pages += [rng.randbytes(PAGE) for _ in range(40)]
    rng.shuffle(pages)
    return pages


def write_raw(path, pages):
    """A raw image: pages (None: a hole) at their offsets."""
    with open(path, "wb") as f:
        for i, p in enumerate(pages):
            if p is not None:
                f.seek(i * PAGE)
                f.write(p)
        f.truncate(len(pages) * PAGE)


@test("static")
def static_memory():
    rng = random.Random(11)
    pages = static_pages(rng)
    assert all(xxhash.xxh64_intdigest(p) & 0xffffffff for p in pages)  # no checksum 0
    snap = tmp("static.raw")
    write_raw(snap, pages)
    for smart in (0, 1):
        for z in (0, 1):
            for pts in (7, len(pages), 1000):
                args = ["--series", snap, "-r", "timeline", "-m", "4",
                        "--pages-to-scan=%d" % pts, "--sleep-ms=30", "--hz=250",
                        "--page-cost=0", "--smart-scan=%d" % smart,
                        "--scans=16"] + (["-z"] if z else [])
                what = "smart_scan=%d -z=%d pages_to_scan=%d" % (smart, z, pts)
                rows = csv_rows(args, what, TIMELINE)
                exp = static_oracle(pages, 4, z, smart, pts, 30, 16)
                if rows is None or not eq(len(rows), 16, what + ": 16 scans"):
                    continue
                for r, e in zip(rows, exp):
                    got = ints(r, COUNTERS + PER_SCAN + ["scan"])
                    got["seconds"] = float(r["seconds"])
                    eq(got, e, "%s: scan %d" % (what, e["scan"]))


@test("pace")
def pace():
    """ksmd's pace: wake-ups on jiffies (the timer wheel), plus the batch's
    cost (--page-cost), scan by scan against this file's wake_period()."""
    rng = random.Random(21)
    pages = static_pages(rng)
    snap = tmp("pace.raw")
    write_raw(snap, pages)
    for pts, cost in ((1000, 0.002), (7, 0.001), (len(pages), 0.0003)):
        what = "pages_to_scan=%d --page-cost=%gs" % (pts, cost)
        rows = csv_rows(["--series", snap, "-r", "timeline", "-m", "4", "--hz=250",
                         "--pages-to-scan=%d" % pts, "--sleep-ms=20",
                         "--page-cost=%gs" % cost, "--revisit-cost=%gs" % cost, "--scans=12"], what, TIMELINE)
        exp = static_oracle(pages, 4, 0, 1, pts, 20, 12, 250, cost)
        if rows and eq(len(rows), 12, what + ": 12 scans"):
            eq([float(r["seconds"]) for r in rows], [e["seconds"] for e in exp],
               what + ": the seconds of each full scan")
    # One batch per full scan: scan 2 ends one wake-up after scan 1.
    for sleep_ms, hz, period in ((20, 250, 0.024), (10, 250, 0.016), (1, 250, 0.008),
                                 (100, 250, 0.104), (250, 250, 0.256),
                                 (1000, 250, 1.024), (20, 1000, 0.021),
                                 (100, 1000, 0.104), (20, 100, 0.03), (20, 0, 0.02)):
        assert abs(wake_period(sleep_ms, hz) - period) < 1e-9   # the rules, by hand
        rows = csv_rows(["--series", snap, "-r", "timeline", "--hz=%d" % hz,
                         "--sleep-ms=%d" % sleep_ms, "--page-cost=0",
                         "--pages-to-scan=1000", "--scans=3"], "pace", TIMELINE)
        if rows:
            eq(float(rows[1]["seconds"]), period, "--sleep-ms=%d at HZ=%d: ksmd wakes "
               "every %g ms" % (sleep_ms, hz, period * 1000))


@test("pace")
def cow_breaks():
    """cow_ksm: the pages of a second snapshot written while they mapped KSM
    pages, in the full scan they were written in; --write-rate writes that
    share of the pages a second with their own bytes, each a cow_ksm while
    the page is merged, and the pages merge again."""
    rng = random.Random(22)
    pairs = [rng.randbytes(PAGE) for _ in range(10)]
    first = [p for p in pairs for _ in range(2)] + [rng.randbytes(PAGE) for _ in range(10)]
    second = list(first)
    written = [0, 3, 9]                     # three pages of pairs
    for i in written:
        second[i] = rng.randbytes(PAGE)
    a, b = tmp("cow-a.raw"), tmp("cow-b.raw")
    write_raw(a, first)
    write_raw(b, second)
    rows = csv_rows(["--series", a, b, "-r", "timeline", "--hz=250", "--sleep-ms=20",
                     "--page-cost=0", "--pages-to-scan=1000", "--interval=0.1s",
                     "--scans=10"], "cow", TIMELINE)
    if rows:
        at = next(i for i, r in enumerate(rows) if float(r["seconds"]) >= 0.1)
        eq([as_int(r["cow_ksm"]) for r in rows],
           [len(written) if i == at else 0 for i in range(len(rows))],
           "cow_ksm: the written pages that were merged, in the scan they were "
           "written in")
    n = 2000
    dup = [rng.randbytes(PAGE) for _ in range(n // 2)]
    snap = tmp("cow-rate.raw")
    write_raw(snap, [p for p in dup for _ in range(2)])
    for rate in ("0", "1%", "0.05"):
        rows = csv_rows(["--series", snap, "-r", "timeline", "--hz=250",
                         "--sleep-ms=20", "--page-cost=0", "--pages-to-scan=%d" % n,
                         "--write-rate=%s" % rate, "--scans=200"], "rate", TIMELINE)
        if not rows:
            continue
        share = float(rate.rstrip("%")) / (100 if rate.endswith("%") else 1)
        # from the end of scan 2 (all merged) on, every page maps a KSM page
        # but the few written since their last visit
        span = float(rows[-1]["seconds"]) - float(rows[1]["seconds"])
        cows = sum(as_int(r["cow_ksm"]) for r in rows[2:])
        want = share * n * span
        check(abs(cows - want) <= 0.05 * want + 2,
              "--write-rate=%s: cow_ksm %d over %.2f s, about %.0f" % (rate, cows, span, want))
        # One wake-up a full scan: the writes come before it, which merges
        # them again (their bytes are as they were), but for a pair whose
        # two pages were both written (its KSM page freed) in a scan that
        # visits them in the unstable tree's order only.
        got = as_int(rows[-1]["pages_sharing"])
        check(n // 2 - max(1, share * n * 0.024) <= got <= n // 2,
              "--write-rate=%s: written pages merge again at their next visit" % rate,
              got)


def advisor_oracle(rows, cost, target, max_cpu=70, min_pages=500, max_pages=30000,
                   period=0.024):
    """pages_to_scan after each full scan under the kernel's scan-time
    advisor (mm/ksm.c's scan_time_advisor(), unsigned integer arithmetic),
    from the replay's scan times and pages visited: a scan starts one wake-up
    (period) after the one before ended, and ksmd's CPU is cost per page
    visited."""
    pts, change, last_time, cpu_prev, visits, out = min_pages, 0, 0, 0.0, 0, []
    for k, r in enumerate(rows):
        start = 0.0 if k == 0 else float(rows[k - 1]["seconds"]) + period
        scan_time = int(round((float(r["seconds"]) - start) * 1000)) // 1000 or 1
        visits += as_int(r["pages_scanned"])
        cpu = visits * cost
        cpu_ms = int((cpu - cpu_prev) * 1e9) // 1000 // 1000
        cpu_percent = cpu_ms * 100 // (scan_time * 1000) or 1
        last = last_time or scan_time
        factor = target * 100 // scan_time or 1
        change = (70 * change + 30 * (scan_time * 100 // last or 1)) // 100
        pages = pts * 100 // factor * change // 100
        per_page = pts // cpu_percent or 1
        pages = min(max(min(pages, per_page * max_cpu), per_page * 10), max_pages)
        last_time, cpu_prev, pts = scan_time, cpu, pages
        out.append(pts)
    return out


@test("policy")
def advisor():
    """--policy=advisor: pages_to_scan after each full scan is the kernel's
    scan-time advisor's, computed here from the replay's own scan times and
    pages visited; the first scan runs at advisor_min_pages_to_scan."""
    guest = fixture("guest-b.elf.zst")
    for target, cost, extra in ((3, 0.25e-6, []), (200, 2e-6, []),
                                (2, 1e-6, ["--advisor-max-cpu=20",
                                           "--advisor-min-pages-to-scan=300",
                                           "--advisor-max-pages-to-scan=5000"])):
        what = "advisor target %ds, %g us a page %s" % (target, cost * 1e6, " ".join(extra))
        r = run(["--series", guest, "--csv", "-r", "timeline", "--policy=advisor",
                 "--hz=250", "--sleep-ms=20", "--page-cost=%gus" % (cost * 1e6),
                 "--revisit-cost=%gus" % (cost * 1e6),
                 "--advisor-target-scan-time=%ds" % target, "--scans=12"] + extra)
        cols = TIMELINE[:11] + ["pages_to_scan"] + TIMELINE[11:]
        rows = parse_csv(r, what, cols) if r.rc == 0 else None
        if not check(rows, what + ": exit 0 and the columns", r.brief()):
            continue
        opts = dict(a.lstrip("-").split("=") for a in extra)
        exp = advisor_oracle(rows, cost, target,
                             int(opts.get("advisor-max-cpu", 70)),
                             int(opts.get("advisor-min-pages-to-scan", 500)),
                             int(opts.get("advisor-max-pages-to-scan", 30000)))
        eq([as_int(x["pages_to_scan"]) for x in rows], exp,
           what + ": pages_to_scan after each full scan")
        first = int(opts.get("advisor-min-pages-to-scan", 500))
        eq(float(rows[0]["seconds"]), 0.024 * (-(-36896 // first) - 1),
           what + ": the first full scan at advisor_min_pages_to_scan a wake-up")
    r = run(["--series", guest, "--csv", "-r", "timeline", "--scans=2"])
    rows = parse_csv(r, "fixed", TIMELINE)
    check(rows and "pages_to_scan" not in rows[0], "fixed: no pages_to_scan column")


@test("static")
def default_length():
    """Without --scans: past the last snapshot plus one interval, and until
    two scans end alike."""
    rng = random.Random(12)
    pages = static_pages(rng)
    snap = tmp("length.raw")
    write_raw(snap, pages)
    rows = csv_rows(["--series", snap, snap, snap, "--interval=0.5s", "-r",
                     "timeline", "--sleep-ms=20", "--pages-to-scan=50"],
                    "default length", TIMELINE)
    if not rows:
        return
    last, before = rows[-1], rows[-2]
    check(float(last["seconds"]) >= 1.5, "the replay runs past 3 x 0.5 s",
          last["seconds"])
    keys = ["pages_shared", "pages_sharing", "ksm_zero_pages"]
    early = [r["scan"] for i, r in enumerate(rows[:-1]) if i and
             float(r["seconds"]) >= 1.5 and
             ints(r, keys) == ints(rows[i - 1], keys) and
             as_int(r["pages_unshared"]) + as_int(r["pages_volatile"]) ==
             as_int(rows[i - 1]["pages_unshared"]) + as_int(rows[i - 1]["pages_volatile"])]
    eq(early, [], "no scan after the series' time ended like the one before it, "
       "but the last")
    eq(ints(last, ["pages_shared", "pages_sharing", "ksm_zero_pages"]),
       ints(before, ["pages_shared", "pages_sharing", "ksm_zero_pages"]),
       "the last two scans end alike")
    eq([as_int(r["scan"]) for r in rows], list(range(1, len(rows) + 1)),
       "scans are numbered from 1")
    secs = [float(r["seconds"]) for r in rows]
    eq(secs, sorted(secs), "seconds never go back")


# --- volatility ------------------------------------------------------------------
def differ(a, b):
    """This file's count of how snapshot b differs from a (lists of pages or None)."""
    counts = collections.Counter(p for p in a if p is not None)
    n = max(len(a), len(b))
    a, b = a + [None] * (n - len(a)), b + [None] * (n - len(b))
    v = dict.fromkeys(VOLATILITY[3:], 0)
    for x, y in zip(a, b):
        v["pages"] += y is not None
        if x is None:
            v["new_pages"] += y is not None
        elif y is None:
            v["gone_pages"] += 1
        elif x == y:
            v["unchanged_pages"] += 1
        else:
            v["changed_pages"] += 1
            v["merges_broken"] += counts[x] >= 2
    return v


@test("volatility")
def two_snapshots():
    rng = random.Random(13)
    a = static_pages(rng) + [None] * 6          # a hole at the end
    b = list(a)
    idx = rng.sample(range(len(a) - 6), len(a) // 5)
    for i in idx[:-4]:
        b[i] = rng.randbytes(PAGE)              # changed (some were duplicates)
    for i in idx[-4:]:
        b[i] = None                             # gone
    for i in range(len(a) - 6, len(a) - 2):
        b[i] = rng.randbytes(PAGE)              # new
    c = list(b)
    c[0] = a[0]                                 # back again
    paths = []
    for name, pages in (("a", a), ("b", b), ("c", c)):
        paths.append(tmp("vol-%s.raw" % name))
        write_raw(paths[-1], pages)
    rows = csv_rows(["--series"] + paths + ["-r", "volatility"], "volatility", VOLATILITY)
    if not rows or not eq(len(rows), 2, "one row per pair of snapshots"):
        return
    for row, (x, y, k) in zip(rows, ((a, b, 1), (b, c, 2))):
        exp = differ(x, y)
        if k == 1:
            check(exp["merges_broken"] and exp["gone_pages"] and exp["new_pages"],
                  "the test changes duplicates, removes and adds pages", repr(exp))
        eq(ints(row, VOLATILITY[3:]), exp, "snapshot %d to %d" % (k, k + 1))
        eq((as_int(row["from"]), as_int(row["to"])), (k, k + 1), "from and to")
        eq(row["input"], paths[-1], "the series is named by the snapshot whose "
           "figures its summary row carries: the last")


@test("volatility")
def guest_ten_percent():
    """The fixture guest and a copy with 10% of its pages changed."""
    elf = zstandard.ZstdDecompressor().stream_reader(
        open(fixture("guest-b.elf.zst"), "rb")).read()
    pages = elf_pages(elf)
    rng = random.Random(14)
    offs = sorted(pages)
    changed = rng.sample(offs, len(offs) // 10)
    copy = bytearray(elf)
    for off in changed:
        k = off + rng.randrange(PAGE)
        copy[k] ^= 0xff                         # always another content
    a, b = tmp("guest.elf"), tmp("guest-10.elf")
    open(a, "wb").write(elf)
    open(b, "wb").write(bytes(copy))
    counts = collections.Counter(hashlib.sha256(p).digest() for p in pages.values())
    exp = {"pages": len(offs), "unchanged_pages": len(offs) - len(changed),
           "changed_pages": len(changed), "new_pages": 0, "gone_pages": 0,
           "merges_broken": sum(counts[hashlib.sha256(pages[o]).digest()] >= 2
                                for o in changed)}
    rows = csv_rows(["--series", a, b, "-r", "volatility"], "guest +10%", VOLATILITY)
    if rows and eq(len(rows), 1, "guest +10%: one row"):
        eq(ints(rows[0], VOLATILITY[3:]), exp, "guest +10%: the test's count")


@test("static")
def identical_snapshots():
    """A series of identical snapshots ends with the static summary's figures."""
    guest = fixture("guest-b.elf.zst")
    keys = ["pages", "zero_pages", "distinct_pages", "pages_shared",
            "pages_sharing", "ksm_zero_pages", "saved_bytes"]
    for z in ([], ["-z"]):
        static = csv_rows([guest, "-r", "summary"] + z, "static summary", ["input"])
        series = csv_rows(["--series", guest, guest, "-r", "summary", "--interval=5s"] + z,
                          "series summary", ["input"])
        if static and series:
            eq(ints(series[0], keys), ints(static[0], keys),
               "identical snapshots%s: the static figures" % (" -z" if z else ""))
            check("seconds_to_90_percent" in series[0],
                  "a series' summary has seconds_to_90_percent")


@test("static")
def seconds_to_90():
    rng = random.Random(15)
    pages = static_pages(rng)
    snap = tmp("s90.raw")
    write_raw(snap, pages)
    args = ["--series", snap, "--pages-to-scan=10", "--sleep-ms=100", "--interval=2s"]
    tl = csv_rows(args + ["-r", "timeline"], "s90 timeline", TIMELINE)
    sm = csv_rows(args + ["-r", "summary"], "s90 summary", ["input"])
    if tl and sm:
        last = as_int(tl[-1]["pages_sharing"])
        first = next(float(r["seconds"]) for r in tl
                     if as_int(r["pages_sharing"]) >= 0.9 * last)
        eq(float(sm[0]["seconds_to_90_percent"]), first,
           "seconds_to_90_percent: the first scan with 90% of the last pages_sharing")
        eq(as_int(sm[0]["pages_sharing"]), last, "the summary has the last scan's figures")
    unique = tmp("unique.raw")
    rng = random.Random(18)
    write_raw(unique, [rng.randbytes(PAGE) for _ in range(5)])
    sm = csv_rows(["--series", unique, "-r", "summary"], "nothing shared", ["input"])
    if sm:
        eq((as_int(sm[0]["pages_sharing"]), float(sm[0]["seconds_to_90_percent"])),
           (0, 0.0), "nothing shared: seconds_to_90_percent is 0")


# --- the command line ---------------------------------------------------------------
@test("cli")
def usage_errors():
    snap = tmp("cli.raw")
    write_raw(snap, [ZERO, b"x" * PAGE])
    bad = [
        (["-r", "timeline", snap], "timeline"),
        (["-r", "volatility", snap], "volatility"),
        (["--pages-to-scan=5", snap], "--pages-to-scan"),
        (["--count=3", snap], "--count"),
        (["--series", "--interval=-1s", snap], "--interval"),
        (["--series", "--interval=5x", snap], "--interval"),
        (["--series", "--interval=0", snap], "--interval"),
        (["--series", "--sleep-ms=0", snap], "--sleep-ms"),
        (["--series", "--smart-scan=2", snap], "--smart-scan"),
        (["--series", "--scans=0", snap], "--scans"),
        (["--series", "--pages-to-scan=0", snap], "--pages-to-scan"),
        (["--series", "-p", "1"], "--count"),
        (["--series", "--hz=x", snap], "--hz"),
        (["--series", "--hz=10001", snap], "--hz"),
        (["--series", "--page-cost=2", snap], "--page-cost"),
        (["--series", "--page-cost=3ns", snap], "--page-cost"),
        (["--series", "--write-rate=2", snap], "--write-rate"),
        (["--series", "--write-rate=-1%", snap], "--write-rate"),
        (["--series", "--write-rate=5%x", snap], "--write-rate"),
        (["--series", "--policy=kubevirtt", snap], "--policy"),
        (["--series", "--policy=ksmtuned", snap], "--policy=ksmtuned"),
        (["--series", "--policy=ksmtuned", "--host-memory=1G", "--host-used=2G",
          snap], "--host-used"),
        (["--series", "--host-memory=12Q", snap], "--host-memory"),
        (["--series", "--advisor-target-scan-time=0.5s", snap], "--advisor-target-scan-time"),
        (["--series", "--advisor-max-cpu=0", snap], "--advisor-max-cpu"),
        (["--series", "--advisor-max-pages-to-scan=0", snap], "--advisor-max-pages-to-scan"),
        (["--policy=advisor", snap], "--policy"),
        (["-p", "1", snap, "--count=2"], "--count"),
        (["--series", "--group=g=%s" % snap, snap], "--group"),
        (["--series", "--csv", "-r", "summary,timeline", snap], "--csv"),
    ]
    for args, word in bad:
        r = run(args)
        eq(r.rc, 2, "`%s`: usage error" % " ".join(args))
        lines = r.err.strip().splitlines()
        check(lines and lines[0].startswith("ksmscan: ") and word in lines[0],
              "`%s`: the first line names %s" % (" ".join(args), word), r.err[:300])


@test("cli")
def defaults_and_json():
    snap = tmp("json.raw")
    write_raw(snap, [ZERO, ZERO, b"a" * PAGE, b"a" * PAGE, b"b" * PAGE])
    r = run(["--series", snap, "--csv"])
    if check(r.rc == 0, "--series --csv: exit 0", r.brief()):
        parse_csv(r, "--series --csv is the timeline", TIMELINE)
    r = run(["--series", snap, snap, "--json", "--interval=90s", "--sleep-ms=7",
             "--pages-to-scan=3", "--smart-scan=0", "--scans=5", "-m", "3"])
    if not check(r.rc == 0, "--series --json: exit 0", r.brief()):
        return
    doc = json.loads(r.out)
    p = doc.get("parameters", {})
    eq({k: p.get(k) for k in ("interval", "pages_to_scan", "sleep_ms", "smart_scan",
                              "scans", "max_page_sharing")},
       {"interval": 90, "pages_to_scan": 3, "sleep_ms": 7, "smart_scan": 0,
        "scans": 5, "max_page_sharing": 3}, "JSON parameters of a series")
    eq(sorted(k for k in doc if k != "parameters"), ["summary", "timeline"],
       "--series reports summary and timeline by default")
    eq(len(doc.get("timeline", [])), 5, "--scans=5: five rows")
    eq(doc.get("summary", [{}])[0].get("pages"), 5, "the summary row is the series'")
    eq(len(doc.get("summary", [])), 1, "one summary row per series")


@test("cli")
def people_table():
    snap = tmp("people.raw")
    write_raw(snap, static_pages(random.Random(16)))
    r = run(["--series", snap, snap, "--interval=1s"])
    if not check(r.rc == 0, "table: exit 0", r.brief()):
        return
    check("pages_sharing over time:" in r.out and "\u2588" in r.out,
          "the table draws pages_sharing over time", r.out[-800:])
    check("90% of" in r.out, "the table says when 90% of the saving came", r.out[-800:])
    check(all(len(line) <= 80 for line in r.out.splitlines() if "|" in line),
          "the curve fits 80 columns")
    r = run(["--series", snap, "--scans=40", "-r", "timeline"])
    rows = [line.split() for line in r.out.splitlines()
            if re.match(r" *\d+ +[\d.]+ +\d+ ", line)]
    check(r.rc == 0 and 2 <= len(rows) <= 16, "people see at most 16 of 40 scans",
          "%d rows" % len(rows))
    check(rows and rows[0][0] == "1" and rows[-1][0] == "40",
          "the first and the last scan among them", repr(rows[:1] + rows[-1:]))
    check(rows and any(row[0] == "2" for row in rows),
          "and scan 2, in which the saving came", repr([row[0] for row in rows]))
    check(all(len(line) <= 80 for line in r.out.splitlines()),
          "the people's timeline fits 80 columns", r.out[:400])
    check("-l or --csv shows every one" in r.out, "and are told how to see all")


@test("cli")
def snapshots_denser_than_scans():
    """Snapshots closer than one full scan: the timeline says so. A full scan
    of N pages takes ceil(N / pages_to_scan) wake-ups, sleep_ms apart (the
    oracle, from ksmd's loop, with --hz=0: exactly sleep_ms, no jiffies, no
    batch cost); 2000 pages at 100 pages every 20 ms: 0.4 s."""
    rng = random.Random(12)
    pages = [rng.randbytes(PAGE) for _ in range(2000)]
    snaps = []
    for i in range(4):
        p = tmp("dense-%d.raw" % i)
        write_raw(p, pages)
        snaps.append(p)
    scan = -(-2000 // 100) * 20 / 1000.0
    for interval, said in (("100ms", True), ("1s", False)):
        r = run(["--series", "--hz=0", "--interval=" + interval, "-r", "timeline"] + snaps)
        text = re.sub(r"\n +", " ", r.out)
        m = re.search(r"The 4 snapshots came every ([\d.]+) s, more often than ksmd's full "
                      r"scan \(([\d.]+) s at 100 pages every 20 ms\)", text)
        check(r.rc == 0 and bool(m) == said and (not m or (
              float(m.group(1)) == 0.1 and float(m.group(2)) == scan)),
              "--interval=%s, full scans of %.1f s: %s" % (
                  interval, scan, "said" if said else "nothing said"), r.out[-600:])


@test("cli")
def missing_snapshot():
    snap = tmp("ok.raw")
    write_raw(snap, [b"q" * PAGE, b"q" * PAGE])
    gone = tmp("missing.raw")
    r = run(["--series", snap, gone, snap, "--csv", "-r", "summary"])
    eq(r.rc, 1, "a missing snapshot: exit status 1")
    check(gone in r.err, "stderr names the missing snapshot", r.err)
    rows = parse_csv(r, "missing snapshot", ["input"]) if r.out else None
    check(rows and rows[0]["status"] == "partial", "the series is partial",
          repr(rows))


@test("cli")
def svg_timeline():
    """--svg draws the timeline: one point per full scan, at its seconds and
    counters (the picture's scale), and renders in rsvg-convert if present."""
    import shutil
    import xml.etree.ElementTree as ET
    snap = tmp("svg.raw")
    write_raw(snap, static_pages(random.Random(17)))
    svg = tmp("series.svg")
    r = run(["--series", snap, snap, "--interval=1s", "--csv", "-r", "timeline",
             "--svg", svg])
    rows = parse_csv(r, "svg timeline", TIMELINE) if r.rc == 0 else None
    if not check(rows, "--series --svg: exit 0 and a timeline", r.brief()):
        return
    ns = "{http://www.w3.org/2000/svg}"
    curves = {e.get("data-counter"): e for e in ET.parse(svg).iter(ns + "polyline")}
    eq(sorted(curves), ["pages_shared", "pages_sharing", "pages_unshared",
                        "pages_volatile"], "four curves")
    end = float(rows[-1]["seconds"])
    top = max(as_int(r[k]) for r in rows for k in ("pages_shared", "pages_sharing",
                                                    "pages_unshared", "pages_volatile"))
    for name, e in curves.items():
        pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
        exp = [(round(60 + 680 * float(r["seconds"]) / end, 1),
                round(30 + 10 + 160 - 160 * as_int(r[name]) / top, 1)) for r in rows]
        eq(pts, exp, "%s: a point per scan at (seconds, value)" % name)
    if shutil.which("rsvg-convert"):
        import subprocess
        p = subprocess.run(["rsvg-convert", svg, "-o", tmp("series.png")],
                           capture_output=True)
        check(p.returncode == 0 and os.path.getsize(tmp("series.png")) > 1000,
              "rsvg-convert renders the series' picture", p.stderr.decode()[:200])


@test("cli")
def process_exits():
    """-p PID --count: a process that exits before the last snapshot."""
    import subprocess
    # It exits between the third and the fourth snapshot, well after the
    # second (a busy machine takes snapshots late; the interpreter's exit
    # writes its memory, which must not fall between the first two).
    child = subprocess.Popen([sys.executable, "-c", "import time; print(1, flush=True); "
                              "time.sleep(1.25)"], stdout=subprocess.PIPE)
    child.stdout.readline()                 # started: its memory is set up
    # ... and asleep: between its print and its sleep it still writes to
    # its heap, which the first snapshot could catch (a flaky changed page).
    for _ in range(400):
        if proc_stat_fields(child.pid)[0] == "S":
            break
        __import__("time").sleep(0.005)
    try:
        r = run(["-p", str(child.pid), "--count=4", "--interval=0.5s", "--csv",
                 "-r", "volatility"])
    finally:
        child.wait()
    eq(r.rc, 1, "a process gone before its last snapshot: exit status 1")
    # A normal user is also told, once, that frame numbers are hidden from
    # it: a note about the user, not about the process, so it names none.
    lines = [l for l in r.err.strip().splitlines()
             if "hides frame numbers from this user" not in l]
    check(lines and all(l.startswith("ksmscan: pid:%d: " % child.pid) for l in lines),
          "each unread snapshot is one line naming the process", r.err)
    rows = parse_csv(r, "process exits", VOLATILITY) if r.out else None
    if check(rows and len(rows) == 3, "three pairs of snapshots", repr(rows)):
        first = ints(rows[0], VOLATILITY[3:])
        check(first["pages"] > 0 and first["unchanged_pages"] == first["pages"],
              "two snapshots of a sleeping process are alike", repr(first))
        eq(ints(rows[2], ["pages"]), {"pages": 0}, "then its pages are gone")


UNSEEN = "writes of the bytes a page already holds are not seen"


@test("cli")
def missing_process_one_line():
    """-p PID --count of a pid that does not exist ends at once: standard
    error holds the one line saying why, not first the note about writes
    snapshots cannot see (soft-dirty bits), which is for a run that goes on;
    a usage error is not preceded by it either. A run that reads its process
    says the note once, and not with --write-rate."""
    import subprocess
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = run(["-p", str(gone.pid), "--count=2", "--interval=1s", "-r", "advise",
             "--target=90%@1h"])
    lines = r.err.strip().splitlines()
    check(r.rc == 1 and len(lines) == 1 and lines[0].startswith(
        "ksmscan: pid:%d: cannot open " % gone.pid),
        "a pid that does not exist: exit 1, one line on stderr, saying why", r.err)
    r = run(["-p", str(gone.pid), "--count=2", "--interval=1s", "-r", "advise"])
    lines = r.err.strip().splitlines()
    check(r.rc == 2 and lines and "needs --target" in lines[0] and
          not any(UNSEEN in x for x in lines),
          "a usage error: its line first, no note before it", r.err)
    child = subprocess.Popen([sys.executable, "-c", "import time; print(1, flush=True); "
                              "time.sleep(60)"], stdout=subprocess.PIPE)
    child.stdout.readline()
    try:
        for extra, want in (([], 1), (["--write-rate=0.001"], 0)):
            r = run(["-p", str(child.pid), "--count=2", "--interval=0.2s", "--csv",
                     "-r", "volatility"] + extra)
            notes = [x for x in r.err.splitlines() if UNSEEN in x]
            check(r.rc == 0 and len(notes) == want and all(
                x.startswith("ksmscan: pid:%d: " % child.pid) for x in notes),
                "a process read twice%s: the note %d time(s)" % (" ".join([""] + extra), want),
                r.brief())
    finally:
        child.kill()
        child.wait()


@test("cli")
def late_snapshot():
    """A snapshot that cannot be taken on time (reading 64 MiB takes longer
    than --interval=1ms) is said to be late, once; the series goes on."""
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import os, time; b = os.urandom("
                              "64 << 20); print(1, flush=True); time.sleep(30)"],
                             stdout=subprocess.PIPE)
    child.stdout.readline()
    try:
        r = run(["-p", str(child.pid), "--count=3", "--interval=1ms", "--csv",
                 "-r", "volatility"])
    finally:
        child.kill()
        child.wait()
    late = [l for l in r.err.splitlines() if "late" in l]
    eq(r.rc, 0, "late snapshots: exit status 0")
    # Each read of 64 MiB takes longer than 1 ms, so each snapshot is later
    # than the one before: the worst is the last.
    check(len(late) == 1 and late[0].startswith(
        "ksmscan: pid:%d: snapshots were taken late, at worst snapshot 3 by "
        % child.pid), "one line says how late the latest snapshot was", r.err)
    rows = parse_csv(r, "late snapshots", VOLATILITY)
    check(rows and len(rows) == 2 and as_int(rows[0]["pages"]) >= 16384,
          "the series is there, 64 MiB in each snapshot", repr(rows))

@test("static")
def threads_invariant():
    """The replay does not depend on -j (ksmd_cpu_percent is a measurement)."""
    guest = fixture("guest-b.elf.zst")
    out = []
    for j in ("1", "2", "5"):
        rows = csv_rows(["--series", guest, guest, "--interval=20s", "-j", j,
                         "-r", "timeline"], "-j %s" % j, TIMELINE)
        out.append([{k: v for k, v in r.items() if k != "ksmd_cpu_percent"}
                    for r in rows or []])
    check(out[0] and out[0] == out[1] == out[2], "-j 1, 2 and 5: the same timeline")



@test("static")
def sample_option():
    """--sample=1/N (docs/over-time.md): 1/1 is the replay without it, row for
    row; a sample says its figures with their bounds on standard error, and
    the saving lies within its bound of the whole replay's; its errors."""
    guest = fixture("guest-b.elf.zst")
    args = ["--series", guest, guest, "--interval=20s"]
    whole = csv_rows(args + ["-r", "timeline"], "whole", TIMELINE)
    one = csv_rows(args + ["--sample=1/1", "-r", "timeline"], "1/1", TIMELINE)
    # ksmd_cpu_percent is a measurement of this run (threads_invariant())
    drop = [[{k: v for k, v in r.items() if k != "ksmd_cpu_percent"} for r in rows or []]
            for rows in (whole, one)]
    check(whole and drop[0] == drop[1], "--sample=1/1: the timeline without it")
    ws = csv_rows(args + ["-r", "summary"], "whole summary", ["input"])
    r = run(["--csv"] + args + ["--sample=1/16", "-r", "summary"])
    eq(r.rc, 0, "--sample=1/16: exit status 0")
    said = re.search(r"--sample=1/16: (\d+) of (\d+) pages replayed.*saved pages "
                     r"(\d+) \+- (\d+)", " ".join(r.err.split()))
    if check(said and ws, "--sample=1/16: a line says the sample and the bounds", r.err):
        kept, pages, saved, bound = (int(x) for x in said.groups())
        exact = as_int(ws[0]["pages_sharing"]) + as_int(ws[0]["ksm_zero_pages"])
        check(kept < pages, "--sample=1/16: fewer pages replayed than read")
        check(abs(saved - exact) <= bound, "--sample=1/16: the saving %d within "
              "%d of the whole replay's %d" % (saved, bound, exact))
        sm = parse_csv(r, "1/16 summary", ["input"])
        eq(as_int(sm[0]["pages_sharing"]) + as_int(sm[0]["ksm_zero_pages"]), saved,
           "--sample=1/16: the summary's saving is the line's")
    for bad in (["--sample=0"], ["--sample=1/0"], ["--sample=1/70000"],
                ["--sample=x"], ["-r", "advise", "--target=90%@1h", "--sample=1/4"],
                ["--thp=always", "--sample=1/4"], ["--record=" + tmp("s.rec"), "--sample=1/4"]):
        r = run(["--series", guest] + bad)
        eq(r.rc, 2, "`%s`: usage error" % " ".join(bad))
        check("--sample" in r.err.splitlines()[0] if r.err else False,
              "`%s`: the first line names --sample" % " ".join(bad), r.err[:300])
    r = run(["--sample=1/4", guest])
    eq(r.rc, 2, "--sample without --series: usage error")

@test("memory")
def memory_flat_in_snapshots():
    """What a series holds grows with what changes between its snapshots,
    not with their number: 2 and 8 snapshots of one 128 MiB memory (a,
    b, a, b, ...: b has 5% of a's pages rewritten) differ by 6 x 5% of its
    pages' changes, under 6 bytes a page a snapshot; holding each snapshot
    in full (24 bytes a page and more) was about 28."""
    from ksmtest import Skip
    from memory_helpers import peak_anon_kib, release_build, two_memories
    if not release_build():
        raise Skip("peak memory is measured on the release build (sanitizers add shadow memory)")
    n = 32768
    a, b = two_memories(n, "flat")
    args = ["--series", "--scans=2", "--csv", "-r", "summary"]
    rc2, two = peak_anon_kib(args + [a, b])
    rc8, eight = peak_anon_kib(args + [a, b] * 4)
    os.unlink(a)
    os.unlink(b)
    eq((rc2, rc8), (0, 0), "both series ran")
    per = (eight - two) * 1024 / (6 * n)
    check(two > 0 and per < 6, "2 to 8 snapshots: under 6 bytes a page a snapshot "
          "more (%d KiB, %d KiB: %.1f)" % (two, eight, per))


# A process of 64 content kinds over 256 MiB of private memory, flipping
# a word of every page between two values as fast as it can: each
# snapshot sees a share of its pages changed (some half), no new contents
# after the first two.
REWRITER = """
import mmap, sys, time
n = int(sys.argv[1])
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(n):
    m[i * 4096:i * 4096 + 8] = (i % 64 + 1).to_bytes(8, "little")
print("ready", flush=True)
g = 0
while True:
    g ^= 1
    w = g.to_bytes(8, "little")
    for i in range(n):
        m[i * 4096 + 8:i * 4096 + 16] = w
"""


@test("series")
def live_count_memory_flat():
    """A live series spools each snapshot's changes as it is read: 8
    snapshots of a process rewriting its pages hold about what 2 do. The
    oracle is the changes the volatility report counts (changed, new and
    gone pages) from snapshot 2 to 8: held in memory (16 bytes each, as
    before the spool) they would grow the peak by that much; spooled, the
    peak grows by less than a third of it (some 8 seconds)."""
    import subprocess
    from ksmtest import Skip
    from memory_helpers import peak_anon_kib, release_build
    if not release_build():
        raise Skip("peak memory is measured on the release build (sanitizers add shadow memory)")
    n = 65536
    kid = subprocess.Popen([sys.executable, "-c", REWRITER, str(n)], stdout=subprocess.PIPE)
    try:
        kid.stdout.readline()
        peaks, changes = [], []
        for count in (2, 8):
            out = tmp("live-flat-%d.csv" % count)
            with open(out, "w") as f:
                rc, peak = peak_anon_kib(["--series", "-p", str(kid.pid), "--interval=0.1s",
                                          "--count=%d" % count, "--scans=2", "--csv",
                                          "-r", "volatility"], stdout=f)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            os.unlink(out)
            if rc and not rows:
                raise Skip("cannot read the process %d" % kid.pid)
            eq(rc, 0, "--count=%d ran" % count)
            peaks.append(peak)
            changes.append(sum(int(r["changed_pages"]) + int(r["new_pages"]) +
                               int(r["gone_pages"]) for r in rows))
    finally:
        kid.kill()
        kid.wait()
    held = (changes[1] - changes[0]) * 16 / 1024
    check(held > 1024, "the process rewrote pages: %d changes more" % (changes[1] - changes[0]))
    check(peaks[1] - peaks[0] < held / 3,
          "2 to 8 snapshots: peak %d -> %d KiB, under a third of the %d KiB "
          "the changes would take in memory" % (peaks[0], peaks[1], held))


@test("series")
def spool_refused_past_reserve():
    """The changes spooled in $TMPDIR keep its reserve (5% of its file
    system or 1 GiB): on a tmpfs already below it, a series stops with one
    line naming the reserve, the row partial and exit status 1, as a
    series past the memory available does; $TMPDIR is left as it was."""
    from ksmtest import tmpfs
    import subprocess
    pages = [bytes([i % 7]) * PAGE for i in range(512)]
    a, b = tmp("reserve-a.raw"), tmp("reserve-b.raw")
    with open(a, "wb") as f:
        f.write(b"".join(pages))
    with open(b, "wb") as f:
        f.write(b"".join(reversed(pages)))
    with tmpfs("8m") as d:
        st = os.statvfs(d)
        keep = st.f_blocks * st.f_frsize // 100 * 5
        with open(os.path.join(d, "fill"), "wb") as f:
            f.write(b"x" * (st.f_bavail * st.f_frsize - keep // 2))
        p = subprocess.run(KSMSCAN + ["--series", "--csv", "-r", "summary", a, b],
                           capture_output=True, text=True,
                           env=dict(os.environ, TMPDIR=d))
        eq(sorted(os.listdir(d)), ["fill"], "nothing left in $TMPDIR")
    os.unlink(a)
    os.unlink(b)
    eq(p.returncode, 1, "exit status 1")
    lines = [l for l in p.stderr.splitlines() if "not read: the run stopped" not in l]
    eq(len(lines), 1, "one line (%r)" % p.stderr)
    check(lines[0].startswith("ksmscan: ") and "less than 5% or 1 GiB free" in lines[0]
          and "$TMPDIR" in lines[0], "it names $TMPDIR and the reserve", lines[0])
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    eq([r["status"] for r in rows], ["partial"], "the row partial")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-series-"))
