#!/usr/bin/python3
"""The settings search and the replay's shortcuts against the plain replay.

-r advise searches settings by timing one shared replay (memory that does
not change) and the replay skips ahead over full scans that repeat
(docs/policies.md, "What the search costs"). The oracle is the replay
without any shortcut, every setting replayed on its own and every full
scan run (KSMSCAN_SLOW_REPLAY=1, tests/README.md): the rows must be the
same, byte for byte, on
- the fixture guest (one snapshot: the shared replay),
- raw images built here with a chosen duplicate structure (pairs, groups,
  zero pages, unique pages; smart_scan on and off, use_zero_pages),
- series of three and four snapshots with pages rewritten between them
  (the skip ahead within each snapshot's time, the search stopping each
  setting once it reaches the target),
- --write-rate (no shortcut may apply: the same rows too),
and each fixed row of -r advise against an exhaustive count up from one
page_to_scan on the plain replay's timelines: the fewest that reach,
for -r advise with several targets and --max-cpu, -r timeline (all but
ksmd_cpu_percent, which rests on this machine's measured checksum speed)
and -r policies with the fixed policy and the advisor.
"""
import csv
import io
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, check, fixture, run, run_suite, test, tmp  # noqa: E402


def both(args):
    """The output of args with the shortcuts, and without."""
    fast = run(args)
    os.environ["KSMSCAN_SLOW_REPLAY"] = "1"
    try:
        slow = run(args)
    finally:
        del os.environ["KSMSCAN_SLOW_REPLAY"]
    return fast, slow


def same(args, what, drop=None):
    """args' CSV is the same with the shortcuts and without (but for the
    column named drop)."""
    fast, slow = both(args + ["-o", "csv"])
    if not check(fast.rc == 0 and slow.rc == 0, "%s: exit status 0" % what,
                 fast.brief() + " / " + slow.brief()):
        return
    a, b = fast.out.splitlines(), slow.out.splitlines()
    if drop:
        k = a[0].split(",").index(drop)
        a = [",".join(c for i, c in enumerate(l.split(",")) if i != k) for l in a]
        b = [",".join(c for i, c in enumerate(l.split(",")) if i != k) for l in b]
    check(len(a) > 1, "%s: rows" % what, fast.out[:200])
    diff = next((i for i in range(max(len(a), len(b)))
                 if i >= len(a) or i >= len(b) or a[i] != b[i]), None)
    check(diff is None, "%s: the same %d rows as the plain replay" % (what, len(b)),
          diff is not None and "first difference, line %d: %r, plain %r" % (
              diff + 1, a[diff] if diff < len(a) else None,
              b[diff] if diff < len(b) else None))


def pages_with(rng, n, zero=0.2, groups=0.3, ngroups=20):
    """n pages: a share zero-filled, a share from a few groups of equal
    pages, the rest unique."""
    group = [rng.randbytes(PAGE) for _ in range(ngroups)]
    out = []
    for _ in range(n):
        x = rng.random()
        out.append(bytes(PAGE) if x < zero else rng.choice(group)
                   if x < zero + groups else rng.randbytes(PAGE))
    return out


def write(path, pages):
    with open(path, "wb") as f:
        f.write(b"".join(pages))
    return path


def series(name, n, snaps, rewrite, seed):
    """snaps snapshots of n pages, each with a share rewritten (new unique
    pages, or copies of other pages: merges broken and made)."""
    rng = random.Random(seed)
    pages = pages_with(rng, n)
    paths = [write(tmp("%s-0.raw" % name), pages)]
    for k in range(1, snaps):
        for i in rng.sample(range(n), int(n * rewrite)):
            pages[i] = rng.randbytes(PAGE) if rng.random() < 0.5 else \
                pages[rng.randrange(n)]
        paths.append(write(tmp("%s-%d.raw" % (name, k)), pages))
    return paths


ADVISE = [["--target=90%@1m"], ["--target=50%@10s", "--max-cpu=30"],
          ["--target=99%@10m", "--max-cpu=5"]]


@test("static")
def guest():
    """The fixture guest, one snapshot: the shared replay at every pace."""
    g = fixture("guest-b.elf.zst")
    same(["--series", g, "-r", "advise", "--target=90%@1m"], "guest, 90% in 1 min")
    same(["--series", g, "-r", "timeline", "--pages-to-scan=40000",
          "--sleep-ms=10"], "guest, timeline of 2000 scans", "ksmd_cpu_percent")


