#!/usr/bin/python3
"""Every table for people fits 80 columns.

Runs every report that --help lists (its -r list, read here, so a new
report is checked without editing this file), on the fixtures under long
names, with failed inputs among them, a --group, a --series of snapshots
built here, --bench, -a help, -V and --help, and fails on any line of
standard output wider than 80 columns, counted as a terminal shows them
(unicodedata: East Asian wide and full-width characters take 2 columns,
combining marks none; "…" takes 1).

What fitting may do is checked too, against the CSV of the same run (the
fixed column names, not the table's): a column left out for people is named
in a note, and -l shows every CSV column in the table's header; a shortened
name is "…" and the end of the name.
"""
import csv
import io
import os
import random
import re
import shutil
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, check, eq, fixture, run, run_suite, test, tmp  # noqa: E402

WIDTH = 80


def columns(line):
    """The columns a terminal gives @line."""
    w = 0
    for ch in line:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def fits(r, what):
    """Every line of r's standard output fits WIDTH columns."""
    wide = [(columns(l), l) for l in r.out.splitlines() if columns(l) > WIDTH]
    check(r.rc in (0, 1) and r.out.strip(), "%s: ran and printed (exit %r)" % (what, r.rc),
          r.err[-300:])
    check(not wide, "%s: every line within %d columns" % (what, WIDTH),
          "%d wider, widest %d: %r" % (len(wide), max(wide)[0], max(wide)[1]) if wide else "")


def reports():
    """The names --help lists for -r."""
    text = run(["--help"]).out
    block = re.search(r"^  -r, --report=LIST\s+(.*?)\(default", text, re.M | re.S).group(1)
    return [n for n in re.split(r"[,\s]+", block) if n]


def long_copy(name):
    """The fixture under a long path: names must be shortened to fit."""
    d = tmp("a-rather-long-folder-name-for-memory-dumps-of-the-fleet/host-0042")
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, "long-name-of-a-virtual-machine-" + name)
    if not os.path.exists(dst):
        shutil.copy(fixture(name), dst)
    return dst


def snapshots():
    """Three raw snapshots of one memory, some pages changed between them."""
    rng = random.Random(23)
    base = [rng.randbytes(PAGE) for _ in range(48)] + [bytes(PAGE)] * 8
    base += [base[0]] * 8
    paths = []
    for i in range(3):
        pages = list(base)
        for j in rng.sample(range(len(pages)), 6 * i):
            pages[j] = rng.randbytes(PAGE)
        p = tmp("snapshot-of-the-long-running-service-at-hour-%02d.img" % i)
        with open(p, "wb") as f:
            f.write(b"".join(pages))
        paths.append(p)
    return paths


def inputs():
    return [long_copy("guest-b.elf.zst"), long_copy("vectors.img"), fixture("vectors.img")]


@test("reports")
def every_report_fits():
    names = reports()
    check(len(names) >= 12 and "summary" in names and "histogram" in names,
          "--help lists the reports", repr(names))
    ins = inputs()
    series = []
    for name in names:
        r = run(["-r", name, "-c", "lzo-rle"] + ins)
        if r.rc == 2 and "trust domains" in r.err:
            # exposure and mitigations: each input its own domain
            groups = ["--group=d%d=%s" % (k, x) for k, x in enumerate(ins)]
            r = run(["-r", name] + groups + ins)
        if r.rc == 2 and ("--series" in r.err or "--target" in r.err):
            series.append(name)     # series_fit() runs it
            continue
        fits(r, "-r %s" % name)
    check(len(series) <= 5, "only the series' reports need --series", repr(series))
    some = [n for n in names if n not in series]
    groups = ["--group=d%d=%s" % (k, x) for k, x in enumerate(ins)]
    fits(run(["-r", ",".join(some), "-c", "lzo-rle"] + groups + ins), "every report at once")


@test("reports")
def failed_rows_and_groups_fit():
    ins = inputs()
    missing = tmp("a-folder-that-does-not-exist-on-this-host/and-a-memory-dump-in-it.img")
    notdump = tmp("a-file-that-is-not-a-memory-dump-but-a-short-text.txt")
    with open(notdump, "w") as f:
        f.write("hello\n")
    empty = tmp("an-empty-file-where-a-long-memory-dump-should-have-been.img")
    open(empty, "w").close()
    fits(run(ins + [missing, notdump, empty]), "summary with failed inputs")
    fits(run(["-r", "summary,histogram,top,regions"] + [missing, notdump, ins[2]]),
         "failed inputs and one read")
    fits(run(["--group=a-trust-group-with-a-long-name=%s,%s" % (ins[0], ins[1])] + ins),
         "summary with a --group")


