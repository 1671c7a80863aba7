#!/usr/bin/python3
"""ksmscan input-format tests: ELF cores, kdump (flattened and assembled),
LiME, zstd-compressed inputs, standard input, live processes (-p) and gcore.

Run from the repository root with Debian's Python (it has the xxhash, crc32c
and zstandard modules):

    /usr/bin/python3 tests/test_formats.py [NAME-SUBSTRING...]

The binary under test is $KSMSCAN (split like a shell word list, so a wrapper
works) or ./ksmscan.  Nothing is compared with a stored output of ksmscan.
The oracles are the fixtures' guest-b.truth.json, the bytes this file writes
itself (ELF, kdump, flattened kdump and LiME files built here from the
makedumpfile / ELF / LiME layouts), and hashlib / python-xxhash computations
over page bytes that this file extracts with its own parsers.

One line per failing check, SKIP lines, and last "N passed, N failed";
exit 1 if anything failed.
"""

import collections
import csv
import hashlib
import io
import json
import mmap
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import DIGEST_COLS, Skip, closing_line, fixture  # noqa: E402
import xxhash  # noqa: E402
import zstandard  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KSMSCAN = shlex.split(os.environ.get("KSMSCAN", "./ksmscan"))
TIMEOUT = 60            # seconds per ksmscan run; a timeout is a failure (hang)
PAGE = 4096
ZERO = bytes(PAGE)
M = 256                 # max_page_sharing of the truth file and the default
TRUTH_ALGOS = ["xxh64", "xxhash", "crc32c", "xxh32"]

# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------
TESTS = []
STATE = {"passed": 0, "failed": 0, "skipped": 0, "current": "", "tmp": None}


def test(f):
    TESTS.append(f)
    return f


def check(cond, what, detail=""):
    if cond:
        STATE["passed"] += 1
    else:
        STATE["failed"] += 1
        print("FAIL [%s] %s%s" % (STATE["current"], what,
                                  (": " + detail) if detail else ""))
    return bool(cond)


def eq(got, exp, what):
    return check(got == exp, what, "expected %r, got %r" % (exp, got))


def tmp(name):
    return os.path.join(STATE["tmp"], name)


def write(name, data):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(data)
    return path


class Run:
    def __init__(self, args, rc, out, err, timed_out=False):
        self.args, self.rc, self.out, self.err = args, rc, out, err
        self.timed_out = timed_out
        self.cmd = " ".join(shlex.quote(a) for a in args)

    def brief(self):
        return "`%s` rc=%r stderr=%r" % (self.cmd, self.rc, self.err[-500:])


