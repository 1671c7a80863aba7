#!/usr/bin/python3
"""The command line's contract: usage errors, --help, --version, spellings.

    /usr/bin/python3 tests/test_usage.py [NAME-SUBSTRING...]

Unknown option, algorithm, report, format or output, `--csv` or `-o csv`
with two reports, a missing option argument (the message names the option):
exit 2 with a `ksmscan: ` line, "Try 'ksmscan --help'." and an empty
standard output; `-a help`, `-h/--help`, `-V/--version`; long spellings,
`-f raw/auto`, `-o json`, `--json` with two reports, `--`.
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (ALGOS, BITS, PAGE, STATE, SUMMARY_COLS, ZERO, check, eq,
                     hexdigest, parse_csv, run_suite, test)  # noqa: E402
from summary_helpers import (check_summary, check_usage_error, expected_summary,
                             parse_json, rng_for, run, run_ok, scan_csv, scan_json,
                             write_image)  # noqa: E402


# ---------------------------------------------------------------------------
# Group 7: usage
# ---------------------------------------------------------------------------
@test("7 usage")
def usage_errors():
    path = write_image("usage.img", [ZERO, b"\x02" * PAGE])
    cases = [
        (["--no-such-option", path], "unknown long option"),
        (["-Y", path], "unknown short option"),
        (["-a", "md5", path], "unknown algorithm"),
        (["-a", "xxhash,md5", path], "unknown algorithm in a list"),
        (["--algo=", path], "empty algorithm list"),
        (["-r", "nosuch", path], "unknown report"),
        (["-r", "summary,nosuch", path], "unknown report in a list"),
        (["-o", "xml", path], "unknown output format"),
        (["--output=yaml", path], "unknown --output"),
        (["-f", "qcow2", path], "unknown input format"),
        (["--csv", "-r", "summary,pages", path], "--csv with two reports"),
        (["-o", "csv", "-r", "pages,summary", path], "-o csv with two reports"),
    ]
    for args, what in cases:
        check_usage_error(run(args), what)
    # a missing option argument: the message names the option
    for opt in ("-a", "-f", "-m", "-o", "-r", "--algo", "--report"):
        r = run([opt])
        check_usage_error(r, "%s without its argument" % opt)
        first = ([l for l in r.err.splitlines() if l.startswith("ksmscan: ")] or [""])[0]
        name = opt.lstrip("-")
        named = re.search(r"(%s\b|['\"`]%s['\"`]|-- ?%s\b)" % (re.escape(opt), name, name), first)
        check("(null)" not in first and named,
              "%s without its argument: the error names the option" % opt, repr(first))


@test("7 usage")
def option_typos_get_a_guess():
    """An unknown long option gets the long option it is likely a typo of,
    as -r sumary gets summary (an edit distance of at most 2, less than half
    the name): one line, then the pointer to --help; no guess for a name
    near none."""
    path = write_image("typo.img", [ZERO])
    for typed, meant in (("--tops=5", "top"), ("--tops", "top"),
                         ("--algos=xxhash", "algo"), ("--qiuet", "quiet"),
                         ("--jsn", "json"), ("--intervall=1s", "interval"),
                         ("--no-progess", "no-progress"),
                         ("--sketch-szie=3", "sketch-size"),
                         ("--advisor-max-cpus=5", "advisor-max-cpu")):
        r = run([typed, path])
        check_usage_error(r, typed)
        first = (r.err.splitlines() or [""])[0]
        eq(first, "ksmscan: unknown option '%s' (did you mean '--%s'?)" % (typed, meant),
           "%s: the guess" % typed)
    for typed in ("--no-such-option", "--x", "--zzzzzz=1"):
        r = run([typed, path])
        check_usage_error(r, typed)
        eq((r.err.splitlines() or [""])[0], "ksmscan: unknown option '%s'" % typed,
           "%s: no guess" % typed)


@test("7 usage")
def help_and_version():
    r = run(["-a", "help"])
    eq(r.rc, 0, "-a help: exit status 0")
    lines = [l.split() for l in r.out.splitlines() if l.strip()]
    for algo in ALGOS:
        ln = [l for l in lines if l and l[0] == algo]
        if check(ln, "-a help lists %s at the start of a line" % algo, repr(r.out[:500])):
            l = ln[0]
            check(len(l) >= 3 and re.match(r"%d\b" % BITS[algo], l[1]),
                  "-a help: %s then its bits (%d) then a description" % (algo, BITS[algo]), repr(l))
    for opt in ("--help", "-h"):
        r = run([opt])
        eq(r.rc, 0, "%s: exit status 0" % opt)
        check("usage: ksmscan" in r.out, "%s: stdout contains 'usage: ksmscan'" % opt, repr(r.out[:200]))
    for opt in ("--version", "-V"):
        r = run([opt])
        eq(r.rc, 0, "%s: exit status 0" % opt)
        check(r.out.strip() != "", "%s prints something on stdout" % opt)


@test("7 usage")
def accepted_spellings():
    rng = rng_for("spell")
    pages = [rng.randbytes(PAGE), ZERO, ZERO]
    path = write_image("spell.img", pages)
    exp = expected_summary(pages, "xxhash")
    exp["input"] = path
    base = scan_csv([path], "--csv")
    for args, what in ((["-f", "raw", path], "-f raw"), (["-f", "auto", path], "-f auto"),
                       (["--format=raw", path], "--format=raw"),
                       (["-o", "csv", path], "-o csv"), (["--output=csv", path], "--output=csv"),
                       (["-r", "summary", path], "-r summary"), (["-q", path], "-q")):
        opts = [] if args[0] in ("-o", "--output=csv") else ["--csv"]
        r = run_ok(opts + args, what)
        if r is None:
            continue
        rows = parse_csv(r, what, SUMMARY_COLS)
        if rows and eq(len(rows), 1, what + ": one row"):
            check_summary(rows[0], exp, what)
    for args, what in ((["-o", "json", path], "-o json"), (["--json", path], "--json")):
        r = run_ok(args, what)
        doc = parse_json(r, what) if r else None
        if doc is not None:
            try:
                check_summary(doc["summary"][0], exp, what)
            except (KeyError, IndexError, TypeError) as e:
                check(False, what + ": summary[0] present", repr(e))
    doc = scan_json(["-r", "summary,pages", path], "--json with two reports")
    if doc is not None:
        check(isinstance(doc, dict) and isinstance(doc.get("summary"), list)
              and isinstance(doc.get("pages"), list), "--json -r summary,pages has both keys",
              repr(doc)[:200])
        if isinstance(doc, dict) and isinstance(doc.get("pages"), list):
            eq(len(doc["pages"]), len(pages), "--json -r summary,pages: pages rows")
    run_ok(["-r", "summary,pages", path], "table with two reports")
    write_image("-dash.img", pages)
    rows = scan_csv(["--", "-dash.img"], "'--' then a file name starting with '-'", cwd=STATE["tmp"])
    if rows is not None and eq(len(rows), 1, "'--' -dash.img: one row"):
        # CSV defuses a cell a spreadsheet would take for a formula (a
        # leading - + = @): the name is shown with a leading '.
        e = dict(exp, input="'-dash.img")
        check_summary(rows[0], e, "'--' -dash.img")
    r = run_ok(["-o", "csv", "-r", "pages", path], "-o csv -r pages")
    if r is not None and base is not None:
        rows = parse_csv(r, "-o csv -r pages", ["input", "address", "zero", "xxhash"])
        if rows:
            eq([x["xxhash"] for x in rows], [hexdigest("xxhash", p) for p in pages], "-o csv -r pages digests")


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
