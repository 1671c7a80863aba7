#!/usr/bin/python3
"""--policy=a,b,... and -r policies (docs/policies.md) against oracles
written here, not taken from ksmscan.

- The comparison against single-policy runs: each policy's row of
  `-r policies` (one run, the policies replayed over the same snapshots)
  against the figures this file computes from that policy's timeline in a
  run of its own: the end of the first full scan with a saving
  (pages_sharing + ksm_zero_pages), with half and nine tenths of the last
  scan's saving; the saving of the last scan ended by 1 h, 6 h and 24 h (a
  replay that settled keeps its last saving); ksmd's CPU as the pages the
  timeline says it visited (pages_scanned) times --page-cost over the
  replay's time (--wake-cost=0 throughout: a wake-up's cost is checked by
  hand in tests/unit_replay.c and test_advice_sound.py's `wake`), and at its busiest over scans at least a second apart;
  pages_to_scan at the end; sleep_millisecs at the end (ksmtuned's
  10 ms x 16 GiB / MemTotal, computed here).
- A tiny memory, hand-computed from ksmd's loop: 12 pages in 6 pairs, 4
  pages a batch, --hz=0 (wake-ups exactly --sleep-ms apart): a batch's
  wake-up visits 4 pages and ksm_do_scan() ends the batch at a full scan's
  end, so full scan k ends at the wake-up (4k - 1) (three batches a scan
  and the one that finds its end), and the pairs merge in the second scan:
  every time is 7 sleeps, the saving 6 pages, ksmd visits 12 pages a scan.
- A policy that never starts merging: ksmtuned with plenty of free memory
  (NaN in CSV, null in JSON, "never" for people).
- Usage errors (exit 2).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (PAGE, check, eq, fixture, parse_csv,  # noqa: E402
                     run_suite, test, tmp)
from ksmtest import run_without_merge_cost as run  # noqa: E402

POLICIES = ["input", "policy", "seconds_to_start", "seconds_to_50_percent",
            "seconds_to_90_percent", "saved_bytes_1h", "saved_bytes_6h",
            "saved_bytes_24h", "ksmd_cpu_percent_mean", "ksmd_cpu_percent_peak",
            "final_pages_to_scan", "final_sleep_ms"]
TIMELINE = ["input", "scan", "seconds", "pages_shared", "pages_sharing"]
COST = 2e-6             # --page-cost=2us
HOST_KB = 1 << 20       # --host-memory=1G: ksmtuned's MemTotal in kB


def csv_of(args, what, cols):
    r = run(["--csv"] + args)
    if not check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return None
    return parse_csv(r, what, cols)


def first_reaching(rows, want):
    """The end of the first scan whose saving is > 0 and >= want, or NaN."""
    for r in rows:
        s = r["saving"]
        if s and s >= want:
            return r["seconds"]
    return math.nan


def peak(rows, cost):
    """ksmd's CPU at its busiest: pages visited times cost over consecutive
    scans from one scan's end to another's at least a second later (the
    last ones: what is left), in percent."""
    best, before, window = 0.0, 0.0, 0
    for i, r in enumerate(rows):
        window += r["visited"]
        dt = r["seconds"] - before
        if dt < 1.0 and i + 1 < len(rows):
            continue
        if dt > 0:
            best = max(best, 100 * window * cost / dt)
        window, before = 0, r["seconds"]
    return best


def figures(timeline, cost, sleep_ms, pages_to_scan=None):
    """The policies report's row, from a timeline (CSV rows) of a replay
    that settled."""
    rows = [{"seconds": float(r["seconds"]),
             "saving": int(r["pages_sharing"]) + int(r["ksm_zero_pages"]),
             "visited": int(r["pages_scanned"])} for r in timeline]
    final = rows[-1]["saving"]
    out = {"seconds_to_start": first_reaching(rows, 1),
           "seconds_to_50_percent": first_reaching(rows, 0.5 * final),
           "seconds_to_90_percent": first_reaching(rows, 0.9 * final)}
    for h in (1, 6, 24):
        v = 0
        for r in rows:
            if r["seconds"] <= h * 3600:
                v = r["saving"]
        out["saved_bytes_%dh" % h] = v * PAGE
    total = sum(r["visited"] for r in rows)
    out["ksmd_cpu_percent_mean"] = 100 * total * cost / rows[-1]["seconds"]
    out["ksmd_cpu_percent_peak"] = peak(rows, cost)
    out["final_pages_to_scan"] = (pages_to_scan if pages_to_scan is not None
                                  else int(timeline[-1]["pages_to_scan"]))
    out["final_sleep_ms"] = sleep_ms
    return out


def close(got, exp, what):
    """Each figure: times to the CSV's 3 decimals, CPU to its 4, the rest
    exact; NaN equal to NaN."""
    bad = {}
    for k, e in exp.items():
        g = float(got[k])
        if math.isnan(e) or math.isnan(g):
            ok = math.isnan(e) and math.isnan(g)
        elif k.startswith("seconds"):
            ok = abs(g - e) <= 0.0006
        elif k.startswith("ksmd_cpu"):
            ok = abs(g - e) <= 0.0001 + 1e-6 * e
        else:
            ok = g == e
        if not ok:
            bad[k] = (g, e)
    return check(not bad, what, "got, expected: %r" % bad)


@test("compare")
def revisits():
    """--revisit-cost: ksmd's CPU counts a KSM page it revisits at its own
    cost. On static memory the KSM pages' addresses at a full scan's start
    are the last scan's pages_shared + pages_sharing (smart_scan never
    passes them over), and the other pages it visited (pages_scanned) cost
    --page-cost: the mean CPU of the replay, from its timeline, against the
    policies report, for two costs of a revisit."""
    guest = fixture("guest-b.elf.zst")
    for page, revisit in ((4e-6, 1e-6), (4e-6, 4e-6)):
        args = ["--series", guest, guest, "--interval=60s",
                "--page-cost=%gus" % (page * 1e6),
                "--revisit-cost=%gus" % (revisit * 1e6), "--wake-cost=0",
                "--pages-to-scan=500"]
        tl = csv_of(args + ["-r", "timeline"], "the timeline", TIMELINE)
        pol = csv_of(args + ["-r", "policies"], "-r policies", POLICIES)
        if not tl or not pol:
            return
        cpu, merged = 0.0, 0
        for r in tl:
            scanned = int(r["pages_scanned"])
            cpu += (scanned - merged) * page + merged * revisit
            merged = int(r["pages_shared"]) + int(r["pages_sharing"])
        want = 100 * cpu / float(tl[-1]["seconds"])
        got = float(pol[0]["ksmd_cpu_percent_mean"])
        check(abs(got - want) <= 1e-4 + 1e-3 * want, "revisits at %g us, other "
              "pages at %g us: ksmd's mean CPU %.4f%% (computed here)" %
              (revisit * 1e6, page * 1e6, want), "got %r" % got)
    r = run(["--series", guest, "--revisit-cost=2", "-r", "policies"])
    check(r.rc == 2 and "--revisit-cost" in r.err, "--revisit-cost=2 (seconds): "
          "exit 2, named", r.brief())


@test("compare")
def against_single_runs():
    """Each policy's row of one comparison run against the timeline of a run
    of that policy alone, over the fixture guest taken twice."""
    guest = fixture("guest-b.elf.zst")
    common = ["--series", guest, guest, "--interval=60s", "--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0",
              "--host-memory=1G", "--host-used=900M", "--pages-to-scan=200",
              "--sleep-ms=30"]
    svg = tmp("policies.svg")
    rows = csv_of(common + ["-r", "policies", "--policy=ksmtuned,fixed,advisor",
                            "--svg=" + svg], "three policies", POLICIES)
    if rows is None:
        return
    eq([r["policy"] for r in rows], ["ksmtuned", "fixed", "advisor"],
       "a row per policy, in --policy's order")
    tuned_sleep = max(10, 10 * 16 * 1024 * 1024 // HOST_KB)
    sleeps = {"fixed": 30, "advisor": 30, "ksmtuned": tuned_sleep}
    timelines = {}
    for r in rows:
        pol = r["policy"]
        tl = csv_of(common + ["-r", "timeline", "--policy=" + pol],
                    "--policy=%s alone" % pol, TIMELINE)
        if not tl:
            continue
        timelines[pol] = tl
        exp = figures(tl, COST, sleeps[pol], 200 if pol == "fixed" else None)
        close(r, exp, "--policy=%s: its row is its own replay's timeline" % pol)
        eq(r["input"], guest, "--policy=%s: the input" % pol)
    svg_curves(svg, timelines)
    starts = {r["policy"]: float(r["seconds_to_start"]) for r in rows}
    check(starts["ksmtuned"] >= 60, "ksmtuned starts KSM at its first look, a "
          "minute in", repr(starts))
    # the first policy's replay is the timeline's, in the same run
    both = run(["--json"] + common + ["-r", "policies,timeline",
                                       "--policy=advisor,fixed"])
    if check(both.rc == 0, "-r policies,timeline: exit 0", both.brief()):
        doc = json.loads(both.out)
        exp = figures([{k: str(v) for k, v in x.items()} for x in doc["timeline"]],
                      COST, 30)
        close(doc["policies"][0], exp, "the timeline of the same run is the "
              "first policy's")


def svg_curves(svg, timelines):
    """--svg draws each policy's saving: a point per full scan of its own
    timeline, x from 60 to 740 over the longest replay, y 160 high over the
    largest saving (so y plus 160 x saving / top is the same everywhere)."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    curves = {e.get("data-policy"): e for e in ET.parse(svg).iter(ns + "polyline")
              if e.get("data-policy")}
    eq(sorted(curves), sorted(timelines), "a curve per policy")
    saving = {p: [int(r["pages_sharing"]) + int(r["ksm_zero_pages"]) for r in tl]
              for p, tl in timelines.items()}
    end = max(float(tl[-1]["seconds"]) for tl in timelines.values())
    top = max(max(v) for v in saving.values())
    for pol, e in curves.items():
        pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
        tl = timelines[pol]
        eq([x for x, _ in pts],
           [round(60 + 680 * float(r["seconds"]) / end, 1) for r in tl],
           "%s: a point per full scan at its time" % pol)
        base = {round(y + 160 * v / top) for (_, y), v in zip(pts, saving[pol])}
        eq(len(base), 1, "%s: at its saving" % pol)


