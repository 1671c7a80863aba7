#!/usr/bin/python3
"""Every checksum ksmscan offers against oracles that are not ksmscan.

    /usr/bin/python3 tests/test_checksums.py [NAME-SUBSTRING...]

- known answers: the oracles themselves against docs/model.md's known
  answers; the zero page's digests; every row and algorithm of the fixture
  vectors.csv against `-a all -r pages --csv vectors.img`; vectors.img's
  summary;
- algorithms: 64 random and 16 structured pages (with duplicates and a
  near-duplicate), every digest, address, zero flag and row order; crc32c ==
  crc32c-sw; JSON pages == CSV pages; a custom `-a` order; xxhsum -H0..-H3;
- collisions: distinct pages with equal jhash2 (built analytically), crc32c,
  xxh32 and xxhash (birthday search): collisions, expected_collisions,
  byte-exact distinct_pages, no sharing between colliding pages.

Oracles: python-xxhash, python-crc32c in the kernel's convention, a Python
jhash2 written from linux/include/linux/jhash.h, the xxhsum command, the
fixtures' vectors.csv. One line per failing check, SKIP lines, last
"N passed, N failed"; exit 1 if anything failed.
"""
import csv, os, re, shutil, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (ALGOS, M32, ORACLE, PAGE, STATE, ZERO, Skip, _jmix, as_int, check,
                     crc32c_kernel, eq, fixture, hexdigest, jhash2_init, run_suite,
                     test, tmp)  # noqa: E402
from summary_helpers import (check_summary, expected_summary, pages_of, random_image,
                             rng_for, scan_csv, scan_json, write_image)  # noqa: E402


# The checksums' known answers (docs/model.md) (zero page) and the crc32c check value.
KNOWN_ZERO = {"jhash2": "61574272", "crc32c": "00000000", "xxhash": "32d8bbdb",
             "xxh32": "475546f5", "xxh64": "ac869b6f32d8bbdb", "xxh3": "93d76fe148c689ba"}
KNOWN_CRC_123456789 = 0x58e3fa20


# ---------------------------------------------------------------------------
# Group 1: known answers and the fixture vectors
# ---------------------------------------------------------------------------
@test("1 known answers")
def oracle_self_test():
    """The oracles themselves reproduce the known answers of docs/model.md."""
    eq(crc32c_kernel(b"123456789"), KNOWN_CRC_123456789, "oracle crc32c('123456789')")
    eq(crc32c_kernel(ZERO), 0, "oracle crc32c(zero page)")
    for algo, want in KNOWN_ZERO.items():
        eq(hexdigest(algo, ZERO), want, "oracle %s(zero page) vs its known answer" % algo)
    # jhash2 of a short key, to anchor the tail handling as well (lookup3's
    # hashword() with the kernel initval equals jhash2): nothing to compare
    # with except the zero page above and vectors.csv below.


@test("1 known answers")
def zero_page_known_answers():
    path = write_image("zero1.img", [ZERO])
    rows = scan_csv(["-a", "all", "-r", "pages", path], "zero page, -a all -r pages",
                    ["input", "address", "zero"] + ALGOS)
    if rows is None:
        return
    if not eq(len(rows), 1, "zero page: one pages row"):
        return
    row = rows[0]
    eq(row["address"], "0x0", "zero page address")
    eq(row["zero"], "1", "zero page zero column")
    for algo, want in KNOWN_ZERO.items():
        eq(row.get(algo), want, "zero page %s vs its known answer" % algo)
    eq(row.get("crc32c-sw"), KNOWN_ZERO["crc32c"], "zero page crc32c-sw vs its known answer")
    eq(row.get("xxh128"), hexdigest("xxh128", ZERO), "zero page xxh128 vs python xxhash")


def read_vectors():
    with open(fixture("vectors.csv"), newline="") as f:
        return list(csv.DictReader(f))


