#!/usr/bin/python3
"""Inputs built to hurt: each case is a defect an independent review found in
ksmscan (or could have), kept as a regression. Every case must end calmly
within a generous timeout (a hang is a failure), with figures that the test
computes itself from the bytes it wrote.

- 10000 distinct pages forged to share one crc32c (CRC is linear: the last
  four bytes of each page are solved for), scanned with -a crc32c: the index
  must not degrade to quadratic time, and collisions must be 9999;
- reports of different widths in one table (top, tree, histogram, regions);
- a LiME file of 40 ranges, -r regions: each range its region, in order;
- an ELF core whose program headers are not in file order: each segment's
  region is named after its own program header;
- an ELF core with 2000 PT_NOTE headers pointing at one 2000-entry NT_FILE
  note: its segments are read at once (no cubic naming);
- a PN_XNUM core and a core with a 70 KiB NT_FILE note through a pipe: the
  same pages and names as from the file;
- a flattened kdump whose records sit 16 GiB apart: no time is spent on the
  holes;
- a file name of a core with invalid UTF-8 and terminal escapes: JSON parses,
  the table shows no escape character;
- a pzstd-style file (a skippable frame first) is decompressed.

A spool that cannot grow (a file size limit, a full $TMPDIR) is in
test_resource_limits.py.
"""
import hashlib, json, os, resource, signal, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, check, eq, fixture, run_suite, test, tmp  # noqa: E402
import crc32c  # noqa: E402  (after ksmtest, which says what to install when it is missing)
import zstandard  # noqa: E402

TIMEOUT = 120


def ksm(args, timeout=TIMEOUT, **kw):
    try:
        return subprocess.run(KSMSCAN + args, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        check(False, "ksmscan %s finished within %d s" % (" ".join(args), timeout))
        return None


def csv_rows(out):
    lines = out.decode().splitlines()
    hdr = lines[0].split(",")
    return [dict(zip(hdr, l.split(","))) for l in lines[1:]]


def elf(segs, notes=(), xnum=False):
    """A little-endian ELF64 core: segs = [(paddr, data, file order key)],
    notes = [bytes of one PT_NOTE each]. Data lands in the order of the keys."""
    phnum = len(segs) + len(notes)
    phoff = 64
    shoff = phoff + 56 * phnum if xnum else 0
    pos = phoff + 56 * phnum + (64 if xnum else 0)
    note_at = []
    for n in notes:
        note_at.append(pos)
        pos += len(n)
    pos = (pos + PAGE - 1) // PAGE * PAGE
    order = sorted(range(len(segs)), key=lambda i: segs[i][2])
    data_at = {}
    for i in order:
        data_at[i] = pos
        pos += len(segs[i][1])
    out = bytearray(pos)
    out[0:64] = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8) + struct.pack(
        "<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, shoff, 0, 64, 56,
        0xffff if xnum else phnum, 64 if xnum else 0, 1 if xnum else 0, 0)
    k = 0
    for j, n in enumerate(notes):
        out[phoff + 56 * k:phoff + 56 * (k + 1)] = struct.pack(
            "<IIQQQQQQ", 4, 0, note_at[j], 0, 0, len(n), 0, 0)
        out[note_at[j]:note_at[j] + len(n)] = n
        k += 1
    for i, (paddr, data, _) in enumerate(segs):
        out[phoff + 56 * k:phoff + 56 * (k + 1)] = struct.pack(
            "<IIQQQQQQ", 1, 6, data_at[i], 0, paddr, len(data), len(data), 0)
        out[data_at[i]:data_at[i] + len(data)] = data
        k += 1
    if xnum:
        struct.pack_into("<I", out, shoff + 44, phnum)
    return bytes(out)


def nt_file(entries):
    """An NT_FILE note: entries = [(start, end, name bytes)]."""
    desc = struct.pack("<QQ", len(entries), PAGE)
    desc += b"".join(struct.pack("<QQQ", s, e, 0) for s, e, _ in entries)
    desc += b"".join(n + b"\0" for _, _, n in entries)
    desc += bytes(-len(desc) % 4)
    return struct.pack("<III", 5, len(desc), 0x46494c45) + b"CORE\0\0\0\0" + desc