def write_pairs(path, pairs):
    """A raw image of `pairs` pairs of equal pages, each pair's two pages
    apart (pair k at pages k and pairs + k)."""
    one = [bytes([k + 1]) * PAGE for k in range(pairs)]
    with open(path, "wb") as f:
        f.write(b"".join(one + one))


@test("hand")
def tiny_memory():
    """12 pages in 6 pairs, 4 pages a batch at --hz=0: full scan k ends at
    wake-up 4k - 1; the pairs merge in scan 2, at 7 sleeps; the replay ends
    at the first scan past the series' end (one interval) whose counters
    equal the scan's before."""
    snap = tmp("pairs.raw")
    write_pairs(snap, 6)
    sleep = 0.1
    args = ["--series", snap, "--interval=1s", "--hz=0", "--pages-to-scan=4",
            "--sleep-ms=100", "--page-cost=1ms", "--revisit-cost=1ms", "--wake-cost=0", "-r", "policies",
            "--policy=fixed,advisor", "--advisor-min-pages-to-scan=4",
            "--advisor-max-pages-to-scan=4"]
    rows = csv_of(args, "6 pairs", POLICIES)
    if not rows:
        return
    ends = [(4 * k - 1) * sleep for k in range(1, 10)]
    # scans 2 and 3 have the same counters; scan 3 is the first past 1 s
    nscans = next(k for k in range(3, 10) if ends[k - 1] >= 1.0)
    last = ends[nscans - 1]
    exp = {"seconds_to_start": ends[1], "seconds_to_50_percent": ends[1],
           "seconds_to_90_percent": ends[1], "saved_bytes_1h": 6 * PAGE,
           "saved_bytes_6h": 6 * PAGE, "saved_bytes_24h": 6 * PAGE,
           "ksmd_cpu_percent_mean": 100 * 12 * nscans * 1e-3 / last,
           "ksmd_cpu_percent_peak": 100 * 12 * nscans * 1e-3 / last,
           "final_pages_to_scan": 4, "final_sleep_ms": 100}
    for r in rows:
        close(r, exp, "6 pairs, --policy=%s: the hand-computed figures" % r["policy"])


