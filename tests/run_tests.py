#!/usr/bin/python3
"""ksmscan test suite.

Run from the repository root with Debian's Python (it has the xxhash and
crc32c modules):

    /usr/bin/python3 tests/run_tests.py [NAME-SUBSTRING...]

The binary under test is $KSMSCAN (split like a shell word list, so a wrapper
such as "valgrind -q ./ksmscan" works) or ./ksmscan.  Every figure is compared
with an independent oracle computed here (hashlib identity, python-xxhash,
python-crc32c, a Python jhash2 written from linux/include/linux/jhash.h, the
xxhsum command, the fixtures' vectors.csv, the checksums' known answers in docs/model.md).

One line per failing check; the last line is "N passed, N failed"; exit 1 if
anything failed.
"""

import collections
import csv
import hashlib
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (Run, as_int, parse_csv, undigest, ALGOS, BITS, KSMSCAN, M32, ORACLE, PAGE, STATE, SUMMARY_COLS, ZERO,
                     Skip, _jmix, check, crc32c_kernel, eq, fixture, hexdigest, jhash2_init,
                     ksm_group, run_suite, skip, test, tmp)  # noqa: E402
import xxhash  # noqa: E402  (after ksmtest, which says what to install when it is missing)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIMEOUT = 120          # seconds per ksmscan run (generous for ASan/UBSan)

INT_COLS = ["pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing",
            "ksm_zero_pages", "saved_bytes", "general_profit", "collisions"]
FLOAT_COLS = ["duplicate_ratio", "saved_percent", "expected_collisions"]
TIMING_COLS = ["hash_mib_s", "ns_per_page"]

# The checksums' known answers (docs/model.md) (zero page) and the crc32c check value.
KNOWN_ZERO = {"jhash2": "61574272", "crc32c": "00000000", "xxhash": "32d8bbdb",
             "xxh32": "475546f5", "xxh64": "ac869b6f32d8bbdb", "xxh3": "93d76fe148c689ba"}
KNOWN_CRC_123456789 = 0x58e3fa20

# ---------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------
def expected_summary(pages, algo, m=256, z=False):
    """the KSM model (docs/model.md) figures for a list of page contents (bytes), with the two
    corrections measured on the kernel: pages_shared (below) and general_profit
    with -z (pages merged with the zero page carry no rmap_item)."""
    # KSM as measured on Linux 6.18 (tests/test_ksm_live.py): c = k*M + r
    # identical pages make k full KSM pages, r >= 2 leftovers one more, and a
    # single leftover stays unmerged, so pages_shared is ceil(c/M) less one
    # when c > M and c % M == 1 (the KSM model (docs/model.md) says ceil(c/M); see README).
    counts = collections.Counter(pages)
    n = len(pages)
    zero = counts.get(ZERO, 0)
    distinct = len(counts)
    shared = sharing = 0
    for content, c in counts.items():
        if z and content == ZERO:
            continue
        if c >= 2:
            a, b = ksm_group(c, m)
            shared += a
            sharing += b
    kzp = zero if z else 0
    saved = (sharing + kzp) * PAGE
    ndig = len({ORACLE[algo](p) for p in counts})
    exp = {
        "algo": algo, "pages": n, "zero_pages": zero, "distinct_pages": distinct,
        "pages_shared": shared, "pages_sharing": sharing, "ksm_zero_pages": kzp,
        "saved_bytes": saved, "general_profit": saved - (n - kzp) * 64,
        "collisions": distinct - ndig,
        "expected_collisions": distinct * (distinct - 1) / 2.0 ** (BITS[algo] + 1),
    }
    if n:
        exp["duplicate_ratio"] = (n - distinct) / n
        exp["saved_percent"] = 100.0 * saved / (n * PAGE)
    return exp


# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------
def write_image(name, pages, tail=b""):
    path = tmp(name)
    with open(path, "wb") as f:
        for p in pages:
            f.write(p)
        f.write(tail)
    return path


def run(args, input=None, stdin=None, stdout=None, cwd=None):
    """Run ksmscan with args; input= bytes go through a pipe."""
    exe = KSMSCAN
    if cwd is not None:
        exe = [os.path.abspath(a) if "/" in a and os.path.exists(a) else a for a in exe]
    full = exe + list(args)
    kw = {"cwd": cwd}
    if input is not None:
        kw["input"] = input
    elif stdin is not None:
        kw["stdin"] = stdin
    else:
        kw["stdin"] = subprocess.DEVNULL
    try:
        p = subprocess.run(full, stdout=stdout if stdout is not None else subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, **kw)
    except subprocess.TimeoutExpired as e:
        return Run(full, "timeout", (e.stdout or b"").decode("utf-8", "replace"),
                   (e.stderr or b"").decode("utf-8", "replace"))
    except OSError as e:
        return Run(full, "cannot execute: %s" % e, "", "")
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    return Run(full, p.returncode, out, p.stderr.decode("utf-8", "replace"))


def run_ok(args, what, **kw):
    """Run, and check it exits 0 (one check).  Returns the Run or None."""
    r = run(args, **kw)
    if check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return r
    return None


def scan_csv(args, what, cols=None, **kw):
    r = run_ok(["--csv"] + list(args), what, **kw)
    if r is None:
        return None
    return parse_csv(r, what, cols or SUMMARY_COLS)


class JFloat(float):
    """A JSON number with a fraction or exponent, remembering its text."""
    def __new__(cls, text):
        o = float.__new__(cls, text)
        o.text = text
        return o


def _bad_constant(name):
    raise ValueError("non-JSON constant %s" % name)


def parse_json(r, what):
    try:
        doc = json.loads(r.out, parse_float=JFloat, parse_constant=_bad_constant)
        for key, rows in (doc.items() if isinstance(doc, dict) else ()):
            if isinstance(rows, list):
                undigest(rows, "%s: %s" % (what, key))
        return doc
    except ValueError as e:
        check(False, "%s: output is valid JSON" % what, "%s; output %r" % (e, r.out[:300]))
        return None


