#!/usr/bin/python3
"""The documentation matches the tool.

- Every long option `ksmscan --help` lists (its option lines and its usage
  lines, `--[no-]progress` as both) is named in docs/usage.md (as `--NAME`,
  not a longer option that starts so) and in the man page (`Fl \\-NAME`);
  every short option of --help is in both too.
- Every report: the names of report/reports.c's table and the list of
  `-r` in --help are the same set, and each is a row of docs/usage.md's
  reports table and a `Cm NAME` of the man page.
- Every output format `-o` lists in --help is in docs/usage.md and the man
  page.
- The checks can fail: each is run once on the texts with one name taken
  out, and must name exactly that one.
- docs/fleet.md's cost of a contents export ("about N bytes of zstd a
  row") is what zstd (python3-zstandard at the zstd command's default
  level, 3) makes of `ksmscan -r contents --csv` of 5,000 random pages
  (every row its own digest, as most rows of a real host): within 2 bytes
  (the page said 8 where 16.9 to 18.4 were measured).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, ROOT, check, eq, run, run_suite, test, tmp  # noqa: E402


def read(*path):
    with open(os.path.join(ROOT, *path)) as f:
        return f.read()


def help_text():
    r = subprocess.run(KSMSCAN + ["--help"], capture_output=True, text=True)
    return r.stdout


def help_long_options(text):
    """The long options --help names, in its usage lines and option lines."""
    opts = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", text))
    for m in re.finditer(r"--\[no-\]([a-z][a-z0-9-]*)", text):
        opts |= {m.group(1), "no-" + m.group(1)}
    return sorted(opts)


def help_short_options(text):
    """The short options of --help's option lines ("  -a, --algo=...")."""
    return sorted(set(re.findall(r"^  -([a-zA-Z]), --", text, re.M)))


def help_list(text, option):
    """The names listed after @option's line in --help, up to "(default"."""
    m = re.search(r"^  %s\S*\s+(.*?)(?:\(default|^  -)" % re.escape(option), text, re.M | re.S)
    return sorted(set(re.findall(r"\b[a-z][a-z0-9-]*\b", m.group(1)))) if m else []


def table_reports():
    """The reports of report/reports.c's table."""
    return sorted(set(re.findall(r'\{ "([a-z]+)", [a-z_]+_create,', read("report", "reports.c"))))


def man_text():
    return read("man", "ksmscan.1").replace("\\-", "-")


def usage_missing(names, doc):
    return [n for n in names if not re.search(r"--%s(?![a-z0-9-])" % re.escape(n), doc)]


def man_missing(names, man):
    return [n for n in names if not re.search(r"Fl --?%s(?![a-z0-9-])" % re.escape(n), man)]


def short_missing(letters, doc, man):
    return [c for c in letters if "`-%s" % c not in doc or not re.search(r"Fl %s\b" % c, man)]


def report_missing(names, doc, man):
    return [n for n in names if "| `%s` |" % n not in doc or
            not re.search(r"Cm %s\b" % re.escape(n), man)]


def format_missing(names, doc, man):
    return [n for n in names if "`%s`" % n not in doc or
            not re.search(r"Cm %s\b" % re.escape(n), man)]


@test("options")
def every_option_documented():
    text = help_text()
    doc, man = read("docs", "usage.md"), man_text()
    longs = help_long_options(text)
    check(len(longs) >= 40 and "all-processes" in longs and "no-progress" in longs,
          "--help's long options are found", repr(longs))
    eq(usage_missing(longs, doc), [], "docs/usage.md names every long option of --help")
    eq(man_missing(longs, man), [], "the man page names every long option of --help")
    shorts = help_short_options(text)
    check(len(shorts) >= 12, "--help's short options are found", repr(shorts))
    eq(short_missing(shorts, doc, man), [], "docs/usage.md and the man page name every "
       "short option of --help")
    # The checks can fail: one option taken out of each text is named.
    gone = "max-cpu"
    eq(usage_missing(longs, re.sub(r"--max-cpu(?![a-z0-9-])", "--", doc)), [gone],
       "without --max-cpu (but with --advisor-max-cpu), docs/usage.md's check names it")
    eq(man_missing(longs, re.sub(r"Fl --?max-cpu(?![a-z0-9-])", "Fl", man)), [gone],
       "and the man page's check names it")


@test("reports")
def every_report_documented():
    text = help_text()
    doc, man = read("docs", "usage.md"), man_text()
    table, listed = table_reports(), help_list(text, "-r, --report")
    check(len(table) >= 15 and "summary" in table, "report/reports.c's table is read", repr(table))
    eq(listed, table, "--help's -r list is report/reports.c's table")
    eq(report_missing(table, doc, man), [], "every report is a row of docs/usage.md's "
       "reports table and in the man page")
    eq(report_missing(table, doc.replace("| `numa` |", "| numa |"), man), ["numa"],
       "the check can fail: a report taken out of the table is named")


@test("formats")
def every_output_format_documented():
    text = help_text()
    doc, man = read("docs", "usage.md"), man_text()
    fmts = [f for f in help_list(text, "-o, --output") if f != "or"]
    check({"table", "csv", "json", "openmetrics"} <= set(fmts), "--help's -o formats are read",
          repr(fmts))
    eq(format_missing(fmts, doc, man), [], "docs/usage.md and the man page name every -o format")
    eq(format_missing(fmts, doc.replace("`openmetrics`", "openmetrics"), man), ["openmetrics"],
       "the check can fail: a format taken out is named")


@test("figures")
def fleet_export_cost_documented():
    import zstandard
    m = re.search(r"about (\d+(?:\.\d+)?) bytes of zstd a\s+row", read("docs", "fleet.md"))
    if not check(m, "docs/fleet.md states the zstd bytes a contents row costs"):
        return
    path = tmp("random.img")
    with open(path, "wb") as f:
        f.write(os.urandom(5000 * PAGE))
    r = run(["-q", "-r", "contents", "--csv", "--host=h1", path])
    rows = r.out.count("\n") - 1
    eq((r.rc, rows), (0, 5000), "ksmscan -r contents: one row per distinct page")
    got = len(zstandard.ZstdCompressor(level=3).compress(r.out.encode())) / max(rows, 1)
    check(abs(got - float(m.group(1))) <= 2, "docs/fleet.md's %s bytes of zstd a row "
          "within 2 of the measured" % m.group(1), "%.1f bytes a row" % got)


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-docs-"))
