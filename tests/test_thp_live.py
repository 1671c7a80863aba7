#!/usr/bin/python3
"""Transparent huge pages against the running kernel (KSMSCAN_LIVE_TESTS=1,
root, KSM idle: tests/live.py restores every setting and unmerges only what
this test merged; THP not "never").

A child maps REGIONS + 1 + ZEROS regions of 2 MiB, 2 MiB-aligned, madvise()s them
MADV_HUGEPAGE, writes them (each becomes one huge page: smaps'
AnonHugePages says so), then MADV_MERGEABLE:

- regions 0 to REGIONS-1: subpages 0-99 the same 100 contents in each,
  100-199 zero-filled, the rest unique; but region 0's first SAME
  subpages hold one content (subpages of one huge page that match each
  other, first: ksmd splits the huge page without merging them, and the
  second of them merges a full scan later);
- then a region whose subpages are unique but one zero-filled (no
  match: it stays a huge page), and ZEROS all zero-filled.  (Linux
  6.12 on: a split maps a huge page's zero-filled subpages to the zero
  page; an older kernel fails this test.)

With KSM stopped, `ksmscan -p PID --interval=1s --count=3 -o json`
forecasts; then KSM runs at the same settings until its counters settle.
The kernel's pages_shared, pages_sharing, general_profit, ksm_zero_pages
and the child's ksm_merging_pages and ksm_rmap_items must equal the
forecast's; the
forecast's thp_zero_freed_pages must be the child's subpages that map the
kernel's zero page afterwards (pagemap and kpageflags, read here); the
full scan at which the saving is complete must be the forecast's; and the
huge page with no match is still one (kpageflags KPF_THP).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live  # noqa: E402
import test_ksm_live as kl  # noqa: E402
from ksmtest import KSMSCAN, thp_mode  # noqa: E402
from test_ksm_live import check, eq, info, skip  # noqa: E402

PAGE = 4096
HUGE = 2 << 20
SUB = HUGE // PAGE
REGIONS = 4             # huge pages with matches
ZEROS = 3               # and after one with no match, all-zero ones
SAME = 10               # copies of one content within region 0
SETTINGS = {"pages_to_scan": 1000, "sleep_millisecs": 100}
SETTLE_TIMEOUT = 60     # seconds

# The child: the regions, then "address" on stdout; exits when stdin closes.
CHILD = r"""
import ctypes, mmap, random, sys
PAGE, HUGE, SUB, REGIONS, SAME, ZEROS = %d, %d, %d, %d, %d, %d
n = REGIONS + 1 + ZEROS
m = mmap.mmap(-1, (n + 1) * HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
off = -base %% HUGE
m.madvise(mmap.MADV_HUGEPAGE, off, n * HUGE)
shared = random.Random(1)
common = [shared.randbytes(PAGE) for _ in range(100)]
same = shared.randbytes(PAGE)
rng = random.Random(2)
for r in range(n):
    at = off + r * HUGE
    m[at] = 1                   # the fault: one huge page
    m[at] = 0
    for k in range(SUB if r <= REGIONS else 0):
        if r == 0 and k < SAME:
            page = same
        elif r < REGIONS and k < 100:
            page = common[k]
        elif (r < REGIONS and k < 200) or (r == REGIONS and k == 300):
            continue                    # zero-filled
        else:
            page = rng.randbytes(PAGE)
            if page == bytes(PAGE):
                page = b"\1" + page[1:]
        m[at + k * PAGE:at + (k + 1) * PAGE] = page
m.madvise(mmap.MADV_MERGEABLE, off, n * HUGE)
print(base + off, flush=True)
sys.stdin.read()
""" % (PAGE, HUGE, SUB, REGIONS, SAME, ZEROS)


def start_child():
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    line = p.stdout.readline()
    if not line:
        kl.stop_child(p)
        raise RuntimeError("the child did not report its mapping")
    return p, int(line)


def anon_huge_kb(pid):
    kb = 0
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                kb += int(line.split()[1])
    return kb


def page_kinds(pid, start, n):
    """(pages mapping the kernel's zero page, pages in a huge page), from
    pagemap and kpageflags, per region."""
    pm = kl.pagemap(pid, start, n)
    pfns = [e & kl.PFN_MASK for e in pm if e & kl.PM_PRESENT]
    flags = kl.kpageflags(pfns)
    zero = [0] * (n // SUB)
    huge = [0] * (n // SUB)
    for i, e in enumerate(pm):
        if not e & kl.PM_PRESENT:
            continue
        f = flags.get(e & kl.PFN_MASK, 0)
        zero[i // SUB] += bool(f & kl.KPF_ZERO_PAGE)
        huge[i // SUB] += bool(f & kl.KPF_THP)
    return zero, huge


def settle(ks, f0):
    """run=1; the counters at the end of each full scan, until they stood
    still for three scans. Returns {scan: counters}, scans from 1."""
    ks.set("run", 1)
    t0, seen, last, since = time.time(), {}, None, 0
    while time.time() - t0 < SETTLE_TIMEOUT:
        f = kl.kread("full_scans") - f0
        if f not in seen:
            now = kl.counters()
            for n in ("general_profit", "pages_unshared", "pages_volatile"):
                now[n] = kl.kread(n)
            seen[f] = now
            if now != last:
                last, since = now, f
            if f >= since + 3 and f >= 4:
                return seen
        time.sleep(0.005)
    return seen


def complete_at(rows, key, final):
    """The first scan whose @key is @final."""
    return next((s for s, r in sorted(rows.items()) if r[key] == final), None)


def forecast(pid):
    p = subprocess.run(KSMSCAN + ["-p", str(pid), "--interval=1s", "--count=3",
                                  "-o", "json"], capture_output=True, text=True,
                       timeout=120)
    eq(p.returncode, 0, "the forecast: exit 0 (%s)" % p.stderr.strip()[:300])
    return json.loads(p.stdout)


def compare(d, live_rows, pid, start):
    last = d["timeline"][-1]
    final = live_rows[max(live_rows)]
    for n in ("pages_shared", "pages_sharing", "general_profit", "ksm_zero_pages"):
        info("%s: forecast %s, kernel %s" % (n, last[n], final[n]))
        eq(last[n], final[n], "%s: the forecast is the kernel's" % n)
    procs = {p["pid"]: p for p in d.get("processes", [])}
    st = kl.ksm_stat(pid)
    for n in ("ksm_merging_pages", "ksm_rmap_items"):
        info("the child's %s: forecast %s, kernel %s" %
             (n, procs.get(pid, {}).get(n), st.get(n)))
        eq(procs.get(pid, {}).get(n), st.get(n),
           "the child's %s: the forecast is the kernel's" % n)
    zero, huge = page_kinds(pid, start, (REGIONS + 1 + ZEROS) * SUB)
    info("zero-page mappings per region after KSM: %r, in huge pages %r" %
         (zero, huge))
    eq(last.get("thp_zero_freed_pages"), sum(zero),
       "thp_zero_freed_pages: the subpages that map the zero page now")
    eq(huge[REGIONS], SUB, "the huge page with no match is still one")
    info("the all-zero huge pages: %r subpages map the zero page" %
         zero[REGIONS + 1:])
    fc = {r["scan"]: r for r in d["timeline"]}
    want = complete_at(fc, "pages_sharing", last["pages_sharing"])
    got = complete_at(live_rows, "pages_sharing", final["pages_sharing"])
    info("pages_sharing complete at scan %s (forecast), %s (kernel)" % (want, got))
    eq(want, got, "the saving is complete at the forecast's full scan")


def with_child(ks):
    child = None
    try:
        child, start = start_child()
        kb = anon_huge_kb(child.pid)
        if kb < (REGIONS + 1 + ZEROS) * HUGE // 1024:
            skip("the child's memory is not in huge pages (AnonHugePages %d kB)" % kb)
            return
        f0 = kl.kread("full_scans")
        d = forecast(child.pid)
        rows = settle(ks, f0)
        check(len(rows) >= 4, "KSM settled", repr(rows))
        # KSM's counters are the host's: memory another process made
        # mergeable meanwhile merges too, with the child's pages as well
        others = [p for p in live.ksm_processes() if p[0] != child.pid]
        if others:
            skip("process %d became mergeable while KSM ran (%s): the "
                 "kernel's figures are not the child's alone" % others[0])
            return
        compare(d, rows, child.pid, start)
    finally:
        kl.stop_child(child)


def main():
    session = kl.session_or_skip()
    if session is None:
        return
    if thp_mode() == "never":
        skip("transparent huge pages are off (enabled=never)")
        return
    with session as ks:
        ks.plain(**SETTINGS)
        with_child(ks)
    check(not ks.changed(), "KSM settings restored", repr(ks.changed()))


if __name__ == "__main__":
    kl.run_main(main)