def scan_json(args, what, **kw):
    r = run_ok(["--json"] + list(args), what, **kw)
    if r is None:
        return None
    return parse_json(r, what)


def as_float(v):
    """(value, half unit in the last printed place) or None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, JFloat):
        text = v.text
    elif isinstance(v, int):
        text = str(v)
    elif isinstance(v, str):
        text = v.strip()
    else:
        return None
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", text)
    if not m or not (m.group(1) or m.group(2)):
        return None
    val = float(text)
    if not math.isfinite(val):
        return None
    return val, 0.5 * 10.0 ** (int(m.group(3) or 0) - len(m.group(2) or ""))


def check_float(v, exp, what):
    f = as_float(v)
    if f is None:
        return check(False, what, "expected a number near %r, got %r" % (exp, v))
    val, half = f
    tol = max(half * 1.0001, 1e-6 * abs(exp))
    return check(abs(val - exp) <= tol, what, "expected %r, got %r" % (exp, v))


def check_summary(row, exp, label, fmt="raw"):
    """Check one summary row (CSV dict of strings or JSON dict) against exp."""
    if "input" in exp:
        eq(row.get("input"), exp["input"], "%s input" % label)
    if fmt is not None:
        eq(row.get("format"), fmt, "%s format" % label)
    eq(row.get("algo"), exp["algo"], "%s algo" % label)
    for col in INT_COLS:
        if col in exp:
            eq(as_int(row.get(col)), exp[col], "%s %s" % (label, col))
    for col in FLOAT_COLS:
        if col in exp:
            check_float(row.get(col), exp[col], "%s %s" % (label, col))
    if exp.get("pages"):
        for col in TIMING_COLS:
            f = as_float(row.get(col))
            check(f is not None and f[0] > 0, "%s %s is a positive number" % (label, col),
                  "got %r" % (row.get(col),))


def check_usage_error(r, what):
    """Exit 2; on stderr one line 'ksmscan: ...' naming the problem, then
    "Try 'ksmscan --help'." and nothing else; no stdout."""
    lines = r.err.splitlines()
    eq(r.rc, 2, "%s: exit status (`%s`)" % (what, r.cmd))
    check(len(lines) == 2 and lines[0].startswith("ksmscan: ") and
          lines[1] == "Try 'ksmscan --help'.",
          "%s: stderr is 'ksmscan: ...' and 'Try 'ksmscan --help'.'" % what,
          "stderr %r" % r.err[:400])
    eq(r.out, "", "%s: nothing on stdout" % what)


def rng_for(name):
    return random.Random("ksmscan-tests-" + name)


def structured_pages():
    """Edge-case patterns (all distinct, one zero page)."""
    pages = [
        ZERO,
        b"\xff" * PAGE,
        bytes(i & 0xff for i in range(PAGE)),
        bytes((255 - i) & 0xff for i in range(PAGE)),
        struct.pack("<I", 0xdeadbeef) * 1024,
        struct.pack(">I", 0xdeadbeef) * 1024,
        struct.pack("<Q", 0x0123456789abcdef) * 512,
        b"".join(struct.pack("<H", i) for i in range(2048)),
        b"".join(struct.pack("<I", i) for i in range(1024)),
        ZERO[:4095] + b"\x01",
        b"\x80" + ZERO[1:],
        b"\x01" + ZERO[1:],
        ZERO[:2048] + b"\x01" + ZERO[2049:],
        (b"The quick brown fox jumps over the lazy dog.\n" * 100)[:PAGE],
        b"\x55" * PAGE,
        b"\xaa" * PAGE,
    ]
    assert len(set(pages)) == len(pages)
    return pages


def pages_of(path):
    data = open(path, "rb").read()
    return [data[i:i + PAGE] for i in range(0, len(data) - PAGE + 1, PAGE)]


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


# ---------------------------------------------------------------------------
# Group 2: random and structured pages, every algorithm, xxhsum
# ---------------------------------------------------------------------------
def random_image():
    rng = rng_for("random")
    rand = [rng.randbytes(PAGE) for _ in range(64)]
    pages = rand + structured_pages()
    # a few duplicates and near duplicates
    pages += [rand[3], rand[3], rand[10], rand[10][:-1] + bytes([rand[10][-1] ^ 1])]
    rng.shuffle(pages)
    return write_image("random.img", pages), pages


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


# ---------------------------------------------------------------------------
# Group 4: savings (KSM model)
# ---------------------------------------------------------------------------
_SAVINGS = {}


def savings_image():
    if "img" in _SAVINGS:
        return _SAVINGS["img"]
    rng = rng_for("savings")
    pages = []
    for n in (2, 255, 256, 257, 513, 1000):
        pages += [rng.randbytes(PAGE)] * n
    pages += [ZERO] * 37
    base = rng.randbytes(PAGE)
    near = [base[:-1] + bytes([v]) for v in range(6)]   # differ only in the last byte
    pages += near + [near[0], near[0], near[3]]
    pages += [ZERO[:-1] + b"\x01"] * 3                    # nearly zero, not zero
    pages += [rng.randbytes(PAGE) for _ in range(40)]
    rng.shuffle(pages)
    _SAVINGS["img"] = (write_image("savings.img", pages), pages)
    return _SAVINGS["img"]


@test("4 savings")
def savings_model():
    path, pages = savings_image()
    cases = [([], 256, False), (["-m", "2"], 2, False), (["-m", "1000"], 1000, False),
             (["--max-page-sharing=3"], 3, False), (["-m", "257"], 257, False),
             (["-z"], 256, True), (["-z", "-m", "2"], 2, True),
             (["--use-zero-pages", "--max-page-sharing=1000"], 1000, True)]
    for opts, m, z in cases:
        what = "savings.img %s" % (" ".join(opts) or "(defaults)")
        rows = scan_csv(opts + [path], what)
        if rows is None:
            continue
        if not eq(len(rows), 1, what + ": one summary row"):
            continue
        exp = expected_summary(pages, "xxhash", m, z)
        exp["input"] = path
        check_summary(rows[0], exp, what)


@test("4 savings")
def more_groups_than_hot_copies():
    """ksmscan keeps in memory a copy of the first 4096 contents seen twice
    (16 MiB) and compares later pages with those copies; past that, with the
    bytes read back from the input. 4400 groups of three, shuffled, and near
    twins that differ from a group's content in their last byte only, must
    give the oracle's figures either way, from a file and from a pipe."""
    rng = rng_for("hot")
    groups = [rng.randbytes(PAGE) for _ in range(4400)]
    pages = groups * 3
    pages += [g[:-1] + bytes([g[-1] ^ 1]) for g in groups[:300]]
    pages += [g[:-1] + bytes([g[-1] ^ 1]) for g in groups[:100]]
    rng.shuffle(pages)
    path = write_image("hot.img", pages)
    exp = expected_summary(pages, "xxhash")
    with open(path, "rb") as f:
        data = f.read()
    for what, args, kw in (("file", [path], {}),
                           ("file -j1", ["-j", "1", path], {}),
                           ("pipe", ["-"], {"input": data})):
        rows = scan_csv(args, "hot copies " + what, **kw)
        if rows is None or not eq(len(rows), 1, "hot copies %s: one row" % what):
            continue
        e = dict(exp, input=path if what != "pipe" else "-")
        check_summary(rows[0], e, "hot copies " + what)