@test("never")
def never_starts():
    """ksmtuned on a host with memory to spare never starts KSM: no time,
    no saving, ksmd never runs."""
    guest = fixture("guest-b.elf.zst")
    args = ["--series", guest, "--host-memory=64G", "--host-used=1G",
            "-r", "policies", "--policy=ksmtuned,fixed"]
    rows = csv_of(args, "plenty of memory", POLICIES)
    if rows:
        t = rows[0]
        check(all(math.isnan(float(t[k])) for k in POLICIES[2:5]),
              "ksmtuned: NaN times in CSV", repr(t))
        eq([float(t[k]) for k in POLICIES[5:9]], [0.0] * 4,
           "ksmtuned: nothing saved, ksmd's CPU 0")
        check(float(rows[1]["seconds_to_start"]) > 0, "fixed merges", repr(rows[1]))
    r = run(["--json"] + args)
    if check(r.rc == 0, "JSON: exit 0", r.brief()):
        p = json.loads(r.out)["policies"][0]
        eq([p[k] for k in POLICIES[2:5]], [None] * 3, "JSON: null times")
    r = run(args)
    check(r.rc == 0 and "never" in r.out, "for people: never", r.out[:400])


@test("never")
def ksmtuned_stops():
    """ksmtuned on a 200 MiB host with 170 MiB used, the guest taken twice 12
    h apart: it starts KSM at its first look and stops it at a later look,
    once the saving frees memory, and keeps it stopped to the end (the last
    row is the replay's end, 24 h). The saving came at that stop: a look is
    at a ksmd wake-up (819 ms apart here) on or after a minute's turn, and
    by ksmtuned's own rule (its adjust(), written here) the free memory
    then, 30 MiB plus the saving, is above 20% of the host; the saving
    holds to the end, since the second snapshot changes nothing."""
    guest = fixture("guest-b.elf.zst")
    args = ["--series", guest, guest, "--interval=12h", "--policy=ksmtuned",
            "--host-memory=200M", "--host-used=170M", "--hz=250"]
    rows = csv_of(args + ["-r", "policies"], "ksmtuned stops", POLICIES)
    tl = csv_of(args + ["-r", "timeline"], "ksmtuned stops: timeline", TIMELINE)
    if not rows or not tl:
        return
    r, last = rows[0], tl[-1]
    start = float(r["seconds_to_start"])
    saving = (int(last["pages_sharing"]) + int(last["ksm_zero_pages"])) * PAGE
    check(float(tl[0]["seconds"]) < start < float(last["seconds"]) and
          start % 60 < 0.85, "the saving came at a look of ksmtuned, before "
          "the end", "start %r, rows at %r" % (start, [x["seconds"] for x in tl]))
    total_kb, thres_kb = 200 * 1024, 200 * 1024 * 20 // 100
    check(30 * 1024 + saving // 1024 > thres_kb and
          36896 * 4 + thres_kb < total_kb,
          "by ksmtuned's rule, KSM stops with that saving", repr(saving))
    eq([float(r[k]) for k in POLICIES[5:8]], [saving] * 3,
       "the saving at 1 h, 6 h and 24 h: the stop's, held to the end")


