#!/usr/bin/python3
"""Raw images (a file of pages) and how inputs arrive: standard input, partial
pages, sparse files, empty files, unreadable inputs, a full output.

    /usr/bin/python3 tests/test_format_raw.py [NAME-SUBSTRING...]

Standard input by pipe and by redirect == the file, a file and standard
input together; a trailing partial page (warning, -q, --quiet, a file under
one page: no memory, an error); sparse files' holes are not pages (also with -z, and an all-hole
file); an empty file or one with no whole page (a text file, an empty
pipe): exit 1 and one line naming it, its rows status failed (strict JSON,
no "-0"); a missing file or a directory:
exit 1, `ksmscan: NAME: reason`, the good inputs still reported; output to
/dev/full: exit 1.

Oracles: the pages written here, the OS's SEEK_DATA/SEEK_HOLE map.
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (ALGOS, PAGE, STATE, SUMMARY_COLS, ZERO, Skip, as_int, check, eq,
                     hexdigest, parse_csv, run_suite, test, tmp)  # noqa: E402
from summary_helpers import (TIMING_COLS, check_summary, expected_multi,
                             expected_summary, random_image, rng_for, run, run_ok,
                             savings_image, scan_csv, scan_json, write_image,
                             no_page_said)  # noqa: E402


# ---------------------------------------------------------------------------
# Group 6: input edge cases
# ---------------------------------------------------------------------------
def _strip_timing(rows):
    return [{k: v for k, v in r.items() if k not in TIMING_COLS and k != "input"} for r in rows]


@test("6 input edge cases")
def stdin_equals_file():
    path, pages = random_image()
    data = open(path, "rb").read()
    base = scan_csv(["-a", "all", path], "file")
    piped = scan_csv(["-a", "all", "-"], "stdin pipe", input=data)
    with open(path, "rb") as f:
        redir = scan_csv(["-a", "all", "-"], "stdin redirected from the file", stdin=f)
    for rows, what in ((piped, "pipe"), (redir, "redirect")):
        if rows is None or base is None:
            continue
        eq([r["input"] for r in rows], ["-"] * len(ALGOS), "stdin %s: input column is '-'" % what)
        eq(_strip_timing(rows), _strip_timing(base), "stdin %s: same figures as the file" % what)
        for r in rows:
            exp = expected_summary(pages, r["algo"])
            check_summary(r, exp, "stdin %s %s" % (what, r["algo"]))
    prow = scan_csv(["-a", "xxh3", "-r", "pages", "-"], "stdin pipe -r pages",
                    ["input", "address", "zero", "xxh3"], input=data)
    if prow is not None:
        eq([(r["address"], r["xxh3"]) for r in prow],
           [("0x%x" % (i * PAGE), hexdigest("xxh3", p)) for i, p in enumerate(pages)],
           "stdin pipe -r pages: addresses and digests")
    # file and the same data on stdin: '*' sees every page twice
    rows = scan_csv([path, "-"], "file and stdin", input=data)
    if rows is not None:
        exp = expected_multi([(path, pages), ("-", pages)], ["xxhash"])
        eq([r["input"] for r in rows], [path, "-", "*"], "file and stdin: row inputs")
        for r, e in zip(rows, exp):
            check_summary(r, e, "file and stdin [%s]" % e["input"], fmt="raw" if e["input"] != "*" else None)


@test("6 input edge cases")
def partial_page():
    rng = rng_for("partial")
    pages = [rng.randbytes(PAGE) for _ in range(5)] + [ZERO]
    path = write_image("partial.img", pages, tail=rng.randbytes(1000))
    r = run(["--csv", path])
    eq(r.rc, 0, "partial page: exit status 0")
    check(any(path in l and "partial page" in l for l in r.err.splitlines()),
          "partial page: warning line names the file and says 'partial page'", repr(r.err[:300]))
    rows = parse_csv(r, "partial page", SUMMARY_COLS) if r.rc == 0 else None
    if rows:
        exp = expected_summary(pages, "xxhash")
        exp["input"] = path
        check_summary(rows[0], exp, "partial page")
    for q in ("-q", "--quiet"):
        r = run([q, "--csv", path])
        eq(r.rc, 0, "partial page %s: exit status 0" % q)
        check("partial page" not in r.err, "partial page %s: warning suppressed" % q, repr(r.err[:300]))
        rows = parse_csv(r, "partial page " + q, SUMMARY_COLS) if r.rc == 0 else None
        if rows:
            eq(as_int(rows[0]["pages"]), len(pages), "partial page %s: pages" % q)
    rows = scan_csv(["-q", "-r", "pages", "-a", "xxh64", path], "partial page -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is not None:
        eq([r["address"] for r in rows], ["0x%x" % (i * PAGE) for i in range(len(pages))],
           "partial page: no row for the trailing partial page")
    # smaller than one page
    small = write_image("small.img", [], tail=b"\x07" * 100)
    r = run(["--csv", small])
    eq(r.rc, 1, "file of 100 bytes: no whole page, exit status 1")
    no_page_said(r, small, 100, "file of 100 bytes")
    rows = parse_csv(r, "file of 100 bytes", SUMMARY_COLS)
    if rows:
        eq((as_int(rows[0]["pages"]), rows[0]["status"]), (0, "failed"),
           "file of 100 bytes: pages and status")


def data_pages(path):
    """Pages overlapping a data extent, per SEEK_DATA/SEEK_HOLE (the OS is the oracle)."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    res = set()
    try:
        off = 0
        while off < size:
            try:
                d = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break
            h = os.lseek(fd, d, os.SEEK_HOLE)
            for p in range(d // PAGE, (min(h, size) + PAGE - 1) // PAGE):
                if (p + 1) * PAGE <= size:
                    res.add(p)
            off = h
    finally:
        os.close(fd)
    return sorted(res)


@test("6 input edge cases")
def sparse_file():
    path = tmp("sparse.img")
    rng = rng_for("sparse")
    written = {0: rng.randbytes(PAGE), 1: rng.randbytes(PAGE), 10: ZERO, 11: b"\x01" * PAGE,
               40: rng.randbytes(PAGE), 63: rng.randbytes(PAGE)}
    written[41] = written[40]
    with open(path, "wb") as f:
        f.truncate(80 * PAGE)                 # trailing hole after page 63
        for p, d in sorted(written.items()):
            f.seek(p * PAGE)
            f.write(d)
    fd = os.open(path, os.O_RDONLY)
    try:
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
    finally:
        os.close(fd)
    if hole >= os.path.getsize(path):
        raise Skip("the filesystem holding %s does not report holes" % STATE["tmp"])
    present = data_pages(path)
    check(len(present) < 80, "OS reports holes in the sparse file", repr(present))
    with open(path, "rb") as f:
        data = f.read()
    pages = [data[p * PAGE:(p + 1) * PAGE] for p in present]
    for opts, z in (([], False), (["-z"], True)):
        rows = scan_csv(opts + ["-a", "xxhash,xxh64", path], "sparse file %s" % " ".join(opts))
        if rows is None:
            continue
        for r in rows:
            exp = expected_summary(pages, r["algo"], 256, z)
            exp["input"] = path
            check_summary(r, exp, "sparse file %s %s (data pages %s)" % (" ".join(opts), r["algo"], present))
    rows = scan_csv(["-r", "pages", "-a", "xxh64", path], "sparse file -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is not None:
        eq([(r["address"], r["zero"], r["xxh64"]) for r in rows],
           [("0x%x" % (p * PAGE), "1" if pg == ZERO else "0", hexdigest("xxh64", pg))
            for p, pg in zip(present, pages)],
           "sparse file -r pages: only data pages, at their file offsets")
    # a file that is all hole
    empty_sparse = tmp("allhole.img")
    with open(empty_sparse, "wb") as f:
        f.truncate(64 * PAGE)
    present = data_pages(empty_sparse)
    rows = scan_csv([empty_sparse], "all-hole file")
    if rows is not None:
        eq(as_int(rows[0]["pages"]), len(present), "all-hole file: pages (OS data pages %r)" % present)
        eq(as_int(rows[0]["zero_pages"]), len(present), "all-hole file: zero_pages")


@test("6 input edge cases")
def empty_file():
    """An empty file is no memory: exit 1, one line naming it; its rows are
    still printed (all figures 0, status failed), beside the good inputs'."""
    path = write_image("empty.img", [])
    r = run(["--csv", "-a", "all", path])
    eq(r.rc, 1, "empty file: exit status 1")
    no_page_said(r, path, 0, "empty file")
    rows = scan_csv(["-a", "all", path], "empty file", rc=1)
    if rows is not None:
        eq(len(rows), len(ALGOS), "empty file: one row per algorithm")
        for r in rows:
            eq(as_int(r.get("pages")), 0, "empty file %s pages" % r["algo"])
            eq(as_int(r.get("distinct_pages")), 0, "empty file %s distinct_pages" % r["algo"])
            eq(as_int(r.get("saved_bytes")), 0, "empty file %s saved_bytes" % r["algo"])
            eq(r.get("status"), "failed", "empty file %s status" % r["algo"])
        # n(n-1)/2^(b+1) with n = 0 is 0, not -0
        bad = [(r["algo"], r.get("expected_collisions")) for r in rows
               if not re.fullmatch(r"0*\.?0*(e[-+]?\d+)?", r.get("expected_collisions", "x"))]
        check(not bad, "empty file: expected_collisions is 0 (no sign)", "got %r" % bad)
    doc = scan_json(["-a", "all", path], "empty file json", rc=1)
    if doc is not None:
        check(isinstance(doc, dict) and len(doc.get("summary", [])) == len(ALGOS),
              "empty file json: one summary row per algorithm", repr(doc)[:200])
    run_ok([path], "empty file, table output", rc=1)
    rows = scan_csv(["-r", "pages", path], "empty file -r pages", ["input", "address", "zero", "xxhash"],
                    rc=1)
    if rows is not None:
        eq(rows, [], "empty file -r pages: no rows")
    # empty input together with a real one
    good = write_image("good-for-empty.img", [ZERO, b"\x01" * PAGE, ZERO])
    rows = scan_csv([path, good], "empty + good", rc=1)
    if rows is not None:
        eq([(r["input"], as_int(r["pages"]), r["status"]) for r in rows],
           [(path, 0, "failed"), (good, 3, "ok"), ("*", 3, "partial")],
           "empty + good: rows, pages and status")


@test("6 input edge cases")
def no_whole_page():
    """An input shorter than a page (a text file, a cut file, an empty pipe)
    holds no memory: exit 1 and one line naming it with its size, even with
    -q; an all-hole sparse file of whole pages is memory never written: ok."""
    text = tmp("passwd-like.txt")
    body = "".join("user%d:x:%d:%d::/home/user%d:/bin/sh\n" % (i, i, i, i)
                   for i in range(30)).encode()
    with open(text, "wb") as f:
        f.write(body)
    for args, size, what in (([text], len(body), "a text file"),
                             (["-q", text], len(body), "a text file, -q"),
                             (["-f", "raw", text], len(body), "a text file, -f raw")):
        r = run(["--csv"] + args)
        eq(r.rc, 1, "%s: exit status 1" % what)
        no_page_said(r, text, size, what)
        rows = parse_csv(r, what, SUMMARY_COLS)
        if rows:
            eq([(x["input"], x["status"]) for x in rows], [(text, "failed")],
               "%s: its row, failed" % what)
    for data, what in ((b"", "an empty pipe"), (body, "text through a pipe")):
        r = run(["--csv", "-"], input=data)
        eq(r.rc, 1, "%s: exit status 1" % what)
        no_page_said(r, "-", len(data), what)
    hole = tmp("allhole-2.img")
    with open(hole, "wb") as f:
        f.truncate(2 * PAGE)
    r = run(["--csv", hole])
    eq((r.rc, r.err), (0, ""), "an all-hole sparse file of whole pages: ok, no message")


@test("6 input edge cases")
def unreadable_inputs():
    rng = rng_for("unreadable")
    pages = [rng.randbytes(PAGE), ZERO, ZERO]
    good = write_image("good.img", pages)
    missing = tmp("no-such-file.img")
    d = tmp("a-directory")
    os.mkdir(d)
    for args in ([missing, good], [good, d], [d, good, missing]):
        r = run(["--csv"] + args)
        what = "inputs %s" % [os.path.basename(a) for a in args]
        eq(r.rc, 1, what + ": exit status 1")
        for bad in (missing, d):
            if bad in args:
                check(any(l.startswith("ksmscan: %s: " % bad) and len(l) > len(bad) + 11
                          for l in r.err.splitlines()),
                      "%s: stderr has 'ksmscan: %s: <reason>'" % (what, bad), repr(r.err[:400]))
        rows = parse_csv(r, what, SUMMARY_COLS) if r.out else None
        if check(rows is not None, what + ": good input still reported", "stdout %r" % r.out[:300]):
            mine = [x for x in (rows or []) if x["input"] == good]
            if eq(len(mine), 1, what + ": one row for the good input"):
                exp = expected_summary(pages, "xxhash")
                exp["input"] = good
                check_summary(mine[0], exp, what + " good input")


@test("6 input edge cases")
def write_error():
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    path, _ = savings_image()
    for opts in ([], ["--csv"], ["--json"], ["--csv", "-r", "pages"]):
        with open("/dev/full", "wb") as full:
            r = run(opts + [path], stdout=full)
        what = "> /dev/full %s" % " ".join(opts)
        eq(r.rc, 1, what + ": exit status 1")
        check(any(l.startswith("ksmscan: ") for l in r.err.splitlines()),
              what + ": error line on stderr", repr(r.err[:300]))


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