@test("4 savings")
def savings_table_output():
    path, pages = savings_image()
    # The default table shows sizes for people; -l every figure as counted.
    for opts in (["-l"], ["-o", "table", "--long"]):
        r = run_ok(opts + [path], "table output %s" % " ".join(opts))
        if r is None:
            continue
        n = str(len(pages))
        # allow thousands separators
        pat = r"(?<![\d.,])" + n[:-3] + r"[,.' \u202f]?" + n[-3:] + r"(?![\d])"
        check(re.search(pat, r.out), "table output contains the pages count %s" % n, r.out[:500])
        d = str(len(set(pages)))
        check(re.search(r"(?<![\d.,])%s(?![\d])" % d, r.out),
              "table output contains distinct_pages %s" % d, r.out[:500])


@test("4 savings")
def bad_max_page_sharing():
    path, _ = savings_image()
    for v in ("1", "0", "x", "-3", "2x", "", "99999999999999999999999"):
        check_usage_error(run(["-m", v, path]), "-m %r" % v)
    check_usage_error(run(["--max-page-sharing=1", path]), "--max-page-sharing=1")


# ---------------------------------------------------------------------------
# Group 5: several inputs
# ---------------------------------------------------------------------------
def multi_images():
    rng = rng_for("multi")
    s_all, s_ab, s_bc, dup_b = (rng.randbytes(PAGE) for _ in range(4))
    a = [s_all, s_all, s_ab] + [ZERO] * 3 + [rng.randbytes(PAGE) for _ in range(20)]
    b = [s_all, s_ab, s_bc] + [dup_b] * 4 + [rng.randbytes(PAGE) for _ in range(15)]
    c = [s_all] * 3 + [s_bc] + [ZERO] * 2 + [rng.randbytes(PAGE) for _ in range(10)]
    for lst in (a, b, c):
        rng.shuffle(lst)
    return [(write_image("multi-a.img", a), a), (write_image("multi-b.img", b), b),
            (write_image("multi-c.img", c), c)]


def expected_multi(imgs, algos, m=256, z=False):
    exp = []
    for path, pages in imgs:
        for algo in algos:
            e = expected_summary(pages, algo, m, z)
            e["input"] = path
            exp.append(e)
    if len(imgs) > 1:
        allp = [p for _, pages in imgs for p in pages]
        for algo in algos:
            e = expected_summary(allp, algo, m, z)
            e["input"] = "*"
            exp.append(e)
    return exp


@test("5 several inputs")
def multi_summary():
    imgs = multi_images()
    algos = ["xxhash", "jhash2", "xxh128"]
    for opts, m, z in (([], 256, False), (["-m", "2"], 2, False), (["-z", "-m", "3"], 3, True)):
        what = "3 inputs %s" % " ".join(opts)
        rows = scan_csv(opts + ["-a", ",".join(algos)] + [p for p, _ in imgs], what)
        if rows is None:
            continue
        exp = expected_multi(imgs, algos, m, z)
        eq([(r["input"], r["algo"]) for r in rows], [(e["input"], e["algo"]) for e in exp],
           what + ": row order (input-major, then '*' rows)")
        got = {(r["input"], r["algo"]): r for r in rows}
        for e in exp:
            r = got.get((e["input"], e["algo"]))
            if check(r is not None, "%s: row for %s %s" % (what, e["input"], e["algo"])):
                check_summary(r, e, "%s [%s %s]" % (what, e["input"], e["algo"]),
                              fmt="raw" if e["input"] != "*" else None)
    # two inputs: cross-input sharing counted in '*'
    two = imgs[:2]
    rows = scan_csv([p for p, _ in two], "2 inputs")
    if rows is not None:
        exp = expected_multi(two, ["xxhash"])
        eq(len(rows), 3, "2 inputs: 2 input rows + 1 '*' row")
        for r, e in zip(rows, exp):
            check_summary(r, e, "2 inputs [%s]" % e["input"], fmt="raw" if e["input"] != "*" else None)
    # a single input has no '*' row
    rows = scan_csv(["-a", "xxhash,xxh64", imgs[0][0]], "1 input")
    if rows is not None:
        eq([r["input"] for r in rows], [imgs[0][0]] * 2, "1 input: no '*' rows")