ADVISE = ["input", "policy", "pages_to_scan", "sleep_ms", "seconds_to_target",
          "ksmd_cpu_percent_mean", "reaches_target", "apply"]


def horizon_cpu(tl, by, cost):
    """ksmd's CPU of an advised row, worked out here from its own replay's
    timeline: pages visited x cost over the time, from the start to the end
    of the first full scan that begins at or after `by` (a scan begins where
    the one before it ends), or to the timeline's last scan (its counters
    settled: every scan after repeats it)."""
    visited, before, end = 0, 0.0, 0.0
    for r in tl:
        visited += int(r["pages_scanned"])
        end = float(r["seconds"])
        if before >= by:
            break
        before = end
    return 100 * visited * cost / end if end else 0.0


def reaches(guest, pages, sleep, want, by):
    """The end of the first full scan of a replay at pages every sleep ms
    whose saving is at least want pages, if by `by` s, else None; and ksmd's
    CPU over the horizon (horizon_cpu(), at 2 us a page)."""
    tl = csv_of(["--series", guest, "--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0", "-r", "timeline",
                 "--pages-to-scan=%d" % pages, "--sleep-ms=%d" % sleep],
                "%d pages every %d ms" % (pages, sleep), TIMELINE)
    if not tl:
        return None, None
    t, visited, end = None, 0, 0.0
    for r in tl:
        if float(r["seconds"]) > by:
            break
        visited += int(r["pages_scanned"])
        end = float(r["seconds"])
        s = int(r["pages_sharing"]) + int(r["ksm_zero_pages"])
        if t is None and s and s >= want:
            t = float(r["seconds"])
    return t, horizon_cpu(tl, by, COST)


@test("advise")
def advise():
    """-r advise on the fixture guest, 90% of the saving within 1 minute, at
    most 5% CPU: the fixed setting it returns reaches the target in its own
    replay (a run of ksmscan with that setting, its timeline read here),
    with the CPU it says; one page fewer at the same sleep does not reach
    it; its apply lines are the sysfs writes of that setting."""
    guest = fixture("guest-b.elf.zst")
    base = csv_of(["--series", guest, "--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0", "-r", "timeline"],
                  "the run's own settings", TIMELINE)
    every = csv_of(["--series", guest, "--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0", "-r", "advise",
                    "--target=90%@1m", "--max-cpu=5"], "advise", ADVISE)
    if not base or not every:
        return
    ref = int(base[-1]["pages_sharing"]) + int(base[-1]["ksm_zero_pages"])
    want = 0.9 * ref
    rows = [r for r in every if r["policy"] == "fixed"]
    eq(len(rows), 5, "a fixed row per sleep tried")
    a = rows[0]
    pages, sleep = int(a["pages_to_scan"]), int(a["sleep_ms"])
    eq(a["reaches_target"], "1", "the advice reaches the target")
    t, cpu = reaches(guest, pages, sleep, want, 60)
    check(t is not None and abs(t - float(a["seconds_to_target"])) < 0.001,
          "%d pages every %d ms: its own replay reaches 90%% by 60 s, when the "
          "advice says" % (pages, sleep), "replay %r, advice %r" %
          (t, a["seconds_to_target"]))
    check(cpu is not None and abs(cpu - float(a["ksmd_cpu_percent_mean"])) < 1e-4
          and cpu <= 5, "its CPU to then is the advice's, within 5%",
          "%r against %r" % (cpu, a["ksmd_cpu_percent_mean"]))
    t1, _ = reaches(guest, pages - 1, sleep, want, 60)
    eq(t1, None, "%d pages every %d ms, the next cheaper, does not" % (pages - 1, sleep))
    eq(a["apply"], "echo %d > /sys/kernel/mm/ksm/pages_to_scan;echo %d > "
       "/sys/kernel/mm/ksm/sleep_millisecs;echo 1 > /sys/kernel/mm/ksm/run"
       % (pages, sleep), "the lines to apply")
    cpus = [float(r["ksmd_cpu_percent_mean"]) for r in every if r["reaches_target"] == "1"]
    eq(cpus, sorted(cpus), "the settings that reach it, cheapest first")
    # a target no setting reaches: merging needs two full scans
    r = run(["--csv", "--series", guest, "--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0",
             "-r", "advise", "--target=90%@10ms"])
    check(r.rc == 1, "an unreachable target: exit status 1 (nothing to "
          "apply)", r.brief())
    none = parse_csv(r, "an unreachable target", ADVISE)
    if none:
        eq({r["reaches_target"] for r in none}, {"0"}, "10 ms: nothing reaches it")
        eq(sorted(r["policy"] for r in none if r["policy"] == "advisor"),
           ["advisor"] * 2, "10 ms: the advisor's rows too (10% and 70%)")
    r = run(["--series", guest, "-r", "advise", "--target=90%@10ms"])
    check(r.rc == 1 and "No setting reaches the target" in r.out and
          "Nothing to apply: no setting reaches 90% of the saving by 0.01 s"
          in r.out and
          "No fixed setting reaches the target:" in r.out and
          "No advisor setting reaches the target:" in r.out,
          "for people: said plainly, for both kinds", r.out[-700:])


