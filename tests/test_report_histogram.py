#!/usr/bin/python3
"""-r histogram: how many contents are seen how many times.

    /usr/bin/python3 tests/test_report_histogram.py [NAME-SUBSTRING...]

Groups of 1..1000 copies, zero and unique pages, two inputs sharing contents:
every row per input and `*` (CSV, JSON), no bar or total in CSV and JSON, the
table's `#` bars and `total` rows with the right sums; the fixture guest
(guest-b.elf.zst, and guest-b.kdump-zlib when found): buckets == its truth
file.

Oracles: Python's count of the pages written (report_helpers), truth.json.
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, Skip, as_int, check, eq, fixture, run_suite, skip, test  # noqa: E402
from report_helpers import (HIST_COLS, expected_histogram, hist_images, hist_rows_of,
                            parse_json, run_ok, scan_csv, table_rows, write_image)  # noqa: E402


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


def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
