#!/usr/bin/python3
"""ksmscan's KSM model against the running kernel's KSM.

Run from the repository root with Debian's Python, as root:

    /usr/bin/python3 tests/test_ksm_live.py [-v]

A child Python process fills a private anonymous mapping with known pages
(groups of identical pages around max_page_sharing, touched zero pages, unique
pages) and marks it MADV_MERGEABLE.  `ksmscan -p PID --range=...` estimates
what KSM would merge; then the test runs the kernel's KSM (ksmd) on the same
process until its counters stop moving and compares them with the estimate:
first with use_zero_pages=0 (`ksmscan -m M`), then with use_zero_pages=1
(`ksmscan -m M -z`).

The oracles are the pages this file wrote (pages, zero_pages, distinct_pages;
/proc/PID/pagemap for "every page present, private, not the shared zero
page"), the model's formulas in Python (the KSM model (docs/model.md) with the two
corrections this test found: see spec_group), and the kernel: the
/sys/kernel/mm/ksm counters pages_shared, pages_sharing, ksm_zero_pages and
general_profit, and the child's /proc/PID/ksm_stat.  When a check on the
kernel's figures fails, the failure line carries the kernel's outcome per group
of identical pages, read from /proc/PID/pagemap and /proc/kpageflags (one KSM
page per distinct KSM pfn), next to the plain formula's figures for that group.

It changes the kernel's KSM settings, so it runs only inside
live.ksm_session(): with KSMSCAN_LIVE_TESTS=1 and KSM idle (run=0, no merged
pages, no process with KSM state); it then restores every setting it changed
(run=2 first, as it started KSM itself; run=0 last), also on SIGTERM, SIGINT
and SIGHUP.  Otherwise, and when /sys/kernel/mm/ksm is missing or not
writable, it is one SKIP (never FAIL) saying why.

`$KSMSCAN` (split like a shell word list) or ./ksmscan (built with make if
missing) is the binary.  One line per failing check, SKIP lines, and last
"N passed, N failed" (", N skipped" when skipped); exit 1 if anything failed.  -v prints the
counters.
"""

import collections
import csv
import io
import os
import random
import select
import shlex
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import live  # noqa: E402
from ksmtest import closing_line  # noqa: E402
ROOT = os.path.dirname(HERE)
KSM = live.KSM_ROOT
PAGE = 4096
TIMEOUT = 60            # seconds per ksmscan run
SETTLE_TIMEOUT = 60     # seconds for KSM's counters to stop moving
QUIET_SCANS = 4         # full scans without a change before "settled"
QUIET_SECONDS = 1.0     # and at least this long

M = 4                   # max_page_sharing for both ksmscan and the kernel
# Identical-page groups: every remainder mod M below and above M, plus a large
# group; 5, 9 and 41 are M+1, 2M+1 and 10M+1.
GROUPS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 41]
ZEROS = 13              # touched zero pages (13 = 3M+1)
UNIQUE_RANDOM = 16      # plus a last-byte near-duplicate pair and a near-zero page

VERBOSE = "-v" in sys.argv[1:]

# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------
STATE = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, what, detail=""):
    if cond:
        STATE["passed"] += 1
    else:
        STATE["failed"] += 1
        print("FAIL %s%s" % (what, (": " + detail) if detail else ""), flush=True)
    return bool(cond)


def eq(got, exp, what, detail=""):
    return check(got == exp, what, "expected %r, got %r%s" % (
        exp, got, ("; " + detail) if detail else ""))


def skip(why):
    STATE["skipped"] += 1
    print("SKIP %s" % why, flush=True)


def info(text):
    if VERBOSE:
        print("# " + text, flush=True)


def finish():
    print(closing_line(STATE["passed"], STATE["failed"], STATE["skipped"]), flush=True)
    sys.exit(1 if STATE["failed"] else 0)


def run_main(main, errors=(OSError, RuntimeError, ValueError)):
    """A live suite's main(): an error the suite expects (@errors) is one
    failure, not a traceback; then the closing line and exit status."""
    try:
        main()
    except errors as e:
        check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
    finish()


class Skip(Exception):
    pass


