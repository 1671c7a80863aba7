#!/usr/bin/python3
"""What the suites of the summary and its inputs share (test_checksums,
test_savings, test_several_inputs, test_format_raw, test_usage,
test_guest_fixture): the KSM model's expected summary of a list of pages,
running $KSMSCAN, CSV and JSON parsing with a number's printed precision, the
check of one summary row and of a usage error, and seeded page patterns.

The oracles are never ksmscan: expected_summary() counts byte-identical
pages in Python and applies the KSM model of docs/model.md (ksmtest.ksm_group)
with the two corrections measured on the kernel (a single leftover page is
not merged; pages merged with the zero page carry no rmap_item).
"""
import collections, json, math, os, random, re, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (BITS, KSMSCAN, ORACLE, PAGE, SUMMARY_COLS, ZERO, Run, as_int,
                     check, eq, ksm_group, parse_csv, tmp, undigest)  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIMEOUT = 120          # seconds per ksmscan run (generous for ASan/UBSan)

INT_COLS = ["pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing",
            "ksm_zero_pages", "saved_bytes", "general_profit", "collisions"]
FLOAT_COLS = ["duplicate_ratio", "saved_percent", "expected_collisions"]
TIMING_COLS = ["hash_mib_s", "ns_per_page"]


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


def run_ok(args, what, rc=0, **kw):
    """Run, and check it exits @rc, 0 unless said (one check).  Returns the
    Run or None."""
    r = run(args, **kw)
    if check(r.rc == rc, "%s: exit status %d" % (what, rc), r.brief()):
        return r
    return None


def no_page_said(r, path, size, what):
    """An input without one whole page (an empty file, a text file) is an
    error: one line naming it, and its size unless it is empty."""
    want = "ksmscan: %s: %s: no whole page of memory" % (
        path, "empty" if size == 0 else "%d bytes" % size)
    said = [l for l in r.err.splitlines() if path in l]
    check(len(said) == 1 and said[0].startswith(want),
          "%s: one line '%s...'" % (what, want), r.err[-400:])


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
# Page sets several suites scan
# ---------------------------------------------------------------------------
def random_image():
    rng = rng_for("random")
    rand = [rng.randbytes(PAGE) for _ in range(64)]
    pages = rand + structured_pages()
    # a few duplicates and near duplicates
    pages += [rand[3], rand[3], rand[10], rand[10][:-1] + bytes([rand[10][-1] ^ 1])]
    rng.shuffle(pages)
    return write_image("random.img", pages), pages


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