@test("1 known answers")
def vectors_oracle_vs_csv():
    """Our Python oracles agree with the fixture's vectors.csv (oracle sanity)."""
    vec = read_vectors()
    pages = pages_of(fixture("vectors.img"))
    eq(len(pages), len(vec), "vectors.img pages == vectors.csv rows")
    for i, (page, v) in enumerate(zip(pages, vec)):
        eq(v["address"], "0x%x" % (i * PAGE), "vectors.csv row %d address" % i)
        for algo in ALGOS:
            col = "crc32c" if algo == "crc32c-sw" else algo
            eq(hexdigest(algo, page), v[col], "python %s on vectors.img page %s" % (algo, v["address"]))


@test("1 known answers")
def vectors_tool_vs_csv():
    img = fixture("vectors.img")
    vec = read_vectors()
    pages = pages_of(img)
    rows = scan_csv(["-a", "all", "-r", "pages", img], "vectors.img -a all -r pages",
                    ["input", "address", "zero"] + ALGOS)
    if rows is None:
        return
    if not eq(len(rows), len(vec), "vectors.img: number of pages rows") and not rows:
        return
    got = {r["address"]: r for r in rows}
    for i, v in enumerate(vec):
        r = got.get(v["address"])
        if not check(r is not None, "vectors.img: row for address %s" % v["address"]):
            continue
        eq(r["input"], img, "vectors.img %s input column" % v["address"])
        eq(r["zero"], "1" if pages[i] == ZERO else "0", "vectors.img %s zero" % v["address"])
        for algo in ALGOS:
            col = "crc32c" if algo == "crc32c-sw" else algo
            eq(r.get(algo), v[col], "vectors.img %s %s vs vectors.csv" % (v["address"], algo))
            eq(r.get(algo), hexdigest(algo, pages[i]),
               "vectors.img %s %s vs python oracle" % (v["address"], algo))


@test("1 known answers")
def vectors_summary():
    img = fixture("vectors.img")
    pages = pages_of(img)
    rows = scan_csv(["-a", "all", img], "vectors.img -a all summary")
    if rows is None:
        return
    eq([r["algo"] for r in rows], ALGOS, "vectors.img summary rows in -a all order")
    for r, algo in zip(rows, ALGOS):
        exp = expected_summary(pages, algo)
        exp["input"] = img
        check_summary(r, exp, "vectors.img %s" % algo)


@test("2 algorithms")
def random_pages_all_algos():
    path, pages = random_image()
    rows = scan_csv(["-a", "all", "-r", "pages", path], "random.img -a all -r pages",
                    ["input", "address", "zero"] + ALGOS)
    if rows is None:
        return
    if not eq(len(rows), len(pages), "random.img: one pages row per page") and not rows:
        return
    addrs = [int(r["address"], 16) if re.fullmatch(r"0x[0-9a-f]+", r["address"]) else None
             for r in rows]
    check(all(re.fullmatch(r"0x(0|[1-9a-f][0-9a-f]*)", r["address"]) for r in rows),
          "random.img: addresses are 0x-prefixed lower-case hex without leading zeros",
          repr([r["address"] for r in rows[:5]]))
    eq(addrs, sorted(addrs, key=lambda a: -1 if a is None else a),
       "random.img: pages rows in address order")
    byaddr = {r["address"]: r for r in rows}
    for i, page in enumerate(pages):
        a = "0x%x" % (i * PAGE)
        r = byaddr.get(a)
        if not check(r is not None, "random.img: row for %s" % a):
            continue
        eq(r["zero"], "1" if page == ZERO else "0", "random.img %s zero" % a)
        for algo in ALGOS:
            eq(r.get(algo), hexdigest(algo, page), "random.img %s %s vs python" % (a, algo))
        eq(r.get("crc32c-sw"), r.get("crc32c"), "random.img %s crc32c-sw == crc32c" % a)