# ---------------------------------------------------------------------------
# The binary
# ---------------------------------------------------------------------------
def ksmscan_cmd():
    env = os.environ.get("KSMSCAN")
    if env:
        return shlex.split(env)
    path = os.path.join(ROOT, "ksmscan")
    if not os.path.exists(path):
        subprocess.run(["make", "-C", ROOT, "ksmscan"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.STDOUT)
    return [path]


def ksmscan_summary(cmd, pid, start, end, extra, what):
    """One --csv summary row of `ksmscan -p PID --range=START-END`, or None."""
    args = cmd + ["-p", str(pid), "--range=0x%x-0x%x" % (start, end), "--csv",
                  "-a", "xxhash", "-m", str(M)] + extra
    what = "%s (`%s`)" % (what, " ".join(shlex.quote(a) for a in args))
    try:
        r = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        check(False, what + ": finishes", "timed out after %ds" % TIMEOUT)
        return None
    except OSError as e:
        check(False, what + ": runs", str(e))
        return None
    err = r.stderr.decode("utf-8", "replace")
    if not check(r.returncode == 0, what + ": exit status 0",
                 "rc=%r stderr=%r" % (r.returncode, err[-500:])):
        return None
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode("utf-8", "replace"),
                                           newline="")))
    if not eq(len(rows), 1, what + ": one summary row"):
        return None
    row = rows[0]
    out = {}
    for k in ("pages", "zero_pages", "distinct_pages", "pages_shared",
              "pages_sharing", "ksm_zero_pages", "general_profit",
              "zero_page_mappings"):
        try:
            out[k] = int(row.get(k))
        except (TypeError, ValueError):
            check(False, what + ": integer column " + k, repr(row.get(k)))
            return None
    return out


# ---------------------------------------------------------------------------
# The pages, and the KSM model (docs/model.md) on them
# ---------------------------------------------------------------------------
def make_layout(rng):
    """[(group key, page bytes)] in address order: GROUPS, ZEROS zero pages,
    unique pages (random, a last-byte near-duplicate pair, a near-zero page),
    shuffled so that groups interleave."""
    pages = []
    for c in GROUPS:
        p = rng.randbytes(PAGE)
        pages += [("c=%d" % c, p)] * c
    pages += [("zero", bytes(PAGE))] * ZEROS
    for _ in range(UNIQUE_RANDOM):
        pages.append(("unique", rng.randbytes(PAGE)))
    base = rng.randbytes(PAGE)
    pages.append(("unique", base))
    pages.append(("unique", base[:-1] + bytes([base[-1] ^ 1])))
    pages.append(("unique", bytes(PAGE - 1) + b"\x01"))
    rng.shuffle(pages)
    return pages


def spec_group(c, z=False, zero=False):
    """The model for one content seen c times: (shared, sharing, ksm_zero).

    the KSM model (docs/model.md) says shared = ceil(c/M); this test found that the kernel
    makes one KSM page fewer when c > M and c % M == 1 (the single leftover
    page cannot join a full KSM page and finds no partner in the unstable
    tree), and ksmscan follows the kernel (README, "What the figures mean")."""
    if c < 2 and not (z and zero):
        return 0, 0, 0
    if z and zero:
        return 0, 0, c
    s = -(-c // M)
    return s - (c > M and c % M == 1), c - s, 0


def spec_figures(layout, z):
    counts = collections.Counter(p for _, p in layout)
    shared = sharing = kzero = 0
    for p, c in counts.items():
        a, b, k = spec_group(c, z, p == bytes(PAGE))
        shared, sharing, kzero = shared + a, sharing + b, kzero + k
    pages = len(layout)
    saved = (sharing + kzero) * PAGE
    return {"pages": pages, "zero_pages": counts.get(bytes(PAGE), 0),
            "distinct_pages": len(counts), "pages_shared": shared,
            "pages_sharing": sharing, "ksm_zero_pages": kzero,
            # Pages merged with the zero page are no longer tracked (no rmap_item).
            "general_profit": saved - (pages - kzero) * 64}


# ---------------------------------------------------------------------------
# The child process
# ---------------------------------------------------------------------------
CHILD = r"""
import ctypes, mmap, sys
n = int(sys.argv[1])
flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20)
m = mmap.mmap(-1, n * 4096, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
if hasattr(mmap, "MADV_NOHUGEPAGE"):
    m.madvise(mmap.MADV_NOHUGEPAGE)     # plain 4 KiB pages, as on most hosts
data = sys.stdin.buffer.read(n * 4096)
assert len(data) == n * 4096, len(data)
zero = bytes(4096)
for i in range(n):
    page = data[i * 4096:(i + 1) * 4096]
    if page == zero:
        # a private page of its own, not a mapping of the shared zero page
        m[i * 4096] = 1
        m[i * 4096] = 0
    else:
        m[i * 4096:(i + 1) * 4096] = page
m.madvise(mmap.MADV_MERGEABLE)
sys.stdout.write("%d\n" % ctypes.addressof(ctypes.c_char.from_buffer(m)))
sys.stdout.flush()
sys.stdin.buffer.read()                 # until the test closes our stdin
"""


def start_child(layout):
    n = len(layout)
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        p.stdin.write(b"".join(pg for _, pg in layout))
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], 30)
        line = p.stdout.readline() if ready else b""
        return p, int(line)
    except (ValueError, OSError) as e:
        stop_child(p)
        raise RuntimeError("child did not report its mapping (%s)" % e)


