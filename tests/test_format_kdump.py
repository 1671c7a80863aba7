#!/usr/bin/python3
"""kdump files (makedumpfile's compressed format) and flattened kdumps.

    /usr/bin/python3 tests/test_format_kdump.py [NAME-SUBSTRING...]

- the fixture: guest-b.kdump-zlib when found (flattened, through a pipe, and
  assembled by `makedumpfile -R`) against the truth file;
- kdumps written here from the fixture's pages (zstd, zlib and stored pages,
  QEMU's shared zero page; version 5, 3 sub-header blocks, single codecs):
  figures and every page; flattened in QEMU's record order and reversed,
  through a pipe; `.zst` through a pipe; a 12 GiB guest's flattened layout
  (descriptor area > 64 MiB before the first data record); dump_level's
  warning and -q;
- broken kdumps and flattened kdumps: truncations, counts and offsets past
  the end, a bad block size, a bitmap too large, bad codecs and sizes, a huge
  max_mapnr: exit 1, `ksmscan: NAME:` first, real pages only.

Oracles: guest-b.truth.json, the bytes written here (dump_helpers' writers).
"""
import collections, os, random, struct, subprocess, sys, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import Skip, check, eq, fixture, tmp  # noqa: E402
from dump_helpers import (CACHE, PAGE, TA, TIMEOUT, ZC, ZERO, broken, build_kdump,
                          check_figures, check_pages_report, expect_broken, figures,
                          fixture_elf, flat_header, flatten, main, parse_csv, patched,
                          qemu_like_records, run, sane, summary, synth_files,
                          synth_pages, synth_truth, test, truth, truth_rows_check,
                          write)  # noqa: E402
import zstandard  # noqa: E402


@test
def fixture_kdump_flat():
    p = fixture("guest-b.kdump-zlib")
    truth_rows_check(summary(TA + [p], "kdump-zlib"), p, "kdump", "guest-b.kdump-zlib")


@test
def fixture_kdump_flat_stdin():
    p = fixture("guest-b.kdump-zlib")
    truth_rows_check(summary(TA + ["-"], "kdump-zlib via pipe", pipe=["cat", p]),
                     "-", "kdump", "guest-b.kdump-zlib piped to -")


@test
def fixture_kdump_assembled():
    p = fixture("guest-b.kdump-zlib")
    out = tmp("guest-b.kdump-assembled")
    with open(p, "rb") as f:
        mk = subprocess.run(["makedumpfile", "-R", out], stdin=f, capture_output=True,
                            timeout=120)
    if mk.returncode != 0 or not os.path.exists(out):
        raise Skip("makedumpfile -R failed: %r" % mk.stderr[-300:])
    with open(out, "rb") as f:
        check(f.read(8) == b"KDUMP   ", "makedumpfile -R wrote an assembled dump")
    truth_rows_check(summary(TA + [out], "kdump assembled"), out, "kdump",
                     "makedumpfile -R output")


