#!/usr/bin/python3
"""--policy=kubevirt (docs/policies.md): the replay's KubeVirt KSM handler
against the handler's own arithmetic, transcribed here from KubeVirt's
source: pkg/virt-handler/ksm/ksm.go at commit
d923fdb815cd2016ddaebdaaa51db04133576d72 (2026-08-22):

- lines 48-59: the defaults (boost 300, decay -50, pages 64 to 1250, 100 to
  start, a sleep baseline of 100 ms, 20% free, a loop every 3 minutes);
- lines 123-138: loop() spins at once, then every 3 minutes;
- lines 329-382: calculateNewRunSleepAndPages(): sleep = baseline x 16 GiB
  / (MemTotal - MemAvailable) in kB, unsigned, at least baseline / 10;
  with float32(MemAvailable) > float32(MemTotal) x 0.2 (float32): if KSM
  runs, pages_to_scan - 50, and below 64 KSM stops; if not, it stays
  stopped; otherwise, if KSM runs, pages_to_scan + 300 (at most 1250),
  if not, it starts at 100;
- lines 384-404: writeKsmValuesToFiles(): sleep_millisecs and pages_to_scan
  only when KSM runs after it, then run.

The replay's MemAvailable is --host-memory less --host-used plus what KSM
has saved at the look. After each full scan, the replay's pages_to_scan
must be the handler's after every look due by then (the look happens at
ksmd's first wake-up on or after its time). Where the saving at a look is
not known from the rows (a look inside the scan in which pages merged),
both outcomes are followed and the rows must fit one of them.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (PAGE, as_int, check, eq, fixture, parse_csv, run,  # noqa: E402
                     run_suite, test, unique_pages)

TIMELINE_HEAD = ["input", "scan", "seconds", "pages_shared", "pages_sharing"]
BOOST, DECAY, NMIN, NMAX, NINIT, BASELINE, FREE = 300, -50, 64, 1250, 100, 100, 0.2
LOOP = 180.0


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def handler(state, total_kb, available_kb):
    """calculateNewRunSleepAndPages() and what writeKsmValuesToFiles()
    writes: state (running, pages_to_scan, sleep_millisecs) -> state."""
    running, pages, sleep_now = state
    used = (total_kb - available_kb) % (1 << 64)
    sleep = BASELINE * (16 * 1024 * 1024) // used if used else 0
    if sleep < BASELINE // 10:
        sleep = BASELINE // 10
    if f32(available_kb) > f32(f32(total_kb) * f32(FREE)):
        if not running:
            return (False, pages, sleep_now)        # run=0 only
        pages += DECAY
        if pages < NMIN:
            return (False, pages - DECAY, sleep_now)  # run=0 only
        return (True, pages, sleep)
    if running:
        return (True, min(pages + BOOST, NMAX), sleep)
    return (True, NINIT, sleep)


def replay(snap, total_kb, used_kb, extra):
    r = run(["--series", snap, "--csv", "-r", "timeline", "--policy=kubevirt",
             "--hz=250", "--page-cost=0", "--host-memory=%dK" % total_kb,
             "--host-used=%dK" % used_kb] + list(extra))
    if not check(r.rc == 0, "the kubevirt replay runs", r.brief()):
        return None
    return parse_csv(r, "kubevirt replay", TIMELINE_HEAD)


def saving_kb(row):
    return (as_int(row["pages_sharing"]) + as_int(row["ksm_zero_pages"])) * PAGE // 1024


def follow(rows, total_kb, used_kb, pages0):
    """The handler's possible states after each row, following both outcomes
    where the saving at a look is not known; returns the states that fit
    every row's pages_to_scan (empty: the replay left the handler's logic),
    and how many looks were ambiguous."""
    states, tick, ambiguous = {(False, pages0, 0)}, 0.0, 0
    before = 0                        # the saving at the last row's end
    for row in rows:
        t, after = float(row["seconds"]), saving_kb(row)
        while tick <= t + 1e-9:
            # static memory: the saving only grows while KSM runs
            savings = {before, after} if before != after else {before}
            ambiguous += len(savings) > 1
            states = {handler(s, total_kb, total_kb - used_kb + sv)
                      for s in states for sv in savings}
            if len(savings) > 1:      # between: either side of the threshold
                states |= {handler(s, total_kb, total_kb - used_kb + sv)
                           for s in list(states) for sv in savings}
            tick += LOOP
        states = {s for s in states if s[1] == as_int(row["pages_to_scan"])}
        before = after
    return states, ambiguous


@test("kubevirt")
def boost():
    """16 GiB, 15 GiB used: memory short at every look; KSM starts at 100
    pages at once (time 0) and gains 300 a look up to 1250; sleep is
    100 ms x 16 GiB / 15 GiB = 106 ms (27 jiffies at HZ=250, 28 on the
    timer wheel)."""
    n, total, used = 4000, 16 << 20, 15 << 20
    rows = replay(unique_pages(n), total, used, ["--scans=250", "--smart-scan=0",
                                                  "--interval=1h"])
    if not rows:
        return
    state, tick, bad = (False, 100, 0), 0.0, []
    for r in rows:
        while tick <= float(r["seconds"]) + 1e-9:
            state = handler(state, total, total - used)
            tick += LOOP
        if as_int(r["pages_to_scan"]) != state[1]:
            bad.append((r["scan"], r["seconds"], r["pages_to_scan"], state[1]))
    eq(bad, [], "after each full scan, pages_to_scan is the handler's after "
       "its looks by then (scan, seconds, replay, handler)")
    seen = sorted({as_int(r["pages_to_scan"]) for r in rows})
    eq(seen[:3], [100, 400, 700], "it starts at 100 and boosts by 300")
    eq(state[2], 106, "the handler's sleep_millisecs")
    per = 28                                   # jiffies: 27, plus the wheel's one
    pts = as_int(rows[-1]["pages_to_scan"])
    batches = n // pts + 1      # ksm_do_scan() finds the end in the next batch
    dt = float(rows[-1]["seconds"]) - float(rows[-2]["seconds"])
    eq(round(dt, 3), round(batches * per / 250.0, 3),
       "at %d pages, a full scan of %d pages is %d wake-ups 112 ms apart"
       % (pts, n, batches))


@test("kubevirt")
def plenty():
    """16 GiB, 1 GiB used: the handler never starts KSM; the replay never
    scans."""
    n, total, used = 4000, 16 << 20, 1 << 20
    eq(handler((False, 100, 0), total, total - used), (False, 100, 0),
       "the handler leaves KSM stopped")
    rows = replay(unique_pages(n), total, used, ["--interval=10m"])
    if rows:
        eq((len(rows), as_int(rows[0]["pages_volatile"]),
            as_int(rows[0]["pages_sharing"])), (1, 0, 0),
           "the replay never scans: one row, nothing tracked or merged")


@test("kubevirt")
def relieved():
    """The fixture guest on a 1 GiB host with 874 MiB used (150 MiB
    available, under 20%): KSM starts, boosts while memory is short, then
    its savings make more than 20% available and the handler decays
    pages_to_scan by 50 a look until it stops KSM; each full scan's
    pages_to_scan fits the handler's logic fed with the replay's savings,
    and the replay ends stopped."""
    guest = fixture("guest-b.elf.zst")
    total, used = 1 << 20, 874 << 10
    rows = replay(guest, total, used, ["--interval=2h"])
    if not rows:
        return
    states, ambiguous = follow(rows, total, used, 100)
    check(states, "every full scan's pages_to_scan follows the handler's "
          "logic (%d looks either way)" % ambiguous,
          repr([(r["seconds"], r["pages_to_scan"], r["pages_sharing"]) for r in rows]))
    check(states and all(not s[0] for s in states),
          "the handler has stopped KSM at the end", repr(states))
    seq = [as_int(r["pages_to_scan"]) for r in rows]
    top = seq.index(max(seq))
    check(max(seq) > 100 and all(a >= b for a, b in zip(seq[top:], seq[top + 1:])),
          "it boosted, then only decayed", repr(seq))
    pol = run(["--series", guest, "--csv", "-r", "policies", "--policy=kubevirt",
               "--hz=250", "--page-cost=0", "--host-memory=%dK" % total,
               "--host-used=%dK" % used, "--interval=2h"])
    if check(pol.rc == 0, "-r policies runs", pol.brief()):
        p = parse_csv(pol, "kubevirt policies", ["input", "policy"])
        avail = total - used + saving_kb(rows[-1])
        eq(as_int(p[0]["final_sleep_ms"]) if p else None,
           BASELINE * 16 * 1024 * 1024 // (total - avail_at_last_write(rows, total, used)),
           "final_sleep_ms: the handler's at its last write")
        check(avail > total * FREE, "the end: more than 20% available", repr(avail))


def avail_at_last_write(rows, total, used):
    """MemAvailable at the handler's last look that wrote (KSM running after
    it): the last look before the replay stopped, at the last scan's saving
    (the decay's looks all come after the savings settled)."""
    return total - used + saving_kb(rows[-2] if len(rows) > 1 else rows[-1])


@test("usage")
def usage():
    snap = unique_pages(16)
    r = run(["--series", "--policy=kubevirt", snap])
    first = r.err.strip().splitlines()[:1]
    check(r.rc == 2 and first and "--host-memory" in first[0],
          "kubevirt with files needs the host: exit 2", r.brief())


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-kubevirt-"))