SYSFS = "/sys/kernel/mm/ksm/"


def advisor_run(guest, target, max_cpu, want, by, extra, cost=100e-6):
    """A replay of the advisor at target s and max_cpu %, run here from its
    timeline: the end of the first full scan by `by` s whose saving is at
    least want pages (None if none), ksmd's CPU over the horizon
    (horizon_cpu(), --page-cost in extra), and pages_to_scan after the last
    scan by `by` (in force then)."""
    tl = csv_of(["--series", guest, "-r", "timeline", "--policy=advisor",
                 "--advisor-target-scan-time=%d" % target,
                 "--advisor-max-cpu=%d" % max_cpu] + extra,
                "the advisor at %d s, %d%%" % (target, max_cpu), TIMELINE)
    if not tl:
        return None, None, None
    t, visited, end, pts = None, 0, 0.0, None
    for r in tl:
        if float(r["seconds"]) > by:
            break
        visited += int(r["pages_scanned"])
        end, pts = float(r["seconds"]), int(r["pages_to_scan"])
        s = int(r["pages_sharing"]) + int(r["ksm_zero_pages"])
        if t is None and s and s >= want:
            t = float(r["seconds"])
    return t, horizon_cpu(tl, by, cost), pts


def advisor_lines(target, max_cpu, before="", sleep=""):
    return (before + "echo scan-time > %sadvisor_mode;echo %d > "
            "%sadvisor_target_scan_time;echo %d > %sadvisor_max_cpu;%s"
            "echo 1 > %srun" % (SYSFS, target, SYSFS, max_cpu, SYSFS, sleep, SYSFS))


def check_advisor_row(guest, a, want, by, extra, what):
    """An advisor row of -r advise against replays run here: its setting
    reaches the target by `by` s in its own replay, when and at the CPU the
    row says, with pages_to_scan in force then as the row says; the next
    cheaper target scan time the search tried, 1 s longer, does not."""
    target, cpu_max = int(a["advisor_target_scan_time"]), int(a["advisor_max_cpu"])
    t, cpu, pts = advisor_run(guest, target, cpu_max, want, by, extra)
    check(t is not None and abs(t - float(a["seconds_to_target"])) < 0.001,
          "%s: %d s at %d%%, its own replay reaches 90%% by %g s, when the row "
          "says" % (what, target, cpu_max, by), "replay %r, row %r" %
          (t, a["seconds_to_target"]))
    check(cpu is not None and abs(cpu - float(a["ksmd_cpu_percent_mean"])) < 1e-4,
          "%s: its CPU to then is the row's" % what,
          "%r against %r" % (cpu, a["ksmd_cpu_percent_mean"]))
    eq(int(a["pages_to_scan"]), pts, "%s: pages_to_scan in force at %g s" % (what, by))
    nxt = a["next_cheaper_tried"]
    if nxt.lower() != "nan":
        eq(int(nxt), target + 1, "%s: the neighbour tried is 1 s longer" % what)
        t1, _, _ = advisor_run(guest, target + 1, cpu_max, want, by, extra)
        eq(t1, None, "%s: %d s at %d%%, the next cheaper, does not reach it"
           % (what, target + 1, cpu_max))
    return target, cpu_max