@test("static")
def structures():
    """Raw images of chosen duplicate structures, targets and settings."""
    rng = random.Random(35)
    shapes = {
        "pairs": [p for p in (rng.randbytes(PAGE) for _ in range(1500))
                  for _ in range(2)],
        "groups": pages_with(rng, 4000, zero=0, groups=0.6, ngroups=7),
        "zeros": pages_with(rng, 3000, zero=0.5, groups=0.1),
        "unique": [rng.randbytes(PAGE) for _ in range(2000)] + [bytes(PAGE)] * 2,
    }
    rng.shuffle(shapes["pairs"])
    for name, pages in shapes.items():
        path = write(tmp(name + ".raw"), pages)
        for t in ADVISE:
            same(["--series", path, "-r", "advise"] + t,
                 "%s, %s" % (name, " ".join(t)))
    path = tmp("groups.raw")
    for extra in (["--smart-scan=0"], ["-z"], ["--hz=100", "--page-cost=40us"],
                  ["--hz=0"], ["-m", "3"]):
        same(["--series", path, "-r", "advise", "--target=80%@2m"] + extra,
             "groups, %s" % " ".join(extra))
        same(["--series", path, "-r", "timeline", "--policy=advisor"] + extra,
             "groups, the advisor's timeline, %s" % " ".join(extra),
             "ksmd_cpu_percent")


@test("series")
def several_snapshots():
    """Series whose memory changes: the skip ahead within each snapshot's
    time, and the search's settings stopped at the target."""
    for name, n, snaps, rw, iv in (("s3", 3000, 3, 0.05, "60s"),
                                   ("s4", 2000, 4, 0.2, "30s")):
        paths = series(name, n, snaps, rw, len(name) + n)
        for t in ADVISE:
            same(["--series", "--interval=" + iv] + paths + ["-r", "advise"] + t,
                 "%s, %s" % (name, " ".join(t)))
        for extra in (["--pages-to-scan=%d" % n, "--sleep-ms=10"],
                      ["--policy=advisor"], ["--smart-scan=0"]):
            same(["--series", "--interval=" + iv] + paths +
                 ["-r", "timeline"] + extra, "%s timeline, %s" % (name, " ".join(extra)),
                 "ksmd_cpu_percent")
        same(["--series", "--interval=" + iv] + paths +
             ["-r", "policies", "--policy=fixed,advisor"], "%s policies" % name)


def reaches(base, pages, sleep, seconds, want):
    """Whether the plain replay at one fixed setting reaches @want pages
    saved (sharing and zero pages) at a full scan's end by @seconds."""
    r = run(base + ["-r", "timeline", "--pages-to-scan=%d" % pages,
                    "--sleep-ms=%d" % sleep, "-o", "csv"])
    rows = list(csv.DictReader(io.StringIO(r.out)))
    return any(float(x["seconds"]) <= seconds and
               int(x["pages_sharing"]) + int(x["ksm_zero_pages"]) >= max(want, 1)
               for x in rows)


@test("search")
def fewest_pages():
    """Each fixed row of -r advise is the fewest pages_to_scan that reaches
    the target at its sleep, by an exhaustive count up from one page on
    the plain replay's timelines (-r timeline at each setting: no search,
    no shortcut), and the next cheaper setting it names is one fewer
    (none below one page)."""
    cases = (([write(tmp("few.raw"), pages_with(random.Random(5), 3000))],
              "90%@1m", 60, 0.9),
             (series("few3", 2000, 3, 0.1, 9), "50%@30s", 30, 0.5),
             (series("few4", 1500, 4, 0.2, 11), "80%@2m", 120, 0.8))
    for paths, target, seconds, share in cases:
        base = ["--series", "--interval=30s", "--hz=250"] + paths
        rows = list(csv.DictReader(io.StringIO(run(
            base + ["-r", "advise", "--target=" + target, "-o", "csv"]).out)))
        tl = list(csv.DictReader(io.StringIO(run(base + ["-r", "timeline", "-o", "csv"]).out)))
        want = share * (int(tl[-1]["pages_sharing"]) + int(tl[-1]["ksm_zero_pages"]))
        fixed = [x for x in rows if x["policy"] == "fixed"]
        check(len(fixed) == 5, "%d snapshots, %s: five sleeps" % (len(paths), target),
              repr(rows[:2]))
        for x in fixed:
            sleep, got = int(x["sleep_ms"]), int(x["pages_to_scan"])
            fewest = next((p for p in range(1, 400)
                           if reaches(base, p, sleep, seconds, want)), None)
            cheaper = str(got - 1) if got > 1 else "nan"  # 0: none tried
            check(fewest == got and x["next_cheaper_tried"] == cheaper,
                  "%d snapshots, %s, sleep %d ms: advised %d pages, the fewest "
                  "that reach is %s" % (len(paths), target, sleep, got, fewest),
                  repr(x))


@test("series")
def write_rate():
    """Writes the snapshots cannot see: no shortcut, the same rows."""
    paths = series("w", 1500, 2, 0.05, 7)
    same(["--series"] + paths + ["--write-rate=0.001", "-r", "advise",
                                 "--target=50%@1m"], "write rate, advise")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-search-"))
