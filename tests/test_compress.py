#!/usr/bin/python3
"""The compress report (-c): zram's figures for every page of an input, alone
and after KSM, against oracles that are not ksmscan:

- a zram/zsmalloc model written here from the kernel's rules (Linux 6.18,
  drivers/block/zram/zram_drv.c and mm/zsmalloc.c: size classes of 32 to
  4096 bytes in steps of 16, an 8-byte handle in each object, zspages of 1 to
  8 pages with the least waste, classes merged when their zspages hold the
  same pages and objects, the huge class size, same-filled pages);
- compressed lengths from Python's lz4 and zstandard packages;
- pages built to sit on every class boundary and on either side of the huge
  class size, and same-filled pages of every kind of repeated word;
- with KSMSCAN_LIVE_TESTS=1 and an unused /dev/zram0 (disksize 0): the live
  kernel. The same pages are written to the device with each compressor it
  offers, and mm_stat must agree: same_pages and huge_pages exactly,
  compr_data_size within 0.5%, mem_used_total within 1%. The device is
  reset and its algorithm put back afterwards, also on a signal (live.py).
"""
import csv, io, os, random, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, Skip, check, eq, fixture, live_session, run_suite, test, tmp  # noqa: E402
import live  # noqa: E402
import lz4.block  # noqa: E402
import zstandard  # noqa: E402

TIMEOUT = 300
COLS = ["input", "compressor", "pages", "same_pages", "huge_pages", "compressed_bytes",
        "zram_mem_used", "zram_saved_bytes", "ksm_zram_mem_used", "ksm_zram_saved_bytes",
        "compress_mib_s"]

# --- the model, from the kernel's rules -------------------------------------
CLASS_MIN, CLASS_STEP, CHAIN, HANDLE = 32, 16, 8, 8
NCLASSES = (PAGE - CLASS_MIN) // CLASS_STEP + 1


def chain(size):
    """Pages per zspage: the first with the least waste; 1 for powers of 2."""
    if size & (size - 1) == 0:
        return 1
    wastes = [(i * PAGE % size, i) for i in range(1, CHAIN + 1)]
    return min(wastes)[1]


def build_classes():
    """[(size, pages, objects)] per class index, after merging; huge size."""
    cls, huge, prev = [None] * NCLASSES, 0, None
    for i in reversed(range(NCLASSES)):
        size = min(CLASS_MIN + i * CLASS_STEP, PAGE)
        pages = chain(size)
        objs = pages * PAGE // size
        if pages != 1 and objs != 1 and not huge:
            huge = size - (HANDLE - 1)
        if prev and prev[1:] == (pages, objs):
            cls[i] = prev
        else:
            cls[i] = prev = (size, pages, objs)
    return cls, huge


CLASSES, HUGE = build_classes()


