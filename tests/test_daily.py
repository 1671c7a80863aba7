#!/usr/bin/python3
"""Daily use: what gets in an operator's way, each item against an oracle.

- Processes that may not be read: run as nobody, --all-processes and -P
  meet root processes the test starts; one warning line counts them (at
  least as many as the test started, and no more than /proc has processes),
  none is named on a line of its own, -q keeps that line (without it the
  rows read would pass for the whole host), and the exit status stays 0.
- Names in tables: cut in the middle, never losing what tells two names
  apart: inputs under one long folder differing only in their file name,
  labels that differ only at their start or only at their end, and --group
  rows whose kind ("group:") is kept; every shortened name is a start of the
  name, "…" and an end of it (ksmtest.shortened), within its column, and no
  two rows look alike.
- -r sketch and -r contents: the header's right-aligned columns end where
  the rows' end (display columns), for short, long, UTF-8 and
  standard-input names.
- HZ: every table of a series (summary, timeline, policies, advise) ends
  with a note naming the HZ the replay used and where it came from; the
  kernel's HZ is read here from its configuration (Python's gzip on
  /proc/config.gz, or /boot/config-RELEASE), and through KSMSCAN_HOST_ROOT
  a tree with a configuration of HZ=300, and one with none; --hz=100 and
  --hz=0 are named as given; CSV carries no note.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, Skip, check, eq, fixture, run, run_suite, shortened, test, tmp  # noqa: E402

# Runs from other folders (names without one) need the binary's full path.
EXE = [os.path.abspath(KSMSCAN[0]) if os.sep in KSMSCAN[0] else KSMSCAN[0]] + KSMSCAN[1:]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
COUNTED = re.compile(r"ksmscan: (\d+) processes could not be read "
                     r"\(permission denied\): run as root$")


def cols(s):
    """The columns a terminal gives @s."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in s)


def sleepers(n, name):
    """n root processes named @name (sleep under another comm)."""
    link = tmp(name)
    if not os.path.exists(link):
        os.symlink(shutil.which("sleep"), link)
    return [subprocess.Popen([link, "300"]) for _ in range(n)]


def end(procs):
    for p in procs:
        p.kill()
        p.wait()


@test("unreadable")
def unreadable_counted_in_one_line():
    if os.geteuid() != 0:
        raise Skip("needs root to start processes nobody may not read")
    tag = "kdu%d" % os.getpid()
    kids = sleepers(5, tag)
    try:
        time.sleep(0.2)
        f = tmp("one.raw")
        with open(f, "wb") as out:
            out.write(os.urandom(4096))
        os.chmod(os.path.dirname(f), 0o755)
        os.chmod(f, 0o644)
        nprocs = len([d for d in os.listdir("/proc") if d.isdigit()])
        for args, least in ((["--all-processes"], 5), (["-P", "^%s$" % tag], 5)):
            r = run_as_nobody(args + [f, "--csv"])
            lines = r.err.splitlines()
            said = [l for l in lines if "could not be read" in l]
            m = COUNTED.match(said[0]) if len(said) == 1 else None
            what = " ".join(args[:1])
            check(m and least <= int(m.group(1)) <= nprocs,
                  "%s as nobody: one line counts the unreadable processes "
                  "(%d of ours, %d in /proc)" % (what, least, nprocs), r.err[-500:])
            eq([l for l in lines if re.search(r"pid:\d+ \(", l)], [],
               "%s: no line names a process of its own" % what)
            eq(r.rc, 0, "%s: unreadable processes are no error" % what)
            q = run_as_nobody(["-q"] + args + [f, "--csv"])
            kept = [l for l in q.err.splitlines() if "could not be read" in l]
            m = COUNTED.match(kept[0]) if len(kept) == 1 else None
            check(m and least <= int(m.group(1)) <= nprocs,
                  "%s -q as nobody: the one line counting the unreadable "
                  "processes is kept" % what, q.err[-500:])
            eq(q.rc, 0, "%s -q: exit status 0" % what)
    finally:
        end(kids)


def run_as_nobody(args):
    r = subprocess.run(NOBODY + KSMSCAN + args, capture_output=True, text=True, timeout=300)
    r.err = r.stderr
    r.rc = r.returncode
    return r


def name_column(out):
    """The first column of a table's rows (names hold no two spaces)."""
    return [l.split("  ")[0] for l in out.splitlines()[1:] if l and not l.startswith(" ")
            and "  " in l]


@test("names")
def names_cut_in_the_middle():
    base = tmp("a-rather-long-folder-name-for-the-memory-dumps/of-host-0042")
    os.makedirs(base)
    src = fixture("vectors.img")
    paths = [os.path.join(base, n) for n in ("vm-a.img", "vm-b.img")]
    # Names without a folder, differing at the end only, then the start only.
    os.chmod(tmp(""), 0o755)
    label_dir = tmp("labels")
    os.makedirs(label_dir)
    labels = ["advisor 3600s 10% with a rather long label.img",
              "advisor 3600s 10% with a rather long label2.img",
              "ksmtuned 3600s 10% with a rather long label.img"]
    for p in paths + [os.path.join(label_dir, l) for l in labels]:
        shutil.copy(src, p)
    r = run(paths)
    rows = name_column(r.out)[:2]
    check(len(rows) == 2 and all(shortened(x, p) for x, p in zip(rows, paths)) and
          all(x.endswith("/" + os.path.basename(p)) for x, p in zip(rows, paths)),
          "paths keep their start and their file name whole", repr(rows))
    r = subprocess.run(EXE + labels, capture_output=True, text=True, cwd=label_dir)
    rows = name_column(r.stdout)[:3]
    check(len(rows) == 3 and all(shortened(x, l) for x, l in zip(rows, labels)),
          "labels are a start, '…' and an end of themselves", repr(rows))
    eq(len(set(rows)), 3, "labels differing at the start or at the end stay apart")
    check(all("\u2026" in x and cols(x) <= 30 for x in rows), "within 30 columns", repr(rows))
    groups = ["a-long-trust-domain-name-of-tenant-%d" % i for i in (1, 2)]
    r = run(["--group=%s=%s" % (g, p) for g, p in zip(groups, paths)] + paths)
    got = [x for x in name_column(r.out) if x.startswith("group:")]
    check(len(got) == 2 and len(set(got)) == 2 and
          all(shortened(x, "group:" + g) for x, g in zip(got, groups)),
          "--group rows keep their kind and stay apart", repr(got))