def run(args, input=None, pipe=None, timeout=TIMEOUT):
    """Run ksmscan. input= bytes or pipe= a producer command go through a
    pipe to its standard input; otherwise standard input is /dev/null."""
    full = KSMSCAN + list(args)
    env = dict(os.environ, TMPDIR=STATE["tmp"])
    producer = None
    if pipe is not None:
        producer = subprocess.Popen(pipe, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
        stdin = producer.stdout
    elif input is not None:
        stdin = subprocess.PIPE
    else:
        stdin = subprocess.DEVNULL
    p = subprocess.Popen(full, stdin=stdin, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    if producer is not None:
        producer.stdout.close()
    timed_out = False
    try:
        out, err = p.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        timed_out = True
    if producer is not None:
        try:
            producer.wait(timeout=10)
        except subprocess.TimeoutExpired:
            producer.kill()
            producer.wait()
    return Run(full, p.returncode, out.decode("utf-8", "replace"),
               err.decode("utf-8", "replace"), timed_out)


def sane(r, what):
    """No hang, no crash, no sanitizer report: exit status 0, 1 or 2 and every
    line of standard error a "ksmscan: " message."""
    ok = check(not r.timed_out, what + ": finishes (no hang)",
               "timed out after %ds: %s" % (TIMEOUT, r.cmd))
    ok &= check(r.rc in (0, 1, 2), what + ": exit status 0, 1 or 2 (no crash)",
                r.brief())
    bad = [l for l in r.err.splitlines() if not l.startswith("ksmscan: ")]
    ok &= check(not bad, what + ": every standard error line is a ksmscan: "
                "message (no sanitizer or crash report)", "%r in %s" % (bad[:3], r.brief()))
    return ok


def parse_csv(r, what):
    try:
        rows = list(csv.DictReader(io.StringIO(r.out, newline="")))
    except csv.Error as e:
        check(False, what + ": CSV parses", "%s: %r" % (e, r.out[:300]))
        return []
    # Digests are 0x-prefixed in CSV: checked, then compared without it.
    bad = [(k, v) for row in rows for k, v in row.items()
           if k in DIGEST_COLS and not (v or "").startswith("0x")]
    check(not bad, what + ": digests are 0x-prefixed", repr(bad[:3]))
    for row in rows:
        for k in DIGEST_COLS & set(row):
            if (row[k] or "").startswith("0x"):
                row[k] = row[k][2:]
    return rows


def run_ok(args, what, **kw):
    r = run(args, **kw)
    if sane(r, what):
        check(r.rc == 0, what + ": exit status 0", r.brief())
    return r


def as_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def expect_broken(r, name, what, words=(), offset=True):
    """A broken input: exit status 1, first stderr line "ksmscan: NAME:",
    where natural naming an offset and a key word."""
    if not sane(r, what):
        return False
    ok = check(r.rc == 1, what + ": exit status 1", r.brief())
    lines = r.err.splitlines()
    first = lines[0] if lines else ""
    ok &= check(first.startswith("ksmscan: %s: " % name),
                what + ": first stderr line starts 'ksmscan: %s: '" % name, repr(r.err[:300]))
    if offset:
        ok &= check("offset" in first, what + ": message names the offset", repr(first))
    if words:
        low = first.lower()
        ok &= check(any(w.lower() in low for w in words),
                    what + ": message says one of %r" % (list(words),), repr(first))
    return ok


# ---------------------------------------------------------------------------
# Oracles: page sets and the KSM model (docs/model.md) figures
# ---------------------------------------------------------------------------
def xxh64(p):
    return "%016x" % xxhash.xxh64_intdigest(p, 0)


def figures(contents):
    """pages, zero_pages, distinct_pages, pages_shared, pages_sharing of a
    list of page contents; identity by SHA-256 of the bytes."""
    counts = collections.Counter(hashlib.sha256(p).digest() for p in contents)
    zkey = hashlib.sha256(ZERO).digest()
    shared = sharing = 0
    for c in counts.values():
        if c >= 2:
            # KSM as measured on Linux 6.18: a single leftover page beyond
            # full KSM pages is not merged (see README, test_ksm_live.py).
            s = -(-c // M)
            shared += s - (c > M and c % M == 1)
            sharing += c - s
    return {"pages": len(contents), "zero_pages": counts.get(zkey, 0),
            "distinct_pages": len(counts), "pages_shared": shared,
            "pages_sharing": sharing}


def check_figures(row, exp, what):
    for k, v in exp.items():
        eq(as_int(row.get(k)), v, "%s: %s" % (what, k))


def summary(args, what, expect_rc=0, **kw):
    """Run a --csv summary; return its rows (checks sanity and exit status)."""
    r = run(["--csv"] + list(args), **kw)
    if sane(r, what):
        check(r.rc == expect_rc, what + ": exit status %d" % expect_rc, r.brief())
    return parse_csv(r, what)


def check_pages_report(r, name, expected, what):
    """-r pages -a xxh64 rows == expected [(address, bytes)] in address order."""
    rows = parse_csv(r, what)
    # The reports do not fix the row order of an ELF or LiME (scan order or address
    # order): rows are compared by address, and each address must occur once
    try:
        rows.sort(key=lambda x: int(x.get("address") or "-1", 16))
    except ValueError:
        check(False, what + ": addresses are 0x hex", repr([x.get("address") for x in rows][:5]))
    exp = sorted(expected, key=lambda t: t[0])
    if not eq(len(rows), len(exp), what + ": page rows"):
        got = {x.get("address") for x in rows}
        want = {"0x%x" % a for a, _ in exp}
        check(False, what + ": addresses", "missing %s, unexpected %s" % (
            sorted(want - got)[:5], sorted(got - want)[:5]))
        return
    bad = []
    for row, (addr, data) in zip(rows, exp):
        want = (name, "0x%x" % addr, "1" if data == ZERO else "0", xxh64(data))
        got = (row.get("input"), row.get("address"), row.get("zero"), row.get("xxh64"))
        if got != want:
            bad.append("got %r expected %r" % (got, want))
    check(not bad, what + ": every page's input, address, zero flag and xxh64",
          "%d wrong, first: %s" % (len(bad), bad[:2]))


def reported_subset(r, truth, what):
    """Pages a broken input reports are real pages: (address, xxh64) pairs of
    the intact input."""
    rows = parse_csv(r, what)
    bad = [(x.get("address"), x.get("xxh64")) for x in rows
           if truth.get(x.get("address")) != x.get("xxh64")]
    check(not bad, what + ": reported pages are pages of the intact input "
          "(address and xxh64)", "%d foreign, first %r" % (len(bad), bad[:3]))
    return len(rows)


# ---------------------------------------------------------------------------
# Writers of the formats (from their specifications, not from ksmscan)
# ---------------------------------------------------------------------------
PT_LOAD, PT_NOTE = 1, 4
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")


def elf_ident(cls=2, data=1):
    return b"\x7fELF" + bytes([cls, data, 1, 0]) + bytes(8)


def build_elf(segs, pad=0x508 - 64 - 56 * 4, xnum=False, etype=4):
    """segs: dicts with type, vaddr, paddr, data, memsz (default len(data)),
    offset (default: next free, unaligned). Returns (bytes, phdr list)."""
    n = len(segs)
    phoff = 64
    shoff = 0
    hdr_end = phoff + 56 * n
    if xnum:
        shoff = hdr_end
        hdr_end += 64
    off = hdr_end + pad
    phdrs, blobs = [], []
    for s in segs:
        data = s.get("data", b"")
        o = s.get("offset")
        if o is None:
            o = off
            blobs.append((o, data))
            off += len(data)
        phdrs.append(dict(type=s.get("type", PT_LOAD), offset=o, vaddr=s.get("vaddr", 0),
                          paddr=s.get("paddr", 0), filesz=s.get("filesz", len(data)),
                          memsz=s.get("memsz", len(data))))
    out = bytearray(off)
    out[0:64] = EHDR.pack(elf_ident(), etype, 62, 1, 0, phoff, shoff, 0, 64, 56,
                          0xffff if xnum else n, 64 if xnum else 0,
                          1 if xnum else 0, 0)
    for i, p in enumerate(phdrs):
        out[phoff + 56 * i: phoff + 56 * (i + 1)] = PHDR.pack(
            p["type"], 6, p["offset"], p["vaddr"], p["paddr"], p["filesz"], p["memsz"], 0)
    if xnum:
        # section header 0: sh_info (offset 44) holds the program header count
        sh = bytearray(64)
        struct.pack_into("<I", sh, 44, n)
        out[shoff:shoff + 64] = sh
    for o, data in blobs:
        out[o:o + len(data)] = data
    return bytes(out), phdrs


def parse_elf(buf):
    """Own ELF64 parser: PT_LOAD program headers and (address, page) pairs."""
    ident, etype, mach, ver, entry, phoff, shoff, flags, ehsize, phentsize, phnum, \
        shentsize, shnum, shstrndx = EHDR.unpack_from(buf, 0)
    assert ident[:4] == b"\x7fELF" and ident[4] == 2 and ident[5] == 1
    if phnum == 0xffff:
        phnum = struct.unpack_from("<I", buf, shoff + 44)[0]
    loads, pages = [], []
    for i in range(phnum):
        typ, fl, off, vaddr, paddr, filesz, memsz, align = PHDR.unpack_from(
            buf, phoff + i * phentsize)
        if typ != PT_LOAD or filesz == 0:
            continue
        base = paddr if paddr else vaddr
        loads.append(dict(index=i, offset=off, vaddr=vaddr, paddr=paddr,
                          filesz=filesz, memsz=memsz, start=base))
        for k in range(filesz // PAGE):
            pages.append((base + k * PAGE, buf[off + k * PAGE: off + (k + 1) * PAGE]))
    return loads, pages


ZC = zstandard.ZstdCompressor(level=1)


def kdump_codec_mix(i, data):
    """The i-th non-zero page: zstd, zlib or stored, in turn."""
    return ("zstd", "zlib", "raw")[i % 3]


def build_kdump(pages, codec=kdump_codec_mix, share_zero=True, version=6,
                block_size=4096, dump_level=1, max_mapnr=None, sub_blocks=1):
    """A kdump-compressed assembled file (makedumpfile diskdump_mod.h layout,
    little-endian). pages: [(pfn, bytes)] in pfn order. Returns (bytes, info):
    info has desc_off, bitmap_off, bitmap_blocks and per page (pfn, desc at,
    data off, size, flags)."""
    pfns = [p for p, _ in pages]
    assert pfns == sorted(set(pfns))
    if max_mapnr is None:
        max_mapnr = (pfns[-1] + 1) if pfns else 1
    bm_bytes = -(-max_mapnr // 8)
    half_blocks = max(1, -(-bm_bytes // PAGE))
    bitmap_blocks = 2 * half_blocks
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<i", hdr, 8, version)
    struct.pack_into("<iiiI", hdr, 428, block_size, sub_blocks, bitmap_blocks,
                     max_mapnr & 0xffffffff)
    struct.pack_into("<IIIii", hdr, 444, max_mapnr & 0xffffffff, 0, 0, 0, 1)
    sub = bytearray(PAGE * sub_blocks)
    struct.pack_into("<Qi", sub, 0, 0, dump_level)
    struct.pack_into("<QQQ", sub, 80, 0, max_mapnr, max_mapnr)
    bitmap = bytearray(half_blocks * PAGE)
    for pfn in pfns:
        bitmap[pfn >> 3] |= 1 << (pfn & 7)
    bitmap_off = PAGE * (1 + sub_blocks)
    desc_off = bitmap_off + bitmap_blocks * PAGE
    data_off = desc_off + 24 * len(pages)
    descs = bytearray(24 * len(pages))
    data = []
    pos = data_off
    zero_at = None
    info = []
    nz = 0
    for i, (pfn, page) in enumerate(pages):
        if share_zero and page == ZERO:
            if zero_at is None:
                zero_at = pos
                data.append(ZERO)
                pos += PAGE
            off, blob, flags = zero_at, ZERO, 0
        else:
            kind = codec(nz, page)
            nz += 1
            if kind == "zstd":
                blob, flags = ZC.compress(page), 0x20
            elif kind == "zlib":
                blob, flags = zlib.compress(page, 1), 0x1
            else:
                blob, flags = bytes(page), 0
            if len(blob) >= PAGE:
                # As makedumpfile and QEMU do: a page that does not shrink
                # is stored whole (readers such as crash reject compressed
                # data larger than a block).
                blob, flags = bytes(page), 0
            off = pos
            data.append(blob)
            pos += len(blob)
        struct.pack_into("<QIIQ", descs, 24 * i, off, len(blob), flags, 0)
        info.append(dict(pfn=pfn, desc=desc_off + 24 * i, off=off, size=len(blob),
                         flags=flags))
    img = b"".join([bytes(hdr), bytes(sub), bytes(bitmap), bytes(bitmap),
                    bytes(descs)] + data)
    return img, dict(desc_off=desc_off, bitmap_off=bitmap_off,
                     bitmap_blocks=bitmap_blocks, data_off=data_off, pages=info)


def flat_header(typ=1, version=1):
    return (b"makedumpfile".ljust(16, b"\0") + struct.pack(">qq", typ, version)).ljust(
        PAGE, b"\0")


def flatten(img, records=None, end=True):
    """makedumpfile flattened format: a 4096-byte header, then big-endian
    (offset, size) records and their data, then (-1, -1)."""
    if records is None:
        records = [(o, min(1 << 20, len(img) - o)) for o in range(0, len(img), 1 << 20)]
    out = [flat_header()]
    for off, size in records:
        out.append(struct.pack(">qq", off, size))
        out.append(img[off:off + size])
    if end:
        out.append(struct.pack(">qq", -1, -1))
    return b"".join(out)


def qemu_like_records(img, info, desc_chunk=16 * 1024, data_chunk=64 * 1024):
    """Records in the order QEMU / makedumpfile write them: header, sub-header,
    bitmaps, then descriptor and page-data caches flushed as they fill."""
    recs = [(0, 464), (PAGE, PAGE), (info["bitmap_off"], info["bitmap_blocks"] * PAGE)]
    d_off, d_end = info["desc_off"], info["data_off"]
    p_off, p_end = info["data_off"], len(img)
    while d_off < d_end or p_off < p_end:
        if p_off < p_end:
            n = min(data_chunk, p_end - p_off)
            recs.append((p_off, n))
            p_off += n
        if d_off < d_end:
            n = min(desc_chunk, d_end - d_off)
            recs.append((d_off, n))
            d_off += n
    return recs


LIME_MAGIC = 0x4C694D45


def lime_header(start, end, magic=LIME_MAGIC, version=1):
    return struct.pack("<IIQQ8s", magic, version, start, end, bytes(8))


def runs_of(pages):
    """Contiguous runs of [(address, bytes)] (address order)."""
    runs = []
    for addr, data in pages:
        if runs and runs[-1][0] + len(runs[-1][1]) * PAGE == addr:
            runs[-1][1].append(data)
        else:
            runs.append((addr, [data]))
    return runs


def build_lime(pages):
    out = []
    for start, datas in runs_of(pages):
        out.append(lime_header(start, start + len(datas) * PAGE - 1))
        out.extend(datas)
    return b"".join(out)


def zstd_bytes(data, level=3):
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)


# ---------------------------------------------------------------------------
# Data: the fixture and a small synthetic page set
# ---------------------------------------------------------------------------
CACHE = {}


def truth():
    if "truth" not in CACHE:
        with open(fixture("guest-b.truth.json")) as f:
            CACHE["truth"] = json.load(f)
    return CACHE["truth"]


def fixture_elf():
    """The decompressed ELF (path), its PT_LOADs and pages, parsed here."""
    if "elf" not in CACHE:
        path = tmp("guest-b.elf")
        with open(path, "wb") as out:
            subprocess.run(["zstd", "-dc", fixture("guest-b.elf.zst")], stdout=out,
                           check=True, timeout=120)
        f = open(path, "rb")
        buf = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        loads, pages = parse_elf(buf)
        f.close()
        CACHE["elf"] = (path, loads, pages)
        t = truth()
        own = figures([p for _, p in pages])
        # the oracle itself must agree with the truth file
        for k in ("pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing"):
            if own[k] != t[k]:
                raise RuntimeError("own ELF parse gives %s=%d, truth %d" % (k, own[k], t[k]))
    return CACHE["elf"]


def truth_rows_check(rows, name, fmt, what, algos=TRUTH_ALGOS):
    t = truth()
    if not eq([r.get("algo") for r in rows], algos, what + ": one row per algorithm"):
        return
    for r in rows:
        w = "%s [%s]" % (what, r["algo"])
        eq(r.get("input"), name, w + ": input")
        eq(r.get("format"), fmt, w + ": format")
        for k in ("pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing"):
            eq(as_int(r.get(k)), t[k], w + ": " + k)
        eq(as_int(r.get("collisions")), t["collisions"][r["algo"]], w + ": collisions")
        eq(as_int(r.get("saved_bytes")), t["pages_sharing"] * PAGE, w + ": saved_bytes")


def synth_pages():
    """48 pages in three runs of a small address space: zero pages, repeated
    pages, near-duplicates and random pages (seeded)."""
    if "synth" in CACHE:
        return CACHE["synth"]
    rnd = random.Random(20240611)
    A = rnd.randbytes(PAGE)
    B = bytes([0xab]) * PAGE
    C = b"ksmscan " * (PAGE // 8)
    pages = []
    g = 0
    for start, n in ((0x100000, 24), (0x400000, 16), (0x10000000, 8)):
        for k in range(n):
            kind = g % 6
            if kind == 0:
                d = ZERO
            elif kind == 1:
                d = A
            elif kind == 3:
                d = B
            elif kind == 5:
                i = (g * 97) % PAGE
                d = C[:i] + bytes([C[i] ^ 0xff]) + C[i + 1:]
            else:
                d = rnd.randbytes(PAGE)
            pages.append((start + k * PAGE, d))
            g += 1
    CACHE["synth"] = pages
    return pages


def synth_truth():
    return {"0x%x" % a: xxh64(d) for a, d in synth_pages()}


def synth_files():
    """Small valid ELF, assembled kdump, flattened kdump and LiME of synth_pages()."""
    if "synth_files" in CACHE:
        return CACHE["synth_files"]
    pages = synth_pages()
    segs = [dict(paddr=start, vaddr=0xffff000000000000 + start, data=b"".join(d))
            for start, d in runs_of(pages)]
    elf, phdrs = build_elf(segs)
    kd, info = build_kdump([(a // PAGE, d) for a, d in pages])
    lime = build_lime(pages)
    files = dict(elf=(elf, phdrs), kdump=(kd, info), flat=flatten(kd, qemu_like_records(
        kd, info, desc_chunk=240, data_chunk=8192)), lime=lime)
    CACHE["synth_files"] = files
    return files


# ---------------------------------------------------------------------------
# 1. Fixture figures
# ---------------------------------------------------------------------------
TA = ["-a", ",".join(TRUTH_ALGOS)]


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


# ---------------------------------------------------------------------------
# 3. gcore and live processes
# ---------------------------------------------------------------------------
CHILD = r"""
import ctypes, mmap, sys
P = 4096
spec = open(sys.argv[1], 'rb').read()
npriv, nshared, nfile = 64, 16, 8
priv = mmap.mmap(-1, npriv * P, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
try:
    priv.madvise(mmap.MADV_NOHUGEPAGE)
except (AttributeError, OSError):
    pass
untouched = set(range(20, 24))
for i in range(npriv):
    if i not in untouched:
        priv[i * P:(i + 1) * P] = spec[i * P:(i + 1) * P]
shared = mmap.mmap(-1, nshared * P, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
shared[:] = spec[npriv * P:(npriv + nshared) * P]
ff = open(sys.argv[2], 'rb')
fmap = mmap.mmap(ff.fileno(), nfile * P, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
touch = sum(fmap[i * P] for i in range(nfile))
addr = lambda m: ctypes.addressof(ctypes.c_char.from_buffer(m))
print(addr(priv), addr(shared), flush=True)
# the read-only file mapping's address comes from /proc/self/maps
for line in open('/proc/self/maps'):
    if line.rstrip().endswith(sys.argv[2]):
        print(int(line.split('-')[0], 16), flush=True)
        break
for line in sys.stdin:
    if line.strip() == 'change':
        priv[24 * P:25 * P] = spec[(npriv + nshared) * P:(npriv + nshared + 1) * P]
        print('changed', flush=True)
"""


def child_spec():
    rnd = random.Random(11)
    A, B = rnd.randbytes(PAGE), bytes([7]) * PAGE
    priv = ([A] * 10 + [B] * 5 + [ZERO] * 5 + [ZERO] * 4 +
            [rnd.randbytes(PAGE) for _ in range(40)])
    shared = [rnd.randbytes(PAGE) for _ in range(8)] + [A] * 8
    new24 = rnd.randbytes(PAGE)
    filedata = [rnd.randbytes(PAGE) for _ in range(7)] + [ZERO]
    return priv, shared, new24, filedata


class Child:
    def __init__(self):
        self.priv, self.shared, self.new24, self.filedata = child_spec()
        spec = write("child.spec", b"".join(self.priv + self.shared + [self.new24]))
        self.file = write("child.file", b"".join(self.filedata))
        script = write("child.py", CHILD.encode())
        self.p = subprocess.Popen([sys.executable, script, spec, self.file],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().split()
        fline = self.p.stdout.readline().split()
        if len(line) != 2 or len(fline) != 1:
            self.stop()
            raise RuntimeError("child did not start: %r %r" % (line, self.p.stderr.read()))
        self.pa, self.sa = int(line[0]), int(line[1])
        self.fa = int(fline[0])
        self.pid = self.p.pid

    def change(self):
        self.p.stdin.write("change\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip() == "changed"

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def rng(a, n):
    return "--range=0x%x-0x%x" % (a, a + n * PAGE)


@test
def live_process_and_gcore():
    c = Child()
    try:
        try:
            with open("/proc/%d/mem" % c.pid, "rb") as f:
                f.seek(c.pa)
                ok = f.read(PAGE) == c.priv[0]
        except OSError as e:
            raise Skip("cannot read /proc/%d/mem (ptrace not permitted?): %s" % (c.pid, e))
        if not ok:
            raise RuntimeError("child memory does not hold the expected bytes")
        name = "pid:%d" % c.pid
        P = str(c.pid)
        # private anonymous pages: 60 present (4 never touched are not present)
        present = [(c.pa + i * PAGE, d) for i, d in enumerate(c.priv) if not 20 <= i < 24]
        r = run(["-p", P, rng(c.pa, 64), "-r", "pages", "-a", "xxh64", "--csv"])
        if sane(r, "-p pages"):
            check(r.rc == 0, "-p pages: exit status 0", r.brief())
        check_pages_report(r, name, present, "-p PID --range of a private anonymous mapping "
                           "(untouched pages are not present)")
        rows = summary(["-p", P, rng(c.pa, 64)], "-p summary")
        if eq(len(rows), 1, "-p summary: one row"):
            eq(rows[0].get("format"), "pid", "-p summary: format")
            eq(rows[0].get("input"), name, "-p summary: input")
            check_figures(rows[0], figures([d for _, d in present]), "-p summary")
        # a shared anonymous mapping and a file mapping: only with --all-mappings
        for label, a, datas in (("shared anonymous", c.sa, c.shared),
                                ("file-backed", c.fa, c.filedata)):
            rows = summary(["-p", P, rng(a, len(datas))], "-p " + label)
            check(sum(as_int(x.get("pages")) or 0 for x in rows) == 0,
                  "-p without --all-mappings: %s mapping not read" % label,
                  repr([x.get("pages") for x in rows]))
            r = run(["-p", P, "--all-mappings", rng(a, len(datas)), "-r", "pages",
                     "-a", "xxh64", "--csv"])
            sane(r, "--all-mappings " + label)
            check_pages_report(r, name, [(a + i * PAGE, d) for i, d in enumerate(datas)],
                               "-p --all-mappings %s mapping" % label)
        # pages are hashed as they are now
        if check(c.change(), "child changed a page"):
            r = run(["-p", P, rng(c.pa + 24 * PAGE, 1), "-r", "pages", "-a", "xxh64",
                     "--csv"])
            sane(r, "-p after a change")
            check_pages_report(r, name, [(c.pa + 24 * PAGE, c.new24)],
                               "-p sees the page as it is now")
            c.priv[24] = c.new24
        # gcore (after the -p checks: gdb reads untouched pages too)
        core = tmp("core.%d" % c.pid)
        g = subprocess.run(["gdb", "-q", "-batch", "-p", P, "-ex", "gcore " + core],
                           capture_output=True, text=True, timeout=120)
        if not os.path.exists(core):
            STATE["skipped"] += 1
            print("SKIP [%s] gcore: gdb could not write a core (ptrace not permitted?): %s"
                  % (STATE["current"], (g.stdout + g.stderr).strip()[-200:]))
            return
        exp = [(c.pa + i * PAGE, d) for i, d in enumerate(c.priv)]
        r = run([rng(c.pa, 64), "-r", "pages", "-a", "xxh64", "--csv", core])
        if sane(r, "gcore pages"):
            check(r.rc == 0, "gcore pages: exit status 0", r.brief())
        check_pages_report(r, core, exp, "gcore core --range of the private mapping "
                           "(p_vaddr addresses)")
        rows = summary([rng(c.pa, 64), core], "gcore summary")
        if rows:
            eq(rows[0].get("format"), "elf", "gcore summary: format")
            check_figures(rows[0], figures(c.priv), "gcore summary")
        r = run([rng(c.sa, 16), "-r", "pages", "-a", "xxh64", "--csv", core])
        sane(r, "gcore shared")
        check_pages_report(r, core, [(c.sa + i * PAGE, d) for i, d in enumerate(c.shared)],
                           "gcore core --range of the shared mapping")
        os.unlink(core)
    finally:
        c.stop()


@test
def nonexistent_pid():
    p = subprocess.Popen(["/usr/bin/true"])
    p.wait()
    pid = p.pid
    if os.path.exists("/proc/%d" % pid):
        raise Skip("pid %d was reused" % pid)
    r = run(["--csv", "-p", str(pid)])
    expect_broken(r, "pid:%d" % pid, "-p of a process that does not exist", offset=False)


# ---------------------------------------------------------------------------
# 4. Broken inputs
# ---------------------------------------------------------------------------
def patched(data, at, fmt, *vals):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *vals)
    return bytes(b)


def broken(label, data, words=(), offset=True, max_pages=None, truth_map=None):
    """Write data, scan it (summary, then pages), expect a reported error."""
    path = write("broken-%s" % re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-"), data)
    r = run(["--csv", "-a", "xxh64", path])
    if os.environ.get("TEST_FORMATS_VERBOSE"):
        print("  %s: rc=%r %s" % (label, r.rc, r.err.strip().replace(path, "NAME")))
    expect_broken(r, path, label, words, offset)
    rows = parse_csv(r, label)
    check(r.out.startswith("input,format,algo,pages"),
          label + ": the summary is still printed on standard output", repr(r.out[:200]))
    got = sum(as_int(x.get("pages")) or 0 for x in rows if x.get("input") == path)
    if max_pages is not None:
        check(got <= max_pages, label + ": pages reported <= pages of the intact input",
              "%d > %d" % (got, max_pages))
    if truth_map is not None:
        r = run(["-r", "pages", "--csv", "-a", "xxh64", path])
        sane(r, label + " (-r pages)")
        n = reported_subset(r, truth_map, label)
        eq(n, got, label + ": pages report rows = summary pages")
    os.unlink(path)
    return got


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


# ---------------------------------------------------------------------------
def main():
    only = sys.argv[1:]
    STATE["tmp"] = tempfile.mkdtemp(prefix="ksmscan-formats-")
    t0 = time.time()
    try:
        for f in TESTS:
            if only and not any(o in f.__name__ for o in only):
                continue
            STATE["current"] = f.__name__
            try:
                f()
            except Skip as e:
                STATE["skipped"] += 1
                print("SKIP [%s] %s" % (f.__name__, e))
            except Exception:
                check(False, "test raised an exception",
                      traceback.format_exc().strip().replace("\n", " | ")[-1500:])
    finally:
        CACHE.clear()
        shutil.rmtree(STATE["tmp"], ignore_errors=True)
    if os.environ.get("TEST_FORMATS_TIME"):
        print("time %.1fs" % (time.time() - t0))
    print(closing_line(STATE["passed"], STATE["failed"], STATE["skipped"]))
    return 1 if STATE["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
