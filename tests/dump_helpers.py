#!/usr/bin/python3
"""What the dump-format suites share (test_format_elf, test_format_kdump,
test_format_lime, test_format_process, test_broken_dumps): their harness
(a registry of test functions and main(); check, eq and tmp are ksmtest's),
running $KSMSCAN with a file, bytes or a producer command on standard input
and a timeout (a hang is a failure), the sanity of every run (exit 0, 1 or
2, every stderr line a "ksmscan: " message: no crash or sanitizer report),
the KSM model's figures of a list of pages, and the writers of the formats.

The writers build ELF cores, kdumps (makedumpfile's compressed format, with
zlib, zstd and stored pages; version 5 and 6), flattened kdumps (QEMU's
record order or any other) and LiME files from the formats' own layouts,
never from ksmscan; the fixture guest's pages come from this file's own ELF
parser, checked against guest-b.truth.json. fuzz/make_seeds.py and
tests/corpus/make_corpus.py use the same writers.

Run the suites from the repository root with Debian's Python (xxhash,
crc32c, zstandard); the binary is $KSMSCAN (split like a shell word list, so
a wrapper works) or ./ksmscan. One line per failing check, SKIP lines, last
"N passed, N failed"; exit 1 if anything failed. TEST_FORMATS_TIME=1 prints
the time taken, TEST_FORMATS_VERBOSE=1 each broken input's message.
"""
import collections, csv, hashlib, io, json, mmap, os, random, re, shlex, shutil
import struct, subprocess, sys, tempfile, time, traceback, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import DIGEST_COLS, STATE, Skip, check, closing_line, eq, fixture, tmp  # noqa: E402
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


def test(f):
    TESTS.append(f)
    return f


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
# The fixture's algorithms, and broken inputs
# ---------------------------------------------------------------------------
TA = ["-a", ",".join(TRUTH_ALGOS)]


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