@test("advise")
def advise_advisor():
    """The advisor's rows of -r advise, against its replays run here. At
    100 us a page (ksmd's 10% floor then scans the guest in 37 s, so the
    target scan time matters) and 90% within 15 s, at most 70% CPU: an
    advisor_max_cpu of 10 and of 70 tried; the cheapest advisor row reaches
    the target in its own replay, when, at the CPU and with the
    pages_to_scan it says, and a target scan time 1 s longer does not; the
    apply lines are its sysfs writes. With advisor_min_pages_to_scan and
    sleep_millisecs not the kernel's, the lines set them too (the minimum
    before the mode: switching it on starts there). At 2 us a page the
    advisor is held at its floor: the longest target tried, the target's
    duration, reaches; the row says so, and that it is not within 5% CPU."""
    guest = fixture("guest-b.elf.zst")
    slow = ["--page-cost=100us", "--revisit-cost=100us", "--wake-cost=0"]
    base = csv_of(["--series", guest, "-r", "timeline"] + slow,
                  "the run's own settings at 100 us", TIMELINE)
    rows = csv_of(["--series", guest, "-r", "advise", "--target=90%@15s",
                   "--max-cpu=70"] + slow, "advise at 100 us", ADVISE)
    if not base or not rows:
        return
    want = 0.9 * (int(base[-1]["pages_sharing"]) + int(base[-1]["ksm_zero_pages"]))
    adv = [r for r in rows if r["policy"] == "advisor"]
    eq(sorted(int(r["advisor_max_cpu"]) for r in adv), [10, 70],
       "an advisor row per advisor_max_cpu tried: 10 and --max-cpu")
    best = next((r for r in adv if r["reaches_target"] == "1"), None)
    if not check(best is not None and best["next_cheaper_tried"].lower() != "nan",
                 "an advisor setting reaches it, next to one that does not",
                 repr(adv)):
        return
    target, cpu_max = check_advisor_row(guest, best, want, 15, slow, "100 us")
    eq(best["apply"], advisor_lines(target, cpu_max), "the lines to apply")
    eq(int(best["sleep_ms"]), 20, "the sleep in force: the kernel's")
    for r in adv:
        if r["reaches_target"] == "0":
            t, _, _ = advisor_run(guest, int(r["advisor_target_scan_time"]),
                                  int(r["advisor_max_cpu"]), want, 15, slow)
            eq(t, None, "a row that does not reach it: nor does its replay")
    knobs = slow + ["--sleep-ms=50", "--advisor-min-pages-to-scan=200"]
    rows = csv_of(["--series", guest, "-r", "advise", "--target=90%@40s",
                   "--max-cpu=70"] + knobs, "advise, knobs not the kernel's", ADVISE)
    best = next((r for r in rows or [] if r["policy"] == "advisor" and
                 r["reaches_target"] == "1"), None)
    if check(best is not None, "with the knobs: an advisor setting reaches it",
             repr(rows)):
        target, cpu_max = check_advisor_row(guest, best, want, 40, knobs, "knobs")
        eq(best["apply"], advisor_lines(
            target, cpu_max, "echo 200 > %sadvisor_min_pages_to_scan;" % SYSFS,
            "echo 50 > %ssleep_millisecs;" % SYSFS), "the lines set the knobs")
    floor_held(guest)


def floor_held(guest):
    """At 2 us a page, 90% within a minute, at most 5%: the advisor reaches
    it at the longest target scan time tried, 60 s, with nothing longer
    tried; its own replay at 2 us says when and at what CPU; above 5%."""
    fast = ["--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0"]
    rows = csv_of(["--series", guest, "-r", "advise", "--target=90%@1m",
                   "--max-cpu=5"] + fast, "advise at 2 us", ADVISE)
    base = csv_of(["--series", guest, "-r", "timeline"] + fast,
                  "the run's own settings at 2 us", TIMELINE)
    if not rows or not base:
        return
    adv = [r for r in rows if r["policy"] == "advisor"]
    eq([(r["advisor_target_scan_time"], r["advisor_max_cpu"], r["reaches_target"],
         r["within_max_cpu"], r["next_cheaper_tried"].lower()) for r in adv],
       [("60", "10", "1", "0", "nan")], "one advisor row (--max-cpu under 10): "
       "60 s at 10% reaches it, above 5%, nothing longer tried")
    want = 0.9 * (int(base[-1]["pages_sharing"]) + int(base[-1]["ksm_zero_pages"]))
    t, cpu, _ = advisor_run(guest, 60, 10, want, 60, fast, COST)
    if adv:
        check(t is not None and abs(t - float(adv[0]["seconds_to_target"])) < 0.001
              and abs(cpu - float(adv[0]["ksmd_cpu_percent_mean"])) < 1e-4,
              "60 s at 10%: its own replay at 2 us, when and at the CPU the row "
              "says", "%r %r / %r" % (t, cpu, adv[0]))
    r = run(["--series", guest, "-r", "advise", "--target=90%@1m", "--max-cpu=5"] + fast)
    check(r.rc == 0 and "No advisor setting reaches the target within 5% CPU" in r.out,
          "for people: the advisor is above --max-cpu, said plainly", r.out[-700:])


