#!/usr/bin/python3
"""ksmfleet against hostile exports and options: counts that would
overflow, counts that are no counts (inf, nan, negative, fractions), lines
longer than the bound (also one of 64 MiB spanning two pieces of a plain
export), control characters in host names, names a spreadsheet would
evaluate, an empty --scheduler, and the line a defect is at in the second
64 MiB piece of a plain export.

Every export is written here; the oracle is the line the test put the
defect on, and the figures computed here in Python integers.
"""
import csv, io, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, check, eq, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
HEADER = "input,digest,pages,zero"
MAX_LINE = 16384          # docs/fleet.md's bound


def fleet(*args):
    return subprocess.run(FLEET + list(args), capture_output=True, text=True, timeout=600)


def digest(i):
    return "0x%032x" % (0x9e3779b97f4a7c15 * (i + 1) % 2**128)


def export(name, lines):
    path = tmp(name)
    with open(path, "w", newline="") as f:
        f.write("\r\n".join(lines) + "\r\n")
    return path


def one_line_error(r, path, line, what):
    """Exit 1 and exactly `ksmfleet: PATH: ..., at line LINE` on stderr."""
    err = r.stderr.strip().splitlines()
    want = r"ksmfleet: %s: .+, at line %d" % (re.escape(path), line)
    check(r.returncode == 1 and len(err) == 1 and re.fullmatch(want, err[0]) is not None,
          "%s: one line naming the file and line %d, exit 1" % (what, line),
          "exit %d, %r" % (r.returncode, r.stderr[-300:]))


