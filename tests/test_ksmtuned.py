#!/usr/bin/python3
"""--policy=ksmtuned against ksmtuned itself: the real script's shell
functions run on a fake /proc/meminfo and a fake /sys/kernel/mm/ksm.

The script is /usr/sbin/ksmtuned, or $KSMTUNED, or Debian's ksmtuned
package fetched with `apt-get download` (else one SKIP).  The test strips
its loop, points its /proc/meminfo, /etc/ksmtuned.conf and
/sys/kernel/mm/ksm at files of its own, replaces committed_memory() (the
guests' RSS) by the series' pages, and calls adjust() once per monitor
interval, as the loop does, printing run, npages and sleep_millisecs.

- Memory short, nothing to merge (unique pages): at each look the script
  boosts pages_to_scan (300, 600, ... 1250) and the replay's pages_to_scan
  after its full scans takes the script's values in the script's order;
  the replay's time per batch follows the script's sleep_millisecs.
- Enough free memory but guests that fill the host: the script decays to
  its minimum, 64; so does the replay.
- Plenty of memory: the script stops KSM at every look; the replay never
  scans (one row, nothing merged).
- Memory short, with duplicates (the fixture guest): the script starts KSM
  at first; with the replay's savings added to free memory at its end, the
  script stops KSM, and the replay says ksmtuned stopped it.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (as_int, check, eq, fixture, parse_csv, run,  # noqa: E402
                     run_suite, skip, test, tmp, unique_pages)

TIMELINE_HEAD = ["input", "scan", "seconds", "pages_shared", "pages_sharing"]


def script_text():
    """The real ksmtuned script's text, or None."""
    for path in (os.environ.get("KSMTUNED"), "/usr/sbin/ksmtuned"):
        if path and os.path.exists(path):
            return open(path).read()
    d = tempfile.mkdtemp(prefix="ksmscan-ksmtuned-")
    try:
        r = subprocess.run(["apt-get", "download", "ksmtuned"], cwd=d,
                           capture_output=True, timeout=60)
        debs = glob.glob(os.path.join(d, "ksmtuned_*.deb"))
        if r.returncode or not debs:
            return None
        subprocess.run(["dpkg-deb", "-x", debs[0], os.path.join(d, "x")], check=True)
        return open(os.path.join(d, "x", "usr", "sbin", "ksmtuned")).read()
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


SCRIPT = script_text()


def ksmtuned(total_kb, frees_kb, committed_kb):
    """The script's adjust() at each free memory in turn: [(run, npages, sleep)]."""
    d = tempfile.mkdtemp(prefix="ksmscan-ksmtuned-", dir=tmp("."))
    meminfo, ksm = os.path.join(d, "meminfo"), os.path.join(d, "ksm")
    os.mkdir(ksm)
    for name, v in (("run", 0), ("pages_to_scan", 100), ("sleep_millisecs", 20)):
        with open(os.path.join(ksm, name), "w") as f:
            f.write("%d\n" % v)
    text = SCRIPT.replace("/proc/meminfo", meminfo).replace(
        "/etc/ksmtuned.conf", os.path.join(d, "none.conf")).replace(
        "/sys/kernel/mm/ksm/", ksm + "/")
    text = text[:text.index("PIDFILE=")]         # the functions, not the loop
    steps = "".join(
        "printf 'MemTotal: %d kB\\nMemFree: %d kB\\nBuffers: 0 kB\\nCached: 0 kB\\n' "
        "> %s\nadjust\necho $(cat %s/run) $npages $(cat %s/sleep_millisecs)\n"
        % (total_kb, free, meminfo, ksm, ksm) for free in frees_kb)
    driver = ("printf 'MemTotal: %d kB\\nMemFree: 0 kB\\n' > %s\n%s\n"
              "committed_memory () { echo %d; }\n%s"
              % (total_kb, meminfo, text, committed_kb, steps))
    r = subprocess.run(["bash", "-c", driver], capture_output=True, text=True, timeout=60)
    shutil.rmtree(d, ignore_errors=True)
    return [tuple(int(x) for x in line.split()) for line in r.stdout.splitlines()
            if re.match(r"^\d+ \d+ \d+$", line)]


def replay(snap, total, used, extra=()):
    r = run(["--series", snap, "--csv", "-r", "timeline", "--policy=ksmtuned",
             "--hz=250", "--page-cost=0", "--host-memory=%dK" % total,
             "--host-used=%dK" % used, "--interval=10m"] + list(extra))
    return parse_csv(r, "ksmtuned replay", TIMELINE_HEAD) if r.rc == 0 else None