@test("5 several inputs")
def multi_csv_json_agree():
    imgs = multi_images()
    args = ["-a", "xxhash,crc32c,xxh3"] + [p for p, _ in imgs]
    rows = scan_csv(args, "3 inputs csv")
    doc = scan_json(args, "3 inputs json")
    if rows is None or doc is None:
        return
    if not check(isinstance(doc, dict) and isinstance(doc.get("summary"), list),
                 "json: object with a 'summary' list", repr(doc)[:200]):
        return
    check("pages" not in doc, "json: only the selected report", repr(list(doc)))
    jrows = doc["summary"]
    eq(len(jrows), len(rows), "json summary rows == csv rows")
    exp = expected_multi(imgs, ["xxhash", "crc32c", "xxh3"])
    for c, j, e in zip(rows, jrows, exp):
        what = "json [%s %s]" % (c["input"], c["algo"])
        if not check(isinstance(j, dict), what + " is an object"):
            continue
        missing = [k for k in SUMMARY_COLS if k not in j]
        check(not missing, what + " has every summary key", "missing %r" % missing)
        for k in ("input", "format", "algo"):
            check(isinstance(j.get(k), str), "%s %s is a string" % (what, k), repr(j.get(k)))
            eq(j.get(k), c[k], "%s %s == csv" % (what, k))
        for k in INT_COLS:
            check(type(j.get(k)) is int, "%s %s is a JSON integer" % (what, k), repr(j.get(k)))
            eq(as_int(j.get(k)), as_int(c[k]), "%s %s == csv" % (what, k))
        for k in FLOAT_COLS + TIMING_COLS:
            check(type(j.get(k)) in (int, JFloat), "%s %s is a JSON number" % (what, k), repr(j.get(k)))
        check_summary(j, e, what, fmt="raw" if e["input"] != "*" else None)


