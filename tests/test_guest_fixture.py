#!/usr/bin/python3
"""The guest-b fixture (a real QEMU guest's ELF core, and its kdump when found)
against its truth file, tests/fixtures/guest-b.truth.json.

    /usr/bin/python3 tests/test_guest_fixture.py [NAME-SUBSTRING...]

A Python ELF64 reader reproduces guest-b.truth.json; guest-b.elf.zst, the
decompressed core and, when found, guest-b.kdump-zlib (2 or 3 inputs and
`*`), and `zstd -dc | ksmscan -`: the summary against the truth file, the
format column; every page of the core and of the kdump (address, zero flag,
xxh64) against the Python reader; `-f raw` on the core; prefixes of the core:
exit 1, `ksmscan: FILE: ...`, the pages read so far; `-f elf` on a file that
is not ELF: exit 1.
"""
import collections, hashlib, json, os, shutil, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (BITS, PAGE, SUMMARY_COLS, ZERO, Skip, as_int, check, eq, fixture,
                     parse_csv, run_suite, skip, test, tmp)  # noqa: E402
from summary_helpers import check_summary, run, scan_csv  # noqa: E402
import xxhash  # noqa: E402


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


def main():
    return run_suite("ksmscan-tests-")


if __name__ == "__main__":
    sys.exit(main())