def expected_settings(row, sleep_default=20):
    """The sysfs files the first advised row sets and their values, written
    here from its columns (not from its apply column): a fixed row its
    pages and sleep, the advisor its mode, target scan time and maximum CPU
    (and its sleep when it is not the kernel's); run=1 for both."""
    if row["policy"] == "fixed":
        want = {"pages_to_scan": row["pages_to_scan"],
                "sleep_millisecs": row["sleep_ms"]}
    else:
        want = {"advisor_mode": "scan-time",
                "advisor_target_scan_time": row["advisor_target_scan_time"],
                "advisor_max_cpu": row["advisor_max_cpu"]}
        if int(row["sleep_ms"]) != sleep_default:
            want["sleep_millisecs"] = row["sleep_ms"]
    want["run"] = "1"
    return want


def tmpfiles_lines(text):
    """tmpfiles.d(5) lines parsed as the format says: comments and empty
    lines skipped, then Type Path Mode User Group Age Argument; each a
    w(rite) of /sys/kernel/mm/ksm/NAME. Returns {NAME: Argument}, or None
    if a line is not such."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = line.split(None, 6)
        if len(f) != 7 or f[0] != "w" or f[2:6] != ["-"] * 4 or \
                not f[1].startswith("/sys/kernel/mm/ksm/"):
            return None
        out[f[1][len("/sys/kernel/mm/ksm/"):]] = f[6]
    return out


def applied(args, what):
    """-o sh and -o tmpfiles of args against the CSV of the same run: the
    script, run by sh with KSM_SYSFS a folder of its own, writes exactly the
    first row's settings; the tmpfiles lines carry the same (read by
    systemd-tmpfiles --root where it is installed, else by the format)."""
    import shutil
    import subprocess
    rows = csv_of(args, what, ADVISE)
    sh = run(args + ["-o", "sh"])
    tf = run(args + ["-o", "tmpfiles"])
    if not rows or not check(sh.rc == 0 and tf.rc == 0, "%s: -o sh and -o "
                             "tmpfiles exit 0" % what, sh.brief() + tf.brief()):
        return
    want = expected_settings(rows[0])
    check(sh.out.startswith("#!/bin/sh\n") and "\nset -eu\n" in sh.out,
          "%s: the script starts #!/bin/sh, set -eu" % what, sh.out[:200])
    sysfs = tmp("sysfs-" + what.replace(" ", "-"))
    os.makedirs(sysfs, exist_ok=True)
    r = subprocess.run(["sh", "-c", sh.out], env=dict(os.environ, KSM_SYSFS=sysfs),
                       capture_output=True, text=True)
    got = {f: open(os.path.join(sysfs, f)).read() for f in sorted(os.listdir(sysfs))}
    check(r.returncode == 0, "%s: the script runs under sh" % what, r.stderr)
    eq(got, {k: v + "\n" for k, v in want.items()},
       "%s: the script writes the first row's settings, nothing else" % what)
    eq(tmpfiles_lines(tf.out), want, "%s: tmpfiles lines of the same settings" % what)
    tool = shutil.which("systemd-tmpfiles")
    if not tool:
        return
    root = tmp("root-" + what.replace(" ", "-"))
    ksm = os.path.join(root, "sys", "kernel", "mm", "ksm")
    os.makedirs(ksm, exist_ok=True)
    for name in want:   # 'w' writes only to files that exist, as sysfs's do
        open(os.path.join(ksm, name), "w").close()
    conf = os.path.join(root, "ksm.conf")
    with open(conf, "w") as f:
        f.write(tf.out)
    r = subprocess.run([tool, "--create", "--root=" + root, conf],
                       capture_output=True, text=True)
    got = {f: open(os.path.join(ksm, f)).read().strip() for f in sorted(os.listdir(ksm))}
    check(r.returncode == 0, "%s: systemd-tmpfiles takes the lines" % what, r.stderr)
    eq(got, want, "%s: systemd-tmpfiles writes the same settings" % what)


@test("apply")
def apply_outputs():
    """-o sh and -o tmpfiles: the first advised row's settings (on this
    guest a fixed one is always the cheapest; the advisor's writes are its
    apply column's, checked in advise_advisor), the commands for people
    whole below the table, and the usage errors."""
    guest = fixture("guest-b.elf.zst")
    applied(["--series", guest, "-r", "advise", "--target=90%@1m", "--max-cpu=5"],
            "fixed first")
    applied(["--series", guest, "-r", "advise", "--target=90%@15s", "--max-cpu=70",
             "--page-cost=100us", "--sleep-ms=50"], "at 100 us a page")
    r = run(["--series", guest, "-r", "advise", "--target=90%@1m", "--max-cpu=5"])
    rows = csv_of(["--series", guest, "-r", "advise", "--target=90%@1m",
                   "--max-cpu=5"], "advise", ADVISE)
    if rows:
        first = [x for x in rows if x["policy"] == "fixed"][0]
        lines = ["echo %s > /sys/kernel/mm/ksm/pages_to_scan" % first["pages_to_scan"],
                 "echo %s > /sys/kernel/mm/ksm/sleep_millisecs" % first["sleep_ms"],
                 "echo 1 > /sys/kernel/mm/ksm/run"]
        out = r.out.splitlines()
        check(any(out[i:i + 3] == lines for i in range(len(out))),
              "for people: the commands whole, one a line, below the table",
              r.out[-600:])
    snap = tmp("pairs.raw")
    write_pairs(snap, 2)
    for fmt in ("sh", "tmpfiles"):
        for extra in ([], ["-r", "timeline"], ["-r", "advise,timeline",
                                                "--target=90%@1m"]):
            r = run(["--series", snap, "-o", fmt] + extra)
            first = r.err.strip().splitlines()[:1]
            check(r.rc == 2 and first and "-o %s" % fmt in first[0] and
                  "-r advise" in first[0] and not r.out,
                  "-o %s %s: exit 2, one line, no output" % (fmt, " ".join(extra)),
                  r.brief())


def by_name(rows, key):
    return [float(r[key]) for r in rows]


@test("cpu")
def one_cpu_model():
    """ksmd_cpu_percent_mean and _peak are one model in every report: for
    one replay the timeline's last row, the policies row and the series'
    summary give the same figures, and those this file computes from the
    timeline (pages visited x 2 us over the replay's time; the peak as
    peak() above); the advise row's mean is its setting's own timeline's at
    the end of the first scan that begins at or after the target time."""
    guest = fixture("guest-b.elf.zst")
    cost = ["--page-cost=2us", "--revisit-cost=2us", "--wake-cost=0"]
    tl = csv_of(["--series", guest, "-r", "timeline"] + cost, "timeline",
                TIMELINE)
    pol = csv_of(["--series", guest, "-r", "policies"] + cost, "policies", POLICIES)
    sm = csv_of(["--series", guest, "-r", "summary"] + cost, "summary", ["input"])
    if not (tl and pol and sm):
        return
    rows = [{"seconds": float(r["seconds"]), "visited": int(r["pages_scanned"])}
            for r in tl]
    mean = 100 * sum(r["visited"] for r in rows) * COST / rows[-1]["seconds"]
    want = (round(mean, 4), round(peak(rows, COST), 4))
    for what, r in (("timeline's last row", tl[-1]), ("policies", pol[0]),
                    ("summary", sm[0])):
        got = (float(r["ksmd_cpu_percent_mean"]), float(r["ksmd_cpu_percent_peak"]))
        check(abs(got[0] - want[0]) < 2e-4 and abs(got[1] - want[1]) < 2e-4,
              "%s: ksmd's CPU, mean and peak, as computed here" % what,
              "%r, expected %r" % (got, want))
    eq({(r["ksmd_cpu_percent_mean"], r["ksmd_cpu_percent_peak"])
        for r in (tl[-1], pol[0], sm[0])}.__len__(), 1,
       "timeline, policies and summary print the same mean and peak")
    adv = csv_of(["--series", guest, "-r", "advise", "--target=90%@1m"] + cost,
                 "advise", ADVISE)
    if not adv:
        return
    a = [r for r in adv if r["policy"] == "fixed"][0]
    own = csv_of(["--series", guest, "-r", "timeline", "--pages-to-scan=" +
                  a["pages_to_scan"], "--sleep-ms=" + a["sleep_ms"]] + cost,
                 "the advised setting's timeline", TIMELINE)
    if own:
        # the horizon: to the end of the first scan that begins at or after
        # 60 s (where the one before it ended), or the last (settled)
        by = next((r for p, r in zip(own, own[1:]) if float(p["seconds"]) >= 60),
                  own[-1])
        eq((by["ksmd_cpu_percent_mean"], by["ksmd_cpu_percent_peak"]),
           (a["ksmd_cpu_percent_mean"], a["ksmd_cpu_percent_peak"]),
           "advise: its row's mean and peak are its setting's timeline's over "
           "the horizon (the target time and one full scan after it)")


@test("usage")
def usage_errors():
    snap = tmp("pairs.raw")
    write_pairs(snap, 2)
    for args, says in (
            (["--series", "--policy=fixed,nonsense", snap], "nonsense"),
            (["--series", "--policy=fixed,advisor,fixed", snap], "twice"),
            (["--series", "--policy=fixed,", snap], "--policy"),
            (["--series", "--policy=fixed,ksmtuned", snap], "--host-memory"),
            (["-r", "policies", snap], "--series"),
            (["--series", "-r", "advise", snap], "--target"),
            (["--series", "--target=90%@1h", snap], "-r advise"),
            (["--series", "-r", "advise", "--target=90%", snap], "--target"),
            (["--series", "-r", "advise", "--target=190%@1h", snap], "--target"),
            (["--series", "-r", "advise", "--target=90%@0", snap], "--target"),
            (["--series", "-r", "advise", "--target=0.9@1h", "--max-cpu=0", snap],
             "--max-cpu")):
        r = run(args)
        first = r.err.strip().splitlines()[:1]
        check(r.rc == 2 and first and first[0].startswith("ksmscan: ") and
              says in first[0],
              "%s: exit 2, the first line names %s" % (" ".join(args[:-1]), says),
              r.brief())


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-policies-"))
