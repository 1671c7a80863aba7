#!/usr/bin/python3
"""The savings of the summary against the KSM model computed in Python.

    /usr/bin/python3 tests/test_savings.py [NAME-SUBSTRING...]

Groups of 2/255/256/257/513/1000 identical pages, zero pages, last-byte
near-duplicates and unique pages: every summary column with the default -m,
-m 2/3/257/1000, -z, and -z with -m; the table shows the figures; bad -m
values exit 2; 4400 groups of three and their near twins, more than the
in-memory copies hold, from a file, with -j 1 and from a pipe.

Oracle: ksmtest.ksm_group() over byte-identical pages (summary_helpers).
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, check, eq, run_suite, test  # noqa: E402
from summary_helpers import (check_summary, check_usage_error, expected_summary,
                             rng_for, run, run_ok, savings_image, scan_csv, write_image)  # noqa: E402


@test("4 savings")
def savings_model():
    path, pages = savings_image()
    cases = [([], 256, False), (["-m", "2"], 2, False), (["-m", "1000"], 1000, False),
             (["--max-page-sharing=3"], 3, False), (["-m", "257"], 257, False),
             (["-z"], 256, True), (["-z", "-m", "2"], 2, True),
             (["--use-zero-pages", "--max-page-sharing=1000"], 1000, True)]
    for opts, m, z in cases:
        what = "savings.img %s" % (" ".join(opts) or "(defaults)")
        rows = scan_csv(opts + [path], what)
        if rows is None:
            continue
        if not eq(len(rows), 1, what + ": one summary row"):
            continue
        exp = expected_summary(pages, "xxhash", m, z)
        exp["input"] = path
        check_summary(rows[0], exp, what)


@test("4 savings")
def more_groups_than_hot_copies():
    """ksmscan keeps in memory a copy of the first 4096 contents seen twice
    (16 MiB) and compares later pages with those copies; past that, with the
    bytes read back from the input. 4400 groups of three, shuffled, and near
    twins that differ from a group's content in their last byte only, must
    give the oracle's figures either way, from a file and from a pipe."""
    rng = rng_for("hot")
    groups = [rng.randbytes(PAGE) for _ in range(4400)]
    pages = groups * 3
    pages += [g[:-1] + bytes([g[-1] ^ 1]) for g in groups[:300]]
    pages += [g[:-1] + bytes([g[-1] ^ 1]) for g in groups[:100]]
    rng.shuffle(pages)
    path = write_image("hot.img", pages)
    exp = expected_summary(pages, "xxhash")
    with open(path, "rb") as f:
        data = f.read()
    for what, args, kw in (("file", [path], {}),
                           ("file -j1", ["-j", "1", path], {}),
                           ("pipe", ["-"], {"input": data})):
        rows = scan_csv(args, "hot copies " + what, **kw)
        if rows is None or not eq(len(rows), 1, "hot copies %s: one row" % what):
            continue
        e = dict(exp, input=path if what != "pipe" else "-")
        check_summary(rows[0], e, "hot copies " + what)


@test("4 savings")
def savings_table_output():
    path, pages = savings_image()
    # The default table shows sizes for people; -l every figure as counted.
    for opts in (["-l"], ["-o", "table", "--long"]):
        r = run_ok(opts + [path], "table output %s" % " ".join(opts))
        if r is None:
            continue
        n = str(len(pages))
        # allow thousands separators
        pat = r"(?<![\d.,])" + n[:-3] + r"[,.' \u202f]?" + n[-3:] + r"(?![\d])"
        check(re.search(pat, r.out), "table output contains the pages count %s" % n, r.out[:500])
        d = str(len(set(pages)))
        check(re.search(r"(?<![\d.,])%s(?![\d])" % d, r.out),
              "table output contains distinct_pages %s" % d, r.out[:500])


@test("4 savings")
def bad_max_page_sharing():
    path, _ = savings_image()
    for v in ("1", "0", "x", "-3", "2x", "", "99999999999999999999999"):
        check_usage_error(run(["-m", v, path]), "-m %r" % v)
    check_usage_error(run(["--max-page-sharing=1", path]), "--max-page-sharing=1")


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
