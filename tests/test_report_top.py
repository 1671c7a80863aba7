#!/usr/bin/python3
"""-r top (--top=N): the most repeated contents.

    /usr/bin/python3 tests/test_report_top.py [NAME-SUBSTRING...]

`--top=N` for several N, two inputs and `*`: ranks, pages in descending order
== the top counts (ties in any order), digest == the first algorithm's digest
of a content with that count, descriptions (zero page, byte 0xNN repeated,
pattern of 2/4/8 bytes, 16 first bytes); `--top=0` gives no rows;
`--top=x/-1/''` exit 2.

Oracles: Python's count of the pages written, python-xxhash, python-crc32c.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, ZERO, check, eq, parse_csv, run_suite, test  # noqa: E402
from report_helpers import (TOP_COLS, check_top, parse_json, rand_page_fast, rng_for,
                            run, run_ok, scan_csv, write_image)  # noqa: E402


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


def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
