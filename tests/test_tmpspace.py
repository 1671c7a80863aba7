#!/usr/bin/python3
"""Temporary space: no input makes a read of a temporary copy fault.

A stream that must be read at random (an ELF core whose program headers
come late, a flattened kdump, a qemu-save stream read twice) is copied to
$TMPDIR, zero blocks left as holes. On tmpfs a hole takes a page when it is
read, so a copy of mostly zeros that fits while written can fill the file
system when read back, and the read dies of SIGBUS. Here every reader (ELF,
flattened kdump, LiME, qemu-save, raw, and each compression layer around
them) reads inputs made of zeros, holes and far offsets with $TMPDIR on a
small tmpfs mounted for the test (root only; skipped otherwise, with the
reason). The oracle is the operating system: the exit status (1 where the
copy cannot fit, never a signal), one line on standard error naming the
reserve, and the tmpfs's free space watched while it runs.
"""
import bz2
import csv
import io
import gzip
import lzma
import os
import random
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, check, eq, run_suite, test, tmp, tmpfs  # noqa: E402
import zstandard  # noqa: E402

MIB = 1 << 20
TMPFS_MIB = 6


def elf_far_headers(far, fill=b"\0"):
    """An ELF core whose program headers sit after @far bytes of @fill, one
    PT_LOAD of 2 MiB of them in the middle."""
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 4, 62, 1,
                       0, far, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 6, far // 2, 0x100000, 0, 2 * MIB, 2 * MIB, 0)
    return ehdr + fill * (far - 64) + phdr


def kdump_header(max_mapnr):
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<i", hdr, 8, 6)
    struct.pack_into("<iiiI", hdr, 428, PAGE, 1, 2, max_mapnr)
    struct.pack_into("<IIIii", hdr, 444, max_mapnr, 0, 0, 0, 1)
    sub = bytearray(PAGE)
    struct.pack_into("<Qi", sub, 0, 0, 1)
    struct.pack_into("<QQQ", sub, 80, 0, max_mapnr, max_mapnr)
    return bytes(hdr) + bytes(sub)


def flat_kdump_holes(npages, far):
    """A flattened kdump of @npages pages whose descriptors point at page
    data past @far, where no record writes: holes of the assembled file."""
    bitmap = bytearray(PAGE)
    for pfn in range(npages):
        bitmap[pfn >> 3] |= 1 << (pfn & 7)
    desc_off = 4 * PAGE
    descs = b"".join(struct.pack("<QIIQ", far + pfn * PAGE, PAGE, 0, 0)
                     for pfn in range(npages))
    recs = [(0, kdump_header(npages)), (2 * PAGE, bytes(bitmap) + bytes(bitmap)),
            (desc_off, descs),
            # the file's end, one zero byte past the last page's data
            (far + npages * PAGE, b"\0")]
    out = [(b"makedumpfile".ljust(16, b"\0") + struct.pack(">qq", 1, 1)).ljust(PAGE, b"\0")]
    for off, data in recs:
        out.append(struct.pack(">qq", off, len(data)) + data)
    out.append(struct.pack(">qq", -1, -1))
    return b"".join(out)


def lime_far(far, npages):
    """LiME ranges of zero pages, the second at a far address."""
    a = struct.pack("<IIQQ8s", 0x4C694D45, 1, 0, npages * PAGE - 1, bytes(8))
    b = struct.pack("<IIQQ8s", 0x4C694D45, 1, far, far + npages * PAGE - 1, bytes(8))
    return a + bytes(npages * PAGE) + b + bytes(npages * PAGE)


def qemu_pages(npages, fill=b"\0"):
    """A qemu-save stream sending @npages whole pages of @fill (zeros not
    as its zero-page flag): the stream is copied to be read twice."""
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    size = npages * PAGE
    recs = []
    for i in range(npages):
        flags = 0x08 | (0x20 if i else 0)      # PAGE, CONTINUE after the first
        recs.append(be(8, i * PAGE | flags) + (b"" if i else b"\x06pc.ram") + fill * PAGE)
    out = b"QEVM" + be(4, 3) + b"\x07" + be(4, 4) + b"pc-x"
    out += b"\x01" + be(4, 2) + b"\x03ram" + be(4, 0) + be(4, 4) + be(8, size | 4)
    out += b"\x06pc.ram" + be(8, size)
    out += be(8, 0x10) + b"\x7e" + be(4, 2) + b"\x02" + be(4, 2) + b"".join(recs)
    out += be(8, 0x10) + b"\x7e" + be(4, 2) + b"\x03" + be(4, 2) + be(8, 0x10)
    out += b"\x7e" + be(4, 2)
    return out + b"\x04" + be(4, 3) + b"\x05timer" + be(4, 0) + be(4, 2) + bytes(40)


LAYERS = {
    "": lambda b: b,
    ".zst": lambda b: zstandard.ZstdCompressor(level=1).compress(b),
    ".gz": lambda b: gzip.compress(b, 1),
    ".xz": lambda b: lzma.compress(b, preset=0),
    ".bz2": lambda b: bz2.compress(b, 1),
}


