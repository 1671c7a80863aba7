#!/usr/bin/python3
"""ELF cores: the fixture guest's core, ELF layout rules, and broken cores.

    /usr/bin/python3 tests/test_format_elf.py [NAME-SUBSTRING...]

- the fixture: guest-b.elf.zst, the decompressed core, both through a pipe:
  pages, zero, distinct, shared, sharing and collisions for xxh64, xxhash,
  crc32c and xxh32, the format column; `-r regions` rows against the PT_LOAD
  headers; every page's address and xxh64;
- layout rules: p_paddr or p_vaddr, p_filesz < p_memsz, a partial last page,
  an empty PT_LOAD, PN_XNUM with 66000 segments, `-f raw` on an ELF;
- broken cores: truncations, counts and offsets past the end or overflowing
  2^64, hostile notes: exit 1, `ksmscan: NAME:` first with the offset, pages
  reported are real pages.

Oracles: guest-b.truth.json, this suite's own ELF parser and writer
(dump_helpers), xxhash over the page bytes.
"""
import hashlib, os, random, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import check, eq, fixture  # noqa: E402
from dump_helpers import (PAGE, PT_NOTE, TA, ZERO, as_int, broken, build_elf,
                          check_figures, check_pages_report, fixture_elf, main,
                          parse_csv, patched, run, sane, summary, synth_files,
                          synth_pages, synth_truth, test, truth, truth_rows_check,
                          write, xxh64)  # noqa: E402


@test
def fixture_elf_zst():
    p = fixture("guest-b.elf.zst")
    truth_rows_check(summary(TA + [p], "elf.zst"), p, "elf", "guest-b.elf.zst")


@test
def fixture_elf_plain():
    path, _, _ = fixture_elf()
    truth_rows_check(summary(TA + [path], "elf"), path, "elf", "guest-b.elf")


@test
def fixture_elf_stdin():
    path, _, _ = fixture_elf()
    truth_rows_check(summary(TA + ["-"], "elf via pipe", pipe=["cat", path]),
                     "-", "elf", "guest-b.elf piped to -")


@test
def fixture_elf_zst_stdin():
    p = fixture("guest-b.elf.zst")
    truth_rows_check(summary(TA + ["-"], "elf.zst via pipe", pipe=["cat", p]),
                     "-", "elf", "guest-b.elf.zst piped to -")


@test
def fixture_elf_regions():
    path, loads, pages = fixture_elf()
    r = run(["-r", "regions", "--csv", path])
    if sane(r, "regions"):
        check(r.rc == 0, "regions: exit status 0", r.brief())
    rows = parse_csv(r, "regions")
    if not eq(len(rows), len(loads), "regions: one row per PT_LOAD segment"):
        return
    seen = set()
    by_seg = []
    k = 0
    for ld in loads:
        n = ld["filesz"] // PAGE
        zero = red = 0
        for _, data in pages[k:k + n]:
            h = hashlib.sha256(data).digest()
            zero += data == ZERO
            red += h in seen
            seen.add(h)
        k += n
        by_seg.append((n, zero, red))
    for row, ld, (n, zero, red) in zip(rows, loads, by_seg):
        w = "regions: segment at p_paddr 0x%x" % ld["paddr"]
        eq(row.get("input"), path, w + ": input")
        eq(row.get("start"), "0x%x" % ld["paddr"], w + ": start")
        check(row.get("end") in ("0x%x" % (ld["paddr"] + ld["memsz"]),
                                 "0x%x" % (ld["paddr"] + ld["filesz"])),
              w + ": end = start + p_memsz", repr(row.get("end")))
        eq(as_int(row.get("pages")), n, w + ": pages = p_filesz / 4096")
        eq(as_int(row.get("zero_pages")), zero, w + ": zero_pages")
        eq(as_int(row.get("redundant_pages")), red, w + ": redundant_pages (scan order)")
    t = truth()
    eq(sum(as_int(x.get("redundant_pages")) or 0 for x in rows),
       t["pages"] - t["distinct_pages"], "regions: sum(redundant_pages) = pages - distinct_pages")


@test
def fixture_elf_pages_report():
    """Every page of the ELF: address (p_paddr + offset) and xxh64."""
    path, _, pages = fixture_elf()
    r = run(["-r", "pages", "-a", "xxh64", "--csv", path])
    if sane(r, "elf pages"):
        check(r.rc == 0, "elf pages: exit status 0", r.brief())
    check_pages_report(r, path, pages, "guest-b.elf -r pages")


