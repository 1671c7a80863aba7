#!/usr/bin/python3
"""-r exposure and -r mitigations (docs/exposure.md) against oracles written
here, not taken from ksmscan.

- Raw images built here, four inputs in three trust domains, hold contents
  of every kind (zero, same-filled, pages of a known file, low and high
  entropy; a known page with one byte changed; contents within one domain
  only): every column of the exposure report equals this file's count, by
  this file's own entropy measure (Shannon's, written from its definition).
- The four mitigations' savings and exposed pages equal a brute-force model
  of each rule: the pages are put into the KSM hosts the rule makes (one for
  all, one per domain, none but for zero pages, or same-filled pages
  together and the rest per domain) and each host's contents grouped with
  KSM's arithmetic (ksmtest.ksm_group), with and without -z and with a small
  max_page_sharing. Without mitigation the saving is the summary's.
- --known reads a compressed file as its bytes; a file that cannot be read
  is one error line and exit status 1.
- The fixture guest and two copies with 10% of their pages changed, grouped
  two ways (one domain per guest; two guests in one domain).
- Tables fit 80 columns; no format prints a page's bytes; the picture's
  matrix carries the counts and escapes the domains' names.
- The command line: exposure without domains, overlapping domains, an input
  in no domain, --known without the report: exit status 2.
"""
import collections
import json
import math
import os
import random
import struct
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (PAGE, ZERO, as_int, check, elf_pages, eq, fixture,  # noqa: E402
                     ksm_group, parse_csv, run, run_suite, test, tmp)
import zstandard  # noqa: E402

EXPOSURE = ["domain_a", "domain_b", "pages_crossing", "zero_pages",
            "same_filled_pages", "low_entropy_pages", "high_entropy_pages",
            "known_pages"]
BANDS = ["entropy_%d_%d_pages" % (k, k + 1) for k in range(8)]
EXPOSURE_ALL = EXPOSURE + ["bytes_crossing"] + BANDS
MITIGATIONS = ["mitigation", "saved_pages", "saved_bytes", "saved_percent",
               "exposed_pages"]
RULES = ["none", "partitioned", "zero_only", "same_filled_across"]
HIGH = 7.0          # bits per byte: docs/exposure.md's threshold
SECRET = b"SECRET-MARKER-7f3a "


# --- the oracle ---------------------------------------------------------------
def entropy(page):
    """Shannon entropy of the page's bytes, bits per byte."""
    n = len(page)
    return -sum(c / n * math.log2(c / n) for c in collections.Counter(page).values())