def cjk_inputs():
    """The fixture under names of wide characters (2 columns each), one of
    them long enough to be shortened, and one with a combining mark."""
    d = tmp("虚拟机内存")
    os.makedirs(d, exist_ok=True)
    names = ["生产数据库虚拟机的内存映像文件第一号生产数据库虚拟机的内存映像.img",
             "한국어가상머신.img", "cafe\u0301-ｆｕｌｌ.img"]
    out = []
    for n in names:
        dst = os.path.join(d, n)
        if not os.path.exists(dst):
            shutil.copy(fixture("vectors.img"), dst)
        out.append(dst)
    return out


@test("reports")
def wide_names_fit_and_align():
    """Names of East Asian wide characters: every line within 80 columns as
    a terminal shows them, and the columns after the name start at one
    column in every row (a name is padded by its display width)."""
    ins = cjk_inputs()
    for rep in ("summary", "top", "histogram", "regions"):
        r = run(["-r", rep] + ins)
        fits(r, "-r %s of wide names" % rep)
        table = r.out.split("\n\n")[0].splitlines()
        rows = [l for l in table if ".img" in l and not l.startswith(" ")]
        # the display column where the field after the name ends (numbers
        # are right-aligned, so it is one column for every row)
        ends = set()
        for l in rows:
            m = re.match(r"(\S.*?)\s{2,}(\S+)", l)
            ends.add(columns(l[:m.end(2)]) if m else -1)
        check(len(rows) >= 3 and len(ends) == 1,
              "-r %s: the column after a wide name ends at one place" % rep,
              "%r %r" % (sorted(ends), rows))


@test("series")
def series_fit():
    snaps = snapshots()
    for rep in ("summary", "timeline", "volatility", "policies",
                "timeline,volatility,summary"):
        fits(run(["--series", "--interval=10s", "-r", rep] + snaps), "--series -r %s" % rep)
    fits(run(["--series", "--interval=10s", "-r", "policies,timeline",
              "--policy=ksmtuned,advisor,fixed", "--host-memory=64M",
              "--host-used=60M"] + snaps), "--series -r policies with three policies")
    fits(run(["--series", "--interval=10s", "-r", "advise", "--target=90%@1m",
              "--max-cpu=1"] + snaps), "--series -r advise")
    fits(run(["--series", "--interval=10s", "-r", "advise", "--target=90%@1ms"]
             + snaps), "--series -r advise, unreachable")
    fits(run(["--series", "--interval=10s", "--svg=" + tmp("s.svg")] + snaps), "--series --svg")


@test("other tables")
def bench_help_version_fit():
    fits(run(["--bench", "-a", "xxhash,crc32c"]), "--bench")
    fits(run(["-a", "help"]), "-a help")
    fits(run(["-V"]), "-V")
    fits(run(["--help"]), "--help")


@test("fitting")
def left_out_columns_are_named_and_long_shows_them():
    ins = inputs()
    for name in reports():
        if name == "pages":
            continue
        args = ["-r", name, "-c", "lzo-rle"] + ins
        c = run(args + ["--csv"])
        if not c.out.strip():
            continue
        cols = next(csv.reader(io.StringIO(c.out)))
        t = run(args)
        long = run(args + ["-l"])
        head = next((l for l in long.out.splitlines() if l.split()[:1] == [cols[0]]), "")
        eq([x for x in cols if x not in head.split()], [],
           "-r %s -l: the table's header has every CSV column" % name)
        shown = next((l for l in t.out.splitlines() if l.split()[:1] == [cols[0]]), "")
        hidden = [x for x in cols if x not in shown.split()]
        if not shown or any(x not in cols for x in shown.split()):
            continue        # a table for people with its own short names
        note = re.search(r"Left out to fit 80 columns \(-l shows them\):([^.]*?)(\n\n|\n[A-Z]|$)",
                         t.out, re.S)
        named = note.group(1).split() if note else []
        eq(named, hidden, "-r %s: the note names the columns left out" % name)
    r = run(["-r", "top", ins[0]])
    rows = [l.split()[0] for l in r.out.splitlines()[1:] if l.strip()]
    base = os.path.basename(ins[0])
    check(rows and all(x.startswith("\u2026") and ins[0].endswith(x[1:]) for x in rows),
          "a long name is shortened to '…' and its end", repr(rows[:2]))
    check(rows and base.endswith(rows[0][1:]) or base in rows[0],
          "the file's own name is what is kept", repr(rows[:1]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-widths-"))