def forged_crc_pages(n, target=0x12345678):
    """n distinct pages with one standard CRC-32C, hence one kernel crc32c."""
    zero = bytes(PAGE)
    base = crc32c.crc32c(zero)
    cols = [crc32c.crc32c(bytes(PAGE - 4) + (1 << j).to_bytes(4, "little")) ^ base
            for j in range(32)]
    rows = []
    for bit in range(32):
        v = sum(1 << j for j in range(32) if cols[j] >> bit & 1)
        rows.append([v, 1 << bit])
    for c in range(32):
        p = next(r for r in range(c, 32) if rows[r][0] >> c & 1)
        rows[c], rows[p] = rows[p], rows[c]
        for r in range(32):
            if r != c and rows[r][0] >> c & 1:
                rows[r][0] ^= rows[c][0]
                rows[r][1] ^= rows[c][1]
    pages = []
    seed = hashlib.sha256(b"forge").digest()
    for i in range(n):
        pre = hashlib.shake_256(seed + i.to_bytes(4, "little")).digest(PAGE - 4)
        y = crc32c.crc32c(pre + bytes(4)) ^ target
        x = sum(1 << c for c in range(32) if bin(rows[c][1] & y).count("1") & 1)
        pages.append(pre + x.to_bytes(4, "little"))
    return pages


@test("index")
def forged_checksum_collisions():
    pages = forged_crc_pages(10000)
    check(len({crc32c.crc32c(p) for p in pages}) == 1 and len(set(pages)) == 10000,
          "the oracle: 10000 distinct pages, one crc32c")
    path = tmp("forged.img")
    with open(path, "wb") as f:
        f.write(b"".join(pages))
    # Linear work is well under a second (seconds under ASan); quadratic
    # work, as a checksum-keyed index did, takes minutes.
    r = ksm(["-a", "crc32c", "--csv", path], timeout=30)
    if r and eq(r.returncode, 0, "forged crc32c collisions: exit status"):
        row = csv_rows(r.stdout)[0]
        eq((row["pages"], row["distinct_pages"], row["collisions"]),
           ("10000", "10000", "9999"), "forged crc32c collisions: pages, distinct, collisions")


@test("table")
def reports_of_different_widths():
    path = fixture("vectors.img")
    r = ksm(["-r", "top,tree,histogram,regions,summary", "-a", "all", path, path])
    if r:
        eq(r.returncode, 0, "five reports of different widths in one table: exit status")
        out = r.stdout.decode()
        for head in ("rank", "strategy", "bucket", "redundant_pages", "saved%"):
            check(head in out, "the table holds the report with the column %s" % head)


@test("lime")
def lime_many_ranges():
    data, starts = b"", []
    for i in range(40):
        start = 0x100000 * i
        starts.append(start)
        data += struct.pack("<IIQQQ", 0x4C694D45, 1, start, start + PAGE - 1, 0)
        data += bytes([i + 1]) * PAGE
    path = tmp("many.lime")
    with open(path, "wb") as f:
        f.write(data)
    r = ksm(["-r", "regions", "--csv", path])
    if r and eq(r.returncode, 0, "40 LiME ranges: exit status"):
        rows = csv_rows(r.stdout)
        eq([int(x["start"], 16) for x in rows], starts, "40 LiME ranges: one region each")


@test("elf")
def elf_headers_out_of_file_order():
    segs = [(0x100000, b"\x01" * PAGE, 3), (0x200000, b"\x02" * PAGE, 1),
            (0x300000, b"\x03" * PAGE, 2)]
    path = tmp("order.elf")
    with open(path, "wb") as f:
        f.write(elf(segs))
    r = ksm(["-r", "regions", "--csv", path])
    if r and eq(r.returncode, 0, "out-of-order ELF: exit status"):
        names = {int(x["start"], 16): x["region"] for x in csv_rows(r.stdout)}
        eq(names, {0x100000: "segment 0", 0x200000: "segment 1", 0x300000: "segment 2"},
           "each segment named after its own program header")


