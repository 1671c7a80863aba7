#!/usr/bin/python3
"""-r tree: KSM's stable and unstable trees, simulated.

    /usr/bin/python3 tests/test_report_tree.py [NAME-SUBSTRING...]

Near-duplicates (equal but the last 8 bytes, one byte changed), crc32c
collisions differing in the last 8 bytes, zero and near-zero pages,
duplicates; two inputs and `*`, also xxh64/xxh128/xxh3 and JSON: rows,
inserts and matches against distinct pages, avg_depth, the red-black depth
bound, the memcmp and checksum counters' relations, and every counter == a
Python CLRS red-black tree simulation (itself checked: RB properties,
in-order == sorted); empty inputs (an error, exit 1) in every report.

Oracles: byte identity, the RB-tree simulation of report_helpers.
"""
import os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (ORACLE, PAGE, ZERO, as_int, check, crc32c_kernel, eq, run_suite,
                     test)  # noqa: E402
from report_helpers import (HIST_COLS, TOP_COLS, TREE_COLS, check_tree_rows, close,
                            parse_json, rand_page_fast, rng_for, run_ok, scan_csv,
                            simulate_tree, table_rows, write_image)  # noqa: E402


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
    """Empty inputs are an error (exit 1, one line each naming it), and every
    report still prints its rows for them: none, or the tree's zeros."""
    e = write_image("empty.img", [])
    for report, cols in (("histogram", HIST_COLS), ("top", TOP_COLS)):
        rows = scan_csv(["-r", report, e, e], "%s of empty inputs" % report, cols, rc=1)
        if rows is not None:
            eq(rows, [], "%s of empty inputs: no rows" % report)
    rows = scan_csv(["-r", "tree", "-a", "crc32c", e, e], "tree of empty inputs", TREE_COLS,
                    rc=1)
    if rows is not None:
        eq([(r["input"], r["strategy"], r["algo"]) for r in rows],
           [(e, "memcmp", "-"), (e, "checksum-first", "crc32c")] * 2 +
           [("*", "memcmp", "-"), ("*", "checksum-first", "crc32c")],
           "tree of empty inputs: rows")
        check(all(as_int(r[k]) == 0 for r in rows for k in TREE_COLS[3:11] if k != "avg_depth")
              and all(close(r["avg_depth"], 0.0, 0, 1e-9) for r in rows),
              "tree of empty inputs: all counters 0, avg_depth a number (0)", repr(rows[:1]))
    r = run_ok(["--json", "-r", "tree,histogram,top", e], "tree,histogram,top --json of empty",
               rc=1)
    if r:
        eq(r.err.splitlines(), ["ksmscan: %s: empty: no whole page of memory, at offset 0" % e],
           "an empty input: one line naming it")
        j = parse_json(r, "tree,histogram,top --json of empty")
        check(isinstance(j, dict) and j.get("histogram") == [] and j.get("top") == [] and
              len(j.get("tree") or []) == 2, "JSON of an empty input: empty histogram and top, "
              "2 tree rows", r.out[:300])


def main():
    return run_suite("ksmscan-reports-")


if __name__ == "__main__":
    sys.exit(main())