def same_filled(page):
    return page[:8] * (PAGE // 8) == page


def kind_of(page, known):
    """zero, same, known, low or high: the first that fits; and the band."""
    if page == ZERO:
        return "zero", None
    if same_filled(page):
        return "same", None
    if page in known:
        return "known", None
    e = entropy(page)
    return ("high" if e >= HIGH else "low"), min(int(e), 7)


def known_pages(data):
    """The pages of a known file; a last partial page filled with zeros."""
    data = data + b"\0" * (-len(data) % PAGE)
    return {data[i:i + PAGE] for i in range(0, len(data), PAGE)}


def per_domain(inputs, domains):
    """{content: Counter(domain: pages)} of {input: pages}, {domain: inputs}."""
    out = collections.defaultdict(collections.Counter)
    for d, names in domains.items():
        for name in names:
            for p in inputs[name]:
                out[p][d] += 1
    return out


def exposure_oracle(inputs, domains, order, known):
    """{(a, b): {column: value}} for every pair of domains in @order."""
    counts = per_domain(inputs, domains)
    kinds = {p: kind_of(p, known) for p, c in counts.items() if len(c) >= 2}
    rows = {}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            row = dict.fromkeys(EXPOSURE_ALL[2:], 0)
            for p, c in counts.items():
                if c[a] and c[b]:
                    n = c[a] + c[b]
                    kind, band = kinds[p]
                    row["pages_crossing"] += n
                    row[{"zero": "zero_pages", "same": "same_filled_pages",
                         "known": "known_pages", "low": "low_entropy_pages",
                         "high": "high_entropy_pages"}[kind]] += n
                    if band is not None:
                        row[BANDS[band]] += n
            row["bytes_crossing"] = row["pages_crossing"] * PAGE
            rows[(a, b)] = row
    return rows


def host_of(rule, domain, page):
    """The KSM host a page goes to under a rule, or None: it never merges."""
    across = "all domains"
    if rule == "none":
        return across
    if rule == "partitioned":
        return domain
    if rule == "zero_only":
        return across if page == ZERO else None
    return across if same_filled(page) else domain   # same_filled_across


def rule_oracle(rule, inputs, domains, m, z):
    """(saved_pages, exposed_pages) of a rule, page by page: each host's
    pages grouped by content, KSM's arithmetic on each group; with -z every
    zero page is saved and enters no group. Exposed: the pages of a group
    holding pages of two domains or more."""
    hosts = collections.defaultdict(lambda: collections.defaultdict(list))
    for d, names in domains.items():
        for name in names:
            for p in inputs[name]:
                h = host_of(rule, d, p)
                if h is not None:
                    hosts[h][p].append(d)
    saved = exposed = 0
    for groups in hosts.values():
        for p, ds in groups.items():
            saved += len(ds) if z and p == ZERO else ksm_group(len(ds), m)[1]
            if len(set(ds)) >= 2:
                exposed += len(ds)
    return saved, exposed


# --- the inputs -----------------------------------------------------------------
def text_page(rng, words):
    """A page of words picked at random: low entropy, not same-filled."""
    out = b""
    while len(out) < PAGE:
        out += rng.choice(words) + b" "
    return out[:PAGE]


def build(rng):
    """Four inputs in three domains, and the known file's bytes."""
    words = [b"memory", b"page", b"kernel", b"merge", b"tree", b"stable", b"node"]
    k_text = text_page(rng, words)
    k_rand = rng.randbytes(PAGE)
    k_tail = rng.randbytes(1000)                 # a partial last page
    known = k_text + k_rand + k_tail
    k_mod = bytearray(k_text)
    k_mod[100] ^= 1                              # one byte off a known page
    c = {
        "Z": ZERO, "S1": b"\x5a" * PAGE,
        "S2": struct.pack("<Q", 0x0123456789abcdef) * (PAGE // 8),
        "K1": k_text, "K2": k_rand, "K3": k_tail + b"\0" * (PAGE - 1000),
        "KM": bytes(k_mod), "L1": text_page(rng, words),
        "L2": bytes(rng.randrange(48) for _ in range(PAGE)),
        "H1": rng.randbytes(PAGE), "H2": rng.randbytes(PAGE),
        "X": (SECRET * (PAGE // len(SECRET) + 1))[:PAGE],
        "D1": rng.randbytes(PAGE),               # in domain A only
    }
    layout = {
        "a1.raw": "Z*3 S1*2 K1 L1*2 H1 H2*2 X D1",
        "a2.raw": "Z S2 K2 H1 L2 KM D1*2",
        "b.raw": "Z*2 S1 S2 K1 K2 K3 L1 H1*2 X KM",
        "c.raw": "S1*4 K3 H2 L2 H1 Z*5",
    }
    inputs = {}
    for name, spec in layout.items():
        pages = []
        for item in spec.split():
            key, _, n = item.partition("*")
            pages += [c[key]] * int(n or 1)
        pages += [rng.randbytes(PAGE) for _ in range(3)]   # in no other input
        rng.shuffle(pages)
        inputs[name] = pages
    return inputs, known


DOMAINS = {"A": ["a1.raw", "a2.raw"], "B": ["b.raw"], "C": ["c.raw"]}
ORDER = ["A", "B", "C"]


def setup():
    """The inputs written to files, with the known file; cached per run."""
    if "inputs" not in STATE:
        inputs, known = build(random.Random(27))
        for name, pages in inputs.items():
            with open(tmp(name), "wb") as f:
                f.write(b"".join(pages))
        with open(tmp("known.bin"), "wb") as f:
            f.write(known)
        with open(tmp("known.bin.zst"), "wb") as f:
            f.write(zstandard.ZstdCompressor().compress(known))
        STATE.update(inputs=inputs, known=known)
    return STATE["inputs"], STATE["known"]


STATE = {}


def args_for(domains, order, extra=()):
    files = [tmp(n) for d in order for n in domains[d]]
    groups = ["--group=%s=%s" % (d, ",".join(tmp(n) for n in domains[d]))
              for d in order]
    return list(extra) + groups + files


def csv_rows(args, what, cols):
    r = run(["--csv"] + args)
    if not check(r.rc == 0, "%s: exit status 0" % what, r.brief()):
        return None
    return parse_csv(r, what, cols)


def by_pair(rows):
    return {(r["domain_a"], r["domain_b"]): {k: as_int(r[k]) for k in EXPOSURE_ALL[2:]}
            for r in rows}


# --- the tests ------------------------------------------------------------------
@test("exposure")
def exposure_counts():
    """Every column of every pair, CSV and JSON, against the test's count."""
    inputs, known = setup()
    exp = exposure_oracle(inputs, DOMAINS, ORDER, known_pages(known))
    check(all(v["known_pages"] for k, v in exp.items() if k == ("A", "B")) and
          any(v["high_entropy_pages"] for v in exp.values()) and
          any(v["same_filled_pages"] for v in exp.values()),
          "the inputs hold every kind across domains (the test's own check)")
    for known_file in ("known.bin", "known.bin.zst"):
        args = args_for(DOMAINS, ORDER, ["-r", "exposure", "--known=" + tmp(known_file)])
        rows = csv_rows(args, "exposure --known=%s" % known_file, EXPOSURE_ALL)
        if rows is not None:
            eq(by_pair(rows), exp, "exposure with %s: the test's count" % known_file)
    r = run(["--json"] + args_for(DOMAINS, ORDER, ["-r", "exposure",
                                                   "--known=" + tmp("known.bin")]))
    if check(r.rc == 0, "exposure --json: exit status 0", r.brief()):
        doc = json.loads(r.out)
        eq(by_pair(doc["exposure"]), exp, "exposure JSON: the test's count")
        check("mitigations" in doc, "-r exposure brings the mitigations (JSON)")
    # Without --known the known pages are classed by what they hold.
    exp0 = exposure_oracle(inputs, DOMAINS, ORDER, set())
    rows = csv_rows(args_for(DOMAINS, ORDER, ["-r", "exposure"]), "exposure",
                    EXPOSURE_ALL)
    if rows is not None:
        eq(by_pair(rows), exp0, "exposure without --known: the test's count")


@test("mitigations")
def mitigations_rules():
    """The four rules against the brute-force model, -z and -m 3 too."""
    inputs, _ = setup()
    for m in (256, 3):
        for z in (0, 1):
            extra = ["-r", "mitigations", "-m", str(m)] + (["-z"] if z else [])
            what = "mitigations -m %d%s" % (m, " -z" if z else "")
            rows = csv_rows(args_for(DOMAINS, ORDER, extra), what, MITIGATIONS)
            if rows is None:
                continue
            eq([r["mitigation"] for r in rows], RULES, "%s: the rules in order" % what)
            exp = {rule: rule_oracle(rule, inputs, DOMAINS, m, z) for rule in RULES}
            got = {r["mitigation"]: (as_int(r["saved_pages"]), as_int(r["exposed_pages"]))
                   for r in rows}
            eq(got, exp, "%s: saved and exposed pages, the brute-force model" % what)
            none = exp["none"][0]
            for r in rows:
                saved = exp[r["mitigation"]][0]
                eq(as_int(r["saved_bytes"]), saved * PAGE, "%s %s: saved_bytes"
                   % (what, r["mitigation"]))
                pct = 100.0 * saved / none if none else 0.0
                check(abs(float(r["saved_percent"]) - pct) < 0.051,
                      "%s %s: saved_percent of none's" % (what, r["mitigation"]),
                      "expected %.2f, got %s" % (pct, r["saved_percent"]))
            summ = csv_rows(args_for(DOMAINS, ORDER, ["-r", "summary", "-m", str(m)] +
                                     (["-z"] if z else [])), what + " summary", ["input"])
            star = [s for s in summ or [] if s["input"] == "*"]
            if star:
                eq(exp["none"][0], (as_int(star[0]["pages_sharing"]) +
                                    as_int(star[0]["ksm_zero_pages"])),
                   "%s: the model's none is the summary's saving (the test's "
                   "model agrees with KSM's figures)" % what)


@test("exposure")
def people_tables():
    """Tables fit 80 columns; no format prints a page's bytes."""
    setup()
    base = args_for(DOMAINS, ORDER, ["-r", "exposure", "--known=" + tmp("known.bin")])
    r = run(base)
    if check(r.rc == 0, "table: exit status 0", r.brief()):
        eq([l for l in r.out.splitlines() if len(l) > 80], [], "table: 80 columns")
        check("mitigation" in r.out and "partitioned" in r.out,
              "table: the mitigations follow the exposure report", r.out[-400:])
    for fmt in ([], ["-l"], ["--csv"], ["--json"]):
        r = run(fmt + base)
        hexed = SECRET.hex()
        check(r.rc == 0 and SECRET.decode().strip() not in r.out and
              hexed[:16] not in r.out,
              "%s: no page's bytes in the output" % (fmt or "table"), r.brief())


@test("exposure")
def picture():
    """--svg: one matrix cell per ordered pair, the test's high-entropy count,
    names escaped."""
    inputs, known = setup()
    odd = 'C<&"x\''
    domains = {"A": DOMAINS["A"], "B": DOMAINS["B"], odd: DOMAINS["C"]}
    order = ["A", "B", odd]
    exp = exposure_oracle(inputs, domains, order, set())
    svg = tmp("exposure.svg")
    r = run(args_for(domains, order, ["-r", "exposure", "--svg=" + svg, "-q"]))
    if not check(r.rc == 0, "--svg: exit status 0", r.brief()):
        return
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        check(False, "--svg: the picture is well-formed XML", str(e))
        return
    cells = {}
    for el in root.iter():
        if el.get("class") == "pair":
            cells[(el.get("data-domain-a"), el.get("data-domain-b"))] = (
                int(el.get("data-pages-crossing")), int(el.get("data-high-entropy-pages")))
    want = {}
    for (a, b), row in exp.items():
        v = (row["pages_crossing"], row["high_entropy_pages"])
        want[(a, b)] = want[(b, a)] = v
    eq(cells, want, "--svg: the matrix's cells, the test's count")


@test("exposure")
def fixture_two_ways():
    """The fixture guest and two copies with 10% of their pages changed,
    grouped one domain per guest and as two tenants."""
    elf = zstandard.ZstdDecompressor().stream_reader(
        open(fixture("guest-b.elf.zst"), "rb")).read()
    pages = elf_pages(elf)
    offs = sorted(pages)
    inputs = {"guest.elf": [pages[o] for o in offs]}
    for name, seed in (("guest-10a.elf", 14), ("guest-10b.elf", 15)):
        rng = random.Random(seed)
        copy = bytearray(elf)
        for off in rng.sample(offs, len(offs) // 10):
            copy[off + rng.randrange(PAGE)] ^= 0xff      # always another content
        open(tmp(name), "wb").write(bytes(copy))
        inputs[name] = [bytes(copy[o:o + PAGE]) for o in offs]
    open(tmp("guest.elf"), "wb").write(elf)
    for label, domains, order in (
            ("per guest", {"g0": ["guest.elf"], "g1": ["guest-10a.elf"],
                           "g2": ["guest-10b.elf"]}, ["g0", "g1", "g2"]),
            ("two tenants", {"t1": ["guest.elf", "guest-10a.elf"],
                             "t2": ["guest-10b.elf"]}, ["t1", "t2"])):
        exp = exposure_oracle(inputs, domains, order, set())
        rows = csv_rows(args_for(domains, order, ["-r", "exposure"]),
                        "fixture %s" % label, EXPOSURE_ALL)
        if rows is not None:
            eq(by_pair(rows), exp, "fixture %s: exposure, the test's count" % label)
        rows = csv_rows(args_for(domains, order, ["-r", "mitigations"]),
                        "fixture %s mitigations" % label, MITIGATIONS)
        if rows is not None:
            got = {r["mitigation"]: (as_int(r["saved_pages"]), as_int(r["exposed_pages"]))
                   for r in rows}
            eq(got, {rule: rule_oracle(rule, inputs, domains, 256, 0) for rule in RULES},
               "fixture %s: mitigations, the brute-force model" % label)


@test("cli")
def usage_errors():
    setup()
    a, b = tmp("a1.raw"), tmp("b.raw")
    bad = [
        (["-r", "exposure", a, b], "--group=NAME=INPUT"),
        (["-r", "exposure", a], "--group=NAME=INPUT"),
        (["-r", "mitigations", "--group=A=" + a, a, b], "--group=NAME=INPUT"),
        (["-r", "exposure", "--group=A=" + a, "--group=B=" + a, a], "overlap"),
        (["-r", "exposure", "--group=A=" + a, "--group=B=" + a + "," + b, a, b],
         "overlap"),
        (["-r", "exposure", "--group=A=" + a, "--group=B=" + b, a, b, tmp("c.raw")],
         "is in no trust domain (--group"),
        (["--known=" + tmp("known.bin"), a], "--known"),
        (["-r", "exposure", "--known=-", "--group=A=" + a, "--group=B=" + b, a, b],
         "--known"),
        (["--csv", "-r", "exposure,mitigations", "--group=A=" + a, "--group=B=" + b,
          a, b], "--csv"),
    ]
    for args, word in bad:
        r = run(args)
        eq(r.rc, 2, "`%s`: usage error" % " ".join(args))
        first = r.err.strip().splitlines()[:1]
        check(first and first[0].startswith("ksmscan: ") and word in first[0],
              "`%s`: the first line says %s" % (" ".join(args), word), r.err[:300])


@test("cli")
def known_unreadable():
    """A --known file that cannot be read: one line, exit status 1, the
    report still printed."""
    setup()
    a, b = tmp("a1.raw"), tmp("b.raw")
    missing = tmp("no-such-file")
    r = run(["--csv", "-r", "exposure", "--known=" + missing, "--group=A=" + a,
             "--group=B=" + b, a, b])
    eq(r.rc, 1, "missing --known file: exit status 1")
    lines = r.err.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("ksmscan: " + missing + ": "),
          "missing --known file: one line naming it", r.err[:300])
    check(r.out.startswith(",".join(EXPOSURE)), "missing --known file: the report "
          "is printed", r.out[:200])


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-exposure-"))
