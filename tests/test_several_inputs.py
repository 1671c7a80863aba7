#!/usr/bin/python3
"""Several inputs in one run: the per-input rows and the `*` rows (pages shared
across inputs).

    /usr/bin/python3 tests/test_several_inputs.py [NAME-SUBSTRING...]

- three images sharing pages: per-input and `*` rows (with -m and -z), row
  order; CSV and JSON agree, JSON types; `-r pages` of two inputs; file
  names with comma, quote, tab, newline, backslash and non-ASCII bytes
  through CSV and JSON;
- three inputs of the reports' page sets: every summary row and the `*` rows;
  the table's `*` row and the note after the table.

Oracle: the KSM model in Python over byte-identical pages.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (PAGE, SUMMARY_COLS, ZERO, as_int, check, eq, hexdigest, run_suite,
                     test)  # noqa: E402
from summary_helpers import (FLOAT_COLS, INT_COLS, TIMING_COLS, JFloat, check_summary,
                             expected_multi, rng_for, scan_csv, scan_json, write_image)  # noqa: E402
import report_helpers as rep  # noqa: E402


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
# Three inputs of the reports' page sets (their helpers: report_helpers, as rep)
# ---------------------------------------------------------------------------
@test("6 several inputs")
def several_inputs_summary():
    a, b = rep.hist_images()
    c = rep.mixed_pages("several", 10) + a[:40]
    ia, ib, ic = (rep.write_image("multi-%s.img" % n, p) for n, p in (("a", a), ("b", b), ("c", c)))
    algos = ["xxhash", "xxh64"]
    rows = rep.scan_csv(["-a", ",".join(algos), ia, ib, ic], "summary three inputs", SUMMARY_COLS)
    if rows is not None:
        eq(list(dict.fromkeys(r["input"] for r in rows)), [ia, ib, ic, "*"],
           "summary three inputs: input order")
        for name, pages in ((ia, a), (ib, b), (ic, c), ("*", a + b + c)):
            rep.check_summary_rows(rows, name, pages, algos, "summary")
    r = rep.run_ok(["-l", ia, ib], "summary table of two inputs")
    if r:
        star = [t for t in rep.table_rows(r.out) if t and t[0] == "*"]
        check(star and str(len(a) + len(b)) in star[0],
              "summary table: the '*' row has the total pages %d" % (len(a) + len(b)),
              r.out[:600])
        exp = rep.expected_summary(a + b, "xxhash")
        check(star and str(exp["saved_bytes"]) in star[0],
              "summary table: the '*' row has saved_bytes %d" % exp["saved_bytes"], repr(star))
        lines = r.out.rstrip("\n").splitlines()
        last_star = max(i for i, l in enumerate(lines) if l.startswith("*")) if star else None
        check(last_star is not None and any(l.strip() for l in lines[last_star + 1:]),
              "summary table of two inputs: note lines after the table", r.out[-600:])


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