@test("5 several inputs")
def multi_pages_report():
    imgs = multi_images()[:2]
    rows = scan_csv(["-r", "pages", "-a", "xxh64"] + [p for p, _ in imgs], "2 inputs -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is None:
        return
    exp = [(p, "0x%x" % (i * PAGE), "1" if pg == ZERO else "0", hexdigest("xxh64", pg))
           for p, pages in imgs for i, pg in enumerate(pages)]
    got = [(r["input"], r["address"], r["zero"], r["xxh64"]) for r in rows]
    eq(len(got), len(exp), "2 inputs -r pages: row count")
    eq(sorted(got), sorted(exp), "2 inputs -r pages: rows (input, address, zero, xxh64)")
    eq([g[0] for g in got], [e[0] for e in exp], "2 inputs -r pages: inputs in command-line order")


@test("5 several inputs")
def quoting_of_input_names():
    rng = rng_for("quote")
    pages = [rng.randbytes(PAGE), ZERO]
    path = write_image('we,ird "name".img', pages)
    rows = scan_csv(["-a", "xxh64", path], "input name with comma and quote")
    if rows is not None and eq(len(rows), 1, "odd name: one row"):
        eq(rows[0]["input"], path, "odd name round-trips through RFC 4180 CSV")
        eq(as_int(rows[0]["pages"]), 2, "odd name: pages")
    # control characters, backslash, quote and non-ASCII: CSV quoting and JSON
    # escaping; CSV keeps tab and line breaks (quoted) and shows other
    # controls, which a terminal would act on, as '?'
    path2 = write_image('t\tb\\s\nn\x01\x1b"\u00e9.img', pages)
    rows = scan_csv(["-a", "xxh64", path, path2], "input names with control characters")
    if rows is not None:
        eq([r["input"] for r in rows], [path, path2.replace("\x01", "?").replace("\x1b", "?"), "*"],
           "odd names round-trip through CSV, controls but tab and newline as '?'")
    doc = scan_json(["-a", "xxh64", path, path2], "odd names json")
    if doc is not None:
        try:
            eq([r["input"] for r in doc["summary"]], [path, path2, "*"],
               "odd names round-trip through JSON")
        except (KeyError, IndexError, TypeError) as e:
            check(False, "odd name json has summary[].input", repr(e))


# ---------------------------------------------------------------------------
# Group 6: input edge cases
# ---------------------------------------------------------------------------
def _strip_timing(rows):
    return [{k: v for k, v in r.items() if k not in TIMING_COLS and k != "input"} for r in rows]


@test("6 input edge cases")
def stdin_equals_file():
    path, pages = random_image()
    data = open(path, "rb").read()
    base = scan_csv(["-a", "all", path], "file")
    piped = scan_csv(["-a", "all", "-"], "stdin pipe", input=data)
    with open(path, "rb") as f:
        redir = scan_csv(["-a", "all", "-"], "stdin redirected from the file", stdin=f)
    for rows, what in ((piped, "pipe"), (redir, "redirect")):
        if rows is None or base is None:
            continue
        eq([r["input"] for r in rows], ["-"] * len(ALGOS), "stdin %s: input column is '-'" % what)
        eq(_strip_timing(rows), _strip_timing(base), "stdin %s: same figures as the file" % what)
        for r in rows:
            exp = expected_summary(pages, r["algo"])
            check_summary(r, exp, "stdin %s %s" % (what, r["algo"]))
    prow = scan_csv(["-a", "xxh3", "-r", "pages", "-"], "stdin pipe -r pages",
                    ["input", "address", "zero", "xxh3"], input=data)
    if prow is not None:
        eq([(r["address"], r["xxh3"]) for r in prow],
           [("0x%x" % (i * PAGE), hexdigest("xxh3", p)) for i, p in enumerate(pages)],
           "stdin pipe -r pages: addresses and digests")
    # file and the same data on stdin: '*' sees every page twice
    rows = scan_csv([path, "-"], "file and stdin", input=data)
    if rows is not None:
        exp = expected_multi([(path, pages), ("-", pages)], ["xxhash"])
        eq([r["input"] for r in rows], [path, "-", "*"], "file and stdin: row inputs")
        for r, e in zip(rows, exp):
            check_summary(r, e, "file and stdin [%s]" % e["input"], fmt="raw" if e["input"] != "*" else None)


@test("6 input edge cases")
def partial_page():
    rng = rng_for("partial")
    pages = [rng.randbytes(PAGE) for _ in range(5)] + [ZERO]
    path = write_image("partial.img", pages, tail=rng.randbytes(1000))
    r = run(["--csv", path])
    eq(r.rc, 0, "partial page: exit status 0")
    check(any(path in l and "partial page" in l for l in r.err.splitlines()),
          "partial page: warning line names the file and says 'partial page'", repr(r.err[:300]))
    rows = parse_csv(r, "partial page", SUMMARY_COLS) if r.rc == 0 else None
    if rows:
        exp = expected_summary(pages, "xxhash")
        exp["input"] = path
        check_summary(rows[0], exp, "partial page")
    for q in ("-q", "--quiet"):
        r = run([q, "--csv", path])
        eq(r.rc, 0, "partial page %s: exit status 0" % q)
        check("partial page" not in r.err, "partial page %s: warning suppressed" % q, repr(r.err[:300]))
        rows = parse_csv(r, "partial page " + q, SUMMARY_COLS) if r.rc == 0 else None
        if rows:
            eq(as_int(rows[0]["pages"]), len(pages), "partial page %s: pages" % q)
    rows = scan_csv(["-q", "-r", "pages", "-a", "xxh64", path], "partial page -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is not None:
        eq([r["address"] for r in rows], ["0x%x" % (i * PAGE) for i in range(len(pages))],
           "partial page: no row for the trailing partial page")
    # smaller than one page
    small = write_image("small.img", [], tail=b"\x07" * 100)
    r = run(["--csv", small])
    eq(r.rc, 0, "file of 100 bytes: exit status 0")
    check("partial page" in r.err, "file of 100 bytes: partial page warning", repr(r.err[:300]))
    rows = parse_csv(r, "file of 100 bytes", SUMMARY_COLS) if r.rc == 0 else None
    if rows:
        eq(as_int(rows[0]["pages"]), 0, "file of 100 bytes: pages")


def data_pages(path):
    """Pages overlapping a data extent, per SEEK_DATA/SEEK_HOLE (the OS is the oracle)."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    res = set()
    try:
        off = 0
        while off < size:
            try:
                d = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break
            h = os.lseek(fd, d, os.SEEK_HOLE)
            for p in range(d // PAGE, (min(h, size) + PAGE - 1) // PAGE):
                if (p + 1) * PAGE <= size:
                    res.add(p)
            off = h
    finally:
        os.close(fd)
    return sorted(res)


@test("6 input edge cases")
def sparse_file():
    path = tmp("sparse.img")
    rng = rng_for("sparse")
    written = {0: rng.randbytes(PAGE), 1: rng.randbytes(PAGE), 10: ZERO, 11: b"\x01" * PAGE,
               40: rng.randbytes(PAGE), 63: rng.randbytes(PAGE)}
    written[41] = written[40]
    with open(path, "wb") as f:
        f.truncate(80 * PAGE)                 # trailing hole after page 63
        for p, d in sorted(written.items()):
            f.seek(p * PAGE)
            f.write(d)
    fd = os.open(path, os.O_RDONLY)
    try:
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
    finally:
        os.close(fd)
    if hole >= os.path.getsize(path):
        raise Skip("the filesystem holding %s does not report holes" % STATE["tmp"])
    present = data_pages(path)
    check(len(present) < 80, "OS reports holes in the sparse file", repr(present))
    with open(path, "rb") as f:
        data = f.read()
    pages = [data[p * PAGE:(p + 1) * PAGE] for p in present]
    for opts, z in (([], False), (["-z"], True)):
        rows = scan_csv(opts + ["-a", "xxhash,xxh64", path], "sparse file %s" % " ".join(opts))
        if rows is None:
            continue
        for r in rows:
            exp = expected_summary(pages, r["algo"], 256, z)
            exp["input"] = path
            check_summary(r, exp, "sparse file %s %s (data pages %s)" % (" ".join(opts), r["algo"], present))
    rows = scan_csv(["-r", "pages", "-a", "xxh64", path], "sparse file -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is not None:
        eq([(r["address"], r["zero"], r["xxh64"]) for r in rows],
           [("0x%x" % (p * PAGE), "1" if pg == ZERO else "0", hexdigest("xxh64", pg))
            for p, pg in zip(present, pages)],
           "sparse file -r pages: only data pages, at their file offsets")
    # a file that is all hole
    empty_sparse = tmp("allhole.img")
    with open(empty_sparse, "wb") as f:
        f.truncate(64 * PAGE)
    present = data_pages(empty_sparse)
    rows = scan_csv([empty_sparse], "all-hole file")
    if rows is not None:
        eq(as_int(rows[0]["pages"]), len(present), "all-hole file: pages (OS data pages %r)" % present)
        eq(as_int(rows[0]["zero_pages"]), len(present), "all-hole file: zero_pages")


@test("6 input edge cases")
def empty_file():
    path = write_image("empty.img", [])
    rows = scan_csv(["-a", "all", path], "empty file")
    if rows is not None:
        eq(len(rows), len(ALGOS), "empty file: one row per algorithm")
        for r in rows:
            eq(as_int(r.get("pages")), 0, "empty file %s pages" % r["algo"])
            eq(as_int(r.get("distinct_pages")), 0, "empty file %s distinct_pages" % r["algo"])
            eq(as_int(r.get("saved_bytes")), 0, "empty file %s saved_bytes" % r["algo"])
        # n(n-1)/2^(b+1) with n = 0 is 0, not -0
        bad = [(r["algo"], r.get("expected_collisions")) for r in rows
               if not re.fullmatch(r"0*\.?0*(e[-+]?\d+)?", r.get("expected_collisions", "x"))]
        check(not bad, "empty file: expected_collisions is 0 (no sign)", "got %r" % bad)
    doc = scan_json(["-a", "all", path], "empty file json")
    if doc is not None:
        check(isinstance(doc, dict) and len(doc.get("summary", [])) == len(ALGOS),
              "empty file json: one summary row per algorithm", repr(doc)[:200])
    run_ok([path], "empty file, table output")
    rows = scan_csv(["-r", "pages", path], "empty file -r pages", ["input", "address", "zero", "xxhash"])
    if rows is not None:
        eq(rows, [], "empty file -r pages: no rows")
    # empty input together with a real one
    good = write_image("good-for-empty.img", [ZERO, b"\x01" * PAGE, ZERO])
    rows = scan_csv([path, good], "empty + good")
    if rows is not None:
        eq([(r["input"], as_int(r["pages"])) for r in rows], [(path, 0), (good, 3), ("*", 3)],
           "empty + good: rows and pages")


@test("6 input edge cases")
def unreadable_inputs():
    rng = rng_for("unreadable")
    pages = [rng.randbytes(PAGE), ZERO, ZERO]
    good = write_image("good.img", pages)
    missing = tmp("no-such-file.img")
    d = tmp("a-directory")
    os.mkdir(d)
    for args in ([missing, good], [good, d], [d, good, missing]):
        r = run(["--csv"] + args)
        what = "inputs %s" % [os.path.basename(a) for a in args]
        eq(r.rc, 1, what + ": exit status 1")
        for bad in (missing, d):
            if bad in args:
                check(any(l.startswith("ksmscan: %s: " % bad) and len(l) > len(bad) + 11
                          for l in r.err.splitlines()),
                      "%s: stderr has 'ksmscan: %s: <reason>'" % (what, bad), repr(r.err[:400]))
        rows = parse_csv(r, what, SUMMARY_COLS) if r.out else None
        if check(rows is not None, what + ": good input still reported", "stdout %r" % r.out[:300]):
            mine = [x for x in (rows or []) if x["input"] == good]
            if eq(len(mine), 1, what + ": one row for the good input"):
                exp = expected_summary(pages, "xxhash")
                exp["input"] = good
                check_summary(mine[0], exp, what + " good input")


@test("6 input edge cases")
def write_error():
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    path, _ = savings_image()
    for opts in ([], ["--csv"], ["--json"], ["--csv", "-r", "pages"]):
        with open("/dev/full", "wb") as full:
            r = run(opts + [path], stdout=full)
        what = "> /dev/full %s" % " ".join(opts)
        eq(r.rc, 1, what + ": exit status 1")
        check(any(l.startswith("ksmscan: ") for l in r.err.splitlines()),
              what + ": error line on stderr", repr(r.err[:300]))


# ---------------------------------------------------------------------------
# Group 7: usage
# ---------------------------------------------------------------------------
@test("7 usage")
def usage_errors():
    path = write_image("usage.img", [ZERO, b"\x02" * PAGE])
    cases = [
        (["--no-such-option", path], "unknown long option"),
        (["-Y", path], "unknown short option"),
        (["-a", "md5", path], "unknown algorithm"),
        (["-a", "xxhash,md5", path], "unknown algorithm in a list"),
        (["--algo=", path], "empty algorithm list"),
        (["-r", "nosuch", path], "unknown report"),
        (["-r", "summary,nosuch", path], "unknown report in a list"),
        (["-o", "xml", path], "unknown output format"),
        (["--output=yaml", path], "unknown --output"),
        (["-f", "qcow2", path], "unknown input format"),
        (["--csv", "-r", "summary,pages", path], "--csv with two reports"),
        (["-o", "csv", "-r", "pages,summary", path], "-o csv with two reports"),
    ]
    for args, what in cases:
        check_usage_error(run(args), what)
    # a missing option argument: the message names the option
    for opt in ("-a", "-f", "-m", "-o", "-r", "--algo", "--report"):
        r = run([opt])
        check_usage_error(r, "%s without its argument" % opt)
        first = ([l for l in r.err.splitlines() if l.startswith("ksmscan: ")] or [""])[0]
        name = opt.lstrip("-")
        named = re.search(r"(%s\b|['\"`]%s['\"`]|-- ?%s\b)" % (re.escape(opt), name, name), first)
        check("(null)" not in first and named,
              "%s without its argument: the error names the option" % opt, repr(first))


@test("7 usage")
def help_and_version():
    r = run(["-a", "help"])
    eq(r.rc, 0, "-a help: exit status 0")
    lines = [l.split() for l in r.out.splitlines() if l.strip()]
    for algo in ALGOS:
        ln = [l for l in lines if l and l[0] == algo]
        if check(ln, "-a help lists %s at the start of a line" % algo, repr(r.out[:500])):
            l = ln[0]
            check(len(l) >= 3 and re.match(r"%d\b" % BITS[algo], l[1]),
                  "-a help: %s then its bits (%d) then a description" % (algo, BITS[algo]), repr(l))
    for opt in ("--help", "-h"):
        r = run([opt])
        eq(r.rc, 0, "%s: exit status 0" % opt)
        check("usage: ksmscan" in r.out, "%s: stdout contains 'usage: ksmscan'" % opt, repr(r.out[:200]))
    for opt in ("--version", "-V"):
        r = run([opt])
        eq(r.rc, 0, "%s: exit status 0" % opt)
        check(r.out.strip() != "", "%s prints something on stdout" % opt)


@test("7 usage")
def accepted_spellings():
    rng = rng_for("spell")
    pages = [rng.randbytes(PAGE), ZERO, ZERO]
    path = write_image("spell.img", pages)
    exp = expected_summary(pages, "xxhash")
    exp["input"] = path
    base = scan_csv([path], "--csv")
    for args, what in ((["-f", "raw", path], "-f raw"), (["-f", "auto", path], "-f auto"),
                       (["--format=raw", path], "--format=raw"),
                       (["-o", "csv", path], "-o csv"), (["--output=csv", path], "--output=csv"),
                       (["-r", "summary", path], "-r summary"), (["-q", path], "-q")):
        opts = [] if args[0] in ("-o", "--output=csv") else ["--csv"]
        r = run_ok(opts + args, what)
        if r is None:
            continue
        rows = parse_csv(r, what, SUMMARY_COLS)
        if rows and eq(len(rows), 1, what + ": one row"):
            check_summary(rows[0], exp, what)
    for args, what in ((["-o", "json", path], "-o json"), (["--json", path], "--json")):
        r = run_ok(args, what)
        doc = parse_json(r, what) if r else None
        if doc is not None:
            try:
                check_summary(doc["summary"][0], exp, what)
            except (KeyError, IndexError, TypeError) as e:
                check(False, what + ": summary[0] present", repr(e))
    doc = scan_json(["-r", "summary,pages", path], "--json with two reports")
    if doc is not None:
        check(isinstance(doc, dict) and isinstance(doc.get("summary"), list)
              and isinstance(doc.get("pages"), list), "--json -r summary,pages has both keys",
              repr(doc)[:200])
        if isinstance(doc, dict) and isinstance(doc.get("pages"), list):
            eq(len(doc["pages"]), len(pages), "--json -r summary,pages: pages rows")
    run_ok(["-r", "summary,pages", path], "table with two reports")
    write_image("-dash.img", pages)
    rows = scan_csv(["--", "-dash.img"], "'--' then a file name starting with '-'", cwd=STATE["tmp"])
    if rows is not None and eq(len(rows), 1, "'--' -dash.img: one row"):
        # CSV defuses a cell a spreadsheet would take for a formula (a
        # leading - + = @): the name is shown with a leading '.
        e = dict(exp, input="'-dash.img")
        check_summary(rows[0], e, "'--' -dash.img")
    r = run_ok(["-o", "csv", "-r", "pages", path], "-o csv -r pages")
    if r is not None and base is not None:
        rows = parse_csv(r, "-o csv -r pages", ["input", "address", "zero", "xxhash"])
        if rows:
            eq([x["xxhash"] for x in rows], [hexdigest("xxhash", p) for p in pages], "-o csv -r pages digests")


# ---------------------------------------------------------------------------
# Group 8: the guest-b fixtures (ELF core, kdump) against guest-b.truth.json
# ---------------------------------------------------------------------------
def elf_load_pages(data):
    """Python ELF64 core reader (the oracle): [(address, memoryview page)].

    PT_LOAD data at p_offset, p_filesz bytes (only what the file holds),
    address p_paddr if non-zero else p_vaddr, PN_XNUM via section 0's sh_info.
    """
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    mv = memoryview(data)
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    if e_phnum == 0xffff:
        e_phnum = struct.unpack_from("<I", data, e_shoff + 0x2c)[0]
    res = []
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        if off + 56 > len(data):
            break
        p_type, _, p_offset, p_vaddr, p_paddr, p_filesz = struct.unpack_from("<IIQQQQ", data, off)
        if p_type != 1:
            continue
        base = p_paddr or p_vaddr
        avail = max(0, min(p_filesz, len(data) - p_offset))
        for k in range(avail // PAGE):
            o = p_offset + k * PAGE
            res.append((base + k * PAGE, mv[o:o + PAGE]))
    return res


def truth_summary(truth, algo):
    e = {k: truth[k] for k in ("pages", "zero_pages", "distinct_pages", "pages_shared",
                               "pages_sharing")}
    n, d = e["pages"], e["distinct_pages"]
    e.update(algo=algo, ksm_zero_pages=0, saved_bytes=e["pages_sharing"] * PAGE,
             general_profit=e["pages_sharing"] * PAGE - n * 64,
             duplicate_ratio=(n - d) / n, saved_percent=100.0 * e["pages_sharing"] / n,
             expected_collisions=d * (d - 1) / 2.0 ** (BITS[algo] + 1))
    if algo in truth["collisions"]:
        e["collisions"] = truth["collisions"][algo]
    return e


_GUEST = {}


def guest_elf():
    """(path of the decompressed core, its bytes, Python oracle pages, truth)."""
    if "elf" in _GUEST:
        return _GUEST["elf"]
    zst = fixture("guest-b.elf.zst")
    if not shutil.which("zstd"):
        raise Skip("zstd command not installed")
    path = tmp("guest-b.elf")
    with open(path, "wb") as f:
        subprocess.run(["zstd", "-dcq", zst], stdout=f, check=True, timeout=120)
    data = open(path, "rb").read()
    with open(fixture("guest-b.truth.json")) as f:
        truth = json.load(f)
    _GUEST["elf"] = (path, data, elf_load_pages(data), truth)
    return _GUEST["elf"]


def guest_ids():
    """Counter of page identities (sha256) of the Python-read core."""
    if "ids" not in _GUEST:
        _GUEST["ids"] = collections.Counter(hashlib.sha256(p).digest() for _, p in guest_elf()[2])
    return _GUEST["ids"]


@test("8 guest-b fixtures")
def guest_oracle_vs_truth():
    """Our Python ELF reader reproduces guest-b.truth.json (oracle sanity)."""
    path, data, pages, truth = guest_elf()
    ids = guest_ids()
    zero_id = hashlib.sha256(ZERO).digest()
    eq(len(pages), truth["pages"], "python ELF oracle: pages vs truth.json")
    eq(ids[zero_id], truth["zero_pages"], "python ELF oracle: zero_pages vs truth.json")
    eq(len(ids), truth["distinct_pages"], "python ELF oracle: distinct_pages vs truth.json")
    shared = sum(-(-c // 256) for c in ids.values() if c >= 2)
    sharing = sum(c - -(-c // 256) for c in ids.values() if c >= 2)
    eq((shared, sharing), (truth["pages_shared"], truth["pages_sharing"]),
       "python ELF oracle: pages_shared, pages_sharing vs truth.json")


@test("8 guest-b fixtures")
def guest_summary():
    path, data, pages, truth = guest_elf()
    zst = fixture("guest-b.elf.zst")
    algos = ["xxhash", "xxh64", "crc32c", "xxh32"]
    inputs = [(zst, "elf"), (path, "elf")]
    try:
        inputs.append((fixture("guest-b.kdump-zlib"), "kdump"))
    except Skip as e:
        skip("guest-b summary without the kdump input: %s" % e)
    copies = len(inputs)
    rows = scan_csv(["-a", ",".join(algos)] + [p for p, _ in inputs],
                    "guest-b: " + ", ".join(os.path.basename(p) for p, _ in inputs))
    if rows is not None:
        exp = [(p, f, a) for p, f in inputs for a in algos] + [("*", None, a) for a in algos]
        eq([(r["input"], r["algo"]) for r in rows], [(p, a) for p, _, a in exp],
           "guest-b: row order")
        for r, (p, f, a) in zip(rows, exp):
            e = truth_summary(truth, a)
            if p == "*":          # every content once per input
                n = copies * truth["pages"]
                ids = guest_ids()
                sh = sum(-(-copies * c // 256) - (copies * c > 256 and copies * c % 256 == 1)
                         for c in ids.values())
                sg = sum(copies * c - -(-copies * c // 256) for c in ids.values())
                e.update(pages=n, zero_pages=copies * truth["zero_pages"], pages_shared=sh,
                         pages_sharing=sg, saved_bytes=sg * PAGE, general_profit=sg * PAGE - n * 64,
                         duplicate_ratio=(n - truth["distinct_pages"]) / n,
                         saved_percent=100.0 * sg / n)
            e["input"] = p
            check_summary(r, e, "guest-b [%s %s]" % (p, a), fmt=f)
    # through a pipe from zstd
    z = subprocess.Popen(["zstd", "-dcq", zst], stdout=subprocess.PIPE)
    try:
        rows = scan_csv(["-a", "xxhash", "-"], "guest-b: zstd -dc | ksmscan -", stdin=z.stdout)
    finally:
        z.stdout.close()
        z.wait()
    if rows is not None and eq(len(rows), 1, "guest-b pipe: one row"):
        e = truth_summary(truth, "xxhash")
        e["input"] = "-"
        check_summary(rows[0], e, "guest-b pipe", fmt="elf")
    # -f raw overrides detection: the core is read as a plain image
    rows = scan_csv(["-q", "-f", "raw", path], "guest-b.elf -f raw")
    if rows is not None:
        eq(as_int(rows[0]["pages"]), len(data) // PAGE, "guest-b.elf -f raw: pages = size / 4096")
        eq(rows[0]["format"], "raw", "guest-b.elf -f raw: format")


@test("8 guest-b fixtures")
def guest_pages():
    """Every page of the ELF core and of the kdump: address, zero, xxh64 vs the Python reader."""
    path, data, pages, truth = guest_elf()
    inputs = [path]
    try:
        inputs.append(fixture("guest-b.kdump-zlib"))
    except Skip as e:
        skip("guest-b -r pages of the ELF core only: %s" % e)
    rows = scan_csv(["-r", "pages", "-a", "xxh64"] + inputs, "guest-b -r pages",
                    ["input", "address", "zero", "xxh64"])
    if rows is None:
        return
    exp = sorted(("0x%x" % a, "1" if pg == ZERO else "0", "%016x" % xxhash.xxh64_intdigest(pg))
                 for a, pg in pages)
    for inp in inputs:
        got = sorted((r["address"], r["zero"], r["xxh64"]) for r in rows if r["input"] == inp)
        eq(len(got), len(exp), "%s -r pages: rows" % inp)
        if got != exp:
            diff = sorted(set(got) ^ set(exp))[:4]
            check(False, "%s -r pages rows == Python ELF reader" % inp, "first differences %r" % diff)
        else:
            check(True, "%s -r pages rows == Python ELF reader" % inp)


@test("8 guest-b fixtures")
def guest_truncated():
    """Prefixes of the core: exit 1, a message naming the file, what was read is reported."""
    path, data, pages, truth = guest_elf()
    first_load = struct.unpack_from("<Q", data, struct.unpack_from("<Q", data, 0x20)[0] + 56 + 8)[0]
    for n in (63, 100, 600, first_load + 2048, 1000000, len(data) - 1000):
        cut = tmp("guest-b-prefix-%d.elf" % n)
        with open(cut, "wb") as f:
            f.write(data[:n])
        for opts in ([], ["-f", "elf"]) if n < 1000000 else ([],):
            what = "ELF prefix of %d bytes %s" % (n, " ".join(opts))
            r = run(opts + ["--csv", "-a", "xxh64", cut])
            eq(r.rc, 1, what + ": exit status 1" + ("" if r.rc in (0, 1, 2) else " (crashed) " + r.err[-300:]))
            check(any(l.startswith("ksmscan: %s: " % cut) for l in r.err.splitlines()),
                  what + ": 'ksmscan: FILE: ...' on stderr", repr(r.err[:300]))
            rows = parse_csv(r, what, SUMMARY_COLS) if r.rc == 1 and r.out else None
            if n >= 600 and rows is not None and eq(len(rows), 1, what + ": one row"):
                exp = [pg for _, pg in elf_load_pages(data[:n])]
                eq(as_int(rows[0]["pages"]), len(exp), what + ": pages read (Python reader)")
                eq(as_int(rows[0]["distinct_pages"]), len({bytes(p) for p in exp}),
                   what + ": distinct_pages")
    # -f elf on something that is not ELF
    r = run(["-f", "elf", "--csv", fixture("vectors.img")])
    eq(r.rc, 1, "-f elf on vectors.img: exit status 1")
    check(any(l.startswith("ksmscan: ") and "vectors.img" in l for l in r.err.splitlines()),
          "-f elf on vectors.img: message names the file", repr(r.err[:300]))
    # Still to do once the reports exist: -r histogram buckets == truth.json "histogram".


# ---------------------------------------------------------------------------
def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