@test("fleet-hostile")
def counts_that_overflow():
    """2^62 pages in each of two exports wrapped to a negative total: a count
    above 2^40 is refused at its line."""
    a = export("big-a.csv", [HEADER, "a,%s,%d,0" % (digest(0), 2**62)])
    b = export("big-b.csv", [HEADER, "b,%s,1,0" % digest(1), "b,%s,%d,0" % (digest(0), 2**62)])
    one_line_error(fleet("--workers=1", a, b), a, 2, "a count of 2^62")
    # 2^40 is a count, but 2049 of them pass the fleet's 2^51 pages: refused
    # in the export and at the row where the sum passes it.
    a = export("many-a.csv", [HEADER] + ["a,%s,%d,0" % (digest(i), 2**40) for i in range(1500)])
    b = export("many-b.csv", [HEADER] + ["b,%s,%d,0" % (digest(i), 2**40) for i in range(1000)])
    one_line_error(fleet("--workers=1", a, b), b, 2049 - 1500 + 1, "pages past 2^51")
    # 2048 of them are 2^51 pages exactly: totals in Python's integers.
    b = export("many-b2.csv", [HEADER] + ["b,%s,%d,0" % (digest(i), 2**40) for i in range(548)])
    r = fleet("--workers=1", "--csv", a, b)
    got = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    if check(r.returncode == 0 and got, "2^51 pages: exit 0", r.stderr[-300:]):
        pages = 2**40 * 2048
        sharing = 548 * (2 * 2**40 - (2 * 2**40 // 256)) + 952 * (2**40 - 2**40 // 256)
        eq((int(got[0]["pages"]), int(got[0]["pages_sharing"]), int(got[0]["saved_bytes"])),
           (pages, sharing, sharing * PAGE), "2^51 pages: the exact figures")


@test("fleet-hostile")
def counts_that_are_not():
    for bad in ("inf", "nan", "-1", "-inf", "1.5", "1e3", "0x10", "", " 3"):
        path = export("count.csv", [HEADER, "h,%s,1,0" % digest(0), "h,%s,2,0" % digest(1),
                                    "h,%s,%s,0" % (digest(2), bad)])
        one_line_error(fleet("--workers=1", path), path, 4, "pages %r" % bad)
    for bad in ("2", "-1", "nan"):
        path = export("zero.csv", [HEADER, "h,%s,1,%s" % (digest(0), bad)])
        one_line_error(fleet("--workers=1", path), path, 2, "zero %r" % bad)
    path = export("dist.csv", ["input,digest,pages,distinct_pages",
                               "h,%s,1,inf" % digest(0)])
    one_line_error(fleet("--workers=1", "--report=pairs", path), path, 2, "distinct_pages inf")


@test("fleet-hostile")
def long_lines():
    name = "h" * (MAX_LINE + 1)
    path = export("long.csv", [HEADER, "h,%s,1,0" % digest(0), "%s,%s,1,0" % (name, digest(1))])
    one_line_error(fleet("--workers=1", path), path, 3, "a line of %d bytes" % (MAX_LINE + 20))
    ok = export("longest.csv", [HEADER, "%s,%s,1,0" % ("h" * (MAX_LINE - 40), digest(0))])
    r = fleet("--workers=1", "--csv", ok)
    check(r.returncode == 0, "a line within the bound is read", r.stderr[-200:])
    # One line of 64 MiB and more, across the two 64 MiB pieces of the file.
    big = tmp("huge.csv")
    with open(big, "wb") as f:
        f.write(HEADER.encode() + b"\r\nh,%s,1,0\r\n" % digest(0).encode())
        f.write(b"x" * (65 << 20) + b",%s,1,0\r\n" % digest(1).encode())
        f.write(b"h,%s,1,0\r\n" % digest(2).encode())
    one_line_error(fleet("--workers=1", big), big, 3, "a line of 65 MiB")
    path = export("longhead.csv", ["input,digest,pages,zero" + "," * MAX_LINE])
    one_line_error(fleet("--workers=1", path), path, 1, "a header past the bound")


@test("fleet-hostile")
def line_in_second_piece():
    """A defect in the second 64 MiB piece of a plain export: its line."""
    n = (70 << 20) // 47
    lines = [HEADER] + ["host-%s,%s,1,0" % ("a" if i % 2 else "b", digest(i)) for i in range(n)]
    lines[n - 5] = "host-b,%s,nan,0" % digest(n)
    path = export("second.csv", lines)
    check(os.path.getsize(path) > 64 << 20, "the export is more than 64 MiB")
    one_line_error(fleet("--workers=2", path), path, n - 4, "nan in the second piece")


def names_fleet(names):
    return [export("names%d.csv" % i, [HEADER, '"%s",%s,2,0' % (n.replace('"', '""'), digest(0))])
            for i, n in enumerate(names)]


@test("fleet-hostile")
def names_shown_safely():
    names = ["evil\x1b[31mred\x07", "=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\tTAB",
             "\rCR", "plain", "del\x7fc1\x9b"]
    shown = [n.translate({c: "?" for c in list(range(32)) + list(range(0x7f, 0xa0))})
             for n in names]
    paths = names_fleet(names)
    r = fleet("--workers=1", "--csv", "--report=hosts", *paths)
    got = [x["host"] for x in csv.DictReader(io.StringIO(r.stdout, newline=""))]
    exp = [("'" if n[0] in "=+-@\t\r" else "") + s for n, s in zip(names, shown)]
    eq(got, exp, "CSV: control characters as '?', formulas after a single quote")
    check(not re.search(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]", r.stdout),
          "CSV: no control character but the line ends")
    r = fleet("--workers=1", "--report=partners", *paths)
    check(r.returncode == 0 and not re.search(r"[\x00-\x09\x0b-\x0c\x0e-\x1f\x7f-\x9f]", r.stdout),
          "table: no control character", repr(r.stdout[:200]))
    check("evil?[31mred?" in r.stdout and "=HYPERLINK" in r.stdout and "'=" not in r.stdout,
          "table: names with '?', without the quote", r.stdout[:300])


@test("fleet-hostile")
def empty_scheduler():
    path = export("s.csv", [HEADER, "h,%s,1,0" % digest(0)])
    for arg in ("--scheduler=", "--scheduler= "):
        r = fleet(arg, path)
        err = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(err) == 1 and err[0].startswith("ksmfleet: ")
              and not r.stdout, "%r: usage error, one line, exit 2" % arg,
              "exit %d, %r" % (r.returncode, r.stderr[-300:]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-hostile-"))