# ---------------------------------------------------------------------------
# 2. Dumps written here from the fixture's pages
# ---------------------------------------------------------------------------
def own_kdump():
    if "own_kdump" not in CACHE:
        _, _, pages = fixture_elf()
        for a, _ in pages:
            if a % PAGE:
                raise RuntimeError("fixture page address 0x%x not aligned" % a)
        img, info = build_kdump([(a // PAGE, p) for a, p in pages])
        path = write("own.kdump", img)
        CACHE["own_kdump"] = (path, img, info)
    return CACHE["own_kdump"]


@test
def own_kdump_mixed_codecs():
    path, img, info = own_kdump()
    kinds = collections.Counter(p["flags"] for p in info["pages"])
    check(kinds[0x20] and kinds[1] and kinds[0], "own kdump has zstd, zlib and stored pages",
          repr(kinds))
    truth_rows_check(summary(TA + [path], "own kdump"), path, "kdump",
                     "own kdump (zstd+zlib+stored, shared zero page)")


@test
def own_kdump_pages_report():
    path, _, _ = own_kdump()
    _, _, pages = fixture_elf()
    r = run(["-r", "pages", "-a", "xxh64", "--csv", path])
    if sane(r, "own kdump pages"):
        check(r.rc == 0, "own kdump pages: exit status 0", r.brief())
    check_pages_report(r, path, pages, "own kdump -r pages (address = pfn * 4096)")


@test
def own_kdump_flattened_stdin():
    path, img, info = own_kdump()
    flat = write("own.kdump.flat", flatten(img, qemu_like_records(img, info)))
    truth_rows_check(summary(TA + ["-"], "own flattened kdump via pipe",
                             pipe=["cat", flat]), "-", "kdump", "own flattened kdump piped")
    # the same records in reverse order (makedumpfile -R writes at offsets)
    recs = list(reversed(qemu_like_records(img, info, 1 << 20, 1 << 20)))
    rev = write("own.kdump.flat-rev", flatten(img, recs))
    r = run(["--csv", "-a", "xxh64", rev])
    sane(r, "flattened, records in reverse order")
    rows = parse_csv(r, "flattened reverse")
    if check(r.rc == 0 and len(rows) == 1, "flattened records in reverse order are "
             "assembled (makedumpfile -R semantics)", r.brief()):
        check_figures(rows[0], {k: truth()[k] for k in ("pages", "distinct_pages")},
                      "flattened reverse")


@test
def own_kdump_stdin_assembled_zst():
    """Assembled kdump through zstd and a pipe (needs a temporary copy)."""
    path, img, info = own_kdump()
    z = write("own.kdump.zst", zstandard.ZstdCompressor(level=1).compress(img))
    truth_rows_check(summary(TA + ["-"], "own kdump.zst via pipe", pipe=["cat", z]),
                     "-", "kdump", "own kdump.zst piped")


@test
def big_flattened_qemu_order():
    """A flattened dump as QEMU writes it for a guest of 12 GiB: 3.1 million
    page descriptors (72 MiB) before the page data, so the first data record
    lies 72 MiB ahead of what was written before. Only zero pages (one shared
    copy) apart from 4 pages at pfn 0-3, which fill QEMU's data cache first."""
    n = 3_100_000
    rnd = random.Random(7)
    first = [rnd.randbytes(PAGE) for _ in range(4)]
    max_mapnr = n
    bitmap_bytes = -(-max_mapnr // 8)
    half = -(-bitmap_bytes // PAGE)
    bitmap = bytearray(half * PAGE)
    bitmap[:n // 8] = b"\xff" * (n // 8)
    for pfn in range(n // 8 * 8, n):
        bitmap[pfn >> 3] |= 1 << (pfn & 7)
    desc_off = PAGE * 2 + 2 * half * PAGE
    data_off = desc_off + 24 * n
    # data: zero page first (QEMU writes it at the start of the data area),
    # then the 4 pages, stored uncompressed
    d_first = b"".join(struct.pack("<QIIQ", data_off + PAGE * (1 + i), PAGE, 0, 0)
                       for i in range(4))
    d_zero = struct.pack("<QIIQ", data_off, PAGE, 0, 0)
    descs = d_first + d_zero * (n - 4)
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<i", hdr, 8, 6)
    struct.pack_into("<iiiI", hdr, 428, PAGE, 1, 2 * half, max_mapnr)
    sub = bytearray(PAGE)
    struct.pack_into("<Qi", sub, 0, 0, 1)
    struct.pack_into("<QQQ", sub, 80, 0, max_mapnr, max_mapnr)
    data = ZERO + b"".join(first)
    img_parts = [(0, bytes(hdr[:464])), (PAGE, bytes(sub)),
                 (PAGE * 2, bytes(bitmap)), (PAGE * 2 + half * PAGE, bytes(bitmap)),
                 (data_off, data[:4 * PAGE])]
    for o in range(0, len(descs), 16 * 1024):
        img_parts.append((desc_off + o, descs[o:o + 16 * 1024]))
    img_parts.append((data_off + 4 * PAGE, data[4 * PAGE:]))
    path = tmp("big.flat")
    with open(path, "wb") as f:
        f.write(flat_header())
        for off, blob in img_parts:
            f.write(struct.pack(">qq", off, len(blob)))
            f.write(blob)
        f.write(struct.pack(">qq", -1, -1))
    del descs, img_parts
    r = run(["--csv", "-a", "xxh64", "--range=0-0x5000", path])
    sane(r, "large flattened dump")
    rows = parse_csv(r, "large flattened dump")
    check(r.rc == 0, "flattened dump of a 12 GiB guest in QEMU's record order "
          "(first page data record 72 MiB ahead) is read", r.brief())
    if rows:
        check_figures(rows[0], {"pages": 5, "zero_pages": 1, "distinct_pages": 5},
                      "large flattened dump --range=0-0x5000")
    os.unlink(path)


@test
def kdump_small_variants():
    """Version 5 header (32-bit max_mapnr), several sub-header blocks, all
    pages stored or all zstd, no shared zero page, -f kdump on both forms."""
    pages = synth_pages()
    pp = [(a // PAGE, d) for a, d in pages]
    exp = figures([d for _, d in pages])
    for label, kw in (("version 5", dict(version=5)),
                      ("sub_hdr_size 3", dict(sub_blocks=3)),
                      ("all stored", dict(codec=lambda i, d: "raw", share_zero=False)),
                      ("all zlib", dict(codec=lambda i, d: "zlib", share_zero=False)),
                      ("all zstd", dict(codec=lambda i, d: "zstd")),
                      ("max_mapnr beyond the last page", dict(max_mapnr=0x100000))):
        img, info = build_kdump(pp, **kw)
        path = write("variant.kdump", img)
        r = run(["-r", "pages", "-a", "xxh64", "--csv", path])
        sane(r, "kdump " + label)
        check(r.rc == 0, "kdump %s: exit status 0" % label, r.brief())
        check_pages_report(r, path, pages, "kdump " + label)
    files = synth_files()
    for label, blob in (("assembled", files["kdump"][0]), ("flattened", files["flat"])):
        path = write("f-kdump." + label, blob)
        rows = summary(["-f", "kdump", path], "-f kdump " + label)
        if rows:
            eq(rows[0].get("format"), "kdump", "-f kdump %s: format" % label)
            check_figures(rows[0], exp, "-f kdump " + label)


@test
def dump_level_warning():
    """dump_level with bit 8 (user pages excluded): a warning, exit status 0."""
    pages = synth_pages()
    img, _ = build_kdump([(a // PAGE, d) for a, d in pages], dump_level=31)
    path = write("dl31.kdump", img)
    r = run(["--csv", path])
    sane(r, "dump level 31")
    check(r.rc == 0, "dump_level 31: exit status 0", r.brief())
    check(r.err.startswith("ksmscan: %s: " % path) and "level" in r.err,
          "dump_level 31: a warning names the dump level", repr(r.err))
    r = run(["--csv", "-q", path])
    check(r.rc == 0 and r.err == "", "dump_level 31 with -q: no warning", r.brief())


@test
def broken_kdump():
    img, info = synth_files()["kdump"]
    tm, n = synth_truth(), len(synth_pages())
    kw = dict(max_pages=n, truth_map=tm)
    pages = info["pages"]
    zst = next(p for p in pages if p["flags"] == 0x20)
    zl = next(p for p in pages if p["flags"] == 1)
    broken("kdump truncated in the main header", img[:300], ("truncated", "header"), **kw)
    broken("kdump truncated in the sub-header", img[:PAGE + 50],
           ("truncated", "sub-header", "header"), **kw)
    broken("kdump truncated in the bitmap", img[:info["bitmap_off"] + 100],
           ("bitmap", "truncated"), **kw)
    broken("kdump truncated in the descriptors", img[:info["desc_off"] + 24 * 10 + 7],
           ("descriptor", "past the end", "truncated"), **kw)
    broken("kdump truncated in page data", img[:info["data_off"] + 20000],
           ("past the end", "truncated"), **kw)
    broken("kdump block size 8192", patched(img, 428, "<i", 8192), ("block size",), **kw)
    broken("kdump block size 0", patched(img, 428, "<i", 0), ("block size",), **kw)
    broken("kdump bitmap_blocks 0x7ffffffe", patched(img, 436, "<i", 0x7ffffffe),
           ("bitmap",), **kw)
    broken("kdump bitmap_blocks odd", patched(img, 436, "<i", info["bitmap_blocks"] + 1),
           ("bitmap",), **kw)
    broken("kdump sub_hdr_size 0x7fffffff", patched(img, 432, "<i", 0x7fffffff),
           ("sub-header", "bitmap", "past the end", "truncated"), **kw)
    d = zst["desc"]
    broken("kdump descriptor offset past the end", patched(img, d, "<Q", len(img) + 10),
           ("past the end",), **kw)
    broken("kdump descriptor offset+size overflow", patched(img, d, "<QI", 2 ** 64 - 16, 64),
           ("past the end",), **kw)
    broken("kdump descriptor size past the end", patched(img, d + 8, "<I", 0xffffffff),
           ("past the end",), **kw)
    # descriptors for more pages than the file holds: all bits of the bitmap set
    b = bytearray(img)
    half = info["bitmap_blocks"] // 2 * PAGE
    b[info["bitmap_off"] + half: info["bitmap_off"] + 2 * half] = b"\xff" * half
    broken("kdump bitmap with more pages than descriptors", bytes(b),
           ("descriptor", "past the end", "size", "inflate", "decompress", "flags"),
           max_pages=None)
    # compressed pages that inflate to other sizes, or not at all
    end = len(img)
    for label, blob, flags in (
            ("zstd page of 4095 bytes", ZC.compress(bytes(4095)), 0x20),
            ("zstd page of 4097 bytes", ZC.compress(bytes(4097)), 0x20),
            ("zlib page of 4095 bytes", zlib.compress(bytes(4095)), 1),
            ("zlib page of 4097 bytes", zlib.compress(bytes(4097)), 1),
            ("zlib page of garbage", b"\x78\x9c" + bytes(range(60)), 1),
            ("zstd page of garbage", b"\x28\xb5\x2f\xfd" + bytes(range(60)), 0x20),
            ("zstd page truncated", ZC.compress(pg_rand(9))[:-9], 0x20),
            ("stored page of 100 bytes", bytes(100), 0),
            ("lzo page", bytes(100), 0x2),
            ("snappy page", bytes(100), 0x4)):
        bimg = patched(img + blob, zl["desc"] if flags == 1 else zst["desc"], "<QII",
                       end, len(blob), flags)
        words = {"lzo page": ("lzo",), "snappy page": ("snappy",)}.get(
            label, ("inflate", "decompress", "zstd", "zlib", "size"))
        got = broken("kdump " + label, bimg, words, max_pages=n - 1, truth_map=tm)
        eq(got, n - 1, "kdump %s: the other pages still count" % label)


def pg_rand(seed):
    return random.Random(seed).randbytes(PAGE)


@test
def kdump_huge_max_mapnr():
    """max_mapnr_64 far beyond the bitmap: no hang, pages still correct."""
    img, info = synth_files()["kdump"]
    for label, bimg in (("max_mapnr_64 2^63", patched(img, PAGE + 96, "<Q", 2 ** 63)),
                        ("max_mapnr_64 2^64-1", patched(img, PAGE + 96, "<Q", 2 ** 64 - 1))):
        path = write("maxmapnr.kdump", bimg)
        r = run(["-r", "pages", "-a", "xxh64", "--csv", path], timeout=TIMEOUT)
        if sane(r, "kdump " + label):
            check(r.rc in (0, 1), "kdump %s: exit status 0 or 1" % label, r.brief())
            check_pages_report(r, path, synth_pages(), "kdump " + label)


@test
def broken_flattened():
    kd, _ = synth_files()["kdump"]
    flat = synth_files()["flat"]
    tm, n = synth_truth(), len(synth_pages())
    kw = dict(max_pages=n, truth_map=tm)
    broken("flattened truncated in its header", flat[:2000], ("truncated", "header"), **kw)
    broken("flattened truncated in a record header", flat[:PAGE + 16 + 464 + 5],
           ("truncated", "record"), **kw)
    broken("flattened truncated in record data", flat[:len(flat) // 2 + 3],
           ("truncated", "record", "end"), **kw)
    broken("flattened without its end marker", flat[:-16], ("end",), **kw)
    broken("flattened type 2", patched(flat, 16, ">q", 2), ("type",), **kw)
    bad = flat[:-16] + struct.pack(">qq", -5, 100) + bytes(100) + struct.pack(">qq", -1, -1)
    broken("flattened record with offset -5", bad, ("offset", "record"), **kw)
    bad = flat[:-16] + struct.pack(">qq", 0, 2 ** 62 + 5) + bytes(100)
    broken("flattened record of size 2^62+5", bad, ("size", "record", "truncated"), **kw)
    bad = flat[:-16] + struct.pack(">qq", 2 ** 63 - 16, 64) + bytes(64) + \
        struct.pack(">qq", -1, -1)
    broken("flattened record at offset 2^63-16", bad, ("offset", "record"), **kw)
    # a record that overwrites the header signature with garbage
    bad = flat[:-16] + struct.pack(">qq", 0, 8) + b"garbage!" + struct.pack(">qq", -1, -1)
    broken("flattened record overwriting the signature", bad, ("kdump", "signature"), **kw)
    # truncations through a pipe
    for cut in (PAGE - 1, PAGE + 10, len(flat) // 3):
        r = run(["--csv", "-"], input=flat[:cut])
        expect_broken(r, "-", "flattened via pipe truncated at %d" % cut)


if __name__ == "__main__":
    sys.exit(main())