def inputs(rng):
    """(name, format, bytes, zero pages) of every reader, at sizes drawn
    from @rng, each far past the tmpfs: made of zeros, holes and far
    offsets, so read whole (that many zero pages); then made of data that
    cannot fit (None: the reserve error)."""
    far = rng.choice([24, 40, 72]) * MIB + rng.randrange(1, 64) * PAGE
    npages = rng.randrange(3000, 6000)
    yield "elf", "elf", elf_far_headers(far), 2 * MIB // PAGE
    yield "kdump", "kdump", flat_kdump_holes(npages, far), npages
    yield "lime", "lime", lime_far(far * 64, npages // 8), npages // 4
    # Its pages are not aligned in the stream (a header before each): the
    # copy holds no hole, and cannot fit.
    yield "qemu", "auto", qemu_pages(far // PAGE // 2), None
    yield "raw", "raw", bytes(far // 4), far // 4 // PAGE
    yield "elf-data", "elf", elf_far_headers(far, b"\x01"), None
    yield "qemu-data", "auto", qemu_pages(far // PAGE // 4, b"\x02"), None


def tmpfs_run(d, args, stdin_path=None):
    """ksmscan with $TMPDIR at @d; @stdin_path's bytes through a pipe (a
    stream, not a file it could map)."""
    env = dict(os.environ, TMPDIR=d)
    if not stdin_path:
        return subprocess.run(KSMSCAN + args, stdin=subprocess.DEVNULL,
                              capture_output=True, env=env, timeout=300)
    with open(stdin_path, "rb") as f:
        cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
    try:
        return subprocess.run(KSMSCAN + args, stdin=cat.stdout, capture_output=True,
                              env=env, timeout=300)
    finally:
        cat.stdout.close()
        cat.wait()


def check_outcome(p, what, zeros, d):
    """No signal; @zeros zero pages counted and exit 0, or (None) exit 1
    with one error naming the reserve."""
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode >= 0, "%s: no signal death" % what,
          "died of %s" % (signal.Signals(-p.returncode).name if p.returncode < 0 else ""))
    # Further problems of one input are counted in one closing line.
    lines = [l for l in err.splitlines() if "warning" not in l and
             "more problems like the one above" not in l]
    if zeros is None:
        eq(p.returncode, 1, "%s: a copy past the tmpfs: exit 1" % what)
        eq(len(lines), 1, "%s: one error line (%r)" % (what, err[-400:]))
        check("less than 5%" in err, "%s: the error names the reserve" % what, err[-300:])
    else:
        eq((p.returncode, lines), (0, []), "%s: holes read as zeros, no error" % what)
        rows = list(csv.DictReader(io.StringIO(p.stdout.decode())))
        eq([(r["pages"], r["zero_pages"]) for r in rows], [(str(zeros), str(zeros))],
           "%s: every page, all zero" % what)
    st = os.statvfs(d)
    check(not os.listdir(d), "%s: nothing left in $TMPDIR" % what)
    check(st.f_bfree == st.f_blocks, "%s: the tmpfs is empty after the run" % what)


@test("tmpspace")
def every_reader_on_a_small_tmpfs():
    rng = random.Random(int(os.environ.get("KSMSCAN_SEED", "20261202")))
    with tmpfs("%dm" % TMPFS_MIB) as d:
        for name, fmt, data, zeros in inputs(rng):
            for ext, enc in LAYERS.items():
                path = tmp("%s.in%s" % (name, ext))
                with open(path, "wb") as f:
                    f.write(enc(data))
                # A file read through a layer is a stream, and any file
                # piped to standard input; the format named and guessed.
                for args, stdin in (([path], None), (["-"], path)):
                    if not ext and stdin is None:
                        continue        # a mapped file needs no copy
                    for f_opt in (["-f", fmt], []):
                        what = "%s%s %s" % (name, ext, " ".join(f_opt + args))
                        p = tmpfs_run(d, ["--csv"] + f_opt + args, stdin)
                        check_outcome(p, what, zeros, d)
                os.unlink(path)


@test("tmpspace")
def late_headers_copy_fits():
    """A late-headed ELF of 40 MiB, zeros but for its headers, read through a
    24 MiB tmpfs: its zero blocks stay holes of the copy, so it is read
    whole."""
    with tmpfs("%dm" % (TMPFS_MIB * 4)) as d:
        far = 40 * MIB + 5 * PAGE
        path = tmp("fits.elf.zst")
        with open(path, "wb") as f:
            f.write(LAYERS[".zst"](elf_far_headers(far)))
        p = tmpfs_run(d, ["--csv", path])
        eq(p.returncode, 0, "a copy that fits: exit 0 (%s)" % p.stderr.decode()[-200:])
        rows = p.stdout.decode().splitlines()
        check(len(rows) == 2 and rows[1].split(",")[3] == str(2 * MIB // PAGE),
              "its 512 zero pages counted", "\n".join(rows))


if __name__ == "__main__":
    sys.exit(run_suite("tmpspace"))
