#!/usr/bin/python3
"""ksmscan tests: implementation paths, -a auto, --bench, and the histogram,
top, tree and multi-input reports; -j and input-form invariance.

Run from the repository root with Debian's Python (xxhash, crc32c, zstandard):

    /usr/bin/python3 tests/test_reports.py [NAME-SUBSTRING...]

The binary under test is $KSMSCAN (split like a shell word list) or ./ksmscan.
Every figure is compared with an oracle computed here from the bytes this file
generates (hashlib/bytes identity, python-xxhash, python-crc32c, a Python
red-black tree simulation, the fixtures' vectors.csv and guest-b.truth.json).
Benchmarks are checked for form and consistency only, never for speed order.

One line per failing check, SKIP lines, last line "N passed, N failed";
exit 1 if anything failed.
"""

import collections
import csv
import io
import json
import math
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (as_int, parse_csv, undigest, BITS, KSMSCAN, ORACLE, PAGE, SUMMARY_COLS, ZERO, Skip, check,
                     crc32c_kernel, eq, fixture, hexdigest, ksm_group, run_suite, skip, test,
                     tmp)  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIMEOUT = 120          # seconds per ksmscan run (generous for ASan/UBSan)

HIST_COLS = ["input", "bucket", "groups", "pages", "allocated_bytes", "referenced_bytes"]
TOP_COLS = ["input", "rank", "pages", "digest", "description"]
TREE_COLS = ["input", "strategy", "algo", "inserts", "matches", "avg_depth", "max_depth",
             "node_visits", "memcmp_calls", "memcmp_bytes", "checksum_compares", "seconds"]
REGION_COLS = ["input", "region", "start", "end", "pages", "zero_pages", "redundant_pages"]
BENCH_COLS = ["algo", "bits", "hot_mib_s", "hot_ns_per_page", "stream_mib_s",
              "stream_ns_per_page"]
TIMING = {"summary": ["hash_mib_s", "ns_per_page"], "tree": ["seconds"]}

# Implementation paths of the README: algorithm -> paths that can be forced.
IMPLS = {"crc32c": ["avx512", "vpclmul", "sse42x3", "sse42", "sw"],
         "xxh3": ["avx512", "avx2", "sse2"],
         "xxh128": ["avx512", "avx2", "sse2"]}


# ---------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------
def expected_summary(pages, algo, m=256):
    """the KSM model (docs/model.md) figures for a list of page contents (bytes)."""
    counts = collections.Counter(pages)
    n = len(pages)
    distinct = len(counts)
    shared = sharing = 0
    for c in counts.values():
        if c >= 2:
            a, b = ksm_group(c, m)
            shared += a
            sharing += b
    saved = sharing * PAGE
    ndig = len({ORACLE[algo](p) for p in counts})
    return {
        "algo": algo, "pages": n, "zero_pages": counts.get(ZERO, 0),
        "distinct_pages": distinct, "pages_shared": shared, "pages_sharing": sharing,
        "ksm_zero_pages": 0, "saved_bytes": saved, "general_profit": saved - n * 64,
        "collisions": distinct - ndig,
        "expected_collisions": distinct * (distinct - 1) / 2.0 ** (BITS[algo] + 1),
        "duplicate_ratio": (n - distinct) / n,
        "saved_percent": 100.0 * saved / (n * PAGE),
    }


def expected_histogram(pages):
    """zdb -S style: content seen c times -> bucket 2^floor(log2 c)."""
    h = {}
    for c in collections.Counter(pages).values():
        b = 1 << (c.bit_length() - 1)
        g, p = h.get(b, (0, 0))
        h[b] = (g + 1, p + c)
    return [(b, g, p, g * PAGE, p * PAGE) for b, (g, p) in sorted(h.items())]