@test("elf")
def elf_many_notes():
    note = nt_file([(0x10000000 + i, 0x10000001 + i, b"") for i in range(2000)])
    segs = [(0x1000 * (i + 1), bytes([i % 250 + 1]) * PAGE if i < 8 else b"", i)
            for i in range(2000)]
    segs = [s for s in segs if s[1]] + [(0x900000 + i, bytes(0), 100 + i) for i in range(0)]
    data = elf(segs, notes=[note] * 2000)
    path = tmp("notes.elf")
    with open(path, "wb") as f:
        f.write(data)
    r = ksm(["-j1", "--csv", path])
    if r and eq(r.returncode, 0, "2000 PT_NOTEs: exit status"):
        eq(csv_rows(r.stdout)[0]["pages"], "8", "2000 PT_NOTEs: the 8 pages")


@test("elf")
def elf_streamed_like_mapped():
    big = nt_file([(0x400000, 0x401000, b"/usr/lib/libnamed.so")] +
                  [(0x50000000 + PAGE * i, 0x50000000 + PAGE * (i + 1), b"x" * 20)
                   for i in range(1500)])
    cases = {
        "xnum.elf": elf([(0x1000 * (i + 1), bytes([i + 1]) * PAGE, i) for i in range(2)] +
                        [(0, b"", 10 + i) for i in range(0)], xnum=True),
        "bignote.elf": elf([(0x400000, b"\x05" * PAGE, 0)], notes=[big]),
    }
    for name, data in cases.items():
        path = tmp(name)
        with open(path, "wb") as f:
            f.write(data)
        a = ksm(["-r", "regions", "--csv", path])
        b = ksm(["-r", "regions", "--csv", "-"], input=data)
        if a and b:
            eq((b.returncode, b.stdout.replace(b"\n-,", b"\n%s," % path.encode())),
               (a.returncode, a.stdout), "%s through a pipe == from the file" % name)
    if a:
        check(b"/usr/lib/libnamed.so" in a.stdout, "NT_FILE names the segment")


@test("kdump")
def flattened_records_far_apart():
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<i", hdr, 8, 6)
    struct.pack_into("<iiiI", hdr, 428, PAGE, 1, 2 << 20, 0)
    sub = bytearray(PAGE)
    struct.pack_into("<Q", sub, 96, (2 << 20) // 2 * PAGE * 8)
    flat = (b"makedumpfile".ljust(16, b"\0") + struct.pack(">qq", 1, 1)).ljust(PAGE, b"\0")
    for off, data in ((0, bytes(hdr)), (PAGE, bytes(sub)), (16 << 30, b"\0" * 16)):
        flat += struct.pack(">qq", off, len(data)) + data
    flat += struct.pack(">qq", -1, -1)
    path = tmp("sparse.flat")
    with open(path, "wb") as f:
        f.write(flat)
    r = ksm(["-j1", "--csv", path])
    if r:
        check(r.returncode in (0, 1), "sparse flattened kdump: exit status 0 or 1",
              repr(r.stderr[-200:]))


@test("text")
def hostile_names():
    name = b"/lib/\xff\xfe\x1b]0;owned\x07\x1b[2J.so"
    data = elf([(0x400000, b"\x07" * PAGE, 0)], notes=[nt_file([(0x400000, 0x401000, name)])])
    path = tmp("name.elf")
    with open(path, "wb") as f:
        f.write(data)
    r = ksm(["-r", "regions", "--json", path])
    if r:
        try:
            doc = json.loads(r.stdout.decode("utf-8"))
            ok = doc["regions"][0]["region"].startswith("/lib/")
        except (ValueError, KeyError, IndexError):
            ok = False
        check(ok, "a core's invalid UTF-8 file name still gives valid JSON", repr(r.stdout[:200]))
    r = ksm(["-r", "regions", path])
    if r:
        check(b"\x1b" not in r.stdout and b"\x07" not in r.stdout,
              "the table shows no terminal escape from the dump", repr(r.stdout[:300]))


@test("zstd")
def skippable_frame_first():
    pages = b"".join(bytes([i]) * PAGE for i in range(1, 9))
    skippable = struct.pack("<II", 0x184D2A50, 4) + b"pzst"
    data = skippable + zstandard.ZstdCompressor().compress(pages)
    path = tmp("img.pzst")
    with open(path, "wb") as f:
        f.write(data)
    r = ksm(["--csv", path])
    if r and eq(r.returncode, 0, "skippable frame first: exit status"):
        row = csv_rows(r.stdout)[0]
        eq((row["format"], row["pages"], row["distinct_pages"]), ("raw", "8", "8"),
           "skippable frame first: the decompressed pages")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-hostile-"))
