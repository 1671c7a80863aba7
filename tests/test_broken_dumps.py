#!/usr/bin/python3
"""Broken input common to every dump format: cut short, zstd-compressed and
broken, or named with the wrong -f.

    /usr/bin/python3 tests/test_broken_dumps.py [NAME-SUBSTRING...]

- about 20 prefixes of each small valid dump (ELF, kdump, LiME), from a file
  and some through a pipe: exit 1, the input named first, no crash, only
  pages of the intact dump reported;
- zstd: garbage after the magic, a magic alone; each format's .zst cut,
  without its checksum, with garbage after the frame, with corrupted data,
  and cut through a pipe: the pages decoded before the problem still count;
- `-f elf` on a LiME file, `-f lime` on an ELF core, `-f kdump` on a raw
  image: exit 1, the format named.

Per-format defects are in test_format_elf.py, test_format_kdump.py and
test_format_lime.py; the committed corpus of broken dumps in
test_broken_dumps_corpus.py. Oracle: the bytes written here.
"""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import check, eq  # noqa: E402
from dump_helpers import (PAGE, ZERO, broken, expect_broken, lime_header, main,
                          reported_subset, run, runs_of, sane, synth_files,
                          synth_pages, synth_truth, test, write, xxh64, zstd_bytes)  # noqa: E402


@test
def format_override_mismatch():
    files = synth_files()
    lime = write("mismatch.lime", files["lime"])
    elf = write("mismatch.elf", files["elf"][0])
    raw = write("mismatch.raw", b"".join(d for _, d in synth_pages()))
    expect_broken(run(["--csv", "-f", "elf", lime]), lime, "-f elf on a LiME file",
                  ("elf",), offset=False)
    expect_broken(run(["--csv", "-f", "lime", elf]), elf, "-f lime on an ELF file",
                  ("lime",), offset=False)
    expect_broken(run(["--csv", "-f", "kdump", raw]), raw, "-f kdump on a raw image",
                  ("kdump",), offset=False)