@test("2 algorithms")
def random_pages_json_agrees():
    path, pages = random_image()
    rows = scan_csv(["-a", "all", "-r", "pages", path], "random.img csv",
                    ["input", "address", "zero"] + ALGOS)
    doc = scan_json(["-a", "all", "-r", "pages", path], "random.img json")
    if rows is None or doc is None:
        return
    if not check(isinstance(doc, dict) and isinstance(doc.get("pages"), list),
                 "json: object with a 'pages' list", repr(doc)[:200]):
        return
    jrows = doc["pages"]
    eq(len(jrows), len(rows), "json pages rows == csv pages rows")
    for c, j in zip(rows, jrows):
        if not check(isinstance(j, dict), "json pages row is an object", repr(j)[:100]):
            continue
        what = "json pages row %s" % c["address"]
        eq(j.get("input"), c["input"], what + " input")
        eq(j.get("address"), c["address"], what + " address")
        check(type(j.get("zero")) is int and j.get("zero") in (0, 1), what + " zero is integer 0/1",
              repr(j.get("zero")))
        eq(j.get("zero"), as_int(c["zero"]), what + " zero")
        for algo in ALGOS:
            eq(j.get(algo), c[algo], "%s %s" % (what, algo))


@test("2 algorithms")
def algo_order_and_duplicates():
    path, pages = random_image()
    order = ["xxh128", "jhash2", "xxh3", "crc32c-sw"]
    rows = scan_csv(["-a", ",".join(order), "-r", "pages", path], "-a in a custom order",
                    ["input", "address", "zero"] + order)
    if rows is not None:
        for i, r in enumerate(rows[:8]):
            for algo in order:
                eq(r.get(algo), hexdigest(algo, pages[i]), "custom order %s %s" % (r["address"], algo))
    rows = scan_csv(["--algo=xxh64,xxhash,xxh64", "-r", "pages", path],
                    "--algo with a duplicate", ["input", "address", "zero", "xxh64", "xxhash"])
    if rows is not None:
        eq(STATE["header"].count("xxh64"), 1, "duplicate algo gives one pages column")
    rows = scan_csv(["-a", "xxh64,xxhash,xxh64", path], "summary with a duplicate algo")
    if rows is not None:
        eq([r["algo"] for r in rows], ["xxh64", "xxhash"], "duplicate algo: summary rows")
    rows = scan_csv([path], "default algorithm")
    if rows is not None:
        eq([r["algo"] for r in rows], ["xxhash"], "default algorithm is xxhash")


def _parse_xxhsum(out):
    """{file: hex} from xxhsum output ('hex  file' or 'XXH3 (file) = hex')."""
    res = {}
    for line in out.splitlines():
        line = line.rstrip()
        m = re.fullmatch(r"\S+ \((.*)\) = ([0-9a-f]+)", line)
        if m:
            res[m.group(1)] = m.group(2)
            continue
        m = re.fullmatch(r"([0-9a-f]+)  (.*)", line)
        if m:
            res[m.group(2)] = m.group(1)
    return res


