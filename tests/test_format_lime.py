#!/usr/bin/python3
"""LiME files: written from the fixture's pages, small layouts, broken files.

    /usr/bin/python3 tests/test_format_lime.py [NAME-SUBSTRING...]

A LiME file of the fixture guest's pages (figures, `-r regions` per range)
and LiME.zst through a pipe; an unaligned start, a partial page, ranges out
of order (file, pipe, zstd pipe); broken headers, ranges and truncations:
exit 1, `ksmscan: NAME:` first, real pages only.

Oracles: guest-b.truth.json, the bytes written here (dump_helpers' writers).
"""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import check, eq  # noqa: E402
from dump_helpers import (CACHE, PAGE, TA, ZERO, as_int, broken, build_lime,
                          check_pages_report, expect_broken, fixture_elf, lime_header,
                          main, parse_csv, patched, reported_subset, run, runs_of,
                          sane, summary, synth_files, synth_pages, synth_truth, test,
                          truth_rows_check, write, zstd_bytes)  # noqa: E402
import zstandard  # noqa: E402


def own_lime():
    if "own_lime" not in CACHE:
        _, _, pages = fixture_elf()
        data = build_lime(pages)
        path = write("own.lime", data)
        zpath = write("own.lime.zst", zstandard.ZstdCompressor(level=1, threads=-1)
                      .compress(data))
        CACHE["own_lime"] = (path, zpath)
    return CACHE["own_lime"]


@test
def own_lime_file_and_regions():
    path, _ = own_lime()
    _, _, pages = fixture_elf()
    truth_rows_check(summary(TA + [path], "own lime"), path, "lime", "own LiME")
    r = run(["-r", "regions", "--csv", path])
    sane(r, "lime regions")
    rows = parse_csv(r, "lime regions")
    runs = runs_of(pages)
    if eq(len(rows), len(runs), "LiME regions: one row per range"):
        for row, (start, datas) in zip(rows, runs):
            w = "LiME region 0x%x" % start
            eq(row.get("start"), "0x%x" % start, w + ": start")
            eq(row.get("end"), "0x%x" % (start + len(datas) * PAGE),
               w + ": end (inclusive end + 1)")
            eq(as_int(row.get("pages")), len(datas), w + ": pages")
            eq(as_int(row.get("zero_pages")), sum(d == ZERO for d in datas), w + ": zero_pages")


@test
def own_lime_zst_stdin():
    _, zpath = own_lime()
    _, _, pages = fixture_elf()
    truth_rows_check(summary(TA + ["-"], "own lime.zst via pipe", pipe=["cat", zpath]),
                     "-", "lime", "own LiME.zst piped")
    r = run(["-r", "pages", "-a", "xxh64", "--csv", "-"], pipe=["cat", zpath])
    if sane(r, "lime.zst pages"):
        check(r.rc == 0, "lime.zst pages: exit status 0", r.brief())
    check_pages_report(r, "-", pages, "own LiME.zst piped -r pages")


# ---------------------------------------------------------------------------
# LiME and kdump details on small files
# ---------------------------------------------------------------------------
@test
def lime_small_layouts():
    """Unaligned range start, a range with a partial page, ranges out of order."""
    rnd = random.Random(5)
    p = [rnd.randbytes(PAGE) for _ in range(6)]
    data = (lime_header(0x10000800, 0x10000800 + 2 * PAGE - 1) + p[0] + p[1] +
            lime_header(0x5000, 0x5000 + PAGE + 99) + p[2] + p[3][:100] +
            lime_header(0x1000, 0x1000 + 2 * PAGE - 1) + p[4] + ZERO)
    path = write("layout.lime", data)
    exp = [(0x10000800, p[0]), (0x10000800 + PAGE, p[1]), (0x5000, p[2]),
           (0x1000, p[4]), (0x2000, ZERO)]
    for label, args, kw, name in (("file", [path], {}, path),
                                  ("pipe", ["-"], {"input": data}, "-"),
                                  ("zstd pipe", ["-"], {"input": zstd_bytes(data)}, "-")):
        r = run(["-r", "pages", "-a", "xxh64", "--csv"] + args, **kw)
        sane(r, "LiME layouts " + label)
        check(r.rc == 0, "LiME with a partial page (%s): exit status 0" % label, r.brief())
        check_pages_report(r, name, exp, "LiME layouts (%s)" % label)


@test
def broken_lime():
    lime = synth_files()["lime"]
    tm, n = synth_truth(), len(synth_pages())
    kw = dict(max_pages=n, truth_map=tm)
    r1 = 32 + 24 * PAGE      # the second range header
    broken("LiME truncated in the first header", lime[:20], ("LiME", "truncated"), **kw)
    broken("LiME truncated in range data", lime[:32 + 5 * PAGE + 77],
           ("LiME", "truncated", "past the end"), **kw)
    broken("LiME truncated in the second header", lime[:r1 + 10],
           ("LiME", "truncated"), **kw)
    broken("LiME end < start", patched(lime, r1 + 16, "<Q", 0x3ff000),
           ("LiME", "before", "end"), **kw)
    broken("LiME end 2^64-1", patched(lime, r1 + 8, "<QQ", 0, 2 ** 64 - 1),
           ("LiME", "past the end", "truncated"), **kw)
    # the third range's header and data are then read as data of the second
    broken("LiME range past the end", patched(lime, r1 + 16, "<Q", 0x400000 + 100 * PAGE - 1),
           ("LiME", "past the end", "truncated"), max_pages=n)
    broken("LiME bad magic in the second header", patched(lime, r1, "<I", 0x12345678),
           ("LiME", "magic"), **kw)
    broken("LiME garbage after the last range", lime + b"junk" * 20,
           ("LiME", "magic", "truncated"), **kw)
    # the same through a pipe and through zstd + pipe (streaming reader)
    for label, data in (("truncated in range data", lime[:32 + 5 * PAGE + 77]),
                        ("end < start", patched(lime, r1 + 16, "<Q", 0x3ff000)),
                        ("truncated in the second header", lime[:r1 + 10])):
        for how, blob in (("pipe", data), ("zstd pipe", zstd_bytes(data))):
            r = run(["--csv", "-r", "pages", "-a", "xxh64", "-"], input=blob)
            expect_broken(r, "-", "LiME %s (%s)" % (label, how), ("LiME", "truncated", "end"))
            reported_subset(r, tm, "LiME %s (%s)" % (label, how))


if __name__ == "__main__":
    sys.exit(main())