def distinct(seq):
    out = []
    for v in seq:
        if not out or out[-1] != v:
            out.append(v)
    return out


@test("ksmtuned")
def boost():
    if SCRIPT is None:
        return skip("ksmtuned's script not found (/usr/sbin/ksmtuned, $KSMTUNED "
                    "or apt-get download ksmtuned)")
    n, total, used = 4000, 102400, 92160          # free 10 MiB < 20% of 100 MiB
    steps = ksmtuned(total, [total - used] * 8, n * 4)
    eq([s[0] for s in steps], [1] * 8, "memory short: the script starts KSM at each look")
    eq([s[1] for s in steps], [300, 600, 900, 1200, 1250, 1250, 1250, 1250],
       "and boosts pages_to_scan by 300 up to 1250")
    rows = replay(unique_pages(n), total, used, ["--scans=12", "--smart-scan=0"])
    if not check(rows, "the replay runs"):
        return
    got = distinct(as_int(r["pages_to_scan"]) for r in rows)
    want = distinct(s[1] for s in steps)
    check(got == want[:len(got)] or all(v in want for v in got) and
          [want.index(v) for v in got] == sorted(want.index(v) for v in got),
          "the replay's pages_to_scan takes the script's values in its order",
          "replay %r, script %r" % (got, want))
    # one batch every sleep_millisecs (rounded to jiffies); smart_scan 0: a
    # full scan of n pages is ceil(n / pages_to_scan) batches
    sleep_ms, pts = steps[-1][2], as_int(rows[-1]["pages_to_scan"])
    per = -(-sleep_ms * 250 // 1000)
    per = ((per >> 3) + 1 << 3) if per >= 63 else per + 1   # the timer wheel
    batches = -(-n // pts)
    last, before = float(rows[-1]["seconds"]), float(rows[-2]["seconds"])
    eq(round(last - before, 3), round(batches * per / 250.0, 3),
       "at %d pages, a full scan of %d pages is %d wake-ups %d ms apart (the "
       "script's sleep_millisecs %d)" % (pts, n, batches, per * 4, sleep_ms))


@test("ksmtuned")
def decay():
    if SCRIPT is None:
        return skip("ksmtuned's script not found")
    n, total, used = 4000, 19968, 14336       # guests fill the host, free > 20%
    steps = ksmtuned(total, [total - used] * 3, n * 4)
    eq([(s[0], s[1]) for s in steps], [(1, 64)] * 3,
       "enough free memory, guests filling the host: the script decays to 64")
    rows = replay(unique_pages(n), total, used, ["--scans=2"])
    if check(rows, "the replay runs"):
        eq({as_int(r["pages_to_scan"]) for r in rows}, {64}, "so does the replay")


@test("ksmtuned")
def stopped():
    if SCRIPT is None:
        return skip("ksmtuned's script not found")
    n, total, used = 4000, 1048576, 102400
    steps = ksmtuned(total, [total - used] * 3, n * 4)
    eq([s[0] for s in steps], [0] * 3, "plenty of memory: the script stops KSM")
    rows = replay(unique_pages(n), total, used)
    if check(rows, "the replay runs"):
        eq((len(rows), as_int(rows[0]["pages_volatile"]), as_int(rows[0]["pages_sharing"])),
           (1, 0, 0), "the replay never scans: one row, nothing tracked or merged")


@test("ksmtuned")
def relieved():
    if SCRIPT is None:
        return skip("ksmtuned's script not found")
    guest = fixture("guest-b.elf.zst")
    total, used = 204800, 174080
    r = run(["--series", guest, "-r", "timeline", "--policy=ksmtuned", "--hz=250",
             "--host-memory=%dK" % total, "--host-used=%dK" % used, "--interval=10m"])
    check("ksmtuned stopped KSM" in r.out, "the replay says ksmtuned stopped KSM",
          r.out[-300:])
    rows = replay(guest, total, used)
    if not check(rows, "the replay runs"):
        return
    n = sum(as_int(rows[0][k]) for k in ("pages_shared", "pages_sharing",
                                          "pages_unshared", "pages_volatile"))
    saved = as_int(rows[-1]["pages_sharing"])
    steps = ksmtuned(total, [total - used, total - used + saved * 4], n * 4)
    eq([s[0] for s in steps], [1, 0], "the script starts KSM while memory is short, "
       "and stops it once the replay's %d saved pages are free" % saved)
    check(saved > 0 and as_int(rows[0]["pages_to_scan"]) in (300, 600),
          "the replay merged before it stopped, at the script's first values",
          repr(rows[:2]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-ksmtuned-"))