@test("2 algorithms")
def xxhsum_cross_check():
    xs = shutil.which("xxhsum")
    if not xs:
        raise Skip("xxhsum not installed")
    path, pages = random_image()
    picks = [0, 1, 2, len(pages) - 1] + [pages.index(ZERO)]
    rows = scan_csv(["-a", "xxh32,xxh64,xxh3,xxh128", "-r", "pages", path], "xxhsum: pages",
                    ["input", "address", "zero", "xxh32", "xxh64", "xxh3", "xxh128"])
    if rows is None:
        return
    byaddr = {r["address"]: r for r in rows}
    files = {}
    for i in picks:
        fn = tmp("xxhsum-page-%d.bin" % i)
        with open(fn, "wb") as f:
            f.write(pages[i])
        files[fn] = i
    for flag, algo in (("-H0", "xxh32"), ("-H1", "xxh64"), ("-H2", "xxh128"), ("-H3", "xxh3")):
        p = subprocess.run([xs, flag] + list(files), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        got = _parse_xxhsum(p.stdout.decode())
        if not check(p.returncode == 0 and len(got) == len(files), "xxhsum %s runs" % flag,
                     repr(p.stdout[:200]) + repr(p.stderr[:200])):
            continue
        for fn, i in files.items():
            a = "0x%x" % (i * PAGE)
            eq(byaddr.get(a, {}).get(algo), got.get(fn), "%s at %s vs xxhsum %s" % (algo, a, flag))
            eq(hexdigest(algo, pages[i]), got.get(fn), "python %s vs xxhsum %s (page %s)" % (algo, flag, a))


# ---------------------------------------------------------------------------
# Group 3: constructed collisions
# ---------------------------------------------------------------------------
def birthday_pairs(seed):
    """Pairs of distinct pages (differing in bytes 0-7) with equal 32-bit digests."""
    funcs = {"crc32c": ORACLE["crc32c"], "xxh32": ORACLE["xxh32"], "xxhash": ORACLE["xxhash"]}
    rng = rng_for(seed)
    page = bytearray(rng.randbytes(PAGE))
    seen = {k: {} for k in funcs}
    found = {}
    golden = 0x9E3779B97F4A7C15
    for i in range(1, 1 << 21):
        # a bijective walk over 64-bit values: every bit of bytes 0-7 varies
        # (a plain counter cannot collide crc32c: CRCs catch bursts <= 32 bits)
        struct.pack_into("<Q", page, 0, (i * golden) & 0xffffffffffffffff)
        for k, f in funcs.items():
            if k in found:
                continue
            h = f(page)
            j = seen[k].get(h)
            if j is not None:
                found[k] = (j, i)
            else:
                seen[k][h] = i
        if len(found) == len(funcs):
            break
    pairs = {}
    for k, (i, j) in found.items():
        a = bytearray(page); struct.pack_into("<Q", a, 0, (i * golden) & 0xffffffffffffffff)
        b = bytearray(page); struct.pack_into("<Q", b, 0, (j * golden) & 0xffffffffffffffff)
        pairs[k] = (bytes(a), bytes(b))
    return pairs


def jhash2_pair(seed):
    """Two pages differing in words 0-5 with the same jhash2 (analytic)."""
    rng = rng_for(seed)
    wa = list(struct.unpack("<1024I", rng.randbytes(PAGE)))
    wb = list(wa)
    wb[0:3] = [rng.getrandbits(32) for _ in range(3)]
    init = jhash2_init(1024, 17)

    def block1(w):
        a, b, c = init
        return _jmix((a + w[0]) & M32, (b + w[1]) & M32, (c + w[2]) & M32)
    sa, sb = block1(wa), block1(wb)
    # equal (a, b, c) before the second mix: sB + kB = sA + kA
    wb[3:6] = [(sa[t] + wa[3 + t] - sb[t]) & M32 for t in range(3)]
    pa, pb = struct.pack("<1024I", *wa), struct.pack("<1024I", *wb)
    return pa, pb


@test("3 collisions")
def constructed_collisions():
    pairs = birthday_pairs("collide")
    pairs["jhash2"] = jhash2_pair("jcollide")
    for k in ("jhash2", "crc32c", "xxh32", "xxhash"):
        if not check(k in pairs, "found a %s collision in Python" % k):
            continue
        a, b = pairs[k]
        check(a != b and ORACLE[k](a) == ORACLE[k](b), "constructed %s pair collides" % k)
    rng = rng_for("collide-fill")
    pages = []
    for k in sorted(pairs):
        pages += list(pairs[k])
    pages += [rng.randbytes(PAGE) for _ in range(20)]
    pages += [pairs["crc32c"][0], pairs["jhash2"][1], ZERO, ZERO]  # true duplicates
    rng.shuffle(pages)
    path = write_image("collide.img", pages)
    rows = scan_csv(["-a", "all", path], "collide.img -a all summary")
    if rows is None:
        return
    got = {r["algo"]: r for r in rows}
    eq([r["algo"] for r in rows], ALGOS, "collide.img: rows in -a all order")
    distinct = len(set(pages))
    for algo in ALGOS:
        r = got.get(algo)
        if not check(r is not None, "collide.img: row for %s" % algo):
            continue
        exp = expected_summary(pages, algo)
        exp["input"] = path
        if algo in ("jhash2", "crc32c", "crc32c-sw", "xxh32", "xxhash"):
            check(exp["collisions"] >= 1, "oracle counts a %s collision" % algo)
        else:
            eq(exp["collisions"], 0, "oracle: no %s collision" % algo)
        eq(exp["distinct_pages"], distinct, "oracle distinct_pages")
        check_summary(r, exp, "collide.img %s" % algo)


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