def stop_child(p):
    if p is None:
        return
    try:
        p.stdin.close()
    except OSError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# ---------------------------------------------------------------------------
# /proc: pagemap, kpageflags, ksm_stat
# ---------------------------------------------------------------------------
PM_PRESENT, PM_FILE, PM_EXCLUSIVE = 1 << 63, 1 << 61, 1 << 56
PFN_MASK = (1 << 55) - 1
KPF_KSM, KPF_ZERO_PAGE, KPF_THP = 1 << 21, 1 << 24, 1 << 22


def pagemap(pid, start, n):
    with open("/proc/%d/pagemap" % pid, "rb") as f:
        f.seek(start // PAGE * 8)
        return list(struct.unpack("<%dQ" % n, f.read(8 * n)))


def kpageflags(pfns):
    out = {}
    with open("/proc/kpageflags", "rb") as f:
        for pfn in set(pfns):
            f.seek(pfn * 8)
            out[pfn] = struct.unpack("<Q", f.read(8))[0]
    return out


def ksm_stat(pid):
    """The child's /proc/PID/ksm_stat as a dict of ints (missing: {})."""
    out = {}
    try:
        with open("/proc/%d/ksm_stat" % pid) as f:
            for line in f:
                k, _, v = line.partition(" ")
                try:
                    out[k] = int(v)
                except ValueError:
                    pass
    except OSError:
        pass
    if "ksm_merging_pages" not in out:
        try:
            with open("/proc/%d/ksm_merging_pages" % pid) as f:
                out["ksm_merging_pages"] = int(f.read())
        except (OSError, ValueError):
            pass
    return out


def kernel_groups(pid, start, layout):
    """Per group of the layout, what KSM made of it, from pagemap and
    kpageflags: {key: (pages, ksm pages = shared, ksm mappings - ksm pages =
    sharing, zero-page mappings, unmerged)}, or None if unreadable."""
    try:
        pm = pagemap(pid, start, len(layout))
        flags = kpageflags([e & PFN_MASK for e in pm if e & PM_PRESENT])
    except (OSError, struct.error):
        return None
    by = collections.defaultdict(list)
    for (key, _), e in zip(layout, pm):
        by[key].append(e)
    out = {}
    for key, es in by.items():
        ksm_pfns = [e & PFN_MASK for e in es
                    if e & PM_PRESENT and flags[e & PFN_MASK] & KPF_KSM]
        zero = sum(1 for e in es if e & PM_PRESENT and
                   flags[e & PFN_MASK] & KPF_ZERO_PAGE)
        shared = len(set(ksm_pfns))
        out[key] = (len(es), shared, len(ksm_pfns) - shared, zero,
                    len(es) - len(ksm_pfns) - zero)
    return out


def group_report(kg, z):
    """The child's pages as KSM left them, and the groups where that differs
    from the KSM model (docs/model.md) (figures shared/sharing/zero-page mappings)."""
    if kg is None:
        return "per-group view unavailable (pagemap/kpageflags unreadable)"
    diffs, tot = [], [0, 0, 0, 0]
    keys = sorted(kg, key=lambda k: (k[:2] != "c=", int(k[2:]) if k[:2] == "c=" else 0, k))
    for key in keys:
        n, sh, sg, zr, un = kg[key]
        tot = [tot[0] + sh, tot[1] + sg, tot[2] + zr, tot[3] + un]
        exp = (0, 0, 0) if key == "unique" else spec_group(n, z, key == "zero")
        if (sh, sg, zr) != exp:
            diffs.append("%s%s: kernel %d/%d/%d with %d unmerged, formula %d/%d/%d"
                         % (key, "" if key.startswith("c=") else " (%d pages)" % n,
                            sh, sg, zr, un, exp[0], exp[1], exp[2]))
    head = ("child's pagemap: %d KSM pages, %d more mappings of them, %d zero-page "
            "mappings, %d unmerged" % tuple(tot))
    return head + ("; groups unlike the plain formula (shared/sharing/zero, M=%d): %s"
                   % (M, "; ".join(diffs)) if diffs else "; every group as the plain formula")


# ---------------------------------------------------------------------------
# /sys/kernel/mm/ksm
# ---------------------------------------------------------------------------
def kread(name):
    return live.read_value(os.path.join(KSM, name))


def has(name):
    return os.path.exists(os.path.join(KSM, name))


COUNTERS = live.KSM_COUNTERS


def counters():
    return {k: kread(k) for k in COUNTERS if has(k)}


def preflight():
    """Raise Skip when this machine cannot run the test (before the session)."""
    if not os.path.isdir(KSM):
        raise Skip("%s missing (kernel without CONFIG_KSM)" % KSM)
    for name in ("run", "max_page_sharing", "use_zero_pages", "pages_to_scan",
                 "sleep_millisecs", "full_scans", "pages_shared", "pages_sharing"):
        if not has(name):
            raise Skip("%s/%s missing" % (KSM, name))
    if not os.access("/proc/kpageflags", os.R_OK):
        raise Skip("/proc/kpageflags not readable (needs root)")


def session_or_skip():
    """A KSM session (tests/live.py) for a live suite, or None after a SKIP
    line saying why KSM may not be used here."""
    if not live.live_enabled():
        skip("KSMSCAN_LIVE_TESTS is not 1: KSM is left alone")
        return None
    try:
        preflight()
        return live.ksm_session()
    except (Skip, live.NotAllowed) as e:
        skip(str(e))
        return None


# ---------------------------------------------------------------------------
# Running KSM until it settles
# ---------------------------------------------------------------------------
def run_ksm_until_settled(ks, use_zero_pages, pid):
    """Unmerge, set the knobs, run=1, and poll full_scans and the counters
    until they have not changed for QUIET_SCANS full scans (KSM merges a page
    only once its checksum is unchanged over two scans).  Returns (settled,
    counters, child ksm_stat, seconds, full scans).  ks is a live.KsmSession:
    its unmerge() writes run=2 only once this test has started KSM."""
    if not ks.unmerge():
        if not ks.started():            # merged pages of someone else's
            raise Skip("KSM started merging outside this test: %r" % counters())
        raise RuntimeError("run=2 did not clear the counters: %r" % counters())
    ks.set("max_page_sharing", M)      # -EBUSY unless nothing is shared
    ks.set("use_zero_pages", use_zero_pages)
    ks.set("merge_across_nodes", 1)    # pages on every NUMA node merge together
    ks.set("smart_scan", 0)            # scan every page every time
    ks.set("advisor_mode", "none")     # else pages_to_scan is the advisor's
    ks.set("pages_to_scan", 10000)
    ks.set("sleep_millisecs", 10)
    t0 = time.time()
    f0 = kread("full_scans")
    ks.set("run", 1)
    last, last_change, changed_at = None, f0, time.time()
    while True:
        f = kread("full_scans")
        now = dict(counters(), general_profit=kread("general_profit")
                   if has("general_profit") else None)
        stat = ksm_stat(pid)
        snap = (now, stat.get("ksm_merging_pages"), stat.get("ksm_zero_pages"))
        if snap != last:
            last, last_change, changed_at = snap, f, time.time()
        if (f >= f0 + QUIET_SCANS + 2 and f >= last_change + QUIET_SCANS
                and time.time() - changed_at >= QUIET_SECONDS):
            # the figures are read between two scans that changed nothing
            return True, now, stat, time.time() - t0, f - f0
        if time.time() - t0 > SETTLE_TIMEOUT:
            return False, now, stat, time.time() - t0, f - f0
        time.sleep(0.02)


def phase(ks, cmd, pid, start, end, layout, z, est):
    label = "use_zero_pages=%d vs ksmscan -m %d%s" % (z, M, " -z" if z else "")
    settled, now, stat, secs, scans = run_ksm_until_settled(ks, z, pid)
    info("%s: after %.1f s and %d full scans: %r; child ksm_stat %r; ksmscan %r"
         % (label, secs, scans, now, stat, est))
    check(settled, "%s: KSM counters settle within %d s" % (label, SETTLE_TIMEOUT),
          "still moving after %d full scans: %r" % (scans, now))
    kg = kernel_groups(pid, start, layout)
    why = group_report(kg, z)
    info(why)

    merging = stat.get("ksm_merging_pages")
    child_zero = stat.get("ksm_zero_pages")
    glob_merging = now["pages_shared"] + now["pages_sharing"]
    # Other processes merging (or merging with the child's pages) would
    # pollute the global counters; each merged mapping counts in one mm only.
    if merging is not None:
        alone = merging == glob_merging and (
            child_zero is None or child_zero == now.get("ksm_zero_pages"))
    else:                               # no /proc/PID/ksm_stat: the pagemap
        alone = kg is not None and [sum(v[i] for v in kg.values()) for i in (1, 2, 3)] \
            == [now["pages_shared"], now["pages_sharing"], now.get("ksm_zero_pages", 0)]
    if alone:
        eq(now["pages_shared"], est["pages_shared"],
           "%s: kernel pages_shared == ksmscan pages_shared" % label, why)
        eq(now["pages_sharing"], est["pages_sharing"],
           "%s: kernel pages_sharing == ksmscan pages_sharing" % label, why)
        if "ksm_zero_pages" in now:
            eq(now["ksm_zero_pages"], est["ksm_zero_pages"],
               "%s: kernel ksm_zero_pages == ksmscan ksm_zero_pages" % label, why)
    else:
        skip("%s: the global counters include other processes (pages_shared + "
             "pages_sharing %d, ksm_zero_pages %r; the child's ksm_merging_pages "
             "%r, ksm_zero_pages %r): checking the child's own figures"
             % (label, glob_merging, now.get("ksm_zero_pages"), merging, child_zero))
        if merging is not None:
            eq(merging, est["pages_shared"] + est["pages_sharing"],
               "%s: child's ksm_merging_pages == ksmscan pages_shared + "
               "pages_sharing" % label, why)
        if child_zero is not None:
            eq(child_zero, est["ksm_zero_pages"],
               "%s: child's ksm_stat ksm_zero_pages == ksmscan ksm_zero_pages"
               % label, why)
        if kg is not None:
            tot = [sum(v[i] for v in kg.values()) for i in (1, 2, 3)]
            eq(tot[0], est["pages_shared"],
               "%s: KSM pages in the child (pagemap) == ksmscan pages_shared"
               % label, why)
            eq(tot[1], est["pages_sharing"],
               "%s: KSM mappings - KSM pages in the child (pagemap) == ksmscan "
               "pages_sharing" % label, why)
            eq(tot[2], est["ksm_zero_pages"],
               "%s: zero-page mappings in the child (pagemap) == ksmscan "
               "ksm_zero_pages" % label, why)

    # general_profit = (pages_sharing + ksm_zero_pages) x 4096 - rmap_items x 64
    # in both; the kernel's rmap_items are global: compare only when they are
    # the child's alone.
    rmap = stat.get("ksm_rmap_items")
    gp = now.get("general_profit")
    if gp is not None and alone and rmap is not None:
        glob_rmap = ((now["pages_sharing"] + now.get("ksm_zero_pages", 0)) * PAGE - gp) // 64
        if glob_rmap == rmap:
            eq(gp, est["general_profit"],
               "%s: kernel general_profit == ksmscan general_profit" % label,
               "the kernel counts %d rmap_items (one per page KSM tracks), "
               "ksmscan %d (pages)" % (rmap, est["pages"]))
        else:
            skip("%s: general_profit not compared: the kernel tracks %d "
                 "rmap_items, the child %d" % (label, glob_rmap, rmap))

    # What ksmscan makes of the process once KSM has merged it: the same pages,
    # the same estimate (KSM pages are present). With use_zero_pages=1 the
    # pages KSM put on the zero page map the kernel's zero page, which
    # pagemap cannot tell from a page only read: ksmscan counts them as
    # zero-page mappings, no memory (docs/inputs.md), so the zero pages
    # move there, as many as the kernel's ksm_zero_pages.
    again = ksmscan_summary(cmd, pid, start, end, ["-z"] if z else [],
                            "ksmscan after KSM merged (%s)" % label)
    if again is not None:
        want = dict(est)
        if z:
            kz = est["ksm_zero_pages"]
            want["pages"] -= kz
            want["zero_pages"] -= kz
            want["ksm_zero_pages"] = 0
            if kz and est["zero_pages"] == kz:
                want["distinct_pages"] -= 1     # no zero-filled page left
            eq(int(again.get("zero_page_mappings", -1)), kz,
               "ksmscan after KSM merged (%s): KSM's zero pages as zero-page "
               "mappings" % label)
        for k in ("pages", "zero_pages", "distinct_pages", "pages_shared",
                  "pages_sharing", "ksm_zero_pages"):
            eq(again[k], want[k], "ksmscan after KSM merged (%s): %s as before%s"
               % (label, k, " (KSM's zero pages apart)" if z else ""))


def main():
    try:
        preflight()
        session = live.ksm_session()
    except (Skip, live.NotAllowed) as e:
        skip(str(e))
        finish()

    cmd = ksmscan_cmd()
    if not os.path.exists(cmd[0]) and not shutil.which(cmd[0]):
        check(False, "ksmscan binary", "%s not found (make -C %s failed?)" % (cmd[0], ROOT))
        finish()

    seed = int.from_bytes(os.urandom(8), "little")
    rng = random.Random(seed)
    layout = make_layout(rng)
    n = len(layout)
    child = None

    with session as ks:
        try:
            child, start = start_child(layout)
            end = start + n * PAGE
            pid = child.pid
            info("seed %d, child %d, mapping 0x%x-0x%x (%d pages), M=%d"
                 % (seed, pid, start, end, n, M))
            run_phases(ks, cmd, pid, start, end, layout)
        except Skip as e:
            skip(str(e))
        except (OSError, RuntimeError) as e:
            check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
        finally:
            stop_child(child)
    # Leaving the session restored what the test changed.
    check(ks.saved, "the test changed KSM settings (so the restore below is tested)")
    check(not ks.problems, "every KSM setting restored", repr(ks.problems))
    changed = ks.changed()
    check(not changed, "KSM settings as before the test", "(name, before, now): %r" % changed)
    eq(counters(), {k: 0 for k in counters()}, "no KSM pages left after the test")
    if STATE["failed"]:
        print("(seed %d)" % seed)
    finish()


def run_phases(ks, cmd, pid, start, end, layout):
    """ksmscan on the child, then the kernel's KSM with use_zero_pages 0 and 1."""
    n = len(layout)
    # The pages are there as written: present, private, not the zero page.
    pm = pagemap(pid, start, n)
    flags = kpageflags([e & PFN_MASK for e in pm if e & PM_PRESENT])
    bad = [i for i, e in enumerate(pm)
           if not e & PM_PRESENT or e & PM_FILE or not e & PM_EXCLUSIVE
           or flags.get(e & PFN_MASK, 0) & (KPF_ZERO_PAGE | KPF_KSM)]
    check(not bad, "child: all %d pages present, private, exclusively mapped, "
          "none the shared zero page (pagemap, kpageflags)" % n,
          "pages %r: %r" % (bad[:5], [hex(pm[i]) for i in bad[:5]]))

    spec = {z: spec_figures(layout, z) for z in (0, 1)}
    est = {}
    for z in (0, 1):
        what = "ksmscan -m %d%s" % (M, " -z" if z else "")
        row = ksmscan_summary(cmd, pid, start, end, ["-z"] if z else [], what)
        if row is None:
            continue
        for k in ("pages", "zero_pages", "distinct_pages"):
            eq(row[k], spec[z][k], "%s: %s == the pages written" % (what, k))
        for k in ("pages_shared", "pages_sharing", "ksm_zero_pages",
                  "general_profit"):
            eq(row[k], spec[z][k], "%s: %s == the KSM model (docs/model.md) in Python" % (what, k))
        est[z] = row

    for z in (0, 1):
        if z not in est:
            skip("use_zero_pages=%d: no ksmscan estimate to compare" % z)
            continue
        phase(ks, cmd, pid, start, end, layout, z, est[z])


if __name__ == "__main__":
    main()