@test
def broken_zstd():
    files = synth_files()
    tm, n = synth_truth(), len(synth_pages())
    rnd = random.Random(12)
    broken("zstd magic then garbage", b"\x28\xb5\x2f\xfd" + rnd.randbytes(5000),
           ("zstd",), offset=False)
    broken("zstd magic only", b"\x28\xb5\x2f\xfd", ("zstd",), offset=False)
    raw = b"".join(d for _, d in synth_pages())
    for fmt, data in (("raw", raw), ("ELF", files["elf"][0]), ("kdump", files["kdump"][0]),
                      ("flattened kdump", files["flat"]), ("LiME", files["lime"])):
        z = zstd_bytes(data)
        mapped = tm if fmt != "raw" else {"0x%x" % (i * PAGE): xxh64(raw[i * PAGE:(i + 1) * PAGE])
                                         for i in range(len(raw) // PAGE)}
        for cut in (len(z) // 4, len(z) // 2):
            broken("%s.zst truncated at %d of %d" % (fmt, cut, len(z)), z[:cut],
                   ("zstd", "truncated"), offset=False, max_pages=n, truth_map=mapped)
        # every page was decompressed before the problem: all of them still count
        label = "%s.zst without its last 3 bytes (checksum)" % fmt
        got = broken(label, z[:-3], ("zstd", "truncated"), offset=False, max_pages=n,
                     truth_map=mapped)
        eq(got, n, label + ": all pages, decompressed before the end, still count")
        label = "%s.zst with garbage after the frame" % fmt
        got = broken(label, z + b"\x01\x02garbage" * 4, ("zstd",), offset=False,
                     max_pages=n, truth_map=mapped)
        eq(got, n, label + ": all pages, decompressed before the garbage, still count")
        b = bytearray(z)
        b[len(b) // 2] ^= 0x55
        b[len(b) // 2 + 1] ^= 0xaa
        # (bytes decoded before the frame checksum is checked may be wrong)
        broken("%s.zst with corrupted data" % fmt, bytes(b), ("zstd",), offset=False,
               max_pages=n)
        r = run(["--csv", "-"], input=z[:len(z) // 2])
        expect_broken(r, "-", "%s.zst truncated through a pipe" % fmt, ("zstd", "truncated"),
                      offset=False)
    # a LiME range of 600 pages of which the zstd stream holds 550: the
    # streaming reader asks for more than arrives before the zstd problem
    rnd = random.Random(14)
    big = [rnd.randbytes(PAGE) if i % 3 else ZERO for i in range(550)]
    lime = lime_header(0x40000000, 0x40000000 + 600 * PAGE - 1) + b"".join(big)
    z = zstd_bytes(lime, level=1)
    tmap = {"0x%x" % (0x40000000 + i * PAGE): xxh64(d) for i, d in enumerate(big)}
    for label, blob in (("without its last 3 bytes", z[:-3]),
                        ("with garbage after the frame", z + b"garbage!" * 3),
                        ("(intact zstd)", z)):
        label = "LiME.zst, 550 of 600 pages of a range, " + label
        got = broken(label, blob, ("zstd", "LiME", "truncated"), offset=False,
                     max_pages=550, truth_map=tmap)
        eq(got, 550, label + ": the 550 pages decompressed before the problem still count")


@test
def truncation_sweep():
    """~20 prefixes of each small valid dump: exit 1, no crash, only real pages."""
    files = synth_files()
    tm, n = synth_truth(), len(synth_pages())
    img, phdrs = files["elf"]
    kd, info = files["kdump"]
    lime = files["lime"]
    lime_bounds = set()
    pos = 0
    for start, datas in runs_of(synth_pages()):
        lime_bounds.add(pos)
        pos += 32 + len(datas) * PAGE
    rnd = random.Random(13)

    def cuts(total, fixed, magic):
        c = set(x for x in fixed if magic <= x < total)
        while len(c) < 20:
            c.add(rnd.randrange(magic, total))
        return sorted(c)

    data_end = max(p["offset"] + p["filesz"] for p in phdrs)
    sets = [
        ("ELF", img, cuts(data_end, [4, 30, 63, 64, 100, 64 + 56 * 3 - 1,
                                     phdrs[0]["offset"], phdrs[0]["offset"] + PAGE + 1,
                                     phdrs[1]["offset"] + 17, data_end - 1], 4)),
        ("kdump", kd, cuts(len(kd), [8, 200, 463, 464, PAGE + 20, PAGE * 2 + 10,
                                     info["desc_off"] + 1, info["desc_off"] + 24 * 20,
                                     info["data_off"] + 3, len(kd) - 1], 8)),
        ("LiME", lime, [c for c in cuts(len(lime), [4, 16, 31, 33, 32 + PAGE,
                                                    32 + 24 * PAGE + 31, len(lime) - 1], 4)
                        if c not in lime_bounds]),
    ]
    for fmt, data, cs in sets:
        # a few through a pipe (the streaming and temporary-copy paths)
        for cut in cs[::7]:
            label = "%s truncated at %d of %d, through a pipe" % (fmt, cut, len(data))
            r = run(["--csv", "-r", "pages", "-a", "xxh64", "-"], input=data[:cut])
            if sane(r, label):
                check(r.rc == 1, label + ": exit status 1", r.brief())
                check(r.err.startswith("ksmscan: -: "),
                      label + ": first stderr line names '-'", repr(r.err[:200]))
            reported_subset(r, tm, label)
        for cut in cs:
            label = "%s truncated at %d of %d" % (fmt, cut, len(data))
            path = write("cut", data[:cut])
            r = run(["--csv", "-r", "pages", "-a", "xxh64", path])
            if sane(r, label):
                check(r.rc == 1, label + ": exit status 1", r.brief())
                check(r.err.startswith("ksmscan: %s: " % path),
                      label + ": first stderr line names the file", repr(r.err[:200]))
            got = reported_subset(r, tm, label)
            check(got <= n, label + ": pages <= %d" % n, str(got))


if __name__ == "__main__":
    sys.exit(main())
