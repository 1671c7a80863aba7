#!/usr/bin/python3
"""The same figures however the work is split and however the input arrives.

    /usr/bin/python3 tests/test_invariance.py [NAME-SUBSTRING...]

~2500 + ~400 pages, two inputs: the summary, regions, histogram, top and
tree CSV are identical for -j 1/2/4/7 and the default (timing columns
aside), and each == its oracle; the same for the input as a file, as .zst
and through a pipe. make check runs this suite under ThreadSanitizer too.

Oracles: Python's count of the pages written, the RB-tree simulation.
"""
import os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, SUMMARY_COLS, ZERO, Skip, as_int, check, eq, run_suite, test  # noqa: E402
from report_helpers import (HIST_COLS, REGION_COLS, TIMING, TOP_COLS, TREE_COLS,
                            check_summary_rows, check_top, check_tree_rows,
                            expected_histogram, hist_rows_of, rand_page_fast, rng_for,
                            scan_csv, strip_cols, write_image)  # noqa: E402


# ---------------------------------------------------------------------------
# 7. -j and input-form invariance
# ---------------------------------------------------------------------------
def invariance_images():
    rng = rng_for("inv")
    groups = [rand_page_fast(rng) for _ in range(60)]
    a = [ZERO] * 300
    for g in groups:
        a += [g] * rng.randrange(2, 40)
    base = rand_page_fast(rng)
    a += [base[:PAGE - 16] + rng.getrandbits(128).to_bytes(16, "little") for _ in range(300)]
    n_unique = max(0, 2500 - len(a))
    a += [rand_page_fast(rng) for _ in range(n_unique)]
    rng.shuffle(a)
    b = a[::9] + groups[:10] + [rand_page_fast(rng) for _ in range(60)]
    rng.shuffle(b)
    return a, b


REPORTS = [("summary", SUMMARY_COLS, ["-a", "xxhash,xxh64,crc32c"]),
           ("regions", REGION_COLS, []),
           ("histogram", HIST_COLS, []),
           ("top", TOP_COLS, ["--top=12", "-a", "xxh64"]),
           ("tree", TREE_COLS, ["-a", "xxhash,crc32c"])]


def check_report_oracle(report, rows, inputs, label):
    """inputs: [(name, pages)]; the '*' rows when several."""
    names = inputs + ([("*", [p for _, ps in inputs for p in ps])] if len(inputs) > 1 else [])
    for name, pages in names:
        if report == "summary":
            check_summary_rows(rows, name, pages, ["xxhash", "xxh64", "crc32c"], label)
        elif report == "histogram":
            eq([t[1:] for t in hist_rows_of(rows) if t[0] == name], expected_histogram(pages),
               "%s %s: histogram == oracle" % (label, name))
        elif report == "top":
            check_top(rows, name, pages, 12, "xxh64", label)
        elif report == "tree":
            check_tree_rows(rows, name, pages, ["xxhash", "crc32c"], label)
        elif report == "regions" and name != "*":
            mine = [r for r in rows if r["input"] == name]
            eq([(r["region"], r["start"], r["end"], as_int(r["pages"]),
                 as_int(r["zero_pages"]), as_int(r["redundant_pages"])) for r in mine],
               [("raw", "0x0", "0x%x" % (len(pages) * PAGE), len(pages), pages.count(ZERO),
                 len(pages) - len(set(pages)))],
               "%s %s: regions == oracle" % (label, name))


@test("7 invariance")
def threads_invariance():
    a, b = invariance_images()
    ia, ib = write_image("inv-a.img", a), write_image("inv-b.img", b)
    for report, cols, extra in REPORTS:
        drop = TIMING.get(report, [])
        ref = None
        for j in (1, 2, 4, 7, None):
            jopt = ["-j", str(j)] if j else []
            rows = scan_csv(["-r", report] + jopt + extra + [ia, ib],
                            "%s -j%s" % (report, j or " default"), cols)
            if rows is None:
                continue
            if j == 1:
                ref = strip_cols(rows, drop)
                check_report_oracle(report, rows, [(ia, a), (ib, b)], "%s -j1" % report)
            elif ref is not None:
                got = strip_cols(rows, drop)
                diff = [(x, y) for x, y in zip(ref, got) if x != y]
                check(got == ref, "%s: -j%s output == -j1 output (timing aside)"
                      % (report, j or " default"),
                      "%d vs %d rows; first differences %r" % (len(ref), len(got), diff[:2]))


@test("7 invariance")
def input_form_invariance():
    if not shutil.which("zstd"):
        raise Skip("zstd not installed")
    a, _ = invariance_images()
    ia = write_image("form.img", a)
    iz = ia + ".zst"
    subprocess.run(["zstd", "-q", "-f", ia, "-o", iz], check=True)
    data = b"".join(a)
    for report, cols, extra in REPORTS:
        drop = TIMING.get(report, []) + ["input"]
        ref = None
        for form, args, kw in (("file", [ia], {}), ("zst", [iz], {}),
                               ("pipe", ["-"], {"input": data})):
            rows = scan_csv(["-r", report, "-j", "2"] + extra + args,
                            "%s from %s" % (report, form), cols, **kw)
            if rows is None:
                continue
            name = args[0]
            eq({r["input"] for r in rows}, {name}, "%s from %s: input column" % (report, form))
            check_report_oracle(report, rows, [(name, a)], "%s from %s" % (report, form))
            got = strip_cols(rows, drop)
            if form == "file":
                ref = got
            elif ref is not None:
                check(got == ref, "%s: %s output == file output (input, timing aside)"
                      % (report, form), "first differences %r"
                      % [(x, y) for x, y in zip(ref, got) if x != y][:2])


def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
