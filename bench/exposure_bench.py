#!/usr/bin/python3
"""make bench, part 5: -r exposure on the fixture guest.

Writes (once, cached in $KSMSCAN_BENCH_DIR or /tmp/ksmscan-bench/exposure)
the fixture guest (tests/fixtures/guest-b.elf.zst, decompressed) and a copy
with 10% of its pages changed by one byte each, and times, interleaved, best
of three: the two scanned with --group=a=GUEST --group=b=COPY and the
summary, then with -r exposure (and its mitigations). The difference is the
reports' cost: regrouping the contents by domain, and reading and classing
(entropy) the contents that cross.
Benchmarks are not tests.
"""
import os, random, struct, subprocess, sys, time

import zstandard

from series_bench import best  # best of three, interleaved

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(os.environ.get("KSMSCAN_BENCH_DIR", "/tmp/ksmscan-bench"), "exposure")
PAGE = 4096


def load_offsets(elf):
    """File offsets of the whole pages of an ELF64 core's PT_LOAD data."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    out = []
    for i in range(phnum):
        ptype, _, off, _, _, filesz = struct.unpack_from("<IIQQQQ", elf,
                                                         phoff + i * phentsize)
        if ptype == 1:
            out += range(off, off + filesz - filesz % PAGE, PAGE)
    return out


def guests():
    """The fixture guest and its changed copy (made once)."""
    os.makedirs(DIR, exist_ok=True)
    a, b = os.path.join(DIR, "guest.elf"), os.path.join(DIR, "guest-10.elf")
    if os.path.exists(a) and os.path.exists(b):
        return a, b
    with open(os.path.join(ROOT, "tests", "fixtures", "guest-b.elf.zst"), "rb") as f:
        elf = zstandard.ZstdDecompressor().stream_reader(f).read()
    rng = random.Random(14)
    offs = load_offsets(elf)
    copy = bytearray(elf)
    for off in rng.sample(offs, len(offs) // 10):
        copy[off + rng.randrange(PAGE)] ^= 0xff
    for path, data in ((a, elf), (b, bytes(copy))):
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.rename(path + ".tmp", path)
    return a, b


def main():
    a, b = guests()
    groups = ["--group=a=" + a, "--group=b=" + b, a, b]
    plain, exposure = best([[KSMSCAN] + groups, [KSMSCAN, "-r", "exposure"] + groups])
    pages = 2 * len(load_offsets(open(a, "rb").read()))
    print("exposure: the fixture guest and a copy with 10%% changed (%d pages), "
          "two domains" % pages)
    print("%12s %12s %12s %14s" % ("summary s", "exposure s", "reports s", "pages/s"))
    print("%12.3f %12.3f %12.3f %13.2fM" % (plain, exposure, exposure - plain,
                                           pages / exposure / 1e6))


if __name__ == "__main__":
    sys.exit(main())