def class_of(n):
    i = 0 if n <= CLASS_MIN else -(-(n - CLASS_MIN) // CLASS_STEP)
    return CLASSES[min(i, NCLASSES - 1)]


def same_filled(page):
    return page == page[:8] * (PAGE // 8)


def model(pages, length):
    """mm_stat-like figures for pages written once to a new device."""
    same = huge = compr = 0
    objects = {}
    for p in pages:
        if same_filled(p):
            same += 1
            continue
        n = length(p)
        if n >= HUGE:
            huge += 1
            compr += PAGE
            c = CLASSES[-1]
        else:
            compr += n
            c = class_of(n + HANDLE)
        objects[c] = objects.get(c, 0) + 1
    used = sum(-(-n // c[2]) * c[1] for c, n in objects.items()) * PAGE
    return {"pages": len(pages), "same_pages": same, "huge_pages": huge,
            "compressed_bytes": compr, "zram_mem_used": used}


def lz4_len(p):
    return len(lz4.block.compress(p, mode="default", store_size=False))


def zstd_len(p):
    return len(zstandard.ZstdCompressor(level=3).compress(p))


# --- pages built to sit where the model changes -------------------------------
def page_of_len(target, length, rnd):
    """A page that compresses to exactly @target bytes (random bytes then a
    repeated pattern), or None."""
    lo, hi = 0, PAGE
    while lo < hi:                     # the length grows with the random part
        mid = (lo + hi) // 2
        p = rnd.randbytes(mid) + bytes(PAGE - mid)
        if length(p) < target:
            lo = mid + 1
        else:
            hi = mid
    for n in range(max(0, lo - 8), min(PAGE, lo + 8)):
        p = rnd.randbytes(n) + bytes(PAGE - n)
        if length(p) == target:
            return p
    return None


def boundary_pages(length, seed):
    """Pages on both sides of every class boundary and of the huge size."""
    rnd = random.Random(seed)
    sizes = sorted({c[0] for c in CLASSES if c[0] < PAGE})
    targets = set()
    for s in sizes:
        targets |= {s - HANDLE, s - HANDLE + 1}
    targets |= {HUGE - 1, HUGE, HUGE + 1}
    pages = [page_of_len(t, length, rnd) for t in sorted(targets) if t > 20]
    return [p for p in pages if p is not None]


def same_pages():
    """Same-filled pages of every kind of word, and two that just miss."""
    words = [bytes(8), b"\xff" * 8, bytes(range(1, 9)), b"ab" * 4, b"\x00\x01\x02\x03" * 2,
             struct.pack("<Q", 0xdeadbeef)]
    pages = [w * (PAGE // 8) for w in words]
    miss = bytearray(words[2] * (PAGE // 8))
    miss[-1] ^= 1
    pages.append(bytes(miss))
    miss = bytearray(words[1] * (PAGE // 8))
    miss[0] ^= 1
    pages.append(bytes(miss))
    return pages


def scan(paths, comps, extra=()):
    r = subprocess.run(KSMSCAN + ["-r", "compress", "--csv", "-c", comps] + list(extra) +
                       paths, capture_output=True, text=True, timeout=TIMEOUT)
    if not eq(r.returncode, 0, "ksmscan -c %s: exit status" % comps):
        print(r.stderr[:300])
        return []
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check(rows and list(rows[0]) == COLS, "compress columns", repr(list(rows[0]) if rows else r.stdout[:200]))
    return rows


def figures(row):
    return {k: int(row[k]) for k in ("pages", "same_pages", "huge_pages",
                                     "compressed_bytes", "zram_mem_used")}


def write(name, pages):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(b"".join(pages))
    return path


@test("model")
def huge_size_and_classes():
    eq(HUGE, 3625, "the model's huge class size (the kernel's for 4 KiB pages, chain 8)")
    eq(len({c for c in CLASSES}), len(set(CLASSES)), "classes")


def on_boundaries(length, comp, seed, every=1):
    """ksmscan -c @comp on pages built on the class boundaries: the model's
    figures with the oracle's lengths; returns those lengths."""
    pages = boundary_pages(length, seed)[::every]
    lens = [length(p) for p in pages]
    rows = scan([write("boundaries-%s.img" % comp, pages)], comp)
    if rows:
        eq(figures(rows[0]), model(pages, length), "%s on class boundaries" % comp)
    return lens


@test("model")
def boundaries():
    lens = on_boundaries(lz4_len, "lz4", 1)
    check(len(lens) > 150, "pages built on the class boundaries", str(len(lens)))
    check(HUGE in lens and HUGE - 1 in lens, "a page at the huge size and one below",
          str(sorted(lens)[-5:]))
    on_boundaries(zstd_len, "zstd", 2, every=3)


@test("model")
def same_filled_words():
    pages = same_pages()
    path = write("same.img", pages)
    for row in scan([path], "all"):
        eq(int(row["same_pages"]), 6, "%s: same-filled pages of every word" % row["compressor"])
        eq(int(row["pages"]), 8, "%s: pages" % row["compressor"])
        exp = model(pages, lz4_len)
        if row["compressor"] == "lz4":
            eq(figures(row), exp, "lz4: two pages that miss being same-filled")


@test("ksm")
def ksm_then_zram():
    rnd = random.Random(3)
    distinct = boundary_pages(lz4_len, 4)[::4] + same_pages()
    pages = [rnd.choice(distinct) for _ in range(600)]
    a, b = write("a.img", pages[:300]), write("b.img", pages[300:])
    rows = scan([a, b], "lz4")
    if len(rows) != 3:
        check(False, "rows for two inputs and *", repr(rows))
        return
    for row, part in ((rows[0], pages[:300]), (rows[1], pages[300:]), (rows[2], pages)):
        eq(figures(row), model(part, lz4_len), "%s: zram alone" % row["input"])
        once = model(list(dict.fromkeys(part)), lz4_len)
        eq(int(row["ksm_zram_mem_used"]), once["zram_mem_used"],
           "%s: KSM first, zram holds each content once" % row["input"])
        eq(int(row["ksm_zram_saved_bytes"]), len(part) * PAGE - once["zram_mem_used"],
           "%s: ksm_zram_saved_bytes" % row["input"])
        eq(int(row["zram_saved_bytes"]), len(part) * PAGE - int(row["zram_mem_used"]),
           "%s: zram_saved_bytes" % row["input"])
    eq(rows[2]["input"], "*", "the * row")
    one = scan([a, b], "lz4", ["-j", "1"])
    three = scan([a, b], "lz4", ["-j", "3"])
    eq([figures(r) for r in one], [figures(r) for r in three], "-j 1 and -j 3 agree")


@test("cli")
def usage():
    for args, what in ((["-c", "gzip"], "an unknown compressor"), (["-c", ","], "an empty list")):
        r = subprocess.run(KSMSCAN + args + ["/dev/null"], capture_output=True, text=True)
        eq(r.returncode, 2, "%s is a usage error" % what)
        check(r.stderr.startswith("ksmscan: "), "%s: one message" % what, r.stderr[:100])
    path = write("two.img", same_pages())
    r = subprocess.run(KSMSCAN + ["-l", "-c", "lz4", path], capture_output=True, text=True)
    check(r.returncode == 0 and "compressor" in r.stdout and "zero_pages" in r.stdout,
          "-c adds the compress report to the summary", r.stdout[:200])
    r = subprocess.run(KSMSCAN + ["-c", "lz4", path], capture_output=True, text=True)
    check(r.returncode == 0 and "KSM+zram" in r.stdout and "saved%" in r.stdout,
          "the tables for people: the summary and zram in units", r.stdout[:400])
    r = subprocess.run(KSMSCAN + ["--csv", "-r", "compress", path], capture_output=True, text=True)
    names = [row["compressor"] for row in csv.DictReader(io.StringIO(r.stdout))]
    eq(names, ["lz4", "lzo", "lzo-rle", "zstd"], "-r compress alone: every compressor")


def guest_pages():
    """The fixture guest's memory: the pages of its core's PT_LOAD segments."""
    core = subprocess.run(["zstd", "-dc", fixture("guest-b.elf.zst")],
                          stdout=subprocess.PIPE, check=True).stdout
    phoff, = struct.unpack_from("<Q", core, 32)
    phentsize, phnum = struct.unpack_from("<HH", core, 54)
    data = bytearray()
    for k in range(phnum):
        kind, _, off, _, _, size = struct.unpack_from("<IIQQQQ", core, phoff + k * phentsize)
        if kind == 1:
            data += core[off:off + size - size % PAGE]
    return [bytes(data[i:i + PAGE]) for i in range(0, len(data), PAGE)]


def zram_write(z, algo, path):
    """The device's mm_stat after writing @path to it once with @algo."""
    z.set("comp_algorithm", algo)
    z.set("disksize", os.path.getsize(path))
    subprocess.run(["dd", "if=" + path, "of=/dev/" + os.path.basename(z.root), "bs=1M",
                    "oflag=direct", "status=none"], check=True)
    stat = [int(x) for x in open(z.path("mm_stat")).read().split()]
    live.write_value(z.path("reset"), 1)
    return {"compressed_bytes": stat[1], "zram_mem_used": stat[2],
            "same_pages": stat[5], "huge_pages": stat[7]}


@test("live")
def live_zram():
    session = live_session(live.zram_session)
    pages = guest_pages() + boundary_pages(lz4_len, 5) + same_pages()
    path = write("zram.img", pages)
    with session as z:
        offered = open(z.path("comp_algorithm")).read().replace("[", " ").replace("]", " ").split()
        ours = [a for a in ("lz4", "lzo", "lzo-rle", "zstd") if a in offered]
        check(ours, "the kernel offers a compressor ksmscan models", repr(offered))
        rows = {r["compressor"]: r for r in scan([path], ",".join(ours))}
        for algo in ours:
            got, want = figures(rows[algo]), zram_write(z, algo, path)
            for k in ("same_pages", "huge_pages"):
                eq(got[k], want[k], "%s: %s equals the kernel's" % (algo, k))
            for k, tol in (("compressed_bytes", 0.005), ("zram_mem_used", 0.01)):
                check(abs(got[k] - want[k]) <= tol * want[k],
                      "%s: %s within %g%% of the kernel's" % (algo, k, tol * 100),
                      "%d vs %d" % (got[k], want[k]))
            print("live %s: ksmscan %s, kernel %s" % (algo, got, want))
    eq(z.problems, [], "zram settings restored")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-compress-"))