def describe_oracle(page):
    """(kind, hex): what the top report's description must say."""
    if page == ZERO:
        return "zero", None
    if page == page[:1] * PAGE:
        return "byte", page[0]
    for w in (2, 4, 8):
        if page == page[:w] * (PAGE // w):
            return "pattern", page[:w].hex()
    if page == page[:16] * (PAGE // 16):
        return "pattern|starts", page[:16].hex()   # a 16-byte period: either reading
    return "starts", page[:16].hex()


def check_description(desc, page, label):
    kind, val = describe_oracle(page)
    if kind == "zero":
        return eq(desc, "zero page", label)
    if kind == "byte":
        return eq(desc, "byte 0x%02x repeated" % val, label)
    m = re.match(r"(pattern|starts) ([0-9a-f]+)", desc or "")
    return check(m is not None and m.group(1) in kind.split("|") and m.group(2) == val, label,
                 "expected to start with %r, got %r" % ("%s %s" % (kind, val), desc))


# ---- red-black tree simulation (CLRS RB-INSERT / RB-INSERT-FIXUP) ----------
class TreeSim:
    """KSM's unstable tree (by_checksum=False: memcmp order) or the
    checksum-first tree (order by checksum, then bytes)."""

    def __init__(self, checksum=None):
        self.checksum = checksum        # None, or a function page -> int
        self.key = []                   # node -> page
        self.left, self.right, self.parent, self.red = [], [], [], []
        self.root = -1
        self.st = dict(inserts=0, matches=0, node_visits=0, max_depth=0,
                       memcmp_calls=0, memcmp_bytes=0, checksum_compares=0)
        self._int = {}
        self._sum = {}

    def _as_int(self, p):
        v = self._int.get(p)
        if v is None:
            v = self._int[p] = int.from_bytes(p, "big")
        return v

    def _cs(self, p):
        v = self._sum.get(p)
        if v is None:
            v = self._sum[p] = self.checksum(p)
        return v

    def _memcmp(self, a, b):
        self.st["memcmp_calls"] += 1
        if a == b:
            self.st["memcmp_bytes"] += PAGE
            return 0
        x, y = self._as_int(a), self._as_int(b)
        first = PAGE - ((x ^ y).bit_length() + 7) // 8   # index of first difference
        self.st["memcmp_bytes"] += first + 1
        return -1 if x < y else 1

    def _cmp(self, a, b):
        if self.checksum is not None:
            self.st["checksum_compares"] += 1
            ca, cb = self._cs(a), self._cs(b)
            if ca != cb:
                return -1 if ca < cb else 1
        return self._memcmp(a, b)

    def _rot_left(self, x):
        L, R, P = self.left, self.right, self.parent
        y = R[x]
        R[x] = L[y]
        if L[y] != -1:
            P[L[y]] = x
        P[y] = P[x]
        if P[x] == -1:
            self.root = y
        elif L[P[x]] == x:
            L[P[x]] = y
        else:
            R[P[x]] = y
        L[y] = x
        P[x] = y

    def _rot_right(self, x):
        L, R, P = self.left, self.right, self.parent
        y = L[x]
        L[x] = R[y]
        if R[y] != -1:
            P[R[y]] = x
        P[y] = P[x]
        if P[x] == -1:
            self.root = y
        elif R[P[x]] == x:
            R[P[x]] = y
        else:
            L[P[x]] = y
        R[y] = x
        P[x] = y

    def _fixup(self, z):
        L, R, P, red = self.left, self.right, self.parent, self.red
        while P[z] != -1 and red[P[z]]:
            p = P[z]
            g = P[p]
            if p == L[g]:
                u = R[g]
                if u != -1 and red[u]:
                    red[p] = red[u] = False
                    red[g] = True
                    z = g
                else:
                    if z == R[p]:
                        z = p
                        self._rot_left(z)
                        p = P[z]
                        g = P[p]
                    red[p] = False
                    red[g] = True
                    self._rot_right(g)
            else:
                u = L[g]
                if u != -1 and red[u]:
                    red[p] = red[u] = False
                    red[g] = True
                    z = g
                else:
                    if z == L[p]:
                        z = p
                        self._rot_right(z)
                        p = P[z]
                        g = P[p]
                    red[p] = False
                    red[g] = True
                    self._rot_left(g)
        red[self.root] = False

    def add(self, page):
        parent, cur, depth, c = -1, self.root, 0, 0
        while cur != -1:
            depth += 1
            c = self._cmp(page, self.key[cur])
            if c == 0:
                break
            parent = cur
            cur = self.left[cur] if c < 0 else self.right[cur]
        self.st["node_visits"] += depth
        self.st["max_depth"] = max(self.st["max_depth"], depth)
        if cur != -1:
            self.st["matches"] += 1
            return
        z = len(self.key)
        self.key.append(page)
        self.left.append(-1)
        self.right.append(-1)
        self.parent.append(parent)
        self.red.append(True)
        if parent == -1:
            self.root = z
        elif c < 0:
            self.left[parent] = z
        else:
            self.right[parent] = z
        self._fixup(z)
        self.st["inserts"] += 1

    def height(self):
        def h(n):
            return 0 if n == -1 else 1 + max(h(self.left[n]), h(self.right[n]))
        return h(self.root)


def simulate_tree(pages, algo=None):
    t = TreeSim(ORACLE[algo] if algo else None)
    for p in pages:
        t.add(p)
    return t


# ---------------------------------------------------------------------------
# Harness (as in run_tests.py)
# ---------------------------------------------------------------------------
def write_image(name, pages):
    path = tmp(name)
    with open(path, "wb") as f:
        for p in pages:
            f.write(p)
    return path


class Run:
    def __init__(self, args, rc, out, err, env=None):
        self.args, self.rc, self.out, self.err = args, rc, out, err
        self.cmd = " ".join(["%s=%s" % kv for kv in sorted((env or {}).items())] +
                            [shlex.quote(a) for a in args])

    def brief(self):
        return "`%s` rc=%r stderr=%r" % (self.cmd, self.rc, self.err[-600:])


def base_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KSMSCAN_IMPL_") and k != "KSMSCAN_CRC32C"}
    env.update(extra or {})
    return env


def run(args, input=None, env=None):
    """Run ksmscan with args; input= bytes go through a pipe; env= extra variables."""
    full = KSMSCAN + list(args)
    kw = {"env": base_env(env)}
    if input is not None:
        kw["input"] = input
    else:
        kw["stdin"] = subprocess.DEVNULL
    try:
        p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, **kw)
    except subprocess.TimeoutExpired as e:
        return Run(full, "timeout", (e.stdout or b"").decode("utf-8", "replace"),
                   (e.stderr or b"").decode("utf-8", "replace"), env)
    except OSError as e:
        return Run(full, "cannot execute: %s" % e, "", "", env)
    return Run(full, p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"), env)


def run_ok(args, what, **kw):
    r = run(args, **kw)
    if check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return r
    return None


def scan_csv(args, what, cols, **kw):
    r = run_ok(["--csv"] + list(args), what, **kw)
    if r is None:
        return None
    return parse_csv(r, what, cols)


def parse_json(r, what):
    try:
        doc = json.loads(r.out)
        for key, rows in (doc.items() if isinstance(doc, dict) else ()):
            if isinstance(rows, list):
                undigest(rows, "%s: %s" % (what, key))
        return doc
    except ValueError as e:
        check(False, "%s: output is valid JSON" % what, "%s; output %r" % (e, r.out[:300]))
        return None


def as_float(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def close(got, exp, rel=1e-5, abs_=0.0):
    f = as_float(got)
    return f is not None and abs(f - exp) <= max(abs_, rel * abs(exp))


def strip_cols(rows, drop):
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


def rng_for(name):
    return random.Random("ksmscan-reports-" + name)


def rand_page_fast(rng):
    return rng.getrandbits(PAGE * 8).to_bytes(PAGE, "little")


def parse_help(env=None):
    """`-a help` -> ({name: (bits, impl)}, Run)."""
    r = run(["-a", "help"], env=env)
    out = {}
    for line in r.out.splitlines():
        t = line.split()
        if len(t) >= 3 and t[0] in BITS:
            out[t[0]] = (as_int(t[1]), t[2])
    return out, r


def table_rows(out):
    return [l.split() for l in out.splitlines() if l.strip()]


# ---------------------------------------------------------------------------
# 1. Implementation paths
# ---------------------------------------------------------------------------
def impl_test_pages():
    rng = rng_for("impl")
    pages = [rand_page_fast(rng) for _ in range(200)]
    pages += [ZERO, b"\xff" * PAGE]
    base = rand_page_fast(rng)
    positions = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256,
                 511, 512, 1023, 1024, 1365, 2047, 2048, 3071, 4031, 4032, 4064,
                 4088, 4092, 4094, 4095]
    pages.append(base)
    for i in positions:
        for src, x in ((base, 0x01), (base, 0x80), (ZERO, 0x01), (b"\xff" * PAGE, 0xff)):
            b = bytearray(src)
            b[i] ^= x
            pages.append(bytes(b))
    return pages


def read_vectors():
    with open(fixture("vectors.csv"), newline="") as f:
        return list(csv.DictReader(f))


@test("1 impl")
def help_lists_algorithms():
    h, r = parse_help()
    eq(r.rc, 0, "`ksmscan -a help` exit status")
    for a, bits in BITS.items():
        got = h.get(a)
        if check(got is not None, "-a help lists %s" % a, "stdout %r" % r.out[:400]):
            eq(got[0], bits, "-a help: bits of %s" % a)
            check(re.fullmatch(r"[a-z0-9]+", got[1] or "") is not None,
                  "-a help: %s names an implementation" % a, repr(got))
    eq(r.err, "", "-a help without KSMSCAN_IMPL_*: nothing on stderr")
    hb, rb = parse_help({"KSMSCAN_IMPL_CRC32C": "no-such-path"})
    check(re.search(r"^ksmscan: KSMSCAN_IMPL_CRC32C=no-such-path: no such implementation "
                    r"on this CPU; using \S+", rb.err, re.M) is not None,
          "unknown KSMSCAN_IMPL_CRC32C value: warning on stderr", rb.brief())
    eq(rb.rc, 0, "unknown KSMSCAN_IMPL_CRC32C value: still exit 0")
    eq(hb.get("crc32c"), h.get("crc32c"),
       "unknown KSMSCAN_IMPL_CRC32C value: -a help shows the default path")


@test("1 impl")
def forced_paths_agree_with_oracle():
    pages = impl_test_pages()
    img = write_image("impl.img", pages)
    data = b"".join(pages)
    vec = read_vectors()
    vimg = fixture("vectors.img")
    available = {}
    for algo, impls in IMPLS.items():
        var = "KSMSCAN_IMPL_" + algo.upper().replace("-", "_")
        exp = [hexdigest(algo, p) for p in pages]
        for impl in impls:
            env = {var: impl}
            label = "%s=%s" % (var, impl)
            h, hr = parse_help(env)
            got_impl = (h.get(algo) or (None, None))[1]
            if "no such implementation on this CPU" in hr.err:
                m = re.search(r"%s=%s: no such implementation on this CPU; using (\S+)"
                              % (re.escape(var), re.escape(impl)), hr.err)
                check(m is not None and m.group(1) == got_impl,
                      "%s: the warning names the path -a help shows" % label,
                      "help says %r; %s" % (got_impl, hr.brief()))
                check(got_impl != impl, "%s: unavailable path not shown as in use" % label,
                      repr(got_impl))
                skip("%s: not available on this CPU (ksmscan uses %s instead)"
                     % (label, got_impl))
                continue
            if not eq(got_impl, impl, "%s: -a help shows the forced path" % label):
                continue
            available.setdefault(algo, []).append(impl)
            # every page of the generated image, by file and through a pipe
            for how, args, kw in (("file", [img], {}), ("pipe", ["-"], {"input": data})):
                rows = scan_csv(["-r", "pages", "-a", algo] + args, "%s %s" % (label, how),
                                ["input", "address", "zero", algo], env=env, **kw)
                if rows is None:
                    continue
                got = [r[algo] for r in rows]
                addr = [r["address"] for r in rows]
                eq(addr, ["0x%x" % (i * PAGE) for i in range(len(pages))],
                   "%s %s: page addresses" % (label, how))
                bad = [(i, e, g) for i, (e, g) in enumerate(zip(exp, got)) if e != g]
                check(len(got) == len(exp) and not bad,
                      "%s %s: %d digests equal the Python oracle" % (label, how, len(exp)),
                      "%d rows; first mismatches (page, expected, got): %r"
                      % (len(got), bad[:3]))
            # the fixture's vectors
            rows = scan_csv(["-r", "pages", "-a", algo, vimg], "%s vectors.img" % label,
                            ["input", "address", "zero", algo], env=env)
            if rows is not None:
                got = {r["address"]: r[algo] for r in rows}
                want = {v["address"]: v[algo] for v in vec}
                bad = [(a, want[a], got.get(a)) for a in want if got.get(a) != want[a]]
                check(len(got) == len(want) and not bad,
                      "%s: vectors.img digests equal vectors.csv" % label,
                      "%d vs %d rows; first mismatches %r" % (len(got), len(want), bad[:3]))
    for algo in IMPLS:
        check(available.get(algo), "%s: at least one forced path is available" % algo)


# ---------------------------------------------------------------------------
# 2. -a auto and --bench
# ---------------------------------------------------------------------------
def mixed_pages(name, n_unique=40):
    rng = rng_for(name)
    groups = [rand_page_fast(rng) for _ in range(12)]
    pages = [ZERO] * 25 + [b"\x5a" * PAGE] * 9
    for i, g in enumerate(groups):
        pages += [g] * (2 + 3 * i)
    base = rand_page_fast(rng)
    for i in range(30):
        pages.append(base[:PAGE - 8] + struct.pack("<Q", i))
    pages += [rand_page_fast(rng) for _ in range(n_unique)]
    rng.shuffle(pages)
    return pages


@test("2 auto")
def auto_resolves_to_a_candidate():
    pages = mixed_pages("auto")
    img = write_image("auto.img", pages)
    rows = scan_csv(["-a", "auto", img], "-a auto summary", SUMMARY_COLS)
    if not rows:
        return
    eq(len(rows), 1, "-a auto: one summary row")
    algo = rows[0]["algo"]
    if not check(algo in ("crc32c", "xxhash"), "-a auto: algo is crc32c or xxhash",
                 "got %r" % algo):
        return
    exp = expected_summary(pages, algo)
    for k, v in exp.items():
        if isinstance(v, float):
            check(close(rows[0][k], v, 1e-5, 1e-12), "-a auto (%s): %s" % (algo, k),
                  "expected %r, got %r" % (v, rows[0][k]))
        elif k != "algo":
            eq(as_int(rows[0][k]), v, "-a auto (%s): %s" % (algo, k))
    explicit = scan_csv(["-a", algo, img], "-a %s summary" % algo, SUMMARY_COLS)
    if explicit:
        eq(strip_cols(rows, TIMING["summary"]), strip_cols(explicit, TIMING["summary"]),
           "-a auto summary == -a %s summary (timing aside)" % algo)
    for col in TIMING["summary"]:
        f = as_float(rows[0][col])
        check(f is not None and f > 0, "-a auto: %s positive" % col, repr(rows[0][col]))
    # the pages report names the resolved algorithm and has its digests
    prow = scan_csv(["-a", "auto", "-r", "pages", img], "-a auto pages",
                    ["input", "address", "zero"])
    if prow:
        hdr = [k for k in prow[0] if k not in ("input", "address", "zero")]
        if check(len(hdr) == 1 and hdr[0] in ("crc32c", "xxhash"),
                 "-a auto -r pages: one digest column named crc32c or xxhash", repr(hdr)):
            a = hdr[0]
            bad = [i for i, (r, p) in enumerate(zip(prow, pages)) if r[a] != hexdigest(a, p)]
            check(len(prow) == len(pages) and not bad,
                  "-a auto -r pages: %s digests equal the oracle" % a, "pages %r" % bad[:5])


@test("2 bench")
def bench_csv():
    algos = ["xxhash", "crc32c", "xxh32"]
    rows = scan_csv(["--bench", "-a", ",".join(algos)], "--bench --csv", BENCH_COLS)
    if rows is None:
        return
    hdr = list(rows[0].keys()) if rows else []
    eq(hdr[6:8], ["impl", "auto"], "--bench --csv: impl and auto columns follow")
    eq(sorted(r["algo"] for r in rows), sorted(algos), "--bench --csv: one row per algorithm")
    help_, _ = parse_help()
    for r in rows:
        a = r["algo"]
        eq(as_int(r["bits"]), BITS.get(a), "--bench %s: bits" % a)
        vals = {c: as_float(r[c]) for c in BENCH_COLS[2:]}
        if not check(all(v is not None and v > 0 for v in vals.values()),
                     "--bench %s: speeds and times are positive numbers" % a, repr(r)):
            continue
        for kind in ("hot", "stream"):
            mib = PAGE / (vals[kind + "_ns_per_page"] * 1e-9) / 2 ** 20
            check(abs(mib - vals[kind + "_mib_s"]) <= 0.01 * mib,
                  "--bench %s: %s_mib_s consistent with %s_ns_per_page (1%%)" % (a, kind, kind),
                  "4096 B / %s ns = %.1f MiB/s, printed %s"
                  % (r[kind + "_ns_per_page"], mib, r[kind + "_mib_s"]))
        if a in help_:
            eq(r.get("impl"), help_[a][1], "--bench %s: impl is the one -a help names" % a)
        check(r.get("auto") in ("0", "1"), "--bench %s: auto is 0 or 1" % a, repr(r.get("auto")))
    chosen = [r["algo"] for r in rows if r.get("auto") == "1"]
    check(len(chosen) == 1 and chosen[0] in ("crc32c", "xxhash"),
          "--bench with crc32c and xxhash: exactly one auto=1 row, crc32c or xxhash",
          repr(chosen))


@test("2 bench")
def bench_json_and_errors():
    r = run_ok(["--bench", "--json", "-a", "xxhash,crc32c"], "--bench --json")
    if r:
        j = parse_json(r, "--bench --json")
        if check(isinstance(j, dict) and isinstance(j.get("bench"), list),
                 "--bench --json: an object with a 'bench' list", r.out[:300]):
            rows = j["bench"]
            eq(sorted(x.get("algo") for x in rows), ["crc32c", "xxhash"],
               "--bench --json: rows")
            for x in rows:
                check(all(isinstance(x.get(c), (int, float)) and not isinstance(x.get(c), bool)
                          and x.get(c) > 0 for c in BENCH_COLS[1:]),
                      "--bench --json %s: numeric positive bits/speeds/times" % x.get("algo"),
                      repr(x))
            eq(sum(1 for x in rows if x.get("auto") in (1, True)), 1,
               "--bench --json: exactly one auto row")
    # The spread of the best runs: the third best's time over the best's,
    # less 1, in percent; never negative. And a progress line when asked.
    r = run_ok(["--bench", "--csv", "-a", "xxhash", "--progress"], "--bench --progress")
    if r:
        rows = list(csv.DictReader(io.StringIO(r.out)))
        check(rows and list(rows[0])[-2:] == ["hot_spread_pct", "stream_spread_pct"]
              and all(float(rows[0][c]) >= 0 for c in list(rows[0])[-2:]),
              "--bench: the spread of the best runs after the fixed columns", r.out[:300])
        check("measuring xxhash (1 of 1)" in r.err, "--bench --progress says what it measures",
              repr(r.err[:200]))
    r = run_ok(["--bench", "--csv", "-a", "xxhash"], "--bench without a terminal")
    if r:
        eq(r.err, "", "--bench without a terminal: no progress line")
    img = write_image("bench-input.img", [ZERO])
    r = run(["--bench", img])
    eq(r.rc, 2, "`ksmscan --bench FILE`: exit status 2")
    eq(r.out, "", "`ksmscan --bench FILE`: nothing on stdout")
    check(r.err.startswith("ksmscan: "), "`ksmscan --bench FILE`: message on stderr", r.err[:200])


# ---------------------------------------------------------------------------
# 3. Histogram
# ---------------------------------------------------------------------------
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 255, 256, 257, 1000]


def hist_images():
    rng = rng_for("hist")
    contents = [rand_page_fast(rng) for _ in SIZES]
    a = []
    for c, n in zip(contents, SIZES):
        a += [c] * n
    a += [ZERO] * 37
    a += [rand_page_fast(rng) for _ in range(50)]
    rng.shuffle(a)
    # b shares the 100-copy, 3-copy and 1-copy contents and zero pages with a
    extra = [rand_page_fast(rng) for _ in range(3)]
    b = [contents[11]] * 50 + [contents[2]] * 6 + [contents[0]] + [ZERO] * 12
    b += [extra[0]] * 3 + [extra[1]] * 6 + [extra[2]] * 1
    b += [rand_page_fast(rng) for _ in range(20)]
    rng.shuffle(b)
    return a, b


def hist_rows_of(rows):
    return [(r["input"], as_int(r["bucket"]), as_int(r["groups"]), as_int(r["pages"]),
             as_int(r["allocated_bytes"]), as_int(r["referenced_bytes"])) for r in rows]


@test("3 histogram")
def histogram_generated():
    a, b = hist_images()
    ia, ib = write_image("hist-a.img", a), write_image("hist-b.img", b)
    exp = [(ia,) + t for t in expected_histogram(a)]
    rows = scan_csv(["-r", "histogram", ia], "histogram one input", HIST_COLS)
    if rows is not None:
        eq(hist_rows_of(rows), exp, "histogram of one input (rows, in bucket order)")
        hdr = list(rows[0].keys()) if rows else []
        check(not any("bar" in h for h in hdr), "histogram CSV: no bar column", repr(hdr))
    exp2 = exp + [(ib,) + t for t in expected_histogram(b)] + \
        [("*",) + t for t in expected_histogram(a + b)]
    rows = scan_csv(["-r", "histogram", ia, ib], "histogram two inputs", HIST_COLS)
    if rows is not None:
        got = hist_rows_of(rows)
        eq(got, exp2, "histogram of two inputs and '*'")
        check(not any(r["bucket"] == "total" or "#" in "".join(r.values()) for r in rows),
              "histogram CSV: no total row, no bar chart")
    r = run_ok(["--json", "-r", "histogram", ia, ib], "histogram --json")
    if r:
        j = parse_json(r, "histogram --json")
        rows = (j or {}).get("histogram") if isinstance(j, dict) else None
        if check(isinstance(rows, list), "histogram --json: a 'histogram' list", r.out[:200]):
            got = [tuple(x.get(k) for k in HIST_COLS) for x in rows]
            eq(got, exp2, "histogram --json rows (numbers) == oracle")
            check(all(set(x) == set(HIST_COLS) for x in rows),
                  "histogram --json: keys are exactly the six columns (no bar, no total)",
                  repr(rows[:1]))
    # table (-l: every column, names whole): bar chart and total rows with
    # the oracle's totals
    r = run_ok(["-l", "-r", "histogram", ia, ib], "histogram table")
    if r:
        check("#" in r.out, "histogram table has a bar chart ('#')", r.out[:300])
        totals = {t[0]: t[2:6] for t in table_rows(r.out) if len(t) >= 6 and t[1] == "total"}
        for name, pages in ((ia, a), (ib, b), ("*", a + b)):
            d = len(set(pages))
            eq(totals.get(name), [str(d), str(len(pages)), str(d * PAGE), str(len(pages) * PAGE)],
               "histogram table: total row of %s (groups, pages, bytes)" % name)


@test("3 histogram")
def histogram_fixture():
    """The guest's histogram from the committed ELF core, and from the kdump
    when that optional fixture is found: buckets == truth.json."""
    with open(fixture("guest-b.truth.json")) as f:
        truth = json.load(f)
    paths = [fixture("guest-b.elf.zst")]
    try:
        paths.append(fixture("guest-b.kdump-zlib"))
    except Skip as e:
        skip("histogram of the ELF core only: %s" % e)
    for path in paths:
        name = os.path.basename(path)
        rows = scan_csv(["-r", "histogram", path], "histogram " + name, HIST_COLS)
        if rows is None:
            continue
        got = {str(as_int(r["bucket"])): as_int(r["groups"]) for r in rows}
        eq(got, {k: v for k, v in truth["histogram"].items()},
           name + " histogram buckets -> groups == truth.json")
        eq(sum(as_int(r["pages"]) for r in rows), truth["pages"],
           name + " histogram: pages add up to truth pages")
        eq(sum(as_int(r["groups"]) for r in rows), truth["distinct_pages"],
           name + " histogram: groups add up to truth distinct_pages")
        check(all(as_int(r["referenced_bytes"]) == as_int(r["pages"]) * PAGE and
                  as_int(r["allocated_bytes"]) == as_int(r["groups"]) * PAGE for r in rows),
              name + " histogram: bytes = pages/groups x 4096")
        check(all(as_int(r["pages"]) >= as_int(r["groups"]) * as_int(r["bucket"]) and
                  as_int(r["pages"]) < as_int(r["groups"]) * 2 * as_int(r["bucket"]) for r in rows),
              name + " histogram: bucket <= pages/groups < 2*bucket")


# ---------------------------------------------------------------------------
# 4. Top
# ---------------------------------------------------------------------------
def top_images():
    rng = rng_for("top")
    p4 = bytes.fromhex("deadbeef") * 1024
    p8 = bytes.fromhex("0123456789abcdef") * 512
    q8 = bytes.fromhex("00000000000000ff") * 512
    p2 = bytes.fromhex("7f01") * 2048
    p16 = bytes(range(0x30, 0x40)) * 256
    r = [rand_page_fast(rng) for _ in range(6)]
    a = ([p2] * 8 + [p16] * 6 + [ZERO] * 40 + [b"\xab" * PAGE] * 30 + [p4] * 25 + [p8] * 20 + [r[0]] * 15 +
         [r[1]] * 10 + [r[2]] * 10 + [b"\x01" * PAGE] * 7 + [q8] * 5 + [r[3]] * 3 +
         [r[4]] * 2)
    a += [rand_page_fast(rng) for _ in range(30)]
    rng.shuffle(a)
    b = [r[1]] * 12 + [p4] * 3 + [r[5]] * 26 + [ZERO] * 2 + [rand_page_fast(rng) for _ in range(5)]
    rng.shuffle(b)
    return a, b


def check_top(rows, name, pages, n, algo, label):
    counts = collections.Counter(pages)
    by_digest = {}
    for p in counts:
        by_digest.setdefault(hexdigest(algo, p), []).append(p)
    mine = [r for r in rows if r["input"] == name]
    k = min(n, len(counts))
    eq([as_int(r["rank"]) for r in mine], list(range(1, k + 1)), "%s %s: ranks 1..%d"
       % (label, name, k))
    got = [as_int(r["pages"]) for r in mine]
    check(all(x is not None for x in got) and got == sorted(got, reverse=True),
          "%s %s: pages descending" % (label, name), repr(got))
    eq(sorted(got, reverse=True), sorted(counts.values(), reverse=True)[:k],
       "%s %s: page counts == the top %d counts" % (label, name, k))
    eq(len({r["digest"] for r in mine}), len(mine), "%s %s: digests distinct" % (label, name))
    for r in mine:
        cand = by_digest.get(r["digest"], [])
        if not check(len(cand) == 1, "%s %s rank %s: digest is the %s of a content"
                     % (label, name, r["rank"], algo), "digest %r" % r["digest"]):
            continue
        eq(as_int(r["pages"]), counts[cand[0]], "%s %s rank %s: pages == that content's count"
           % (label, name, r["rank"]))
        check_description(r["description"], cand[0], "%s %s rank %s: description"
                          % (label, name, r["rank"]))


@test("4 top")
def top_generated():
    a, b = top_images()
    ia, ib = write_image("top-a.img", a), write_image("top-b.img", b)
    for n in (5, 8, 12, 1000):
        rows = scan_csv(["-r", "top", "--top=%d" % n, "-a", "xxh64", ia], "top --top=%d" % n,
                        TOP_COLS)
        if rows is not None:
            check_top(rows, ia, a, n, "xxh64", "top --top=%d -a xxh64" % n)
            eq(len(rows), min(n, len(set(a))), "top --top=%d: row count" % n)
    # first selected algorithm gives the digest; default algorithm is xxhash
    rows = scan_csv(["-r", "top", "--top=6", "-a", "crc32c,xxh64", ia], "top -a crc32c,xxh64",
                    TOP_COLS)
    if rows is not None:
        check_top(rows, ia, a, 6, "crc32c", "top -a crc32c,xxh64")
    rows = scan_csv(["-r", "top", "--top=4", ia], "top default algo", TOP_COLS)
    if rows is not None:
        check_top(rows, ia, a, 4, "xxhash", "top (default -a xxhash)")
    # two inputs and '*'
    rows = scan_csv(["-r", "top", "--top=7", "-a", "xxh64", ia, ib], "top two inputs", TOP_COLS)
    if rows is not None:
        eq(list(dict.fromkeys(r["input"] for r in rows)), [ia, ib, "*"],
           "top two inputs: input order")
        for name, pages in ((ia, a), (ib, b), ("*", a + b)):
            check_top(rows, name, pages, 7, "xxh64", "top two inputs")
    # JSON agrees with CSV
    r = run_ok(["--json", "-r", "top", "--top=5", "-a", "xxh64", ia], "top --json")
    if r and rows is not None:
        j = parse_json(r, "top --json")
        jr = j.get("top") if isinstance(j, dict) else None
        if check(isinstance(jr, list), "top --json: a 'top' list", r.out[:200]):
            check_top([{k: str(v) for k, v in x.items()} for x in jr], ia, a, 5, "xxh64",
                      "top --json")
            check(all(isinstance(x.get("pages"), int) and isinstance(x.get("rank"), int)
                      for x in jr), "top --json: rank and pages are numbers", repr(jr[:1]))


@test("4 top")
def top_zero_and_bad():
    a, _ = top_images()
    ia = write_image("top-a2.img", a)
    r = run_ok(["--csv", "-r", "top", "--top=0", ia], "--top=0")
    if r:
        rows = parse_csv(r, "--top=0", TOP_COLS)
        eq(rows, [], "--top=0: no rows")
    for bad in ("x", "-1", ""):
        r = run(["--csv", "-r", "top", "--top=" + bad, ia])
        eq(r.rc, 2, "--top=%r: exit status 2" % bad)
        eq(r.out, "", "--top=%r: nothing on stdout" % bad)


# ---------------------------------------------------------------------------
# 5. Tree
# ---------------------------------------------------------------------------
def crc_null_tail(rng):
    """8 bytes d (at the end of a page) with kernel crc32c(page ^ d) == crc32c(page)."""
    r = bytes(rng.getrandbits(8) for _ in range(4))
    return r + struct.pack("<I", crc32c_kernel(r))


def tree_images():
    rng = rng_for("tree")
    P = rand_page_fast(rng)
    a = []
    for i in range(40):           # equal except for the last 8 bytes
        v = P[:PAGE - 8] + rng.getrandbits(64).to_bytes(8, "little")
        a += [v] * rng.choice([1, 1, 2, 3])
    for i in range(20):           # one byte changed somewhere
        b = bytearray(P)
        b[rng.randrange(PAGE)] ^= 1 << rng.randrange(8)
        a.append(bytes(b))
    a += [P] * 4
    for i in range(5):            # crc32c collisions differing in the last 8 bytes
        Q = rand_page_fast(rng)
        d = crc_null_tail(rng)
        Q2 = Q[:PAGE - 8] + bytes(x ^ y for x, y in zip(Q[PAGE - 8:], d))
        assert crc32c_kernel(Q) == crc32c_kernel(Q2) and Q != Q2
        a += [Q, Q2, Q2]
    a += [ZERO] * 30
    for i in range(10):           # near-zero pages
        b = bytearray(PAGE)
        b[PAGE - 1 - i] = 1 + i
        a.append(bytes(b))
    u = [rand_page_fast(rng) for _ in range(60)]
    a += u + u[:10]
    rng.shuffle(a)
    b = a[::7] + [rand_page_fast(rng) for _ in range(30)] + [ZERO] * 5
    for i in range(20):
        b.append(P[:PAGE - 8] + rng.getrandbits(64).to_bytes(8, "little"))
    rng.shuffle(b)
    return a, b


def check_tree_rows(rows, name, pages, algos, label, exact=True):
    """Invariants, and (exact) equality with the Python simulation."""
    mine = [r for r in rows if r["input"] == name]
    want = [("memcmp", "-")] + [("checksum-first", a) for a in algos]
    eq([(r["strategy"], r["algo"]) for r in mine], want,
       "%s %s: rows (strategy, algo)" % (label, name))
    n = len(pages)
    distinct = len(set(pages))
    for r in mine:
        tag = "%s %s %s/%s" % (label, name, r["strategy"], r["algo"])
        v = {k: as_int(r[k]) for k in TREE_COLS[3:11] if k != "avg_depth"}
        if not check(all(x is not None for x in v.values()), "%s: integer columns" % tag,
                     repr(r)):
            continue
        eq(v["inserts"], distinct, "%s: inserts == distinct pages" % tag)
        eq(v["matches"], n - distinct, "%s: matches == pages - distinct pages" % tag)
        searched = v["inserts"] + v["matches"]
        check(searched and close(r["avg_depth"], v["node_visits"] / searched, 0, 0.0005 + 1e-9),
              "%s: avg_depth == node_visits/(inserts+matches)" % tag,
              "%s vs %d/%d" % (r["avg_depth"], v["node_visits"], searched))
        bound = 2 * math.log2(v["inserts"] + 1) + 1
        check(v["max_depth"] <= bound, "%s: max_depth <= 2*log2(inserts+1)+1" % tag,
              "%d > %.2f" % (v["max_depth"], bound))
        f = as_float(r["seconds"])
        check(f is not None and f >= 0, "%s: seconds is a number >= 0" % tag, repr(r["seconds"]))
        if r["strategy"] == "memcmp":
            eq(v["memcmp_calls"], v["node_visits"], "%s: memcmp_calls == node_visits" % tag)
            eq(v["checksum_compares"], 0, "%s: checksum_compares == 0" % tag)
            check(v["memcmp_bytes"] >= PAGE * v["matches"],
                  "%s: memcmp_bytes >= 4096*matches" % tag, repr(v))
        else:
            eq(v["checksum_compares"], v["node_visits"],
               "%s: checksum_compares == node_visits" % tag)
            check(v["matches"] <= v["memcmp_calls"] <= v["node_visits"],
                  "%s: matches <= memcmp_calls <= node_visits" % tag, repr(v))
        if exact:
            sim = simulate_tree(pages, None if r["algo"] == "-" else r["algo"])
            got = {k: v[k] for k in sim.st}
            eq(got, sim.st, "%s: counters == Python red-black tree simulation" % tag)


@test("5 tree")
def tree_simulation_self_test():
    """The simulation itself: a valid red-black tree, counts add up."""
    a, _ = tree_images()
    for algo in (None, "crc32c"):
        t = simulate_tree(a, algo)
        L, R, red = t.left, t.right, t.red

        def bh(n):
            if n == -1:
                return 1
            l, r = bh(L[n]), bh(R[n])
            if l is None or r is None or l != r:
                return None
            if red[n] and ((L[n] != -1 and red[L[n]]) or (R[n] != -1 and red[R[n]])):
                return None
            return l + (0 if red[n] else 1)
        check(bh(t.root) is not None and not red[t.root],
              "simulation (%s): red-black properties hold" % (algo or "memcmp"))

        def inorder(n, acc):
            if n != -1:
                inorder(L[n], acc)
                acc.append(t.key[n])
                inorder(R[n], acc)
            return acc
        keys = inorder(t.root, [])
        sk = (lambda p: (ORACLE[algo](p), p)) if algo else (lambda p: p)
        check(keys == sorted(set(a), key=sk), "simulation (%s): in-order == sorted contents"
              % (algo or "memcmp"))
        eq(t.st["inserts"], len(set(a)), "simulation (%s): inserts" % (algo or "memcmp"))
        check(t.st["max_depth"] <= t.height(), "simulation: max_depth <= height")


@test("5 tree")
def tree_generated():
    a, b = tree_images()
    ia, ib = write_image("tree-a.img", a), write_image("tree-b.img", b)
    algos = ["xxhash", "crc32c"]
    rows = scan_csv(["-r", "tree", "-a", ",".join(algos), ia, ib], "tree two inputs",
                    TREE_COLS)
    if rows is not None:
        eq(list(dict.fromkeys(r["input"] for r in rows)), [ia, ib, "*"],
           "tree two inputs: input order")
        eq(len(rows), 9, "tree two inputs: 3 rows per input and '*'")
        for name, pages in ((ia, a), (ib, b), ("*", a + b)):
            check_tree_rows(rows, name, pages, algos, "tree -a xxhash,crc32c")
    algos = ["xxh64", "xxh128", "xxh3"]
    rows = scan_csv(["-r", "tree", "-a", ",".join(algos), ia], "tree wide checksums",
                    TREE_COLS)
    if rows is not None:
        check_tree_rows(rows, ia, a, algos, "tree -a xxh64,xxh128,xxh3")
    r = run_ok(["--json", "-r", "tree", "-a", "crc32c", ia], "tree --json")
    if r:
        j = parse_json(r, "tree --json")
        jr = j.get("tree") if isinstance(j, dict) else None
        if check(isinstance(jr, list) and len(jr) == 2, "tree --json: a 'tree' list of 2 rows",
                 r.out[:300]):
            check_tree_rows([{k: str(v) for k, v in x.items()} for x in jr], ia, a,
                            ["crc32c"], "tree --json")
    r = run_ok(["-l", "-r", "tree", ia], "tree table")
    if r:
        check(any(t[:3] == [ia, "memcmp", "-"] for t in table_rows(r.out)),
              "tree table: a memcmp row for the input", r.out[:300])


@test("5 tree")
def empty_input_reports():
    e = write_image("empty.img", [])
    for report, cols in (("histogram", HIST_COLS), ("top", TOP_COLS)):
        rows = scan_csv(["-r", report, e, e], "%s of empty inputs" % report, cols)
        if rows is not None:
            eq(rows, [], "%s of empty inputs: no rows" % report)
    rows = scan_csv(["-r", "tree", "-a", "crc32c", e, e], "tree of empty inputs", TREE_COLS)
    if rows is not None:
        eq([(r["input"], r["strategy"], r["algo"]) for r in rows],
           [(e, "memcmp", "-"), (e, "checksum-first", "crc32c")] * 2 +
           [("*", "memcmp", "-"), ("*", "checksum-first", "crc32c")],
           "tree of empty inputs: rows")
        check(all(as_int(r[k]) == 0 for r in rows for k in TREE_COLS[3:11] if k != "avg_depth")
              and all(close(r["avg_depth"], 0.0, 0, 1e-9) for r in rows),
              "tree of empty inputs: all counters 0, avg_depth a number (0)", repr(rows[:1]))
    r = run_ok(["--json", "-r", "tree,histogram,top", e], "tree,histogram,top --json of empty")
    if r:
        j = parse_json(r, "tree,histogram,top --json of empty")
        check(isinstance(j, dict) and j.get("histogram") == [] and j.get("top") == [] and
              len(j.get("tree") or []) == 2, "JSON of an empty input: empty histogram and top, "
              "2 tree rows", r.out[:300])


# ---------------------------------------------------------------------------
# 6. Several inputs
# ---------------------------------------------------------------------------
def check_summary_rows(rows, name, pages, algos, label):
    mine = [r for r in rows if r["input"] == name]
    eq([r["algo"] for r in mine], algos, "%s %s: one row per algorithm" % (label, name))
    for r, algo in zip(mine, algos):
        exp = expected_summary(pages, algo)
        for k, v in exp.items():
            if k == "algo":
                continue
            if isinstance(v, float):
                check(close(r[k], v, 1e-5, 1e-12), "%s %s %s: %s" % (label, name, algo, k),
                      "expected %r, got %r" % (v, r[k]))
            else:
                eq(as_int(r[k]), v, "%s %s %s: %s" % (label, name, algo, k))


@test("6 several inputs")
def several_inputs_summary():
    a, b = hist_images()
    c = mixed_pages("several", 10) + a[:40]
    ia, ib, ic = (write_image("multi-%s.img" % n, p) for n, p in (("a", a), ("b", b), ("c", c)))
    algos = ["xxhash", "xxh64"]
    rows = scan_csv(["-a", ",".join(algos), ia, ib, ic], "summary three inputs", SUMMARY_COLS)
    if rows is not None:
        eq(list(dict.fromkeys(r["input"] for r in rows)), [ia, ib, ic, "*"],
           "summary three inputs: input order")
        for name, pages in ((ia, a), (ib, b), (ic, c), ("*", a + b + c)):
            check_summary_rows(rows, name, pages, algos, "summary")
    r = run_ok(["-l", ia, ib], "summary table of two inputs")
    if r:
        star = [t for t in table_rows(r.out) if t and t[0] == "*"]
        check(star and str(len(a) + len(b)) in star[0],
              "summary table: the '*' row has the total pages %d" % (len(a) + len(b)),
              r.out[:600])
        exp = expected_summary(a + b, "xxhash")
        check(star and str(exp["saved_bytes"]) in star[0],
              "summary table: the '*' row has saved_bytes %d" % exp["saved_bytes"], repr(star))
        lines = r.out.rstrip("\n").splitlines()
        last_star = max(i for i, l in enumerate(lines) if l.startswith("*")) if star else None
        check(last_star is not None and any(l.strip() for l in lines[last_star + 1:]),
              "summary table of two inputs: note lines after the table", r.out[-600:])


# ---------------------------------------------------------------------------
# 7. -j and input-form invariance
# ---------------------------------------------------------------------------
def invariance_images():
    rng = rng_for("inv")
    groups = [rand_page_fast(rng) for _ in range(60)]
    a = [ZERO] * 300
    for g in groups:
        a += [g] * rng.randrange(2, 40)
    base = rand_page_fast(rng)
    a += [base[:PAGE - 16] + rng.getrandbits(128).to_bytes(16, "little") for _ in range(300)]
    n_unique = max(0, 2500 - len(a))
    a += [rand_page_fast(rng) for _ in range(n_unique)]
    rng.shuffle(a)
    b = a[::9] + groups[:10] + [rand_page_fast(rng) for _ in range(60)]
    rng.shuffle(b)
    return a, b


REPORTS = [("summary", SUMMARY_COLS, ["-a", "xxhash,xxh64,crc32c"]),
           ("regions", REGION_COLS, []),
           ("histogram", HIST_COLS, []),
           ("top", TOP_COLS, ["--top=12", "-a", "xxh64"]),
           ("tree", TREE_COLS, ["-a", "xxhash,crc32c"])]


def check_report_oracle(report, rows, inputs, label):
    """inputs: [(name, pages)]; the '*' rows when several."""
    names = inputs + ([("*", [p for _, ps in inputs for p in ps])] if len(inputs) > 1 else [])
    for name, pages in names:
        if report == "summary":
            check_summary_rows(rows, name, pages, ["xxhash", "xxh64", "crc32c"], label)
        elif report == "histogram":
            eq([t[1:] for t in hist_rows_of(rows) if t[0] == name], expected_histogram(pages),
               "%s %s: histogram == oracle" % (label, name))
        elif report == "top":
            check_top(rows, name, pages, 12, "xxh64", label)
        elif report == "tree":
            check_tree_rows(rows, name, pages, ["xxhash", "crc32c"], label)
        elif report == "regions" and name != "*":
            mine = [r for r in rows if r["input"] == name]
            eq([(r["region"], r["start"], r["end"], as_int(r["pages"]),
                 as_int(r["zero_pages"]), as_int(r["redundant_pages"])) for r in mine],
               [("raw", "0x0", "0x%x" % (len(pages) * PAGE), len(pages), pages.count(ZERO),
                 len(pages) - len(set(pages)))],
               "%s %s: regions == oracle" % (label, name))


@test("7 invariance")
def threads_invariance():
    a, b = invariance_images()
    ia, ib = write_image("inv-a.img", a), write_image("inv-b.img", b)
    for report, cols, extra in REPORTS:
        drop = TIMING.get(report, [])
        ref = None
        for j in (1, 2, 4, 7, None):
            jopt = ["-j", str(j)] if j else []
            rows = scan_csv(["-r", report] + jopt + extra + [ia, ib],
                            "%s -j%s" % (report, j or " default"), cols)
            if rows is None:
                continue
            if j == 1:
                ref = strip_cols(rows, drop)
                check_report_oracle(report, rows, [(ia, a), (ib, b)], "%s -j1" % report)
            elif ref is not None:
                got = strip_cols(rows, drop)
                diff = [(x, y) for x, y in zip(ref, got) if x != y]
                check(got == ref, "%s: -j%s output == -j1 output (timing aside)"
                      % (report, j or " default"),
                      "%d vs %d rows; first differences %r" % (len(ref), len(got), diff[:2]))


@test("7 invariance")
def input_form_invariance():
    if not shutil.which("zstd"):
        raise Skip("zstd not installed")
    a, _ = invariance_images()
    ia = write_image("form.img", a)
    iz = ia + ".zst"
    subprocess.run(["zstd", "-q", "-f", ia, "-o", iz], check=True)
    data = b"".join(a)
    for report, cols, extra in REPORTS:
        drop = TIMING.get(report, []) + ["input"]
        ref = None
        for form, args, kw in (("file", [ia], {}), ("zst", [iz], {}),
                               ("pipe", ["-"], {"input": data})):
            rows = scan_csv(["-r", report, "-j", "2"] + extra + args,
                            "%s from %s" % (report, form), cols, **kw)
            if rows is None:
                continue
            name = args[0]
            eq({r["input"] for r in rows}, {name}, "%s from %s: input column" % (report, form))
            check_report_oracle(report, rows, [(name, a)], "%s from %s" % (report, form))
            got = strip_cols(rows, drop)
            if form == "file":
                ref = got
            elif ref is not None:
                check(got == ref, "%s: %s output == file output (input, timing aside)"
                      % (report, form), "first differences %r"
                      % [(x, y) for x, y in zip(ref, got) if x != y][:2])


# ---------------------------------------------------------------------------
def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