# ---------------------------------------------------------------------------
# ELF layout rules on small files written here
# ---------------------------------------------------------------------------
@test
def elf_addressing_rules():
    """p_paddr if non-zero else p_vaddr; whole pages of p_filesz only; segments
    without file data and PT_NOTE are no pages; unaligned offsets."""
    rnd = random.Random(3)
    pg = [rnd.randbytes(PAGE) for _ in range(12)]
    segs = [
        dict(type=PT_NOTE, data=b"\0" * 40),
        dict(paddr=0x200000, vaddr=0xffffffff81000000, data=b"".join(pg[0:3])),
        dict(paddr=0, vaddr=0x7f0000001000, data=b"".join(pg[3:5])),
        # p_memsz beyond p_filesz: only 2 pages are in the file
        dict(paddr=0x900000, vaddr=0, data=b"".join(pg[5:7]), memsz=10 * PAGE),
        # no file data at all
        dict(paddr=0xa00000, vaddr=0, data=b"", memsz=4 * PAGE),
        # a partial page at the end: 2 whole pages + 100 bytes
        dict(paddr=0xb00000, vaddr=0, data=b"".join(pg[7:9]) + pg[9][:100]),
        dict(paddr=0x1000, vaddr=0x5000, data=ZERO + pg[10]),
    ]
    img, _ = build_elf(segs, pad=3)
    path = write("rules.elf", img)
    exp = ([(0x200000 + i * PAGE, pg[i]) for i in range(3)] +
           [(0x7f0000001000 + i * PAGE, pg[3 + i]) for i in range(2)] +
           [(0x900000 + i * PAGE, pg[5 + i]) for i in range(2)] +
           [(0xb00000 + i * PAGE, pg[7 + i]) for i in range(2)] +
           [(0x1000, ZERO), (0x2000, pg[10])])
    r = run(["-r", "pages", "-a", "xxh64", "--csv", path])
    sane(r, "ELF rules")
    check(r.rc == 0, "ELF with a partial last page: exit status 0 (warning only)", r.brief())
    check_pages_report(r, path, exp, "ELF addressing rules")
    rows = summary(["-f", "elf", path], "ELF rules with -f elf")
    if rows:
        eq(rows[0].get("format"), "elf", "-f elf: format column")
        eq(as_int(rows[0].get("pages")), len(exp), "-f elf: pages")
    # -f raw on the same file: file offsets, whole pages of the file
    rows = summary(["-f", "raw", "-r", "pages", "-a", "xxh64", path], "-f raw on an ELF")
    want = [("0x%x" % (i * PAGE), xxh64(img[i * PAGE:(i + 1) * PAGE]))
            for i in range(len(img) // PAGE)]
    eq([(x.get("address"), x.get("xxh64")) for x in rows], want,
       "-f raw on an ELF: pages at file offsets")


@test
def elf_pn_xnum():
    """More than 65534 program headers: e_phnum = PN_XNUM, count in sh_info of
    section header 0. 66000 one-page segments sharing 6 pages of file data:
    file bytes that several segments claim are counted once, for the first
    segment in file order that claims them (a warning names the overlap)."""
    rnd = random.Random(4)
    blobs = [ZERO] + [rnd.randbytes(PAGE) for _ in range(5)]
    n = 66000
    base = 64 + 56 * n + 64 + 8
    segs = [dict(paddr=0x100000000 + i * 2 * PAGE, offset=base + (i % 6) * PAGE,
                 filesz=PAGE, memsz=PAGE) for i in range(n)]
    img, _ = build_elf(segs, pad=8, xnum=True)
    img = img[:base] + b"".join(blobs)
    path = write("xnum.elf", img)
    rows = summary(["-a", "xxh64", path], "PN_XNUM")
    if rows:
        check_figures(rows[0], {"pages": 6, "zero_pages": 1, "distinct_pages": 6,
                                "pages_shared": 0, "pages_sharing": 0},
                      "PN_XNUM 66000 segments over 6 file pages")
    r = run(["-r", "pages", "-a", "xxh64", "--csv", "--range=0x100000000-0x100006000", path])
    sane(r, "PN_XNUM range")
    check_pages_report(r, path, [(0x100000000 + i * 2 * PAGE, blobs[i % 6]) for i in range(3)],
                       "PN_XNUM --range")


@test
def broken_elf():
    img, phdrs = synth_files()["elf"]
    tm, n = synth_truth(), len(synth_pages())
    kw = dict(max_pages=n, truth_map=tm)
    first = phdrs[0]
    broken("ELF truncated in the ELF header", img[:40], ("truncated",), **kw)
    broken("ELF truncated in the program headers", img[:64 + 56 + 20],
           ("program header", "past the end", "truncated", "fit"), **kw)
    broken("ELF truncated in segment data", img[:first["offset"] + 5 * PAGE + 123],
           ("past the end", "truncated"), **kw)
    broken("ELF e_phnum 65000", patched(img, 56, "<H", 65000),
           ("program header", "past the end", "fit"), **kw)
    broken("ELF e_phoff past the end", patched(img, 32, "<Q", len(img) + 4096),
           ("program header", "past the end", "fit"), **kw)
    broken("ELF e_phoff near 2^64", patched(img, 32, "<Q", 2 ** 64 - 64),
           ("program header", "past the end", "fit"), **kw)
    ph1 = 64 + 8     # p_offset of the first program header
    broken("ELF p_offset past the end", patched(img, ph1, "<Q", len(img) + PAGE),
           ("past the end",), **kw)
    broken("ELF p_offset + p_filesz overflows 2^64",
           patched(img, ph1, "<QQQQ", 2 ** 64 - PAGE, first["vaddr"], first["paddr"],
                   3 * PAGE), ("past the end",), **kw)
    # the rest of the file is then the segment's data: no page count to hold it to
    broken("ELF p_filesz 2^64-1", patched(img, 64 + 32, "<Q", 2 ** 64 - 1),
           ("past the end",))
    broken("ELF p_filesz 2^63 at p_offset 1", patched(patched(img, 64 + 32, "<Q", 2 ** 63),
                                                      ph1, "<Q", 1), ("past the end",))
    broken("ELF PN_XNUM with e_shoff past the end",
           patched(patched(img, 40, "<Q", len(img) + 10), 56, "<H", 0xffff),
           ("past the end", "section"), **kw)
    xn = patched(img, 56, "<H", 0xffff)
    xn = patched(xn, 40, "<Q", len(img))
    xn = xn + patched(bytes(64), 44, "<I", 0xfffffff0)
    broken("ELF PN_XNUM with sh_info 0xfffffff0", xn,
           ("program header", "past the end", "fit"), **kw)
    broken("ELF e_phentsize 8", patched(img, 54, "<H", 8),
           ("program header", "size"), **kw)
    broken("ELF 32-bit", img[:4] + b"\x01" + img[5:], ("32-bit",), **kw)
    broken("ELF big-endian", img[:5] + b"\x02" + img[6:], ("big-endian",), **kw)
    broken("ELF not a core (ET_EXEC)", patched(img, 16, "<H", 2), ("core",), **kw)


@test
def elf_hostile_notes():
    """Notes are read only for names: bad notes must not crash or read out of
    bounds. The PT_NOTE segment is the last bytes of a file whose size is a
    multiple of the page size, so an over-read runs off the mapping."""
    rnd = random.Random(8)
    pg = [rnd.randbytes(PAGE) for _ in range(2)]
    notes = [
        # namesz 0, descsz 2: the 4-byte aligned end lies 2 bytes past the segment
        struct.pack("<III", 0, 2, 1) + b"ab",
        # namesz huge
        struct.pack("<III", 0xfffffff0, 4, 1) + b"CORE",
        # NT_FILE (0x46494c45) with a count far beyond its size
        struct.pack("<III", 5, 32, 0x46494c45) + b"CORE\0\0\0\0" +
        struct.pack("<QQQQ", 2 ** 62, PAGE, 0, 0),
        # NT_FILE whose names run off the end (no terminating NUL)
        struct.pack("<III", 5, 16 + 24 + 6, 0x46494c45) + b"CORE\0\0\0\0" +
        struct.pack("<QQQQQ", 1, PAGE, 0x400000, 0x402000, 0) + b"abcdef",
    ]
    for i, note in enumerate(notes):
        data = b"".join(pg)
        head = 64 + 56 * 2
        total = -(-(head + len(data) + len(note)) // PAGE) * PAGE
        pad = total - head - len(data) - len(note)
        segs = [dict(paddr=0, vaddr=0x400000, data=data),
                dict(type=PT_NOTE, data=note)]
        img, _ = build_elf(segs, pad=pad)
        assert len(img) % PAGE == 0 and img.endswith(note)
        path = write("note%d.elf" % i, img)
        # an over-read past the mapping shows only when the next page is not
        # mapped (address-space layout differs run to run): try a few times
        for _ in range(7):
            r = run(["-r", "pages", "-a", "xxh64", "--csv", path])
            if r.rc not in (0, 1) or r.timed_out or any(
                    not l.startswith("ksmscan: ") for l in r.err.splitlines()):
                break
        if sane(r, "ELF hostile note %d" % i):
            check(r.rc in (0, 1), "ELF hostile note %d: exit status 0 or 1" % i, r.brief())
            check_pages_report(r, path, [(0x400000, pg[0]), (0x401000, pg[1])],
                               "ELF hostile note %d: pages still read" % i)


if __name__ == "__main__":
    sys.exit(main())
