#!/usr/bin/python3
"""What the suites of the reports share (test_checksum_impl,
test_report_histogram, test_report_top, test_report_tree, test_invariance,
and the reports' part of test_several_inputs): the oracles (the KSM model's
summary, the histogram's buckets, the top report's descriptions, a Python
red-black tree that simulates the tree report counter for counter), running
$KSMSCAN with the implementation paths' variables cleared, CSV and JSON
parsing, and the page sets several suites use.

Every figure is computed here from the bytes the suites generate
(byte identity, python-xxhash, python-crc32c, the RB-tree simulation), never
taken from ksmscan.
"""
import collections, json, math, os, random, re, shlex, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (BITS, KSMSCAN, ORACLE, PAGE, ZERO, as_int, check, eq, hexdigest,
                     ksm_group, parse_csv, tmp, undigest)  # noqa: E402


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
# Harness (as in summary_helpers.py, with the implementation paths cleared)
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


def run_ok(args, what, rc=0, **kw):
    """Run, and check it exits @rc, 0 unless said: the Run or None."""
    r = run(args, **kw)
    if check(r.rc == rc, "%s: exit status %d" % (what, rc), r.brief()):
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
# Page sets several suites scan, and the checks of their rows
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