def right_edges(line, n):
    """The display columns at which the last @n fields of @line end."""
    out, at = [], 0
    for m in re.finditer(r"\S+", line):
        at_end = cols(line[:m.end()])
        out.append(at_end)
    return out[-n:]


@test("sketch")
def sketch_header_aligned():
    d = tmp("sketch")
    os.makedirs(d)
    src = fixture("vectors.img")
    names = ["b", "été-vm.img", "a-long-name-of-a-virtual-machine-image-of-host-7.img"]
    for n in names:
        shutil.copy(src, os.path.join(d, n))
    cases = [[n] for n in names] + [names]
    for report in ("sketch", "contents"):
        for args in cases:
            for extra in ([], ["-l"]):
                r = subprocess.run(EXE + ["-r", report, "--sketch-size=3"] + extra + args,
                                   capture_output=True, text=True, cwd=d)
                # the table, up to the notes under it (after an empty line)
                lines = r.stdout.split("\n\n")[0].splitlines()
                head = right_edges(lines[0], 3) if lines else []
                bad = [l for l in lines[1:] if right_edges(l, 3) != head]
                check(lines and lines[0].startswith("input") and not bad,
                      "-r %s %s%s: the header's columns end where the rows' do"
                      % (report, " ".join(extra), args), repr((lines[:1], bad[:2])))
        with open(src, "rb") as f:
            data = f.read()
        r = subprocess.run(KSMSCAN + ["-r", report, "--label=from-a-pipe", "-"], input=data,
                           capture_output=True)
        lines = r.stdout.decode().split("\n\n")[0].splitlines()
        head = right_edges(lines[0], 3) if lines else []
        check(lines and all(right_edges(l, 3) == head for l in lines[1:]),
              "-r %s of standard input under --label: aligned" % report, repr(lines[:2]))


def kernel_hz_here():
    """CONFIG_HZ of the running kernel, read here, or None."""
    text = None
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        try:
            with open("/boot/config-" + os.uname().release) as f:
                text = f.read()
        except OSError:
            return None
    m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
    return int(m.group(1)) if m else None


SERIES_REPORTS = (["-r", "summary"], ["-r", "timeline"], ["-r", "policies"],
                  ["-r", "advise", "--target=90%@1h"])


def series(args, env=None):
    g = fixture("vectors.img")
    full = KSMSCAN + ["--series", "--interval=60s"] + args + [g, g]
    return subprocess.run(full, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))


def hz_lines(out):
    return [l for l in out.splitlines() if l.startswith("ksmd's wake-ups")]


@test("hz")
def hz_named_under_every_timing():
    hz = kernel_hz_here()
    if hz is None:
        raise Skip("this kernel's configuration cannot be read here")
    want = "ksmd's wake-ups at HZ=%d (this kernel's; --hz to change)." % hz
    for rep in SERIES_REPORTS:
        r = series(rep)
        eq(hz_lines(r.stdout), [want], "%s: the note names this kernel's HZ" % rep[1])
        r = series(rep + ["--hz=100"])
        eq(hz_lines(r.stdout), ["ksmd's wake-ups at HZ=100 (--hz; this kernel's is %d)." % hz],
           "%s --hz=100: named as given, beside the kernel's" % rep[1])
        r = series(rep + ["--csv"])
        eq(hz_lines(r.stdout), [], "%s --csv: no note" % rep[1])
    r = series(["-r", "timeline", "--hz=0"])
    eq(hz_lines(r.stdout), ["ksmd's wake-ups every sleep_millisecs exactly (--hz=0, no jiffies)."],
       "--hz=0: no jiffies")


@test("hz")
def hz_of_a_tree():
    root = tmp("root-hz300")
    os.makedirs(os.path.join(root, "proc"))
    with gzip.open(os.path.join(root, "proc", "config.gz"), "wt") as f:
        f.write("CONFIG_HZ_300=y\nCONFIG_HZ=300\n")
    r = series(["-r", "timeline"], {"KSMSCAN_HOST_ROOT": root})
    eq(hz_lines(r.stdout), ["ksmd's wake-ups at HZ=300 (this kernel's; --hz to change)."],
       "a kernel configured with HZ=300: named")
    check("at HZ=300" in r.stdout.replace("\n  ", " "),
          "and the timeline's sentence replays at HZ=300", r.stdout[-400:])
    empty = tmp("root-none")
    os.makedirs(empty)
    r = series(["-r", "timeline"], {"KSMSCAN_HOST_ROOT": empty})
    eq(hz_lines(r.stdout),
       ["ksmd's wake-ups at HZ=250 (this kernel's HZ could not be read; --hz to set it)."],
       "no configuration and no timer_list: the default, said to be one")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-daily-"))
