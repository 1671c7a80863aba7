#!/usr/bin/python3
"""The checksums' implementation paths, -a auto and --bench.

    /usr/bin/python3 tests/test_checksum_impl.py [NAME-SUBSTRING...]

- `-a help` lists every algorithm with its bits and a path; for each
  KSMSCAN_IMPL_CRC32C = vpclmul/sse42x3/sse42/sw and KSMSCAN_IMPL_XXH3 /
  _XXH128 = avx512/avx2/sse2: `-a help` shows the forced path (a path this CPU
  lacks: the warning names the fallback, SKIP), ~330 pages (random,
  0x00/0xff, one byte changed at 32 positions up to 4095) by file and pipe,
  and vectors.img; an unknown path warns and keeps the default;
- `-a auto` resolves to crc32c or xxhash, its figures == the KSM model and ==
  that algorithm run by name (timing aside), `-r pages` names the column
  after it;
- `--bench --csv/--json`: columns, bits, positive values, MiB/s == 4096 B /
  ns (1%), impl == `-a help`, exactly one auto row; `--bench FILE` exits 2.
  No speed order is asserted (speed is for make bench).

Oracles: python-crc32c in the kernel's convention, python-xxhash, the
fixtures' vectors.csv, docs/model.md.
"""
import csv, io, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (BITS, PAGE, SUMMARY_COLS, ZERO, as_int, check, eq, fixture,
                     hexdigest, run_suite, skip, test)  # noqa: E402
from report_helpers import (BENCH_COLS, IMPLS, TIMING, as_float, close,
                            expected_summary, mixed_pages, parse_help, parse_json,
                            rand_page_fast, rng_for, run, run_ok, scan_csv, strip_cols,
                            write_image)  # noqa: E402


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


def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
